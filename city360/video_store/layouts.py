"""Which native 360° layout a source video is in, and its conversion to equirect.

Ingest stores equirectangular frames whatever the camera wrote. The layouts it reads:

- ``equirect``: a 2:1 equirectangular frame (stitched by the camera or its app);
- ``gopro-max``: a GoPro MAX ``.360``, two EAC strips in two streams (:mod:`.gopro_max`);
- ``dual-fisheye``: two circular fisheye pictures side by side, front lens left (Insta360
  ``.insv``, Ricoh Theta dual-fisheye video, Samsung Gear 360; :mod:`.dual_fisheye`);
- ``eac``: YouTube's 3x2 equi-angular cube map; ``cubemap``: the plain 3x2 cube map of
  Facebook / FFmpeg ``c3x2`` (:mod:`.cubemap`).

``auto`` decides from the container, in this order: a GoPro MAX ``.360`` (suffix or its two
``GoPro H.265`` tracks); a ``.insv`` suffix (dual fisheye); spherical metadata (equirectangular,
cubemap, fisheye); else the frame's shape: 2:1 is equirect, 3:2 is EAC. A 2:1 frame is never
taken for dual fisheye from its shape alone: the suffix, the metadata or ``--layout`` must say so.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from city360.errors import ConfigError, VideoError
from city360.video_store.cubemap import cube_to_equirect
from city360.video_store.dual_fisheye import DualFisheye, dual_fisheye_to_equirect

__all__ = [
    "ASPECT_TOLERANCE",
    "LAYOUTS",
    "LAYOUT_CHOICES",
    "Layout",
    "LayoutChoice",
    "check_frame_size",
    "detect_layout",
    "equirect_size",
    "native_to_equirect",
    "parse_layout",
]

Layout = Literal["equirect", "gopro-max", "dual-fisheye", "eac", "cubemap"]
LayoutChoice = Literal["auto", "equirect", "gopro-max", "dual-fisheye", "eac", "cubemap"]
LAYOUTS: tuple[Layout, ...] = ("equirect", "gopro-max", "dual-fisheye", "eac", "cubemap")
LAYOUT_CHOICES: tuple[LayoutChoice, ...] = ("auto", *LAYOUTS)

ASPECT_TOLERANCE = 0.01
"""Largest relative deviation of width/height from the layout's aspect that is accepted."""

_ASPECT = {"equirect": 2.0, "dual-fisheye": 2.0, "eac": 1.5, "cubemap": 1.5}
_SHAPE = {
    "equirect": "2:1 (one equirectangular picture)",
    "dual-fisheye": "2:1 (two fisheye circles side by side)",
    "eac": "3:2 (3x2 cube faces)",
    "cubemap": "3:2 (3x2 cube faces)",
}
_FISHEYE_SUFFIXES = (".insv",)


def parse_layout(value: str) -> LayoutChoice:
    """``value`` as a layout choice; :class:`ConfigError` with a close match otherwise."""
    cleaned = value.strip().lower().replace("_", "-")
    if cleaned in LAYOUT_CHOICES:
        return cleaned
    close = difflib.get_close_matches(cleaned, LAYOUT_CHOICES, n=1)
    hint = f". Did you mean {close[0]!r}?" if close else ""
    msg = f"unknown --layout {value!r}; expected one of {', '.join(LAYOUT_CHOICES)}{hint}"
    raise ConfigError(msg)


def _aspect_fits(layout: str, width: int, height: int) -> bool:
    aspect = width / height if height else 0.0
    return abs(aspect / _ASPECT[layout] - 1.0) <= ASPECT_TOLERANCE


def detect_layout(source: Path, *, spherical: str | None, width: int, height: int) -> Layout:
    """The layout ``auto`` picks for a single-stream video (a GoPro MAX ``.360`` is found
    before this, from its streams). ``spherical`` is the projection its spherical metadata
    names, or None; ``width`` x ``height`` its upright frame size.

    Raises :class:`VideoError` naming the file, the size or metadata found and the fix when
    nothing says which layout it is.
    """
    aspect = width / height if height else 0.0
    if source.suffix.lower() in _FISHEYE_SUFFIXES:
        return "dual-fisheye"
    if spherical == "equirectangular":
        return "equirect"
    if spherical == "cubemap":
        return "cubemap"
    if spherical == "fisheye" and _aspect_fits("dual-fisheye", width, height):
        return "dual-fisheye"
    if spherical is not None:
        msg = (
            f"video {source}: spherical metadata says {spherical!r} ({width}x{height}), not a "
            "layout ingest reads; convert it to equirectangular, or pass --layout "
            "equirect|dual-fisheye|eac|cubemap if the metadata is wrong"
        )
        raise VideoError(msg)
    if _aspect_fits("equirect", width, height):
        return "equirect"
    if _aspect_fits("eac", width, height):
        return "eac"
    msg = (
        f"video {source} is {width}x{height} (aspect {aspect:.3f}), neither a 2:1 "
        "equirectangular frame nor a 3:2 cube map; export it as equirectangular 360° video, or "
        "pass --layout (dual-fisheye, eac, cubemap) for the layout it is in, or --layout "
        "equirect if it is equirectangular anyway"
    )
    raise VideoError(msg)


def check_frame_size(layout: Layout, source: Path, width: int, height: int) -> None:
    """Raise :class:`VideoError` when a ``width`` x ``height`` frame cannot be ``layout``
    (told by ``--layout``); ``equirect`` told is taken as is, whatever its shape."""
    if layout in ("equirect", "gopro-max") or _aspect_fits(layout, width, height):
        return
    fitting = [name for name in ("equirect", "eac") if _aspect_fits(name, width, height)]
    fix = (
        f"pass --layout {fitting[0]} (or auto)"
        if fitting
        else "pass the --layout the camera wrote, or export it as equirectangular 360° video"
    )
    msg = (
        f"video {source} is {width}x{height} (aspect {width / height:.3f}), but --layout "
        f"{layout} needs {_SHAPE[layout]}; {fix}"
    )
    raise VideoError(msg)


def equirect_size(layout: Layout, width: int, height: int) -> tuple[int, int]:
    """The equirect size a single-stream ``layout`` frame of ``width`` x ``height`` holds at
    about its own resolution: a cube map's four side faces span the equirect's width; a dual
    fisheye frame is as wide as its equirect."""
    if layout in ("eac", "cubemap"):
        out_w = round(4 * width / 3 / 2) * 2
        return out_w, out_w // 2
    if layout == "dual-fisheye":
        out_w = width + width % 2
        return out_w, out_w // 2
    return width, height


def native_to_equirect(
    picture: npt.NDArray[np.uint8],
    layout: Layout,
    *,
    width: int,
    fisheye: DualFisheye | None = None,
) -> npt.NDArray[np.uint8]:
    """The equirect picture ``width`` x ``width / 2`` that ``picture`` (a frame in the
    single-stream ``layout``, any scale) holds."""
    if layout == "dual-fisheye":
        return dual_fisheye_to_equirect(picture, fisheye or DualFisheye(), width=width)
    if layout in ("eac", "cubemap"):
        return cube_to_equirect(picture, layout, width=width)
    msg = f"layout {layout!r} is not a single-stream native layout"
    raise ValueError(msg)
