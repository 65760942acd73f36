"""Bad input before a run starts: unknown provider or model, missing key, unreachable endpoint."""

from __future__ import annotations

import socket

import pytest

from city360.agents import make_provider
from city360.errors import ConfigError, ProviderError
from tests.agents._wire import KEY_ENV, PROVIDERS, SECRET, base_url
from tests.fixtures.fake_llm_server import FakeLLMServer


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unknown_provider_suggests_a_close_name() -> None:
    with pytest.raises(
        ProviderError,
        match=r"unknown provider 'antropic'; expected one of .*Did you mean 'anthropic'\?",
    ):
        make_provider("antropic", "claude-x")


@pytest.mark.parametrize(
    ("kind", "variable"),
    [
        ("openai", "OPENAI_API_KEY"),
        ("anthropic", "ANTHROPIC_API_KEY"),
        ("gemini", "GEMINI_API_KEY or GOOGLE_API_KEY"),
    ],
)
def test_missing_key_names_the_variable(
    kind: str, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(
        ProviderError, match=f"{kind}: no API key found; set {variable} in the environment"
    ):
        make_provider(kind, "some-model")


def test_gemini_accepts_google_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", SECRET)
    with make_provider("google", "gemini-x") as provider:
        assert provider.name == "gemini"
        assert SECRET not in repr(provider)


def test_openai_compatible_servers_need_no_key(
    monkeypatch: pytest.MonkeyPatch, fake_llm_server: FakeLLMServer
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with make_provider(
        "vllm", "fake-model", base_url=fake_llm_server.openai_base_url, preflight=True
    ) as provider:
        assert provider.name == "vllm"
    with pytest.raises(ProviderError, match="'openai-compatible' needs base_url"):
        make_provider("openai-compatible", "m")


@pytest.mark.parametrize("kind", PROVIDERS)
def test_unreachable_endpoint_fails_preflight(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV[kind], SECRET)
    url = f"http://127.0.0.1:{_closed_port()}" + ("/v1" if kind == "openai" else "")
    with pytest.raises(
        ProviderError, match=r"preflight failed: cannot connect to http://127\.0\.0\.1"
    ):
        make_provider(kind, "fake-model", base_url=url, timeout_s=5, preflight=True)


@pytest.mark.parametrize("kind", PROVIDERS)
def test_unknown_model_suggests_a_close_name(
    kind: str, fake_llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV[kind], SECRET)
    with pytest.raises(
        ProviderError,
        match=(
            r"does not serve model 'fake-modle'\. Did you mean 'fake-model'\? "
            r"Available: fake-model, fake-model-large"
        ),
    ):
        make_provider(kind, "fake-modle", base_url=base_url(kind, fake_llm_server), preflight=True)
    with make_provider(
        kind, "fake-model", base_url=base_url(kind, fake_llm_server), preflight=True
    ):
        pass


def test_bad_arguments() -> None:
    with pytest.raises(ProviderError, match="needs a model name"):
        make_provider("openai", " ")
    with pytest.raises(ConfigError, match="`timeout_s` must be > 0, got 0"):
        make_provider("openai", "gpt", timeout_s=0)


def test_azure_needs_an_endpoint_and_its_key(
    monkeypatch: pytest.MonkeyPatch, fake_llm_server: FakeLLMServer
) -> None:
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    with pytest.raises(ProviderError, match="'azure' needs base_url or AZURE_OPENAI_ENDPOINT"):
        make_provider("azure", "my-deployment")
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    with pytest.raises(ProviderError, match="set AZURE_OPENAI_API_KEY"):
        make_provider("azure", "my-deployment", base_url=fake_llm_server.url)


def test_azure_calls_the_deployment_with_its_key(
    monkeypatch: pytest.MonkeyPatch, fake_llm_server: FakeLLMServer
) -> None:
    from city360.agents.providers.base import ChatRequest

    monkeypatch.setenv("AZURE_OPENAI_API_KEY", SECRET)
    fake_llm_server.enqueue('{"action": "W"}')
    with make_provider(
        "azure", "my-deployment", base_url=fake_llm_server.url, api_version="2024-10-21"
    ) as provider:
        reply = provider.complete(ChatRequest(system="s", text="t"))
    assert reply.text == '{"action": "W"}'
    (request,) = fake_llm_server.generation_requests()
    assert request.path == "/openai/deployments/my-deployment/chat/completions"
    assert request.headers["api-key"] == SECRET
