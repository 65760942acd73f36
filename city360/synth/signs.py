"""Shop signboards: names rendered to high-contrast boards packed into one texture atlas.

Latin, Greek and Cyrillic names use DejaVu Sans Bold; names with CJK characters use Noto Sans
CJK (Japanese face). When the CJK font is missing the sign falls back to a transliteration of
the kana (from the Unicode character names) or, failing that, Pillow's built-in font, and logs
the fact once — rendering never fails because of a font. The ground truth keeps the real name;
:attr:`AtlasEntry.text_shown` says what the board actually shows.

Atlas layout: ``pages`` is a uint8 array of shape (P, S, S, 3), RGB, row 0 at the top. An
entry's ``(u0, v0, u1, v1)`` are texture coordinates with ``v`` measured from the top row of
its page (``v0`` = top edge of the board, ``v1`` = bottom edge), so a page uploaded row by row
maps image row r to texture t = (r + 0.5) / S.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from PIL import Image as PilImage
from PIL import ImageDraw, ImageFont

from city360.errors import ConfigError
from city360.types import Image

__all__ = [
    "CJK_FONT_PATHS",
    "LATIN_FONT_PATHS",
    "SIGN_STYLES",
    "AtlasEntry",
    "SignAtlas",
    "SignStyle",
    "build_sign_atlas",
    "has_cjk",
    "render_sign",
]

logger = logging.getLogger(__name__)

LATIN_FONT_PATHS: tuple[str, ...] = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans-Bold.ttf",
)
"""Bold sans fonts for non-CJK names, first existing one wins."""

CJK_FONT_PATHS: tuple[str, ...] = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Bold.ttc",
)
"""Noto Sans CJK collections (face 0 is Japanese), first existing one wins."""


@dataclass(frozen=True, slots=True)
class SignStyle:
    """Board and text colours (RGB 0-255); every pair has a contrast ratio above 7:1."""

    board_rgb: tuple[int, int, int]
    text_rgb: tuple[int, int, int]


SIGN_STYLES: tuple[SignStyle, ...] = (
    SignStyle((250, 250, 245), (20, 20, 20)),
    SignStyle((255, 236, 140), (25, 25, 25)),
    SignStyle((235, 245, 255), (10, 40, 110)),
    SignStyle((255, 240, 225), (120, 20, 10)),
    SignStyle((20, 60, 30), (255, 255, 255)),
    SignStyle((15, 30, 90), (255, 255, 255)),
    SignStyle((25, 25, 25), (255, 225, 60)),
    SignStyle((150, 15, 20), (255, 255, 255)),
)
"""Colour schemes a sign may get; dark-on-light schemes come first and are the most common."""

_CJK_RANGES = (
    (0x2E80, 0x2FDF),  # radicals
    (0x3000, 0x30FF),  # CJK punctuation, hiragana, katakana
    (0x3400, 0x4DBF),  # extension A
    (0x4E00, 0x9FFF),  # unified ideographs
    (0xAC00, 0xD7AF),  # hangul
    (0xF900, 0xFAFF),  # compatibility ideographs
    (0xFF00, 0xFFEF),  # half/full-width forms
)


def has_cjk(text: str) -> bool:
    """True when ``text`` contains a Chinese, Japanese or Korean character."""
    return any(lo <= ord(ch) <= hi for ch in text for lo, hi in _CJK_RANGES)


@dataclass(frozen=True, slots=True)
class AtlasEntry:
    """Where one sign lives in the atlas and its board's shape."""

    page: int
    u0: float
    v0: float
    u1: float
    v1: float
    aspect: float
    """Board width / height."""
    text_shown: str
    """The text actually drawn (differs from the name only in a font fallback)."""
    style: SignStyle


@dataclass(frozen=True, slots=True)
class SignAtlas:
    """All signboards of a scene; ``pages`` is (P, S, S, 3) uint8 RGB, row 0 at the top."""

    pages: Image
    entries: tuple[AtlasEntry, ...]


def _first_existing(paths: Sequence[str]) -> str | None:
    return next((p for p in paths if Path(p).is_file()), None)


@cache
def _truetype(path: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, size=size, index=0)


_warned: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        logger.warning(message)


def _transliterate_kana(text: str) -> str:
    """Kana -> romaji from Unicode names ('KATAKANA LETTER SA' -> 'sa'); other CJK -> ''."""
    out: list[str] = []
    for ch in text:
        if not has_cjk(ch):
            out.append(ch)
            continue
        name = unicodedata.name(ch, "")
        if ("HIRAGANA LETTER" in name or "KATAKANA LETTER" in name) and "SMALL" not in name:
            out.append(name.rsplit(" ", 1)[-1].lower())
        elif ch in "\u3000\u30fb":
            out.append(" ")
    return " ".join("".join(out).split())


def _font_and_text(
    text: str, size: int
) -> tuple[ImageFont.FreeTypeFont | ImageFont.ImageFont, str]:
    """Pick the font for ``text`` at ``size`` px, falling back (and logging) when missing."""
    if has_cjk(text):
        cjk = _first_existing(CJK_FONT_PATHS)
        if cjk is not None:
            return _truetype(cjk, size), text
        shown = _transliterate_kana(text) or text
        _warn_once(
            "cjk",
            "no CJK font found (tried "
            + ", ".join(CJK_FONT_PATHS)
            + "); Japanese sign names are transliterated where possible. "
            "Install it with `apt-get install fonts-noto-cjk`",
        )
        text = shown
        if has_cjk(text):
            return ImageFont.load_default(size=size), text
    latin = _first_existing(LATIN_FONT_PATHS)
    if latin is not None:
        return _truetype(latin, size), text
    _warn_once(
        "latin",
        "DejaVu Sans Bold not found (tried "
        + ", ".join(LATIN_FONT_PATHS)
        + "); signs use Pillow's default font. Install `fonts-dejavu-core` for sharper signs",
    )
    return ImageFont.load_default(size=size), text


def render_sign(
    text: str, *, height_px: int = 64, style: SignStyle = SIGN_STYLES[0], max_aspect: float = 8.0
) -> tuple[Image, str]:
    """Render a signboard: ``text`` centred on a plain board ``height_px`` tall (no drawn frame:
    lines next to letters make them harder to read, for OCR as for people).

    The font is as large as fits (cap height about 60% of the board) and shrinks for long names
    so that the board is at most ``max_aspect`` times as wide as tall; a name that would shrink
    below 45% goes on two lines when that allows larger letters. Returns the RGB image
    (height_px, width, 3) and the text actually drawn (lines joined by a space).
    """
    if height_px < 16:
        msg = f"`height_px` must be >= 16, got {height_px}"
        raise ConfigError(msg)
    label = " ".join(text.split()) or "?"
    pad = height_px // 3
    max_text_w = int(max_aspect * height_px) - 2 * pad
    size, font, shown = _fit(label, int(height_px * 0.62), max_text_w)
    lines = [shown]
    words = label.split(" ")
    if size < 0.45 * height_px and len(words) >= 2:
        # a long name reads better on two lines of larger letters than on one of tiny ones
        split = min(
            range(1, len(words)),
            key=lambda i: abs(len(" ".join(words[:i])) - len(" ".join(words[i:]))),
        )
        halves = [" ".join(words[:split]), " ".join(words[split:])]
        two = [_fit(half, int(height_px * 0.38), max_text_w) for half in halves]
        two_size = min(t[0] for t in two)
        if two_size > size:
            size = two_size
            fitted = [_font_and_text(half, size) for half in halves]
            font = fitted[0][0]
            lines = [f[1] for f in fitted]
            shown = " ".join(lines)
    boxes = [font.getbbox(line) for line in lines]
    text_w = max(b[2] - b[0] for b in boxes)
    line_h = max(b[3] - b[1] for b in boxes)
    gap = int(0.22 * line_h) if len(lines) > 1 else 0
    width = int(max(2.5 * height_px, text_w + 2 * pad))
    board = PilImage.new("RGB", (width, height_px), style.board_rgb)
    draw = ImageDraw.Draw(board)
    y0 = (height_px - len(lines) * line_h - gap * (len(lines) - 1)) / 2
    for i, (line, (left, top, right, _)) in enumerate(zip(lines, boxes, strict=True)):
        x = (width - (right - left)) / 2 - left
        y = y0 + i * (line_h + gap) - top
        draw.text((x, y), line, font=font, fill=style.text_rgb)
    return np.asarray(board, dtype=np.uint8), shown


def _fit(
    label: str, size: int, max_width: int
) -> tuple[int, ImageFont.FreeTypeFont | ImageFont.ImageFont, str]:
    """Largest font size <= ``size`` at which ``label`` fits ``max_width`` px (min 12)."""
    font, shown = _font_and_text(label, size)
    while True:
        left, _, right, _ = font.getbbox(shown)
        if right - left <= max_width or size <= 12:
            return size, font, shown
        size = max(12, int(size * max_width / (right - left)))
        font, shown = _font_and_text(label, size)


def build_sign_atlas(
    texts: Sequence[str],
    *,
    styles: Sequence[SignStyle] | None = None,
    height_px: int = 64,
    page_size: int | None = None,
    max_aspect: float = 8.0,
) -> SignAtlas:
    """Render every text to a board and shelf-pack the boards into square atlas pages.

    ``styles`` gives one style per text (default: the first style for all). ``page_size``
    defaults to the smallest power of two from 1024 to 4096 that holds every board on one page
    (several 4096 pages beyond that). Boards are separated by a 2-pixel gutter of their own
    edge colour so mipmaps do not bleed.
    """
    if styles is not None and len(styles) != len(texts):
        msg = f"`styles` must have one entry per text ({len(texts)}), got {len(styles)}"
        raise ConfigError(msg)
    boards: list[tuple[Image, str, SignStyle]] = []
    for i, text in enumerate(texts):
        style = styles[i] if styles is not None else SIGN_STYLES[0]
        board, shown = render_sign(text, height_px=height_px, style=style, max_aspect=max_aspect)
        boards.append((board, shown, style))
    widths = [b.shape[1] for b, _, _ in boards]
    if page_size is None:
        page_size = next(
            (size for size in (1024, 2048) if len(_shelf_pack(widths, height_px, size)[1]) <= 1),
            4096,
        )
    if page_size < height_px * max_aspect + 8:
        msg = f"`page_size` {page_size} cannot hold a {height_px}px board of aspect {max_aspect}"
        raise ConfigError(msg)
    places, per_page = _shelf_pack(widths, height_px, page_size)
    pages = np.full((max(1, len(per_page)), page_size, page_size, 3), 128, np.uint8)
    entries: list[AtlasEntry] = []
    gutter = _GUTTER
    for (board, shown, style), (page, x, y) in zip(boards, places, strict=True):
        h, w = board.shape[:2]
        pages[page, y - gutter : y + h + gutter, x - gutter : x + w + gutter] = board[0, 0]
        pages[page, y : y + h, x : x + w] = board
        entries.append(
            AtlasEntry(
                page=page,
                u0=x / page_size,
                v0=y / page_size,
                u1=(x + w) / page_size,
                v1=(y + h) / page_size,
                aspect=w / h,
                text_shown=shown,
                style=style,
            )
        )
    return SignAtlas(pages=pages, entries=tuple(entries))


_GUTTER = 2


def _shelf_pack(
    widths: Sequence[int], height: int, page_size: int
) -> tuple[list[tuple[int, int, int]], list[int]]:
    """(page, x, y) of each board packed in rows ("shelves"), and boards per page."""
    gutter = _GUTTER
    places: list[tuple[int, int, int]] = []
    per_page: list[int] = []
    x = y = page_size  # forces a new page for the first board
    for w in widths:
        if x + w + gutter > page_size:
            x, y = gutter, y + height + 2 * gutter
        if y + height + gutter > page_size:
            per_page.append(0)
            x, y = gutter, gutter
        places.append((len(per_page) - 1, x, y))
        per_page[-1] += 1
        x += w + 2 * gutter
    return places, per_page
