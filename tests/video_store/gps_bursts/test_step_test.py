"""The two-filter step test (city360/video_store/gps_bursts/step_test.py): the fixes' noise,
and what is no step: a corner, walked or driven, and a step that stays."""

from __future__ import annotations

import numpy as np
import pytest

from city360.video_store.gps_bursts import burst_mask, find_steps, fix_noise_m
from tests.video_store.gps_bursts.walks import add_burst, corner_walk, with_noise


def test_fix_noise_is_the_white_noise_of_a_walk() -> None:
    t, x, y = corner_walk(1.4, 1.0)
    fx, fy = with_noise(x, y, seed=0, sigma_m=2.5)
    fx, fy = add_burst(t, fx, fy, 40.0, 55.0, (20.0, 0.0))
    assert fix_noise_m(t, fx, fy) == pytest.approx(2.5, rel=0.15)


@pytest.mark.parametrize(
    ("speed_mps", "rate_hz"),
    [(1.4, 1.0), (8.3, 10.0), (8.3, 1.0), (12.0, 1.0)],
    ids=["walking", "driving", "driving-phone-gps", "driving-fast-phone-gps"],
)
@pytest.mark.parametrize("seed", [0, 1])
def test_a_corner_is_no_step(speed_mps: float, rate_hz: float, seed: int) -> None:
    """A car with 1 Hz phone GPS (the driving-phone-gps cases) failed before round eighteen:
    the stiff filters lag 7-8 s of its speed at the corner, and 23-31 good fixes either side
    of it were masked as a burst."""
    t, x, y = corner_walk(speed_mps, rate_hz)
    fx, fy = with_noise(x, y, seed, sigma_m=2.5 if rate_hz == 1.0 else 1.0)
    assert find_steps(t, fx, fy, sigma_m=fix_noise_m(t, fx, fy)) == []
    assert not burst_mask(t, fx, fy).any()


def test_a_step_that_stays_is_no_burst() -> None:
    """The receiver found itself 30 m off and stayed there: a break for find_jumps, not a
    burst to drop."""
    t, x, y = corner_walk(1.4, 1.0)
    fx, fy = with_noise(x, y, 4)
    fx = fx + np.where(t >= 60.0, 30.0, 0.0)
    assert len(find_steps(t, fx, fy, sigma_m=fix_noise_m(t, fx, fy))) == 1
    assert not burst_mask(t, fx, fy).any()
