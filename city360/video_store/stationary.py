"""Standing still, told from GPS fixes alone: where a camera stopped although its fixes wander.

A smoothed track's speed says "stopped" only while the GPS noise is slow. Under drift and
urban-canyon bursts a standing receiver's smoothed track wanders (a real walk's 21-minute stop
became a kilometre of loops), because noise looks like motion at every instant. What tells the
two apart is how far the fixes get over a long window: a walk's net displacement grows like
``t`` (84 m in a minute at 1.4 m/s), a standing receiver's stays within its noise whatever the
window. So a window of ``window_s`` seconds is *stationary* when at least ``share`` of its
fixes lie within ``radius_m`` of the window's median point, and then the camera stood still
at the window's centre (the fixes around it; the window's ends may be the walk in and out).
The test is robust to bursts and outliers (they are the minority outside the radius) and to
turning back: a walk out and back over a window still spreads its fixes over half its length
(walking out and back at 1.4 m/s puts 38% of a minute's fixes within 8 m of their median;
walking on, 19%; 0.84 m/s out and back, the slowest pace of ``synth --stops``, 64%: its
U-turn's tip may then be taken for a short stop).

A stop is found once it lasts about half a window (with the walk in and out near it counted);
shorter ones are left to the smoothed speed. Neighbouring stationary centres join into a span;
spans less than a window apart where the camera stood within ``radius_m`` of the same place
before and after the gap (a burst in the middle of a long stop) join into one, also across a
span too short to keep at another place between them (a burst that stood still a few seconds
at its offset), which is then no place at all; each span
lasting at least ``min_span_s`` has its fixes moved to where the camera stood (the median point
of the window around each) before the track is smoothed (:mod:`.clean`), so a stop is one
place whatever bursts and outliers did, creeping at most with the receiver's slow drift.

Units: seconds (GPS clock), metres in the city CRS.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from city360.video_store.gps_bursts import burst_mask
from city360.video_store.walk_in import STEP_MARGIN, per_second_medians, walk_in_s

__all__ = ["StationaryParams", "pin_stationary", "stationary_spans"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class StationaryParams:
    """Settings of the window test (module docstring)."""

    window_s: float = 60.0
    """Length of a window, seconds."""
    share: float = 0.6
    """Share of a window's fixes that must lie near its median for it to be stationary."""
    radius_m: float = 8.0
    """How near, metres (at least 2.5 GPS sigmas: :func:`clean_track` widens it)."""
    min_span_s: float = 10.0
    """Shorter stationary spans are left to the speed test of :mod:`.clean`, seconds."""
    step_s: float = 1.0
    """Window centres are this far apart, seconds."""
    local_s: float = 20.0
    """Length of the short window around a centre that must itself stand (see
    :func:`_stands_locally`), seconds."""
    trim_excursions: bool = True
    """Whether :data:`EXCURSION_TRIM` may trim this track's spans: :func:`.clean.clean_track`
    clears it on a track that bursts (``CleanParams.excursion_burst_share``)."""


def _median_point(x: FloatArray, y: FloatArray) -> tuple[float, float]:
    return float(np.median(x)), float(np.median(y))


def _standing_centres(
    t_s: FloatArray,
    x_m: FloatArray,
    y_m: FloatArray,
    params: StationaryParams,
    *,
    steady: npt.NDArray[np.bool_],
) -> list[tuple[int, int, float, float]]:
    """``(first, last, x, y)`` per stationary window: the fixes around its centre (indices,
    inclusive) and the window's median point, in time order. ``steady``: the fixes outside
    bursts, the only ones the local test (:func:`_stands_locally`) looks at."""
    n = t_s.shape[0]
    half = params.window_s / 2
    centres = np.arange(t_s[0] + half, t_s[-1] - half + 1e-9, params.step_s)
    lows = np.searchsorted(t_s, centres - half, side="left")
    highs = np.searchsorted(t_s, centres + half, side="right")
    found: list[tuple[int, int, float, float]] = []
    for k, (centre, low, high) in enumerate(
        zip(centres.tolist(), lows.tolist(), highs.tolist(), strict=True)
    ):
        if high - low < 3:
            continue  # a dropout: too few fixes to tell
        cx, cy = _median_point(x_m[low:high], y_m[low:high])
        near = np.hypot(x_m[low:high] - cx, y_m[low:high] - cy) <= params.radius_m
        if near.mean() < params.share:
            continue
        if not _stands_locally(t_s[steady], x_m[steady], y_m[steady], centre, (cx, cy), params):
            continue
        # only the window's centre counts as standing: its ends may be the walk in and out,
        # whose fixes near the stop would otherwise be pulled onto it.
        first = int(np.searchsorted(t_s, centre - params.step_s / 2, side="left"))
        last = int(np.searchsorted(t_s, centre + params.step_s / 2, side="right")) - 1
        if k == 0:  # the track's first half window has no centre of its own
            first = _stood_since(t_s, x_m, y_m, first, stop=-1, centre=(cx, cy), params=params)
            into = np.flatnonzero(steady & (t_s <= centre))
            walked_s = _walk_from_edge_s(t_s, x_m, y_m, into, t_s[0], params)
            if walked_s is not None:  # the stop starts where the walk into it ended
                first = max(first, int(np.searchsorted(t_s, t_s[0] + walked_s, side="left")))
        if k == len(centres) - 1:  # nor has its last
            last = _stood_since(t_s, x_m, y_m, last, stop=n, centre=(cx, cy), params=params)
            out_of = np.flatnonzero(steady & (t_s >= centre))[::-1]
            walked_s = _walk_from_edge_s(t_s, x_m, y_m, out_of, t_s[-1], params)
            if walked_s is not None:  # it ends where the walk out of it began
                last = min(last, int(np.searchsorted(t_s, t_s[-1] - walked_s, side="right")) - 1)
        if last >= first:
            found.append((first, last, cx, cy))
    return found


def _stands_locally(
    t_s: FloatArray,
    x_m: FloatArray,
    y_m: FloatArray,
    centre_s: float,
    place: tuple[float, float],
    params: StationaryParams,
) -> bool:
    """Whether the camera stood at ``place`` (a stationary window's median point) around
    ``centre_s`` itself, not only most of the window: over the ``local_s`` around the centre
    the fixes' median lies within half the radius of ``place``, and the medians of its two
    halves lie within half the radius of each other. A walk out and back between two stops
    keeps most of a minute's fixes near the stops (12 m out at 0.86 m/s: 73% within 8 m), but
    on the way its halves' medians are ``local_s / 2`` of walking apart (8.6 m at 0.86 m/s,
    standing: about a metre of noise) and at its tip their median is away from the stop."""
    half = params.local_s / 2
    low, mid, high = np.searchsorted(t_s, [centre_s - half, centre_s, centre_s + half])
    high = int(np.searchsorted(t_s, centre_s + half, side="right"))
    if mid - low < 2 or high - mid < 2:
        return True  # too few fixes to tell: the window's test stands
    limit = params.radius_m / 2
    mx, my = _median_point(x_m[low:high], y_m[low:high])
    if math.hypot(mx - place[0], my - place[1]) > limit:
        return False
    ax, ay = _median_point(x_m[low:mid], y_m[low:mid])
    bx, by = _median_point(x_m[mid:high], y_m[mid:high])
    return math.hypot(bx - ax, by - ay) <= limit


WALK_IN_TEST = True
"""Whether a track's first stop starts where a walk into it ends, and its last ends where a
walk out begins (:func:`city360.video_store.walk_in.walk_in_s`); False: stretched as before."""


def _walk_from_edge_s(
    t_s: FloatArray,
    x_m: FloatArray,
    y_m: FloatArray,
    fixes: npt.NDArray[np.int64],
    edge_s: float,
    params: StationaryParams,
) -> float | None:
    """Seconds from the track's edge (``edge_s``: its first fix's time for a first stop, its
    last's for a last stop) to where a walk into the stop ended
    (:func:`city360.video_store.walk_in.walk_in_s`), or None when ``fixes`` (indices of the
    fixes between the edge and the stop's centre, bursts aside, ordered from the edge, so time
    reversed for a last stop) are noise around the stop, or :data:`WALK_IN_TEST` is off."""
    if not WALK_IN_TEST:
        return None
    return walk_in_s(
        np.abs(t_s[fixes] - edge_s),
        x_m[fixes],
        y_m[fixes],
        radius_m=params.radius_m,
        max_mps=STEP_RISE_MPS,
    )


RUNNING_MEDIAN_FIXES = 5
"""Fixes of the running median that tells a walk from noise and bursts (:func:`_walked`)."""
WALKED_AWAY_RADII = 1.5
"""A track's first or last stop is not stretched over fixes whose running median got this many
stop radii away (:func:`_stood_since`): a walk out and back, whatever its band crossing."""


def _running_median_distance(
    x_m: FloatArray, y_m: FloatArray, place: tuple[float, float]
) -> FloatArray:
    """Distance (metres) from ``place`` of the running median of :data:`RUNNING_MEDIAN_FIXES`
    fixes (fewer when there are fewer), one per window, in the fixes' order: one noisy fix
    does not move it."""
    count = min(RUNNING_MEDIAN_FIXES, x_m.shape[0])
    rx = np.median(np.lib.stride_tricks.sliding_window_view(x_m, count), axis=1)
    ry = np.median(np.lib.stride_tricks.sliding_window_view(y_m, count), axis=1)
    return np.asarray(np.hypot(rx - place[0], ry - place[1]), np.float64)


def _stood_since(
    t_s: FloatArray,
    x_m: FloatArray,
    y_m: FloatArray,
    start: int,
    *,
    stop: int,
    centre: tuple[float, float],
    params: StationaryParams,
) -> int:
    """From fix ``start`` towards ``stop`` (exclusive; -1: the track's start, n: its end), the
    farthest fix up to which the camera still stood at ``centre``: at least ``share`` of the
    fixes passed lie within ``radius_m`` of it, and that fix does, and the fixes passed did not
    walk away and back (:func:`_walked`, the test the gap joiner uses). A short video that
    walks in, stops and walks out keeps its walking; one that walks 15 m out and back before
    a stop keeps that walk (most of its fixes lie near the stop, so the share alone took it)."""
    step = -1 if stop < start else 1
    order = np.arange(start, stop, step)
    if len(order) == 0:
        return start
    near = np.hypot(x_m[order] - centre[0], y_m[order] - centre[1]) <= params.radius_m
    share = np.cumsum(near) / np.arange(1, len(order) + 1)
    good = np.flatnonzero(near & (share >= params.share))
    if len(good) == 0:
        return start
    reach = int(good[-1])
    xs, ys = x_m[order[: reach + 1]], y_m[order[: reach + 1]]
    distance = _running_median_distance(xs, ys, centre)
    left = np.flatnonzero(distance > params.radius_m)
    if left.shape[0] == 0:
        return int(order[reach])
    passed = np.sort(order[: reach + 1])
    far = float(distance.max()) > WALKED_AWAY_RADII * params.radius_m
    if not far and not _walked(t_s[passed], x_m[passed], y_m[passed], centre, params.radius_m):
        return int(order[reach])
    # stop before the walk: at the last fix within half the radius before the running
    # median first left the radius (where the walk away began to cross the band)
    close = np.hypot(xs - centre[0], ys - centre[1]) <= params.radius_m / 2
    before = np.flatnonzero(close[: int(left[0]) + 1])
    return int(order[before[-1]]) if before.shape[0] else start


BRISK_WALK_MPS = 2.0
"""A camera carried on foot crosses half the radius no faster than this, metres a second."""


def _walked(
    t_s: FloatArray, x_m: FloatArray, y_m: FloatArray, place: tuple[float, float], radius_m: float
) -> bool:
    """Whether the fixes of a gap between two stops at ``place`` walked away from it and back:
    their running median (:data:`RUNNING_MEDIAN_FIXES`; one noisy fix does not move it) left
    ``radius_m`` and either crossed the band between half the radius and the radius the way a
    walk does (:func:`_crossed_band`) or the fixes rose away from the place and fell back
    along ramps no steeper than :data:`STEP_RISE_MPS` (:func:`_ramped`). An urban-canyon burst
    *steps* away and back, so a stop broken by bursts is still one stop. The band count alone
    judges a brisk walk on the two or three fixes that cross 4 m of band, and one noisy fix
    ends it (1.4 m/s, 12 m out and back under 3 m of noise: walked 74 % of the time); the
    ramp is fitted to all the fixes of the way out and of the way back (91 % with both)."""
    if x_m.shape[0] < 2:
        return False
    distance = _running_median_distance(x_m, y_m, place)
    away = np.flatnonzero(distance > radius_m)
    if away.shape[0] == 0:
        return False
    return _crossed_band(t_s, distance, away, radius_m) or _ramped(
        t_s, x_m, y_m, place, radius_m, distance, away
    )


def _crossed_band(
    t_s: FloatArray, distance: FloatArray, away: npt.NDArray[np.intp], radius_m: float
) -> bool:
    """The band test of :func:`_walked`, on the running median's ``distance`` from the place
    (metres, per fix) and the fixes ``away`` where it is beyond ``radius_m`` (not empty): the
    median must get there the way a walk does, continuously: it crosses the
    band between half the radius and the radius in one run of at least half the radius at
    :data:`BRISK_WALK_MPS`, on its way out and on its way back wherever the gap shows that
    crossing (a gap that starts or ends outside half the radius shows only one of them;
    :func:`_crossing`). An urban-canyon burst *steps* away and back (the median of a few fixes
    jumps from the place to the burst's offset in one fix), so a stop broken by bursts is still
    one stop; and the median of a standing receiver's noisy fixes wanders into the band and out
    again anywhere in the gap (canyon fixes 5 m RMS), which is no crossing. When the gap shows
    neither crossing, the time the median spends in the band anywhere counts."""
    dt = np.diff(t_s)
    step_s = float(np.median(dt)) if dt.size else 1.0
    need_s = radius_m / 2 / BRISK_WALK_MPS
    crossings = [
        c
        for c in (
            _crossing(distance[: away[0]][::-1], radius_m),
            _crossing(distance[away[-1] + 1 :], radius_m),
        )
        if c is not None
    ]
    if not crossings:
        in_band = (distance > radius_m / 2) & (distance <= radius_m)
        return float(in_band.sum()) * step_s >= need_s
    return min(crossings) * step_s >= need_s


def _crossing(distance: FloatArray, radius_m: float) -> int | None:
    """How many of ``distance`` (running-median distances from a stop, metres, starting next
    to a sample beyond ``radius_m`` and going away from it in time) lie between half the radius
    and the radius before the first one within half the radius: the samples a walk takes to
    cross that band. None when none comes within half the radius (the crossing is not in the
    gap)."""
    inside = np.flatnonzero(distance <= radius_m / 2)
    return int(inside[0]) if inside.shape[0] else None


STEP_RISE_MPS = 3.0
"""A rise away from a stop or a fall back to it faster than this, m/s, is a step (a burst's)
to :func:`_ramped`, not a walk (walkers are under :data:`BRISK_WALK_MPS`; the fitted speed of
a walk under 3-5 m of noise comes out faster than it was)."""
RISE_GRID_S = 0.5
"""Resolution of the start and the duration of the ramp :func:`_rise_mps` fits, seconds (on
spans up to :data:`RISE_GRID_STEPS` of it)."""
RISE_GRID_STEPS = 240
"""Most grid steps :func:`_rise_mps` searches a span in: a longer span (a track's first stop
of minutes) gets a coarser grid, so the search stays about ``RISE_GRID_STEPS`` squared times
the fixes (a 21-minute stop at 1 Hz took 16 s on the 0.5 s grid)."""


def _ramped(
    t_s: FloatArray,
    x_m: FloatArray,
    y_m: FloatArray,
    place: tuple[float, float],
    radius_m: float,
    distance: FloatArray,
    away: npt.NDArray[np.intp],
) -> bool:
    """The ramp test of :func:`_walked` (``distance`` and ``away`` as for :func:`_crossed_band`):
    the fixes' distance from ``place`` along the direction of the fixes out there (their median)
    rises on the way out (the gap's fixes up to the running median's farthest point) and falls on
    the way back (from there to the gap's end) no faster than :data:`STEP_RISE_MPS`
    (:func:`_rise_mps`). A side is judged where the gap shows it (its running median comes within
    half the radius); a gap that shows neither is not a walk to this test."""
    half = (min(RUNNING_MEDIAN_FIXES, x_m.shape[0]) - 1) // 2  # median k is centred on fix k+half
    peak = int(np.argmax(distance))
    apex = peak + half
    far = away + half
    to_far = (float(np.median(x_m[far])) - place[0], float(np.median(y_m[far])) - place[1])
    length = max(math.hypot(*to_far), 1e-9)
    along = ((x_m - place[0]) * to_far[0] + (y_m - place[1]) * to_far[1]) / length
    speeds = []
    if (distance[:peak] <= radius_m / 2).any():  # the way out
        speeds.append(_rise_mps(t_s[: apex + 1], along[: apex + 1]))
    if (distance[peak:] <= radius_m / 2).any():  # the way back, backwards in time
        speeds.append(_rise_mps((t_s[-1] - t_s[apex:])[::-1], along[apex:][::-1]))
    return bool(speeds) and max(speeds) <= STEP_RISE_MPS


def _rise_mps(t_s: FloatArray, along_m: FloatArray) -> float:
    """Speed (m/s; inf for a step) of the ramp that fits ``along_m`` (metres from a stop at
    times ``t_s``, seconds, increasing) best in absolute deviation (one outlier does not
    bend it): 0 until its start, then linear up to the level of the last three fixes, then
    that level; start and duration on a :data:`RISE_GRID_S` grid (coarser on a span of more
    than :data:`RISE_GRID_STEPS` of it)."""
    if t_s.shape[0] < 3:
        return math.inf
    level = float(np.median(along_m[-3:]))
    if level <= 0.0:
        return math.inf
    grid_s = max(RISE_GRID_S, float(t_s[-1] - t_s[0]) / RISE_GRID_STEPS)
    best_cost, best_s = math.inf, 0.0
    for start in np.arange(t_s[0], t_s[-1], grid_s):
        durations = np.arange(0.0, t_s[-1] - start + 1e-9, grid_s)
        share = np.clip((t_s[None, :] - start) / np.maximum(durations[:, None], 1e-9), 0.0, 1.0)
        share[0] = t_s > start  # duration 0: a step
        cost = np.abs(along_m[None, :] - level * share).sum(axis=1)
        k = int(np.argmin(cost))
        if cost[k] < best_cost:
            best_cost, best_s = float(cost[k]), float(durations[k])
    return level / best_s if best_s > 0.0 else math.inf


EXCURSION_TRIM = False
"""Whether a stop span's start or end is trimmed where its fixes walk out from the stop and back
(:func:`_trim_excursions`); False (the default): the span as the window test found it. On
(with ``CleanParams.excursion_burst_share``, which keeps canyon tracks untrimmed) no walk row
is worse and Kamppi's class B rows reach their targets with OSM, but three stop rows get
worse: old town coverage+stops 0 without OSM turns 0.958 -> 0.901 (a 7 m walk from a
junction into a stand, once pinned as a clean step, is left to 3 m of noise), Kamppi
wander+stops camera 41 turns 0.925 -> 0.894, old town coverage+stops 1 without OSM P
1.000 -> 0.955 (design notes, round twenty-four, branch stopguard24). Round twenty-five
(trim25) traced the first: that stand is itself a true junction 7 m from the one the walk
turned at; pinned, the build merged the two (one place to the scorer, which contracts true
streets under 8 m); trimmed, with the walk line or without, it builds both (checked),
and the scorer judges the place's turns at one of them (6 of the 8 lost turns; the line
takes back the other 2). :data:`EXCURSION_WALK_LINE` takes back other turns but costs
junctions without OSM; both stay off."""
EXCURSION_WALK_LINE = False
"""With :data:`EXCURSION_TRIM`: whether the walk a trim cuts off a span is drawn as the fit's
straight line from the stand point (pinned) to the walk's far end (:func:`_draw_walk`), the
fixes kept at their times; False (the default): its fixes are left as measured. Measured with
the trim on (design notes, round twenty-five, branch trim25): it takes back the turns the
trim cost on Kamppi wander+stops camera 41 with OSM (0.902 -> 0.941; main 0.938) and old town
coverage+stops 1's P (1.000, R 1.000, turns 0.838 -> 0.930), but without OSM it costs
junctions where the trim alone did not: Kamppi wander+stops camera 41 P 0.857 -> 0.765,
camera 40 P 0.909 -> 0.833, old town wander+stops 1 R 1.000 -> 0.950 (a drawn line in the
fit's direction, a few degrees off, is a confident spur where noise averaged away). Old town
coverage+stops 0's lost turns are the build resolving two true junctions 7 m apart, which the
scorer contracts into one place; the line does not change that."""
EXCURSION_S = 20.0
"""The longest way out or back the fit tries, seconds."""
EXCURSION_FAR_END_S = 5.0
"""The walk's far end lies at most this far inside the span's edge, seconds: the window test
stretches a span over a walk beside it only by a few seconds, where a standing receiver's
correlated drift makes a tent anywhere (Helsinki stop twins, seed 0: the false ones had their
far end 1-20 s inside, the walks 0-5 s)."""
EXCURSION_MIN_RADII = 0.8
"""Shortest walk out, in stop radii (6 m at 7.5 m): shorter tents were a phone's standing
drift on the Helsinki stop twins (4.0-6.3 m), the walks 6.2-14 m."""
EXCURSION_FIT_S = 40.0
"""Seconds of fixes, from a span's edge inwards, the walk out and back is fitted on."""
EXCURSION_SCORE = 30.0
"""How much of the fixes' scatter the walk out and back must explain: the drop in squared
residuals over a constant point, in units of the per-axis noise variance of the fixes where
the camera stood (as :data:`city360.video_store.walk_in.WALK_IN_SCORE`)."""
EXCURSION_MIN_MPS = 0.5
"""Slowest pace of the way out or back, metres a second (slower is the receiver's drift)."""
EXCURSION_MIN_STANDING_S = 8
"""Fewest per-second medians after the walk (where the camera stood), seconds."""


def _tent_shapes(v_s: FloatArray, limit_s: float) -> tuple[FloatArray, FloatArray]:
    """Every walk out and back the fit tries, on per-second times ``v_s`` (seconds from a
    span's edge inwards): shapes (one row each) that are 1 at the far end ``p``, fall to 0 at
    ``p + back`` inwards and at ``p - out`` towards the edge (below 0: the way out is beyond
    the edge), and the parameters ``(p, out, back)`` per row."""
    rows = []
    params = []
    durations = np.arange(2.0, EXCURSION_S + 1e-9, 1.0)
    for p in np.arange(0.0, min(limit_s, EXCURSION_FAR_END_S) + 1e-9, 1.0):
        for back in durations:
            inward = np.clip(1.0 - (v_s - p) / back, 0.0, 1.0)
            for out in durations:
                outward = np.clip(1.0 - (p - v_s) / out, 0.0, 1.0)
                rows.append(np.where(v_s >= p, inward, outward))
                params.append((p, out, back))
    return np.array(rows), np.array(params)


@dataclass(frozen=True, slots=True)
class _Excursion:
    """A walk out from a stop and back beside a span's edge, as :func:`_excursion_end_s` fits
    it: times in seconds from the edge inwards, ``far_m`` metres from where the camera stood
    to the walk's far end (the fit's tent at 1)."""

    walked_s: float
    """Where the walk began (or ended: time runs inwards): the trimmed span's new edge."""
    far_s: float
    """Where the walk reached its far end."""
    far_m: tuple[float, float]
    """The far end's offset from the stand, metres (x, y)."""


def _excursion_end_s(
    v_s: FloatArray, x_m: FloatArray, y_m: FloatArray, radius_m: float
) -> _Excursion | None:
    """Seconds from a span's edge inwards (``v_s``, increasing from 0; ``x_m``/``y_m`` the fixes)
    to where a walk out from the stop and back, beside the edge, began (or ended: time runs
    inwards), or None when the fixes are noise around the stop. The walk is a tent fitted
    to the per-second medians (its far end within :data:`EXCURSION_FAR_END_S` of the edge; its
    way out may lie beyond the edge): it must explain :data:`EXCURSION_SCORE` noise variances,
    reach :data:`EXCURSION_MIN_RADII` of ``radius_m``, at a walker's pace each way it shows,
    and a burst's step (held, then gone) must not fit better."""
    v, x, y = per_second_medians(v_s, x_m, y_m)
    if v.shape[0] < EXCURSION_MIN_STANDING_S + 3:
        return None
    xy = np.column_stack([x, y])
    centred = xy - xy.mean(axis=0)
    limit = min(EXCURSION_S, float(v[-EXCURSION_MIN_STANDING_S]))
    shapes, fitted = _tent_shapes(v, limit)
    s = shapes - shapes.mean(axis=1, keepdims=True)
    var = (s * s).sum(axis=1)
    ok = var > 1e-9
    cov = s @ centred  # (shapes, 2)
    drop = np.where(ok, (cov * cov).sum(axis=1) / np.where(ok, var, 1.0), 0.0)
    k = int(np.argmax(drop))
    p, out, back = (float(value) for value in fitted[k])
    offset = cov[k] / var[k]
    length = math.hypot(*offset)
    if length < EXCURSION_MIN_RADII * radius_m:
        return None
    if not EXCURSION_MIN_MPS <= length / back <= STEP_RISE_MPS:
        return None
    if p - out >= 0.0 and not EXCURSION_MIN_MPS <= length / out <= STEP_RISE_MPS:
        return None
    standing = xy[v >= p + back]
    if standing.shape[0] < EXCURSION_MIN_STANDING_S:
        return None
    mad = np.median(np.abs(standing - np.median(standing, axis=0)), axis=0) * 1.4826
    variance = max(float(np.mean(mad * mad)), 1e-6)
    if drop[k] / variance < EXCURSION_SCORE:
        return None
    # a burst: the offset held from the edge and gone at once (walk_in's margin)
    held = [(v < d).astype(np.float64) for d in np.arange(1.0, limit + 1e-9)]
    for step in held:
        st = step - step.mean()
        sv = float((st * st).sum())
        if sv > 1e-9:
            sc = st @ centred
            if float((sc * sc).sum()) / sv > drop[k] + STEP_MARGIN * variance:
                return None
    return _Excursion(walked_s=p + back, far_s=p, far_m=(float(offset[0]), float(offset[1])))


def _trim_excursions(
    t_s: FloatArray,
    x_m: FloatArray,
    y_m: FloatArray,
    steady: npt.NDArray[np.bool_],
    span: tuple[int, int],
    params: StationaryParams,
) -> tuple[tuple[int, int], list[tuple[float, _Excursion]]]:
    """``span`` (fix indices, inclusive) without a walk out from the stop and back at either
    end (:func:`_excursion_end_s`), and each walk cut off: the time of the span's edge it was
    cut at (seconds) and its fit, whose times count from that edge into the span.

    The window test takes a short walk beside a stop for part of it (8.4 m into a stub and
    back in 12 s keeps the fixes within the radius). A walk moves the fixes away from the stop
    steadily for several seconds and back, where noise scatters around it; the span then
    ends where the walk out began (starts where the walk back ended), and the fixes beyond
    stay a walk. Bursts are left out of the test. A span's edge at the track's first or last
    fix is left alone: the walk into a track's first stop (out of its last) is
    :func:`_walk_from_edge_s`'s, and this looser fit (its far end anywhere near the edge)
    took a standing receiver's drift for one there (1 of 40 in ``test_walk_in.py``)."""
    first, last = span
    inside = np.arange(first, last + 1)
    inside = inside[steady[inside]]
    walks: list[tuple[float, _Excursion]] = []
    for at_end in (True, False):
        edge = last if at_end else first
        if edge in (0, t_s.shape[0] - 1):
            continue  # the track's own edge: a walk in there is walk_in_s's (_standing_centres)
        order = inside[::-1] if at_end else inside
        v_all = np.abs(t_s[order] - t_s[edge])
        fit = v_all <= EXCURSION_FIT_S
        walk = _excursion_end_s(v_all[fit], x_m[order][fit], y_m[order][fit], params.radius_m)
        if walk is None:
            continue
        walks.append((float(t_s[edge]), walk))
        if at_end:
            last = int(np.searchsorted(t_s, t_s[edge] - walk.walked_s, side="right")) - 1
        else:
            first = int(np.searchsorted(t_s, t_s[edge] + walk.walked_s, side="left"))
        if last < first:
            return (first, first), []
    return (first, last), walks


def _spans_with_points(
    t_s: FloatArray, x_m: FloatArray, y_m: FloatArray, params: StationaryParams
) -> tuple[list[tuple[int, int]], FloatArray, FloatArray, list[tuple[int, float, _Excursion]]]:
    """The joined spans, per fix the point it stands at (NaN where no centre says), and the
    walks :data:`EXCURSION_TRIM` cut off them: ``(stand, edge_s, walk)``, the kept span's
    fix next to the walk, the time of the span's edge before the trim, the walk's fit."""
    n = t_s.shape[0]
    px = np.full(n, np.nan)
    py = np.full(n, np.nan)
    if n < 3 or t_s[-1] - t_s[0] < params.window_s:
        return [], px, py, []
    steady = ~burst_mask(t_s, x_m, y_m)
    spans: list[tuple[int, int]] = []
    for first, last, cx, cy in _standing_centres(t_s, x_m, y_m, params, steady=steady):
        px[first : last + 1], py[first : last + 1] = cx, cy
        if spans and first <= spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], max(spans[-1][1], last))
        else:
            spans.append((first, last))

    def joins(before: tuple[int, int], first: int) -> bool:
        # a burst in the middle of a long stop breaks it: join spans less than a window apart
        # where the camera stood at the same place before and after the gap and, bursts
        # aside, did not leave it in between (a walk out and back between two stops did)
        end = before[1]
        return (
            t_s[first] - t_s[end] < params.window_s
            and math.hypot(px[first] - px[end], py[first] - py[end]) <= params.radius_m
            and not _walked(
                t_s[end : first + 1],
                x_m[end : first + 1],
                y_m[end : first + 1],
                (float(px[first]), float(py[first])),
                params.radius_m,
            )
        )

    joined: list[tuple[int, int]] = []
    for first, last in spans:
        if joined and joins(joined[-1], first):
            joined[-1] = (joined[-1][0], last)
        elif (
            len(joined) >= 2
            and t_s[joined[-1][1]] - t_s[joined[-1][0]] < params.min_span_s
            and joins(joined[-2], first)
        ):
            # a burst that stood a few seconds at its offset is a short "stop" of its own
            # between the two halves of the real one: it is too short to be kept, must not
            # keep them apart, and is no place the camera stood at
            burst = slice(joined[-1][0], joined[-1][1] + 1)
            px[burst], py[burst] = np.nan, np.nan
            joined[-2:] = [(joined[-2][0], last)]
        else:
            joined.append((first, last))
    kept = [(a, b) for a, b in joined if t_s[b] - t_s[a] >= params.min_span_s]
    walks: list[tuple[int, float, _Excursion]] = []
    if EXCURSION_TRIM and params.trim_excursions:
        trimmed = []
        for span in kept:
            (a, b), cut = _trim_excursions(t_s, x_m, y_m, steady, span, params)
            if t_s[b] - t_s[a] < params.min_span_s:
                continue
            trimmed.append((a, b))
            for edge_s, walk in cut:
                walks.append((b if edge_s > t_s[b] else a, edge_s, walk))
        kept = trimmed
    return kept, px, py, walks


def stationary_spans(
    t_s: FloatArray, x_m: FloatArray, y_m: FloatArray, params: StationaryParams
) -> list[tuple[int, int]]:
    """``[(first, last), ...]`` index ranges (inclusive) of fixes where the camera stood still.

    ``t_s`` increasing (seconds), ``x_m``/``y_m`` the fixes (metres). Spans are in order and
    do not overlap.
    """
    return _spans_with_points(t_s, x_m, y_m, params)[0]


def pin_stationary(
    t_s: FloatArray, x_m: FloatArray, y_m: FloatArray, params: StationaryParams
) -> tuple[FloatArray, FloatArray, list[tuple[int, int]]]:
    """Copies of ``x_m``/``y_m`` with every fix of a stationary span moved to where the camera
    stood (the median point of the window around it; across a joined gap, between the points
    before and after it), and the spans (see :func:`stationary_spans`). The point may creep
    with the receiver's drift; the smoother's speed test then freezes it (:mod:`.clean`)."""
    x, y = x_m.copy(), y_m.copy()
    spans, px, py, walks = _spans_with_points(t_s, x_m, y_m, params)
    for first, last in spans:
        span = slice(first, last + 1)
        known = np.isfinite(px[span])
        x[span] = np.interp(t_s[span], t_s[span][known], px[span][known])
        y[span] = np.interp(t_s[span], t_s[span][known], py[span][known])
    if EXCURSION_WALK_LINE:
        for stand, edge_s, walk in walks:
            _draw_walk(t_s, x, y, stand, edge_s, walk)
    return x, y, spans


def _draw_walk(
    t_s: FloatArray, x_m: FloatArray, y_m: FloatArray, stand: int, edge_s: float, walk: _Excursion
) -> None:
    """Move (in place) the fixes of ``walk``, cut off a span whose edge was at ``edge_s`` and
    whose pinned fix ``stand`` is now next to it, onto the fit's straight line from the stand
    point to the walk's far end, at the times they were taken (:data:`EXCURSION_WALK_LINE`)."""
    inwards = 1.0 if t_s[stand] > edge_s else -1.0  # the span lies later than its old edge
    far_s = edge_s + inwards * walk.far_s
    stand_s = float(t_s[stand])
    low, high = sorted((far_s, stand_s))
    on = (t_s >= low) & (t_s <= high)
    on[stand] = False
    share = (t_s[on] - stand_s) / (far_s - stand_s)
    x_m[on] = x_m[stand] + share * walk.far_m[0]
    y_m[on] = y_m[stand] + share * walk.far_m[1]
