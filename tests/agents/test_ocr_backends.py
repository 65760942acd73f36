"""OCR backends by name: each reads a clearly rendered sign (Latin, and Japanese where the
backend and a CJK font allow), unknown names are refused with the list, and the sign reader
takes ``ocr=``."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from city360.agents.ocr_backends import (
    DEFAULT_OCR,
    OCR_BACKENDS,
    make_ocr_backend,
)
from city360.agents.sign_reader import SignReaderAgent, text_match
from city360.errors import ConfigError
from tests.agents.ocr_available import backend_or_skip


def _facade_with(board: np.ndarray) -> np.ndarray:
    """A 640x480 grey facade with a window row and ``board`` (RGB) pasted below it."""
    view = np.full((480, 640, 3), 120, np.uint8)
    for x in range(20, 640, 120):
        cv2.rectangle(view, (x, 60), (x + 90, 150), (60, 70, 90), -1)
    h, w = board.shape[:2]
    view[200 : 200 + h, 120 : 120 + w] = board
    return view


def _latin_sign(text: str) -> np.ndarray:
    board = np.full((50, 380, 3), (250, 250, 240), np.uint8)
    cv2.putText(board, text, (12, 36), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (20, 20, 20), 2, cv2.LINE_AA)
    return _facade_with(board)


@pytest.mark.parametrize("name", list(OCR_BACKENDS))
def test_each_backend_reads_a_rendered_sign_and_says_where(name: str) -> None:
    backend = backend_or_skip(name)
    assert backend.name == name
    signs = backend.read_signs(_latin_sign("Kahvila Aalto"))
    best = max(signs, key=lambda s: text_match("Kahvila Aalto", s.text))
    assert text_match("Kahvila Aalto", best.text) > 0.8
    x, y, w, h = best.box
    assert x >= 110
    assert x + w <= 510
    assert y >= 190
    assert y + h <= 260


@pytest.mark.parametrize("name", list(OCR_BACKENDS))
def test_each_backend_reads_nothing_on_a_bare_facade(name: str) -> None:
    backend = backend_or_skip(name)
    signs = backend.read_signs(_facade_with(np.full((50, 380, 3), 120, np.uint8)))
    assert all(text_match("Kahvila Aalto", s.text) < 0.5 for s in signs)


def test_rapidocr_reads_a_japanese_sign() -> None:
    from city360.synth.signs import render_sign

    backend = backend_or_skip("rapidocr")
    name = "さくら珈琲"
    board, shown = render_sign(name, height_px=48)
    if shown != name:
        pytest.skip("no CJK font for the sign (apt-get install fonts-noto-cjk)")
    signs = backend.read_signs(_facade_with(board))
    assert max(text_match(name, s.text) for s in signs) > 0.8


def test_an_unknown_backend_is_refused_with_the_list() -> None:
    with pytest.raises(ConfigError) as caught:
        make_ocr_backend("tesserac")
    assert str(caught.value) == (
        "unknown OCR backend 'tesserac'; expected one of tesseract, rapidocr. "
        "Did you mean 'tesseract'?"
    )
    with pytest.raises(ConfigError, match="unknown OCR backend 'paddle'; expected one of"):
        SignReaderAgent(ocr="paddle")


def test_backend_names_are_not_case_sensitive_and_the_default_is_one_of_them() -> None:
    assert DEFAULT_OCR in OCR_BACKENDS
    assert make_ocr_backend("TESSERACT", check=False).name == "tesseract"


@pytest.mark.parametrize("name", list(OCR_BACKENDS))
def test_the_sign_reader_reads_with_the_backend_it_is_given(name: str) -> None:
    backend_or_skip(name)
    agent = SignReaderAgent(seed=0, ocr=name)
    assert agent.ocr.name == name
    assert f"ocr={name!r}" in repr(agent)
