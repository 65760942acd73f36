"""The burst mask (city360/video_store/gps_bursts/mask.py) and its effect on clean_track: a
burst while walking is masked, a second round finds one its neighbour hid, and the cleaned
track does not follow it."""

from __future__ import annotations

import numpy as np
import pytest

from city360.video_store.clean import clean_track
from city360.video_store.gps_bursts import burst_mask
from tests.video_store.gps_bursts.walks import (
    DATA,
    PROJECTION,
    add_burst,
    corner_walk,
    track_of,
    with_noise,
)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("offset", [(0.0, 20.0), (-15.0, -15.0), (30.0, 0.0)])
def test_a_burst_while_walking_is_masked(seed: int, offset: tuple) -> None:
    t, x, y = corner_walk(1.4, 1.0)
    fx, fy = add_burst(t, *with_noise(x, y, seed), 40.0, 55.0, offset)
    mask = burst_mask(t, fx, fy)
    core = (t >= 42.0) & (t < 53.0)
    assert mask[core].all()
    assert not mask[(t < 36.0) | (t > 59.0)].any()


def test_a_burst_hidden_by_its_neighbours_is_found_on_a_second_look() -> None:
    """Hamburg canyon twin seed 5, 60-300 s of the walk (data/README.md): true bursts at
    108-126, 129-146, 164-192 and 194-223 s. One step test finds 108-121 and 193-224 only: the
    filters that swallowed the first burst are still off when the second starts 3 s after it.
    Run again without the fixes already masked, the second burst's edges stand out."""
    table = np.loadtxt(DATA / "canyon_seed5_back_to_back.csv", delimiter=",", skiprows=1)
    t, x, y = table[:, 0], table[:, 1], table[:, 2]
    # the walk's own noise (fix_noise_m over the whole track): a window's differs
    mask = burst_mask(t, x, y, sigma_m=2.07)
    second = (t >= 132.0) & (t <= 143.0)
    assert mask[second].all()
    # nothing outside the bursts and the 2 s the mask reaches beyond an edge
    near_bursts = ((t >= 106) & (t < 148)) | ((t >= 162) & (t < 225))
    assert not mask[~near_bursts].any()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clean_track_does_not_follow_a_burst(seed: int) -> None:
    t, x, y = corner_walk(1.4, 1.0)
    fx, fy = add_burst(t, *with_noise(x, y, seed), 40.0, 55.0, (0.0, 20.0))
    smooth = clean_track(track_of(t, fx, fy), PROJECTION)
    sx, sy, _ = smooth.sample(1.7e9 + t)
    error = np.hypot(sx - x, sy - y)
    inside = (t >= 40.0) & (t < 55.0)
    # the smoother alone followed the burst: 19.7-20.8 m off the path on these seeds
    assert float(np.max(error[inside])) < 6.0
    assert smooth.dropped >= 11
