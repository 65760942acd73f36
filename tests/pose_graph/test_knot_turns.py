"""Turns at a knot of two junctions joined twice: a straight link and a street bent round a
corner (builds without OSM; round twenty-nine, turns29).

Fresh Bulevardi's Erottaja knot: junctions A and B 9 m apart, joined by a straight link and
by a street that runs 10 m north of A to a corner C and 13 m back down to B. Grouped as one
street (``SegmentParams.part_at_junctions`` None), each junction offers one branch for both,
at headings averaged between them. Parted, the bent street's heading at A is measured across
its corner (``BuildParams.heading_corner_deg`` None) and comes out 40-60 degrees off north.
"""

from __future__ import annotations

import numpy as np

from city360.geo import LocalProjection, angle_diff_deg
from city360.pose_graph import build_from_tracks
from city360.pose_graph.build import BuildParams
from city360.pose_graph.graph import PoseGraph
from city360.pose_graph.segments import SegmentParams
from city360.pose_graph.tracks import Track
from tests.pose_graph.walks import polyline_track

A, B = (0.0, 0.0), (9.0, 0.0)
CORNER = [(0.6, 6.0), (1.5, 8.5), (3.5, 9.5), (6.0, 7.5)]
"""The two junctions and the bent street's rounded corner (no junction: the walks turn
there), 9.5 m north of the link at most."""
WEST, A_SOUTH, EAST, B_SOUTH = (-90.0, 0.0), (-40.0, -90.0), (100.0, 0.0), (50.0, -90.0)
PARTED = SegmentParams(part_at_junctions=30.0)
"""The parting rule at 30 degrees, its default (design notes, round twenty-nine); tests name
it so a change of default shows here."""
BOTH = BuildParams(segments=PARTED, heading_corner_deg=60.0)
"""Both rules on, at the measured values."""


def _knot() -> list[Track]:
    """Every street walked both ways; the link and the bent street each walked on through
    both junctions."""
    return [
        polyline_track([WEST, A, B, EAST], "west, link, east"),
        polyline_track([EAST, B, A, WEST], "east, link, west"),
        polyline_track([WEST, A, *CORNER, B, B_SOUTH], "west, bent, south of B"),
        polyline_track([B_SOUTH, B, *CORNER[::-1], A, A_SOUTH], "south of B, bent, south of A"),
        polyline_track([A_SOUTH, A, WEST], "south of A, west"),
        polyline_track([B_SOUTH, B, EAST], "south of B, east"),
        polyline_track([EAST, B, A, A_SOUTH], "east, link, south of A"),
    ]


def _build(params: BuildParams) -> tuple[PoseGraph, int]:
    """The built graph and its node within 4 m of A."""
    pose_graph = build_from_tracks(_knot(), LocalProjection(60.165, 24.94), params=params)
    graph = pose_graph.graph
    near_a = [
        n for n, d in graph.nodes(data=True) if np.hypot(d["x_m"] - A[0], d["y_m"] - A[1]) < 4.0
    ]
    assert len(near_a) == 1, near_a
    return pose_graph, near_a[0]


def _leaving_a(params: BuildParams) -> list[float]:
    """Start headings (degrees) of the primary edges leaving A towards B's side (east of
    north-west, west of south-east)."""
    pose_graph, node = _build(params)
    return sorted(
        float(d["start_heading_deg"])
        for _, _, d in pose_graph.graph.out_edges(node, data=True)
        if d["primary"] and abs(angle_diff_deg(float(d["start_heading_deg"]), 45.0)) < 80
    )


def test_the_link_and_the_bent_street_are_two_streets_at_two_junctions() -> None:
    pose_graph, node = _build(BuildParams(segments=PARTED))
    streets = {d["street"] for *_, d in pose_graph.graph.edges(node, data=True)}
    assert len(streets) == 4  # west, south, the link, the bent street


def test_the_rule_is_on_by_default_and_without_it_they_are_one_street() -> None:
    assert SegmentParams().part_at_junctions == PARTED.part_at_junctions
    pose_graph, node = _build(BuildParams(segments=SegmentParams(part_at_junctions=None)))
    streets = {d["street"] for *_, d in pose_graph.graph.edges(node, data=True)}
    assert len(streets) == 3


def test_the_bent_street_leaves_a_northwards_when_its_heading_stops_at_the_corner() -> None:
    bent, link = _leaving_a(BOTH)
    assert abs(angle_diff_deg(bent, 6.0)) < 15  # towards the corner, 6 degrees east of north
    assert abs(angle_diff_deg(link, 90.0)) < 10


def test_measured_across_the_corner_the_bent_street_leaves_a_far_off_north() -> None:
    assert BuildParams().heading_corner_deg is None
    bent, _ = _leaving_a(BuildParams())
    assert abs(angle_diff_deg(bent, 6.0)) > 25
