"""A walk into a track's first stop (or out of its last), told from GPS noise around the stop.

:func:`city360.video_store.stationary._stood_since` stretches a track's first stop back to its
first fix while most fixes passed lie within the stop's radius (8 m). A video that starts at a
junction and walks 9 m to the next before standing there keeps every fix of that walk within
the radius under 3 m of noise, so the walk was pinned to the stop and the street lost (Nerima
N one-way+stops seed 8, ``walk_010``). Nine metres under 3 m of noise is three sigmas on one
fix, too close for a tighter radius; the whole walk is the evidence: its fixes *ramp* from the
track's first position down to the stop at a walker's pace, where a standing receiver's fixes
scatter around it, and an urban-canyon burst that ends *steps* back.

So the fixes from the track's edge (the first fix, or the last with time reversed) are fitted
with a ramp: ``p(u) = c + L * max(0, 1 - u / T)`` (``u`` seconds from the edge, ``c`` where the
camera stood, ``L`` the edge's offset from it, metres, ``T`` how long the walk in took), least
squares on a 1 s grid of ``T``, on per-second medians of the fixes (a 10 Hz camera's fixes
are not ten independent ones). The walk is real when the ramp explains much more than the
noise would by chance (:data:`WALK_IN_SCORE` of the per-axis noise variance, measured on the
fixes after the ramp), it is at least half the stop's radius long, its pace is a walker's
(:data:`WALK_IN_MIN_MPS` up to a step's pace), and a step
(the offset held until ``T``, then gone: a burst) does not fit better.

Units: seconds, metres in the city CRS.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = ["WALK_IN_MAX_S", "WALK_IN_MIN_MPS", "WALK_IN_SCORE", "per_second_medians", "walk_in_s"]

FloatArray = npt.NDArray[np.float64]

WALK_IN_MAX_S = 20.0
"""Longest walk into a first stop this test looks for, seconds (a longer one leaves the stop's
radius, which :func:`~city360.video_store.stationary._walked` and ``WALKED_AWAY_RADII`` see)."""
WALK_IN_MIN_MPS = 0.5
"""Slowest pace of a walk in, metres a second: a slower ramp is the receiver's drift."""
WALK_IN_SCORE = 30.0
"""How much of the fixes' scatter the ramp must explain: the drop in squared residuals (over
a constant point), in units of the per-axis noise variance. Under white noise alone, with the
ramp's three free parameters and its duration searched, a drop of 30 comes by chance far less
than once in a thousand stops; correlated noise and missed bursts make it likelier (measured
in the design notes)."""
STEP_MARGIN = 10.0
"""How much better (squared residuals, in units of the per-axis noise variance) a step must fit
than the ramp to be taken for a burst: under noise a walk's ramp and a step a few seconds long
fit its per-second fixes about as well, a 10-30 m burst held and gone fits a step far better."""
MIN_SECONDS = 8
"""Fewest per-second medians (the walk and some standing) to judge, seconds."""
MIN_STANDING_S = 5
"""Fewest per-second medians after the ramp (the noise is measured on them), seconds."""


def per_second_medians(u_s: FloatArray, x_m: FloatArray, y_m: FloatArray) -> tuple[FloatArray, ...]:
    """Per-second medians: times (the bin's median), x, y."""
    bins = np.floor(u_s).astype(np.int64)
    starts = np.flatnonzero(np.r_[True, bins[1:] != bins[:-1]])
    ends = np.r_[starts[1:], bins.shape[0]]
    pieces = [(u_s[a:b], x_m[a:b], y_m[a:b]) for a, b in zip(starts, ends, strict=True)]
    return tuple(np.array([float(np.median(p[k])) for p in pieces]) for k in range(3))


def _fit(shape: FloatArray, xy: FloatArray) -> tuple[float, FloatArray]:
    """Least squares of ``xy`` (N, 2) on ``c + L * shape``: residual sum of squares and L."""
    design = np.column_stack([np.ones_like(shape), shape])
    coef, *_ = np.linalg.lstsq(design, xy, rcond=None)
    residual = xy - design @ coef
    return float((residual * residual).sum()), coef[1]


def walk_in_s(
    u_s: FloatArray, x_m: FloatArray, y_m: FloatArray, *, radius_m: float, max_mps: float
) -> float | None:
    """How long (seconds from the edge) the camera walked into the stop its fixes end at, or
    None when they are noise around a place (or too few to tell).

    ``u_s``: seconds from the track's edge (its first fix, or its last with time reversed),
    increasing from 0; ``x_m``/``y_m`` the fixes (metres), from the edge up to fixes where the
    camera stood; ``radius_m`` the stop's radius (a walk shorter than half of it is not worth
    telling: the pinned stop is within the noise of it); ``max_mps`` the fastest pace of a
    walk (a faster ramp is a step).
    """
    if u_s.shape[0] < 2:
        return None
    u, x, y = per_second_medians(u_s, x_m, y_m)
    if u.shape[0] < MIN_SECONDS:
        return None
    xy = np.column_stack([x, y])
    total = float(((xy - xy.mean(axis=0)) ** 2).sum())
    best: tuple[float, float, FloatArray] | None = None
    longest = min(WALK_IN_MAX_S, float(u[-MIN_STANDING_S]))
    for duration in np.arange(2.0, longest + 1e-9, 1.0):
        rss, offset = _fit(np.clip(1.0 - u / duration, 0.0, 1.0), xy)
        if best is None or rss < best[0]:
            best = (rss, float(duration), offset)
    if best is None:
        return None
    rss, duration, offset = best
    length = math.hypot(*offset)
    if length < radius_m / 2:
        return None
    if not WALK_IN_MIN_MPS <= length / duration <= max_mps:
        return None
    standing = xy[u >= duration]
    if standing.shape[0] < MIN_STANDING_S:
        return None
    # per-axis noise of the standing fixes, robust to an outlier (MAD of each axis)
    mad = np.median(np.abs(standing - np.median(standing, axis=0)), axis=0) * 1.4826
    variance = max(float(np.mean(mad * mad)), 1e-6)
    if (total - rss) / variance < WALK_IN_SCORE:
        return None
    steps = [_fit((u < d).astype(np.float64), xy)[0] for d in np.arange(1.0, longest + 1e-9)]
    if steps and min(steps) + STEP_MARGIN * variance < rss:  # held, then gone: a burst
        return None
    return duration
