"""Anthropic's Messages API through the official ``anthropic`` SDK.

Images go as base64 ``image`` blocks. The SDK installed here has no ``temperature`` on
``messages.create`` (current models sample at their own setting), so the request's temperature
is not sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from city360.agents.images import ImageLimits
from city360.agents.providers._http import is_transient_status, not_a_reply, retry_after_s
from city360.agents.providers.base import DEFAULT_TIMEOUT_S, ChatReply, ChatRequest, Provider
from city360.agents.retry import TransientCallError
from city360.errors import DependencyMissingError, ProviderAuthError, ProviderError

if TYPE_CHECKING:
    import anthropic

__all__ = ["ANTHROPIC_IMAGE_LIMITS", "AnthropicProvider"]

ANTHROPIC_IMAGE_LIMITS = ImageLimits(
    max_side_px=1568, max_image_bytes=5_000_000, max_request_bytes=5_000_000, max_images=20
)
"""Anthropic: images over 1568 px on the long edge are downscaled by the API anyway (costing
latency), 5 MB per image; we also keep all images of a request within 5 MB."""


def _import_anthropic() -> Any:
    try:
        import anthropic
    except ImportError as exc:  # pragma: no cover - installed in the dev venv
        msg = "anthropic is needed for this provider: pip install 'city360[providers]'"
        raise DependencyMissingError(msg) from exc
    return anthropic


class AnthropicProvider(Provider):
    """Claude models with images; ``api_key`` goes to the SDK client only."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        image_limits: ImageLimits = ANTHROPIC_IMAGE_LIMITS,
    ) -> None:
        sdk = _import_anthropic()
        self.name = "anthropic"
        self.model = model
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.image_limits = image_limits
        # max_retries=0: retries happen in city360.agents.retry so each attempt is counted.
        self._client: anthropic.Anthropic = sdk.Anthropic(
            api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0
        )

    def close(self) -> None:
        self._client.close()

    def build_messages(self, request: ChatRequest) -> list[dict[str, Any]]:
        """The ``messages`` list sent for ``request`` (one multimodal user turn)."""
        content: list[dict[str, Any]] = [{"type": "text", "text": request.text}]
        for image in request.images:
            content.append({"type": "text", "text": f"[{image.caption}]"})
            content.append(
                {
                    "type": "image",
                    "source": {
                        "type": "base64",
                        "media_type": image.media_type,
                        "data": image.b64(),
                    },
                }
            )
        return [{"role": "user", "content": content}]

    def complete(self, request: ChatRequest) -> ChatReply:
        sdk = _import_anthropic()
        try:
            message = self._client.messages.create(
                model=self.model,
                max_tokens=request.max_output_tokens,
                system=request.system,
                messages=self.build_messages(request),  # type: ignore[arg-type]
            )
        except sdk.APIError as exc:
            raise self._translate(exc) from exc
        if not hasattr(message, "content"):
            raise not_a_reply(self.base_url or "api.anthropic.com", "Messages API", message)
        text = "".join(
            str(getattr(block, "text", "")) for block in message.content if block.type == "text"
        )
        usage = message.usage
        return ChatReply(
            text=text,
            input_tokens=int(usage.input_tokens or 0),
            output_tokens=int(usage.output_tokens or 0),
            model=message.model or self.model,
            finish_reason=str(message.stop_reason or ""),
        )

    def list_models(self) -> list[str]:
        sdk = _import_anthropic()
        try:
            return [m.id for m in self._client.models.list(limit=1000)]
        except sdk.APIError as exc:
            error = self._translate(exc)
            if isinstance(error, TransientCallError):
                msg = f"{self.label}: preflight failed: {error}"
                raise ProviderError(msg) from exc
            raise error from exc

    def _translate(self, exc: Exception) -> Exception:
        sdk = _import_anthropic()
        where = self.base_url or "api.anthropic.com"
        if isinstance(exc, sdk.APITimeoutError):
            return TransientCallError(f"request to {where} timed out after {self.timeout_s:g} s")
        if isinstance(exc, sdk.APIConnectionError):
            return TransientCallError(f"cannot connect to {where}: {exc.__cause__ or exc}")
        if isinstance(exc, sdk.APIStatusError):
            status = exc.status_code
            if is_transient_status(status):  # 529 "overloaded" included
                return TransientCallError(
                    f"HTTP {status} from {where}: {exc.message}",
                    retry_after_s=retry_after_s(exc.response.headers),
                )
            if status in (401, 403):
                return ProviderAuthError(
                    f"{self.label}: {where} refused the API key (HTTP {status}); check "
                    "ANTHROPIC_API_KEY"
                )
            if status == 404:
                return ProviderError(
                    f"{self.label}: HTTP 404 from {where} (unknown model?): {exc.message}"
                )
            return ProviderError(f"{self.label}: HTTP {status} from {where}: {exc.message}")
        return ProviderError(f"{self.label}: {exc}")
