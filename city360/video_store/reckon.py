"""Dead reckoning of a video's head or tail that the GPS does not cover.

A real camera's GPS often has no fix for the first 10-60 s of a video (cold start) or loses it
before the video ends; :func:`~.resample.select_frames` poses only frames inside the GPS span,
so that footage would be lost. Here the uncovered end is walked from the track's edge with
what the pictures say: heading = the heading at the edge plus the picture's yaw since then
(:mod:`.motion`), speed = the smoothed GPS speed at the edge while the pictures show motion and
0 where they show the camera still (:func:`~.motion.still_spans`); backward from the first fix
for a head, forward from the last for a tail. Dead reckoning drifts, so it is bounded
(:class:`ReckonParams`: 20 s or 30 m by default); frames beyond the bound are dropped.

A gap in the *middle* of a track is bridged by the smoother; nothing here touches it.

Units: video seconds (``t_s``), metres in the city CRS (x east, y north), degrees clockwise
from north.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from city360.video_store.clean import SmoothTrack
from city360.video_store.heading import HeadingFusion
from city360.video_store.motion import (
    MOTION_RATE_HZ,
    MotionSignal,
    StillParams,
    still_spans_of_walk,
)
from city360.video_store.sync import SyncResult

__all__ = [
    "EdgeReckoning",
    "GpsCoverageWarning",
    "ReckonParams",
    "coverage_message",
    "reckon_ends",
    "uncovered_ends",
]

FloatArray = npt.NDArray[np.float64]
End = Literal["head", "tail"]


class GpsCoverageWarning(UserWarning):
    """Part of a video has no GPS fix (its head or tail); says what was done with it."""


@dataclass(frozen=True, slots=True)
class ReckonParams:
    """How far an uncovered head or tail is dead-reckoned, and from what.

    ``enabled``: False (the default; ``city360 ingest --dead-reckon`` turns it on) drops the
    uncovered frames, with a warning. Off by default because on the filmed Hamburg walks the
    reckoned frames are 8-13 m RMS off (a walker's speed and heading drift from the edge's),
    against 1-4.4 m on the SF car (docs/design-notes.md, branch gpstail).
    ``max_s`` / ``max_m``: the bound, video seconds / metres walked from the edge, whichever
    comes first; frames beyond it are dropped. ``min_s``: an uncovered end shorter than this
    (seconds) is left out silently, as before (a 1 Hz track ends up to a second before the
    video does). ``speed_window_s``, ``min_speed_mps``: the edge speed is the median smoothed
    GPS speed, where at least ``min_speed_mps``, over this many seconds of the track next to
    the edge (the smoother's speed in the last few seconds of a track sags: 1.0 m/s over the
    first 5 s of a walk at 1.4-1.7 m/s on a filmed Hamburg twin, 1.5 over the first 20 s; the
    median, for the slowing into a stop a 20 s window may hold). ``min_confidence`` /
    ``max_rate_dps``: a yaw step with a weaker phase-correlation peak or a faster turn is not
    trusted (no turn then), as in :func:`~.heading.fuse_heading`.
    """

    enabled: bool = False
    max_s: float = 20.0
    max_m: float = 30.0
    min_s: float = 2.0
    speed_window_s: float = 20.0
    min_speed_mps: float = 0.3
    min_confidence: float = 0.05
    max_rate_dps: float = 120.0


@dataclass(frozen=True, slots=True)
class EdgeReckoning:
    """One uncovered end of a video and what dead reckoning made of it.

    ``uncovered_s``: video time of the first and last frame without GPS; ``frames``: how many.
    ``t_s``/``x_m``/``y_m``/``heading_deg``: the reckoned path, video time increasing, from
    the outermost reckoned instant to the track's edge (head) or from the edge outward (tail);
    empty when nothing was reckoned. ``reason``: why nothing (or not all) was reckoned.
    """

    end: End
    uncovered_s: tuple[float, float]
    frames: int
    t_s: FloatArray
    x_m: FloatArray
    y_m: FloatArray
    heading_deg: FloatArray
    reason: str = ""

    @property
    def reckoned_s(self) -> tuple[float, float] | None:
        """Video time span the path covers outside the GPS span, or None."""
        if self.t_s.shape[0] < 2:
            return None
        if self.end == "head":
            return float(self.t_s[0]), min(float(self.t_s[-1]), self.uncovered_s[1])
        return max(float(self.t_s[0]), self.uncovered_s[0]), float(self.t_s[-1])

    @property
    def length_m(self) -> float:
        return float(np.hypot(np.diff(self.x_m), np.diff(self.y_m)).sum())

    def covers(self, t_s: FloatArray) -> npt.NDArray[np.bool_]:
        """Mask of the video times ``t_s`` inside the uncovered span that the path reaches."""
        span = self.reckoned_s
        uncovered = (t_s >= self.uncovered_s[0]) & (t_s <= self.uncovered_s[1])
        if span is None:
            return np.zeros(t_s.shape, bool)
        return uncovered & (t_s >= span[0]) & (t_s <= span[1])

    def pose(self, t_s: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``(x_m, y_m, heading_deg in [0, 360))`` on the path at video times ``t_s``."""
        x = np.interp(t_s, self.t_s, self.x_m)
        y = np.interp(t_s, self.t_s, self.y_m)
        heading = np.mod(np.interp(t_s, self.t_s, self.heading_deg), 360.0)
        return x, y, heading


def uncovered_ends(
    t_video_s: FloatArray, smooth: SmoothTrack, sync: SyncResult, *, min_s: float
) -> list[tuple[End, npt.NDArray[np.int64]]]:
    """The video's ends without GPS lasting at least ``min_s``: ``(end, frame indices)``;
    none when the video and the track do not overlap at all (an error of pairing or clocks
    that :func:`~.resample.select_frames` reports)."""
    gps_t = sync.video_start_gps + t_video_s
    if not ((gps_t >= smooth.start_s) & (gps_t <= smooth.end_s)).any():
        return []
    ends: list[tuple[End, npt.NDArray[np.int64]]] = []
    for end, rows in (
        ("head", np.flatnonzero(gps_t < smooth.start_s)),
        ("tail", np.flatnonzero(gps_t > smooth.end_s)),
    ):
        if rows.shape[0] and float(t_video_s[rows[-1]] - t_video_s[rows[0]]) >= min_s:
            ends.append((end, rows.astype(np.int64)))  # type: ignore[arg-type]
    return ends


def reckon_ends(
    t_video_s: FloatArray,
    motion: MotionSignal | None,
    heading: HeadingFusion | None,
    smooth: SmoothTrack,
    sync: SyncResult,
    params: ReckonParams,
    *,
    still: StillParams | None = None,
) -> tuple[EdgeReckoning, ...]:
    """Dead-reckon each uncovered end of the video (frames at ``t_video_s``, video seconds).

    ``heading``: the fused heading at the motion samples (:func:`~.heading.fuse_heading` at
    ``motion.t_s``); its value at the edge anchors the yaw; without a visual heading the
    smoothed GPS heading at the edge does. ``still``: when the pictures say the camera stands
    (speed 0 there; :func:`~.motion.still_spans_of_walk`)."""
    results = []
    for end, rows in uncovered_ends(t_video_s, smooth, sync, min_s=params.min_s):
        span = (float(t_video_s[rows[0]]), float(t_video_s[rows[-1]]))
        empty = np.zeros(0)
        if not params.enabled:
            reason = "dead reckoning is off"
        elif motion is None or motion.t_s.shape[0] < 3:
            reason = "the pictures gave no motion to reckon from"
        else:
            results.append(_reckon_end(end, span, rows.shape[0], motion, heading, smooth, sync,
                                       params, still or StillParams()))  # fmt: skip
            continue
        results.append(EdgeReckoning(end, span, int(rows.shape[0]), empty, empty, empty, empty,
                                     reason))  # fmt: skip
    return tuple(results)


def _reckon_end(
    end: End,
    span: tuple[float, float],
    frames: int,
    motion: MotionSignal,
    heading: HeadingFusion | None,
    smooth: SmoothTrack,
    sync: SyncResult,
    params: ReckonParams,
    still: StillParams,
) -> EdgeReckoning:
    edge_gps = smooth.start_s if end == "head" else smooth.end_s
    edge_t = edge_gps - sync.video_start_gps
    edge_x, edge_y, gps_heading = (float(v[0]) for v in smooth.sample([edge_gps]))
    near = (
        smooth.t_s <= smooth.start_s + params.speed_window_s
        if end == "head"
        else smooth.t_s >= smooth.end_s - params.speed_window_s
    )
    moving_near = smooth.speed_mps[near][smooth.speed_mps[near] >= params.min_speed_mps]
    speed = float(np.median(moving_near)) if moving_near.shape[0] else 0.0
    t = motion.t_s
    # the picture's yaw, its untrusted steps taken as no turn
    weak = motion.untrusted_steps(params.min_confidence, params.max_rate_dps)
    yaw = np.concatenate([[0.0], np.cumsum(np.where(weak, 0.0, np.diff(motion.yaw_deg)))])
    anchor = gps_heading
    if (
        heading is not None
        and heading.dense_t_s is not None
        and heading.dense_heading_deg is not None
    ):
        anchor = float(np.interp(edge_t, heading.dense_t_s, heading.dense_heading_deg))
    walk_heading = anchor + yaw - float(np.interp(edge_t, t, yaw))
    moving = np.ones(t.shape[0] - 1, bool)
    for start_s, end_s in still_spans_of_walk(motion, smooth, sync, still):
        moving &= ~((motion.mid_t_s >= start_s) & (motion.mid_t_s <= end_s))
    step_speed = speed * moving
    # the path's instants: the edge, then the motion samples outward, ordered away from it
    if end == "head":
        outward = t[(t < edge_t) & (t >= edge_t - params.max_s)][::-1]
    else:
        outward = t[(t > edge_t) & (t <= edge_t + params.max_s)]
    times = np.concatenate([[edge_t], outward])
    mids = 0.5 * (times[1:] + times[:-1])
    k = np.clip(np.searchsorted(t, mids) - 1, 0, step_speed.shape[0] - 1)
    length = np.abs(np.diff(times)) * step_speed[k]
    direction = np.radians(np.interp(mids, t, walk_heading))
    sign = -1.0 if end == "head" else 1.0  # walking backward in time from the first fix
    x = edge_x + np.concatenate([[0.0], np.cumsum(sign * length * np.sin(direction))])
    y = edge_y + np.concatenate([[0.0], np.cumsum(sign * length * np.cos(direction))])
    walked = np.concatenate([[0.0], np.cumsum(length)])
    inside_bound = walked <= params.max_m
    reaches = (
        span[0] >= float(times[inside_bound][-1])
        if end == "head"
        else (span[1] <= float(times[inside_bound][-1]))
    )
    reason = (
        ""
        if reaches
        else (f"beyond the bound of {params.max_s:g} s or {params.max_m:g} m of dead reckoning")
    )
    keep = np.flatnonzero(inside_bound)
    order = keep[::-1] if end == "head" else keep
    hd = np.interp(times, t, walk_heading)
    return EdgeReckoning(end, span, frames, times[order], x[order], y[order], hd[order], reason)


def coverage_message(video: str, ending: EdgeReckoning) -> str:
    """The warning for one uncovered end: the span, its seconds and frames, what was done."""
    first, last = ending.uncovered_s
    where = "start" if ending.end == "head" else "end"
    fix = "first" if ending.end == "head" else "last"
    head = (
        f"{video}: no GPS fix for video time {first:.1f}-{last:.1f} s at its {where} "
        f"({last - first:.1f} s, {ending.frames} frames)"
    )
    span = ending.reckoned_s
    if span is None:
        return f"{head}; dropped those frames ({ending.reason or 'nothing to reckon'})"
    done = (
        f"{head}; dead-reckoned {span[1] - span[0]:.1f} s ({ending.length_m:.0f} m) from the "
        f"{fix} fix with the pictures' turns and the GPS speed there"
    )
    rest = (span[0] - first) + (last - span[1])
    if rest > 1.5 / MOTION_RATE_HZ:  # not the last motion sample's fraction of a step
        done += f"; dropped the remaining {rest:.1f} s ({ending.reason})"
    return done
