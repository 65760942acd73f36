"""The CPU renderer: OpenCV ``remap`` of the decoded YUV planes, used when no OpenGL context
can be made (or when asked for, e.g. for bit-identical observations across machines).

Per view it remaps the Y plane at full resolution and U/V at half, then converts to RGB with the
same matrix as the GL shader, so both paths agree. Remap maps are cached: turning about the
vertical axis only shifts longitude, so the (longitude, row) grid depends on size, FOV and pitch
but not on yaw, and a yaw is one add and one modulo on it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

import cv2
import numpy as np
import numpy.typing as npt

from city360.errors import ClosedResourceError
from city360.simulator.arrows import Overlay
from city360.simulator.camera import ViewSpec, project_points, view_rays
from city360.types import Image

__all__ = ["YUV_TO_RGB", "CpuRenderer", "Planes", "yuv_to_rgb"]

Planes = tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8], npt.NDArray[np.uint8]]
"""Decoded 4:2:0 planes ``(Y, U, V)``: Y full resolution, U and V half in each direction."""

YUV_TO_RGB = np.array(
    [
        [1.164383, 0.0, 1.596027, -222.921566],
        [1.164383, -0.391762, -0.812968, 135.575295],
        [1.164383, 2.017232, 0.0, -276.835851],
    ],
    dtype=np.float32,
)
"""BT.601 limited-range YCbCr -> RGB (0..255), as an affine 3x4 matrix on (Y, U, V, 1). This is
what FFmpeg's swscale (and so PyAV's ``to_ndarray('rgb24')``) uses for untagged SD/HD video."""

_NEAR_M = 0.05
_MAX_GRIDS = 32


def yuv_to_rgb(yuv: npt.NDArray[np.uint8]) -> Image:
    """Per-pixel (H, W, 3) Y, U, V -> RGB with :data:`YUV_TO_RGB`, rounded and saturated."""
    rgb = cv2.transform(yuv, YUV_TO_RGB)
    return np.asarray(rgb, np.uint8)


def _clip_near(polygon: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Clip a convex polygon in camera coordinates to z >= near (Sutherland-Hodgman)."""
    out = []
    n = len(polygon)
    for i in range(n):
        a, b = polygon[i], polygon[(i + 1) % n]
        a_in, b_in = a[2] >= _NEAR_M, b[2] >= _NEAR_M
        if a_in:
            out.append(a)
        if a_in != b_in:
            t = (_NEAR_M - a[2]) / (b[2] - a[2])
            out.append(a + t * (b - a))
    return np.asarray(out, np.float64).reshape(-1, 3)


def _fill_triangle(image: Image, tri: npt.NDArray[np.float64], color: tuple[int, int, int]) -> None:
    """Fill the pixels whose centres lie inside a triangle given in pixel coordinates (centres
    at integers): the sampling rule of GL rasterizers, so both paths colour the same pixels
    (OpenCV's polygon fill also paints pixels the edges merely touch)."""
    (x0, y0), (x1, y1), (x2, y2) = tri
    area = (x1 - x0) * (y2 - y0) - (y1 - y0) * (x2 - x0)
    if abs(area) < 1e-12:
        return
    if area < 0:
        (x1, y1), (x2, y2) = (x2, y2), (x1, y1)
    height, width = image.shape[:2]
    left = max(int(np.ceil(min(x0, x1, x2))), 0)
    right = min(int(np.floor(max(x0, x1, x2))), width - 1)
    top = max(int(np.ceil(min(y0, y1, y2))), 0)
    bottom = min(int(np.floor(max(y0, y1, y2))), height - 1)
    if left > right or top > bottom:
        return
    xs = np.arange(left, right + 1, dtype=np.float64)[None, :]
    ys = np.arange(top, bottom + 1, dtype=np.float64)[:, None]
    inside = np.ones((bottom - top + 1, right - left + 1), dtype=bool)
    for (ax, ay), (bx, by) in (((x0, y0), (x1, y1)), ((x1, y1), (x2, y2)), ((x2, y2), (x0, y0))):
        inside &= (xs - ax) * (by - ay) - (ys - ay) * (bx - ax) <= 0
    image[top : bottom + 1, left : right + 1][inside] = color


def draw_overlay(image: Image, overlay: Overlay, spec: ViewSpec) -> None:
    """Fill ``overlay``'s triangles into ``image`` in place (no anti-aliasing, like the GL
    path), clipping at the near plane."""
    if overlay.triangle_count == 0:
        return
    cam, _ = project_points(overlay.vertices.astype(np.float64), spec)
    tx, ty = spec.tan_half
    for t in range(overlay.triangle_count):
        poly = _clip_near(cam[3 * t : 3 * t + 3])
        if len(poly) < 3:
            continue
        px = (poly[:, 0] / poly[:, 2] / tx + 1) / 2 * spec.width - 0.5
        py = (1 - poly[:, 1] / poly[:, 2] / ty) / 2 * spec.height - 0.5
        pixels = np.stack([px, py], axis=-1)
        color = (
            int(overlay.colors[3 * t][0]),
            int(overlay.colors[3 * t][1]),
            int(overlay.colors[3 * t][2]),
        )
        for i in range(1, len(pixels) - 1):  # the clipped polygon is convex: a fan
            _fill_triangle(image, pixels[[0, i, i + 1]], color)


class CpuRenderer:
    """Equirect YUV planes -> perspective RGB view with ``cv2.remap``; a context manager."""

    name = "cpu"

    def __init__(self) -> None:
        self._grids: OrderedDict[Hashable, tuple[npt.NDArray[np.float32], ...]] = OrderedDict()
        self._closed = False

    def __repr__(self) -> str:
        return f"CpuRenderer(cached_grids={len(self._grids)})"

    def __enter__(self) -> CpuRenderer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._grids.clear()
        self._closed = True

    def _grid(self, spec: ViewSpec, src_w: int, src_h: int) -> tuple[npt.NDArray[np.float32], ...]:
        """Cached per (view size, FOV, pitch, source size): the column maps at yaw 0 for Y and
        chroma, and the row maps for Y and chroma."""
        key = (spec.width, spec.height, spec.fov_deg, spec.pitch_deg, src_w, src_h)
        grid = self._grids.get(key)
        if grid is not None:
            self._grids.move_to_end(key)
            return grid
        lon, lat = view_rays(spec.width, spec.height, spec.fov_deg, spec.pitch_deg)
        col = (lon / 360.0 + 0.5) * src_w - 0.5
        col_c = (col + 0.5) / 2 - 0.5
        row = np.clip((0.5 - lat / 180.0) * src_h - 0.5, 0.0, src_h - 1.0)
        row_c = np.clip((row + 0.5) / 2 - 0.5, 0.0, src_h // 2 - 1.0)
        grid = (
            col.astype(np.float32),
            col_c.astype(np.float32),
            row.astype(np.float32),
            row_c.astype(np.float32),
        )
        self._grids[key] = grid
        if len(self._grids) > _MAX_GRIDS:
            self._grids.popitem(last=False)
        return grid

    def render(
        self, frame_key: Hashable, planes: Planes, spec: ViewSpec, overlay: Overlay | None = None
    ) -> Image:
        """Render one view of the frame ``planes`` (``frame_key`` is unused here; the GL path
        uses it to skip re-uploading a frame it already holds)."""
        if self._closed:
            msg = "CpuRenderer is closed"
            raise ClosedResourceError(msg)
        y_plane, u_plane, v_plane = planes
        src_h, src_w = y_plane.shape
        col, col_c, row, row_c = self._grid(spec, src_w, src_h)
        # BORDER_WRAP wraps any column, so a yaw is one add (shifts stay within one turn, far
        # inside the int16 range remap converts coordinates to)
        turns = (spec.relative_yaw_deg / 360.0 + 0.5) % 1.0 - 0.5
        map_x = col + np.float32(turns * src_w)
        map_xc = col_c + np.float32(turns * src_w / 2)
        y = cv2.remap(y_plane, map_x, row, cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP)
        u = cv2.remap(u_plane, map_xc, row_c, cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP)
        v = cv2.remap(v_plane, map_xc, row_c, cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP)
        image = yuv_to_rgb(np.asarray(cv2.merge([y, u, v]), np.uint8))
        if overlay is not None:
            draw_overlay(image, overlay, spec)
        return image
