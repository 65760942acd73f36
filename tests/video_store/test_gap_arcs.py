"""A vehicle's dropout redrawn as long as its speed says (:mod:`city360.video_store.gap_arcs`)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from city360.geo import LocalProjection
from city360.video_store.clean import CleanParams, SmoothTrack, clean_track
from city360.video_store.gap_arcs import GapArcParams, arc_bridge, stretch_gaps
from city360.video_store.gps.track import GpsTrack

PROJECTION = LocalProjection(37.77, -122.42)
T0 = 1.7e9
ARCS = CleanParams(gap_arcs=GapArcParams())
PLAIN = CleanParams(gap_arcs=None)


def _path(turns: list[tuple[float, float]], speed_mps: float) -> tuple[np.ndarray, np.ndarray]:
    """True times (10 Hz, seconds from the start) and positions (metres) of a camera at
    ``speed_mps`` whose heading follows ``turns``: ``(seconds, heading_deg)`` pairs, held
    between them and changed linearly across each."""
    t = np.arange(0.0, turns[-1][0], 0.1)
    heading = np.radians(np.interp(t, [s for s, _ in turns], [h for _, h in turns]))
    step = speed_mps * 0.1
    x = np.concatenate([[0.0], np.cumsum(step * np.sin(heading[:-1]))])
    y = np.concatenate([[0.0], np.cumsum(step * np.cos(heading[:-1]))])
    return t, np.column_stack([x, y])


def _fixes(
    t: np.ndarray, true: np.ndarray, dropout_s: tuple[float, float], seed: int, hz: float = 10.0
) -> GpsTrack:
    """Fixes at ``hz`` with 1 m noise along the true path, none inside ``dropout_s``."""
    fix_t = np.arange(0.0, t[-1], 1.0 / hz)
    fix_t = fix_t[(fix_t <= dropout_s[0]) | (fix_t >= dropout_s[1])]
    rng = np.random.default_rng(seed)
    x = np.interp(fix_t, t, true[:, 0]) + rng.normal(0.0, 1.0, fix_t.shape)
    y = np.interp(fix_t, t, true[:, 1]) + rng.normal(0.0, 1.0, fix_t.shape)
    lat, lon = PROJECTION.to_latlon(x, y)
    return GpsTrack.from_columns(Path("drive.gpx"), "gpx", T0 + fix_t, lat, lon)


def _gap_rms(
    smooth: SmoothTrack, t: np.ndarray, true: np.ndarray, span: tuple[float, float]
) -> float:
    inside = (t > span[0]) & (t < span[1])
    x, y, _ = smooth.sample(T0 + t[inside])
    return float(np.sqrt(np.mean((x - true[inside, 0]) ** 2 + (y - true[inside, 1]) ** 2)))


DOUBLE_BEND = [
    (0.0, 318.0),
    (17.0, 318.0),
    (18.0, 240.0),
    (20.0, 240.0),
    (23.0, 275.0),
    (40.0, 275.0),
]
"""SF camera seed 2's shape: north-west, a sharp left to 240 degrees, a right bend to 275."""


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_cars_dropout_through_a_double_bend_is_drawn_as_long_as_its_speed(seed: int) -> None:
    """8 s without a fix from 4 s before the sharp left into the bend back: the
    smoother's bridge cuts the bend (6.6 m RMS on seed 0); the arc as long as 8.3 m/s drives is
    within 4.5 m (2.6 m)."""
    t, true = _path(DOUBLE_BEND, 8.3)
    dropout = (13.0, 21.0)
    track = _fixes(t, true, dropout, seed)
    before = _gap_rms(clean_track(track, PROJECTION, params=PLAIN), t, true, dropout)
    after = _gap_rms(clean_track(track, PROJECTION, params=ARCS), t, true, dropout)
    assert before > 6.0
    assert after < 4.5


def test_a_straight_streets_dropout_keeps_the_smoothers_bridge() -> None:
    """Its bridge is as long as the speed says: nothing to redraw."""
    t, true = _path([(0.0, 90.0), (30.0, 90.0)], 8.3)
    track = _fixes(t, true, (10.0, 18.0), 0)
    plain = clean_track(track, PROJECTION, params=PLAIN)
    arcs = clean_track(track, PROJECTION, params=ARCS)
    np.testing.assert_array_equal(plain.x_m, arcs.x_m)
    np.testing.assert_array_equal(plain.y_m, arcs.y_m)


def test_a_walkers_dropout_round_a_corner_keeps_the_smoothers_bridge() -> None:
    """At 1.4 m/s the gap is metres long and the walker may have stopped in it (1 Hz fixes)."""
    t, true = _path([(0.0, 0.0), (60.0, 0.0), (62.0, 270.0), (120.0, 270.0)], 1.4)
    track = _fixes(t, true, (55.0, 67.0), 0, hz=1.0)
    plain = clean_track(track, PROJECTION, params=PLAIN)
    arcs = clean_track(track, PROJECTION, params=ARCS)
    np.testing.assert_array_equal(plain.x_m, arcs.x_m)


def test_gap_arcs_are_on_by_default() -> None:
    assert CleanParams().gap_arcs == GapArcParams()


def test_an_arc_as_long_as_its_chord_is_the_chord() -> None:
    arc = arc_bridge((0.0, 0.0), (0.0, 50.0), 0.0, 0.0, 50.0)
    assert arc is not None
    s_m, x, y = arc
    assert s_m[-1] == pytest.approx(50.0)
    np.testing.assert_allclose(x, 0.0, atol=1e-6)
    np.testing.assert_allclose(y, s_m, atol=1e-6)


def test_an_arc_shorter_than_its_chord_is_none() -> None:
    assert arc_bridge((0.0, 0.0), (0.0, 50.0), 0.0, 0.0, 40.0) is None


def test_an_arc_turning_left_leaves_and_arrives_on_its_headings() -> None:
    """A quarter turn north then west, 1.2 times its chord long."""
    chord = math.hypot(-30.0, 30.0)
    arc = arc_bridge((0.0, 0.0), (-30.0, 30.0), 0.0, math.radians(270.0), 1.2 * chord)
    assert arc is not None
    s_m, x, y = arc
    assert s_m[-1] == pytest.approx(1.2 * chord)
    assert math.degrees(math.atan2(x[1] - x[0], y[1] - y[0])) == pytest.approx(0.0, abs=1.0)
    assert math.degrees(math.atan2(x[-1] - x[-2], y[-1] - y[-2])) % 360 == pytest.approx(
        270.0, abs=1.0
    )


def _corner_gap() -> tuple[np.ndarray, ...]:
    """Fixes at 6 m/s north for 5 s, none for 8 s, then west at 6 m/s; the smoothed track on
    a 10 Hz grid with a straight 30 m bridge across the gap (48 m at the sides' speed)."""
    t_meas = np.concatenate([np.arange(0.0, 5.5, 1.0), np.arange(13.0, 18.5, 1.0)])
    x_meas = np.where(t_meas <= 5.0, 0.0, -6.0 * (t_meas - 13.0) - 30.0)
    y_meas = np.where(t_meas <= 5.0, 6.0 * t_meas, 30.0 + 0.0 * t_meas)
    grid = np.arange(0.0, 18.05, 0.1)
    x = np.interp(grid, t_meas, x_meas)
    y = np.interp(grid, t_meas, y_meas)
    vx = np.gradient(x, grid)
    vy = np.gradient(y, grid)
    return grid, t_meas, x_meas, y_meas, x, y, vx, vy


@pytest.mark.parametrize(("usual_mps", "redrawn"), [(8.0, 1), (1.4, 0)])
def test_a_gap_is_redrawn_only_on_a_piece_that_usually_moves_at_vehicle_speed(
    usual_mps: float, redrawn: int
) -> None:
    """A canyon receiver's bursts either side of a walker's gap read 4-6 m/s over 5 s
    (Hamburg canyon seed 8, 398-408 s: junction P 1 -> 0 when it was redrawn); the piece's
    usual speed, a walker's, keeps the smoother's bridge."""
    grid, t_meas, x_meas, y_meas, x, y, vx, vy = _corner_gap()
    before = x.copy()
    spans = stretch_gaps(
        grid,
        t_meas,
        x_meas,
        y_meas,
        x,
        y,
        vx,
        vy,
        GapArcParams(),
        max_gap_s=10.0,
        usual_mps=usual_mps,
    )
    assert len(spans) == redrawn
    assert np.array_equal(x, before) == (redrawn == 0)
