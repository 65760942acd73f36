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
import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from city360.errors import ConfigError, GpsError
from city360.video_store.clean import SmoothTrack
from city360.video_store.decode import VideoInfo
from city360.video_store.gps.track import GpsTrack
from city360.video_store.motion import MotionSignal

__all__ = [
    "DEFAULT_SEARCH_S",
    "MIN_MATCH_SCORE",
    "TRACK_START_SLACK_S",
    "WEAK_MATCH_SCORE",
    "SyncResult",
    "TrackStartSyncWarning",
    "WeakSyncWarning",
    "estimate_offset",
    "resolve_sync",
]


MIN_MATCH_SCORE = 0.2
"""An ``--offset auto`` match scoring below this is refused (the walk has too few turns)."""
WEAK_MATCH_SCORE = 0.5
"""An ``--offset auto`` match scoring at least :data:`MIN_MATCH_SCORE` but below this is used
with a :class:`WeakSyncWarning`. The right lag of a walk with turns scores near 1 (0.98 on the
test walk 2 s off); the rooftop clip, which does not move, against a track invented for it
scored 0.28."""


class WeakSyncWarning(UserWarning):
    """``--offset auto`` chose a lag whose match is poor: the offset may be wrong."""


class TrackStartSyncWarning(UserWarning):
    """A video without a creation time was placed at the start of a track much longer than
    it: if the video was filmed later in the walk, its poses are another stretch's."""


TRACK_START_SLACK_S = 30.0
"""How much longer than its video a track may be before placing the video at the track's
start (it has no creation time) is warned about, seconds: a logger started a little early."""


FloatArray = npt.NDArray[np.float64]
SyncMethod = Literal["creation_time", "embedded", "given", "auto", "track_start"]


@dataclass(frozen=True, slots=True)
class SyncResult:
    """How video time maps to GPS time: ``gps_t = video_start_gps + video_t``."""

    video_start_gps: float
    offset_s: float
    method: SyncMethod
    score: float | None = None
    """Peak normalised cross-correlation of the auto estimate (1 = perfect), else None."""


def _ncc(a: FloatArray, b: FloatArray) -> float:
    a = a - a.mean()
    b = b - b.mean()
    denom = math.sqrt(float((a * a).sum() * (b * b).sum()))
    return float((a * b).sum() / denom) if denom > 1e-12 else 0.0


def _lag_score(
    lag: float,
    motion_t: FloatArray,
    visual_yaw: FloatArray,
    change: FloatArray,
    smooth: SmoothTrack,
    base_gps: float,
    *,
    use_speed: bool,
    window_samples: float,
) -> float:
    """How well the track at ``lag`` explains the video's motion, in [-1, 1] (see below),
    over the whole video: the agreement inside the track times the share of the video inside
    it. Scored over the overlap alone, a lag that slid a long stop or a straight stretch along
    a track that covers just the video matched a third of it perfectly and won by minutes."""
    from scipy.ndimage import gaussian_filter1d

    gps_t = base_gps + lag + motion_t
    inside = (gps_t >= smooth.start_s) & (gps_t <= smooth.end_s)
    if inside.sum() < max(10, 0.3 * motion_t.shape[0]):
        return -math.inf
    heading = np.interp(gps_t, smooth.t_s, smooth.heading_deg)
    speed = np.interp(gps_t, smooth.t_s, smooth.speed_mps)
    weight = np.clip(speed, 0.0, 1.0) * inside
    if weight.sum() < 5:
        return -math.inf
    # heading = visual yaw + a slowly varying constant: remove that constant (a windowed
    # circular mean) and score the agreement that is left
    diff = np.radians(heading - visual_yaw)
    real = gaussian_filter1d(weight * np.cos(diff), window_samples, mode="nearest")
    imag = gaussian_filter1d(weight * np.sin(diff), window_samples, mode="nearest")
    residual = diff - np.arctan2(imag, real)
    share = float(inside.mean())
    if use_speed:
        return _ncc(change[inside[1:]], speed[1:][inside[1:]]) * share
    return float((weight * np.cos(residual)).sum() / weight.sum()) * share


DEFAULT_SEARCH_S = 600.0
"""How far ``--offset auto`` searches each way, seconds: camera clocks set by hand or never set
are often minutes off (a GPS logger started before the camera, a clock on another time zone
is a whole-hour offset and is better given with ``--offset``)."""

_COARSE_STEP_S = 1.0
"""Lag step of the first, wide scan (on the motion signal thinned to about 2 Hz), seconds."""
_CANDIDATES = 5
"""How many of the wide scan's best local maxima are refined."""


def _local_maxima(scores: FloatArray, count: int) -> list[int]:
    """Indices of the ``count`` highest finite local maxima of ``scores``."""
    finite = np.isfinite(scores)
    padded = np.concatenate([[-np.inf], np.where(finite, scores, -np.inf), [-np.inf]])
    peaks = np.flatnonzero(finite & (padded[1:-1] >= padded[:-2]) & (padded[1:-1] >= padded[2:]))
    ranked = peaks[np.argsort(-scores[peaks], kind="stable")]
    return [int(i) for i in ranked[:count]]


def estimate_offset(
    motion: MotionSignal,
    smooth: SmoothTrack,
    base_gps: float,
    *,
    search_s: float = DEFAULT_SEARCH_S,
    window_s: float = 20.0,
) -> tuple[float, float]:
    """``(offset_s, score)``: the lag in ``[-search_s, search_s]`` that best aligns the video's
    motion with the track.

    The camera's yaw (from the pictures, precise but with an unknown zero) must follow the
    track's heading: at the right lag every turn of the walk lines up, so the heading minus
    the yaw is constant apart from a slow drift. A walk without turns is matched by speed
    against picture change instead. Coarse to fine, so that minutes cost little more than
    seconds: a wide scan every 1 s on the motion thinned to ~2 Hz, its best few peaks
    rescanned every 0.2 s at full rate, the best of those refined every 0.02 s.
    """
    if motion.t_s.shape[0] < 11:
        msg = "video too short to estimate the clock offset from motion; pass --offset SECONDS"
        raise GpsError(msg)
    if not (search_s > 0 and math.isfinite(search_s)):
        msg = f"`search_s` must be > 0 seconds, got {search_s}"
        raise ConfigError(msg)
    t = motion.t_s
    steps = np.diff(motion.yaw_deg)
    steps = np.where(np.abs(steps) > 120.0 * np.diff(t), 0.0, steps)  # ambiguous matches
    visual_yaw = np.concatenate([[0.0], np.cumsum(steps)])
    change = motion.change_rate
    # turns pin the offset far better than speed does; speed against picture change is the
    # fallback for a straight walk whose speed varies
    headings = np.interp(
        np.arange(smooth.start_s, smooth.end_s, 0.5), smooth.t_s, smooth.heading_deg
    )
    use_speed = float(np.ptp(headings)) < 30.0 and float(np.std(change)) > 1e-6
    rate_hz = (t.shape[0] - 1) / max(float(t[-1] - t[0]), 1e-9)
    thin = max(1, round(rate_hz / 2.0))

    def score(lag: float, *, stride: int = 1) -> float:
        if stride == 1:
            return _lag_score(
                lag, t, visual_yaw, change, smooth, base_gps,
                use_speed=use_speed, window_samples=window_s * rate_hz,
            )  # fmt: skip
        # thinning the change signal keeps its mean rate; yaw is cumulative, so it thins exactly
        sub_change = change[: (change.shape[0] // stride) * stride].reshape(-1, stride).mean(1)
        sub_t = t[::stride][: sub_change.shape[0] + 1]
        return _lag_score(
            lag, sub_t, visual_yaw[::stride][: sub_t.shape[0]], sub_change, smooth, base_gps,
            use_speed=use_speed, window_samples=window_s * rate_hz / stride,
        )  # fmt: skip

    if search_s > 30.0 and thin > 1:
        wide = np.arange(-search_s, search_s + 1e-9, _COARSE_STEP_S)
        wide_scores = np.array([score(lag, stride=thin) for lag in wide])
        centres = [float(wide[i]) for i in _local_maxima(wide_scores, _CANDIDATES)]
        coarse = np.unique(
            np.concatenate([np.arange(c - 1.5, c + 1.5 + 1e-9, 0.2) for c in centres])
            if centres
            else np.zeros(0)
        )
    else:
        coarse = np.arange(-search_s, search_s + 1e-9, 0.2)
    coarse_scores = np.array([score(lag) for lag in coarse]) if coarse.size else np.zeros(0)
    best = int(np.argmax(coarse_scores)) if coarse.size else 0
    if not coarse.size or not math.isfinite(coarse_scores[best]):
        msg = (
            "GPS track and video overlap too little to estimate the clock offset within "
            f"±{search_s:g} s; pass --offset SECONDS"
        )
        raise GpsError(msg)
    fine = np.arange(coarse[best] - 0.3, coarse[best] + 0.3 + 1e-9, 0.02)
    fine_scores = np.array([score(lag) for lag in fine])
    k = int(np.argmax(fine_scores))
    offset = float(fine[k])
    if 0 < k < fine.shape[0] - 1:
        left, mid, right = fine_scores[k - 1 : k + 2]
        denom = left - 2 * mid + right
        # a neighbour outside the overlap scores -inf: no parabola through it (inf/inf = NaN)
        if math.isfinite(left) and math.isfinite(right) and abs(denom) > 1e-12:
            offset += float(0.5 * (left - right) / denom) * 0.02
    return offset, float(fine_scores[k])


def _warn_if_track_is_longer(track: GpsTrack, info: VideoInfo) -> None:
    times = track.t_s[np.isfinite(track.t_s)]
    span_s = float(times.max() - times.min())
    if span_s <= info.duration_s + TRACK_START_SLACK_S:
        return
    msg = (
        f"{info.path} has no creation time, so it is placed at the start of GPS track "
        f"{track.source}, which runs {span_s:.0f} s against the video's {info.duration_s:.0f} s; "
        "if the video was filmed later in the track, pass --offset SECONDS (seconds from the "
        "track's first fix to the video's start) or --offset auto"
    )
    warnings.warn(msg, TrackStartSyncWarning, stacklevel=3)


def iso_utc(t_s: float) -> str:
    """POSIX seconds as ISO 8601 UTC to the second, as errors about clocks show times."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(t_s, tz=UTC).isoformat(timespec="seconds")


def _how_far(seconds: float) -> str:
    """A gap between clocks in the unit a person reads it in: days, hours or seconds."""
    gap = abs(seconds)
    if gap >= 2 * 86400:
        return f"{gap / 86400:.0f} days"
    if gap >= 3600:
        return f"{gap / 3600:.1f} h"
    return f"{gap:.0f} s"


def _refuse_auto_out_of_reach(
    track: GpsTrack, info: VideoInfo, smooth: SmoothTrack, base: float, method: str, search_s: float
) -> None:
    """``--offset auto`` searches ``search_s`` around the video's own clock; a track wholly
    outside that reach cannot be matched, so say where each lies and the offset that puts the
    video's start at the track's first fix, before the motion search fails with less."""
    video_to = base + info.duration_s
    if smooth.end_s >= base - search_s and smooth.start_s <= video_to + search_s:
        return
    side = "after" if smooth.start_s > video_to else "before"
    clock = {"creation_time": "its creation time", "embedded": "its embedded GPS clock"}.get(
        method, "the track's first fix"
    )
    msg = (
        f"--offset auto searches ±{search_s:g} s around the video's clock, but GPS track "
        f"{track.source} ({iso_utc(smooth.start_s)} .. {iso_utc(smooth.end_s)}) starts "
        f"{_how_far(smooth.start_s - base)} {side} video {info.path} ({iso_utc(base)} .. "
        f"{iso_utc(video_to)}, from {clock}): pair the right files, or pass --offset SECONDS "
        f"(GPS time minus video time; --offset {smooth.start_s - base:+.0f} puts the video's "
        "start at the track's first fix)"
    )
    raise GpsError(msg)


def resolve_sync(
    track: GpsTrack,
    info: VideoInfo,
    offset: float | Literal["auto"] | None,
    *,
    smooth: SmoothTrack,
    motion: MotionSignal | None = None,
    search_s: float = DEFAULT_SEARCH_S,
    min_score: float = MIN_MATCH_SCORE,
) -> SyncResult:
    """Decide where the video starts on the GPS clock.

    ``offset``: None (trust the clocks: embedded track reference, else creation time, else
    the track's first fix, warned about (:class:`TrackStartSyncWarning`) when the track is much
    longer than the video), a number of seconds, or ``"auto"`` (needs ``motion``). An auto
    match below ``min_score`` is a :class:`GpsError`; one below :data:`WEAK_MATCH_SCORE` is
    used and warned about (:class:`WeakSyncWarning`).
    """
    if track.video_start_utc is not None:
        base, method = track.video_start_utc, "embedded"
    elif info.creation_time_utc is not None:
        base, method = info.creation_time_utc, "creation_time"
    else:
        base, method = float(track.t_s[np.isfinite(track.t_s)].min()), "track_start"
    if offset is None:
        if method == "track_start":
            _warn_if_track_is_longer(track, info)
        return SyncResult(base, 0.0, method)  # type: ignore[arg-type]
    if offset == "auto":
        if motion is None:
            msg = "offset 'auto' needs the video's motion signal"
            raise ConfigError(msg)
        _refuse_auto_out_of_reach(track, info, smooth, base, method, search_s)
        found, score = estimate_offset(motion, smooth, base, search_s=search_s)
        if score < min_score:
            msg = (
                f"cannot estimate the clock offset of {info.path} from motion (best match "
                f"{score:.2f} at {found:+.2f} s is too weak: the walk has too few turns); "
                "pass --offset SECONDS"
            )
            raise GpsError(msg)
        if score < WEAK_MATCH_SCORE:
            msg = (
                f"{info.path}: the clock offset from motion, {found:+.2f} s, is a weak match "
                f"({score:.2f}, below {WEAK_MATCH_SCORE}) and may be wrong (is the track this "
                "video's?); if you know the offset, pass --offset SECONDS"
            )
            warnings.warn(msg, WeakSyncWarning, stacklevel=2)
        return SyncResult(base + found, found, "auto", score)
    value = float(offset)
    if not math.isfinite(value):
        msg = f"`offset` must be a finite number of seconds or 'auto', got {offset!r}"
        raise ConfigError(msg)
    return SyncResult(base + value, value, "given")
