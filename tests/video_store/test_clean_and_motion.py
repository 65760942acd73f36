"""Track cleaning (speed gate, RTS smoother, stops) and motion from the pictures (yaw, stills)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from city360.geo import LocalProjection
from city360.video_store.clean import CleanParams, clean_track, drop_speed_spikes
from city360.video_store.gps.track import GpsTrack
from city360.video_store.motion import MotionSignal, still_spans, yaw_shift_deg

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
