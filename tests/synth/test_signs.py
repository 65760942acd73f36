"""Sign boards and the sign atlas."""

from __future__ import annotations

import logging
import re
import shutil

import numpy as np
import pytest

from city360.errors import ConfigError
from city360.synth import signs
from city360.synth.signs import SIGN_STYLES, build_sign_atlas, has_cjk, render_sign


def _luminance(rgb: tuple[int, int, int]) -> float:
    channels = [c / 255 for c in rgb]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


@pytest.mark.parametrize("style", SIGN_STYLES)
def test_styles_have_high_contrast(style: signs.SignStyle) -> None:
    lighter, darker = sorted((_luminance(style.board_rgb), _luminance(style.text_rgb)))[::-1]
    assert (lighter + 0.05) / (darker + 0.05) >= 7.0


def test_render_sign_draws_text_in_its_colours() -> None:
    style = SIGN_STYLES[0]
    board, shown = render_sign("Kahvila Aurora", height_px=64, style=style)
    assert shown == "Kahvila Aurora"
    assert board.dtype == np.uint8
    assert board.shape[0] == 64
    assert board.shape[1] > 3 * 64
    text_pixels = np.all(np.abs(board.astype(int) - style.text_rgb) < 30, axis=2).mean()
    board_pixels = np.all(board == style.board_rgb, axis=2).mean()
    assert 0.08 < text_pixels < 0.5
    assert board_pixels > 0.4


def test_long_names_shrink_to_the_maximum_aspect() -> None:
    name = "Suomalainen Kirjakauppa Helsingin Keskusta Oy"
    board, shown = render_sign(name, height_px=64)
    assert board.shape[1] <= 8 * 64
    assert shown == name
    # two lines of text: ink in the upper and lower halves, a clear band between them
    ink_rows = np.flatnonzero(np.any(np.all(board < 80, axis=2), axis=1))
    assert ink_rows.min() < 28 < 36 < ink_rows.max()
    gaps = np.diff(ink_rows)
    assert gaps.max() > 1


def test_japanese_names_use_the_cjk_font() -> None:
    if signs._first_existing(signs.CJK_FONT_PATHS) is None:
        pytest.skip("Noto Sans CJK not installed (apt-get install fonts-noto-cjk)")
    assert has_cjk("セブン練馬店")
    assert not has_cjk("Kahvila Sävy")
    board, shown = render_sign("さくら薬局", height_px=64)
    assert shown == "さくら薬局"
    dark = np.all(board < 80, axis=2).mean()
    assert dark > 0.05  # glyphs drawn, not empty boxes of a font without the characters


def test_missing_cjk_font_falls_back_and_logs(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(signs, "CJK_FONT_PATHS", ("/nonexistent/NotoSansCJK-Bold.ttc",))
    monkeypatch.setattr(signs, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="city360.synth.signs"):
        _, kana = render_sign("ひまわり", height_px=48)
        board, kanji = render_sign("練馬書店", height_px=48)
    assert kana == "himawari"
    assert board.shape[0] == 48  # drawn with Pillow's default font, no crash
    assert kanji == "練馬書店"
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 1
    assert "fonts-noto-cjk" in messages[0]


def test_missing_latin_font_uses_pillow_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(signs, "LATIN_FONT_PATHS", ("/nonexistent/DejaVuSans-Bold.ttf",))
    monkeypatch.setattr(signs, "_warned", set())
    board, shown = render_sign("Polar Books", height_px=48)
    assert shown == "Polar Books"
    assert np.any(np.all(board == SIGN_STYLES[0].text_rgb, axis=2))


def test_atlas_packs_every_board_inside_its_page() -> None:
    names = [f"Shop number {i}" for i in range(60)]
    atlas = build_sign_atlas(names, height_px=32, page_size=512)
    assert atlas.pages.ndim == 4
    assert atlas.pages.shape[1:] == (512, 512, 3)
    assert atlas.pages.shape[0] >= 2  # 60 boards of ~200 px do not fit one 512 page
    boxes = {}
    for entry in atlas.entries:
        assert 0 <= entry.u0 < entry.u1 <= 1
        assert 0 <= entry.v0 < entry.v1 <= 1
        assert entry.aspect == pytest.approx((entry.u1 - entry.u0) / (entry.v1 - entry.v0))
        for page, u0, v0, u1, v1 in boxes.values():
            if page == entry.page:
                assert entry.u1 <= u0 or entry.u0 >= u1 or entry.v1 <= v0 or entry.v0 >= v1
        boxes[entry.text_shown] = (entry.page, entry.u0, entry.v0, entry.u1, entry.v1)
    first = atlas.entries[0]
    page = atlas.pages[first.page]
    top, left = round(first.v0 * 512), round(first.u0 * 512)
    expected, _ = render_sign(names[0], height_px=32)
    np.testing.assert_array_equal(page[top : top + 32, left : left + expected.shape[1]], expected)


def test_atlas_rejects_mismatched_styles() -> None:
    with pytest.raises(ConfigError, match=r"`styles` must have one entry per text \(2\), got 1"):
        build_sign_atlas(["a", "b"], styles=[SIGN_STYLES[0]])


@pytest.mark.ocr
def test_board_reads_back_with_ocr() -> None:
    if shutil.which("tesseract") is None:
        pytest.skip("tesseract not installed (apt-get install tesseract-ocr)")
    import pytesseract

    board, _ = render_sign("Linden Bakery", height_px=64, style=SIGN_STYLES[5])
    text = pytesseract.image_to_string(board)
    assert "linden bakery" in re.sub(r"\s+", " ", text.casefold())
