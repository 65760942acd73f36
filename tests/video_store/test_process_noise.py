"""The smoother's process noise follows the camera's speed (clean.usual_speed_mps and
CleanParams.turn_rate_density): a car's corner is followed, a walk is smoothed as before."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from city360.geo import LocalProjection
from city360.video_store.clean import clean_track, usual_speed_mps
from city360.video_store.gps.track import GpsTrack

PROJECTION = LocalProjection(37.77, -122.42)


def corner(speed_mps: float, rate_hz: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fixes' times and the true path: 120 m east, a right-angle corner, 120 m north."""
    leg_s = 120.0 / speed_mps
    t = np.arange(0.0, 2 * leg_s, 1.0 / rate_hz)
    x = np.minimum(t, leg_s) * speed_mps
    y = np.clip(t - leg_s, 0.0, None) * speed_mps
    return t, x, y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_car_corner_is_followed(seed: int) -> None:
    """A 10 Hz receiver (1.5 m per axis) on a car at 8.3 m/s: with the walker's process noise
    the smoothed track cut the corner by 4.1-4.8 m; with the noise scaled to the speed it is
    within 2 m."""
    t, x, y = corner(8.3, 10.0)
    rng = np.random.default_rng(seed)
    fx, fy = x + rng.normal(0, 1.5, t.shape), y + rng.normal(0, 1.5, t.shape)
    lat, lon = PROJECTION.to_latlon(fx, fy)
    track = GpsTrack.from_columns(Path("drive.gpx"), "gpx", 1.7e9 + t, lat, lon)
    smooth = clean_track(track, PROJECTION)
    sx, sy, _ = smooth.sample(1.7e9 + t)
    near = np.abs(t - 120.0 / 8.3) < 3.0
    assert np.hypot(sx - x, sy - y)[near].max() < 3.0


def test_usual_speed_takes_the_noise_out() -> None:
    """A 1 Hz walk at 1.4 m/s under 3 m of noise per axis reads about 1.4 m/s (consecutive
    fixes would say 4-5 m/s); the same receiver standing still reads no moving speed above
    the walk's."""
    t, x, y = corner(1.4, 1.0)
    rng = np.random.default_rng(0)
    fx, fy = x + rng.normal(0, 3.0, t.shape), y + rng.normal(0, 3.0, t.shape)
    assert usual_speed_mps(t, fx, fy, 3.0, moving_mps=0.25) == pytest.approx(1.4, abs=0.2)
    still_x, still_y = rng.normal(0, 3.0, t.shape), rng.normal(0, 3.0, t.shape)
    assert usual_speed_mps(t, still_x, still_y, 3.0, moving_mps=0.25) < 1.0
