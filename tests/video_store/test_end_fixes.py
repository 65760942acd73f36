"""A track's first and last fixes, judged from one side (video_store/end_fixes.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from city360.geo import LocalProjection
from city360.video_store.clean import CleanParams, clean_track
from city360.video_store.end_fixes import end_outliers
from city360.video_store.gps.track import GpsTrack
from city360.video_store.gps_bursts import BurstParams

PROJECTION = LocalProjection(35.74, 139.67)
T0 = 1.7e9
RULE_ON = CleanParams(drop_end_outliers=True)


def _track(x: np.ndarray, y: np.ndarray, t: np.ndarray) -> GpsTrack:
    lat, lon = PROJECTION.to_latlon(x, y)
    return GpsTrack.from_columns(Path("t.csv"), "csv", T0 + t, lat, lon)


def _walk_east(speed_mps: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two minutes due east along y = 0 at ``speed_mps``, 1 Hz fixes with 3 m noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, 120.0)
    return t, speed_mps * t + rng.normal(0, 3, t.shape), rng.normal(0, 3, t.shape)


@pytest.mark.parametrize("seed", range(4))
def test_a_walks_last_fix_30_m_off_is_dropped_and_does_not_pull_the_track(seed: int) -> None:
    # the Nerima grid's walk_028: the last fix 30 m to one side of the one before
    t, x, y = _walk_east(1.4, seed)
    y[-1] = y[-2] + 30.0
    smooth = clean_track(_track(x, y, t), PROJECTION, params=RULE_ON)
    assert smooth.end_s == T0 + t[-2]  # the video keeps its frames to the last good fix
    assert smooth.y_m.max() < 6.0  # never runs off the street towards the outlier (north)


@pytest.mark.parametrize("seed", range(4))
def test_a_walks_first_fix_30_m_off_is_dropped(seed: int) -> None:
    t, x, y = _walk_east(1.4, seed)
    y[0] = y[1] - 30.0
    smooth = clean_track(_track(x, y, t), PROJECTION, params=RULE_ON)
    assert smooth.start_s == T0 + t[1]
    assert smooth.y_m.min() > -6.0


def test_a_short_run_of_end_fixes_that_stays_away_is_dropped() -> None:
    t, x, y = _walk_east(1.4, 7)
    y[-3:] = 40.0 + np.array([0.5, -0.8, 0.3])
    smooth = clean_track(_track(x, y, t), PROJECTION, params=RULE_ON)
    assert smooth.end_s == T0 + t[-4]
    assert smooth.y_m.max() < 6.0


@pytest.mark.parametrize(("speed_mps", "seed"), [(1.4, 0), (1.4, 1), (8.3, 0), (8.3, 1)])
def test_a_real_turn_at_the_end_is_kept(speed_mps: float, seed: int) -> None:
    # a walker or a car at 30 km/h turns north for its last four seconds
    t, x, y = _walk_east(speed_mps, seed)
    rng = np.random.default_rng(seed + 100)
    turn = t >= 116.0
    x[turn] = speed_mps * 116.0 + rng.normal(0, 3, turn.sum())
    y[turn] = speed_mps * (t[turn] - 116.0) + rng.normal(0, 3, turn.sum())
    mask = end_outliers(
        t,
        x,
        y,
        np.full(t.shape, 3.0),
        usual_mps=speed_mps,
        speed_factor=CleanParams().end_speed_factor,
    )
    assert not mask.any()
    assert clean_track(_track(x, y, t), PROJECTION, params=RULE_ON).end_s == T0 + t[-1]


def test_an_outlier_just_inside_the_end_leaves_the_last_fix() -> None:
    t, x, y = _walk_east(1.4, 2)
    y[-2] += 30.0  # the two-sided tests' to judge; the good last fix stays
    mask = end_outliers(t, x, y, np.full(t.shape, 3.0), usual_mps=1.4, speed_factor=4.0)
    assert not mask.any()


def test_a_track_too_short_to_judge_keeps_every_fix() -> None:
    t = np.arange(3.0)
    mask = end_outliers(
        t, np.array([0.0, 1.0, 90.0]), np.zeros(3), np.full(3, 3.0), usual_mps=1.4, speed_factor=4.0
    )
    assert not mask.any()


def test_the_rule_is_on_by_default() -> None:
    # with the way back looked for it no longer drops good end fixes beside a burst
    t, x, y = _walk_east(1.4, 0)
    y[-1] = y[-2] + 30.0
    assert CleanParams().drop_end_outliers is True
    assert CleanParams().end_way_back is True
    assert clean_track(_track(x, y, t), PROJECTION).end_s == T0 + t[-2]


def _end_mask(
    t: np.ndarray, x: np.ndarray, y: np.ndarray, *, way_back: bool, round_17: bool = False
) -> np.ndarray:
    """:func:`end_outliers` as the cleaner calls it for a 1.4 m/s walker with 3 m fixes; with
    ``round_17`` at the jump test's speed factor, as round seventeen's rule did."""
    params = CleanParams()
    return end_outliers(
        t,
        x,
        y,
        np.full(t.shape, 3.0),
        usual_mps=1.4,
        speed_factor=params.jump_speed_factor if round_17 else params.end_speed_factor,
        max_burst_s=BurstParams().max_burst_s if way_back else None,
    )


@pytest.mark.parametrize("seed", range(3))
def test_good_first_fixes_before_a_burst_are_kept(seed: int) -> None:
    # Helsinki one-way+stops seed 19, walk_068: three good first fixes, then a burst that
    # holds 25 m off for 20 s and steps back; the burst, not the first fixes, is off
    t, x, y = _walk_east(1.4, seed)
    y[3:23] += 25.0
    assert not _end_mask(t, x, y, way_back=True).any()
    smooth = clean_track(_track(x, y, t), PROJECTION, params=RULE_ON)
    assert smooth.start_s == T0 + t[0]


def test_without_the_way_back_good_first_fixes_before_a_burst_are_dropped() -> None:
    # the rule of round seventeen (``end_way_back=False``) judged them from one side
    t, x, y = _walk_east(1.4, 2)
    y[3:23] += 25.0
    assert _end_mask(t, x, y, way_back=False)[:3].all()


@pytest.mark.parametrize(("off_fixes", "good_fixes"), [(1, 1), (1, 3), (6, 1), (15, 2)])
def test_good_last_fixes_after_an_outlier_or_a_burst_are_kept(
    off_fixes: int, good_fixes: int
) -> None:
    # Helsinki wander 1 (round seventeen's twin), walk_070: the fix before the last 22 m
    # off, near enough to the one before it to count as in reach, and the good last fix 25 m
    # from it; wander+stops 0 walk_061 the same with three good fixes after the outlier;
    # a burst that ends a fix or two before the end is the same picture
    t, x, y = _walk_east(1.4, off_fixes + good_fixes)
    rng = np.random.default_rng(off_fixes)
    y[:] = rng.normal(0.0, 0.5, t.shape)
    off = slice(t.shape[0] - good_fixes - off_fixes, t.shape[0] - good_fixes)
    y[off] = -22.0
    y[-good_fixes:] = 3.0
    # round seventeen's rule, judged from one side, dropped them
    assert _end_mask(t, x, y, way_back=False, round_17=True).any()
    assert not _end_mask(t, x, y, way_back=True).any()
    smooth = clean_track(_track(x, y, t), PROJECTION, params=RULE_ON)
    assert smooth.end_s == T0 + t[-1]


@pytest.mark.parametrize("seed", range(4))
def test_a_last_fix_out_of_reach_after_a_turn_back_is_dropped(seed: int) -> None:
    # the Nerima grid's walk_028: the walker turned back at a stub's tip 8 s before the end
    # (the burst test took the turn for a step), then the last fix 32 m off
    t, x, y = _walk_east(1.4, seed)
    back = t >= 112.0
    x[back] = (
        1.4 * 112.0 - 1.4 * (t[back] - 112.0) + np.random.default_rng(seed).normal(0, 3, back.sum())
    )
    x[-1] += 30.0
    y[-1] -= 12.0
    assert _end_mask(t, x, y, way_back=True)[-1]
    smooth = clean_track(_track(x, y, t), PROJECTION, params=RULE_ON)
    assert smooth.end_s == T0 + t[-2]


@pytest.mark.parametrize("seed", range(3))
def test_a_last_fix_44_m_off_after_a_4_s_dropout_is_dropped(seed: int) -> None:
    # Helsinki SE seed 19, walk_008: the receiver lost 4 s, then its last fix sat 44 m off
    # (11 m/s for a 1.4 m/s walker); at the jump test's factor (4) the 4 s let it through
    t, x, y = _walk_east(1.4, seed)
    keep = (t < 115.0) | (t == 119.0)
    t, x, y = t[keep], x[keep], y[keep]
    x[-1] = x[-2] + 40.0
    y[-1] = y[-2] + 18.0
    smooth = clean_track(_track(x, y, t), PROJECTION)
    assert smooth.end_s == T0 + t[-2]
    assert smooth.x_m.max() < 1.4 * 115.0 + 8.0
