"""Drawing primitives: the heading arrow, markers and the attribution stamp."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from city360.maps.draw import (
    ARROW_RGB,
    draw_arrow,
    draw_marker,
    stamp_attribution,
    text_stamp,
)


def _blank(size: int = 200) -> np.ndarray:
    return np.full((size, size, 3), 128, dtype=np.uint8)


def _pixels_of(image: np.ndarray, color: tuple[int, int, int]) -> np.ndarray:
    rows, cols = np.nonzero(np.all(image == np.array(color, dtype=np.uint8), axis=2))
    return np.column_stack([cols, rows]).astype(np.float64)


@pytest.mark.parametrize(
    ("heading_deg", "direction"),
    [(0.0, (0, -1)), (90.0, (1, 0)), (180.0, (0, 1)), (270.0, (-1, 0)), (45.0, (1, -1))],
)
def test_arrow_points_along_heading(heading_deg: float, direction: tuple[int, int]) -> None:
    image = _blank()
    draw_arrow(image, 100.0, 100.0, heading_deg, length_px=40)
    red = _pixels_of(image, ARROW_RGB)
    assert len(red) > 100
    offsets = red - (100.0, 100.0)
    tip = red[np.argmax(np.hypot(*offsets.T))] - (100.0, 100.0)  # farthest red pixel
    unit = np.asarray(direction, dtype=np.float64) / math.hypot(*direction)
    cos_angle = float(tip @ unit / np.hypot(*tip))
    assert cos_angle > 0.98, (heading_deg, tip)


def test_arrow_at_heading_90_points_right() -> None:
    image = _blank()
    draw_arrow(image, 100.0, 100.0, 90.0, length_px=40)
    red = _pixels_of(image, ARROW_RGB)
    assert red[:, 0].max() >= 100 + 0.6 * 40 - 1  # the tip, 0.6 lengths right of the centre
    assert red[:, 0].min() >= 100 - 0.4 * 40 - 1  # the tail, 0.4 lengths left
    assert np.ptp(red[:, 1]) > np.ptp(red[:, 0]) * 0.8  # wide across, as an arrowhead is


def test_marker_centred_on_position() -> None:
    image = _blank()
    draw_marker(image, 60.25, 140.75, color=(0, 0, 255), radius_px=8)
    blue = _pixels_of(image, (0, 0, 255))
    assert blue.mean(axis=0) == pytest.approx((60.25, 140.75), abs=0.3)


@pytest.mark.ocr
def test_attribution_is_legible(ocr_text: Callable[[np.ndarray], str]) -> None:
    image = stamp_attribution(_blank(256))
    assert "OpenStreetMap contributors" in ocr_text(image[-30:])
    assert "OpenStreetMap" not in ocr_text(_blank(256)[-30:])  # the check can fail


def test_text_stamp_blends_where_drawn() -> None:
    stamp = text_stamp("x:1 y:1", 14)
    assert stamp.height >= 10
    assert stamp.width > stamp.height


def test_attribution_fits_small_maps() -> None:
    image = stamp_attribution(_blank(120))
    changed = np.any(image != 128, axis=2)
    cols = np.nonzero(changed.any(axis=0))[0]
    assert cols.min() > 0  # the whole credit is inside the image, not cut on the left
    assert changed[-3:].any()
