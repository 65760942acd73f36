"""The camera's usual speed read from its fixes (city360/video_store/usual_speed.py): the
readings differ by design, and these tests say where."""

from __future__ import annotations

import numpy as np
import pytest

from city360.video_store.usual_speed import (
    CHORD_S,
    chord_speed_about_mps,
    chord_speeds_mps,
    median_step_speed_mps,
    usual_speed_mps,
)


def test_chord_speeds_take_the_two_fixes_noise_out() -> None:
    """Fixes 3 m apart a second on a straight line, chords of 5 s: 15 m over 5 s is 3 m/s;
    with 2 m of noise per axis taken out, sqrt(225 - 16) / 5."""
    t = np.arange(0.0, 20.0)
    x, y = 3.0 * t, np.zeros_like(t)
    first, speed = chord_speeds_mps(t, x, y, chord_s=5.0, sigma_m=0.0)
    assert first.tolist() == list(range(15))  # the last 5 fixes have no chord
    assert speed == pytest.approx(np.full(15, 3.0))
    _, less = chord_speeds_mps(t, x, y, chord_s=5.0, sigma_m=2.0)
    assert less == pytest.approx(np.full(15, np.sqrt(225.0 - 16.0) / 5.0))


def walk_with_a_stop() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """1 Hz: 60 s east at 1.4 m/s, 120 s standing (fixes pinned to one point, as
    stationary.pin_stationary leaves them), 60 s east again."""
    t = np.arange(0.0, 240.0)
    x = 1.4 * (np.minimum(t, 60.0) + np.clip(t - 180.0, 0.0, None))
    return t, x, np.zeros_like(t)


def test_a_pieces_usual_speed_leaves_its_stop_out() -> None:
    """Half the piece stands still: the piece's usual speed is still the walker's."""
    t, x, y = walk_with_a_stop()
    assert usual_speed_mps(t, x, y, 0.0, moving_mps=0.25) == pytest.approx(1.4)


def test_the_speed_about_an_instant_counts_a_stop() -> None:
    """About an instant in the middle of the stop the camera stands; about one on the walk it
    walks (the turn check judges a step at the speed where it is)."""
    t, x, y = walk_with_a_stop()
    assert chord_speed_about_mps(t, x, y, 120.0, 0.0) == 0.0
    assert chord_speed_about_mps(t, x, y, 20.0, 0.0) == pytest.approx(1.4)
    assert chord_speed_about_mps(t, x, y, 1000.0, 0.0) == 0.0  # no fix near


def test_a_cars_corner_reads_about_its_speed() -> None:
    """A car at 8.3 m/s, 1 Hz, turning a right angle: the chords across the corner cut it
    short (5 s: 6.0-6.8 m/s), but about the corner most chords do not, so the turn check
    judges the corner at nearly the car's speed."""
    t = np.arange(0.0, 40.0)
    x = 8.3 * np.minimum(t, 20.0)
    y = 8.3 * np.clip(t - 20.0, 0.0, None)
    first, speed = chord_speeds_mps(t, x, y, chord_s=CHORD_S, sigma_m=0.0)
    across = (t[first] < 20.0) & (t[first] + CHORD_S > 20.0)
    assert float(speed[across].min()) < 7.0
    assert chord_speed_about_mps(t, x, y, 20.0, 0.0) == pytest.approx(8.3)


def test_consecutive_fixes_read_a_standing_receivers_noise() -> None:
    """The step test's length floor reads the median step between consecutive fixes, noise
    and all: a receiver standing still under 3 m of noise per axis moves about 4-5 m/s."""
    rng = np.random.default_rng(0)
    t = np.arange(0.0, 120.0)
    x, y = rng.normal(0.0, 3.0, t.shape), rng.normal(0.0, 3.0, t.shape)
    speed = median_step_speed_mps(t, x, y, np.array([60.0, 1000.0]))
    assert 3.5 < speed[0] < 5.5
    assert speed[1] == 0.0  # no fix within USUAL_SPEED_S
