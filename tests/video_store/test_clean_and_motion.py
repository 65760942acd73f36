"""Track cleaning (speed gate, RTS smoother, stops) and motion from the pictures (yaw, stills)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from city360.geo import LocalProjection
from city360.video_store.clean import CleanParams, SmoothTrack, clean_track, drop_speed_spikes
from city360.video_store.gps.track import GpsTrack
from city360.video_store.motion import (
    MotionSignal,
    StillParams,
    still_spans,
    still_spans_of_walk,
    walking_change_rate,
    yaw_shift_deg,
)
from city360.video_store.sync import SyncResult

PROJECTION = LocalProjection(60.17, 24.94)


def _track(x: np.ndarray, y: np.ndarray, t: np.ndarray) -> GpsTrack:
    lat, lon = PROJECTION.to_latlon(x, y)
    return GpsTrack.from_columns(Path("t.csv"), "csv", 1.7e9 + t, lat, lon)


def test_speed_gate_drops_a_lone_jump() -> None:
    t = np.arange(10.0)
    x = 1.4 * t
    y = np.zeros(10)
    y[4] = 200.0  # 200 m off and back within two seconds
    keep = drop_speed_spikes(t, x, y, 45.0)
    assert keep.tolist() == [True] * 4 + [False] + [True] * 5


def test_smoother_beats_raw_gps_and_finds_heading() -> None:
    rng = np.random.default_rng(3)
    t = np.arange(0.0, 120.0)
    x_true, y_true = 1.4 * t, np.zeros_like(t)  # due east
    x = x_true + rng.normal(0, 3, t.shape)
    y = y_true + rng.normal(0, 3, t.shape)
    x[50] += 60.0  # an outlier the speed gate lets through (it is slow enough): gated in KF
    smooth = clean_track(_track(x, y, t), PROJECTION)
    sx, sy, heading = smooth.sample(1.7e9 + t)
    raw_rmse = np.sqrt(np.mean((x - x_true) ** 2 + (y - y_true) ** 2))
    rmse = np.sqrt(np.mean((sx - x_true) ** 2 + (sy - y_true) ** 2))
    assert rmse < raw_rmse / 3
    assert smooth.dropped >= 1
    # GPS alone gives the heading to ~10° at walking pace; the pictures do the rest (heading.py)
    assert np.median(np.abs(heading - 90.0)) < 15.0


def test_long_stop_is_collapsed() -> None:
    t = np.arange(0.0, 90.0)
    x = np.concatenate([1.4 * t[:30], np.full(30, 1.4 * 30), 1.4 * 30 + 1.4 * (t[60:] - 60)])
    smooth = clean_track(_track(x, np.zeros_like(x), t), PROJECTION, params=CleanParams())
    standing = (smooth.t_s > 1.7e9 + 38) & (smooth.t_s < 1.7e9 + 52)
    assert np.ptp(smooth.x_m[standing]) < 0.01  # frozen: adds no distance
    assert np.all(smooth.speed_mps[standing] == 0)


def test_yaw_shift_sign_and_size() -> None:
    rng = np.random.default_rng(0)
    band = rng.random((32, 256)) * 255
    # the camera turns right by 14.0625° (10 columns): the scene moves left in the picture
    turned = np.roll(band, -10, axis=1)
    shift, peak = yaw_shift_deg(band, turned)
    assert shift == pytest.approx(10 * 360 / 256, abs=0.2)
    assert peak > 0.5
    shift, _ = yaw_shift_deg(band, np.roll(band, 64, axis=1))
    assert shift == pytest.approx(-90.0, abs=0.2)


def test_still_spans_are_relative_to_the_video() -> None:
    t = np.arange(0.0, 30.0, 0.1)
    change = np.full(t.shape[0] - 1, 5.0)
    change[100:140] = 0.2  # 4 s of a still picture
    change[200:205] = 0.2  # half a second: a glitch, not a stop
    motion = MotionSignal(t, np.zeros_like(t), change * 0.1, np.ones(t.shape[0] - 1))
    spans = still_spans(motion)
    assert len(spans) == 1
    assert spans[0][0] == pytest.approx(10.0)
    assert spans[0][1] == pytest.approx(14.0)


def _rates_signal(rate: np.ndarray, step_s: float = 0.5) -> MotionSignal:
    """A motion signal at ``step_s`` whose change rate is ``rate`` (one per step)."""
    t = np.arange(rate.shape[0] + 1) * step_s
    return MotionSignal(t, np.zeros_like(t), rate * step_s, np.ones(rate.shape[0]))


def _walk_then_stand(walk_s: float, stand_s: float) -> tuple[SmoothTrack, SyncResult]:
    """The smoothed GPS of a walk east at 1.4 m/s for ``walk_s``, then standing for
    ``stand_s`` (1 m of noise), and clocks in agreement."""
    rng = np.random.default_rng(8)
    t = np.arange(0.0, walk_s + stand_s)
    x = np.minimum(t, walk_s) * 1.4 + rng.normal(0, 1.0, t.shape)
    y = rng.normal(0, 1.0, t.shape)
    smooth = clean_track(_track(x, y, t), PROJECTION)
    return smooth, SyncResult(video_start_gps=1.7e9, offset_s=0.0, method="given")


def test_a_video_that_mostly_stands_reads_its_walking_level_where_the_gps_walks() -> None:
    """A walk of 200 s, then the camera left running for 800 s (the filmed Hamburg walk):
    the median rate was the standing noise, and a quarter of it cut the stop to pieces."""
    rng = np.random.default_rng(5)
    rate = np.concatenate(
        [rng.lognormal(np.log(15.0), 0.4, 400), rng.lognormal(np.log(0.8), 0.5, 1600)]
    )
    motion = _rates_signal(rate)
    smooth, sync = _walk_then_stand(200.0, 800.0)
    assert walking_change_rate(motion, smooth, sync) == pytest.approx(15.0, rel=0.1)
    spans = still_spans_of_walk(motion, smooth, sync)
    assert len(spans) == 1
    assert spans[0][0] == pytest.approx(200.0, abs=1.0)
    assert spans[0][1] == pytest.approx(1000.0)
    old = still_spans_of_walk(motion, smooth, sync, StillParams(walking_level=False, blip_s=0.0))
    assert sum(b - a for a, b in old) < 400.0  # the median rule: most of the stop is lost


def test_a_walk_whose_picture_barely_changes_keeps_its_own_level() -> None:
    """Straight walking that changes the picture little and turns that change it much (the
    test videos' far scene): the walking level is the walk's median, not the turns'."""
    rate = np.full(280, 0.005)
    rate[40:60] = rate[150:170] = 0.4  # two turns
    rate[100:112] = 0.0  # a 6 s stop
    motion = _rates_signal(rate)
    smooth, sync = _walk_then_stand(140.0, 0.0)
    assert walking_change_rate(motion, smooth, sync) == pytest.approx(0.005)
    assert still_spans_of_walk(motion, smooth, sync) == [(50.0, 56.0)]


def test_without_gps_over_the_video_the_median_is_the_level() -> None:
    rate = np.full(100, 10.0)
    rate[40:60] = 0.5
    motion = _rates_signal(rate)
    smooth, _ = _walk_then_stand(50.0, 0.0)
    elsewhere = SyncResult(video_start_gps=1.7e9 + 1000.0, offset_s=1000.0, method="given")
    assert walking_change_rate(motion, smooth, elsewhere) is None
    assert still_spans_of_walk(motion, smooth, elsewhere) == [(20.0, 30.0)]


def test_a_blip_inside_a_stop_does_not_split_it() -> None:
    rate = np.full(400, 10.0)
    rate[100:300] = 0.5  # 100 s standing ...
    rate[[150, 151, 220]] = 12.0  # ... turning the camera in the hand twice
    motion = _rates_signal(rate)
    assert still_spans(motion, blip_s=1.0) == [(50.0, 150.0)]
    assert len(still_spans(motion)) == 3  # blips kept: three pieces
    rate[200:204] = 10.0  # two seconds of walking between two stops stay two stops
    assert len(still_spans(_rates_signal(rate), blip_s=1.0)) == 2
    assert StillParams().blip_s == 1.0


def test_auto_offset_at_the_edge_of_the_overlap_stays_finite(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When the best lag is the last one with enough overlap, its outer neighbour scores
    -inf: the sub-step refinement must not turn that into NaN (inf/inf = NaN)."""
    from city360.video_store import sync

    edge = 5.71  # a straight walk at constant speed: the score just grows up to the edge

    def ramp(lag: float, *args: object, **kwargs: object) -> float:
        return 0.3 + 0.01 * lag if lag <= edge else -np.inf

    monkeypatch.setattr(sync, "_lag_score", ramp)
    t = np.arange(0.0, 9.0)
    smooth = clean_track(_track(1.4 * t, np.zeros_like(t), t), PROJECTION)
    motion_t = np.arange(0.0, 8.0, 0.1)
    change = np.ones(motion_t.shape[0] - 1)
    motion = MotionSignal(motion_t, np.zeros_like(motion_t), change, np.ones_like(change))
    offset, score = sync.estimate_offset(motion, smooth, 1.7e9)
    assert offset == pytest.approx(5.70)
    assert score == pytest.approx(0.357)
