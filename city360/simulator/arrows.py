"""Overlays drawn in 3D on the ground: branch arrows and the route-guidance ribbon.

Both are flat triangles on the ground plane (``y = -camera_height_m`` in the camera-centred
world frame of :mod:`city360.simulator.camera`), so they shrink with distance and turn with the
view like painted road markings. Arrows are pure red and carry no text: agents are told "the
offered branches are shown as red arrows".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "ARROW_RGB",
    "ROUTE_RGB",
    "Overlay",
    "arrow_triangles",
    "route_triangles",
]

ARROW_RGB = (255, 0, 0)
ROUTE_RGB = (0, 200, 255)

ARROW_START_M = 3.0
"""Distance from the camera where an arrow's tail begins (ground hidden closer at 90° FOV)."""
ARROW_SHAFT_M = 2.5
ARROW_HEAD_M = 2.0
ARROW_SHAFT_HALF_WIDTH_M = 0.35
ARROW_HEAD_HALF_WIDTH_M = 1.0
ROUTE_HALF_WIDTH_M = 0.25


@dataclass(frozen=True, slots=True)
class Overlay:
    """Triangles to draw: ``vertices`` (N*3, 3) world metres, ``colors`` (N*3, 3) uint8 RGB."""

    vertices: npt.NDArray[np.float32]
    colors: npt.NDArray[np.uint8]

    @property
    def triangle_count(self) -> int:
        return int(self.vertices.shape[0] // 3)

    @staticmethod
    def empty() -> Overlay:
        return Overlay(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.uint8))

    def __add__(self, other: Overlay) -> Overlay:
        return Overlay(
            np.concatenate([self.vertices, other.vertices]),
            np.concatenate([self.colors, other.colors]),
        )


def _ground(
    along_m: npt.NDArray[np.float64],
    across_m: npt.NDArray[np.float64],
    bearing_deg: float,
    height_m: float,
) -> npt.NDArray[np.float64]:
    b = math.radians(bearing_deg)
    forward = np.array([math.sin(b), math.cos(b)])
    right = np.array([math.cos(b), -math.sin(b)])
    xz = along_m[:, None] * forward + across_m[:, None] * right
    return np.stack([xz[:, 0], np.full(len(xz), -height_m), xz[:, 1]], axis=-1)


def arrow_triangles(bearings_deg: list[float], *, camera_height_m: float) -> Overlay:
    """One red arrow per bearing (degrees clockwise from north), pointing away from the camera
    along it: a shaft (two triangles) and a head (one)."""
    if not bearings_deg:
        return Overlay.empty()
    s0, s1 = ARROW_START_M, ARROW_START_M + ARROW_SHAFT_M
    tip = s1 + ARROW_HEAD_M
    w, hw = ARROW_SHAFT_HALF_WIDTH_M, ARROW_HEAD_HALF_WIDTH_M
    along = np.array([s0, s0, s1, s0, s1, s1, s1, s1, tip])
    across = np.array([-w, w, w, -w, w, -w, -hw, hw, 0.0])
    vertices = [_ground(along, across, b, camera_height_m) for b in bearings_deg]
    stacked = np.concatenate(vertices).astype(np.float32)
    colors = np.tile(np.array(ARROW_RGB, np.uint8), (len(stacked), 1))
    return Overlay(stacked, colors)


def route_triangles(
    east_m: npt.NDArray[np.float64],
    north_m: npt.NDArray[np.float64],
    *,
    camera_height_m: float,
    start_m: float = 1.0,
) -> Overlay:
    """A ribbon along a polyline of ground points given relative to the camera (metres east
    and north), skipping the first ``start_m`` metres (under the camera)."""
    if len(east_m) < 2:
        return Overlay.empty()
    dist = np.hypot(east_m, north_m)
    keep = dist >= start_m
    first = int(np.argmax(keep)) if keep.any() else len(dist)
    east_m, north_m = east_m[first:], north_m[first:]
    if len(east_m) < 2:
        return Overlay.empty()
    triangles = []
    for i in range(len(east_m) - 1):
        dx, dy = east_m[i + 1] - east_m[i], north_m[i + 1] - north_m[i]
        norm = math.hypot(dx, dy)
        if norm < 1e-6:
            continue
        rx, ry = dy / norm * ROUTE_HALF_WIDTH_M, -dx / norm * ROUTE_HALF_WIDTH_M
        a = (east_m[i] - rx, north_m[i] - ry)
        b = (east_m[i] + rx, north_m[i] + ry)
        c = (east_m[i + 1] + rx, north_m[i + 1] + ry)
        d = (east_m[i + 1] - rx, north_m[i + 1] - ry)
        triangles.extend([a, b, c, a, c, d])
    if not triangles:
        return Overlay.empty()
    xy = np.asarray(triangles, np.float64)
    vertices = np.stack([xy[:, 0], np.full(len(xy), -camera_height_m), xy[:, 1]], axis=-1)
    colors = np.tile(np.array(ROUTE_RGB, np.uint8), (len(vertices), 1))
    return Overlay(vertices.astype(np.float32), colors)
