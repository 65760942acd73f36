"""OpenAI chat completions through the official ``openai`` SDK.

Covers OpenAI itself, any OpenAI-compatible server (vLLM, Ollama, LM Studio, ... via
``base_url``) and Azure OpenAI (``AzureOpenAI``, where ``model`` is the deployment name).
Images go as base64 ``data:`` URLs in ``image_url`` parts of the user message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from city360.agents.images import ImageLimits
from city360.agents.providers._http import is_transient_status, not_a_reply, retry_after_s
from city360.agents.providers.base import (
    DEFAULT_TIMEOUT_S,
    ChatReply,
    ChatRequest,
    Provider,
)
from city360.agents.retry import TransientCallError
from city360.errors import DependencyMissingError, ProviderAuthError, ProviderError

if TYPE_CHECKING:
    import openai

__all__ = ["OPENAI_IMAGE_LIMITS", "OpenAIProvider"]

OPENAI_IMAGE_LIMITS = ImageLimits(
    max_side_px=2048, max_image_bytes=20_000_000, max_request_bytes=40_000_000, max_images=50
)
"""OpenAI's documented limits (2048 px is the longest side kept at high detail; 50 MB of
payload per request, kept below)."""


def _import_openai() -> Any:
    try:
        import openai
    except ImportError as exc:  # pragma: no cover - installed in the dev venv
        msg = "openai is needed for this provider: pip install 'city360[providers]'"
        raise DependencyMissingError(msg) from exc
    return openai


class OpenAIProvider(Provider):
    """Chat completions with images.

    ``api_key`` is handed to the SDK client and not kept here. ``azure_api_version`` switches to
    ``AzureOpenAI`` with ``base_url`` as the Azure endpoint. ``json_mode`` asks for
    ``response_format={"type": "json_object"}``; switch it off for servers that reject it.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        name: str = "openai",
        azure_api_version: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        image_limits: ImageLimits = OPENAI_IMAGE_LIMITS,
        json_mode: bool = True,
    ) -> None:
        sdk = _import_openai()
        self.name = name
        self.model = model
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.image_limits = image_limits
        self.json_mode = json_mode
        self._azure = azure_api_version is not None
        # max_retries=0: retries happen in city360.agents.retry so each attempt is counted.
        if self._azure:
            self._client: openai.OpenAI = sdk.AzureOpenAI(
                azure_endpoint=base_url,
                api_key=api_key,
                api_version=azure_api_version,
                timeout=timeout_s,
                max_retries=0,
            )
        else:
            self._client = sdk.OpenAI(
                api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0
            )
        # Official OpenAI reasoning models want max_completion_tokens; many compatible
        # servers only know max_tokens.
        self._token_param = "max_completion_tokens" if base_url is None else "max_tokens"

    def close(self) -> None:
        self._client.close()

    def build_messages(self, request: ChatRequest) -> list[dict[str, Any]]:
        """The ``messages`` list sent for ``request`` (system, then one multimodal user turn)."""
        content: list[dict[str, Any]] = [{"type": "text", "text": request.text}]
        for image in request.images:
            content.append({"type": "text", "text": f"[{image.caption}]"})
            content.append(
                {"type": "image_url", "image_url": {"url": image.data_url(), "detail": "auto"}}
            )
        return [
            {"role": "system", "content": request.system},
            {"role": "user", "content": content},
        ]

    def complete(self, request: ChatRequest) -> ChatReply:
        sdk = _import_openai()
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": self.build_messages(request),
            self._token_param: request.max_output_tokens,
        }
        if request.temperature is not None:
            kwargs["temperature"] = request.temperature
        if request.json_mode and self.json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        try:
            response = self._client.chat.completions.create(**kwargs)
        except sdk.APIError as exc:
            raise self._translate(exc) from exc
        if not isinstance(getattr(response, "choices", None), list):
            raise not_a_reply(self.base_url or "api.openai.com", "chat completion", response)
        text = ""
        finish = ""
        if response.choices:
            choice = response.choices[0]
            text = choice.message.content or ""
            finish = choice.finish_reason or ""
        usage = response.usage
        input_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        output_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        return ChatReply(
            text=text,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            model=response.model or self.model,
            finish_reason=finish,
        )

    def list_models(self) -> list[str]:
        sdk = _import_openai()
        try:
            return [m.id for m in self._client.models.list()]
        except sdk.APIError as exc:
            error = self._translate(exc)
            if isinstance(error, TransientCallError):
                msg = f"{self.label}: preflight failed: {error}"
                raise ProviderError(msg) from exc
            raise error from exc

    def preflight(self) -> None:
        models = self.list_models()
        if not self._azure:  # Azure lists base models, not the deployment names we call
            from city360.agents.providers.base import check_model_listed

            check_model_listed(self.label, self.model, models)

    def _translate(self, exc: Exception) -> Exception:
        sdk = _import_openai()
        where = self.base_url or "api.openai.com"
        if isinstance(exc, sdk.APITimeoutError):
            return TransientCallError(f"request to {where} timed out after {self.timeout_s:g} s")
        if isinstance(exc, sdk.APIConnectionError):
            return TransientCallError(f"cannot connect to {where}: {exc.__cause__ or exc}")
        if isinstance(exc, sdk.APIStatusError):
            status = exc.status_code
            if is_transient_status(status):
                return TransientCallError(
                    f"HTTP {status} from {where}: {exc.message}",
                    retry_after_s=retry_after_s(exc.response.headers),
                )
            if status in (401, 403):
                return ProviderAuthError(
                    f"{self.label}: the endpoint {where} refused the API key (HTTP {status}); "
                    "check the key in the environment"
                )
            if status == 404:
                return ProviderError(
                    f"{self.label}: HTTP 404 from {where} (unknown model or wrong base_url): "
                    f"{exc.message}"
                )
            return ProviderError(f"{self.label}: HTTP {status} from {where}: {exc.message}")
        return ProviderError(f"{self.label}: {exc}")
