"""One secret scrubber for everything city360 writes: results rows, step logs, run metadata and
error messages.

A server may echo the request back (some OpenAI-compatible servers put the ``Authorization``
header in an error body), and a model may repeat what it was shown, so any text can carry a
key. :func:`scrub_text` replaces

- the configured keys: values of environment variables whose name says key/token/secret/
  password (``OPENAI_API_KEY``, ``HF_TOKEN``, ...), read at each call so that worker processes
  and the parent see the same set, plus values passed to :func:`register_secret`;
- known secret shapes: ``sk-...`` (OpenAI, Anthropic), ``AIza...`` (Google), ``Bearer ...``
  tokens, ``hf_...`` (Hugging Face), ``ghp_...``/``github_pat_...`` (GitHub),

with :data:`MASK`. :func:`scrub` does the same through dicts, lists and tuples, and also masks
the whole value of a key named like a secret (``{"api_key": "..."}``).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping
from typing import Any

__all__ = ["MASK", "MIN_SECRET_CHARS", "SECRET_NAME", "register_secret", "scrub", "scrub_text"]

MASK = "***"
MIN_SECRET_CHARS = 8
"""Shorter configured values are not scrubbed: masking "1" or "true" everywhere would garble
the output and protect nothing."""

SECRET_NAME = re.compile(r"(api[_-]?key|(^|_)token$|secret|password|authorization)", re.IGNORECASE)
"""A field whose whole value is masked (``api_key``, ``access_token``; not ``input_tokens``)."""
_SECRET_ENV = re.compile(r"(API_?KEY|(^|_)TOKEN$|SECRET|PASSWORD)", re.IGNORECASE)
_SECRET_SHAPES = re.compile(
    r"(?:\bsk-[A-Za-z0-9_\-]{8,}"
    r"|\bAIza[0-9A-Za-z_\-]{20,}"
    r"|\bhf_[A-Za-z0-9]{16,}"
    r"|\bghp_[A-Za-z0-9]{20,}"
    r"|\bgithub_pat_[A-Za-z0-9_]{20,}"
    r"|(?<=Bearer )[A-Za-z0-9._~+/\-]{8,}=*)",
    re.IGNORECASE,
)
_registered: set[str] = set()
_lock = threading.Lock()


def register_secret(value: str | None) -> None:
    """Scrub ``value`` from everything written by this process from now on."""
    if value and len(value) >= MIN_SECRET_CHARS:
        with _lock:
            _registered.add(value)


def _configured() -> list[str]:
    found = {
        value.strip()
        for name, value in os.environ.items()
        if _SECRET_ENV.search(name) and len(value.strip()) >= MIN_SECRET_CHARS
    }
    with _lock:
        found |= _registered
    return sorted(found, key=len, reverse=True)  # longest first: a key inside a longer one


def scrub_text(text: str) -> str:
    """``text`` with configured keys and known secret shapes replaced by :data:`MASK`."""
    if not text:
        return text
    for secret in _configured():
        if secret in text:
            text = text.replace(secret, MASK)
    return _SECRET_SHAPES.sub(MASK, text)


def scrub(value: Any) -> Any:
    """A copy of ``value`` (JSON-like) with every string scrubbed and the values of keys named
    like secrets masked."""
    if isinstance(value, Mapping):
        return {k: MASK if SECRET_NAME.search(str(k)) and v else scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value]
    if isinstance(value, str):
        return scrub_text(value)
    return value
