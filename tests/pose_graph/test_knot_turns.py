"""Turns at a knot of two junctions joined twice: a straight link and a street bent round a
corner (builds without OSM; round twenty-nine, turns29).

Fresh Bulevardi's Erottaja knot: junctions A and B 9 m apart, joined by a straight link and
by a street that runs 10 m north of A to a corner C and 13 m back down to B. Grouped as one
street (``SegmentParams.part_at_junctions`` None), each junction offers one branch for both,
at headings averaged between them. Parted, the bent street's heading at A is measured across
its corner (``BuildParams.heading_corner_deg`` None) and comes out 40-60 degrees off north.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from city360.geo import LocalProjection, angle_diff_deg
from city360.pose_graph import build_from_tracks
from city360.pose_graph.build import BuildParams
from city360.pose_graph.graph import PoseGraph
from city360.pose_graph.osm_match import OsmStreets, streets_from_graph
from city360.pose_graph.segments import SegmentParams
from city360.pose_graph.tracks import Track
from tests.pose_graph.walks import noisy_walk

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


def _knot(noise_m: float = 0.5) -> list[Track]:
    """Every street walked both ways; the link and the bent street each walked on through
    both junctions (poses with ``noise_m`` of white noise)."""

    def polyline_track(points: list[tuple[float, float]], name: str) -> Track:
        return noisy_walk(points, name, noise_m=noise_m)

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


def _knot_map() -> OsmStreets:
    """The knot as OSM draws it: the link and the bent street two ways between A and B (the
    bent one 9.5 m off the link at most, under ``SegmentParams.mapped_apart_m``), the four
    arms beyond."""
    graph = nx.MultiGraph()
    ends = {1: A, 2: B, 3: WEST, 4: EAST, 5: A_SOUTH, 6: B_SOUTH}
    for name, (x, y) in ends.items():
        graph.add_node(name, x_m=x, y_m=y)
    for u, v in ((3, 1), (1, 2), (2, 4), (1, 5), (2, 6)):  # west-A, the link, B-east, souths
        graph.add_edge(u, v, polyline_xy=[ends[u], ends[v]])
    graph.add_edge(1, 2, polyline_xy=[A, *CORNER, B])
    return streets_from_graph(graph, source="test")


def _built_with_osm(params: BuildParams) -> tuple[PoseGraph, int]:
    """The knot built with the map (walks with 0.1 m of noise, :func:`_streets_at_a_with_osm`)
    and its node at A."""
    pose_graph = build_from_tracks(
        _knot(noise_m=0.1), LocalProjection(60.165, 24.94), params=params, osm=_knot_map()
    )
    graph = pose_graph.graph
    (node,) = (
        n for n, d in graph.nodes(data=True) if np.hypot(d["x_m"] - A[0], d["y_m"] - A[1]) < 4.0
    )
    return pose_graph, node


def _streets_at_a_with_osm(segments: SegmentParams, walks: list[Track] | None = None) -> int:
    """Streets at A built with the map from ``walks`` (default :func:`_knot`). The walks'
    noise is 0.1 m: at 0.5 m a metre apart the 22 m bent street's passes measure 27 m, and its
    heading chord (to 0.6 of a pass) reaches past the corner, 75 degrees at A against the
    link's 80 (the real passes, smoothed, measure 18-21 m and leave A at 52 against 96)."""
    pose_graph = build_from_tracks(
        _knot(noise_m=0.1) if walks is None else walks,
        LocalProjection(60.165, 24.94),
        params=BuildParams(segments=segments),
        osm=_knot_map(),
    )
    graph = pose_graph.graph
    (node,) = (
        n for n, d in graph.nodes(data=True) if np.hypot(d["x_m"] - A[0], d["y_m"] - A[1]) < 4.0
    )
    return len({d["street"] for *_, d in graph.edges(node, data=True)})


def test_with_osm_the_link_and_the_bent_street_are_parted_by_their_headings() -> None:
    assert SegmentParams().part_at_junctions_osm is True
    assert SegmentParams().mapped_apart is True
    guarded = SegmentParams(mapped_apart=True, part_at_junctions_osm=True)
    assert guarded.mapped_apart_m is not None
    assert _streets_at_a_with_osm(guarded) == 4  # west, south, the link, the bent street


def test_with_osm_and_the_rule_off_the_guard_keeps_them_one_street() -> None:
    assert (
        _streets_at_a_with_osm(SegmentParams(mapped_apart=True, part_at_junctions_osm=False)) == 3
    )


KNOT_WITH_OSM = SegmentParams(mapped_apart=True, part_at_junctions_osm=True)
"""The knot's two switches with OSM (round thirty, knotturns30; on by default since round
thirty-one), with ``part_mapped_meet_m`` at its default (round thirty-one)."""


def _bent_leaving_a_with_osm(params: BuildParams) -> float:
    """Start heading (degrees) of the bent street's primary edge leaving A, with OSM: the
    edge towards B's side that is not the link (the link leaves A near 90)."""
    pose_graph, node = _built_with_osm(params)
    (bent,) = (
        float(d["start_heading_deg"])
        for _, _, d in pose_graph.graph.out_edges(node, data=True)
        if d["primary"]
        and abs(angle_diff_deg(float(d["start_heading_deg"]), 45.0)) < 80
        and abs(angle_diff_deg(float(d["start_heading_deg"]), 90.0)) > 15
    )
    return bent


def test_with_osm_the_corner_rule_for_osm_stops_the_bent_streets_heading_at_its_corner() -> None:
    assert BuildParams().heading_corner_osm_deg is None
    # 29.9 with the rule, 55.6 without (the real knot: 24-35 and 52); the first leg runs at 6
    with_rule = BuildParams(segments=KNOT_WITH_OSM, heading_corner_osm_deg=60.0)
    assert abs(angle_diff_deg(_bent_leaving_a_with_osm(with_rule), 6.0)) < 30


def test_with_osm_and_no_corner_rule_the_bent_street_leaves_a_across_its_corner() -> None:
    only_without = BuildParams(segments=KNOT_WITH_OSM, heading_corner_deg=None)
    assert abs(angle_diff_deg(_bent_leaving_a_with_osm(only_without), 6.0)) > 45


CUT_SHORT = (-0.4, 2.5)
"""Where one walker's pass round the bent street cuts its corner into the west street, 2.5 m
north of A (fresh Bulevardi wander seed 0 with OSM: (142.2, 135.2) against A (142.6, 132.7))."""


def _walked_once_each_way() -> list[Track]:
    """The link walked once, west to east; the bent street once, from B round the corner and
    on into the west street short of A; the four arms walked both ways (0.1 m of noise)."""
    walks = [
        ([WEST, A, B, EAST], "west, link, east"),
        ([B_SOUTH, B, *CORNER[::-1], CUT_SHORT, WEST], "south of B, bent, cut to west"),
        ([A_SOUTH, A, WEST], "south of A, west"),
        ([WEST, A, A_SOUTH], "west, south of A"),
        ([B_SOUTH, B, EAST], "south of B, east"),
        ([EAST, B, B_SOUTH], "east, south of B"),
    ]
    return [noisy_walk(points, name, noise_m=0.1) for points, name in walks]


def _streets_at_a_walked_once(segments: SegmentParams) -> int:
    """Streets at A, built with the map from :func:`_walked_once_each_way`."""
    return _streets_at_a_with_osm(segments, _walked_once_each_way())


def test_with_osm_a_link_and_bend_walked_once_each_part_where_the_map_says_two_ways() -> None:
    assert SegmentParams().part_mapped_meet_m == 6.0  # acts with part_at_junctions_osm only
    assert _streets_at_a_walked_once(KNOT_WITH_OSM) == 4  # west, south, the link, the bent street


def test_with_osm_a_link_and_bend_walked_once_each_stay_one_street_needing_both_ends() -> None:
    both_ends = SegmentParams(
        mapped_apart=True, part_at_junctions_osm=True, part_mapped_meet_m=None
    )
    assert _streets_at_a_walked_once(both_ends) == 3


def test_with_osm_lines_whose_ends_lie_farther_apart_at_the_other_node_stay_one_street() -> None:
    # the bent pass stops 2.5 m short of A, 3-5 m from the link's pass: over a 1 m guard
    guarded = SegmentParams(mapped_apart=True, part_at_junctions_osm=True, part_mapped_meet_m=1.0)
    assert _streets_at_a_walked_once(guarded) == 3
