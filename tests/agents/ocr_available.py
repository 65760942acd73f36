"""Which OCR backends this machine has, for tests that skip (saying what is missing) without."""

from __future__ import annotations

import importlib.util
import shutil

import pytest

from city360.agents.ocr_backends import OcrBackend, make_ocr_backend

MISSING = {
    "tesseract": (
        shutil.which("tesseract") is None,
        "tesseract not installed (apt-get install tesseract-ocr)",
    ),
    "rapidocr": (
        importlib.util.find_spec("rapidocr") is None
        or importlib.util.find_spec("onnxruntime") is None,
        "rapidocr / onnxruntime not installed (pip install 'city360[ocr]')",
    ),
}
"""Backend name -> (missing here?, the skip reason that says how to install it)."""


def backend_or_skip(name: str, *, lang: str = "eng") -> OcrBackend:
    """The backend ``name``, or skip the test when it is not installed."""
    missing, reason = MISSING[name]
    if missing:
        pytest.skip(reason)
    return make_ocr_backend(name, lang=lang)
