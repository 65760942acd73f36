"""Make a provider by name, with its key from the environment, and check it before a run.

- ``openai``: SDK ``openai``; key ``OPENAI_API_KEY``; api.openai.com or ``base_url``.
- ``openai-compatible`` (and ``vllm``, ``ollama``): SDK ``openai``; ``OPENAI_API_KEY`` if set
  (servers without auth need none); ``base_url`` (vllm: localhost:8000/v1, ollama:
  localhost:11434/v1 by default).
- ``azure``: SDK ``openai`` (``AzureOpenAI``); key ``AZURE_OPENAI_API_KEY``; endpoint
  ``base_url`` or ``AZURE_OPENAI_ENDPOINT``; ``api_version`` or ``OPENAI_API_VERSION``;
  ``model`` is the deployment name.
- ``anthropic`` (``claude``): SDK ``anthropic``; key ``ANTHROPIC_API_KEY``.
- ``gemini`` (``google``): SDK ``google-genai``; key ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``.
"""

from __future__ import annotations

import os

from city360.agents.providers.base import DEFAULT_TIMEOUT_S, Provider, read_key, require_key
from city360.errors import ConfigError, ProviderError, did_you_mean

__all__ = ["PROVIDER_NAMES", "make_provider"]

PROVIDER_NAMES = ("openai", "openai-compatible", "vllm", "ollama", "azure", "anthropic", "gemini")
_ALIASES = {"google": "gemini", "claude": "anthropic", "azure-openai": "azure"}
_DEFAULT_LOCAL_URLS = {
    "vllm": "http://localhost:8000/v1",
    "ollama": "http://localhost:11434/v1",
}
_AZURE_DEFAULT_API_VERSION = "2024-10-21"
_NO_KEY_NEEDED = "not-needed"  # OpenAI-compatible servers without auth accept any token


def make_provider(
    provider: str,
    model: str,
    *,
    base_url: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    api_version: str | None = None,
    json_mode: bool = True,
    preflight: bool = False,
) -> Provider:
    """Build the provider ``provider`` for ``model``; with ``preflight=True`` also make one
    cheap request (list models) so that a wrong endpoint, key or model fails now.

    Raises :class:`ProviderError` for an unknown provider (with the closest name), a missing
    key, or a failed preflight.
    """
    name = provider.strip().lower()
    name = _ALIASES.get(name, name)
    if name not in PROVIDER_NAMES:
        msg = (
            f"unknown provider {provider!r}; expected one of {', '.join(PROVIDER_NAMES)}."
            f"{did_you_mean(name, PROVIDER_NAMES)}"
        )
        raise ProviderError(msg)
    if not model or not model.strip():
        msg = f"provider {name!r} needs a model name (e.g. --model gpt-4o)"
        raise ProviderError(msg)
    if timeout_s <= 0:
        msg = f"`timeout_s` must be > 0, got {timeout_s}"
        raise ConfigError(msg)
    model = model.strip()
    built: Provider
    if name in ("openai", "openai-compatible", "vllm", "ollama"):
        from city360.agents.providers.openai_provider import OpenAIProvider

        url = base_url or _DEFAULT_LOCAL_URLS.get(name)
        if name == "openai-compatible" and not url:
            msg = "provider 'openai-compatible' needs base_url (e.g. http://localhost:8000/v1)"
            raise ProviderError(msg)
        needs_key = name == "openai" and url is None
        key = read_key(["OPENAI_API_KEY"], provider=name, required=needs_key) or _NO_KEY_NEEDED
        built = OpenAIProvider(
            model, api_key=key, base_url=url, name=name, timeout_s=timeout_s, json_mode=json_mode
        )
    elif name == "azure":
        from city360.agents.providers.openai_provider import OpenAIProvider

        endpoint = base_url or os.environ.get("AZURE_OPENAI_ENDPOINT")
        if not endpoint:
            msg = (
                "provider 'azure' needs base_url or AZURE_OPENAI_ENDPOINT "
                "(https://NAME.openai.azure.com)"
            )
            raise ProviderError(msg)
        key = require_key(["AZURE_OPENAI_API_KEY"], provider=name)
        built = OpenAIProvider(
            model,
            api_key=key,
            base_url=endpoint,
            name=name,
            azure_api_version=api_version
            or os.environ.get("OPENAI_API_VERSION", _AZURE_DEFAULT_API_VERSION),
            timeout_s=timeout_s,
            json_mode=json_mode,
        )
    elif name == "anthropic":
        from city360.agents.providers.anthropic_provider import AnthropicProvider

        key = require_key(["ANTHROPIC_API_KEY"], provider=name)
        built = AnthropicProvider(model, api_key=key, base_url=base_url, timeout_s=timeout_s)
    else:
        from city360.agents.providers.gemini_provider import GeminiProvider

        key = require_key(["GEMINI_API_KEY", "GOOGLE_API_KEY"], provider=name)
        built = GeminiProvider(model, api_key=key, base_url=base_url, timeout_s=timeout_s)
    if preflight:
        try:
            built.preflight()
        except BaseException:
            built.close()
            raise
    return built
