"""Urban-canyon bursts, told from GPS fixes alone: the track steps away, stays, steps back.

In a street canyon a receiver may lock on a reflection from a facade: for 5-30 s its fixes sit
10-30 m off the true path in one direction, reached and left within a second or two. A
constant-velocity smoother follows such a burst (a 20 m detour over 15 s is an ordinary walk to
it: 15 fixes agree), and the pose graph takes the detour for a spur and invents a junction.

What a walker (or a car) cannot do is *step*: however sharply it turns, its position is
continuous. So at every instant ``t`` a stiff constant-velocity Kalman filter run forward over
the fixes up to ``t - gap_s`` and another run backward over those from ``t + gap_s`` are both
carried to ``t`` (a two-filter test: each filter gates lone outliers). At a corner the two meet
near the corner (velocity changes, position does not); at a burst's start or end they miss each
other by the burst's offset. Their difference ``D(t)`` is tested against its variance (both
filters' position variance, with the fixes' noise estimated robustly by :func:`fix_noise_m`):
a *step* is a local maximum of the test statistic above ``step_chi2`` (two degrees of freedom)
that is at least ``min_step_m`` long and longer than ``turn_lag_s`` of the usual speed (the
filters lag a fast camera at a turn).

A burst is a run of steps, within ``max_burst_s``, whose vectors add up to nothing (away and
back, possibly through a second burst: away, across, back): the fixes between its first and
last step (with ``gap_s`` of ramp each side) are outliers. A step that is never undone is left
alone: that is the receiver finding itself elsewhere, a break :func:`.clean.find_jumps` decides.
On a track that bursts often (``way_back_min_runs``: a receiver in an urban canyon), a step no
run pairs gets one more look for its way back: the other edge of a burst points back along
the step, so ``D`` is tested along that known direction (one degree of freedom), which lets
a far weaker edge through than the two-degree test does (a long burst's way back, under
correlated noise, is often 10-13 m at chi² 15-25). The edge of a run already paired is not
such a way back (it is another burst's).

A dropout makes the test read one edge several times (on either side of the gap one filter
sees the same fixes at every probe): such readings are one edge, of which a run of steps
counts one (``one_step_per_gap``).

The test is run again (``rounds``) over the fixes not yet masked: when bursts come nearly back
to back the filters are still off from one when the next starts and miss its edges, which
stand out once the first burst's fixes are out.

Units: seconds (GPS clock), metres in the city CRS.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from city360.video_store.smooth import MAX_GATED_IN_A_ROW

__all__ = ["BurstParams", "Step", "burst_mask", "find_steps", "fix_noise_m"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class BurstParams:
    """Settings of the step test and of the pairing of steps into bursts (module docstring)."""

    rounds: int = 2
    """How many times the step test is run again over the fixes not yet masked."""

    accel_sigma: float = 0.05
    """Process noise of the two filters, m²/s³: stiffer than the smoother's 0.6, so a 15 s
    burst is not followed as a detour within the time it lasts (its lag at a turn is what
    ``turn_lag_s`` allows for)."""
    gap_s: float = 1.5
    """Time left out each side of the instant tested (a burst ramps in over about 2 s),
    seconds."""
    step_chi2: float = 30.0
    """Test statistic (squared Mahalanobis length of ``D``, two degrees of freedom) a step
    must exceed; 30 is a chance of 3e-7 per instant for Gaussian noise."""
    min_step_m: float = 6.0
    """Shortest step that counts, metres (a smaller offset does not make a spur)."""
    turn_lag_s: float = 3.0
    """A step must also be longer than this many seconds of the usual speed around it: at a
    turn both filters lag the camera by about its speed times a second or two (a car's corner
    at 8 m/s gives 18 m), a walker's by a few metres."""
    max_burst_s: float = 45.0
    """Longest run of steps that is a burst (away and back), seconds."""
    way_back_chi2: float | None = 16.0
    """Test statistic (one degree of freedom: along the step) the way back of a step that no
    run of steps paired must pass (:func:`_way_back`), on a track that bursts
    (``way_back_min_runs``); None: such a step is always left alone. 16 catches long canyon
    bursts while walking (Hamburg canyon twins 0.03-0.66 m better on 13 of 15 seeds); on a
    track that does not burst it would take a phone walker's two turn-backs 10 s apart, or an
    outlier after a dropout next to a corner, for a burst (Tokyo old town "wander" seed 0:
    street F1 without OSM 0.83 -> 0.74; docs/design-notes.md, round twelve, branches bursts2
    and bursts2gate)."""
    way_back_min_runs: int = 3
    """The way-back look runs only on a track (a piece between breaks) whose steps already
    paired into this many bursts or more in the first round, and at ``way_back_min_per_min``
    or more: a receiver that bursts (Hamburg canyon twins: 11-18 paired in 31 min; phone
    twins: 0 in every old-town and Hamburg twin, 1 in 644 min of Helsinki wander) has more
    bursts than its clear edges show, a receiver that does not has turn-backs instead."""
    way_back_min_per_min: float = 0.1
    """Paired bursts per minute of the track the way-back look needs (with
    ``way_back_min_runs``)."""
    return_share: float = 0.5
    """A run is back where it started when its steps add up to less than this share of its
    longest step (and to nothing significant)."""
    spare_edges: bool = True
    """Let an unpaired step's way back fall on a run's edge that the run does not need (it
    comes back without it) on the step's side (:func:`_burst_spans`); False: never on any
    run's edge (the cleaner before round seventeen)."""
    chained_rivals: bool = True
    """A stronger rival does not take a run's last edge when the steps after the run start a
    returning run of their own that reaches the rival's end and the run closes better than the
    rival (:func:`_pair_steps`): two bursts with like offsets, whose rival is the first's way
    back with the second's way out; False: the rival margin alone (before round seventeen)."""
    fast_mps: float | None = 3.0
    """Usual speed from which a step is checked for a turn driven through
    (:func:`_off_turn_lags`), m/s: above a walker's, whose turn lag ``turn_lag_s`` covers;
    None: never (before round eighteen, a car with 1 Hz GPS lost 100-180 m of good fixes
    either side of every right-angle turn)."""
    lone_outliers: bool = True
    """Leave a fix that is off alone (away and back within one fix) out of the turn check's
    pairs (:func:`_off_turn_lags`); False: every fix near the step counts (before round
    twenty: one bad fix next to a car's corner kept the corner's lag as a burst edge)."""
    continuity_sigma: float = 3.0
    """How far (in sigmas of the difference of two fixes) two fixes near a step may lie beyond
    what the usual speed carries the camera, for the track to count as continuous there."""
    one_step_per_gap: bool = True
    """Peaks of the test whose probes share one of the two filters' fixes (no fix between
    them on that side: a dropout lies there) and point the same way are one edge read
    several times (:func:`_gap_groups`): a run of steps counts one of the readings, and
    the others are neither rivals nor steps of their own; False: each peak is a step of its
    own (before round eighteen)."""
    rival_margin: float = 1.5
    """How many times more significant (chi² of its weaker edge) a later run must be than a
    run to take that run's last edge from it (:func:`_pair_steps`). An echo of a real step
    had 0.13-0.63 of its chi² on the twins and tests looked at; runs of like strength (a stop
    with a 25 m burst every minute, where the good fixes between two bursts also look like a
    run that comes back) keep the time order."""


@dataclass(frozen=True, slots=True)
class Step:
    """A discontinuity of the track at GPS time ``t_s``: the fixes after it sit ``dx_m``,
    ``dy_m`` from the line through those before it; ``chi2`` its test statistic."""

    t_s: float
    dx_m: float
    dy_m: float
    chi2: float
    var_m2: float
    """Variance of ``dx_m`` (and of ``dy_m``), m²."""


@dataclass(frozen=True, slots=True)
class Run:
    """A run of steps taken as a burst: indices of its first and last step, and the steps it
    counts (one reading of each edge a dropout made several of, :func:`_gap_groups`)."""

    first: int
    last: int
    chosen: tuple[Step, ...]


MAX_READING_CHOICES = 64
"""Most combinations of readings :func:`_closest_readings` tries for one run."""


def _predictions(
    t_s: FloatArray,
    x_m: FloatArray,
    y_m: FloatArray,
    probe_s: FloatArray,
    *,
    lag_s: float,
    sigma_m: float,
    accel_sigma: float,
    gate_sigma: float,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """A constant-velocity Kalman filter run forward over the fixes (chi-square gate on each),
    carried from the last fix at or before ``lag_s`` ahead of each of ``probe_s`` to it:
    ``(x, y, var)``, var the position variance per axis (inf where there is no such fix)."""
    n = t_s.shape[0]
    states = np.zeros((n, 8))  # t, px, vx, py, vy, and the shared covariance a, b, c
    r = sigma_m**2
    q = accel_sigma
    limit = 2 * gate_sigma**2
    misses = 0
    px, vx, py, vy = float(x_m[0]), 0.0, float(y_m[0]), 0.0
    a, b, c = r, 0.0, 4.0
    for k in range(n):
        if k > 0:
            dt = float(t_s[k] - t_s[k - 1])
            px, py = px + vx * dt, py + vy * dt
            a, b, c = (
                a + 2 * b * dt + c * dt * dt + q * dt**3 / 3,
                b + c * dt + q * dt * dt / 2,
                c + q * dt,
            )
            s = a + r
            ix, iy = float(x_m[k]) - px, float(y_m[k]) - py
            if (ix * ix + iy * iy) / s <= limit or misses >= MAX_GATED_IN_A_ROW:
                misses = 0
                kp, kv = a / s, b / s
                px, vx = px + kp * ix, vx + kv * ix
                py, vy = py + kp * iy, vy + kv * iy
                a, b, c = (1 - kp) * a, (1 - kp) * b, c - kv * b
            else:
                misses += 1
        states[k] = (t_s[k], px, vx, py, vy, a, b, c)
    last = np.searchsorted(t_s, probe_s - lag_s, side="right") - 1
    known = last >= 0
    t0, px_, vx_, py_, vy_, a_, b_, c_ = states[np.maximum(last, 0)].T
    dt_ = np.where(known, probe_s - t0, 0.0)
    var = a_ + 2 * b_ * dt_ + c_ * dt_**2 + q * dt_**3 / 3
    return px_ + vx_ * dt_, py_ + vy_ * dt_, np.where(known, var, np.inf)


MIN_NOISE_M = 1.0
"""Least one-axis noise the step test assumes, metres: a track smoother than that (drawn, or
filtered by its logger) makes every lag of the filters at a turn significant."""

USUAL_SPEED_S = 30.0
"""Half-width of the window whose median step speed is the usual speed at an instant, s."""


def _usual_speed(t_s: FloatArray, x_m: FloatArray, y_m: FloatArray, at_s: FloatArray) -> FloatArray:
    """Median speed between consecutive fixes within :data:`USUAL_SPEED_S` of each ``at_s``
    (m/s; a few bursts do not move a median)."""
    speed = np.hypot(np.diff(x_m), np.diff(y_m)) / np.maximum(np.diff(t_s), 1e-3)
    mid = 0.5 * (t_s[1:] + t_s[:-1])
    low = np.searchsorted(mid, at_s - USUAL_SPEED_S, side="left")
    high = np.searchsorted(mid, at_s + USUAL_SPEED_S, side="right")
    out = np.zeros(at_s.shape[0])
    for k, (a, b) in enumerate(zip(low.tolist(), high.tolist(), strict=True)):
        if b > a:
            out[k] = float(np.median(speed[a:b]))
    return out


def fix_noise_m(t_s: FloatArray, x_m: FloatArray, y_m: FloatArray) -> float:
    """Robust one-axis noise of the fixes about a straight local path, metres: 1.4826 times the
    median absolute deviation of each fix from the line through its two neighbours, scaled by
    that line's own error (a second difference), so bursts and corners (few) do not count."""
    if t_s.shape[0] < 5:
        return 0.0
    before = t_s[1:-1] - t_s[:-2]
    after = t_s[2:] - t_s[1:-1]
    share = before / (before + after)
    residual = np.concatenate(
        [
            x_m[1:-1] - (x_m[:-2] + share * (x_m[2:] - x_m[:-2])),
            y_m[1:-1] - (y_m[:-2] + share * (y_m[2:] - y_m[:-2])),
        ]
    )
    # Var(x_i - ((1-s) x_{i-1} + s x_{i+1})) = sigma^2 (1 + (1-s)^2 + s^2)
    scale = np.sqrt(1.0 + np.concatenate([(1 - share) ** 2 + share**2] * 2))
    return float(1.4826 * np.median(np.abs(residual / scale)))


@dataclass(frozen=True, slots=True)
class _Profile:
    """The two-filter difference ``D`` at each probe time (GPS s): ``dx_m``/``dy_m`` the
    backward filter's position minus the forward one's (metres), ``var_m2`` the variance of
    each (m², inf where a filter has no fix), ``chi2`` the test statistic (two degrees of
    freedom) and ``floor_m`` the shortest step that counts there (metres)."""

    probe_s: FloatArray
    dx_m: FloatArray
    dy_m: FloatArray
    var_m2: FloatArray
    chi2: FloatArray
    floor_m: FloatArray
    fix_t_s: FloatArray
    """GPS times of the fixes the filters ran over, seconds."""


def _profile(
    t_s: FloatArray, x_m: FloatArray, y_m: FloatArray, sigma_m: float, params: BurstParams
) -> _Profile:
    """The step test at every fix time and half way between fixes (a step falls between two
    fixes); ``sigma_m``: the fixes' one-axis noise, metres."""
    probe = np.sort(np.concatenate([t_s, 0.5 * (t_s[1:] + t_s[:-1])]))
    filter_args = {"sigma_m": sigma_m, "accel_sigma": params.accel_sigma, "gate_sigma": 4.0}
    # forward from the fixes up to ``gap_s`` before, and backward (time reversed) from the
    # fixes from ``gap_s`` after, both carried to the instant tested
    lx, ly, lvar = _predictions(t_s, x_m, y_m, probe, lag_s=params.gap_s, **filter_args)
    rx, ry, rvar = _predictions(
        -t_s[::-1], x_m[::-1], y_m[::-1], -probe, lag_s=params.gap_s, **filter_args
    )
    var = lvar + rvar
    finite = np.isfinite(var)
    dx = np.where(finite, rx - lx, 0.0)
    dy = np.where(finite, ry - ly, 0.0)
    chi2 = np.where(finite, (dx * dx + dy * dy) / np.where(finite, var, 1.0), 0.0)
    floor = np.maximum(params.min_step_m, params.turn_lag_s * _usual_speed(t_s, x_m, y_m, probe))
    return _Profile(probe, dx, dy, var, chi2, floor, t_s)


def _peaks(profile: _Profile, params: BurstParams) -> list[Step]:
    """The steps of ``profile``: local maxima of its test statistic past both limits."""
    p = profile
    length = np.hypot(p.dx_m, p.dy_m)
    candidate = (p.chi2 > params.step_chi2) & (length >= p.floor_m)
    steps: list[Step] = []
    for k in np.flatnonzero(candidate).tolist():
        near = np.abs(p.probe_s - p.probe_s[k]) <= params.gap_s + 0.5
        if p.chi2[k] < np.max(p.chi2[near]):
            continue  # not the peak of its step
        if steps and p.probe_s[k] - steps[-1].t_s <= params.gap_s:
            continue  # a plateau: the step was taken already
        steps.append(
            Step(
                float(p.probe_s[k]),
                float(p.dx_m[k]),
                float(p.dy_m[k]),
                float(p.chi2[k]),
                float(p.var_m2[k]),
            )
        )
    return steps


def _gap_groups(steps: list[Step], fix_t_s: FloatArray, params: BurstParams) -> list[int]:
    """A group number for each of ``steps`` (in time order): consecutive steps pointing the
    same way whose probes share one filter's fixes (:func:`_share_a_filter`) are one group,
    one edge read several times; with ``one_step_per_gap`` off each step is its own group.

    In a dropout one side of the test sees the same fixes at every probe and only the other
    filter's extrapolation across the gap moves ``D``, so the test finds a peak on either side
    of the gap and in it, each a different reading of one step (Hamburg canyon seed 18: a
    burst's way back in a 6.6 s dropout read at 1476 and 1481 s as 52 and 38 m; the run
    through both did not come back, and the second with the next burst's way out masked the
    good fixes between and kept both bursts). Which reading is nearest the truth depends on
    where in the gap the step fell, so :func:`_pair_steps` lets a run use any one of them.
    Steps pointing apart are left apart: an echo is not the step it follows."""
    groups: list[int] = []
    for k, step in enumerate(steps):
        if k and params.one_step_per_gap:
            last = steps[k - 1]
            same_way = last.dx_m * step.dx_m + last.dy_m * step.dy_m > 0.0
            if same_way and _share_a_filter(last.t_s, step.t_s, fix_t_s, params.gap_s):
                groups.append(groups[-1])
                continue
        groups.append(k)
    return groups


def _share_a_filter(first_s: float, second_s: float, fix_t_s: FloatArray, gap_s: float) -> bool:
    """Whether the test at ``first_s`` and at ``second_s`` (GPS seconds, increasing) runs its
    forward or its backward filter over the same fixes (:func:`_gap_groups`)."""
    forward = np.count_nonzero((fix_t_s > first_s - gap_s) & (fix_t_s <= second_s - gap_s))
    backward = np.count_nonzero((fix_t_s >= first_s + gap_s) & (fix_t_s < second_s + gap_s))
    return forward == 0 or backward == 0


def find_steps(
    t_s: FloatArray,
    x_m: FloatArray,
    y_m: FloatArray,
    *,
    sigma_m: float,
    params: BurstParams | None = None,
) -> list[Step]:
    """The steps of a track (module docstring), in time order. ``sigma_m``: one-axis noise of
    the fixes, metres (:func:`fix_noise_m`)."""
    params = params or BurstParams()
    if t_s.shape[0] < 8 or sigma_m <= 0:
        return []
    steps = _peaks(_profile(t_s, x_m, y_m, sigma_m, params), params)
    return _off_turn_lags(steps, t_s, x_m, y_m, sigma_m, params)


CHORD_S = 5.0
"""Baseline of the chords :func:`_chord_speed` measures a speed over, seconds: between
consecutive fixes a walker's 1 Hz fixes move at their noise (4-5 m/s at 3 m), not his pace;
a chord much longer than this reads a car slow across the corner it turns (10 s: 6.5 of 8.3
m/s), and the corner's lag then looks like a step."""


def _chord_speed(
    t_s: FloatArray, x_m: FloatArray, y_m: FloatArray, at_s: float, sigma_m: float
) -> float:
    """The camera's speed about ``at_s``, m/s: the median over the fixes within
    :data:`USUAL_SPEED_S` of it of the speed along the chord to the first fix
    :data:`CHORD_S` later, with the two fixes' noise taken out (``sigma_m`` one axis)."""
    near = np.flatnonzero(np.abs(t_s - at_s) <= USUAL_SPEED_S)
    if near.shape[0] < 2:
        return 0.0
    t, x, y = t_s[near], x_m[near], y_m[near]
    ahead = np.searchsorted(t, t + CHORD_S, side="left")
    use = np.flatnonzero(ahead < t.shape[0])
    if use.shape[0] == 0:
        return 0.0
    j = ahead[use]
    d2 = (x[j] - x[use]) ** 2 + (y[j] - y[use]) ** 2
    speed = np.sqrt(np.maximum(0.0, d2 - 4.0 * sigma_m**2)) / (t[j] - t[use])
    return float(np.median(speed))


def _off_turn_lags(
    steps: list[Step],
    t_s: FloatArray,
    x_m: FloatArray,
    y_m: FloatArray,
    sigma_m: float,
    params: BurstParams,
) -> list[Step]:
    """``steps`` less those a fast camera drove through: where the usual speed is at least
    ``fast_mps`` and no two fixes within ``gap_s + 1`` s of the step lie farther apart than
    that speed carries the camera between them, by more than ``continuity_sigma`` times the
    noise of their difference. The track is continuous there; the step is the two stiff
    filters' lag at a turn, which at 1 Hz reaches 7-8 s of a car's speed (a 90 degree corner
    at 8 m/s: ``D`` of 60 m, against the 24 m ``turn_lag_s`` allows), where a burst's edge
    moves the fixes 10-30 m farther than the speed explains.

    A lone outlier (:func:`_lone_outliers`, with ``lone_outliers``) is no pair's end: it
    jumps away and back within a fix, which no edge does, and the two filters gate it. With
    it, one bad fix next to a car's corner kept the corner's lag as a step (SF car, phone
    GPS, seed 14: a fix 25 m off 2 s before a left turn; the lag paired with the forward
    filter's lag read across a dropout after the turn and 12 good fixes were masked)."""
    if params.fast_mps is None or not steps:
        return steps
    slack = params.continuity_sigma * math.sqrt(2.0) * sigma_m
    kept = []
    for step in steps:
        usual = _chord_speed(t_s, x_m, y_m, step.t_s, sigma_m)
        near = np.flatnonzero(np.abs(t_s - step.t_s) <= params.gap_s + 1.0)
        if params.lone_outliers and usual >= params.fast_mps:
            near = near[~_lone_outliers(t_s, x_m, y_m, near, usual, slack)]
        if usual < params.fast_mps or near.shape[0] < 2:
            kept.append(step)
            continue
        i, j = np.triu_indices(near.shape[0], k=1)
        a, b = near[i], near[j]
        chord = np.hypot(x_m[b] - x_m[a], y_m[b] - y_m[a])
        if float(np.max(chord - usual * (t_s[b] - t_s[a]))) > slack:
            kept.append(step)
    return kept


def _lone_outliers(
    t_s: FloatArray,
    x_m: FloatArray,
    y_m: FloatArray,
    which: npt.NDArray[np.intp],
    speed_mps: float,
    slack_m: float,
) -> npt.NDArray[np.bool_]:
    """Which of the fixes ``which`` (indices) are off alone: the camera, at ``speed_mps``,
    cannot reach it from the fix before nor reach the fix after from it (each chord longer
    than the speed carries it by more than ``slack_m``, metres), while it can go from the fix
    before to the fix after. A track's first and last fix have one neighbour, and are not."""
    n = t_s.shape[0]
    if n < 3:
        return np.zeros(which.shape[0], bool)

    def excess(a: npt.NDArray[np.intp], b: npt.NDArray[np.intp]) -> FloatArray:
        chord = np.hypot(x_m[b] - x_m[a], y_m[b] - y_m[a])
        return chord - speed_mps * (t_s[b] - t_s[a])

    inner = (which > 0) & (which < n - 1)
    k = np.clip(which, 1, n - 2)
    off = (
        (excess(k - 1, k) > slack_m)
        & (excess(k, k + 1) > slack_m)
        & (excess(k - 1, k + 1) <= slack_m)
    )
    return inner & off


def _way_back(profile: _Profile, step: Step, params: BurstParams) -> float | None:
    """GPS time of the other edge of the burst ``step`` is one edge of, for a step no run of
    steps paired (:func:`_pair_steps`), or None.

    That edge is a step back along ``step``, so ``D`` there is tested along that one known
    direction (one degree of freedom, a far weaker edge passes than :func:`_peaks` takes):
    the probe within ``max_burst_s`` before or after ``step`` (more than ``2 gap_s`` from
    it) with the largest part of ``D`` pointing back along the step, squared over its
    variance, above ``way_back_chi2``; that part at least ``return_share`` of the step and
    ``min_step_m``, and ``D`` within 45 degrees of straight back. No length floor from the
    usual speed: a turn's lag does not point back along a step."""
    if params.way_back_chi2 is None:
        return None
    p = profile
    length = math.hypot(step.dx_m, step.dy_m)
    ux, uy = step.dx_m / length, step.dy_m / length
    back = -(p.dx_m * ux + p.dy_m * uy)
    across = np.abs(p.dx_m * uy - p.dy_m * ux)
    apart = np.abs(p.probe_s - step.t_s)
    with np.errstate(invalid="ignore"):
        score = np.where(np.isfinite(p.var_m2), back * np.abs(back) / p.var_m2, 0.0)
    ok = (
        (apart > 2 * params.gap_s)
        & (apart <= params.max_burst_s)
        & (back >= max(params.return_share * length, params.min_step_m))
        & (across <= back)
        & (score > params.way_back_chi2)
    )
    if not ok.any():
        return None
    return float(p.probe_s[int(np.argmax(np.where(ok, score, -1.0)))])


def _returns(run: list[Step], params: BurstParams) -> bool:
    """Whether the steps of ``run`` add up to nothing: back where the track started."""
    total_x = sum(s.dx_m for s in run)
    total_y = sum(s.dy_m for s in run)
    total = math.hypot(total_x, total_y)
    longest = max(math.hypot(s.dx_m, s.dy_m) for s in run)
    var = sum(s.var_m2 for s in run)
    return total <= params.return_share * longest and total * total / var < params.step_chi2


def burst_mask(
    t_s: FloatArray,
    x_m: FloatArray,
    y_m: FloatArray,
    *,
    sigma_m: float | None = None,
    params: BurstParams | None = None,
) -> npt.NDArray[np.bool_]:
    """Mask of the fixes inside a burst (module docstring). ``sigma_m``: the fixes' one-axis
    noise, metres (None: estimated with :func:`fix_noise_m`; at least :data:`MIN_NOISE_M`)."""
    params = params or BurstParams()
    mask = np.zeros(t_s.shape[0], bool)
    noise = max(fix_noise_m(t_s, x_m, y_m) if sigma_m is None else sigma_m, MIN_NOISE_M)
    bursting: bool | None = None
    for _ in range(params.rounds):
        rest = np.flatnonzero(~mask)
        if rest.shape[0] < 8:
            break
        profile = _profile(t_s[rest], x_m[rest], y_m[rest], noise, params)
        steps = _peaks(profile, params)
        steps = _off_turn_lags(steps, t_s[rest], x_m[rest], y_m[rest], noise, params)
        groups = _gap_groups(steps, profile.fix_t_s, params)
        runs = _pair_steps(steps, params, groups=groups)
        if bursting is None:
            bursting = _bursts_often(len(runs), float(t_s[-1] - t_s[0]), params)
        found = np.zeros_like(mask)
        spans = _burst_spans(profile, steps, runs, params, way_back=bursting, groups=groups)
        for start_s, end_s in spans:
            found |= (t_s > start_s) & (t_s < end_s)
        if not (found & ~mask).any():
            break
        mask |= found
    return mask


def _bursts_often(runs: int, span_s: float, params: BurstParams) -> bool:
    """Whether a track of ``span_s`` seconds whose steps paired into ``runs`` bursts
    (:func:`_pair_steps`) bursts often enough for the way-back look (``way_back_min_runs``,
    ``way_back_min_per_min``)."""
    if params.way_back_chi2 is None:
        return False
    return runs >= params.way_back_min_runs and runs >= (
        params.way_back_min_per_min * span_s / 60.0
    )


def _burst_spans(
    profile: _Profile,
    steps: list[Step],
    runs: list[Run],
    params: BurstParams,
    *,
    way_back: bool,
    groups: list[int],
) -> list[tuple[float, float]]:
    """GPS-time spans ``(start, end)`` of the fixes to mask: each of ``runs`` (:func:`_pair_steps`,
    from its first counted step to its last), then, with ``way_back`` (a track that bursts
    often, :func:`_bursts_often`), each step left out of every run with its way back
    (:func:`_way_back`), with ``gap_s`` of ramp each side.

    A way back that falls on an edge of a run taken (within ``gap_s + 0.5`` s, the
    neighbourhood a peak is the maximum of) is not used: a step near a burst that points
    back at that burst's edge is most often the stiff filters' echo of crossing it, or a
    burst whose own other edge is too weak, and pairing it with the taken edge would mask the
    good fixes between (Hamburg canyon seed 3, 187.5 s paired with 202.5 s).

    Unless that edge is *spare* (``spare_edges``): the run has three steps or more and comes
    back without it (:func:`_spare_edges`), and the unpaired step lies on the run's far side
    of it (before a spare first edge, after a spare last edge). Then the edge is the other
    burst's way back, which the stiff filters bent towards the next burst's fixes until only
    the longer run returned (Hamburg canyon seed 1: bursts at 46-65 and 69-84 s, the first's
    way back read as (3, -15) m for a true (12, -10) m; the run 62.5-83.5 s took it and the
    whole first burst was kept).

    ``groups`` (:func:`_gap_groups`): every reading of a run's first or last edge is that
    edge, in the run and not a way back for another step."""
    spans: list[tuple[float, float]] = []
    edges: list[tuple[float, int]] = []  # time, and -1 / +1 / 0: spare for a step before / after
    in_run = np.zeros(len(steps), bool)
    for run in runs:
        first, last = run.chosen[0], run.chosen[-1]
        spans.append((first.t_s - params.gap_s, last.t_s + params.gap_s))
        spare_first, spare_last = (
            _spare_edges(list(run.chosen), params) if params.spare_edges else (False, False)
        )
        # every reading of its edges is the run's (:func:`_gap_groups`)
        for k, g in enumerate(groups):
            if g in (groups[run.first], groups[run.last]):
                in_run[k] = True
                spare = spare_first if g == groups[run.first] else spare_last
                edges.append((steps[k].t_s, -int(spare) if g == groups[run.first] else int(spare)))
        in_run[run.first : run.last + 1] = True
    if not way_back:
        return spans
    near_s = params.gap_s + 0.5
    for k in np.flatnonzero(~in_run).tolist():
        other = _way_back(profile, steps[k], params)
        if other is None:
            continue
        side = 1 if steps[k].t_s > other else -1
        if any(abs(other - edge) <= near_s and spare != side for edge, spare in edges):
            continue
        start_s, end_s = sorted((steps[k].t_s, other))
        spans.append((start_s - params.gap_s, end_s + params.gap_s))
    return spans


def _closure(run: list[Step]) -> float:
    """How far a run of steps ends from where it started, as a share of its longest step."""
    total = math.hypot(sum(s.dx_m for s in run), sum(s.dy_m for s in run))
    return total / max(math.hypot(s.dx_m, s.dy_m) for s in run)


def _spare_edges(run: list[Step], params: BurstParams) -> tuple[bool, bool]:
    """Whether ``run`` (a run of steps that comes back) still comes back without its first
    step, and without its last: a run of two steps needs both its edges."""
    if len(run) < 3:
        return False, False
    return _returns(run[1:], params), _returns(run[:-1], params)


def _pair_steps(steps: list[Step], params: BurstParams, *, groups: list[int]) -> list[Run]:
    """The runs of ``steps`` taken as bursts (:class:`Run`).

    A candidate is a run of consecutive steps within ``max_burst_s`` that comes back
    (:func:`_returns`); its strength is the smaller test statistic of its first and last step
    (the two edges a burst must have). Runs are taken in time order, each the shortest
    candidate from its first step, unless a candidate ``rival_margin`` times stronger starts at
    one of the run's later steps and ends beyond it (it needs the run's last edge) and is not
    beaten itself in the same way: then the first step is left alone and the stronger run gets
    its turn (a stronger run inside the run is masked with it). Without that rule the stiff
    filters' echo of a burst (after crossing one, a filter overshoots for several seconds,
    which the test reads as a step of 20-40 m) paired with the first edge of the next burst
    and left that burst's far edge unpaired (Hamburg canyon seed 2: 244 s took 252.5 s, 979.5 s took
    1007.5 s; 25 s of good fixes dropped and bursts of 22-37 m kept).

    A rival does not count (``chained_rivals``) when the steps after the run start a run of
    their own that reaches the rival's last step, and the run comes back closer than the rival
    (:func:`_closure`): two bursts with like offsets, where the first's way back and the
    second's way out also add up to nothing (Hamburg canyon seed 12: the rival 1093.5-1128 s,
    chi² 68, took the way back of the burst 1075-1094 s, whose way out just after a dropout
    had chi² 37; 26 good fixes masked and both bursts kept). An echo's partner leaves no such
    run after it, and a run that closes worse than its rival (seed 8: a correlated excursion
    at 673 s against the burst at 680-700 s) still yields.

    ``groups`` (:func:`_gap_groups`): the steps of one group are
    readings of one edge across a dropout. A run starts and ends at one reading of its first
    and last group and counts one reading of each group between (the one that brings it back
    closest); the other readings of its first group are not rivals, and an edge's strength is
    that of its most significant reading.
    """
    next_group = [len(steps)] * len(steps)  # first step of the next group
    for k in range(len(steps) - 2, -1, -1):
        next_group[k] = k + 1 if groups[k + 1] != groups[k] else next_group[k + 1]
    # an edge read several times is as significant as its best reading
    best_reading: dict[int, float] = {}
    for step, g in zip(steps, groups, strict=True):
        best_reading[g] = max(best_reading.get(g, 0.0), step.chi2)
    edge_chi2 = [best_reading[g] for g in groups]
    # first step: (last step, strength, the steps the run counts)
    runs: dict[int, list[tuple[int, float, tuple[Step, ...]]]] = {}
    for k in range(len(steps)):
        for m in range(next_group[k], len(steps)):
            if steps[m].t_s - steps[k].t_s > params.max_burst_s:
                break
            chosen = _closest_readings(steps, groups, k, m)
            if _returns(list(chosen), params):
                runs.setdefault(k, []).append((m, min(edge_chi2[k], edge_chi2[m]), chosen))
    wins: dict[tuple[int, int], bool] = {}

    def counted(k: int, m: int) -> list[Step]:
        """The steps run k..m counts."""
        return list(next(c for m2, _, c in runs[k] if m2 == m))

    def chained(k: int, m: int, k2: int, m2: int) -> bool:
        """Whether the steps after run k..m start a run of their own reaching step m2 (then
        run k..m and that run explain every step the rival k2..m2 would, and more) and run
        k..m comes back closer than the rival does (:func:`_closure`)."""
        after = runs.get(next_group[m], [])[:1]
        return any(m3 >= m2 for m3, _, _ in after) and _closure(counted(k, m)) <= _closure(
            counted(k2, m2)
        )

    def beaten(k: int, m: int, strength: float) -> bool:
        """Whether a stronger run that would itself be taken needs the last edge of run k..m
        (rivals are strictly stronger, so the recursion ends)."""
        for k2 in range(next_group[k], m + 1):
            for m2, other, _ in runs.get(k2, []):
                if m2 > m and groups[m2] != groups[m] and other > params.rival_margin * strength:
                    if params.chained_rivals and chained(k, m, k2, m2):
                        continue
                    if (k2, m2) not in wins:
                        wins[k2, m2] = not beaten(k2, m2, other)
                    if wins[k2, m2]:
                        return True
        return False

    taken: list[Run] = []
    k = 0
    while k < len(steps):
        if k not in runs:
            k += 1
            continue
        m, strength, chosen = runs[k][0]
        if beaten(k, m, strength):
            k += 1
            continue
        taken.append(Run(k, m, chosen))
        k = next_group[m]
    return taken


def _closest_readings(steps: list[Step], group: list[int], k: int, m: int) -> tuple[Step, ...]:
    """The steps a run from step ``k`` to step ``m`` counts: those two, and of each group
    between one reading, chosen so that the run ends nearest where it started (every
    combination while there are at most :data:`MAX_READING_CHOICES`, else the most
    significant reading of each group)."""
    between: list[list[Step]] = []
    for j in range(k + 1, m):
        if group[j] in (group[k], group[m]):
            continue
        if between and group[j] == group[j - 1]:
            between[-1].append(steps[j])
        else:
            between.append([steps[j]])
    choices = math.prod(len(readings) for readings in between)
    if choices > MAX_READING_CHOICES:
        between = [[max(readings, key=lambda s: s.chi2)] for readings in between]
    best: tuple[Step, ...] = ()
    best_total = math.inf
    for middle in itertools.product(*between):
        run = (steps[k], *middle, steps[m])
        total = math.hypot(sum(s.dx_m for s in run), sum(s.dy_m for s in run))
        if total < best_total:
            best, best_total = run, total
    return best
