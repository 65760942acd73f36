"""Pinhole view geometry shared by both renderers and the arrow overlay.

Frames (all right-handed, metres or unit vectors):

- camera: x right, y up, z forward (out of the image centre);
- world: x east, y up, z north, centred on the camera. A bearing ``b`` (degrees clockwise from
  north) is the direction ``(sin b, 0, cos b)``.

A view looks along bearing ``yaw`` tilted up by ``pitch``: ``R = Ry(yaw) @ Rx(pitch)`` turns
camera vectors into world vectors. An equirectangular frame whose centre column looks along
bearing ``c`` shows world direction ``d`` at longitude ``bearing(d) - c`` and latitude
``asin(d_y)`` (docs/contracts.md "Equirectangular frames").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["ViewSpec", "project_points", "rotation", "view_rays"]


@dataclass(frozen=True, slots=True)
class ViewSpec:
    """One perspective view: output size in pixels, horizontal FOV, absolute view bearing and
    pitch (degrees), and the bearing of the source frame's centre column (degrees)."""

    width: int
    height: int
    fov_deg: float
    yaw_deg: float
    pitch_deg: float
    frame_bearing_deg: float = 0.0

    @property
    def tan_half(self) -> tuple[float, float]:
        """tan of half the horizontal and vertical FOV (square pixels)."""
        tx = math.tan(math.radians(self.fov_deg) / 2)
        return tx, tx * self.height / self.width

    @property
    def relative_yaw_deg(self) -> float:
        """View bearing against the frame's centre column: the longitude shift in the frame."""
        return self.yaw_deg - self.frame_bearing_deg


def rotation(yaw_deg: float, pitch_deg: float) -> npt.NDArray[np.float64]:
    """Camera -> world rotation ``Ry(yaw) @ Rx(pitch)`` (yaw + right, pitch + up)."""
    y, p = math.radians(yaw_deg), math.radians(pitch_deg)
    ry = np.array([[math.cos(y), 0, math.sin(y)], [0, 1, 0], [-math.sin(y), 0, math.cos(y)]])
    rx = np.array([[1, 0, 0], [0, math.cos(p), math.sin(p)], [0, -math.sin(p), math.cos(p)]])
    return ry @ rx


def view_rays(
    width: int, height: int, fov_deg: float, pitch_deg: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Longitude and latitude (degrees) seen by every pixel centre of a view at yaw 0.

    Turning the view about the vertical axis only adds the yaw to the longitude, so this grid
    (which depends on pitch but not yaw) is what a renderer caches.
    """
    tx = math.tan(math.radians(fov_deg) / 2)
    ty = tx * height / width
    xs = ((np.arange(width) + 0.5) / width * 2 - 1) * tx
    ys = (1 - (np.arange(height) + 0.5) / height * 2) * ty
    gx, gy = np.meshgrid(xs, ys)
    rays = np.stack([gx, gy, np.ones_like(gx)], axis=-1) @ rotation(0.0, pitch_deg).T
    lon = np.degrees(np.arctan2(rays[..., 0], rays[..., 2]))
    lat = np.degrees(np.arctan2(rays[..., 1], np.hypot(rays[..., 0], rays[..., 2])))
    return lon, lat


def project_points(
    points_world: npt.NDArray[np.float64], spec: ViewSpec
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """World points (N, 3) -> camera coordinates (N, 3) and pixel coordinates (N, 2).

    Pixel coordinates put pixel centres at integers (OpenCV's convention); they are meaningful
    only where camera z > 0.
    """
    cam = points_world @ rotation(spec.yaw_deg, spec.pitch_deg)  # R^T p for row vectors
    tx, ty = spec.tan_half
    z = np.where(np.abs(cam[:, 2]) < 1e-9, 1e-9, cam[:, 2])
    px = (cam[:, 0] / z / tx + 1) / 2 * spec.width - 0.5
    py = (1 - cam[:, 1] / z / ty) / 2 * spec.height - 0.5
    return cam, np.stack([px, py], axis=-1)
