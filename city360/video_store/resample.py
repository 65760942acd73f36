"""Choose the source frames to keep: one every ``spacing_m`` metres travelled.

Every source frame gets a pose from the smoothed track at its own time; frames are then
picked by distance along the track, so the stored trajectory is a sequence of places, not of
times (standing still adds no frames; walking fast adds no gaps beyond the source frame rate).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from city360.city import max_pose_step_m
from city360.errors import ConfigError, GpsError, VideoError
from city360.video_store.clean import SmoothTrack
from city360.video_store.decode import VideoInfo
from city360.video_store.reckon import EdgeReckoning
from city360.video_store.sync import SyncResult
from city360.video_store.sync import iso_utc as _iso

__all__ = [
    "GPS_STILL_SPEED_MPS",
    "FrameSelection",
    "continuity_gaps",
    "continuous_parts",
    "frame_times",
    "select_frames",
    "stationary_keep",
]

GPS_STILL_SPEED_MPS = 0.5
"""Mean GPS speed over a span below which the GPS agrees that the camera stood still, m/s
(walking is 1-1.5 m/s; a smoothed stop is 0)."""

WANDER_SPREAD_FACTOR = 0.5
"""A span the pictures call still whose smoothed GPS wanders (moves faster than
:data:`GPS_STILL_SPEED_MPS` along its path) still stands when its GPS gets nowhere: net
displacement under :data:`GPS_STILL_SPEED_MPS` times the span's duration, and no point
further than this many times :func:`city360.city.max_pose_step_m` from the points' median
(5 m at 1 m spacing, the half step :func:`stationary_keep` allows between kept neighbours;
where dropping would leave a wider one, the frames between are kept all the same)."""


@dataclass(frozen=True, slots=True)
class FrameSelection:
    """The kept source frames in order: ``source_index`` (decode order), ``source_pts``,
    ``t_s`` (video seconds), pose ``x_m``/``y_m``/``heading_deg`` and ``distance_m`` along
    the track from the first kept frame. ``reckoned``: True for frames outside the GPS span,
    posed by dead reckoning (:mod:`.reckon`)."""

    source_index: npt.NDArray[np.int64]
    source_pts: npt.NDArray[np.int64]
    t_s: npt.NDArray[np.float64]
    x_m: npt.NDArray[np.float64]
    y_m: npt.NDArray[np.float64]
    heading_deg: npt.NDArray[np.float64]
    distance_m: npt.NDArray[np.float64]
    reckoned: npt.NDArray[np.bool_] | None = None
    """None: no frame is reckoned."""

    def __len__(self) -> int:
        return int(self.source_index.shape[0])

    def subset(self, keep: list[int]) -> FrameSelection:
        """The selection restricted to positions ``keep`` (increasing)."""
        rows = np.asarray(keep, np.int64)
        return FrameSelection(
            source_index=self.source_index[rows],
            source_pts=self.source_pts[rows],
            t_s=self.t_s[rows],
            x_m=self.x_m[rows],
            y_m=self.y_m[rows],
            heading_deg=self.heading_deg[rows],
            distance_m=self.distance_m[rows],
            reckoned=None if self.reckoned is None else self.reckoned[rows],
        )

    @property
    def length_m(self) -> float:
        return float(self.distance_m[-1]) if len(self) else 0.0


def frame_times(info: VideoInfo) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """``(pts, t_s)`` of every video frame in presentation order, from the packets alone.

    Reading packets is cheap (no decoding) and gives the true times of variable-frame-rate
    video, which ``index / fps`` would not. Raises :class:`VideoError` when the file holds
    fewer packets than its header promises frames (2 % slack): a fragmented MP4 cut inside a
    fragment keeps the fragment's header, and frames selected from what is left would blame
    the GPS ("moves only 0.3 m") for a cut file.
    """
    import av

    from city360.video_store.decode import open_video

    pts: list[int] = []
    with open_video(info.path) as container:
        stream = container.streams.video[0]
        start = stream.start_time or 0
        try:
            for packet in container.demux(stream):
                if packet.pts is not None and packet.size:
                    pts.append(int(packet.pts))
        except av.FFmpegError:
            pass  # a broken tail: the count below, or the decode pass, reports it
    if info.frame_count and len(pts) < 0.98 * info.frame_count - 1:
        msg = (
            f"video {info.path} is truncated: its header promises {info.frame_count} frames "
            f"but only {len(pts)} are in the file; re-copy it from the camera"
        )
        raise VideoError(msg)
    stamps = np.sort(np.asarray(pts, np.int64))
    return stamps, (stamps - start).astype(np.float64) * info.time_base


ZONE_STEP_S = 900.0
"""Time zones differ from UTC by whole quarter hours (UTC+5:45, +9, -3:30, ...)."""


CLOCK_SLACK_S = 120.0
"""How far a camera clock may run beside a time-zone difference for the no-overlap error to
still name the fix, seconds: clocks set by hand or by a phone app are seconds to a minute or
two off. A track shorter than that error then misses the video even after the zone shift."""


def _zone_hint(
    track_from: float, track_to: float, video_from: float, video_to: float, offset_s: float
) -> str:
    """A sentence for the no-overlap error when the track and the video (both on the GPS
    clock, the video placed with ``offset_s``) overlap once one is moved by a whole number of
    quarter hours (15 min to 14 h): the clock of one wrote local time without a zone (GPX and
    CSV times without one are read as UTC, a camera's creation time is often local), so the
    fix is that offset. When the shifted windows still miss each other by at most
    :data:`CLOCK_SLACK_S` (a short track and a camera clock a few seconds off too), or miss
    each other by that little without a shift, the offset given puts the video's start at the
    track's first fix. Else nothing."""
    shift = round((track_from - video_from) / ZONE_STEP_S) * ZONE_STEP_S
    if not ZONE_STEP_S <= abs(shift) <= 14 * 3600.0:
        shift = 0.0
    gap_s = max(track_from - (video_to + shift), (video_from + shift) - track_to, 0.0)
    if gap_s > CLOCK_SLACK_S or (shift == 0.0 and gap_s == 0.0):
        return ""
    side = "after" if shift > 0 else "before"
    if gap_s == 0.0:
        hours, minutes = divmod(round(abs(shift) / 60.0), 60)
        return (
            f". The track runs {hours} h {minutes:02d} min {side} the video, a time-zone "
            "difference: one clock wrote local time without a zone (GPX and CSV times without "
            f"one are read as UTC); if so, pass --offset {offset_s + shift:+.0f}"
        )
    start_offset = offset_s + (track_from - video_from)
    clock_s = track_from - video_from - shift
    if shift == 0.0:
        where = (
            f"ends {gap_s:.0f} s before the video starts"
            if track_to < video_from
            else f"starts {gap_s:.0f} s after the video ends"
        )
        return (
            f". The track {where}: if the camera clock is {abs(clock_s):.0f} s off, pass "
            f"--offset {start_offset:+.0f} (the video's start at the track's first fix)"
        )
    hours, minutes = divmod(round(abs(shift) / 60.0), 60)
    more = "plus" if (clock_s > 0) == (shift > 0) else "less"
    return (
        f". The track starts {hours} h {minutes:02d} min {side} the video {more} "
        f"{abs(clock_s):.0f} s, a time-zone difference and a camera clock {abs(clock_s):.0f} s "
        "off: one clock wrote local time without a zone (GPX and CSV times without one are "
        "read as UTC, and cameras often write local time as their creation time); if so, "
        f"pass --offset {start_offset:+.0f} (the video's start at the track's first fix)"
    )


def select_frames(
    pts: npt.NDArray[np.int64],
    t_video_s: npt.NDArray[np.float64],
    smooth: SmoothTrack,
    sync: SyncResult,
    *,
    spacing_m: float,
    source: str = "video",
    gps_source: str = "track",
    ends: Sequence[EdgeReckoning] = (),
) -> FrameSelection:
    """Pose every frame inside the GPS span and keep the one nearest each multiple of
    ``spacing_m`` along the track. ``ends``: dead-reckoned paths of the video's uncovered
    head or tail (:func:`~.reckon.reckon_ends`); the frames they reach are posed on them and
    kept by the same spacing rule."""
    if not (spacing_m > 0 and math.isfinite(spacing_m)):
        msg = f"`spacing_m` must be > 0, got {spacing_m}"
        raise ConfigError(msg)
    gps_t = sync.video_start_gps + t_video_s
    # frames taken while the GPS jumped (smooth.breaks_s) have no place: leave them out, so
    # the jump stays a step between kept frames and ingest splits the walk there
    placed = (gps_t >= smooth.start_s) & (gps_t <= smooth.end_s) & ~smooth.in_break(gps_t)
    inside = np.flatnonzero(placed)
    if inside.shape[0] == 0:
        video_from = sync.video_start_gps
        video_to = video_from + (float(t_video_s[-1]) if t_video_s.shape[0] else 0.0)
        msg = (
            f"GPS track {gps_source} (GPS time {_iso(smooth.start_s)} .. {_iso(smooth.end_s)}) "
            f"does not overlap video {source} ({_iso(video_from)} .. {_iso(video_to)} with "
            f"clock offset {sync.offset_s:+.1f} s); pair the right files, or pass --offset "
            "SECONDS (or --offset auto) if the camera clock is wrong"
            + _zone_hint(smooth.start_s, smooth.end_s, video_from, video_to, sync.offset_s)
        )
        raise GpsError(msg)
    x, y, heading = smooth.sample(gps_t[inside])
    reckoned = None
    reached = [(end, end.covers(t_video_s)) for end in ends]
    if any(mask.any() for _, mask in reached):
        posed = placed.copy()
        px, py, ph = (np.zeros(t_video_s.shape) for _ in range(3))
        px[inside], py[inside], ph[inside] = x, y, heading
        for end, mask in reached:
            px[mask], py[mask], ph[mask] = end.pose(t_video_s[mask])
            posed |= mask
        inside = np.flatnonzero(posed)
        x, y, heading = px[inside], py[inside], ph[inside]
        reckoned = ~placed[inside]
    steps = np.hypot(np.diff(x), np.diff(y))
    distance = np.concatenate([[0.0], np.cumsum(steps)])
    total = float(distance[-1])
    if total < spacing_m:
        msg = (
            f"video {source} moves only {total:.1f} m along GPS track {gps_source} while "
            f"both overlap; at least `spacing_m` = {spacing_m:g} m is needed"
        )
        raise GpsError(msg)
    targets = np.arange(0.0, total + 1e-9, spacing_m)
    after = np.clip(np.searchsorted(distance, targets), 0, distance.shape[0] - 1)
    before = np.clip(after - 1, 0, distance.shape[0] - 1)
    pick = np.where(
        np.abs(distance[before] - targets) <= np.abs(distance[after] - targets), before, after
    )
    pick = np.unique(pick)  # sorted; duplicates when the camera outruns its frame rate
    chosen = inside[pick]
    return FrameSelection(
        source_index=chosen.astype(np.int64),
        source_pts=pts[chosen].astype(np.int64),
        t_s=t_video_s[chosen],
        x_m=x[pick],
        y_m=y[pick],
        heading_deg=heading[pick],
        distance_m=distance[pick] - distance[pick[0]],
        reckoned=None if reckoned is None else reckoned[pick],
    )


def stationary_keep(
    selection: FrameSelection,
    still_spans_s: Sequence[tuple[float, float]],
    smooth: SmoothTrack,
    sync: SyncResult,
    *,
    spacing_m: float,
    wander: bool = False,
) -> list[int]:
    """Positions in ``selection`` to keep: all but the second and later frames of each span
    where the camera stood still.

    A span counts as standing still only when the picture *and* the GPS say so: the picture
    looks still in ``still_spans_s`` (video seconds, from :func:`~.motion.still_spans`) and the
    smoothed GPS moves slower than :data:`GPS_STILL_SPEED_MPS` on average across it. A picture
    can look still while the camera walks (a featureless footpath, a lens cap, a dark tunnel,
    a frozen encoder); dropping those frames would leave a gap of tens of metres that the pose
    graph rejects. Whatever is dropped, no two kept neighbours end up further apart than
    :func:`city360.city.max_pose_step_m` allows (half of it, leaving room for the smoothing
    that follows): frames of a gap that would be too wide are kept.

    ``wander`` (off: the GPS test is the mean speed alone): the GPS also agrees where the
    smoothed track wanders but gets nowhere across the span (:func:`_gps_wanders_in_place`).
    Urban-canyon fixes around a standing walker move the smoothed track 0.7 m/s back and
    forth within 3-4 m; frames were kept every metre along that wander and the build read
    their back and forth as U-turns (the filmed Hamburg canyon twin of seed 8).
    """
    n = len(selection)
    if n == 0:
        return []
    dropped = np.zeros(n, bool)
    for start_s, end_s in still_spans_s:
        gps_a, gps_b = sync.video_start_gps + start_s, sync.video_start_gps + end_s
        duration = max(end_s - start_s, 1e-9)
        grid = np.linspace(gps_a, gps_b, max(2, math.ceil(duration * 2) + 1))
        x, y, _ = smooth.sample(grid)
        path_m = float(np.hypot(np.diff(x), np.diff(y)).sum())
        moved = path_m / duration >= GPS_STILL_SPEED_MPS and path_m > spacing_m
        if moved and not (wander and _gps_wanders_in_place(x, y, duration, spacing_m=spacing_m)):
            continue  # the GPS says the camera walked on: keep every frame
        inside = np.flatnonzero((selection.t_s >= start_s) & (selection.t_s <= end_s))
        dropped[inside[1:]] = True
    limit = 0.5 * max_pose_step_m(spacing_m)
    keep: list[int] = []
    for k in range(n):
        if dropped[k]:
            continue
        if keep and k - keep[-1] > 1:
            a = keep[-1]
            gap = math.hypot(
                selection.x_m[k] - selection.x_m[a], selection.y_m[k] - selection.y_m[a]
            )
            if gap > limit:
                keep.extend(range(a + 1, k))  # too wide a jump: keep the frames between
        keep.append(k)
    return keep


def _gps_wanders_in_place(
    x_m: npt.NDArray[np.float64],
    y_m: npt.NDArray[np.float64],
    duration_s: float,
    *,
    spacing_m: float,
) -> bool:
    """Whether the smoothed track ``x_m``/``y_m`` (metres, sampled evenly over ``duration_s``
    seconds) gets nowhere: its net displacement is under :data:`GPS_STILL_SPEED_MPS` times
    the duration and every point lies within :data:`WANDER_SPREAD_FACTOR` times
    :func:`city360.city.max_pose_step_m` of the points' median. A walk, even at the slowest
    pace the synthetic walkers keep (0.84 m/s), gets 0.84 m further every second; a camera
    walked out and back over a span the pictures call still is not told apart (the pictures
    would not look still)."""
    net_m = math.hypot(float(x_m[-1] - x_m[0]), float(y_m[-1] - y_m[0]))
    if net_m >= GPS_STILL_SPEED_MPS * duration_s:
        return False
    mx, my = float(np.median(x_m)), float(np.median(y_m))
    spread_m = float(np.hypot(x_m - mx, y_m - my).max())
    return spread_m <= WANDER_SPREAD_FACTOR * max_pose_step_m(spacing_m)


def continuity_gaps(
    x_m: npt.NDArray[np.float64], y_m: npt.NDArray[np.float64], *, spacing_m: float
) -> npt.NDArray[np.int64]:
    """Indices ``i`` where the step from pose ``i`` to ``i + 1`` exceeds
    :func:`city360.city.max_pose_step_m` (the rule the pose-graph build checks)."""
    steps = np.hypot(np.diff(x_m), np.diff(y_m))
    return np.flatnonzero(steps > max_pose_step_m(spacing_m)).astype(np.int64)


def continuous_parts(
    x_m: npt.NDArray[np.float64], y_m: npt.NDArray[np.float64], *, spacing_m: float
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Split poses where consecutive ones are further apart than
    :func:`city360.city.max_pose_step_m` allows: ``(kept, dropped)`` lists of ``[start, stop)``
    ranges. A part with fewer than 2 poses or shorter than ``spacing_m`` along its path is no
    trajectory and is dropped. Videos and photo sequences both split this way; the parts are
    named by :func:`city360.video_store.ingest.part_id`."""
    cuts = [0, *(int(k) + 1 for k in continuity_gaps(x_m, y_m, spacing_m=spacing_m)), len(x_m)]
    kept: list[tuple[int, int]] = []
    dropped: list[tuple[int, int]] = []
    for a, b in itertools.pairwise(cuts):
        length = float(np.hypot(np.diff(x_m[a:b]), np.diff(y_m[a:b])).sum())
        (kept if b - a >= 2 and length >= spacing_m else dropped).append((a, b))
    return kept, dropped
