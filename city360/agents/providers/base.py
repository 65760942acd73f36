"""What every LMM provider offers the agent: one multimodal request in, one text reply out.

A provider turns a :class:`ChatRequest` (system prompt, user text, encoded images) into its
SDK's call and the SDK's answer into a :class:`ChatReply`. It makes exactly one attempt per
``complete`` call (the SDK's own retries are off); failures worth repeating (429, 5xx,
timeouts, connection errors) become :class:`~city360.agents.retry.TransientCallError`, the rest
:class:`~city360.errors.ProviderError`. ``preflight`` is a cheap call made before a run starts
(list the endpoint's models) that proves the endpoint is reachable, the key is accepted and the
model exists.

Keys are read from the environment by the registry and handed to the SDK client only; a
provider never stores them in its own attributes, so ``repr`` and results cannot show them.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field

from city360.agents.images import EncodedImage, ImageLimits
from city360.errors import ProviderError, did_you_mean
from city360.scrub import register_secret

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "ChatReply",
    "ChatRequest",
    "Provider",
    "check_model_listed",
    "read_key",
    "require_key",
]

DEFAULT_TIMEOUT_S = 120.0
"""Per-request time-out in seconds (one attempt, not counting retries)."""


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One request: the system prompt, then a user turn of text followed by images."""

    system: str
    text: str
    images: Sequence[EncodedImage] = ()
    max_output_tokens: int = 1024
    temperature: float | None = 0.0
    json_mode: bool = True


@dataclass(frozen=True, slots=True)
class ChatReply:
    """The model's text and what the provider reported about the call."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    model: str = ""
    finish_reason: str = ""
    raw_usage: dict[str, int] = field(default_factory=dict)


class Provider(ABC):
    """A configured client for one model behind one endpoint."""

    name: str
    model: str
    base_url: str | None
    image_limits: ImageLimits
    timeout_s: float

    def __repr__(self) -> str:
        where = f", base_url={self.base_url!r}" if self.base_url else ""
        return f"{type(self).__name__}(model={self.model!r}{where}, timeout_s={self.timeout_s})"

    @property
    def label(self) -> str:
        """``"openai model gpt-4o"``: how messages name this provider."""
        return f"{self.name} model {self.model}"

    @abstractmethod
    def complete(self, request: ChatRequest) -> ChatReply:
        """Make one attempt; raise TransientCallError or ProviderError on failure."""

    @abstractmethod
    def list_models(self) -> list[str]:
        """Model ids the endpoint serves (one cheap request)."""

    def preflight(self) -> None:
        """Fail before the run if the endpoint is unreachable, the key refused, or the model
        unknown (with the closest known name)."""
        check_model_listed(self.label, self.model, self.list_models())

    def close(self) -> None:  # noqa: B027 - optional hook; providers without resources skip it
        """Release the SDK client's connections (safe to call twice)."""

    def __enter__(self) -> Provider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_model_listed(label: str, model: str, available: Sequence[str]) -> None:
    """Raise ProviderError when ``model`` is not among ``available`` (ids compared without a
    ``models/`` prefix)."""
    names = [a.removeprefix("models/") for a in available]
    if model.removeprefix("models/") in names:
        return
    shown = ", ".join(sorted(names)[:12]) + (" ..." if len(names) > 12 else "")
    msg = (
        f"{label}: the endpoint does not serve model {model!r}."
        f"{did_you_mean(model, names)} Available: {shown or 'none'}"
    )
    raise ProviderError(msg)


def read_key(env_vars: Sequence[str], *, provider: str, required: bool = True) -> str | None:
    """The first non-empty environment variable of ``env_vars``; ProviderError if required and
    none is set. The value is returned to be handed to the SDK, never to be stored or shown."""
    for var in env_vars:
        value = os.environ.get(var, "").strip()
        if value:
            register_secret(value)  # whatever the name of the variable, never written out
            return value
    if required:
        names = " or ".join(env_vars)
        msg = f"{provider}: no API key found; set {names} in the environment"
        raise ProviderError(msg)
    return None


def require_key(env_vars: Sequence[str], *, provider: str) -> str:
    """Like :func:`read_key` for providers that cannot work without a key."""
    key = read_key(env_vars, provider=provider, required=True)
    if key is None:  # pragma: no cover - read_key raised already
        msg = f"{provider}: no API key found"
        raise ProviderError(msg)
    return key
