"""The two-filter step test (the package docstring): a stiff constant-velocity Kalman filter
forward over the fixes before each instant, another backward over those after it, and the
test of their difference ``D``; its peaks are the track's steps.

Units: seconds (GPS clock), metres in the city CRS.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from city360.video_store.gps_bursts.params import BurstParams, Step
from city360.video_store.smooth import MAX_GATED_IN_A_ROW
from city360.video_store.usual_speed import median_step_speed_mps

__all__ = ["MIN_NOISE_M", "StepProfile", "fix_noise_m", "peak_steps", "step_profile"]


FloatArray = npt.NDArray[np.float64]


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
class StepProfile:
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


def step_profile(
    t_s: FloatArray, x_m: FloatArray, y_m: FloatArray, sigma_m: float, params: BurstParams
) -> StepProfile:
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
    floor = np.maximum(
        params.min_step_m, params.turn_lag_s * median_step_speed_mps(t_s, x_m, y_m, probe)
    )
    return StepProfile(probe, dx, dy, var, chi2, floor, t_s)


def peak_steps(profile: StepProfile, params: BurstParams) -> list[Step]:
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
