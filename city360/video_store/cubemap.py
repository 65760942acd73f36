"""Single-stream cube maps (3x2 faces in one frame) -> one equirectangular picture.

Two layouts, both 3 faces wide and 2 high, each face ``W / 3`` x ``H / 2`` px:

- ``eac``: Google/YouTube's equi-angular cube map (what YouTube re-encodes 360° video to, and
  FFmpeg ``v360`` calls ``eac``): top row left, front, right upright; bottom row down, back,
  up, each rotated 90° clockwise, so the bottom row is one continuous strip from down over
  back to up. Positions on a face are linear in the angle (``atan``), not in its tangent.
  It is the GoPro MAX's face table (:mod:`.gopro_max`) without the MAX's lens overlap bands.
- ``cubemap``: the plain (tangent-linear) 3x2 cube map of Facebook's Transform360 and FFmpeg
  ``v360`` ``c3x2`` with its defaults: top row right, left, up; bottom row down, front, back;
  every face upright (up's bottom edge meets front, down's top edge meets front).

The conversion is a ``cv2.remap`` from maps computed once per (frame size, output width).
Directions: x right, y forward, z up; equirect longitude 0 (the centre column) looks forward
and grows to the right, the top row looks straight up. See docs/design-notes.md,
"Native 360 layouts".
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

__all__ = [
    "C3X2_FACES",
    "EAC_FACES",
    "CubeFace",
    "CubeLayout",
    "cube_to_equirect",
    "equirect_directions",
]

FloatArray = npt.NDArray[np.float64]
CubeLayout = Literal["eac", "cubemap"]


@dataclass(frozen=True, slots=True)
class CubeFace:
    """One face slot of a 3x2 grid: ``column`` 0-2 and ``row`` 0-1 of the grid; ``normal``
    the direction the face's centre looks; ``col_axis`` where its picture columns grow
    (rightwards) and ``row_axis`` where its rows grow (downwards), unit vectors (x, y, z)."""

    name: str
    column: int
    row: int
    normal: tuple[float, float, float]
    col_axis: tuple[float, float, float]
    row_axis: tuple[float, float, float]


_PX, _NX = (1.0, 0.0, 0.0), (-1.0, 0.0, 0.0)
_PY, _NY = (0.0, 1.0, 0.0), (0.0, -1.0, 0.0)
_PZ, _NZ = (0.0, 0.0, 1.0), (0.0, 0.0, -1.0)

EAC_FACES = (
    CubeFace("left", 0, 0, _NX, _PY, _NZ),
    CubeFace("front", 1, 0, _PY, _PX, _NZ),
    CubeFace("right", 2, 0, _PX, _NY, _NZ),
    CubeFace("down", 0, 1, _NZ, _NY, _NX),  # rotated 90° clockwise
    CubeFace("back", 1, 1, _NY, _PZ, _NX),  # rotated 90° clockwise
    CubeFace("up", 2, 1, _PZ, _PY, _NX),  # rotated 90° clockwise
)
"""The equi-angular cube map's faces (YouTube EAC; the GoPro MAX's two strips stacked)."""

C3X2_FACES = (
    CubeFace("right", 0, 0, _PX, _NY, _NZ),
    CubeFace("left", 1, 0, _NX, _PY, _NZ),
    CubeFace("up", 2, 0, _PZ, _PX, _PY),
    CubeFace("down", 0, 1, _NZ, _PX, _NY),
    CubeFace("front", 1, 1, _PY, _PX, _NZ),
    CubeFace("back", 2, 1, _NY, _NX, _NZ),
)
"""The plain 3x2 cube map's faces (Facebook / FFmpeg ``c3x2``: right left up / down front
back, all upright)."""


def equirect_directions(out_w: int, out_h: int) -> FloatArray:
    """Unit view direction of every equirect pixel centre, shape (out_h, out_w, 3)."""
    lon = ((np.arange(out_w) + 0.5) / out_w - 0.5) * 2.0 * math.pi
    lat = (0.5 - (np.arange(out_h) + 0.5) / out_h) * math.pi
    cos_lat = np.cos(lat)[:, None]
    return np.stack(
        np.broadcast_arrays(
            cos_lat * np.sin(lon)[None, :],
            cos_lat * np.cos(lon)[None, :],
            np.sin(lat)[:, None],
        ),
        axis=-1,
    )


def face_coordinates(
    directions: FloatArray, face: CubeFace, *, equiangular: bool
) -> tuple[FloatArray, FloatArray]:
    """Where ``directions`` (N, 3), all nearest to ``face``'s normal, fall on the face:
    ``(s, t)`` in [0, 1], rightwards and downwards."""
    depth = directions @ np.asarray(face.normal)
    a = (directions @ np.asarray(face.col_axis)) / depth  # tangent-plane coordinates, [-1, 1]
    b = (directions @ np.asarray(face.row_axis)) / depth
    if equiangular:  # position linear in the angle, not in its tangent
        return 0.5 + (2.0 / math.pi) * np.arctan(a), 0.5 + (2.0 / math.pi) * np.arctan(b)
    return 0.5 + 0.5 * a, 0.5 + 0.5 * b


@functools.lru_cache(maxsize=8)
def _maps(
    layout: CubeLayout, src_w: int, src_h: int, out_w: int
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """``cv2.remap`` maps from a ``src_w`` x ``src_h`` 3x2 frame to an ``out_w`` equirect."""
    out_h = out_w // 2
    faces = EAC_FACES if layout == "eac" else C3X2_FACES
    d = equirect_directions(out_w, out_h).reshape(-1, 3)
    nearest = np.argmax(d @ np.asarray([f.normal for f in faces]).T, axis=1)
    face_w, face_h = src_w / 3.0, src_h / 2.0
    map_x = np.empty(nearest.shape, np.float64)
    map_y = np.empty(nearest.shape, np.float64)
    for k, face in enumerate(faces):
        rows = np.flatnonzero(nearest == k)
        s, t = face_coordinates(d[rows], face, equiangular=layout == "eac")
        # samples stay within their face: at most the centre of its edge pixel, so a
        # neighbouring face (rotated differently) never bleeds in
        x = np.clip(s * face_w, 0.5, face_w - 0.5) + face.column * face_w
        y = np.clip(t * face_h, 0.5, face_h - 0.5) + face.row * face_h
        map_x[rows], map_y[rows] = x - 0.5, y - 0.5  # remap samples at pixel centres
    return (
        map_x.astype(np.float32).reshape(out_h, out_w),
        map_y.astype(np.float32).reshape(out_h, out_w),
    )


def cube_to_equirect(
    frame: npt.NDArray[np.uint8], layout: CubeLayout, *, width: int
) -> npt.NDArray[np.uint8]:
    """The equirectangular picture ``width`` x ``width / 2`` that a 3x2 cube-map ``frame``
    ((H, W) grey or (H, W, C)) holds. ``frame`` may be a scaled copy of the source frame (for
    a small output, scaling first is far cheaper than converting at full size)."""
    import cv2

    if width < 2 or width % 2:
        msg = f"`width` must be even and >= 2, got {width}"
        raise ValueError(msg)
    src_h, src_w = frame.shape[:2]
    map_x, map_y = _maps(layout, src_w, src_h, width)
    source: Any = frame
    out = cv2.remap(source, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return np.ascontiguousarray(out)
