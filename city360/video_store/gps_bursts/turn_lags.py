"""Steps a fast camera drove through: the stiff filters' lag at a turn, not a burst's edge.

Units: seconds (GPS clock), metres in the city CRS.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from city360.video_store.gps_bursts.params import BurstParams, Step
from city360.video_store.usual_speed import chord_speed_about_mps

__all__ = ["lone_outliers_of", "off_turn_lags"]


FloatArray = npt.NDArray[np.float64]


def off_turn_lags(
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

    A lone outlier (:func:`lone_outliers_of`, with ``lone_outliers``) is no pair's end: it
    jumps away and back within a fix, which no edge does, and the two filters gate it. With
    it, one bad fix next to a car's corner kept the corner's lag as a step (SF car, phone
    GPS, seed 14: a fix 25 m off 2 s before a left turn; the lag paired with the forward
    filter's lag read across a dropout after the turn and 12 good fixes were masked)."""
    if params.fast_mps is None or not steps:
        return steps
    slack = params.continuity_sigma * math.sqrt(2.0) * sigma_m
    kept = []
    for step in steps:
        usual = chord_speed_about_mps(t_s, x_m, y_m, step.t_s, sigma_m)
        near = np.flatnonzero(np.abs(t_s - step.t_s) <= params.gap_s + 1.0)
        if params.lone_outliers and usual >= params.fast_mps:
            near = near[~lone_outliers_of(t_s, x_m, y_m, near, usual, slack)]
        if usual < params.fast_mps or near.shape[0] < 2:
            kept.append(step)
            continue
        i, j = np.triu_indices(near.shape[0], k=1)
        a, b = near[i], near[j]
        chord = np.hypot(x_m[b] - x_m[a], y_m[b] - y_m[a])
        if float(np.max(chord - usual * (t_s[b] - t_s[a]))) > slack:
            kept.append(step)
    return kept


def lone_outliers_of(
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
