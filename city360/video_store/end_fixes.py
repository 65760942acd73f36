"""A track's first and last fixes, judged from one side.

The cleaner's outlier tests (:func:`.jumps.drop_speed_spikes`, :func:`.jumps.find_jumps`,
:func:`.gps_bursts.burst_mask`) judge a fix against the fixes on both sides of it. A track's first
or last fix has only one side: a lone spike there is reached *or* left too fast, never both, so
the speed gate keeps it, and the jump test, which blames the earlier fix of a jump when the
track around it is noisy, dropped the good fix before it instead. On a real walk (Nerima grid,
``walk_028``) the last fix sat 32 m east of the one before; the burst test then took the true
last fixes for a burst, the smoother ran the track's last 6 s out to the outlier, and the build
made a junction at the end of that false street.

:func:`end_outliers` judges the fixes at each end by the one thing one side can tell: how far
the track could have got. A run of at most :data:`MAX_END_RUN_S` seconds of end fixes that
stands further from the fix next to it than the track's own usual speed (times
``speed_factor``, :attr:`.clean.CleanParams.end_speed_factor`, plus 2 m/s) can carry it in
that time, plus the noise of two fixes, is an outlier run. Distance, not direction: a real
turn at the end is never further than the walk allows, and the allowance scales with the
track's speed, so a car at 30 km/h keeps its last 10 m steps where a walker's 30 m jump goes.

Judged from one side, good end fixes look out of reach too when the fixes next to them are
the bad ones: a lone outlier just inside the end, or a canyon burst that starts (or ends) a
few fixes in. Both are the same picture: the fixes inside the end step sit off the track by
about that step, and somewhere further in (within ``max_burst_s``, the burst test's longest
burst) the track steps back by it. So before a run is dropped the fixes inside it are
searched for that way back (:func:`_steps_back_inside`): at each place ``a`` further in, the
fixes beyond ``a`` (a few, on the end's side) are compared with the line of the fixes on the
other side of ``a`` carried over to them. Nearer that line moved by the end step's offset
than that line itself, they are the off ones (a burst or an outlier), the end run is good,
and nothing is dropped. A real lone outlier at the end leaves no such way back: the fixes
inside it continue the track.

Units: seconds, metres (city CRS, x east, y north), m/s.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = ["END_NOISE_SIGMAS", "LINE_FIXES", "MAX_END_RUN_S", "OFF_FIXES", "end_outliers"]

FloatArray = npt.NDArray[np.float64]

MAX_END_RUN_S = 2.0
"""Longest run of fixes at either end that can be dropped as one outlier run (first to last
fix), seconds: three fixes of a 1 Hz receiver, as long as the multipath spikes seen on real
walks. A longer run that stays away is a relocation: the jump test cuts the track there and
ingest reports the part after it (``tests/video_store/test_gps_split.py``)."""

END_NOISE_SIGMAS = 4.0
"""How many sigmas of the difference of two fixes the noise allowance is (``4`` lets a good fix
through all but three times in ten thousand)."""


LINE_FIXES = 5
"""How many fixes on the far side of a place the line the way-back test carries over is fitted
to (robustly: medians of slopes, so one outlier among them does not bend it)."""

OFF_FIXES = 3
"""How many fixes on the end's side of a place the way-back test compares with that line (their
median offset: one noisy fix does not decide)."""


def end_outliers(
    t_s: FloatArray,
    x_m: FloatArray,
    y_m: FloatArray,
    sigma_m: FloatArray,
    *,
    usual_mps: float,
    speed_factor: float,
    max_burst_s: float | None = None,
) -> npt.NDArray[np.bool_]:
    """Mask of fixes at the start or end of a track that no camera moving like this one reaches.

    ``t_s`` increasing (seconds), ``x_m``/``y_m`` metres, ``sigma_m`` each fix's one-axis
    noise (metres), ``usual_mps`` the track's usual moving speed (m/s). At each end the
    shortest run of fixes within :data:`MAX_END_RUN_S` of the end whose step in from the rest
    is impossible (see the module docstring) is marked. The fix its innermost fix is judged
    against must be in reach of the next one in, and every fix of the run nearer that innermost
    fix than the rest: a track that jumps and comes back is left to the two-sided tests. At
    least two fixes always remain unmarked. ``max_burst_s`` (seconds): how far in the fixes
    inside a run are searched for a way back that makes them, not the run, the off ones
    (:func:`_steps_back_inside`); None: not searched (the rule of round seventeen).
    """
    n = t_s.shape[0]
    out = np.zeros(n, bool)
    if n < 4:
        return out
    limit_mps = speed_factor * usual_mps + 2.0
    for ordered in (np.arange(n - 1, -1, -1), np.arange(n)):
        run = _outlier_run(t_s, x_m, y_m, sigma_m, ordered, limit_mps)
        if (
            run
            and max_burst_s is not None
            and _steps_back_inside(t_s, x_m, y_m, ordered, run, max_burst_s)
        ):
            run = 0
        out[ordered[:run]] = True
    if (~out).sum() < 2:
        return np.zeros(n, bool)
    return out


def _outlier_run(
    t_s: FloatArray,
    x_m: FloatArray,
    y_m: FloatArray,
    sigma_m: FloatArray,
    ordered: npt.NDArray[np.intp],
    limit_mps: float,
) -> int:
    """How many fixes, taken in ``ordered`` from the end being judged, are an outlier run."""
    edge_t = t_s[ordered[0]]

    def impossible(far: int, near: int) -> bool:
        step_m = math.hypot(x_m[far] - x_m[near], y_m[far] - y_m[near])
        noise_m = END_NOISE_SIGMAS * math.hypot(sigma_m[far], sigma_m[near])
        return step_m > limit_mps * abs(t_s[far] - t_s[near]) + noise_m

    for size in range(1, ordered.shape[0] - 2):
        outer, inner, beyond = ordered[size - 1], ordered[size], ordered[size + 1]
        if abs(edge_t - t_s[outer]) > MAX_END_RUN_S:
            return 0
        # the fix it is judged against must itself be in reach of the one inside it: an
        # outlier just inside the end (the two-sided tests' to judge) must not make the good
        # end fix look off
        if not impossible(outer, inner) or impossible(inner, beyond):
            continue
        run = ordered[:size]
        to_run = np.hypot(x_m[run] - x_m[outer], y_m[run] - y_m[outer])
        to_rest = np.hypot(x_m[run] - x_m[inner], y_m[run] - y_m[inner])
        return size if bool(np.all(to_run < to_rest)) else 0
    return 0


def _steps_back_inside(
    t_s: FloatArray,
    x_m: FloatArray,
    y_m: FloatArray,
    ordered: npt.NDArray[np.intp],
    run: int,
    max_burst_s: float,
) -> bool:
    """Whether the fixes inside an end run (``ordered[:run]``, ``ordered`` from the end being
    judged) sit off the track by the run's own step and the track steps back further in
    (module docstring): then the run is the good side of a burst or of an outlier."""
    inner = ordered[run]
    offset_x = x_m[inner] - x_m[ordered[run - 1]]
    offset_y = y_m[inner] - y_m[ordered[run - 1]]
    half_m2 = 0.5 * (offset_x * offset_x + offset_y * offset_y)
    last = ordered.shape[0] - LINE_FIXES
    for a in range(run + 1, last + 1):
        if abs(t_s[ordered[a]] - t_s[inner]) > max_burst_s:
            break
        off = ordered[max(run, a - OFF_FIXES) : a]
        line = ordered[a : a + LINE_FIXES]
        line_x = _line_at(t_s[line], x_m[line], t_s[off])
        line_y = _line_at(t_s[line], y_m[line], t_s[off])
        dx = float(np.median(x_m[off] - line_x))
        dy = float(np.median(y_m[off] - line_y))
        # nearer the line moved by the offset than the line itself
        if dx * offset_x + dy * offset_y > half_m2:
            return True
    return False


def _line_at(t_s: FloatArray, v: FloatArray, at_s: FloatArray) -> FloatArray:
    """The robust line through ``(t_s, v)`` (Theil-Sen: the median of the pairwise slopes,
    through the median point) at times ``at_s``."""
    i, j = np.triu_indices(t_s.shape[0], 1)
    dt = t_s[j] - t_s[i]
    usable = dt != 0
    slope = float(np.median((v[j] - v[i])[usable] / dt[usable])) if usable.any() else 0.0
    t_mid = float(np.median(t_s))
    return float(np.median(v - slope * (t_s - t_mid))) + slope * (at_s - t_mid)
