"""Read back what each protocol put on the wire (system prompt, text, images)."""

from __future__ import annotations

import base64
from dataclasses import dataclass

import cv2
import numpy as np

from tests.fixtures.fake_llm_server import FakeLLMServer, RecordedRequest

SECRET = "sk-test-0123456789-very-secret"
KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY"}
PROVIDERS = ("openai", "anthropic", "gemini")


@dataclass
class Wire:
    system: str
    texts: list[str]
    images: list[np.ndarray]


def base_url(kind: str, server: FakeLLMServer) -> str:
    return server.openai_base_url if kind == "openai" else server.url


def _decode(b64: str) -> np.ndarray:
    # google-genai sends URL-safe base64; the others standard base64
    data = np.frombuffer(base64.b64decode(b64.replace("-", "+").replace("_", "/")), np.uint8)
    image = cv2.imdecode(data, cv2.IMREAD_COLOR)
    assert image is not None, "image payload is not a decodable JPEG"
    return image


def read_wire(request: RecordedRequest) -> Wire:
    body = request.body
    texts: list[str] = []
    images: list[np.ndarray] = []
    if request.protocol == "openai":
        system_msg, user_msg = body["messages"]
        assert system_msg["role"] == "system"
        system = system_msg["content"]
        for part in user_msg["content"]:
            if part["type"] == "text":
                texts.append(part["text"])
            else:
                url = part["image_url"]["url"]
                assert url.startswith("data:image/jpeg;base64,")
                images.append(_decode(url.split(",", 1)[1]))
    elif request.protocol == "anthropic":
        system = body["system"]
        (user_msg,) = body["messages"]
        for part in user_msg["content"]:
            if part["type"] == "text":
                texts.append(part["text"])
            else:
                assert part["source"]["type"] == "base64"
                assert part["source"]["media_type"] == "image/jpeg"
                images.append(_decode(part["source"]["data"]))
    else:
        system = body["systemInstruction"]["parts"][0]["text"]
        (content,) = body["contents"]
        for part in content["parts"]:
            if "text" in part:
                texts.append(part["text"])
            else:
                inline = part["inlineData"]
                assert inline.get("mimeType", inline.get("mime_type")) == "image/jpeg"
                images.append(_decode(part["inlineData"]["data"]))
    return Wire(system=system, texts=texts, images=images)
