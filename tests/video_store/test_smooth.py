"""The two Kalman/RTS smoothers of ingest, tested directly on walks with known truth."""

from __future__ import annotations

import numpy as np
import pytest

from city360.video_store.smooth import heading_aided_smooth, nearest_steps, rts_smooth

SIGMA_M = 3.0
SPEED_MPS = 1.4


def _straight_walk(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Fixes at 1 Hz for 120 s of a walk north-east at 1.4 m/s, 3 m Gaussian noise per axis;
    returns (fix times, noisy x, noisy y, true positions at the fixes (N, 2))."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, 120.0, 1.0)
    along = SPEED_MPS * t
    truth = np.column_stack([along * np.sin(np.radians(45.0)), along * np.cos(np.radians(45.0))])
    noisy = truth + rng.normal(0.0, SIGMA_M, truth.shape)
    return t, noisy[:, 0], noisy[:, 1], truth


def _rmse(x: np.ndarray, y: np.ndarray, truth: np.ndarray) -> float:
    return float(np.sqrt(np.mean((x - truth[:, 0]) ** 2 + (y - truth[:, 1]) ** 2)))


def test_nearest_steps_picks_the_closer_grid_time() -> None:
    grid = np.array([0.0, 1.0, 2.0, 3.0])
    assert nearest_steps(grid, np.array([-5.0, 0.4, 0.6, 2.4, 9.0])).tolist() == [0, 0, 1, 2, 3]


def test_constant_velocity_smoother_beats_the_raw_noise() -> None:
    t, mx, my, truth = _straight_walk(seed=1)
    sx, sy, vx, vy, gated = rts_smooth(
        t, t, mx, my, sigma_m=SIGMA_M, accel_sigma=0.6, gate_sigma=4.0
    )
    raw = _rmse(mx, my, truth)
    assert raw == pytest.approx(SIGMA_M * np.sqrt(2), rel=0.2)
    assert _rmse(sx, sy, truth) < 0.4 * raw
    assert np.median(np.hypot(vx, vy)) == pytest.approx(SPEED_MPS, abs=0.2)
    assert gated == 0


def test_an_outlier_fix_is_gated_out() -> None:
    t, mx, my, truth = _straight_walk(seed=2)
    mx = mx.copy()
    mx[60] += 80.0  # one fix 80 m off to the east
    sx, sy, *_, gated = rts_smooth(t, t, mx, my, sigma_m=SIGMA_M, accel_sigma=0.6, gate_sigma=4.0)
    assert gated == 1
    error_there = float(np.hypot(sx[60] - truth[60, 0], sy[60] - truth[60, 1]))
    assert error_there < 3.0  # the smoothed path did not jump towards the outlier
    hx, hy, _ = heading_aided_smooth(
        t, np.full(t.shape, 45.0), t, mx, my, sigma_m=SIGMA_M, gate_sigma=4.0
    )
    assert float(np.hypot(hx[60] - truth[60, 0], hy[60] - truth[60, 1])) < 3.0


def test_heading_aided_smoother_follows_a_corner() -> None:
    """60 s north, then a sharp right turn and 60 s east: with the heading known the corner is
    followed, not cut (the constant-velocity smoother rounds it off)."""
    rng = np.random.default_rng(3)
    grid = np.arange(0.0, 120.0, 0.1)
    heading = np.where(grid < 60.0, 0.0, 90.0)
    north = np.minimum(grid, 60.0) * SPEED_MPS
    east = np.maximum(grid - 60.0, 0.0) * SPEED_MPS
    truth = np.column_stack([east, north])
    fixes = np.arange(0, len(grid), 10)  # 1 Hz
    t_fix = grid[fixes]
    mx = truth[fixes, 0] + rng.normal(0.0, SIGMA_M, len(fixes))
    my = truth[fixes, 1] + rng.normal(0.0, SIGMA_M, len(fixes))
    hx, hy, speed = heading_aided_smooth(grid, heading, t_fix, mx, my, sigma_m=SIGMA_M)
    corner = np.abs(grid - 60.0) < 5.0
    aided = float(np.max(np.hypot(hx[corner] - east[corner], hy[corner] - north[corner])))
    cx, cy, *_ = rts_smooth(grid, t_fix, mx, my, sigma_m=SIGMA_M, accel_sigma=0.6, gate_sigma=4.0)
    plain = float(np.max(np.hypot(cx[corner] - east[corner], cy[corner] - north[corner])))
    assert aided < 2.0
    assert aided < plain
    assert _rmse(hx, hy, truth) < 0.5 * SIGMA_M
    assert np.median(speed) == pytest.approx(SPEED_MPS, abs=0.1)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_the_aided_speed_held_to_the_gps_speed_does_not_walk_backwards(seed: int) -> None:
    """A walker heading north at 1.4 m/s; from 30 s the fixes of a burst the step test missed
    drift back south at 0.6 m/s for 15 s, then 20 s of fixes are masked. With the speed free
    the aided smoother walks backwards (-0.5 to -0.7 m/s) to follow them and stays behind
    through the masked span; held to the GPS-only smoothing's speed (a magnitude, >= 0) it
    does not, and the masked span is nearer the truth (the filmed Hamburg canyon twin,
    seed 1, 46-85 s, in small)."""
    from city360.video_store.smooth import heading_aided_smooth

    rng = np.random.default_rng(seed)
    t = np.arange(0.0, 90.0 + 1e-9, 0.1)
    fix_t = np.arange(0.0, 91.0)
    fix_x = rng.normal(0.0, 2.0, fix_t.shape)
    fix_y = 1.4 * fix_t + rng.normal(0.0, 2.0, fix_t.shape)
    burst = (fix_t >= 30) & (fix_t < 45)
    fix_y[burst] = 42.0 - 0.6 * (fix_t[burst] - 30) + rng.normal(0.0, 2.0, burst.sum())
    kept = ~((fix_t >= 45) & (fix_t < 65))
    fix_t, fix_x, fix_y = fix_t[kept], fix_x[kept], fix_y[kept]
    _, _, vx, vy, _ = rts_smooth(t, fix_t, fix_x, fix_y, sigma_m=3.0, accel_sigma=0.6,
                                 gate_sigma=4.0)  # fmt: skip
    north = np.zeros_like(t)
    masked = (t >= 45) & (t < 65)

    def run(speed: np.ndarray | None) -> tuple[float, float]:
        x, y, s = heading_aided_smooth(t, north, fix_t, fix_x, fix_y, sigma_m=3.0, speed_mps=speed)
        error = np.hypot(x[masked], y[masked] - 1.4 * t[masked])
        return float(s.min()), float(np.sqrt(np.mean(error**2)))

    free_min, free_error = run(None)
    held_min, held_error = run(np.hypot(vx, vy))
    assert free_min < -0.3  # the defect, still there without a speed
    assert held_min > -0.1  # at most noise, not a walk backwards
    assert held_error < free_error - 0.5


def _car_with_a_heading_gone_off(seed: int) -> tuple[np.ndarray, ...]:
    """80 s of a car at 8.3 m/s (north, a 90 degree bend right over 30-40 s, east), fixes at
    10 Hz with 2 m noise per axis, and a heading from the pictures that drifts 15 degrees off
    over the last 20 s and stays there (what the filmed SF route's fused heading did over its
    last 8 s, where the correction had no more GPS heading to catch up with). Returns
    (grid and fix times, heading deg, fix x, fix y, true x, true y)."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, 80.0, 0.1)
    true_heading = np.clip((t - 30.0) * 9.0, 0.0, 90.0)
    step = 8.3 * 0.1
    rad = np.radians(true_heading)
    x = np.concatenate([[0.0], np.cumsum(step * np.sin(rad[1:]))])
    y = np.concatenate([[0.0], np.cumsum(step * np.cos(rad[1:]))])
    heading = true_heading - 15.0 * np.clip((t - 60.0) / 15.0, 0.0, 1.0)
    heading = heading + rng.normal(0.0, 0.3, t.shape)
    return t, heading, x + rng.normal(0.0, 2.0, t.shape), y + rng.normal(0.0, 2.0, t.shape), x, y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_fast_camera_s_heading_error_does_not_pull_it_off_its_fixes(seed: int) -> None:
    """Held to the pictures' heading with no noise across it, the aided smoother dead-reckoned
    the car 15 degrees off and let ten fixes a second pull it back only slowly: 1.3-1.4 m RMSE
    over the 80 s against 0.5 m for the GPS-only smoother (seeds 0-2). A heading error moves
    the camera sideways at speed x error, so the position noise across the heading grows with
    the speed (``cross_sigma_per_mps``): now about as good as the GPS-only smoothing."""
    t, heading, fix_x, fix_y, x, y = _car_with_a_heading_gone_off(seed)
    speed = np.full(t.shape, 8.3)

    def rmse(track_x: np.ndarray, track_y: np.ndarray) -> float:
        return float(np.sqrt(np.mean((track_x - x) ** 2 + (track_y - y) ** 2)))

    plain_x, plain_y, *_ = rts_smooth(t, t, fix_x, fix_y, sigma_m=2.0, accel_sigma=0.6,
                                      gate_sigma=4.0)  # fmt: skip
    held = heading_aided_smooth(t, heading, t, fix_x, fix_y, sigma_m=2.0, speed_mps=speed,
                                cross_sigma_per_mps=0.0)  # fmt: skip
    aided = heading_aided_smooth(t, heading, t, fix_x, fix_y, sigma_m=2.0, speed_mps=speed)
    plain = rmse(plain_x, plain_y)
    assert rmse(held[0], held[1]) > 2.0 * plain  # the defect, with no noise across
    assert rmse(aided[0], aided[1]) < 1.3 * plain


def test_a_still_stretch_of_the_aided_smoother_has_one_position() -> None:
    """Steps marked ``still`` move the position neither along the heading nor by noise: the
    whole stretch gets one position, though its fixes creep 10 m (without the mask the track
    follows them most of the way)."""
    t = np.arange(0.0, 120.0 + 1e-9, 0.5)
    standing = (t >= 40.0) & (t < 80.0)
    speed = np.where(standing, 0.0, 1.2)
    x = np.concatenate([[0.0], np.cumsum(np.diff(t) * speed[:-1])])
    creep = np.interp(t, [0.0, 40.0, 80.0, 120.0], [0.0, 0.0, 10.0, 10.0])
    fix = np.arange(0, t.shape[0], 2)
    still = np.zeros(t.shape[0], bool)
    still[1:] = standing[:-1] & (t[1:] <= 80.0)
    kwargs = {"sigma_m": 1.0, "speed_mps": speed}
    args = (t, np.full(t.shape, 90.0), t[fix], x[fix], creep[fix])
    held_x, held_y, _ = heading_aided_smooth(*args, still=still, **kwargs)  # type: ignore[arg-type]
    _, free_y, _ = heading_aided_smooth(*args, **kwargs)  # type: ignore[arg-type]
    stop = (t >= 40.0) & (t <= 80.0)
    assert np.ptp(held_x[stop]) < 1e-6
    assert np.ptp(held_y[stop]) < 1e-6
    assert np.ptp(free_y[stop]) > 5.0


def _walk_with_a_kept_burst(seed: int) -> tuple[np.ndarray, ...]:
    """120 s of a walk north at 1.4 m/s, fixes at 1 Hz with 3 m noise per axis; over
    50-70 s the fixes sit 20 m east of the walk (an urban-canyon burst, ramped over 2 s at
    each end, as :mod:`city360.synth.gps` makes them) and the cleaning kept them all.
    Returns (grid times, fix times, fix x, fix y)."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, 120.0 + 1e-9, 0.1)
    fix_t = np.arange(0.0, 121.0)
    ramp = np.clip(np.minimum(fix_t - 50.0, 70.0 - fix_t) / 2.0, 0.0, 1.0)
    burst_m = np.where((fix_t >= 50.0) & (fix_t < 70.0), ramp, 0.0) * 20.0
    fix_x = burst_m + rng.normal(0.0, 3.0, fix_t.shape)
    fix_y = SPEED_MPS * fix_t + rng.normal(0.0, 3.0, fix_t.shape)
    return t, fix_t, fix_x, fix_y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_run_of_fixes_that_leaps_sideways_is_down_weighted(seed: int) -> None:
    """The pictures say "straight on at walking pace" while a kept burst's fixes leap 20 m
    sideways: each fix passes the innovation gate, so the aided smoother follows them (6.9-9.0
    m RMSE over the burst, seeds 0-4); reweighted on the runs of residuals it stays on the
    walk (0.6-1.7 m), and off the burst it is no worse."""
    from city360.video_store.smooth import reweighted_heading_aided_smooth

    t, fix_t, fix_x, fix_y = _walk_with_a_kept_burst(seed)
    north = np.zeros_like(t)
    speed = np.full(t.shape, SPEED_MPS)
    burst = (t >= 50.0) & (t < 70.0)

    def errors(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
        error = np.hypot(x, y - SPEED_MPS * t)
        return float(np.sqrt(np.mean(error[burst] ** 2))), float(
            np.sqrt(np.mean(error[~burst] ** 2))
        )

    plain_x, plain_y, _ = heading_aided_smooth(
        t, north, fix_t, fix_x, fix_y, sigma_m=SIGMA_M, speed_mps=speed
    )
    runs_x, runs_y, _ = reweighted_heading_aided_smooth(
        t, north, fix_t, fix_x, fix_y, sigma_m=SIGMA_M, speed_mps=speed
    )
    plain_in, plain_out = errors(plain_x, plain_y)
    runs_in, runs_out = errors(runs_x, runs_y)
    assert plain_in > 6.0  # the defect: the aided track follows the burst
    assert runs_in < 2.5
    assert runs_out < plain_out
