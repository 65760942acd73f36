"""Clean a raw GPS track into a smooth, metric trajectory on the GPS clock.

Steps, each because real receivers do it to us:

1. keep usable fixes (:func:`~city360.video_store.gps.track.validate_track`);
2. project to the city's metric CRS (x east, y north, metres);
3. drop impossible jumps: a fix reached *and* left faster than ``max_speed_mps`` is a spike;
   a step to a new place that the track then stays at, far faster than the walk around it
   (:func:`.jumps.find_jumps`), is a break: the receiver lost the position and found it elsewhere.
   Each side of a break is smoothed on its own and the span between is recorded in
   ``breaks_s``, so the jump stays a jump (ingest splits the walk there) instead of being
   smoothed into a fast sidestep that the pose graph would take for a street;
   then, within each side of a break, every fix of a span where the camera stood still (told
   by how far the fixes get over a minute, :mod:`.stationary`: drift and canyon bursts fool a
   speed test) is moved to the span's median point, so a stop is one place however the noise
   wandered;
4. a constant-velocity Kalman filter on a fine time grid with a chi-square innovation gate
   (rejects the outliers the speed gate misses), then a Rauch–Tung–Striebel backward pass,
   run again ``robust_passes`` times with each fix reweighted on its residual to the track
   (Huber weights, :func:`~city360.video_store.smooth.robust_rts_smooth`: outliers under the
   gate stop pulling the track);
   when the receiver reported its fixes' quality (horizontal accuracy in metres, or HDOP:
   :mod:`~city360.video_store.gps.quality`) and ``use_fix_quality`` is on, each fix gets its
   own measurement sigma from it (clamped; ``gps_sigma_m`` for a fix that reports none), else
   every fix has ``gps_sigma_m``. Fixes that say they have no position (GPX ``<fix>none``,
   NMEA GGA quality 0, GPMF GPSF 0, CAMM fix 0) never get this far: step 1 drops them;
5. across a gap in the fixes longer than ``max_gap_s`` (a logger paused, a dead spot, a
   stop indoors) the smoothed track runs straight from the last fix before to the first fix
   after: a constant-velocity smoother left to itself carries the last velocity into the gap
   and back, and invented a 100 m excursion in 21 minutes without fixes on a real walk;
   with ``gap_arcs``, a vehicle's shorter gap whose bridge is too short for its speed is
   redrawn as long as the speed says (:mod:`.gap_arcs`: a car that turned in it);
6. heading from the smoothed velocity; spans slower than ``stationary_speed_mps`` for at least
   ``stationary_min_s`` are collapsed to one point holding the heading they were entered with,
   so standing still neither adds distance nor spins the view; inside a stationary span a
   fast blip of up to ``stop_blip_s`` does not split that point in two.

The smoother lives in :mod:`.smooth` with the heading-aided one ingest uses later.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from city360.errors import GpsError
from city360.geo import LocalProjection
from city360.video_store.end_fixes import end_outliers
from city360.video_store.gap_arcs import GapArcParams, stretch_gaps
from city360.video_store.gps.quality import QualityNoise, horizontal_sigma_m
from city360.video_store.gps.track import GpsTrack, usable_mask, validate_track
from city360.video_store.gps_bursts import BurstParams, burst_mask
from city360.video_store.jumps import (
    JUMP_CONTEXT_S,
    MAX_EXCURSION_S,
    drop_speed_spikes,
    find_jumps,
)
from city360.video_store.smooth import robust_rts_smooth
from city360.video_store.stationary import StationaryParams, pin_stationary
from city360.video_store.usual_speed import usual_speed_mps

__all__ = [
    "JUMP_CONTEXT_S",
    "MAX_EXCURSION_S",
    "CleanParams",
    "SmoothTrack",
    "clean_track",
    "drop_speed_spikes",
    "find_jumps",
]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class CleanParams:
    """Cleaning settings. Defaults suit a walking or driving camera with phone-grade GPS."""

    max_speed_mps: float = 45.0
    """Speed no camera reaches; a fix that needs it both ways is dropped."""
    gps_sigma_m: float = 3.0
    """Horizontal GPS noise (one sigma, per axis), metres."""
    accel_sigma: float = 0.6
    """Process noise: spectral density of acceleration, m²/s³ (how sharply the camera turns);
    the least the smoother uses (see ``turn_rate_density``)."""
    turn_rate_density: float = 0.3
    """Spectral density of the camera's turn rate, rad²/s: a camera at speed ``v`` that turns
    as readily as a walker needs ``v²`` times as much acceleration for it, so the smoother's
    process noise is ``max(accel_sigma, turn_rate_density * v²)`` with ``v`` the piece's usual
    moving speed (:func:`.usual_speed.usual_speed_mps`); 0.3 puts a 1.4 m/s walker at
    ``accel_sigma``."""
    gate_sigma: float = 4.0
    """Innovation gate (Mahalanobis distance) beyond which a fix is an outlier."""
    grid_hz: float = 10.0
    """Rate of the smoothed output, Hz."""
    stationary_speed_mps: float = 0.25
    stationary_min_s: float = 2.0
    stop_blip_s: float = 20.0
    """Inside a stationary span (:mod:`.stationary`) of a track that bursts (below), a run of
    smoothed samples faster than ``stationary_speed_mps`` lasting at most this long between
    slow ones is slow too, so the stop is collapsed to one point, not split in two there,
    seconds. The pinned fixes of a stop creep with a canyon receiver's correlated error, and
    where they crept faster for a second or two a long stop became two points, each the mean
    of part of it (a couple of fixes moved a row by 0.15 m). 0: no such joining."""
    stop_blip_burst_share: float = 0.05
    """The share of a track's fixes the burst test must mask (:func:`.gps_bursts.burst_mask`) for
    ``stop_blip_s`` to apply to it: a receiver in an urban canyon (9.5-25 % on the Hamburg
    canyon twins), whose stops creep with its error. A track with no bursts keeps every blip:
    a phone in the open creeps less, and a blip inside its stop is more often the walker's
    own shuffle (joined, 12 of 30 Hamburg phone walks got 0.005-0.17 m worse). 0: every
    track."""
    burst_process_scale: float = 1.0
    """On a track that bursts (the burst test masks at least ``burst_process_share`` of its
    fixes: a receiver in an urban canyon), the smoother's process noise (``accel_sigma`` and
    ``turn_rate_density``) is multiplied by this. A canyon receiver's error is correlated over
    tens of seconds (multipath; more than its reported quality says), and a smoother that
    takes its fixes for white noise reads that slow wander as the camera's motion; a stiffer
    one averages over it. At 0.5 the pose-only Hamburg canyon twins get better (seeds 0-19:
    mean RMSE 3.051 -> 2.966 m, rows at every target 25 -> 31 of 40), but the filmed canyon
    walk of seed 1 gets worse (ingested frame poses 2.893 -> 3.252 m: ingest refuses its
    heading-aided poses over one 10.09 m step of the plain track; accepted, they are 2.941 m),
    so it is off (design notes, "Canyon walks, part six"). A track that does not burst keeps
    the process noise as it is (a phone walker's own turns; at 0.1 the phone walks got
    0.02-0.1 m worse, design notes round eight). 1: never."""
    burst_process_share: float = 0.05
    """The share of a track's fixes the burst test must mask for ``burst_process_scale`` to
    apply (as ``stop_blip_burst_share``: Hamburg canyon twins mask 9.5-25 %, every phone,
    camera and dense twin of the suite 0 %; the one unseen-window twin seen above 0 %, a
    Nerima one-way phone walk, 7.9 %)."""
    excursion_burst_share: float | None = 0.05
    """A track whose burst test masks at least this share of its fixes keeps its stop spans
    as the window test found them, untrimmed by :data:`.stationary.EXCURSION_TRIM`
    (``StationaryParams.trim_excursions``): a receiver in an urban canyon. Its correlated error
    at a stand (5 m, 10-30 m bursts half masked) draws the walk out and back that the trim
    looks for, which a phone's or a camera's does not (as ``stop_blip_burst_share``, 0.05:
    Hamburg canyon twins 9.5-25 %, phone and camera twins 0 %). On the suite's walk rows the
    trim alone cut two canyon stands where the walker stood throughout (canyon seed 1:
    RMSE 2.848 -> 3.025 m, junction P 1 -> 0 without OSM); with this guard it cuts only the
    phone walk of seed 1, where the walker did walk (design notes, round twenty-four, branch
    stopguard24). None: every track is trimmed."""
    max_gap_s: float = 10.0
    """Fixes further apart in time than this are joined by a straight line, seconds."""
    gap_arcs: GapArcParams | None = field(default_factory=GapArcParams)
    """A vehicle's gap of 3 s up to ``max_gap_s`` whose smoothed bridge is too short for the
    speed on both sides is redrawn as a curve that long (:mod:`.gap_arcs`); a route along the
    map that fits replaces the arc (:func:`.map_bridge.bridge_gaps`). None: off. On: on the
    walk twins (SF camera 0-39, SF phone, Hamburg phone and canyon 0-9) it redraws two gaps,
    SF camera seeds 2 and 20, the same 8 s dropout through a double bend (row 3.059 -> 2.441
    and 2.483 -> 2.011 m without OSM; 2.271 -> 2.284 and 2.005 -> 2.001 m with OSM); every
    other row and every junction, street and turn figure is equal (design notes, round
    twenty-nine, branch sfcam29)."""
    jump_min_m: float = 25.0
    """A step between consecutive fixes shorter than this is never a break, metres."""
    lone_fix_farther: bool = False
    """:func:`find_jumps` takes fix ``k`` for a lone outlier (the track skips it) only when it
    lies farther from the fix before it than the fix after it does, or when no short excursion
    (back within :data:`MAX_EXCURSION_S`) follows it; False: whenever skipping it is no jump.
    Off: on, Nerima SW one-way phone seed 5 goes 2.318 -> 1.864 m (no false burst), but
    Hamburg canyon twins 0-29 move both ways (14 better, 14 worse; design notes, round
    twenty, branch sfturn)."""
    jump_speed_factor: float = 4.0
    """A step at least ``jump_min_m`` long and faster than this many times the median speed
    of the steps within ``JUMP_CONTEXT_S`` around it, plus 2 m/s, is a break."""
    stationary: StationaryParams = field(default_factory=StationaryParams)
    """The window test for standing still from the fixes (its radius is at least 2.5
    ``gps_sigma_m``)."""
    use_fix_quality: bool = True
    """Weigh each fix by the accuracy or HDOP it reports (when the track has them)."""
    quality_noise: QualityNoise = field(default_factory=QualityNoise)
    """How a reported accuracy or HDOP becomes a sigma (UERE, clamps)."""
    robust_passes: int = 2
    """Reweighted smoothing passes after the first (:func:`.smooth.robust_rts_smooth`)."""
    huber_k: float = 3.0
    """Residual, in robust sigmas, beyond which a fix's sigma grows with its residual."""
    drop_end_outliers: bool = True
    """Drop a first or last fix (or a run of them) out of the track's reach
    (:func:`.end_fixes.end_outliers`): the two-sided outlier tests cannot judge it, and the
    jump test blamed the good fix before a last fix 32 m off. Judged from one side alone it
    also dropped good end fixes next to an outlier or a burst a few fixes in; with
    ``end_way_back`` it does not (design notes, "A track's first or last fix, judged against
    the way back")."""
    end_speed_factor: float = 2.0
    """An end fix is out of reach when it stands further from the fix next to it than this many
    times the track's usual moving speed, plus 2 m/s, carries it, plus the two fixes' noise
    (:func:`.end_fixes.end_outliers`). Lower than ``jump_speed_factor``: the allowance grows
    with the time to that fix, and after a 4 s dropout a walker's last fix 44 m off passed at
    4 (Helsinki SE seed 19); at 2 a 1.3 m/s walker may still cover 4.6 m/s, a 30 km/h car
    17 m/s."""
    end_way_back: bool = True
    """Before an end run is dropped, look further in for the way back that makes the fixes
    inside it the off ones (a burst, or an outlier just inside the end:
    :func:`.end_fixes._steps_back_inside`); False: the end run is judged against the fix next
    to it alone (the rule of round seventeen)."""


@dataclass(frozen=True, slots=True)
class SmoothTrack:
    """A smoothed metric track on the GPS clock.

    ``t_s``: POSIX seconds (GPS clock), increasing; ``x_m``/``y_m``: metres in the city CRS;
    ``speed_mps``; ``heading_deg``: travel direction clockwise from north, unwrapped (may leave
    [0, 360) so that it interpolates linearly). ``dropped`` counts fixes rejected as outliers.
    """

    t_s: FloatArray
    x_m: FloatArray
    y_m: FloatArray
    speed_mps: FloatArray
    heading_deg: FloatArray
    dropped: int
    meas_t_s: FloatArray
    """The fixes that survived the speed gate: GPS time and metres (for later refinement)."""
    meas_x_m: FloatArray
    meas_y_m: FloatArray
    breaks_s: tuple[tuple[float, float], ...] = ()
    """GPS-time spans ``(last fix before, first fix after)`` of the jumps the track was cut
    at: no position is known inside one (:meth:`in_break`)."""
    meas_sigma_m: FloatArray | None = None
    """Per-fix measurement sigma of the fixes above, metres (one per axis), from their
    reported quality; None when the track reports none or quality is not used."""
    unusable: int = 0
    """Points of the file without a usable position, left out before cleaning (no fix, at
    lat 0, lon 0, out of range; a fix repeated at its time is not counted): not among
    ``dropped``."""
    cut_t_s: FloatArray | None = None
    """GPS times of the usable fixes the cleaning left out (spikes, end outliers, excursions,
    bursts), increasing; None when not recorded. :mod:`.cut_edges` reads it to find the kept
    fixes that stand beside a run of cut ones."""
    cut_x_m: FloatArray | None = None
    """Where the receiver put those fixes, metres (None when not recorded)."""
    cut_y_m: FloatArray | None = None
    cut_sigma_m: FloatArray | None = None
    """Their sigmas from their reported quality, as :attr:`meas_sigma_m`."""
    arc_gaps_s: tuple[tuple[float, float], ...] = ()
    """GPS-time spans ``(last fix before, first fix after)`` of the gaps redrawn as long as the
    speed says (``CleanParams.gap_arcs``): a guess of the path, which a route along the map
    that fits replaces (:func:`.map_bridge.bridge_gaps`)."""

    def in_break(self, t_s: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """Mask of GPS times strictly inside one of :attr:`breaks_s`."""
        t = np.asarray(t_s, np.float64)
        mask = np.zeros(t.shape, bool)
        for start, end in self.breaks_s:
            mask |= (t > start) & (t < end)
        return mask

    @property
    def start_s(self) -> float:
        return float(self.t_s[0])

    @property
    def end_s(self) -> float:
        return float(self.t_s[-1])

    def sample(self, t_s: npt.ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``(x_m, y_m, heading_deg in [0, 360))`` at GPS times ``t_s`` (clamped to the span)."""
        t = np.asarray(t_s, np.float64)
        x = np.interp(t, self.t_s, self.x_m)
        y = np.interp(t, self.t_s, self.y_m)
        heading = np.mod(np.interp(t, self.t_s, self.heading_deg), 360.0)
        return x, y, heading


def _end_outliers(
    t_s: FloatArray,
    x_m: FloatArray,
    y_m: FloatArray,
    sigma_m: FloatArray | None,
    params: CleanParams,
) -> npt.NDArray[np.bool_]:
    """:func:`.end_fixes.end_outliers` with this track's usual speed and fix noise."""
    sigma = np.full(t_s.shape[0], params.gps_sigma_m) if sigma_m is None else sigma_m
    usual = usual_speed_mps(
        t_s, x_m, y_m, params.gps_sigma_m, moving_mps=params.stationary_speed_mps
    )
    return end_outliers(
        t_s,
        x_m,
        y_m,
        sigma,
        usual_mps=usual,
        speed_factor=params.end_speed_factor,
        max_burst_s=BurstParams().max_burst_s if params.end_way_back else None,
    )


def _collapse_stationary(
    t_s: FloatArray,
    x: FloatArray,
    y: FloatArray,
    speed: FloatArray,
    heading: FloatArray,
    params: CleanParams,
    *,
    stops_s: list[tuple[float, float]],
) -> None:
    """In place: freeze position and heading over long slow spans. ``stops_s``: the first and
    last fix times of the stationary spans (seconds), in which short fast runs do not break a
    slow span (:data:`CleanParams.stop_blip_s`, :func:`_slow_through_blips`)."""
    slow = speed < params.stationary_speed_mps
    if params.stop_blip_s > 0.0:
        slow = _slow_through_blips(t_s, slow, stops_s, params.stop_blip_s)
    n = slow.shape[0]
    k = 0
    while k < n:
        if not slow[k]:
            k += 1
            continue
        end = k
        while end < n and slow[end]:
            end += 1
        if t_s[end - 1] - t_s[k] >= params.stationary_min_s:
            span = slice(k, end)
            x[span] = x[span].mean()
            y[span] = y[span].mean()
            speed[span] = 0.0
            if k > 0:
                held = heading[k - 1]
            elif end < n:
                held = heading[end]
            else:
                held = heading[k]
            heading[span] = held
        k = end


def _slow_through_blips(
    t_s: FloatArray,
    slow: npt.NDArray[np.bool_],
    stops_s: list[tuple[float, float]],
    blip_s: float,
) -> npt.NDArray[np.bool_]:
    """``slow`` (per sample at times ``t_s``, seconds) with every run of fast samples lasting at
    most ``blip_s`` seconds (from the slow sample before it to the slow one after) inside one
    stop (``stops_s``: the stationary spans' first and last fix times, seconds) made slow.
    A stop's fixes are pinned to a point that creeps with the receiver's drift
    (:func:`.stationary.pin_stationary`); where it creeps faster for a few seconds the smoothed
    speed crosses the threshold, and the stop was split into two points, each the mean over
    half the stop, so two fixes more or less moved a long stop's point by metres. A real walk
    out of a stop and back is no stationary span, so it is not joined."""
    out = slow.copy()
    for first_s, last_s in stops_s:
        a, b = np.searchsorted(t_s, [first_s, last_s], side="left")
        inside = slow[a:b]
        fast = np.flatnonzero(~inside)
        if fast.shape[0] == 0:
            continue
        for run in np.split(fast, np.flatnonzero(np.diff(fast) > 1) + 1):
            lo, hi = int(run[0]), int(run[-1])
            if lo == 0 or hi == inside.shape[0] - 1:
                continue
            if t_s[a + hi + 1] - t_s[a + lo - 1] <= blip_s:
                out[a + lo : a + hi + 1] = True
    return out


def _bridge_gaps(
    grid: FloatArray,
    t_meas: FloatArray,
    x: FloatArray,
    y: FloatArray,
    vx: FloatArray,
    vy: FloatArray,
    max_gap_s: float,
) -> None:
    """In place: straight lines at constant speed across gaps of more than ``max_gap_s``
    between fixes (see the module docstring)."""
    for k in np.flatnonzero(np.diff(t_meas) > max_gap_s):
        t_a, t_b = float(t_meas[k]), float(t_meas[k + 1])
        a = int(np.searchsorted(grid, t_a, side="left"))
        b = min(int(np.searchsorted(grid, t_b, side="right")) - 1, grid.shape[0] - 1)
        if b - a < 2:
            continue
        share = (grid[a : b + 1] - grid[a]) / max(grid[b] - grid[a], 1e-9)
        x[a : b + 1] = x[a] + share * (x[b] - x[a])
        y[a : b + 1] = y[a] + share * (y[b] - y[a])
        duration = max(grid[b] - grid[a], 1e-9)
        vx[a + 1 : b] = (x[b] - x[a]) / duration
        vy[a + 1 : b] = (y[b] - y[a]) / duration


def clean_track(
    track: GpsTrack, projection: LocalProjection, *, params: CleanParams | None = None
) -> SmoothTrack:
    """Validate, project, de-spike, smooth and derive heading (see the module docstring)."""
    params = params or CleanParams()
    usable = validate_track(track)
    x, y = projection.to_xy(usable.lat, usable.lon)
    all_x, all_y = x, y  # the cut fixes are recorded where the receiver put them
    sigma = (
        horizontal_sigma_m(
            usable.quality, fallback_sigma_m=params.gps_sigma_m, noise=params.quality_noise
        )
        if params.use_fix_quality
        else None
    )
    # which of the usable fixes are still in: the per-fix sigmas follow them
    index = np.arange(len(usable))
    keep = drop_speed_spikes(usable.t_s, x, y, params.max_speed_mps)
    if params.drop_end_outliers:
        in_sigma = None if sigma is None else sigma[keep]
        keep[keep] = ~_end_outliers(usable.t_s[keep], x[keep], y[keep], in_sigma, params)
    t_meas, x, y, index = usable.t_s[keep], x[keep], y[keep], index[keep]
    jumps, outliers = find_jumps(t_meas, x, y, params)
    if outliers.any():  # excursions away and back: drop them, then find the real breaks
        t_meas, x, y = t_meas[~outliers], x[~outliers], y[~outliers]
        index = index[~outliers]
        jumps, _ = find_jumps(t_meas, x, y, params)
    dropped = int((~keep).sum()) + int(outliers.sum())
    cuts = [0, *(int(k) + 1 for k in jumps), t_meas.shape[0]]
    # bursts (stepped away and back) are outliers however slowly they moved; each side of a
    # break on its own, since the break itself would look like a step to pair
    bursts = np.zeros(t_meas.shape[0], bool)
    for a, b in itertools.pairwise(cuts):
        bursts[a:b] = burst_mask(t_meas[a:b], x[a:b], y[a:b])
    if bursts.any():
        kept_before = np.concatenate([[0], np.cumsum(~bursts)])
        cuts = sorted({int(kept_before[c]) for c in cuts})
        t_meas, x, y = t_meas[~bursts], x[~bursts], y[~bursts]
        index = index[~bursts]
        dropped += int(bursts.sum())
    meas_sigma = None if sigma is None else sigma[index]
    # a canyon receiver's stops creep with its error: blips inside them are joined, and its
    # correlated error is smoothed stiffer
    share = float(bursts.mean()) if bursts.shape[0] else 0.0
    join_blips = bool(bursts.shape[0]) and share >= params.stop_blip_burst_share
    stiffer = bool(bursts.shape[0]) and share >= params.burst_process_share
    process_scale = params.burst_process_scale if stiffer else 1.0
    standing = params.stationary
    radius = max(standing.radius_m, 2.5 * params.gps_sigma_m)
    if radius != standing.radius_m:
        standing = dataclasses.replace(standing, radius_m=radius)
    if (
        params.excursion_burst_share is not None
        and bool(bursts.shape[0])
        and share >= params.excursion_burst_share
    ):
        standing = dataclasses.replace(standing, trim_excursions=False)
    pieces: list[tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, int]] = []
    arc_gaps: list[tuple[float, float]] = []
    breaks: list[tuple[float, float]] = []
    for a, b in itertools.pairwise(cuts):
        if b - a < 2:  # a lone fix between two jumps places nothing
            dropped += b - a
            continue
        if pieces:
            breaks.append((float(pieces[-1][0][-1]), float(t_meas[a])))
        # a stop is pinned within its own side of a break, so a jump stays a jump
        x[a:b], y[a:b], stops = pin_stationary(t_meas[a:b], x[a:b], y[a:b], standing)
        piece_sigma = None if meas_sigma is None else meas_sigma[a:b]
        stood_s = (
            [(float(t_meas[a + f]), float(t_meas[a + last])) for f, last in stops]
            if join_blips
            else []
        )
        piece = _smooth_piece(
            track,
            t_meas[a:b],
            x[a:b],
            y[a:b],
            piece_sigma,
            params,
            stops_s=stood_s,
            process_scale=process_scale,
            arc_gaps=arc_gaps,
        )
        pieces.append(piece)
        dropped += piece[-1]
    if not pieces:
        msg = f"GPS track {track.source}: every fix lies across a jump; check the track"
        raise GpsError(msg)
    grid, sx, sy, speed, heading = (np.concatenate([p[i] for p in pieces]) for i in range(5))
    heading = np.degrees(np.unwrap(np.radians(heading)))
    return SmoothTrack(
        grid,
        sx,
        sy,
        speed,
        heading,
        dropped=dropped,
        unusable=int((~usable_mask(track)).sum()),
        meas_t_s=t_meas,
        meas_x_m=x,
        meas_y_m=y,
        breaks_s=tuple(breaks),
        meas_sigma_m=meas_sigma,
        cut_t_s=np.delete(usable.t_s, index),
        cut_x_m=np.delete(all_x, index),
        cut_y_m=np.delete(all_y, index),
        cut_sigma_m=None if sigma is None else np.delete(sigma, index),
        arc_gaps_s=tuple(arc_gaps),
    )


def _smooth_piece(
    track: GpsTrack,
    t_meas: FloatArray,
    x: FloatArray,
    y: FloatArray,
    sigma: FloatArray | None,
    params: CleanParams,
    *,
    stops_s: list[tuple[float, float]],
    process_scale: float,
    arc_gaps: list[tuple[float, float]],
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, int]:
    """Smooth the fixes between two breaks: ``(grid, x, y, speed, heading, gated)``;
    ``stops_s``: the stationary spans' first and last fix times (:func:`_collapse_stationary`);
    ``process_scale``: factor on the process noise (``burst_process_scale`` on a track that
    bursts, else 1); ``arc_gaps``: the gaps redrawn by ``gap_arcs`` are appended to it."""
    span_s = float(t_meas[-1] - t_meas[0])
    grid_n = max(2, math.ceil(span_s * params.grid_hz) + 1)
    grid = np.linspace(t_meas[0], t_meas[-1], grid_n)
    noise_m = params.gps_sigma_m if sigma is None else float(np.median(sigma))
    speed_mps = usual_speed_mps(t_meas, x, y, noise_m, moving_mps=params.stationary_speed_mps)
    accel = process_scale * max(params.accel_sigma, params.turn_rate_density * speed_mps**2)
    sx, sy, vx, vy, gated = robust_rts_smooth(
        grid,
        t_meas,
        x,
        y,
        sigma_m=params.gps_sigma_m,
        accel_sigma=accel,
        gate_sigma=params.gate_sigma,
        meas_sigma_m=sigma,
        passes=params.robust_passes,
        huber_k=params.huber_k,
    )
    if not (np.all(np.isfinite(sx)) and np.all(np.isfinite(sy))):
        msg = f"GPS track {track.source}: smoothing diverged; check the track for bad values"
        raise GpsError(msg)
    _bridge_gaps(grid, t_meas, sx, sy, vx, vy, params.max_gap_s)
    if params.gap_arcs is not None:
        arc_gaps += stretch_gaps(
            grid,
            t_meas,
            x,
            y,
            sx,
            sy,
            vx,
            vy,
            params.gap_arcs,
            max_gap_s=params.max_gap_s,
            usual_mps=speed_mps,
        )
    speed = np.hypot(vx, vy)
    heading = np.degrees(np.arctan2(vx, vy))
    _collapse_stationary(grid, sx, sy, speed, heading, params, stops_s=stops_s)
    return grid, sx, sy, speed, heading, int(gated)
