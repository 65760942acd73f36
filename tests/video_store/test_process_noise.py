"""The smoother's process noise follows the camera's speed (usual_speed.usual_speed_mps and
CleanParams.turn_rate_density): a car's corner is followed, a walk is smoothed as before."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from city360.geo import LocalProjection
from city360.video_store.clean import CleanParams, clean_track
from city360.video_store.gps.track import GpsTrack
from city360.video_store.usual_speed import usual_speed_mps
from tests.video_store.gps_bursts.walks import corner_walk
from tests.video_store.gps_errors import gauss_markov

PROJECTION = LocalProjection(37.77, -122.42)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_car_corner_is_followed(seed: int) -> None:
    """A 10 Hz receiver (1.5 m per axis) on a car at 8.3 m/s: with the walker's process noise
    the smoothed track cut the corner by 4.1-4.8 m; with the noise scaled to the speed it is
    within 2 m."""
    t, x, y = corner_walk(8.3, 10.0, leg_m=120.0)
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
    t, x, y = corner_walk(1.4, 1.0, leg_m=120.0)
    rng = np.random.default_rng(0)
    fx, fy = x + rng.normal(0, 3.0, t.shape), y + rng.normal(0, 3.0, t.shape)
    assert usual_speed_mps(t, fx, fy, 3.0, moving_mps=0.25) == pytest.approx(1.4, abs=0.2)
    still_x, still_y = rng.normal(0, 3.0, t.shape), rng.normal(0, 3.0, t.shape)
    assert usual_speed_mps(t, still_x, still_y, 3.0, moving_mps=0.25) < 1.0


def canyon_block(seed: int, *, bursts: bool) -> tuple[np.ndarray, np.ndarray, GpsTrack]:
    """1 Hz: a block walked round at 1.4 m/s (150 s east, north, west, south) under
    canyon-like GPS: 2.5 m white, 2.5 m correlated over 30 s and 1.4 m of drift over 600 s,
    per axis; with ``bursts`` a 15 s burst 22 m off, in a random direction, every minute.
    Returns the fixes' times (s), the true path (metres) and the track."""
    t = np.arange(0.0, 600.0)
    leg = np.minimum(t // 150, 3).astype(int)
    heading = np.array([(1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)])
    corners = np.cumsum(np.vstack([[0.0, 0.0], heading[:3] * 210.0]), axis=0)
    path = corners[leg] + heading[leg] * ((t - leg * 150) * 1.4)[:, None]
    rng = np.random.default_rng(seed)
    error = (
        rng.normal(0.0, 2.5, (t.shape[0], 2))
        + gauss_markov(rng, t.shape[0], 30.0, 2.5)
        + gauss_markov(rng, t.shape[0], 600.0, 1.4)
    )
    if bursts:
        for start_s in np.arange(30.0, 600.0, 60.0):
            angle = rng.uniform(0.0, 2 * np.pi)
            error[(t >= start_s) & (t < start_s + 15.0)] += 22.0 * np.array(
                [np.cos(angle), np.sin(angle)]
            )
    lat, lon = PROJECTION.to_latlon(path[:, 0] + error[:, 0], path[:, 1] + error[:, 1])
    return t, path, GpsTrack.from_columns(Path("block.gpx"), "gpx", 1.7e9 + t, lat, lon)


def _block_rmse_m(seed: int, *, bursts: bool, params: CleanParams) -> float:
    """RMS distance (metres) of the cleaned :func:`canyon_block` from its true path."""
    t, path, track = canyon_block(seed, bursts=bursts)
    sx, sy, _ = clean_track(track, PROJECTION, params=params).sample(1.7e9 + t)
    return float(np.sqrt(np.mean((sx - path[:, 0]) ** 2 + (sy - path[:, 1]) ** 2)))


def test_a_canyon_walk_that_bursts_is_smoothed_stiffer() -> None:
    """A walk whose receiver bursts has canyon error, correlated over tens of seconds, which
    the walker's process noise follows as motion; with it halved
    (``CleanParams.burst_process_scale`` 0.5, off by default) the track is closer to the truth
    on every seed (0.02-0.14 m on seeds 0-9 of :func:`canyon_block`) and by 0.06 m on
    average."""
    old = CleanParams(burst_process_scale=1.0)
    stiff = CleanParams(burst_process_scale=0.5)
    gains = [
        _block_rmse_m(seed, bursts=True, params=old)
        - _block_rmse_m(seed, bursts=True, params=stiff)
        for seed in range(6)
    ]
    assert min(gains) > 0.0
    assert float(np.mean(gains)) > 0.04


def test_a_walk_that_does_not_burst_keeps_its_process_noise() -> None:
    """The same walk under the same correlated error without bursts: the burst test masks
    nothing, and with the scale on the track is the one the walker's process noise gives,
    to the bit."""
    for seed in (0, 1):
        _, _, track = canyon_block(seed, bursts=False)
        plain = clean_track(track, PROJECTION, params=CleanParams(burst_process_scale=1.0))
        stiff = clean_track(track, PROJECTION, params=CleanParams(burst_process_scale=0.5))
        assert stiff.dropped == plain.dropped
        assert np.array_equal(stiff.x_m, plain.x_m)
        assert np.array_equal(stiff.y_m, plain.y_m)
