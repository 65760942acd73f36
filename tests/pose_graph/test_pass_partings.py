"""Passes that walk one path together and part onto two at a shallow fork: a junction there."""

from __future__ import annotations

import itertools

import numpy as np

from city360.pose_graph.junction_params import JunctionParams
from city360.pose_graph.junctions import find_junction_parts
from city360.pose_graph.pass_partings import PartingParams, pass_partings
from city360.pose_graph.tracks import Track, make_track


def _walk(name: str, points: list[tuple[float, float]], *, noise: float = 0.3) -> Track:
    """A walk through ``points`` (metres), a pose a metre, GPS noise ``noise`` m."""
    rng = np.random.default_rng(sum(map(ord, name)))
    legs = []
    for a, b in itertools.pairwise(points):
        p, q = np.asarray(a, float), np.asarray(b, float)
        n = max(int(np.hypot(*(q - p))), 2)
        legs.append(p + np.linspace(0, 1, n, endpoint=False)[:, None] * (q - p))
    xy = np.concatenate([*legs, np.asarray(points[-1], float)[None, :]])
    xy = xy + rng.normal(0, noise, xy.shape)
    return make_track(name, xy, spacing_m=1.0, frame_count=len(xy))


def _fork(angle_deg: float) -> tuple[list[Track], np.ndarray]:
    """A path north from (0, -60) to a fork at (0, 0); one branch goes on north, the other
    leaves ``angle_deg`` east of north. Two walkers take each branch, one of them back."""
    a = np.radians(angle_deg)
    branch = (70.0 * np.sin(a), 70.0 * np.cos(a))
    tracks = [
        _walk("s", [(0, -60), (0, 0), (0, 60)], noise=0.1),
        _walk("sb", [(0, 60), (0, 0), (0, -60)], noise=0.1),
        _walk("b", [(0, -60), (0, 0), branch], noise=0.1),
        _walk("bb", [branch, (0, 0), (0, -60)], noise=0.1),
    ]
    return tracks, np.zeros(2)


def test_passes_parting_at_a_shallow_fork_give_a_junction_at_the_fork() -> None:
    tracks, fork = _fork(20.0)
    found = pass_partings(tracks, PartingParams())
    assert (np.hypot(*(found.reshape(-1, 2) - fork).T) < 8.0).any()


def test_a_fork_under_the_votes_angle_is_found_only_with_partings() -> None:
    """20 degrees is under ``min_angle_deg`` (25): the passes cast no crossing votes there
    (fresh Kaisaniemi, true (-45.2, -121.4): the passes curve from one path onto the other)."""
    tracks, fork = _fork(20.0)
    without, *_ = find_junction_parts(tracks, JunctionParams(partings=None), without_osm=True)
    near = np.hypot(*(without.reshape(-1, 2) - fork).T) if len(without) else np.zeros(0)
    assert not (near < 8.0).any()
    with_rule, *_ = find_junction_parts(
        tracks, JunctionParams(partings=PartingParams()), without_osm=True
    )
    assert (np.hypot(*(with_rule.reshape(-1, 2) - fork).T) < 8.0).any()


def test_passes_along_one_path_and_a_video_ending_on_it_part_nowhere() -> None:
    tracks = [
        _walk("one", [(0, -60), (0, 60)]),
        _walk("two", [(0, 60), (0, -60)]),
        _walk("short", [(0, -60), (0, 5)]),
        _walk("short back", [(0.5, 10), (0.5, -60)]),
    ]
    assert len(pass_partings(tracks, PartingParams())) == 0


def test_two_paths_side_by_side_closer_than_part_m_are_no_fork() -> None:
    """Two footpaths 5 m apart (fresh Kaisaniemi's lens) part by less than ``part_m``."""
    tracks = [
        _walk("west", [(0, -60), (0, -20), (-2.5, -10), (-2.5, 30), (0, 40), (0, 60)]),
        _walk("east", [(0, -60), (0, -20), (2.5, -10), (2.5, 30), (0, 40), (0, 60)]),
        _walk("west back", [(0, 60), (0, 40), (-2.5, 30), (-2.5, -10), (0, -20), (0, -60)]),
        _walk("east back", [(0, 60), (0, 40), (2.5, 30), (2.5, -10), (0, -20), (0, -60)]),
    ]
    assert len(pass_partings(tracks, PartingParams())) == 0


def test_partings_are_on_by_default_and_off_with_osm() -> None:
    assert JunctionParams().partings == PartingParams()
    tracks, fork = _fork(20.0)
    with_osm, *_ = find_junction_parts(tracks, JunctionParams(partings=PartingParams()))
    near = np.hypot(*(with_osm.reshape(-1, 2) - fork).T) if len(with_osm) else np.zeros(0)
    assert not (near < 8.0).any()


def test_a_parting_beside_a_voted_junction_adds_none() -> None:
    """At a T the passes part 5-8 m past the junction the votes find; within ``clear_m`` of
    it the parting is dropped and the junction stays where the votes put it (Helsinki
    coverage seed 2, true (314.4, 733.1), was lost to the merge)."""
    tracks = [
        _walk("west east", [(-60, 0), (60, 0)]),
        _walk("east west", [(60, 0), (-60, 0)]),
        _walk("west north", [(-60, 0), (0, 0), (0, 60)]),
        _walk("north west", [(0, 60), (0, 0), (-60, 0)]),
    ]
    off, *_ = find_junction_parts(tracks, JunctionParams(partings=None), without_osm=True)
    on, *_ = find_junction_parts(tracks, JunctionParams(), without_osm=True)
    assert len(pass_partings(tracks, PartingParams())) >= 1
    np.testing.assert_allclose(np.sort(on, axis=0), np.sort(off, axis=0))


def test_a_walker_turning_back_beside_a_pass_that_walks_on_is_no_fork() -> None:
    """Out on one sidewalk and back on the other, 4 m apart: the way back runs along the line
    the two passes walked together (``tests/pose_graph/test_turn_backs.py``'s street)."""
    tracks = [
        _walk("east", [(-100, 0), (100, 0)]),
        _walk("west", [(100, 1), (-100, 1)]),
        _walk("back", [(-100, -1), (-20, -1), (-18, -3), (-20, -5), (-100, -5)]),
        _walk("back again", [(-100, -1), (-25, -1), (-23, -3), (-25, -5), (-100, -5)]),
    ]
    assert len(pass_partings(tracks, PartingParams())) == 0
