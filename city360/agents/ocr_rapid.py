"""Reading signs with PP-OCR (text detection + recognition networks) through rapidocr.

rapidocr 3.x ships its ONNX models inside the wheel (PP-OCRv6 small detection and recognition,
the PP-OCR v2 direction classifier, ~31 MB) and runs them with ONNX Runtime: constructing the
engine reads them from the package folder and touches no network (checked with the network
unshared). Unlike tesseract it needs no text-box finder of ours: its detector finds the lines
of text in the whole view, at any polarity, and the recogniser reads each line's crop. Its one
recognition model reads Latin letters, digits and Chinese characters, which covers most kanji
on Japanese signs (not kana-only words).

The engine is built once per process (about a second) and runs on :data:`THREADS` threads:
eval workers are processes, one per core, so one thread each keeps them from fighting.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from city360.agents.ocr import SignText
from city360.errors import DependencyMissingError
from city360.types import Image

__all__ = ["MIN_SCORE", "THREADS", "rapidocr_engine", "read_signs_rapid"]

THREADS = 1
"""ONNX Runtime threads per engine (intra- and inter-op)."""

MIN_SCORE = 0.5
"""Lines the recogniser is less sure of (mean character confidence in [0, 1]) are dropped."""

_INSTALL = (
    "rapidocr and onnxruntime are needed for the rapidocr OCR backend: pip install 'city360[ocr]'"
)


@functools.cache
def rapidocr_engine() -> Any:
    """The process's rapidocr engine (built on first use), or DependencyMissingError saying
    how to install it."""
    try:
        import onnxruntime  # noqa: F401  # rapidocr imports it lazily; fail here, clearly
        from rapidocr import RapidOCR
    except ImportError as exc:
        raise DependencyMissingError(_INSTALL) from exc
    engine = RapidOCR(
        params={
            "Global.log_level": "error",
            "Global.text_score": MIN_SCORE,
            "EngineConfig.onnxruntime.intra_op_num_threads": THREADS,
            "EngineConfig.onnxruntime.inter_op_num_threads": THREADS,
        }
    )
    return engine


def read_signs_rapid(image: Image) -> list[SignText]:
    """Every line of text PP-OCR reads in an RGB view (H, W, 3), each with its axis-aligned box
    in view pixels, top to bottom then left to right; lines under :data:`MIN_SCORE` are left
    out."""
    engine = rapidocr_engine()
    # rapidocr takes OpenCV's BGR order for arrays
    result = engine(np.ascontiguousarray(np.asarray(image)[:, :, ::-1]))
    if result.boxes is None or result.txts is None:
        return []
    signs = []
    for quad, text, score in zip(result.boxes, result.txts, result.scores, strict=True):
        words = str(text).strip()
        if not words or float(score) < MIN_SCORE:
            continue
        corners = np.asarray(quad, dtype=np.float64)
        x0, y0 = np.floor(corners.min(axis=0)).astype(int)
        x1, y1 = np.ceil(corners.max(axis=0)).astype(int)
        box = (max(0, int(x0)), max(0, int(y0)), int(x1 - x0), int(y1 - y0))
        signs.append(SignText(words, box))
    return sorted(signs, key=lambda s: (s.box[1], s.box[0]))
