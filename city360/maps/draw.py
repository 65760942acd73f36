"""Cheap drawing on RGB map images: the attribution stamp, the heading arrow, markers, labels.

Everything here works on ``uint8`` (H, W, 3) RGB arrays in place with OpenCV or on small
pre-rendered stamps, so a per-step location map costs well under a millisecond of drawing.
Text is rendered once with Pillow (anti-aliased DejaVu Sans; Noto Sans CJK for Japanese
names when installed) and cached as an alpha stamp.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt

from city360.maps.osm import ATTRIBUTION
from city360.types import Image

__all__ = [
    "ARROW_RGB",
    "GOAL_RGB",
    "LANDMARK_RGB",
    "START_RGB",
    "TRAIL_RGB",
    "TextStamp",
    "draw_arrow",
    "draw_marker",
    "draw_polyline",
    "font_path",
    "stamp_attribution",
    "stamp_text",
    "text_stamp",
]

ARROW_RGB = (230, 0, 0)
"""The agent's position and heading: red, as agents are told."""
START_RGB = (0, 0, 255)
"""Route start marker: BLUE."""
GOAL_RGB = (255, 0, 0)
"""Route goal marker: RED."""
LANDMARK_RGB = (200, 0, 160)
"""Landmark marker: magenta, distinct from the start/goal colours."""
TRAIL_RGB = (255, 140, 0)
"""Where the agent has been: orange."""
_OUTLINE_RGB = (255, 255, 255)
_SHIFT = 4  # OpenCV fixed-point bits: sub-pixel precise shapes
_SCALE = 1 << _SHIFT

_CJK_FONT = "Noto Sans CJK JP"
_LATIN_FONT = "DejaVu Sans"


@lru_cache(maxsize=4)
def font_path(family: str = _LATIN_FONT) -> str | None:
    """File of an installed font family, or None (matplotlib ships DejaVu Sans, so that one is
    always found)."""
    from matplotlib import font_manager

    try:
        return str(font_manager.findfont(family, fallback_to_default=False))
    except ValueError:
        pass
    # matplotlib lists the system fonts once, when first imported, into a cache under
    # ~/.cache/matplotlib that it rebuilds only for a new matplotlib version: a font installed
    # later (CI installs fonts-noto-cjk into an image whose cache already exists) is missing
    # from it. Ask fontconfig, whose cache the font package refreshes, then scan the font
    # folders afresh.
    found = _fontconfig_file(family) or _scanned_file(family)
    if found is not None:
        font_manager.fontManager.addfont(found)
    return found


def _fontconfig_file(family: str) -> str | None:
    import shutil
    import subprocess

    if shutil.which("fc-list") is None:
        return None
    for pattern in (f":family={family}:style=Regular", f":family={family}"):
        try:
            listed = subprocess.run(
                ["fc-list", pattern, "file"], capture_output=True, text=True, timeout=20
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return None
        files = sorted(line.rstrip().rstrip(":") for line in listed.splitlines() if line.strip())
        if files:
            return files[0]
    return None


def _scanned_file(family: str) -> str | None:
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    for path in sorted(font_manager.findSystemFonts()):
        try:
            if FT2Font(path).family_name == family:
                return str(path)
        except (OSError, RuntimeError):
            continue
    return None


@lru_cache(maxsize=4)
def _charset(path: str) -> frozenset[int]:
    from matplotlib.ft2font import FT2Font

    return frozenset(FT2Font(path).get_charmap())


def _font_for(text: str) -> str:
    """DejaVu Sans when it has every glyph of ``text``, else Noto Sans CJK when installed and it
    does, else DejaVu Sans (missing glyphs show as boxes rather than failing)."""
    latin = font_path(_LATIN_FONT)
    assert latin is not None  # matplotlib ships it
    codes = {ord(ch) for ch in text if not ch.isspace()}
    if codes <= _charset(latin):
        return latin
    cjk = font_path(_CJK_FONT)
    if cjk is not None and codes <= _charset(cjk):
        return cjk
    return latin


@dataclass(frozen=True, slots=True)
class TextStamp:
    """Pre-rendered text, premultiplied for a fast blend: ``premultiplied`` (h, w, 3) is
    colour x alpha and ``inverse_alpha`` (h, w, 1) is 255 - alpha, both uint16."""

    premultiplied: npt.NDArray[np.uint16]
    inverse_alpha: npt.NDArray[np.uint16]

    @property
    def alpha(self) -> npt.NDArray[np.uint16]:
        return 255 - self.inverse_alpha

    @property
    def height(self) -> int:
        return int(self.inverse_alpha.shape[0])

    @property
    def width(self) -> int:
        return int(self.inverse_alpha.shape[1])


@lru_cache(maxsize=256)
def text_stamp(
    text: str,
    size_px: int,
    *,
    color: tuple[int, int, int] = (40, 40, 40),
    box: tuple[int, int, int, int] | None = (255, 255, 255, 200),
    pad_px: int = 2,
) -> TextStamp:
    """Render ``text`` at ``size_px`` (font size in pixels) on an optional RGBA ``box``."""
    from PIL import Image as PilImage
    from PIL import ImageDraw, ImageFont

    font = ImageFont.truetype(_font_for(text), size=max(6, size_px))
    left, top, right, bottom = font.getbbox(text)
    width, height = int(right - left) + 2 * pad_px, int(bottom - top) + 2 * pad_px
    canvas = PilImage.new("RGBA", (width, height), box if box is not None else (0, 0, 0, 0))
    ImageDraw.Draw(canvas).text((pad_px - left, pad_px - top), text, font=font, fill=color)
    rgba = np.asarray(canvas, dtype=np.uint16)
    alpha = rgba[:, :, 3:4]
    return TextStamp(premultiplied=rgba[:, :, :3] * alpha + 127, inverse_alpha=255 - alpha)


def stamp_text(image: Image, stamp: TextStamp, col: int, row: int) -> None:
    """Blend ``stamp`` into ``image`` with its top-left corner at ``(col, row)``, clipped."""
    h, w = image.shape[:2]
    c0, r0 = max(col, 0), max(row, 0)
    c1, r1 = min(col + stamp.width, w), min(row + stamp.height, h)
    if c0 >= c1 or r0 >= r1:
        return
    roi = image[r0:r1, c0:c1]
    sub = (slice(r0 - row, r1 - row), slice(c0 - col, c1 - col))
    blended = roi * stamp.inverse_alpha[sub]  # uint8 x uint16 -> uint16, no overflow
    blended += stamp.premultiplied[sub]
    roi[:] = blended // 255


def attribution_size_px(image_height: int, image_width: int) -> int:
    """Font size of the attribution: legible (>= 11 px) and about 4% of the smaller side."""
    return max(11, min(18, round(0.04 * min(image_height, image_width))))


def stamp_attribution(image: Image, *, text: str = ATTRIBUTION) -> Image:
    """Write "© OpenStreetMap contributors" in the bottom-right corner of ``image`` (in place,
    returned for chaining). Every map image city360 makes goes through here."""
    h, w = image.shape[:2]
    size = attribution_size_px(h, w)
    stamp = text_stamp(text, size)
    if stamp.width > w and size > 6:  # a small map: shrink the credit until it fits
        stamp = text_stamp(text, max(6, int(size * w / stamp.width)))
    stamp_text(image, stamp, w - stamp.width, h - stamp.height)
    return image


# shapes --------------------------------------------------------------------------------------
def _fixed(points: npt.ArrayLike) -> npt.NDArray[np.int32]:
    return np.round(np.asarray(points, dtype=np.float64) * _SCALE).astype(np.int32)


_ARROW_SHAPE = np.array([(0.0, -0.6), (0.42, 0.4), (0.0, 0.18), (-0.42, 0.4)])
"""Arrowhead pointing north (up) in units of its length, centred on the position."""


def arrow_polygon(
    col: float, row: float, heading_deg: float, length_px: float
) -> npt.NDArray[np.float64]:
    """Corners (4, 2) of the heading arrow in pixel (col, row) coordinates.

    Heading is clockwise from north; in image coordinates (col right, row down) the arrow's
    tip points along ``(sin h, -cos h)``: 0° up, 90° right.
    """
    h = math.radians(heading_deg)
    cos_h, sin_h = math.cos(h), math.sin(h)
    local = _ARROW_SHAPE * length_px
    cols = local[:, 0] * cos_h - local[:, 1] * sin_h
    rows = local[:, 0] * sin_h + local[:, 1] * cos_h
    return np.column_stack([cols + col, rows + row])


def draw_arrow(
    image: Image,
    col: float,
    row: float,
    heading_deg: float,
    *,
    length_px: float = 20.0,
    color: tuple[int, int, int] = ARROW_RGB,
) -> None:
    """A red arrowhead at ``(col, row)`` pointing along ``heading_deg``, outlined in white."""
    polygon = _fixed(arrow_polygon(col, row, heading_deg, length_px))
    cv2.polylines(image, [polygon], True, _OUTLINE_RGB, 3, cv2.LINE_AA, _SHIFT)
    cv2.fillPoly(image, [polygon], color, cv2.LINE_AA, _SHIFT)


def draw_marker(
    image: Image,
    col: float,
    row: float,
    *,
    color: tuple[int, int, int],
    radius_px: float = 9.0,
) -> None:
    """A filled disc centred on ``(col, row)`` with a white ring."""
    centre = tuple(int(v) for v in _fixed((col, row)))
    ring = round((radius_px + 2.5) * _SCALE)
    cv2.circle(image, centre, ring, _OUTLINE_RGB, -1, cv2.LINE_AA, _SHIFT)
    cv2.circle(image, centre, round(radius_px * _SCALE), color, -1, cv2.LINE_AA, _SHIFT)


def draw_polyline(
    image: Image,
    cols: Sequence[float] | npt.NDArray[np.float64],
    rows: Sequence[float] | npt.NDArray[np.float64],
    *,
    color: tuple[int, int, int] = TRAIL_RGB,
    thickness_px: int = 3,
) -> None:
    """An anti-aliased open polyline through the pixel positions."""
    if len(cols) < 2:
        return
    points = _fixed(np.column_stack([cols, rows]))
    cv2.polylines(image, [points], False, color, thickness_px, cv2.LINE_AA, _SHIFT)
