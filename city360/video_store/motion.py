"""What the camera's own pictures say about its motion.

In an equirectangular frame a turn of the camera is a horizontal circular shift of the whole
picture, so phase correlation of a low-resolution horizon band between frames measures yaw
(to a fraction of a degree), independently of GPS. The change left after undoing that shift
grows with speed. Both feed the clock-offset estimate (:mod:`.sync`) and the heading fusion
(:mod:`.heading`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from city360.video_store.decode import DecodedFrame, VideoInfo

if TYPE_CHECKING:
    from city360.video_store.clean import SmoothTrack
    from city360.video_store.sync import SyncResult

__all__ = [
    "MOTION_RATE_HZ",
    "MotionMeter",
    "MotionSignal",
    "StillParams",
    "still_spans",
    "still_spans_of_walk",
    "walking_change_rate",
    "yaw_shift_deg",
]

MOTION_RATE_HZ = 10.0
"""Rate at which visual motion is measured, Hz."""
BAND_WIDTH = 256
"""Width of the downscaled equirect the motion is measured on, pixels (1.4° a pixel)."""

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class MotionSignal:
    """Visual motion sampled at ``t_s`` (video seconds, N samples).

    ``yaw_deg``: the camera's cumulative yaw since the first sample, degrees clockwise;
    ``change``: mean absolute grey-level change between consecutive samples after undoing the
    yaw (N-1); ``confidence``: phase-correlation peak of each step, 0..1 (N-1).
    """

    t_s: FloatArray
    yaw_deg: FloatArray
    change: FloatArray
    confidence: FloatArray

    @property
    def mid_t_s(self) -> FloatArray:
        return 0.5 * (self.t_s[1:] + self.t_s[:-1])

    @property
    def yaw_rate_dps(self) -> FloatArray:
        return np.diff(self.yaw_deg) / np.diff(self.t_s)

    @property
    def change_rate(self) -> FloatArray:
        return self.change / np.diff(self.t_s)

    def untrusted_steps(self, min_confidence: float, max_rate_dps: float) -> npt.NDArray[np.bool_]:
        """Yaw steps (N-1) not to trust: a phase-correlation peak under ``min_confidence``, or
        a turn faster than ``max_rate_dps`` (faster than anyone turns a camera: a mismatch,
        often the 180° ambiguity of a symmetric street)."""
        steps = np.diff(self.yaw_deg)
        return (self.confidence < min_confidence) | (
            np.abs(steps) > max_rate_dps * np.diff(self.t_s)
        )


def _phase_shift(previous: FloatArray, current: FloatArray) -> tuple[float, float]:
    """Column shift (pixels, + to the right) of ``current`` against ``previous`` and the
    correlation peak, by row-pooled 1-D phase correlation with a parabolic sub-pixel peak."""
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
    return float(shift), float(max(0.0, min(1.0, mid)))


def yaw_shift_deg(previous: FloatArray, current: FloatArray) -> tuple[float, float]:
    """``(yaw change in degrees, + clockwise; peak 0..1)`` from ``previous`` to ``current``.

    A camera turning right moves the scene left in the picture. First the whole circular band
    gives a coarse shift; then, with that undone, the shifts of the front and back quarters are
    averaged: walking forward spreads the front outwards and draws the back inwards
    symmetrically, so these two views see pure rotation, while the sides see parallax that
    would bias the estimate wherever one side of the street is nearer than the other.
    """
    width = previous.shape[1]
    coarse, peak = _phase_shift(previous, current)
    aligned = np.roll(previous, round(coarse), axis=1)
    quarter = width // 4
    taper = np.hanning(quarter)[None, :]
    fine = []
    for centre in (width // 2, 0):  # front (longitude 0), back (longitude 180)
        a = np.roll(aligned, width // 2 - centre, axis=1)[:, width // 2 - quarter // 2 :][
            :, :quarter
        ]
        b = np.roll(current, width // 2 - centre, axis=1)[:, width // 2 - quarter // 2 :][
            :, :quarter
        ]
        residual, _ = _phase_shift(a * taper, b * taper)
        if abs(residual) < quarter / 4:
            fine.append(residual)
    shift = round(coarse) + (float(np.mean(fine)) if fine else coarse - round(coarse))
    return float(-shift * 360.0 / width), peak


class MotionMeter:
    """Feed decoded frames in order (:meth:`add`); read the :class:`MotionSignal` at the end.

    Only about :data:`MOTION_RATE_HZ` frames a second are looked at, each scaled down to
    :data:`BAND_WIDTH` pixels, so this costs little beside decoding.
    """

    def __init__(self, info: VideoInfo) -> None:
        self._step = max(1, round(info.fps / MOTION_RATE_HZ))
        self._times: list[float] = []
        self._yaw: list[float] = [0.0]
        self._change: list[float] = []
        self._confidence: list[float] = []
        self._previous: FloatArray | None = None
        self._scaler: Any = None

    def add(self, frame: DecodedFrame) -> None:
        if frame.index % self._step:
            return
        if self._scaler is None:
            from av.video.reformatter import VideoReformatter

            self._scaler = VideoReformatter()
        grey = frame.to_gray(width=BAND_WIDTH, scaler=self._scaler).astype(np.float64)
        h = grey.shape[0]
        band = grey[h // 4 : 3 * h // 4]  # latitude -45..45: sky and ground say little
        if self._previous is not None:
            shift, peak = yaw_shift_deg(self._previous, band)
            columns = round(-shift * band.shape[1] / 360.0)
            aligned = np.roll(self._previous, columns, axis=1)
            self._yaw.append(self._yaw[-1] + shift)
            self._change.append(float(np.abs(band - aligned).mean()))
            self._confidence.append(peak)
        self._times.append(frame.t_s)
        self._previous = band

    def result(self) -> MotionSignal:
        n = len(self._times)
        return MotionSignal(
            np.asarray(self._times, np.float64),
            np.asarray(self._yaw[:n], np.float64),
            np.asarray(self._change, np.float64),
            np.asarray(self._confidence, np.float64),
        )


@dataclass(frozen=True, slots=True)
class StillParams:
    """When the picture says the camera stands still (:func:`still_spans_of_walk`)."""

    ratio: float = 0.25
    """Still: the picture changes less than this share of its rate while walking."""
    min_s: float = 1.5
    """Shortest still span, seconds."""
    blip_s: float = 1.0
    """Still stretches at most this far apart are one span, seconds: a camera turned in the
    hand or a passer-by changes the picture for a sample or two, in which a walker gets no
    further than a step. 0 keeps every blip (the rule before round thirty-five)."""
    walking_level: bool = True
    """Take the walking rate from the motion samples where the smoothed GPS moves
    (:func:`walking_change_rate`); False: the video's median rate (the rule before round
    thirty-five, which a video that mostly stands turns into its standing noise)."""
    walking_speed_mps: float = 0.5
    """Smoothed GPS speed from which a motion sample counts as walking, m/s."""
    min_walking_samples: int = 20
    """Fewer walking samples than this: the video's median rate is the level."""


def walking_change_rate(
    motion: MotionSignal,
    smooth: SmoothTrack,
    sync: SyncResult,
    *,
    min_speed_mps: float = 0.5,
    min_samples: int = 20,
) -> float | None:
    """The picture's change rate while the camera walks (grey levels per second, the unit of
    :attr:`MotionSignal.change_rate`): the median over the motion steps whose smoothed GPS
    speed, at the step's middle on the GPS clock (``sync``), is at least ``min_speed_mps``.
    None when fewer than ``min_samples`` steps qualify (no GPS over the video, a camera that
    never moves).

    A video that mostly walks has this as its median rate; one that mostly stands (a camera
    left running at the end of a walk) has its standing noise as its median, 5-20 times
    lower (a filmed Hamburg walk of 1890 s, 1300 of them standing: median 1.09, walking 15,
    standing 0.75). The GPS tells which samples walk even where it is too noisy to tell a
    stop of a few seconds.
    """
    rate = motion.change_rate
    gps_t = sync.video_start_gps + motion.mid_t_s
    inside = (gps_t >= smooth.t_s[0]) & (gps_t <= smooth.t_s[-1])
    speed = np.interp(gps_t, smooth.t_s, smooth.speed_mps)
    walking = rate[inside & (speed >= min_speed_mps)]
    if walking.shape[0] < min_samples:
        return None
    return float(np.median(walking))


def still_spans_of_walk(
    motion: MotionSignal,
    smooth: SmoothTrack,
    sync: SyncResult,
    params: StillParams | None = None,
) -> list[tuple[float, float]]:
    """:func:`still_spans` with the walking rate read where the GPS walks (``params``)."""
    params = params or StillParams()
    level = None
    if params.walking_level:
        level = walking_change_rate(
            motion,
            smooth,
            sync,
            min_speed_mps=params.walking_speed_mps,
            min_samples=params.min_walking_samples,
        )
    return still_spans(
        motion, ratio=params.ratio, min_s=params.min_s, moving_rate=level, blip_s=params.blip_s
    )


def still_spans(
    motion: MotionSignal,
    *,
    ratio: float = 0.25,
    min_s: float = 1.5,
    moving_rate: float | None = None,
    blip_s: float = 0.0,
) -> list[tuple[float, float]]:
    """Video-time spans ``(start_s, end_s)`` where the picture (yaw undone) changes less than
    ``ratio`` times its rate while moving for at least ``min_s``: the camera stands still.

    ``moving_rate`` (grey levels per second; :func:`walking_change_rate`) is that rate; None
    takes the video's median rate, which is the moving rate of a video that mostly moves.
    The threshold is relative to the video itself, so noise, lighting and passers-by, which
    are there all the time, do not count as motion; GPS at 1 Hz with metres of noise cannot
    see a stop of a few seconds, the picture can. Still stretches at most ``blip_s`` seconds
    apart are one span (:attr:`StillParams.blip_s`).
    """
    rate = motion.change_rate
    if rate.shape[0] < 3:
        return []
    level = float(np.median(rate)) if moving_rate is None else moving_rate
    still = rate < ratio * level
    runs: list[tuple[float, float]] = []
    k = 0
    n = still.shape[0]
    while k < n:
        if not still[k]:
            k += 1
            continue
        end = k
        while end < n and still[end]:
            end += 1
        start_s, end_s = float(motion.t_s[k]), float(motion.t_s[end])
        if runs and start_s - runs[-1][1] <= blip_s:
            runs[-1] = (runs[-1][0], end_s)
        else:
            runs.append((start_s, end_s))
        k = end
    return [(a, b) for a, b in runs if b - a >= min_s]
