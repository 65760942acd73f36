"""The CPU renderer: OpenCV ``remap`` of the decoded YUV planes, used when no OpenGL context
can be made (or when asked for, e.g. for bit-identical observations across machines).

Per view it remaps the Y plane at full resolution and U/V at half, then converts to RGB with the
same matrix as the GL shader, so both paths agree. U and V are remapped together: OpenCV's
bilinear remap of a four-channel image costs about what one channel does (two- and
three-channel images take slower paths), so a frame rendered a second time (a rotation) has
its chroma interleaved once as (U, U, V, V) and one remap gives both, bit-identical to two.
A frame seen once (a move) is remapped plane by plane: interleaving costs about the remap it
saves. Remap maps are cached: turning about the
vertical axis only shifts longitude, so the (longitude, row) grid depends on size, FOV and pitch
but not on yaw, and a yaw is one add on it. The shifted column maps are cached too, per exact
yaw: the controller turns in fixed steps, so an agent looking around one frame meets the same
few yaws again and a rotate does no map arithmetic. The planes are remapped into buffers kept
per view size (a fresh array per plane costs page faults on every step); only the RGB image
handed out is new.

Maps stay ``float32``: OpenCV's vectorised bilinear remap takes float maps directly and was
measured faster than the same remap from ``convertMaps`` fixed-point (``CV_16SC2``) maps.
"""

from __future__ import annotations

import threading
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
_MAX_YAW_MAPS = 16
"""Shifted column maps kept (2.4 MB each for a 640x480 view): a few turns around one frame."""


def yuv_to_rgb(yuv: npt.NDArray[np.uint8]) -> Image:
    """Per-pixel (H, W, 3) Y, U, V -> RGB with :data:`YUV_TO_RGB`, rounded and saturated; a new
    array."""
    rgb = cv2.transform(yuv, YUV_TO_RGB)
    return np.asarray(rgb, np.uint8)


_Maps = tuple[npt.NDArray[np.float32], ...]
_Scratch = tuple[npt.NDArray[np.uint8], ...]


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
    """Equirect YUV planes -> perspective RGB view with ``cv2.remap``; a context manager.

    Calls are serialised (the remap buffers are shared), so one renderer may be used from
    several threads."""

    name = "cpu"

    def __init__(self) -> None:
        self._grids: OrderedDict[Hashable, _Maps] = OrderedDict()
        self._yaw_maps: OrderedDict[Hashable, _Maps] = OrderedDict()
        self._buffers: dict[tuple[int, int], _Scratch] = {}
        # the last frame's interleaved chroma, with what identifies it and its planes (held so
        # their memory, which the identity includes, cannot be reused by another frame)
        self._chroma: tuple[Hashable, npt.NDArray[np.uint8] | None, Planes, bool] | None = None
        self._lock = threading.Lock()
        self._closed = False

    def __repr__(self) -> str:
        return f"CpuRenderer(cached_grids={len(self._grids)}, cached_yaws={len(self._yaw_maps)})"

    def __enter__(self) -> CpuRenderer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._grids.clear()
            self._yaw_maps.clear()
            self._buffers.clear()
            self._chroma = None
            self._closed = True

    def _grid(self, spec: ViewSpec, src_w: int, src_h: int) -> _Maps:
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

    def _maps(self, spec: ViewSpec, src_w: int, src_h: int) -> _Maps:
        """``(map_x, map_xc, row, row_c)`` for this view: the grid's column maps shifted by the
        view's yaw in the frame, cached per exact yaw."""
        turns = (spec.relative_yaw_deg / 360.0 + 0.5) % 1.0 - 0.5
        key = (spec.width, spec.height, spec.fov_deg, spec.pitch_deg, src_w, src_h, turns)
        maps = self._yaw_maps.get(key)
        if maps is not None:
            self._yaw_maps.move_to_end(key)
            return maps
        col, col_c, row, row_c = self._grid(spec, src_w, src_h)
        # BORDER_WRAP wraps any column, so a yaw is one add (shifts stay within one turn, far
        # inside the int16 range remap converts coordinates to)
        maps = (col + np.float32(turns * src_w), col_c + np.float32(turns * src_w / 2), row, row_c)
        self._yaw_maps[key] = maps
        if len(self._yaw_maps) > _MAX_YAW_MAPS:
            self._yaw_maps.popitem(last=False)
        return maps

    def _scratch(self, width: int, height: int) -> _Scratch:
        """Reused buffers for one view size: the remapped Y, U, V (H, W), the remapped
        interleaved chroma (H, W, 4) and the (H, W, 3) Y, U, V image made of them."""
        scratch = self._buffers.get((width, height))
        if scratch is None:
            y, u, v = (np.empty((height, width), np.uint8) for _ in range(3))
            yuuv = np.empty((height, width, 4), np.uint8)
            scratch = (y, u, v, yuuv, np.empty((height, width, 3), np.uint8))
            self._buffers[(width, height)] = scratch
        return scratch

    def _interleaved_chroma(
        self, frame_key: Hashable, planes: Planes
    ) -> npt.NDArray[np.uint8] | None:
        """The frame's U and V as one (H/2, W/2, 4) image (U, U, V, V) when this frame was
        rendered before (made on its second render, then reused); None on its first."""
        _, u_plane, v_plane = planes
        identity = (
            frame_key,
            u_plane.shape,
            u_plane.__array_interface__["data"][0],
            v_plane.__array_interface__["data"][0],
        )
        last = self._chroma
        if last is None or last[0] != identity:
            # keep the buffer for the next frame; hold the planes so that their memory, which
            # the identity includes, cannot be reused by another frame
            self._chroma = (identity, None if last is None else last[1], planes, False)
            return None
        buffer, ready = last[1], last[3]
        if not ready:
            if buffer is None or buffer.shape[:2] != u_plane.shape:
                buffer = np.empty((*u_plane.shape, 4), np.uint8)
            cv2.merge([u_plane, u_plane, v_plane, v_plane], dst=buffer)
            self._chroma = (identity, buffer, planes, True)
        return buffer

    def render(
        self, frame_key: Hashable, planes: Planes, spec: ViewSpec, overlay: Overlay | None = None
    ) -> Image:
        """Render one view of the frame ``planes``; ``frame_key`` identifies them, so a frame
        rendered again (a rotation) reuses its interleaved chroma, as the GL path reuses the
        textures it uploaded."""
        with self._lock:
            if self._closed:
                msg = "CpuRenderer is closed"
                raise ClosedResourceError(msg)
            y_plane = planes[0]
            src_h, src_w = y_plane.shape
            map_x, map_xc, row, row_c = self._maps(spec, src_w, src_h)
            chroma = self._interleaved_chroma(frame_key, planes)
            y, u, v, yuuv, yuv = self._scratch(spec.width, spec.height)
            linear, wrap = cv2.INTER_LINEAR, cv2.BORDER_WRAP
            cv2.remap(y_plane, map_x, row, linear, dst=y, borderMode=wrap)
            if chroma is None:
                cv2.remap(planes[1], map_xc, row_c, linear, dst=u, borderMode=wrap)
                cv2.remap(planes[2], map_xc, row_c, linear, dst=v, borderMode=wrap)
                cv2.merge([y, u, v], dst=yuv)
            else:
                cv2.remap(chroma, map_xc, row_c, linear, dst=yuuv, borderMode=wrap)
                yuuv[..., 0] = y  # (Y, U, V, V): dropping the last channel leaves Y, U, V
                cv2.cvtColor(yuuv, cv2.COLOR_RGBA2RGB, dst=yuv)
            image = yuv_to_rgb(yuv)
        if overlay is not None:
            draw_overlay(image, overlay, spec)
        return image
