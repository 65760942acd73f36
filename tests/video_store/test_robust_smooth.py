"""Reweighted smoothing (city360/video_store/smooth.py robust_rts_smooth, used by clean_track):
fixes far off the track for their spread stop pulling it."""

from __future__ import annotations

import numpy as np
import pytest

from city360.video_store.clean import clean_track
from city360.video_store.smooth import robust_rts_smooth, rts_smooth
from tests.video_store.gps_bursts.walks import PROJECTION, corner_walk, track_of, with_noise


def with_outliers(
    x: np.ndarray, y: np.ndarray, seed: int, every: int = 10, range_m: float = 12.0
) -> tuple[np.ndarray, np.ndarray]:
    """Every ``every``-th fix thrown ``range_m`` off in a random direction: under the
    innovation gate of a 3 m receiver (about 24 m), so the gate keeps them all."""
    rng = np.random.default_rng(100 + seed)
    k = np.arange(5, len(x) - 5, every)
    angle = rng.uniform(0.0, 2 * np.pi, len(k))
    x, y = x.copy(), y.copy()
    x[k] += range_m * np.cos(angle)
    y[k] += range_m * np.sin(angle)
    return x, y


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_outliers_under_the_gate_do_not_pull_a_quiet_track(seed: int) -> None:
    """A receiver quieter than the 3 m it is assumed to be (1 m per axis) with a 12 m outlier
    every 10 s: the one-pass smoother is pulled 1.43-1.55 m RMS off the path by them."""
    t, x, y = corner_walk(1.4, 1.0)
    fx, fy = with_outliers(*with_noise(x, y, seed, sigma_m=1.0), seed)
    smooth = clean_track(track_of(t, fx, fy), PROJECTION)
    sx, sy, _ = smooth.sample(1.7e9 + t)
    error = np.hypot(sx - x, sy - y)
    assert float(np.sqrt(np.mean(error**2))) < 0.9


@pytest.mark.parametrize("seed", [0, 1])
def test_reweighting_leaves_clean_gaussian_fixes_nearly_alone(seed: int) -> None:
    """Without outliers the reweighted passes change the track by little (Huber weights
    touch only the tail beyond three robust sigmas)."""
    t, x, y = corner_walk(1.4, 1.0)
    fx, fy = with_noise(x, y, seed, sigma_m=3.0)
    grid = np.linspace(t[0], t[-1], 10 * len(t))
    args = {"sigma_m": 3.0, "accel_sigma": 0.6, "gate_sigma": 4.0}
    plain = rts_smooth(grid, t, fx, fy, **args)
    robust = robust_rts_smooth(grid, t, fx, fy, **args)
    shift = np.hypot(plain[0] - robust[0], plain[1] - robust[1])
    assert float(np.sqrt(np.mean(shift**2))) < 0.3
