"""Tracks the burst tests walk: a corner walk, white and slow GPS noise, canyon bursts as
synth.gps makes them, and the recorded canyon windows (tests/video_store/data/README.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from city360.geo import LocalProjection
from city360.video_store.gps.track import GpsTrack

DATA = Path(__file__).parents[1] / "data"
"""The recorded canyon windows (tests/video_store/data/README.md)."""

PROJECTION = LocalProjection(53.56, 9.96)


def corner_walk(
    speed_mps: float, rate_hz: float, *, leg_m: float = 150.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fixes' times and the true path: ``leg_m`` east, a right-angle corner, ``leg_m`` north."""
    leg_s = leg_m / speed_mps
    t = np.arange(0.0, 2 * leg_s, 1.0 / rate_hz)
    x = np.minimum(t, leg_s) * speed_mps
    y = np.clip(t - leg_s, 0.0, None) * speed_mps
    return t, x, y


def with_noise(
    x: np.ndarray, y: np.ndarray, seed: int, sigma_m: float = 2.5
) -> tuple[np.ndarray, np.ndarray]:
    """White noise of ``sigma_m`` per axis."""
    rng = np.random.default_rng(seed)
    return x + rng.normal(0, sigma_m, len(x)), y + rng.normal(0, sigma_m, len(y))


def add_burst(
    t: np.ndarray, x: np.ndarray, y: np.ndarray, start_s: float, end_s: float, offset: tuple
) -> tuple[np.ndarray, np.ndarray]:
    """A canyon burst as synth.gps makes it: one offset, ramped in and out over 2 s."""
    ramp = np.clip(np.minimum(t - start_s, end_s - t) / 2.0, 0.0, 1.0)
    weight = np.where((t >= start_s) & (t < end_s), ramp, 0.0)
    return x + weight * offset[0], y + weight * offset[1]


def track_of(t: np.ndarray, x: np.ndarray, y: np.ndarray) -> GpsTrack:
    lat, lon = PROJECTION.to_latlon(x, y)
    return GpsTrack.from_columns(Path("walk.gpx"), "gpx", 1.7e9 + t, lat, lon)


def with_slow_noise(
    x: np.ndarray, y: np.ndarray, seed: int, *, white_m: float = 2.0, slow_m: float = 2.0
) -> tuple[np.ndarray, np.ndarray]:
    """White noise of ``white_m`` per axis plus a 30 s Gauss-Markov part of ``slow_m`` per
    axis, as the canyon model draws them (1 Hz fixes)."""
    rng = np.random.default_rng(seed)
    phi = np.exp(-1.0 / 30.0)
    slow = np.zeros((len(x), 2))
    state = rng.normal(0.0, 1.0, 2)
    for i in range(len(x)):
        state = phi * state + rng.normal(0.0, np.sqrt(1.0 - phi * phi), 2)
        slow[i] = state
    return (
        x + rng.normal(0.0, white_m, len(x)) + slow_m * slow[:, 0],
        y + rng.normal(0.0, white_m, len(y)) + slow_m * slow[:, 1],
    )
