"""Fixes the camera cannot have reached: lone speed spikes, excursions away and back, and
breaks (the receiver lost its position and found it elsewhere), told apart by how fast the
track around them moves (step 3 of :mod:`.clean`).

Units: seconds (GPS clock), metres in the city CRS, m/s.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:  # clean imports this module; the settings are its
    from city360.video_store.clean import CleanParams

__all__ = [
    "JUMP_CONTEXT_S",
    "MAX_BURST_RETURN_S",
    "MAX_EXCURSION_S",
    "drop_speed_spikes",
    "find_jumps",
]

FloatArray = npt.NDArray[np.float64]


def drop_speed_spikes(
    t_s: FloatArray, x_m: FloatArray, y_m: FloatArray, max_speed_mps: float
) -> npt.NDArray[np.bool_]:
    """Mask of fixes to keep: False for a fix reached from the previous kept fix and left to
    the next one both faster than ``max_speed_mps`` (a lone jump and back)."""
    n = t_s.shape[0]
    keep = np.ones(n, bool)
    prev = 0
    for i in range(1, n - 1):
        dt_in = t_s[i] - t_s[prev]
        dt_out = t_s[i + 1] - t_s[i]
        v_in = math.hypot(x_m[i] - x_m[prev], y_m[i] - y_m[prev]) / dt_in
        v_out = math.hypot(x_m[i + 1] - x_m[i], y_m[i + 1] - y_m[i]) / dt_out
        v_skip = math.hypot(x_m[i + 1] - x_m[prev], y_m[i + 1] - y_m[prev]) / (dt_in + dt_out)
        if v_in > max_speed_mps and v_out > max_speed_mps and v_skip <= max_speed_mps:
            keep[i] = False
        else:
            prev = i
    return keep


JUMP_CONTEXT_S = 30.0
"""Half-width of the window whose median step speed a jump is compared with, seconds."""


MAX_EXCURSION_S = 10.0
"""Fixes that jump away and back within this many seconds are outliers (multipath), not two
breaks: they are dropped and the track runs on, seconds."""


MAX_BURST_RETURN_S = 30.0
"""Fixes that jump away and step back later than :data:`MAX_EXCURSION_S` but within this many
seconds are an urban-canyon burst (5-20 s, and the fix taken for "before" the jump may
already be part of the way out): no break, and left in for :func:`.gps_bursts.burst_mask`,
seconds. The way back must be a step (at least half the jump from the median of the fixes
out there): a walker who relocked and then walks back past the old place is still a break."""


def find_jumps(
    t_s: FloatArray, x_m: FloatArray, y_m: FloatArray, params: CleanParams
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """``(jumps, outliers)``: indices ``k`` where the step from fix ``k`` to fix ``k + 1`` is a
    break (see :class:`CleanParams`: long, and far faster than the motion around it), and a mask
    of the fixes of excursions (away at one jump, back at the next within
    :data:`MAX_EXCURSION_S`), which are outliers rather than breaks; a jump that steps back
    later, within :data:`MAX_BURST_RETURN_S`, is a burst: neither a break nor an outlier
    here (:func:`.gps_bursts.burst_mask` drops it). A walker's long dropout
    (40 m in 30 s) is slow and stays bridged; a car's 15 m a second is its usual speed.
    """
    n = t_s.shape[0]
    outliers = np.zeros(n, bool)
    if n < 2:
        return np.zeros(0, np.int64), outliers
    step = np.hypot(np.diff(x_m), np.diff(y_m))
    dt = np.maximum(np.diff(t_s), 1e-3)
    speed = step / dt
    mid = 0.5 * (t_s[1:] + t_s[:-1])

    def usual_speed(k: int) -> float:
        near = np.abs(mid - mid[k]) <= JUMP_CONTEXT_S
        near[k] = False
        if not near.any():
            # a sparse logger (a fix every 40 s): the steps either side are the context;
            # a track of one step has none, and nothing to call it a jump against
            near[max(k - 1, 0) : k + 2] = True
            near[k] = False
        return float(np.median(speed[near])) if near.any() else math.inf

    def is_jump(length_m: float, seconds: float, usual: float) -> bool:
        limit = params.jump_speed_factor * usual + 2.0
        return length_m >= params.jump_min_m and length_m / max(seconds, 1e-3) > limit

    jumps: list[int] = []
    k = 0
    while k < n - 1:
        if step[k] < params.jump_min_m or not is_jump(float(step[k]), float(dt[k]), usual_speed(k)):
            k += 1
            continue
        # the track skips fix k: from k - 1 to k + 1 is no jump (fix k came in under the
        # length limit, or the two steps are far apart)
        skips = k >= 1 and not is_jump(
            math.hypot(x_m[k + 1] - x_m[k - 1], y_m[k + 1] - y_m[k - 1]),
            float(t_s[k + 1] - t_s[k - 1]),
            usual_speed(k),
        )
        # fix k alone was off when it also lies farther from the fix before than the fix
        # after does (``lone_fix_farther``); else it is where the track was, and fix k + 1
        # may be the way out of a short excursion (below)
        nearer = (
            skips
            and params.lone_fix_farther
            and math.hypot(x_m[k] - x_m[k - 1], y_m[k] - y_m[k - 1])
            <= math.hypot(x_m[k + 1] - x_m[k - 1], y_m[k + 1] - y_m[k - 1])
        )
        if skips and not nearer:
            outliers[k] = True
            k += 1
            continue
        # an excursion comes back: a later fix (within MAX_EXCURSION_S, or the very next one
        # however late: a lone outlier just before a dropout) nearer to where the track was
        # before the jump than to where it jumped to
        back = None
        m = k + 2
        while m < n and (m == k + 2 or t_s[m] - t_s[k + 1] <= MAX_BURST_RETURN_S):
            to_before = math.hypot(x_m[m] - x_m[k], y_m[m] - y_m[k])
            to_after = math.hypot(x_m[m] - x_m[k + 1], y_m[m] - y_m[k + 1])
            if to_before < to_after:
                back = m
                break
            m += 1
        short = back is not None and (back == k + 2 or t_s[back] - t_s[k + 1] <= MAX_EXCURSION_S)
        if nearer and not short:
            # no short excursion after fix k: fix k is dropped as before round twenty (a
            # canyon burst's first fix, mostly; a break or a long burst here cost Hamburg
            # canyon twins 0.2-1.6 m). A short one is dropped and fix k kept: a walker's 2
            # fixes 28-35 m off, 2 s after a good fix (no jump at 4 times a 1 Hz walker's
            # noisy median speed), cost that fix, and their way back was a break (Nerima SW
            # one-way phone seed 5, 121-124 s: then the burst test took the piece's end for
            # a burst and masked 9 good fixes)
            outliers[k] = True
            k += 1
            continue
        if back is not None and back > k + 2 and t_s[back] - t_s[k + 1] > MAX_EXCURSION_S:
            # a late way back must be a step too (a burst's), not a walk back past the old
            # place after a relock: the fixes out there, at their median, sit far from it
            stay_x = float(np.median(x_m[k + 1 : back]))
            stay_y = float(np.median(y_m[k + 1 : back]))
            if math.hypot(x_m[back] - stay_x, y_m[back] - stay_y) >= 0.5 * step[k]:
                k = back  # a burst: neither a break nor dropped here (burst_mask drops it)
                continue
            back = None
        if back is None:
            jumps.append(k)
            k += 1
        else:
            outliers[k + 1 : back] = True
            k = back
    return np.asarray(jumps, np.int64), outliers
