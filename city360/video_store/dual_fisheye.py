"""Dual fisheye (two circular fisheye pictures side by side) -> one equirectangular picture.

Raw video of most two-lens 360° cameras (Insta360 ONE X/X2 ``.insv``, Ricoh Theta
dual-fisheye video, Samsung Gear 360, many action-cam 360s) holds, in one 2:1 frame, the
picture of the front lens in the left half and that of the back lens in the right half, each
a circle whose centre looks along its lens axis. Both are taken upright: the top of each
circle looks up, and each circle's columns grow to that lens's own right (for the back lens,
the camera's left).

Lens model: equidistant (``r = R * angle / (fov / 2)``: the distance from the circle's centre
is linear in the angle from the lens axis), ``fov_deg`` across the circle of radius ``R``.
Lenses see more than 180° (typically 190-200°), so a band around the camera's sides is seen
by both; there the two pictures are cross-faded by the angle from the lens axes (no
parallax correction: the lenses are ~3 cm apart, which shows as a seam only near the camera).

The conversion is a ``cv2.remap`` from maps computed once per (lens geometry, frame size,
output width). Directions: x right, y forward (the front lens), z up; equirect longitude 0 (the
centre column) looks forward and grows to the right, the top row looks straight up. See
docs/design-notes.md, "Native 360 layouts".
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from city360.errors import ConfigError
from city360.video_store.cubemap import equirect_directions

__all__ = ["DEFAULT_FISHEYE_FOV_DEG", "DualFisheye", "dual_fisheye_to_equirect"]

DEFAULT_FISHEYE_FOV_DEG = 195.0
"""Field of view across each lens's circle, degrees, unless told otherwise (consumer two-lens
cameras are rated 190-200°)."""

_MAX_FOV_DEG = 270.0


@dataclass(frozen=True, slots=True)
class DualFisheye:
    """The lens geometry of a dual-fisheye frame.

    ``fov_deg``: field of view across each lens's circle, degrees, in (180, 270].
    ``front_centre`` / ``back_centre``: the circles' centres as fractions of the frame's width
    and height (default: the middle of each half, (0.25, 0.5) and (0.75, 0.5)).
    ``radius``: the circles' radius as a fraction of the frame's height (default 0.5: each
    circle touches the top and bottom of the frame).
    """

    fov_deg: float = DEFAULT_FISHEYE_FOV_DEG
    front_centre: tuple[float, float] = (0.25, 0.5)
    back_centre: tuple[float, float] = (0.75, 0.5)
    radius: float = 0.5

    def __post_init__(self) -> None:
        if not 180.0 < self.fov_deg <= _MAX_FOV_DEG or not math.isfinite(self.fov_deg):
            msg = (
                f"fisheye `fov_deg` must be > 180 and <= {_MAX_FOV_DEG:g} (two lenses must "
                f"overlap to cover the sphere), got {self.fov_deg:g}; the camera's spec sheet "
                "gives it (190-200 for most two-lens cameras)"
            )
            raise ConfigError(msg)
        if not 0.0 < self.radius <= 1.0:
            msg = (
                "fisheye `radius` must be in (0, 1] (a fraction of the frame height), "
                f"got {self.radius:g}"
            )
            raise ConfigError(msg)
        for name, (cx, cy) in (
            ("front_centre", self.front_centre),
            ("back_centre", self.back_centre),
        ):
            if not (0.0 <= cx <= 1.0 and 0.0 <= cy <= 1.0):
                msg = (
                    f"fisheye `{name}` must be fractions of the frame in [0, 1], "
                    f"got ({cx:g}, {cy:g})"
                )
                raise ConfigError(msg)


_FORWARD = np.array([0.0, 1.0, 0.0])
_RIGHT = np.array([1.0, 0.0, 0.0])
_UP = np.array([0.0, 0.0, 1.0])


@dataclass(frozen=True, slots=True)
class _Maps:
    """Maps of the front lens's and the back lens's sample of every output pixel, and the
    back lens's weight (0 where only the front lens counts, 1 where only the back)."""

    front_x: npt.NDArray[np.float32]
    front_y: npt.NDArray[np.float32]
    back_x: npt.NDArray[np.float32]
    back_y: npt.NDArray[np.float32]
    weight: npt.NDArray[np.float32]


def _lens_samples(
    d: npt.NDArray[np.float64],
    axis: npt.NDArray[np.float64],
    right: npt.NDArray[np.float64],
    centre_px: tuple[float, float],
    radius_px: float,
    half_fov: float,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Pixel position (continuous, 0 = left/top edge) of directions ``d`` (N, 3) in one lens's
    circle, and their angle from its axis (radians)."""
    along = np.clip(d @ axis, -1.0, 1.0)
    angle = np.arccos(along)
    across_x = d @ right
    across_y = -(d @ _UP)  # rows grow downwards
    norm = np.hypot(across_x, across_y)
    norm = np.where(norm > 0.0, norm, 1.0)
    r = radius_px * angle / half_fov
    return centre_px[0] + r * across_x / norm, centre_px[1] + r * across_y / norm, angle


@functools.lru_cache(maxsize=8)
def _maps(lenses: DualFisheye, src_w: int, src_h: int, out_w: int) -> _Maps:
    out_h = out_w // 2
    d = equirect_directions(out_w, out_h).reshape(-1, 3)
    half_fov = math.radians(lenses.fov_deg) / 2.0
    radius_px = lenses.radius * src_h
    samples = []
    for axis, right, centre in (
        (_FORWARD, _RIGHT, lenses.front_centre),
        (-_FORWARD, -_RIGHT, lenses.back_centre),
    ):
        x, y, angle = _lens_samples(
            d, axis, right, (centre[0] * src_w, centre[1] * src_h), radius_px, half_fov
        )
        samples.append((x, y, angle))
    # cross-fade over the band both lenses see: 90° from the axis +- the overlap beyond 90°
    overlap = half_fov - math.pi / 2.0
    weight = np.clip((samples[0][2] - (math.pi / 2.0 - overlap)) / (2.0 * overlap), 0.0, 1.0)

    def as_map(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float32]:
        return (values - 0.5).astype(np.float32).reshape(out_h, out_w)  # pixel centres

    return _Maps(
        front_x=as_map(samples[0][0]),
        front_y=as_map(samples[0][1]),
        back_x=as_map(samples[1][0]),
        back_y=as_map(samples[1][1]),
        weight=weight.astype(np.float32).reshape(out_h, out_w),
    )


def dual_fisheye_to_equirect(
    frame: npt.NDArray[np.uint8], lenses: DualFisheye, *, width: int
) -> npt.NDArray[np.uint8]:
    """The equirectangular picture ``width`` x ``width / 2`` that a dual-fisheye ``frame``
    ((H, W) grey or (H, W, C), or a scaled copy of one) holds."""
    import cv2

    if width < 2 or width % 2:
        msg = f"`width` must be even and >= 2, got {width}"
        raise ValueError(msg)
    src_h, src_w = frame.shape[:2]
    maps = _maps(lenses, src_w, src_h, width)
    source: Any = frame
    front = cv2.remap(source, maps.front_x, maps.front_y, cv2.INTER_LINEAR,
                      borderMode=cv2.BORDER_REPLICATE)  # fmt: skip
    back = cv2.remap(source, maps.back_x, maps.back_y, cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_REPLICATE)  # fmt: skip
    weight = maps.weight if front.ndim == 2 else maps.weight[..., None]
    mixed = front.astype(np.float32) + weight * (back.astype(np.float32) - front)
    return np.ascontiguousarray(np.clip(np.rint(mixed), 0, 255).astype(np.uint8))
