"""One edge read several times across a dropout (city360/video_store/gps_bursts/gap_groups.py)."""

from __future__ import annotations

import numpy as np
import pytest

from city360.video_store.gps_bursts import BurstParams, Step, burst_mask
from city360.video_store.gps_bursts.gap_groups import gap_groups
from tests.video_store.gps_bursts.walks import add_burst, with_slow_noise


@pytest.mark.parametrize("seed", [1, 8, 9])
def test_a_way_back_a_dropout_reads_twice_still_closes_its_burst(seed: int) -> None:
    """Hamburg canyon twin seed 18's shape at 1465-1503 s: a walk east at 1.3 m/s under slow
    noise, a burst at 100-116.5 s (-4, 24.5) m whose way back falls in a 6.6 s dropout, and a
    burst with a like offset at 122.7-137.3 s. Across the dropout the step test reads the way
    back at two or three probes (one filter sees the same fixes at each), 38-52 m long; the
    run through all of them did not come back, and the run of the last reading with the
    second burst's way out did: the good fixes between the bursts were masked and the second
    burst kept (27 of 40 seeds of this shape). Read as one edge, each burst closes with its
    own edges (38 of 40 seeds right, against 13; none worse)."""
    t = np.arange(0.0, 200.0)
    x, y = 1.3 * t, np.zeros_like(t)
    fx, fy = with_slow_noise(x, y, seed)
    fx, fy = add_burst(t, fx, fy, 100.0, 116.5, (-4.0, 24.5))
    fx, fy = add_burst(t, fx, fy, 122.7, 137.3, (0.0, 25.5))
    logged = ~((t >= 112.0) & (t < 118.6))  # the dropout
    t, fx, fy = t[logged], fx[logged], fy[logged]
    first = (t >= 102.0) & (t <= 111.0)
    second = (t >= 124.7) & (t <= 135.3)
    between = (t >= 119.0) & (t <= 121.0)
    outside = (t < 98.0) | (t > 139.3)
    old = burst_mask(t, fx, fy, params=BurstParams(one_step_per_gap=False))
    assert old[between].any()  # the cleaner before this rule
    assert not old[second].all()
    mask = burst_mask(t, fx, fy)
    assert mask[first].all()
    assert mask[second].all()
    assert not mask[between].any()
    assert not mask[outside].any()


def test_readings_of_a_step_share_a_group_only_across_a_gap() -> None:
    """Steps whose probes share one filter's fixes (a dropout between) and point the same way
    are one group; the same steps with fixes between, or pointing apart, are not."""
    steps = [
        Step(10.0, 0.0, 30.0, 60.0, 9.0),
        Step(15.0, 2.0, 40.0, 80.0, 16.0),
        Step(20.0, 0.0, -30.0, 60.0, 9.0),
    ]
    gap = np.concatenate([np.arange(0.0, 12.0), np.arange(19.0, 40.0)])
    assert gap_groups(steps, gap, BurstParams()) == [0, 0, 2]
    every_second = np.arange(0.0, 40.0)
    assert gap_groups(steps, every_second, BurstParams()) == [0, 1, 2]
    assert gap_groups(steps, gap, BurstParams(one_step_per_gap=False)) == [0, 1, 2]
