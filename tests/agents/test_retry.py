"""Exponential backoff with jitter, Retry-After, and the counters it keeps."""

from __future__ import annotations

import random

import pytest

from city360.agents.retry import RetryPolicy, TransientCallError, call_with_retries
from city360.agents.usage import EpisodeUsage
from city360.errors import ConfigError, ProviderUnavailableError


def test_delays_grow_exponentially_within_full_jitter() -> None:
    policy = RetryPolicy(max_retries=6, base_delay_s=1.0, max_delay_s=8.0)
    rng = random.Random(0)
    for attempt in range(6):
        ceiling = min(8.0, 2.0**attempt)
        delays = [policy.delay_s(attempt, rng, None) for _ in range(200)]
        assert all(0.0 <= d <= ceiling for d in delays)
        assert max(delays) > 0.6 * ceiling  # jitter spreads over the whole range
        assert len(set(delays)) > 150


def test_retry_after_is_a_floor_capped_at_max() -> None:
    policy = RetryPolicy(base_delay_s=0.001, max_delay_s=5.0)
    rng = random.Random(1)
    assert policy.delay_s(0, rng, 3.0) == 3.0
    assert policy.delay_s(0, rng, 100.0) == 5.0


def test_transient_failures_are_retried_and_counted() -> None:
    outcomes: list[Exception | str] = [
        TransientCallError("429", retry_after_s=0.5),
        TransientCallError("500"),
        "ok",
    ]
    slept: list[float] = []
    usage = EpisodeUsage()

    def call() -> str:
        item = outcomes.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    result = call_with_retries(
        call,
        policy=RetryPolicy(max_retries=3, base_delay_s=0.01, max_delay_s=1.0),
        usage=usage,
        rng=random.Random(0),
        what="test model",
        sleep=slept.append,
    )
    assert result == "ok"
    assert (usage.requests, usage.retries, usage.failed_requests) == (3, 2, 2)
    assert slept[0] == 0.5  # Retry-After honoured
    assert 0 <= slept[1] <= 0.02


def test_exhausted_retries_raise_unavailable() -> None:
    usage = EpisodeUsage()

    def call() -> str:
        raise TransientCallError("HTTP 503 from x")

    with pytest.raises(
        ProviderUnavailableError, match=r"test model failed 3 times in a row; last error: HTTP 503"
    ):
        call_with_retries(
            call,
            policy=RetryPolicy(max_retries=2, base_delay_s=0.0),
            usage=usage,
            rng=random.Random(0),
            what="test model",
            sleep=lambda _: None,
        )
    assert (usage.requests, usage.retries, usage.failed_requests) == (3, 2, 3)


def test_permanent_errors_are_not_retried() -> None:
    usage = EpisodeUsage()

    def call() -> str:
        raise ValueError("bad request")

    with pytest.raises(ValueError, match="bad request"):
        call_with_retries(
            call,
            policy=RetryPolicy(),
            usage=usage,
            rng=random.Random(0),
            what="m",
            sleep=lambda _: None,
        )
    assert (usage.requests, usage.retries) == (1, 0)


def test_policy_rejects_negative_values() -> None:
    with pytest.raises(ConfigError, match="`max_retries` must be >= 0, got -1"):
        RetryPolicy(max_retries=-1)
