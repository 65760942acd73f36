"""Travel heading from GPS and the pictures together.

GPS heading is noisy (3 m of noise over 1.4 m between fixes is tens of degrees) and smoothing
it rounds every corner; the picture's yaw (:mod:`.motion`) is precise from frame to frame but
its absolute direction is unknown and it drifts slowly. So: heading = visual yaw + a slowly
varying correction, the correction being the speed-weighted circular mean of
``GPS heading - visual yaw`` over a Gaussian window of ``window_s`` seconds, or of
``window_m`` metres at the camera's usual moving speed when that is shorter. The camera is
assumed to face along travel (``camera_yaw_offset_deg = 0``).

Why a window in metres for a fast camera: the yaw drifts where the camera turns (phase
correlation on the 256 px band reads turns of 0.5-2 degrees a step 10-40 % short, measured on
filmed twins), so the drift is tied to the path, and the GPS heading gets better with the
distance between fixes. 20 s is 28 m for a walker but 170 m for a car at 30 km/h, over which
the correction lagged the drift by 10-15 degrees (filmed sf-route twin, seed 2, 10 fps: aided
frame poses 3.7 m RMSE against 2.2 m for the GPS-only smoothing). A walker (up to
``window_m / window_s`` = 2 m/s) keeps the 20 s window exactly.

When the video has too little texture to measure yaw, or the result disagrees with GPS, the
smoothed GPS heading is kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from city360.video_store.clean import SmoothTrack
from city360.video_store.motion import MotionSignal
from city360.video_store.sync import SyncResult

__all__ = ["HeadingFusion", "fuse_heading"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class HeadingFusion:
    """Headings at the requested times (degrees in [0, 360)) and how they were made."""

    heading_deg: FloatArray
    visual: bool
    residual_deg: float
    """Median |GPS heading - fused heading| while moving, degrees."""
    dense_t_s: FloatArray | None = None
    """Video times of the motion samples, and the fused heading there (unwrapped degrees),
    when ``visual``."""
    dense_heading_deg: FloatArray | None = None


WINDOW_M = 40.0
"""Longest heading-correction window in metres at the usual moving speed (module docstring);
with the 20 s default, cameras faster than 2 m/s get a shorter window."""


def _wrap180(angle: FloatArray) -> FloatArray:
    return np.asarray(np.mod(angle + 180.0, 360.0) - 180.0, np.float64)


def fuse_heading(
    t_video_s: FloatArray,
    motion: MotionSignal | None,
    smooth: SmoothTrack,
    sync: SyncResult,
    *,
    window_s: float = 20.0,
    window_m: float | None = WINDOW_M,
    min_confidence: float = 0.05,
    min_speed_mps: float = 0.3,
    max_residual_deg: float = 25.0,
    max_rate_dps: float = 120.0,
) -> HeadingFusion:
    """Heading at video times ``t_video_s`` (see the module docstring). ``window_m``: the
    correction's window in metres at the median moving speed, used when shorter than
    ``window_s``; None: always ``window_s``."""
    from scipy.ndimage import gaussian_filter1d

    gps_heading = smooth.sample(sync.video_start_gps + t_video_s)[2]
    if motion is None or motion.t_s.shape[0] < 3:
        return HeadingFusion(gps_heading, False, float("nan"))
    t = motion.t_s
    gps_t = sync.video_start_gps + t
    track_heading = np.interp(gps_t, smooth.t_s, smooth.heading_deg)  # unwrapped
    speed = np.interp(gps_t, smooth.t_s, smooth.speed_mps)
    inside = (gps_t >= smooth.start_s) & (gps_t <= smooth.end_s)
    # an untrusted step: take the track's turn for it instead
    weak = motion.untrusted_steps(min_confidence, max_rate_dps)
    steps = np.where(weak, np.diff(track_heading), np.diff(motion.yaw_deg))
    visual = np.concatenate([[0.0], np.cumsum(steps)])
    weight = np.clip(speed / 1.0, 0.0, 1.0) * (speed >= min_speed_mps) * inside
    if weight.sum() < 1.0:
        return HeadingFusion(gps_heading, False, float("nan"))
    correction = np.radians(_wrap180(track_heading - visual))
    window = window_s
    if window_m is not None:
        window = min(window_s, window_m / max(float(np.median(speed[weight > 0])), 1e-9))
    sigma = window * (t.shape[0] - 1) / max(t[-1] - t[0], 1e-9)
    real = gaussian_filter1d(weight * np.cos(correction), sigma, mode="nearest")
    imag = gaussian_filter1d(weight * np.sin(correction), sigma, mode="nearest")
    smooth_correction = np.degrees(np.unwrap(np.arctan2(imag, real)))
    fused_dense = visual + smooth_correction
    moving = weight > 0
    residual = float(np.median(np.abs(_wrap180(track_heading[moving] - fused_dense[moving]))))
    if residual > max_residual_deg or float(np.mean(weak)) > 0.5:
        return HeadingFusion(gps_heading, False, residual)
    fused = np.mod(np.interp(t_video_s, t, fused_dense), 360.0)
    return HeadingFusion(fused, True, residual, t, fused_dense)
