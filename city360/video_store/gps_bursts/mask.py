"""The burst test's two entry points: the steps of a track, and the mask of its burst fixes.

Units: seconds (GPS clock), metres in the city CRS.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from city360.video_store.gps_bursts.gap_groups import gap_groups
from city360.video_store.gps_bursts.pairing import pair_steps
from city360.video_store.gps_bursts.params import BurstParams, Step
from city360.video_store.gps_bursts.spans import burst_spans, bursts_often
from city360.video_store.gps_bursts.step_test import (
    MIN_NOISE_M,
    fix_noise_m,
    peak_steps,
    step_profile,
)
from city360.video_store.gps_bursts.turn_lags import off_turn_lags

__all__ = ["burst_mask", "find_steps"]


FloatArray = npt.NDArray[np.float64]


def find_steps(
    t_s: FloatArray,
    x_m: FloatArray,
    y_m: FloatArray,
    *,
    sigma_m: float,
    params: BurstParams | None = None,
) -> list[Step]:
    """The steps of a track (the package docstring), in time order. ``sigma_m``: one-axis noise of
    the fixes, metres (:func:`.step_test.fix_noise_m`)."""
    params = params or BurstParams()
    if t_s.shape[0] < 8 or sigma_m <= 0:
        return []
    steps = peak_steps(step_profile(t_s, x_m, y_m, sigma_m, params), params)
    return off_turn_lags(steps, t_s, x_m, y_m, sigma_m, params)


def burst_mask(
    t_s: FloatArray,
    x_m: FloatArray,
    y_m: FloatArray,
    *,
    sigma_m: float | None = None,
    params: BurstParams | None = None,
) -> npt.NDArray[np.bool_]:
    """Mask of the fixes inside a burst (the package docstring). ``sigma_m``: the fixes' one-axis
    noise, metres (None: estimated with :func:`.step_test.fix_noise_m`; at least
    :data:`.step_test.MIN_NOISE_M`)."""
    params = params or BurstParams()
    mask = np.zeros(t_s.shape[0], bool)
    noise = max(fix_noise_m(t_s, x_m, y_m) if sigma_m is None else sigma_m, MIN_NOISE_M)
    bursting: bool | None = None
    for _ in range(params.rounds):
        rest = np.flatnonzero(~mask)
        if rest.shape[0] < 8:
            break
        profile = step_profile(t_s[rest], x_m[rest], y_m[rest], noise, params)
        steps = peak_steps(profile, params)
        steps = off_turn_lags(steps, t_s[rest], x_m[rest], y_m[rest], noise, params)
        groups = gap_groups(steps, profile.fix_t_s, params)
        runs = pair_steps(steps, params, groups=groups)
        if bursting is None:
            bursting = bursts_often(len(runs), float(t_s[-1] - t_s[0]), params)
        found = np.zeros_like(mask)
        spans = burst_spans(profile, steps, runs, params, way_back=bursting, groups=groups)
        for start_s, end_s in spans:
            found |= (t_s > start_s) & (t_s < end_s)
        if not (found & ~mask).any():
            break
        mask |= found
    return mask
