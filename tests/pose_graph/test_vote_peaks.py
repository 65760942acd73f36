"""A vote cluster parted at its density peaks (``JunctionParams.split_peaks_m``)."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from city360.pose_graph.junction_params import JunctionParams
from city360.pose_graph.junctions import find_junction_parts, find_junctions
from city360.pose_graph.tracks import Track, make_track

SPLIT = JunctionParams(split_peaks_m=8.0)
UNSPLIT = JunctionParams(split_peaks_m=None)


def _walk(points: list[tuple[float, float]], name: str, rng: np.random.Generator) -> Track:
    """A walk along ``points`` (metres), one pose a metre, with a GPS error of its own: an
    offset of about 1 m, a slow drift and 0.1 m of jitter."""
    corners = [np.asarray(p, float) for p in points]
    xy = [corners[0]]
    for a, b in pairwise(corners):
        n = int(np.hypot(*(b - a)))
        xy.extend(a + np.linspace(0.0, 1.0, n + 1)[1:, None] * (b - a))
    poses = np.asarray(xy)
    drift = np.cumsum(rng.normal(0.0, 0.15, poses.shape), axis=0)
    drift -= drift.mean(axis=0)
    poses = poses + rng.normal(0.0, 1.0, 2) + 0.5 * drift + rng.normal(0.0, 0.1, poses.shape)
    return make_track(name, poses, spacing_m=1.0, frame_count=len(poses))


def _crossings(xa: list[float], xb: list[float], seed: int) -> list[Track]:
    """An east-west street walked both ways, and walks that cross it, or turn onto it, at
    ``xa`` (from or to the north) and ``xb`` (from or to the south); one walker goes from
    the north at ``xa`` along the street to the south at ``xb``."""
    rng = np.random.default_rng(seed)
    routes: dict[str, list[tuple[float, float]]] = {
        "main-east": [(-60, 0), (60, 0)],
        "main-west": [(60, 0), (-60, 0)],
        "a-through": [(xa[0], 50), (xa[0], -50)],
        "b-through": [(xb[0], -50), (xb[0], 50)],
        "west-a-north": [(-50, 0), (xa[1], 0), (xa[1], 50)],
        "b-south-east": [(xb[1], -50), (xb[1], 0), (50, 0)],
        "a-to-b": [(xa[2], 50), (xa[2], 0), (xb[2], 0), (xb[2], -50)],
        "east-b-north": [(50, 0), (xb[3], 0), (xb[3], 50)],
        "a-south-west": [(xa[3], -50), (xa[3], 0), (-50, 0)],
    }
    return [_walk(points, name, rng) for name, points in routes.items()]


@pytest.mark.parametrize("seed", [0, 2])
def test_two_crossings_10_m_apart_in_one_vote_pile_are_two_junctions(seed: int) -> None:
    tracks = _crossings([0.0] * 4, [10.0] * 4, seed)
    fused, _ = find_junctions(tracks, UNSPLIT, without_osm=True)
    assert len(fused) == 1  # one pile: the passes between the crossings join them
    parted, _ = find_junctions(tracks, SPLIT, without_osm=True)
    assert len(parted) == 2
    west, east = sorted(parted.tolist())
    assert np.hypot(west[0] - 0.0, west[1]) < 2.5
    assert np.hypot(east[0] - 10.0, east[1]) < 2.5


@pytest.mark.parametrize("seed", range(6))
def test_one_wide_crossing_with_the_same_spread_of_turns_stays_one(seed: int) -> None:
    """The same walks, each crossing at its own place between 0 and 10 m: the votes spread
    as far, but rise to one top."""
    tracks = _crossings([0.0, 2.9, 5.7, 8.6], [1.4, 4.3, 7.1, 10.0], seed)
    junctions, _ = find_junctions(tracks, SPLIT, without_osm=True)
    assert len(junctions) == 1


def test_split_peaks_is_on_by_default_and_off_with_osm() -> None:
    assert JunctionParams().split_peaks_m == 8.0
    tracks = _crossings([0.0] * 4, [10.0] * 4, 0)
    assert len(find_junctions(tracks, SPLIT)[0]) == 1  # the map's nodes decide there


def test_the_parts_of_a_parted_pile_are_flagged() -> None:
    tracks = _crossings([0.0] * 4, [10.0] * 4, 0)
    _, _, whole, _ = find_junction_parts(tracks, UNSPLIT, without_osm=True)
    assert not whole.any()
    xy, support, parted, _ = find_junction_parts(tracks, SPLIT, without_osm=True)
    assert parted.tolist() == [True, True]
    assert np.allclose(xy, find_junctions(tracks, SPLIT, without_osm=True)[0])
    assert len(support) == 2
