"""Retries with exponential backoff and full jitter, written here rather than with tenacity.

Why our own loop: the SDKs' built-in retries (``max_retries`` in ``openai``/``anthropic``,
``HttpRetryOptions`` in ``google-genai``) are switched off (0 retries / 1 attempt) so that every
attempt passes through this module and is counted per episode (requests, retries, latency),
and so that all three providers back off the same way. A provider signals a failure worth
repeating by raising :class:`TransientCallError` (rate limit 429, 5xx, timeouts, connection
errors); any other error is raised at once.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from city360.agents.usage import EpisodeUsage
from city360.errors import ConfigError, ProviderUnavailableError

__all__ = ["RetryPolicy", "TransientCallError", "call_with_retries"]

T = TypeVar("T")


class TransientCallError(Exception):
    """One attempt failed in a way that may pass; raised by providers, caught by the retry loop.

    ``retry_after_s`` is the server's ``Retry-After`` hint in seconds, when it gave one.
    """

    def __init__(self, message: str, *, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently to repeat a failed call.

    Attempt ``k`` (0-based) that fails waits ``uniform(0, min(max_delay_s, base_delay_s * 2**k))``
    seconds ("full jitter"), or the server's ``Retry-After`` when that is longer (capped at
    ``max_delay_s``). ``max_retries`` repeats follow the first attempt.
    """

    max_retries: int = 5
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            msg = f"`max_retries` must be >= 0, got {self.max_retries}"
            raise ConfigError(msg)
        if self.base_delay_s < 0 or self.max_delay_s < 0:
            msg = (
                "`base_delay_s` and `max_delay_s` must be >= 0, got "
                f"{self.base_delay_s} and {self.max_delay_s}"
            )
            raise ConfigError(msg)

    def delay_s(self, attempt: int, rng: random.Random, retry_after_s: float | None) -> float:
        """Seconds to wait after failed attempt ``attempt`` (0-based)."""
        ceiling = min(self.max_delay_s, self.base_delay_s * (2.0**attempt))
        delay = rng.uniform(0.0, ceiling)
        if retry_after_s is not None:
            delay = max(delay, min(retry_after_s, self.max_delay_s))
        return delay


def call_with_retries(
    call: Callable[[], T],
    *,
    policy: RetryPolicy,
    usage: EpisodeUsage,
    rng: random.Random,
    what: str,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.perf_counter,
) -> T:
    """Run ``call`` until it succeeds, retrying :class:`TransientCallError` per ``policy``.

    Counts every attempt in ``usage``. After the last retry fails, raises
    :class:`ProviderUnavailableError` naming ``what`` (e.g. "openai model gpt-4o") and the
    last failure.
    """
    attempt = 0
    while True:
        usage.requests += 1
        started = clock()
        try:
            result = call()
        except TransientCallError as exc:
            usage.latency_s += clock() - started
            usage.failed_requests += 1
            if attempt >= policy.max_retries:
                msg = (
                    f"{what} failed {attempt + 1} times in a row; last error: {exc}. "
                    "The provider is rate-limiting or unavailable: try again later, lower "
                    "the number of parallel workers, or raise the retry budget."
                )
                raise ProviderUnavailableError(msg) from exc
            sleep(policy.delay_s(attempt, rng, exc.retry_after_s))
            attempt += 1
            usage.retries += 1
            continue
        except BaseException:
            usage.latency_s += clock() - started
            usage.failed_requests += 1
            raise
        usage.latency_s += clock() - started
        return result
