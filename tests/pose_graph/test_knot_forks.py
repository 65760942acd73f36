"""Tests for the fork into a fused knot (:mod:`city360.pose_graph.knot_forks`)."""

from __future__ import annotations

import numpy as np

from city360.pose_graph.build import BuildParams
from city360.pose_graph.knot_forks import KnotForkParams, knot_forks, part_knot_forks
from city360.pose_graph.segments import (
    SegmentParams,
    Street,
    cut_tracks,
    dissolve_pass_through,
    group_streets,
)
from tests.pose_graph.walks import polyline_track

# The old town's 環七通り knot, moved to the origin: the fork F (10, 4) (true (-19.5, 86.5)),
# its branches 11-16 m to A (0, -4) and B (-6, 2) ((-27.6, 79.0), (-35.8, 82.3)), 8.5 m
# apart, which the build fused into one node W (-3, -1) between them. A street leaves A to
# the south, B to the west and the north, F to the east; each ends at a node of its own.
_F, _W = (10.0, 4.0), (-3.0, -1.0)
_A, _B = (0.0, -4.0), (-6.0, 2.0)
_ENDS = [(0.0, -49.0), (-49.0, 2.0), (-6.0, 49.0), (49.0, 4.0)]


def _streets(
    walks: list[list[tuple[float, float]]],
) -> tuple[list, list, list[Street], np.ndarray]:
    tracks = [polyline_track(points, f"knot{k}") for k, points in enumerate(walks)]
    junctions_xy = np.array([_F, _W, *_ENDS])
    params = SegmentParams()
    segments = cut_tracks(tracks, junctions_xy, [], params)
    streets, _ = group_streets(tracks, segments, params)
    return tracks, segments, streets, junctions_xy


def _arms(streets: list[Street], node: int) -> int:
    return sum(node in (street.a, street.b) for street in streets)


_THROUGH_A = [(50.0, 4.0), _F, _A, (0.0, -50.0)]  # east street, the branch to A, south
_THROUGH_B = [(-50.0, 2.0), _B, _F, (50.0, 4.0)]  # west, the branch from B, east street
_BOTH_TWICE = [_THROUGH_A, _THROUGH_B, _THROUGH_A[::-1], _THROUGH_B[::-1]]
_BOTH_THRICE = [*_BOTH_TWICE, _THROUGH_A, _THROUGH_B]


def test_a_fork_into_a_fused_knot_is_a_junction_of_three() -> None:
    tracks, segments, streets, junctions_xy = _streets(_BOTH_THRICE)
    # the old behaviour: both branches end at W, one street; F has two and is dissolved
    assert _arms(streets, 0) == 2
    assert 0 in dissolve_pass_through(segments, streets, range(len(junctions_xy)))
    forks = knot_forks(tracks, segments, streets, range(len(junctions_xy)))
    assert set(forks) == {0}
    _, first, second = forks[0]
    assert len(first) == len(second) == 3
    parted = part_knot_forks(tracks, segments, streets, range(len(junctions_xy)))
    assert _arms(parted, 0) == 3
    assert [street.id for street in parted] == list(range(len(parted)))
    assert len(parted) == len(streets) + 1


def test_passes_of_one_branch_are_no_fork() -> None:
    tracks, segments, streets, junctions_xy = _streets([_THROUGH_A, _THROUGH_A[::-1]] * 2)
    assert knot_forks(tracks, segments, streets, range(len(junctions_xy))) == {}


def test_a_branch_walked_twice_is_under_min_passes() -> None:
    tracks, segments, streets, junctions_xy = _streets(_BOTH_TWICE)
    nodes = range(len(junctions_xy))
    assert knot_forks(tracks, segments, streets, nodes) == {}
    assert set(knot_forks(tracks, segments, streets, nodes, KnotForkParams(min_passes=2))) == {0}


def test_a_fork_longer_than_max_length_m_is_left() -> None:
    tracks, segments, streets, junctions_xy = _streets(_BOTH_THRICE)
    short = KnotForkParams(max_length_m=8.0)
    assert knot_forks(tracks, segments, streets, range(len(junctions_xy)), short) == {}
    near = KnotForkParams(min_length_m=18.0)
    assert knot_forks(tracks, segments, streets, range(len(junctions_xy)), near) == {}


def test_ends_closer_than_ends_apart_m_are_one_street() -> None:
    tracks, segments, streets, junctions_xy = _streets(_BOTH_THRICE)
    wide = KnotForkParams(ends_apart_m=12.0)
    assert knot_forks(tracks, segments, streets, range(len(junctions_xy)), wide) == {}


def test_knot_fork_params_default() -> None:
    assert BuildParams().knot_fork_params == KnotForkParams()
    assert KnotForkParams().min_passes == 3
