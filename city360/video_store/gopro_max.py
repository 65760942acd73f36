"""GoPro MAX ``.360`` video: two EAC cube-map strips -> one equirectangular picture.

A GoPro MAX records 360° video as an MP4 (suffix ``.360``) with two HEVC video streams of the
same size, each a strip of three equi-angular cube-map (EAC) faces side by side:

- stream 0: left, front, right, upright (the strip's columns sweep left -> front -> right);
- stream 1: down, back, top, each rotated 90° clockwise (the strip's columns sweep
  down -> back -> up, its rows run from the camera's right to its left).

The front and back faces are stitched. The four side faces (left, right, down, top) are not:
each is two half-faces, one from each lens, each running ``blend`` px past the face's centre
line, so the middle ``4 * blend`` px of the slot show the same strip of the world twice;
the halves are cross-faded there. Sizes per recording mode are in :data:`GOPRO_MAX_LAYOUTS`.
The layout follows Paul Bourke's and Trek View's ``max2sphere`` (see docs/design-notes.md,
"GoPro MAX .360").

The conversion is a ``cv2.remap`` from maps computed once per (strip size, output width): one
bilinear sample per output pixel, plus a second one and a cross-fade only in the overlap
bands. Directions: x right, y forward (the front lens), z up; equirect longitude 0 (the centre
column) looks forward and grows to the right, the top row looks straight up.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from city360.video_store.cubemap import EAC_FACES, equirect_directions

__all__ = [
    "GOPRO_MAX_LAYOUTS",
    "GoProMaxLayout",
    "eac_to_equirect",
    "layout_for_size",
]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class GoProMaxLayout:
    """One recording mode's strip geometry, pixels: each strip is ``width`` x ``height``,
    ``side_width`` + ``centre_width`` + ``side_width`` wide; ``blend`` is how far each lens's
    half of a side face runs past the face's centre line; ``equirect_width`` is the width of
    the equirectangular picture the strips hold (height: half of it)."""

    name: str
    width: int
    height: int
    side_width: int
    centre_width: int
    blend: int
    equirect_width: int


GOPRO_MAX_LAYOUTS = (
    GoProMaxLayout("5.6K", 4096, 1344, 1376, 1344, 32, 5376),
    GoProMaxLayout("3K", 2272, 736, 768, 736, 16, 2944),
)
"""The MAX's two strip sizes: 5.6K (24/25/30 fps and time lapse) and 3K (50/60 fps)."""


def layout_for_size(width: int, height: int) -> GoProMaxLayout | None:
    """The layout whose strips are ``width`` x ``height`` pixels, or None."""
    for layout in GOPRO_MAX_LAYOUTS:
        if (layout.width, layout.height) == (width, height):
            return layout
    return None


# Face slots: (strip, slot, normal, column axis, row axis): the equi-angular cube map's faces,
# stream 0 its top row and stream 1 its bottom row.
_FACES = tuple(
    (face.row, face.column, np.asarray(face.normal), np.asarray(face.col_axis),
     np.asarray(face.row_axis))
    for face in EAC_FACES
)  # fmt: skip


_BAND_ROW = 1024


@dataclass(frozen=True, slots=True)
class _Maps:
    """``cv2.remap`` maps into the two strips stacked (stream 0 above stream 1): the first
    sample of every output pixel, and for the ``band`` pixels (flat indices) a second sample
    cross-faded in with weight ``alpha``."""

    map_x: npt.NDArray[np.float32]
    map_y: npt.NDArray[np.float32]
    band: npt.NDArray[np.int64]
    band_x: npt.NDArray[np.float32]
    band_y: npt.NDArray[np.float32]
    alpha: npt.NDArray[np.float32]


@functools.lru_cache(maxsize=8)
def _maps(layout: GoProMaxLayout, strip_w: int, strip_h: int, out_w: int) -> _Maps:
    """Maps for strips of ``strip_w`` x ``strip_h`` px (the layout scaled) to ``out_w`` wide."""
    out_h = out_w // 2
    d = equirect_directions(out_w, out_h).reshape(-1, 3)
    normals = np.stack([face[2] for face in _FACES])
    face = np.argmax(d @ normals.T, axis=1)
    x_first = np.empty(face.shape, np.float64)  # layout pixels, continuous (0 = left edge)
    x_second = np.empty(face.shape, np.float64)
    y = np.empty(face.shape, np.float64)
    alpha = np.zeros(face.shape, np.float64)
    side, half, blend = layout.side_width, layout.side_width / 2.0, float(layout.blend)
    scale_x, scale_y = strip_w / layout.width, strip_h / layout.height
    # samples stay within their face's slot: at most the centre of its edge pixel
    pad_x, pad_y = 0.5 / scale_x, 0.5 / scale_y
    for k, (strip, slot, normal, col_axis, row_axis) in enumerate(_FACES):
        rows = np.flatnonzero(face == k)
        v = d[rows]
        depth = v @ normal
        # equi-angular: position on the face is linear in the angle, not in its tangent
        s = 0.5 + (2.0 / math.pi) * np.arctan((v @ col_axis) / depth)  # [0, 1] rightwards
        t = 0.5 + (2.0 / math.pi) * np.arctan((v @ row_axis) / depth)  # [0, 1] downwards
        y[rows] = np.clip(t * layout.height, pad_y, layout.height - pad_y) + strip * layout.height
        if slot == 1:  # stitched front/back: one sample
            start, slot_w = float(side), float(layout.centre_width)
            first = second = s * layout.centre_width
        else:
            start = 0.0 if slot == 0 else float(side + layout.centre_width)
            slot_w = float(side)
            # each lens's half-face runs `blend` px past the centre line, so 2*blend px of
            # the slot show the same strip of world twice and the face is side - 2*blend wide
            first = (side - 2.0 * blend) * s  # from the lens on the face's left
            second = first + 2.0 * blend  # from the lens on the face's right
            weight = np.clip((first - (half - 2.0 * blend)) / (2.0 * blend), 0.0, 1.0)
            first = np.where(weight >= 1.0, second, first)
            alpha[rows] = np.where(weight >= 1.0, 0.0, weight)
        x_first[rows] = start + np.clip(first, pad_x, slot_w - pad_x)
        x_second[rows] = start + np.clip(second, pad_x, slot_w - pad_x)
    # cv2.remap samples at pixel centres: continuous coordinate c is pixel c - 0.5
    map_x = (x_first * scale_x - 0.5).astype(np.float32)
    map_y = (y * scale_y - 0.5).astype(np.float32)
    band = np.flatnonzero(alpha > 0.0)
    # cv2.remap takes maps under 32767 px a side: lay the band's samples out in rows
    padded = -(-band.size // _BAND_ROW) * _BAND_ROW
    band_x = np.zeros(padded, np.float32)
    band_y = np.zeros(padded, np.float32)
    band_x[: band.size] = x_second[band] * scale_x - 0.5
    band_y[: band.size] = map_y[band]
    return _Maps(
        map_x=map_x.reshape(out_h, out_w),
        map_y=map_y.reshape(out_h, out_w),
        band=band,
        band_x=band_x.reshape(-1, _BAND_ROW),
        band_y=band_y.reshape(-1, _BAND_ROW),
        alpha=alpha[band].astype(np.float32),
    )


def eac_to_equirect(
    front_strip: npt.NDArray[np.uint8],
    back_strip: npt.NDArray[np.uint8],
    layout: GoProMaxLayout,
    *,
    width: int,
) -> npt.NDArray[np.uint8]:
    """The equirectangular picture ``width`` x ``width / 2`` held by one frame of each stream.

    ``front_strip`` (stream 0) and ``back_strip`` (stream 1) are (H, W) grey or (H, W, C)
    pictures of one size, ``layout``'s strips or a scaled copy of them (for a small output,
    scaling the strips first is far cheaper than converting at full size).
    """
    import cv2

    if front_strip.shape != back_strip.shape:
        msg = (
            f"GoPro MAX strips must be one size, got {front_strip.shape[:2]} and "
            f"{back_strip.shape[:2]}"
        )
        raise ValueError(msg)
    if width < 2 or width % 2:
        msg = f"`width` must be even and >= 2, got {width}"
        raise ValueError(msg)
    strip_h, strip_w = front_strip.shape[:2]
    maps = _maps(layout, strip_w, strip_h, width)
    canvas: Any = np.concatenate([front_strip, back_strip], axis=0)
    out = cv2.remap(
        canvas, maps.map_x, maps.map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    if maps.band.size:
        second = cv2.remap(
            canvas, maps.band_x, maps.band_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        )
        flat = out.reshape(maps.map_x.size, -1)
        weight = maps.alpha[:, None]
        first = flat[maps.band].astype(np.float32)
        other = second.reshape(-1, flat.shape[1])[: maps.band.size].astype(np.float32)
        mixed = first + weight * (other - first)
        flat[maps.band] = np.clip(np.rint(mixed), 0, 255).astype(np.uint8)
    return np.ascontiguousarray(out)
