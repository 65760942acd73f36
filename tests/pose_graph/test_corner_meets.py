"""Two passes turning corners at one place onto different streets meet at a junction."""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import numpy as np
import pytest

from city360.errors import GraphBuildError
from city360.geo import LocalProjection
from city360.pose_graph.build import BuildParams, build_from_tracks
from city360.pose_graph.corner_meets import CornerParams, corner_meets, find_corners
from city360.pose_graph.junction_params import JunctionParams
from city360.pose_graph.tracks import Track, make_track


def _turning_walk(
    name: str,
    start: tuple[float, float],
    corner: tuple[float, float],
    end: tuple[float, float],
    *,
    cut_m: float,
    noise: float = 0.3,
) -> Track:
    """A walk from ``start`` to ``corner`` to ``end`` (metres) whose poses cut the corner
    by a quarter circle of radius ``cut_m``, as smoothed GPS does."""
    rng = np.random.default_rng(sum(map(ord, name)))
    s, c, e = (np.asarray(p, float) for p in (start, corner, end))
    u, v = (c - s) / np.hypot(*(c - s)), (e - c) / np.hypot(*(e - c))
    a, b = c - cut_m * u, c + cut_m * v  # where the cut leaves and rejoins the streets
    legs = [s + np.linspace(0, 1, int(np.hypot(*(a - s))))[:, None] * (a - s)]
    t = np.linspace(0, 1, 12)[:, None]
    legs.append((1 - t) ** 2 * a + 2 * (1 - t) * t * c + t**2 * b)  # the cut corner
    legs.append(b + np.linspace(0, 1, int(np.hypot(*(e - b))))[:, None] * (e - b))
    xy = np.concatenate(legs) + rng.normal(0, noise, (sum(len(leg) for leg in legs), 2))
    return make_track(name, xy, spacing_m=1.0, frame_count=len(xy))


@pytest.mark.parametrize("offset_m", [0.0, 2.5, 4.5])
def test_two_walks_turning_onto_four_streets_at_one_crossing_meet_there(offset_m: float) -> None:
    """Helsinki east (60.5, 85.3), unseen one-way seed 7: west -> north and east -> south,
    both corners cut, the two walks 2-5 m apart on each street; no junction was built."""
    tracks = [
        _turning_walk("wn", (-60, 0), (0, 0), (0, 60), cut_m=5.0),
        _turning_walk("es", (60, offset_m), (offset_m, offset_m), (offset_m, -60), cut_m=5.0),
    ]
    found = corner_meets(tracks, CornerParams())
    assert len(found) >= 1
    assert np.hypot(*(found.mean(axis=0) - offset_m / 2)).max() < 3.0


def test_a_bend_filmed_both_ways_is_no_junction() -> None:
    tracks = [
        _turning_walk("there", (-60, 0), (0, 0), (0, 60), cut_m=5.0),
        _turning_walk("back", (1, 60), (1, 1), (-60, 1), cut_m=4.0),
    ]
    assert len(find_corners(tracks, CornerParams())) == 2
    assert len(corner_meets(tracks, CornerParams())) == 0


def test_a_left_and_a_right_turn_off_one_street_meet_at_the_crossing() -> None:
    """West -> north and west -> south: three streets at one place."""
    tracks = [
        _turning_walk("left", (-60, 0), (0, 0), (0, 60), cut_m=5.0),
        _turning_walk("right", (-60, 2), (2, 2), (2, -60), cut_m=5.0),
    ]
    found = corner_meets(tracks, CornerParams())
    assert len(found) >= 1
    assert np.hypot(*(found.mean(axis=0) - 1.0)) < 3.0


def test_corners_far_apart_are_no_junction() -> None:
    tracks = [
        _turning_walk("wn", (-60, 0), (0, 0), (0, 60), cut_m=5.0),
        _turning_walk("es", (80, 20), (20, 20), (20, -60), cut_m=5.0),
    ]
    assert len(corner_meets(tracks, CornerParams())) == 0


def _fixture_tracks(name: str) -> list[Track]:
    with gzip.open(Path(__file__).parent / "data" / name, "rt") as f:
        rows = list(csv.DictReader(f))
    tracks = []
    for track in dict.fromkeys(r["track"] for r in rows):
        xy = np.array([[float(r["x_m"]), float(r["y_m"])] for r in rows if r["track"] == track])
        tracks.append(make_track(track, xy, spacing_m=1.0, frame_count=len(xy)))
    return tracks


def test_a_twins_two_turning_walks_build_their_crossing() -> None:
    """A Helsinki twin's poses (data/README.md): west -> north and east -> south through one
    crossing. Without the corners no junction is built there (R 0.800 on that row); here,
    the two walks alone, the build says they share none."""
    tracks = _fixture_tracks("corner_meet_poses.csv.gz")
    origin = LocalProjection(60.17, 24.95)
    off = BuildParams(junctions=JunctionParams(corners=None))
    with pytest.raises(GraphBuildError, match="share no junction"):
        build_from_tracks(tracks, origin, params=off)
    on = BuildParams()  # on by default
    graph = build_from_tracks(tracks, origin, params=on).graph
    built = [(d["x_m"], d["y_m"]) for _, d in graph.nodes(data=True) if d["kind"] == "junction"]
    assert len(built) == 1
    assert np.hypot(*built[0]) < 4.0
