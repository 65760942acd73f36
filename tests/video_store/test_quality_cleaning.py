"""Cleaning and smoothing with the fix quality receivers report: no-fix records are dropped,
and the smoothers weigh each fix by the accuracy or HDOP it reports."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from city360.geo import LocalProjection
from city360.video_store.clean import CleanParams, clean_track
from city360.video_store.gps.quality import FIX_NAMES, FixQuality
from city360.video_store.gps.track import GpsTrack
from city360.video_store.smooth import heading_aided_smooth, rts_smooth

PROJECTION = LocalProjection(60.17, 24.94)
UERE_M = 2.5


def _walk_with_a_bad_stretch(
    seed: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """120 s due east at 1.4 m/s, 1 Hz; HDOP 1.2 except 4.5 over 40-80 s, and the error per
    axis HDOP x UERE / sqrt 2 (what HDOP promises); returns t, x, y, hdop, true x."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, 120.0)
    hdop = np.where((t >= 40) & (t < 80), 4.5, 1.2)
    sigma = hdop * UERE_M / np.sqrt(2)
    x_true = 1.4 * t
    x = x_true + rng.normal(0, 1, t.shape) * sigma
    y = rng.normal(0, 1, t.shape) * sigma
    return t, x, y, hdop, x_true


def _rmse(x: np.ndarray, y: np.ndarray, x_true: np.ndarray) -> float:
    return float(np.sqrt(np.mean((x - x_true) ** 2 + y**2)))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_per_fix_sigma_beats_one_sigma_when_hdop_tells_the_truth(seed: int) -> None:
    t, x, y, hdop, x_true = _walk_with_a_bad_stretch(seed)
    sigma = hdop * UERE_M / np.sqrt(2)
    common = {"accel_sigma": 0.6, "gate_sigma": 4.0}
    flat = rts_smooth(t, t, x, y, sigma_m=3.0, **common)
    weighted = rts_smooth(t, t, x, y, sigma_m=3.0, meas_sigma_m=sigma, **common)
    assert _rmse(weighted[0], weighted[1], x_true) < 0.9 * _rmse(flat[0], flat[1], x_true)


def test_constant_per_fix_sigma_is_the_plain_smoother() -> None:
    t, x, y, _, _ = _walk_with_a_bad_stretch(0)
    plain = rts_smooth(t, t, x, y, sigma_m=3.0, accel_sigma=0.6, gate_sigma=4.0)
    same = rts_smooth(
        t, t, x, y, sigma_m=1.0, accel_sigma=0.6, gate_sigma=4.0, meas_sigma_m=np.full(120, 3.0)
    )
    for a, b in zip(plain, same, strict=True):
        np.testing.assert_allclose(a, b)
    heading = np.full(120, 90.0)
    aided = heading_aided_smooth(t, heading, t, x, y, sigma_m=3.0)
    aided_same = heading_aided_smooth(
        t, heading, t, x, y, sigma_m=1.0, meas_sigma_m=np.full(120, 3.0)
    )
    for a, b in zip(aided, aided_same, strict=True):
        np.testing.assert_allclose(a, b)


def test_heading_aided_smoother_uses_per_fix_sigma() -> None:
    t, x, y, hdop, x_true = _walk_with_a_bad_stretch(5)
    heading = np.full(120, 90.0)
    flat = heading_aided_smooth(t, heading, t, x, y, sigma_m=3.0)
    weighted = heading_aided_smooth(
        t, heading, t, x, y, sigma_m=3.0, meas_sigma_m=hdop * UERE_M / np.sqrt(2)
    )
    assert _rmse(weighted[0], weighted[1], x_true) < _rmse(flat[0], flat[1], x_true)


def _track(t: np.ndarray, x: np.ndarray, y: np.ndarray, quality: FixQuality) -> GpsTrack:
    lat, lon = PROJECTION.to_latlon(x, y)
    return GpsTrack.from_columns(Path("q.gpx"), "gpx", 1.7e9 + t, lat, lon, quality=quality)


def test_clean_track_weighs_fixes_by_hdop_and_can_be_told_not_to() -> None:
    t, x, y, hdop, x_true = _walk_with_a_bad_stretch(7)
    track = _track(t, x, y, FixQuality.from_columns(hdop=hdop))
    weighted = clean_track(track, PROJECTION)
    assert weighted.meas_sigma_m is not None
    np.testing.assert_allclose(
        np.unique(weighted.meas_sigma_m), np.array([1.2, 4.5]) * UERE_M / np.sqrt(2)
    )
    ignored = clean_track(track, PROJECTION, params=CleanParams(use_fix_quality=False))
    assert ignored.meas_sigma_m is None
    bare = clean_track(_track(t, x, y, FixQuality()), PROJECTION)
    np.testing.assert_allclose(ignored.x_m, bare.x_m)
    np.testing.assert_allclose(ignored.y_m, bare.y_m)
    sample_t = 1.7e9 + t
    wx, wy, _ = weighted.sample(sample_t)
    bx, by, _ = bare.sample(sample_t)
    assert _rmse(wx, wy, x_true) < _rmse(bx, by, x_true)


def test_clean_track_drops_fixes_that_say_no_fix() -> None:
    t = np.arange(0.0, 60.0)
    x, y = 1.4 * t, np.zeros_like(t)
    x[30] += 80.0  # a receiver's last-known position, flagged as no fix
    fix = np.full(60, FIX_NAMES["3d"], np.int8)
    fix[30] = FIX_NAMES["none"]
    hdop = np.full(60, 1.0)
    track = _track(t, x, y, FixQuality.from_columns(hdop=hdop, fix_type=fix))
    assert not track.has_fix[30]
    smooth = clean_track(track, PROJECTION)
    assert len(smooth.meas_t_s) == 59
    assert 1.7e9 + 30 not in smooth.meas_t_s.tolist()
    assert smooth.dropped == 0  # never a candidate: not an outlier the gates had to catch
    assert smooth.meas_sigma_m is not None
    assert smooth.meas_sigma_m.shape == (59,)
