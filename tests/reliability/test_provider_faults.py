"""Providers that answer what their protocol does not promise, refuse the key, or echo it."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from city360.agents import RetryPolicy, make_provider
from city360.agents.providers.base import ChatRequest
from city360.agents.retry import TransientCallError, call_with_retries
from city360.agents.usage import EpisodeUsage
from city360.errors import ProviderAuthError, ProviderError, ProviderUnavailableError
from city360.eval.results import EpisodeResult, ResultsWriter, StepLogWriter
from city360.eval.runner import AgentSpec, EvalConfig, run_eval
from city360.scrub import MASK, scrub, scrub_text
from city360.tasks.suite import load_suite
from tests.agents._wire import KEY_ENV, PROVIDERS, SECRET, base_url
from tests.fixtures.fake_llm_server import FakeLLMServer, Scripted

HTML = b"<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1>nginx</body></html>"


def _provider(kind: str, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv(KEY_ENV[kind], SECRET)
    return make_provider(kind, "fake-model", base_url=base_url(kind, server), timeout_s=5.0)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_200_html_body_is_retried_as_an_api_error_then_infrastructure(
    kind: str, fake_llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm_server.enqueue(
        *[Scripted(raw_body=HTML, headers={"content-type": "text/html"}) for _ in range(3)]
    )
    usage = EpisodeUsage()
    with _provider(kind, fake_llm_server, monkeypatch) as provider:
        request = ChatRequest(system="s", text="t")
        with pytest.raises(TransientCallError, match="body that is not a"):
            provider.complete(request)
        with pytest.raises(ProviderUnavailableError, match=r"failed 2 times in a row.*502 Bad"):
            call_with_retries(
                lambda: provider.complete(request),
                policy=RetryPolicy(max_retries=1, base_delay_s=0.0, max_delay_s=0.0),
                usage=usage,
                rng=random.Random(0),
                what=provider.label,
            )
    assert usage.requests == 2
    assert usage.failed_requests == 2  # counted as API errors


@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_refused_key_is_an_authentication_error(
    kind: str, fake_llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm_server.enqueue(Scripted.error(401))
    with (
        _provider(kind, fake_llm_server, monkeypatch) as provider,
        pytest.raises(ProviderAuthError, match=r"refused the API key \(HTTP 401\)"),
    ):
        provider.complete(ChatRequest(system="s", text="t"))


def test_scrub_masks_configured_keys_and_known_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_API_KEY", "plain-looking-value-42")
    text = (
        "key plain-looking-value-42, sk-proj-abcdefghij0123, AIzaSyA0123456789abcdefghijk, "
        "Authorization: Bearer eyJhbGciOi.J9xyz, input_tokens=300"
    )
    assert scrub_text(text) == (
        f"key {MASK}, {MASK}, {MASK}, Authorization: Bearer {MASK}, input_tokens=300"
    )
    assert scrub({"api_key": "x", "input_tokens": 3, "nested": ["sk-abcdefghijkl"]}) == {
        "api_key": MASK,
        "input_tokens": 3,
        "nested": [MASK],
    }


def test_an_echoed_key_never_reaches_results_or_step_logs(
    tmp_path: Path, fake_llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "not-shaped-like-a-key-0123456789"  # only known because it is configured
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    echo = json.dumps({"error": {"message": f"invalid request from key {secret}"}}).encode()
    fake_llm_server.enqueue(Scripted(status=200, raw_body=echo))
    fake_llm_server.enqueue(Scripted.error(400))
    provider = make_provider(
        "openai-compatible", "fake-model", base_url=fake_llm_server.openai_base_url
    )
    with provider, pytest.raises(TransientCallError) as caught:
        provider.complete(ChatRequest(system="s", text="t"))
    message = f"{caught.value}; server said: {echo.decode()}"
    with ResultsWriter(tmp_path / "results.csv") as writer:
        writer.append(EpisodeResult("t", "VLN", "Easy", "agent_error", error_message=message))
    with StepLogWriter(tmp_path / "t.jsonl") as log:
        log.write({"step": 1, "thought": f"my key is {secret}", "feedback": message})
    for path in tmp_path.iterdir():
        written = path.read_text(encoding="utf-8")
        assert secret not in written, path
        assert MASK in written
    assert json.loads((tmp_path / "t.jsonl").read_text(encoding="utf-8"))["step"] == 1


def test_a_401_mid_run_stops_the_run_instead_of_charging_the_model(
    built_city: Path,
    built_suite: Path,
    tmp_path: Path,
    fake_llm_server: FakeLLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-rotated-0123456789")
    suite = load_suite(built_suite)
    ids = [t.id for t in suite.tasks if t.family.value == "Localization"][:2]
    fake_llm_server.enqueue(Scripted.error(401))
    config = EvalConfig(
        city_dir=built_city,
        suite_dir=built_suite,
        output_root=tmp_path,
        run_id="auth",
        select=",".join(ids),
        agent=AgentSpec(
            kind="lmm",
            provider="openai-compatible",
            model="fake-model",
            base_url=fake_llm_server.openai_base_url,
        ),
    )
    with pytest.raises(ProviderAuthError, match=r"stopped: .*refused the API key.*--resume auth"):
        run_eval(config)
    assert isinstance(ProviderAuthError("x"), ProviderError)
    metadata = json.loads((tmp_path / "auth" / "run_metadata.json").read_text("utf-8"))
    assert metadata["status"] == "failed"
    assert "refused the API key" in metadata["message"]
    rows = (tmp_path / "auth" / "results.csv").read_text(encoding="utf-8").splitlines()
    assert len(rows) == 1  # the header only: no episode was charged to the model
    assert len(fake_llm_server.generation_requests()) == 1  # and no second task was tried
