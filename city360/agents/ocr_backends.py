"""Scene-text OCR backends, by name: what reads the signs in a view for the sign reader.

A backend is any object with a ``name`` and ``read_signs(image) -> list[SignText]`` (RGB view
in, one :class:`~city360.agents.ocr.SignText` per line of text read, box in view pixels):

- ``tesseract``: :func:`city360.agents.ocr.read_signs` (a text-box finder, per-box
  binarization and one tesseract call; needs the tesseract program);
- ``rapidocr``: PP-OCR detection + recognition through ONNX Runtime
  (:mod:`city360.agents.ocr_rapid`; ``pip install 'city360[ocr]'``, models inside the wheel).

:data:`DEFAULT_OCR` is the one the sign reader uses unless told otherwise; the figures that
chose it are in :mod:`city360.agents.ocr` and the README.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from city360.agents.ocr import SignText, read_signs
from city360.errors import ConfigError, did_you_mean
from city360.types import Image

__all__ = [
    "DEFAULT_OCR",
    "OCR_BACKENDS",
    "OcrBackend",
    "RapidOcrBackend",
    "TesseractBackend",
    "make_ocr_backend",
]


class OcrBackend(Protocol):
    """Reads the lines of text in an RGB view (H, W, 3); boxes in the view's pixels."""

    @property
    def name(self) -> str: ...

    def read_signs(self, image: Image) -> list[SignText]: ...

    def check(self) -> None:
        """Raise :class:`~city360.errors.DependencyMissingError` (saying how to install it)
        when the backend's package or program is missing."""


@dataclass(frozen=True, slots=True)
class TesseractBackend:
    """Tesseract through :func:`city360.agents.ocr.read_signs`; ``lang`` is tesseract's
    language code(s), e.g. ``"eng"`` or ``"eng+jpn"`` (each needs its traineddata)."""

    lang: str = "eng"

    @property
    def name(self) -> str:
        return "tesseract"

    def read_signs(self, image: Image) -> list[SignText]:
        return read_signs(image, lang=self.lang)

    def check(self) -> None:
        from city360.agents.ocr import check_tesseract

        check_tesseract()


@dataclass(frozen=True, slots=True)
class RapidOcrBackend:
    """PP-OCR through rapidocr (:mod:`city360.agents.ocr_rapid`). Its one model reads Latin
    letters, digits and Chinese characters (most kanji), so ``lang`` is not used; it is taken
    so that every backend is built the same way."""

    lang: str = "eng"

    @property
    def name(self) -> str:
        return "rapidocr"

    def read_signs(self, image: Image) -> list[SignText]:
        from city360.agents.ocr_rapid import read_signs_rapid

        return read_signs_rapid(image)

    def check(self) -> None:
        from city360.agents.ocr_rapid import rapidocr_engine

        rapidocr_engine()


OCR_BACKENDS: dict[str, Callable[..., OcrBackend]] = {
    "tesseract": TesseractBackend,
    "rapidocr": RapidOcrBackend,
}
"""Backend name -> its class, built with ``lang=``."""

DEFAULT_OCR = "rapidocr"
"""The sign reader's backend unless ``ocr=`` says otherwise (see the module docstring)."""


def make_ocr_backend(name: str, *, lang: str = "eng", check: bool = True) -> OcrBackend:
    """The backend called ``name`` (any case). With ``check`` a backend whose package or
    program is missing fails now, with how to install it, not at the first view."""
    key = name.strip().lower()
    if key not in OCR_BACKENDS:
        hint = did_you_mean(key, OCR_BACKENDS)
        msg = f"unknown OCR backend {name!r}; expected one of {', '.join(OCR_BACKENDS)}.{hint}"
        raise ConfigError(msg)
    backend = OCR_BACKENDS[key](lang=lang)
    if check:
        backend.check()
    return backend
