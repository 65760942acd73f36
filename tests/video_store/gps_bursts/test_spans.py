"""The spans masked (city360/video_store/gps_bursts/spans.py): an unpaired step's way back,
looked for along the step on a track that bursts often, and the run edges it may not take."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from city360.video_store.gps_bursts import BurstParams, burst_mask
from tests.video_store.gps_bursts.walks import (
    DATA,
    add_burst,
    corner_walk,
    with_noise,
    with_slow_noise,
)

WAY_BACK = BurstParams(way_back_min_runs=0, way_back_min_per_min=0.0)
"""The second look for an unpaired step's way back on every track (by default only on a
track that bursts often)."""


NO_WAY_BACK = BurstParams(way_back_chi2=None)
"""Never the second look (the cleaner before round twelve)."""


def test_a_long_burst_with_a_weak_way_back_is_found_along_its_step() -> None:
    """Hamburg canyon twin seed 7, 80-180 s of the walk (data/README.md): a 25 s burst at
    112-137 s (two of the model's bursts merged, one offset) while walking. Its step out is
    21 m at chi² 58, its way back only 13 m at chi² 20 under the two-degree test, so no run
    of steps pairs it and the whole burst was kept. Tested along the step out's direction
    (one degree of freedom) the way back stands out: both edges, and the fixes between, go."""
    table = np.loadtxt(DATA / "canyon_seed7_overlapping.csv", delimiter=",", skiprows=1)
    t, x, y = table[:, 0], table[:, 1], table[:, 2]
    # the walk's own noise (fix_noise_m over the whole track)
    long_burst = (t >= 114.0) & (t <= 135.0)
    assert not burst_mask(t, x, y, sigma_m=2.27, params=NO_WAY_BACK)[long_burst].any()
    mask = burst_mask(t, x, y, sigma_m=2.27, params=WAY_BACK)
    assert mask[long_burst].all()
    assert mask[(t >= 144.0) & (t <= 149.0)].all()  # the next burst, found before too
    # nothing outside the bursts and the 2 s the mask reaches beyond an edge
    near_bursts = ((t >= 110.0) & (t < 139.5)) | ((t >= 140.0) & (t < 153.5))
    assert not mask[~near_bursts].any()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_weak_burst_ends_at_its_own_way_back_not_at_the_next_bursts_edge(seed: int) -> None:
    """A 14 m burst (36-48 s) 12 s before a 25 m one (60-72 s), both north-south. Only the
    weak burst's step out passes the two-degree test (chi² 36-39), and no run pairs it. Along
    its direction its way back is the weak step at 48 s, but the strong burst's step out at
    61 s points the same way, further: taken as the way back it would mask the 12 s of good
    fixes between. An edge of a run already paired is no way back (gps_bursts.spans.burst_spans)."""
    t, x, y = corner_walk(1.4, 1.0)
    fx, fy = with_noise(x, y, seed)
    fx, fy = add_burst(t, fx, fy, 36.0, 48.0, (0.0, -14.0))
    fx, fy = add_burst(t, fx, fy, 60.0, 72.0, (0.0, 25.0))
    mask = burst_mask(t, fx, fy, params=WAY_BACK)
    assert mask[(t >= 39.0) & (t < 46.0)].all()  # the weak burst
    assert mask[(t >= 62.0) & (t < 70.0)].all()  # the strong one
    assert not mask[(t >= 50.0) & (t < 58.0)].any()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_way_back_look_runs_only_on_a_track_that_bursts_often(seed: int) -> None:
    """The seed-7 window of the test above on its own (one paired burst in 100 s) does not
    burst often, and the default leaves its long burst alone: on such a track a weak step and
    its way back are as often a walker's two turn-backs 10 s apart (Tokyo old town "wander"
    seed 0) as a burst. Walked on for 4 minutes more, south, with three clear 25 m bursts,
    the track bursts: the long burst is looked for along its step and masked."""
    table = np.loadtxt(DATA / "canyon_seed7_overlapping.csv", delimiter=",", skiprows=1)
    t, x, y = table[:, 0], table[:, 1], table[:, 2]
    assert not burst_mask(t, x, y, sigma_m=2.27)[(t >= 114.0) & (t <= 135.0)].any()
    t_on = np.arange(181.0, 421.0)
    x_on, y_on = with_noise(np.full_like(t_on, 28.9), -141.7 - 1.4 * (t_on - 180.0), seed, 2.27)
    clear = (220.0, 280.0, 340.0)
    for start_s in clear:
        x_on, y_on = add_burst(t_on, x_on, y_on, start_s, start_s + 12.0, (25.0, 0.0))
    t, x, y = np.concatenate([t, t_on]), np.concatenate([x, x_on]), np.concatenate([y, y_on])
    mask = burst_mask(t, x, y, sigma_m=2.27)
    assert mask[(t >= 114.0) & (t <= 135.0)].all()
    near = ((t >= 110.0) & (t < 139.5)) | ((t >= 140.0) & (t < 153.5))
    for start_s in clear:
        assert mask[(t >= start_s + 2.0) & (t < start_s + 10.0)].all()
        near |= (t >= start_s - 2.5) & (t < start_s + 14.5)
    assert not mask[~near].any()


@pytest.mark.parametrize("seed", [28, 40, 41])
def test_a_burst_whose_way_back_the_next_burst_bent_is_masked(seed: int) -> None:
    """Two bursts 4.5 s apart while walking south (46-64.6 s at (-13, 10) m, 69-84.5 s at
    (15, 18) m; the shape of Hamburg canyon seed 1's walk at 46-85 s). Under slow noise the
    stiff filters bend the first burst's way back towards the second burst's fixes, so its
    steps no longer add up to nothing; the first burst's way back, the second's way out and
    its way back do, and that run took the first burst's way back: its way out was left
    unpaired and the whole first burst kept (these 3 of 60 seeds; 5 of 60 differ, none for
    the worse). Along its step the way out finds that spare edge as its way back."""
    t = np.arange(0.0, 140.0)
    x, y = np.zeros_like(t), -1.4 * t
    fx, fy = with_slow_noise(x, y, seed)
    fx, fy = add_burst(t, fx, fy, 46.0, 64.6, (-13.0, 10.0))
    fx, fy = add_burst(t, fx, fy, 69.1, 84.5, (15.0, 18.0))
    first = (t >= 48.0) & (t <= 62.6)
    second = (t >= 71.0) & (t <= 82.5)
    outside = (t < 44.0) | (t > 86.5)
    before = dataclasses.replace(WAY_BACK, spare_edges=False, chained_rivals=False)
    old = burst_mask(t, fx, fy, params=before)
    assert old[second].all()
    assert not old[first].all()  # the cleaner before this rule
    mask = burst_mask(t, fx, fy, params=WAY_BACK)
    assert mask[first].all()
    assert mask[second].all()
    assert not mask[outside].any()
