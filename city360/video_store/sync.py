"""Put GPS time and video time on one clock.

Convention (as ``TrajectoryMeta.clock_offset_s``): ``offset = GPS time - camera time``. The
video's first frame happened at GPS time ``video_start_gps = base + offset``, where ``base``
is the GPS time of the first frame on the camera clock: the container's creation time, or,
for tracks embedded in the video (GPMF, CAMM), the track's own reference, already on the GPS
clock.

``--offset auto`` estimates an unknown offset by matching what the camera saw with what the
GPS says: the horizontal shift of the equirectangular picture between frames is the camera's
yaw rate, which must equal the GPS track's turn rate; the picture's change between frames
grows with speed. Both signals are cross-correlated with the track's and the best lag wins.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from city360.errors import ConfigError, GpsError
from city360.video_store.clean import SmoothTrack
from city360.video_store.decode import DecodedFrame, VideoInfo
from city360.video_store.gps.track import GpsTrack

__all__ = [
    "MOTION_RATE_HZ",
    "MotionSignal",
    "SyncResult",
    "estimate_offset",
    "measure_motion",
    "resolve_sync",
    "yaw_shift_deg",
]

MOTION_RATE_HZ = 10.0
"""Rate at which visual motion is measured, Hz."""
_BAND_WIDTH = 256
_BAND_HEIGHT = 128

FloatArray = npt.NDArray[np.float64]
SyncMethod = Literal["creation_time", "embedded", "given", "auto", "track_start"]


@dataclass(frozen=True, slots=True)
class MotionSignal:
    """Visual motion of a video: ``t_s`` video seconds; ``yaw_rate_dps`` the camera's turn rate
    (degrees/s, + clockwise); ``change`` the mean absolute picture change after undoing yaw
    (grey levels per second)."""

    t_s: FloatArray
    yaw_rate_dps: FloatArray
    change: FloatArray


@dataclass(frozen=True, slots=True)
class SyncResult:
    """How video time maps to GPS time: ``gps_t = video_start_gps + video_t``."""

    video_start_gps: float
    offset_s: float
    method: SyncMethod
    score: float | None = None
    """Peak normalised cross-correlation of the auto estimate (1 = perfect), else None."""


def _band(frame: DecodedFrame) -> FloatArray:
    rgb = frame.to_rgb(width=_BAND_WIDTH)
    grey = rgb.astype(np.float64).mean(axis=2)
    h = grey.shape[0]
    # the horizon band (latitude -45..+45): sky and ground say little about motion
    return grey[h // 4 : 3 * h // 4]


def yaw_shift_deg(previous: FloatArray, current: FloatArray) -> float:
    """Camera yaw change in degrees (+ clockwise) from ``previous`` to ``current`` band.

    Phase correlation along the (circular) longitude axis, pooled over rows, with a parabolic
    sub-pixel peak. A camera turning right moves the scene left in the picture.
    """
    fa = np.fft.rfft(previous - previous.mean(axis=1, keepdims=True), axis=1)
    fb = np.fft.rfft(current - current.mean(axis=1, keepdims=True), axis=1)
    cross = (fb * np.conj(fa)).sum(axis=0)
    cross /= np.abs(cross) + 1e-9
    corr = np.fft.irfft(cross, n=previous.shape[1])
    width = corr.shape[0]
    peak = int(np.argmax(corr))
    left, mid, right = corr[(peak - 1) % width], corr[peak], corr[(peak + 1) % width]
    denom = left - 2 * mid + right
    sub = 0.5 * (left - right) / denom if abs(denom) > 1e-12 else 0.0
    shift = peak + sub
    if shift > width / 2:
        shift -= width
    return float(-shift * 360.0 / width)


def measure_motion(frames: Iterable[DecodedFrame], info: VideoInfo) -> MotionSignal:
    """Yaw rate and picture change at about :data:`MOTION_RATE_HZ` over the whole video."""
    step = max(1, round(info.fps / MOTION_RATE_HZ))
    times: list[float] = []
    yaw: list[float] = []
    change: list[float] = []
    previous: FloatArray | None = None
    previous_t = 0.0
    for frame in frames:
        if frame.index % step:
            continue
        band = _band(frame)
        if previous is not None:
            dt = frame.t_s - previous_t
            if dt > 0:
                shift = yaw_shift_deg(previous, band)
                columns = round(-shift * band.shape[1] / 360.0)
                aligned = np.roll(previous, columns, axis=1)
                times.append(0.5 * (frame.t_s + previous_t))
                yaw.append(shift / dt)
                change.append(float(np.abs(band - aligned).mean()) / dt)
        previous, previous_t = band, frame.t_s
    return MotionSignal(np.asarray(times), np.asarray(yaw), np.asarray(change))


def _ncc(a: FloatArray, b: FloatArray) -> float:
    a = a - a.mean()
    b = b - b.mean()
    denom = math.sqrt(float((a * a).sum() * (b * b).sum()))
    return float((a * b).sum() / denom) if denom > 1e-12 else 0.0


def estimate_offset(
    motion: MotionSignal,
    smooth: SmoothTrack,
    base_gps: float,
    *,
    search_s: float = 30.0,
    step_s: float = 0.05,
) -> tuple[float, float]:
    """``(offset_s, score)``: the lag in ``[-search_s, search_s]`` that best aligns the video's
    motion with the track's (turn rate, and speed against picture change)."""
    if motion.t_s.shape[0] < 10:
        msg = "video too short to estimate the clock offset from motion; pass --offset SECONDS"
        raise GpsError(msg)
    dt = 1.0 / MOTION_RATE_HZ
    grid = np.arange(smooth.start_s, smooth.end_s, dt)
    heading = np.interp(grid, smooth.t_s, smooth.heading_deg)
    turn_rate = np.gradient(heading, dt)
    speed = np.interp(grid, smooth.t_s, smooth.speed_mps)
    # turns at junctions carry the signal; clip the visual yaw so a spin in place or a
    # mis-registered frame does not dominate
    yaw = np.clip(motion.yaw_rate_dps, -120.0, 120.0)
    change = motion.change
    use_speed = float(np.std(speed)) > 0.1 and float(np.std(change)) > 1e-6
    lags = np.arange(-search_s, search_s + step_s / 2, step_s)
    scores = np.full(lags.shape[0], -np.inf)
    for k, lag in enumerate(lags):
        gps_t = base_gps + lag + motion.t_s
        inside = (gps_t >= grid[0]) & (gps_t <= grid[-1])
        if inside.sum() < max(10, 0.3 * motion.t_s.shape[0]):
            continue
        g_turn = np.interp(gps_t[inside], grid, turn_rate)
        score = _ncc(yaw[inside], g_turn)
        if use_speed:
            g_speed = np.interp(gps_t[inside], grid, speed)
            score = 0.5 * (score + _ncc(change[inside], g_speed))
        scores[k] = score
    best = int(np.argmax(scores))
    if not math.isfinite(scores[best]):
        msg = (
            "GPS track and video overlap too little to estimate the clock offset within "
            f"±{search_s:g} s; pass --offset SECONDS"
        )
        raise GpsError(msg)
    offset = float(lags[best])
    if 0 < best < lags.shape[0] - 1 and all(math.isfinite(s) for s in scores[best - 1 : best + 2]):
        left, mid, right = scores[best - 1], scores[best], scores[best + 1]
        denom = left - 2 * mid + right
        if abs(denom) > 1e-12:
            offset += float(0.5 * (left - right) / denom) * step_s
    return offset, float(scores[best])


def resolve_sync(
    track: GpsTrack,
    info: VideoInfo,
    offset: float | Literal["auto"] | None,
    *,
    smooth: SmoothTrack,
    motion: MotionSignal | None = None,
    search_s: float = 30.0,
    min_score: float = 0.2,
) -> SyncResult:
    """Decide where the video starts on the GPS clock.

    ``offset``: None (trust the clocks: embedded track reference, else creation time, else
    the track's first fix), a number of seconds, or ``"auto"`` (needs ``motion``).
    """
    if track.video_start_utc is not None:
        base, method = track.video_start_utc, "embedded"
    elif info.creation_time_utc is not None:
        base, method = info.creation_time_utc, "creation_time"
    else:
        base, method = float(track.t_s[np.isfinite(track.t_s)].min()), "track_start"
    if offset is None:
        return SyncResult(base, 0.0, method)  # type: ignore[arg-type]
    if offset == "auto":
        if motion is None:
            msg = "offset 'auto' needs the video's motion signal"
            raise ConfigError(msg)
        found, score = estimate_offset(motion, smooth, base, search_s=search_s)
        if score < min_score:
            msg = (
                f"cannot estimate the clock offset of {info.path} from motion (best match "
                f"{score:.2f} at {found:+.2f} s is too weak: the walk has too few turns); "
                "pass --offset SECONDS"
            )
            raise GpsError(msg)
        return SyncResult(base + found, found, "auto", score)
    value = float(offset)
    if not math.isfinite(value):
        msg = f"`offset` must be a finite number of seconds or 'auto', got {offset!r}"
        raise ConfigError(msg)
    return SyncResult(base + value, value, "given")
