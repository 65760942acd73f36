"""Steps paired into bursts (city360/video_store/gps_bursts/pairing.py): bursts back to back,
an echo that yields to a stronger run, two bursts with like offsets."""

from __future__ import annotations

import numpy as np

from city360.video_store.gps_bursts import BurstParams, burst_mask
from tests.video_store.gps_bursts.walks import DATA, add_burst, corner_walk, with_noise


def test_two_bursts_back_to_back_are_one_run() -> None:
    t, x, y = corner_walk(1.4, 1.0)
    fx, fy = add_burst(t, *with_noise(x, y, 3), 40.0, 58.0, (15.0, 20.0))
    fx, fy = add_burst(t, fx, fy, 59.0, 74.0, (15.0, -20.0))
    mask = burst_mask(t, fx, fy)
    assert mask[(t >= 43.0) & (t < 72.0)].all()
    assert not mask[(t < 36.0) | (t > 78.0)].any()


def test_a_burst_right_after_another_keeps_both_edges() -> None:
    """Two bursts 8 s apart on a straight 1 Hz walk: the stiff filters' echo 8 s before the
    first burst (a 15 m step at 22 s, chi² 36 against the real edge's 280) was paired in time
    order and left fixes of the bursts in (10 fixes wrong); it is far weaker than the run that
    needs its partner, so it yields (gps_bursts.pairing.pair_steps)."""
    t = np.arange(0.0, 120.0)
    x, y = 1.4 * t, np.zeros_like(t)
    fx, fy = with_noise(x, y, seed=12, sigma_m=2.0)
    fx, fy = add_burst(t, fx, fy, 30.0, 42.0, (0.0, 30.0))
    fx, fy = add_burst(t, fx, fy, 50.0, 62.0, (-35.0, 5.0))
    inside = ((t >= 30.0) & (t < 42.0)) | ((t >= 50.0) & (t < 62.0))
    mask = burst_mask(t, fx, fy)
    assert (mask != inside).sum() <= 3


def test_two_bursts_with_like_offsets_are_paired_each_with_its_own_edges() -> None:
    """Hamburg canyon twin seed 12, 1000-1220 s (data/README.md): bursts at 1075-1094 and
    1126-1141 s sit about (-25, 19) m and (-23, 12) m off. The first's way out comes just
    after a dropout (chi² 37), so the run of the first's way back and the second's way out
    (chi² 92 and 68, adding up to 6 m) was the stronger rival and took the first's way back:
    26 good fixes between the bursts were masked and both bursts kept (RMSE 5.78 m). Taking
    the first burst alone leaves the second its own run, and the first comes back closer
    than the rival does, so each burst keeps its own edges."""
    table = np.loadtxt(DATA / "canyon_seed12_like_offsets.csv", delimiter=",", skiprows=1)
    t, x, y = table[:, 0], table[:, 1], table[:, 2]
    first = (t >= 1083.0) & (t <= 1092.0)  # after the dropout
    second = (t >= 1128.0) & (t <= 1138.0)
    between = (t >= 1096.5) & (t <= 1123.0)
    old = burst_mask(t, x, y, sigma_m=2.34, params=BurstParams(chained_rivals=False))
    assert old[between].sum() > 20  # the cleaner before this rule
    mask = burst_mask(t, x, y, sigma_m=2.34)
    assert mask[first].all()
    assert mask[second].all()
    assert not mask[between].any()
    near_bursts = (
        ((t >= 1039.0) & (t < 1062.0))
        | ((t >= 1072.0) & (t < 1097.0))
        | ((t >= 1123.0) & (t < 1158.0))
        | ((t >= 1171.0) & (t < 1183.0))
        | ((t >= 1225.0) & (t < 1240.0))
    )
    assert not mask[~near_bursts].any()
