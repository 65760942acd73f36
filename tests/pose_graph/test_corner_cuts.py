"""A T whose turning passes cut both its corners is one junction (builds without OSM)."""

from __future__ import annotations

import numpy as np

from city360.geo import LocalProjection
from city360.pose_graph import build_from_tracks
from city360.pose_graph.build import BuildParams
from city360.pose_graph.tracks import Track
from tests.pose_graph.walks import polyline_track


def _junctions(tracks: list[Track], params: BuildParams | None = None) -> np.ndarray:
    graph = build_from_tracks(tracks, LocalProjection(35.74, 139.67), params=params).graph
    return np.array(
        [[d["x_m"], d["y_m"]] for _, d in graph.nodes(data=True) if d["kind"] == "junction"]
    ).reshape(-1, 2)


def _tee_with_cut_corners() -> list[Track]:
    """A T at the origin: a through street west-east, a side street north. Walkers coming
    down the side street turn both ways and leave it 12 m before the T, joining the through
    street 6 m either side of it; the through street is walked straight both ways."""
    return [
        polyline_track([(0.0, 90.0), (0.0, 12.0), (-6.0, 0.0), (-90.0, 0.0)], "north, cut west"),
        polyline_track([(0.0, 90.0), (0.0, 12.0), (6.0, 0.0), (90.0, 0.0)], "north, cut east"),
        polyline_track([(-90.0, 0.0), (90.0, 0.0)], "west to east"),
        polyline_track([(90.0, 0.0), (-90.0, 0.0)], "east to west"),
    ]


def test_a_tee_whose_turning_passes_cut_its_corners_is_one_junction() -> None:
    # old town coverage seed 1: (42, -68), (38, -80) and (47, -80) built around the true T
    # (43, -80); on main this builds three junctions, one where the passes part and one where
    # each joins the through street
    junctions = _junctions(_tee_with_cut_corners())
    assert len(junctions) == 1
    assert np.hypot(*junctions[0]) < 3.0


def test_with_the_rule_off_the_cut_corners_make_a_triangle() -> None:
    params = BuildParams(corner_cut_params=None)
    assert len(_junctions(_tee_with_cut_corners(), params)) == 3


def test_a_triangle_of_three_streets_keeps_its_three_junctions() -> None:
    # a traffic island: each corner's street out of the triangle leaves outwards, no street
    # runs straight through two corners, so no corner pair is a through street's base
    left, right, top = (-7.0, 0.0), (7.0, 0.0), (0.0, 12.0)
    south_west, south_east, north = (-70.0, -70.0), (70.0, -70.0), (0.0, 90.0)
    tracks = [
        polyline_track([south_west, left, right, south_east], "along the base"),
        polyline_track([south_east, right, top, north], "up the right side"),
        polyline_track([north, top, left, south_west], "down the left side"),
        polyline_track([south_east, right, left, south_west], "back along the base"),
    ]
    junctions = _junctions(tracks)
    assert len(junctions) == 3
    for corner in (left, right, top):
        assert np.hypot(*(junctions - corner).T).min() < 3.0


def test_a_tee_walked_round_its_corner_without_cutting_stays_one_junction() -> None:
    # the passes turn at the T itself: one junction before and after
    tracks = [
        polyline_track([(0.0, 90.0), (0.0, 0.0), (-90.0, 0.0)], "north, then west"),
        polyline_track([(0.0, 90.0), (0.0, 0.0), (90.0, 0.0)], "north, then east"),
        polyline_track([(-90.0, 0.0), (90.0, 0.0)], "west to east"),
    ]
    junctions = _junctions(tracks)
    assert len(junctions) == 1
    assert np.hypot(*junctions[0]) < 3.0
