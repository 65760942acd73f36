"""Google Gemini through the official ``google-genai`` SDK (the Gemini Developer API).

Images go as inline ``Part.from_bytes`` parts. The SDK's own retries are switched off
(``HttpRetryOptions(attempts=1)``); ``base_url`` in ``HttpOptions`` points the client at a proxy
or a local test server.
"""

from __future__ import annotations

from typing import Any

from city360.agents.images import ImageLimits
from city360.agents.providers._http import is_transient_status
from city360.agents.providers.base import DEFAULT_TIMEOUT_S, ChatReply, ChatRequest, Provider
from city360.agents.retry import TransientCallError
from city360.errors import DependencyMissingError, ProviderAuthError, ProviderError

__all__ = ["GEMINI_IMAGE_LIMITS", "GeminiProvider"]

GEMINI_IMAGE_LIMITS = ImageLimits(
    max_side_px=3072, max_image_bytes=7_000_000, max_request_bytes=18_000_000, max_images=50
)
"""Gemini: inline data counts against a 20 MB request; 3072 px is the largest side it keeps."""

_TRANSIENT_TRANSPORT = ("TimeoutException", "ConnectError", "ReadError", "RemoteProtocolError")


def _import_genai() -> Any:
    try:
        from google import genai
    except ImportError as exc:  # pragma: no cover - installed in the dev venv
        msg = "google-genai is needed for this provider: pip install 'city360[providers]'"
        raise DependencyMissingError(msg) from exc
    return genai


def _is_transport_failure(exc: BaseException) -> bool:
    """httpx / httpx2 time-outs and connection failures (the SDK may use either)."""
    module = type(exc).__module__.split(".")[0]
    if module not in {"httpx", "httpx2", "httpcore"}:
        return False
    return any(cls.__name__ in _TRANSIENT_TRANSPORT for cls in type(exc).__mro__)


class GeminiProvider(Provider):
    """Gemini models with images; ``api_key`` goes to the SDK client only."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        image_limits: ImageLimits = GEMINI_IMAGE_LIMITS,
    ) -> None:
        genai = _import_genai()
        types = genai.types
        self.name = "gemini"
        self.model = model.removeprefix("models/")
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.image_limits = image_limits
        options = types.HttpOptions(
            base_url=base_url,
            timeout=int(timeout_s * 1000),
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        self._client = genai.Client(api_key=api_key, http_options=options)
        self._closed = False

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._client.close()

    def build_request(self, request: ChatRequest) -> dict[str, Any]:
        """The keyword arguments of ``models.generate_content`` for ``request``."""
        types = _import_genai().types
        parts = [types.Part.from_text(text=request.text)]
        for image in request.images:
            parts.append(types.Part.from_text(text=f"[{image.caption}]"))
            parts.append(types.Part.from_bytes(data=image.data, mime_type=image.media_type))
        config = types.GenerateContentConfig(
            system_instruction=request.system,
            max_output_tokens=request.max_output_tokens,
            temperature=request.temperature,
            response_mime_type="application/json" if request.json_mode else None,
        )
        return {
            "model": self.model,
            "contents": [types.Content(role="user", parts=parts)],
            "config": config,
        }

    def complete(self, request: ChatRequest) -> ChatReply:
        genai = _import_genai()
        try:
            response = self._client.models.generate_content(**self.build_request(request))
        except genai.errors.APIError as exc:
            raise self._translate(exc) from exc
        except Exception as exc:
            if _is_transport_failure(exc):
                raise self._translate(exc) from exc
            raise
        text = ""
        finish = ""
        if response.candidates:
            candidate = response.candidates[0]
            reason = candidate.finish_reason
            finish = str(getattr(reason, "value", reason) or "")
            if candidate.content and candidate.content.parts:
                text = "".join(p.text or "" for p in candidate.content.parts if not p.thought)
        usage = response.usage_metadata
        return ChatReply(
            text=text,
            input_tokens=int(getattr(usage, "prompt_token_count", 0) or 0),
            output_tokens=int(getattr(usage, "candidates_token_count", 0) or 0),
            model=response.model_version or self.model,
            finish_reason=finish,
        )

    def list_models(self) -> list[str]:
        genai = _import_genai()
        try:
            return [str(m.name) for m in self._client.models.list()]
        except Exception as exc:
            if isinstance(exc, genai.errors.APIError) or _is_transport_failure(exc):
                error = self._translate(exc)
                if isinstance(error, TransientCallError):
                    msg = f"{self.label}: preflight failed: {error}"
                    raise ProviderError(msg) from exc
                raise error from exc
            raise

    def _translate(self, exc: Exception) -> Exception:
        genai = _import_genai()
        where = self.base_url or "generativelanguage.googleapis.com"
        if isinstance(exc, genai.errors.APIError):
            status = int(exc.code or 0)
            if is_transient_status(status):
                return TransientCallError(f"HTTP {status} from {where}: {exc.message}")
            if status in (401, 403) or (status == 400 and "API key" in str(exc.message)):
                return ProviderAuthError(
                    f"{self.label}: {where} refused the API key (HTTP {status}); check "
                    "GEMINI_API_KEY or GOOGLE_API_KEY"
                )
            return ProviderError(f"{self.label}: HTTP {status} from {where}: {exc.message}")
        if "Timeout" in type(exc).__name__:
            return TransientCallError(f"request to {where} timed out after {self.timeout_s:g} s")
        return TransientCallError(f"cannot connect to {where}: {type(exc).__name__}: {exc}")
