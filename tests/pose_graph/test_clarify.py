"""Passes of one street pulled onto one centre line before a build without OSM."""

from __future__ import annotations

import itertools

import numpy as np

from city360.pose_graph.clarify import ClarifyParams, clarify_tracks
from city360.pose_graph.tracks import Track, make_track


def _walk(points: list[tuple[float, float]], name: str, bias: tuple[float, float]) -> Track:
    """A pass along ``points`` (1 m spacing) with a constant GPS bias and 0.5 m jitter."""
    rng = np.random.default_rng(sum(map(ord, name)))
    parts = []
    for a, b in itertools.pairwise(points):
        a_xy, b_xy = np.asarray(a, float), np.asarray(b, float)
        n = int(np.hypot(*(b_xy - a_xy)))
        parts.append(a_xy + np.linspace(0.0, 1.0, n, endpoint=False)[:, None] * (b_xy - a_xy))
    xy = np.concatenate([*parts, np.asarray(points[-1:], float)]) + np.asarray(bias)
    xy = xy + rng.normal(0.0, 0.5, xy.shape)
    return make_track(name, xy, spacing_m=1.0, frame_count=len(xy))


def _mean_y(track: Track, x_from: float, x_to: float) -> float:
    inside = (track.xy[:, 0] > x_from) & (track.xy[:, 0] < x_to)
    return float(track.xy[inside, 1].mean())


def test_two_passes_of_a_street_filmed_both_ways_meet_on_one_line() -> None:
    # GPS put the eastbound pass 2 m north of the street and the westbound one 2 m south
    tracks = [
        _walk([(-60, 0), (60, 0)], "east", (0.0, 2.0)),
        _walk([(60, 0), (-60, 0)], "west", (0.0, -2.0)),
    ]
    east, west = clarify_tracks(tracks)
    gap_before = _mean_y(tracks[0], -30, 30) - _mean_y(tracks[1], -30, 30)
    gap_after = _mean_y(east, -30, 30) - _mean_y(west, -30, 30)
    assert gap_before > 3.5
    assert abs(gap_after) < 1.5
    assert abs(_mean_y(east, -30, 30) + _mean_y(west, -30, 30)) < 1.0  # met in the middle


def test_a_cross_street_is_not_pulled_along_the_street_it_crosses() -> None:
    tracks = [
        _walk([(-60, 0), (60, 0)], "east", (0.0, 1.5)),
        _walk([(60, 0), (-60, 0)], "west", (0.0, -1.5)),
        _walk([(0, -60), (0, 60)], "north", (0.0, 0.0)),
    ]
    north = clarify_tracks(tracks)[2]
    moved = np.hypot(*(north.xy - tracks[2].xy).T)
    assert moved.max() < 0.5


def test_two_streets_12_m_apart_stay_apart() -> None:
    tracks = [
        _walk([(-60, 0), (60, 0)], "north street", (0.0, 0.0)),
        _walk([(60, -12), (-60, -12)], "south street", (0.0, 0.0)),
    ]
    for before, after in zip(tracks, clarify_tracks(tracks), strict=True):
        assert np.allclose(before.xy, after.xy)
        assert after.id == before.id
        assert after.frame_count == before.frame_count


def test_no_pose_moves_further_than_the_cap() -> None:
    tracks = [
        _walk([(-60, 0), (60, 0)], "east", (0.0, 2.0)),
        _walk([(60, 0), (-60, 0)], "west", (0.0, -2.0)),
    ]
    params = ClarifyParams(max_shift_m=0.5)
    for before, after in zip(tracks, clarify_tracks(tracks, params), strict=True):
        assert np.hypot(*(after.xy - before.xy).T).max() <= 0.5 + 1e-9
