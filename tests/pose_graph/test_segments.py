"""Grouping segments between the same two nodes into streets (``group_streets``)."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np

from city360.pose_graph.osm_dead_ends import MatchedCuts
from city360.pose_graph.osm_match import streets_from_graph
from city360.pose_graph.segments import (
    Segment,
    SegmentParams,
    Street,
    _forked,
    group_streets,
    turned_forks,
)
from city360.pose_graph.tracks import Track
from tests.pose_graph.walks import polyline_track

UNGUARDED = SegmentParams(mapped_apart=True, mapped_apart_m=None)


def _small_block() -> tuple[list, list[Segment]]:
    """Two junctions 45 m apart joined by a straight street and by a street bent at a
    corner 12 m off the straight one (a small block whose third corner is a bend: the
    Erottaja knot of the fresh Helsinki Bulevardi window, round twenty-nine); one pass each,
    both from node 0 to node 1. The two lines are under ``same_street_m`` apart on average."""
    straight = polyline_track([(0.0, 0.0), (0.0, 45.0)], "straight")
    bent = polyline_track([(0.0, 0.0), (12.0, 22.0), (0.0, 45.0)], "bent")
    tracks = [straight, bent]
    segments = [Segment(i, 0, 1, 0, len(t.xy) - 1) for i, t in enumerate(tracks)]
    return tracks, segments


def test_two_mapped_streets_between_the_same_nodes_stay_two_with_mapped_apart() -> None:
    tracks, segments = _small_block()
    mapped = {0: 19, 1: 20}  # the OSM street each pass walks

    streets, street_of = group_streets(
        tracks,
        segments,
        UNGUARDED,
        mapped_street=lambda seg: mapped[seg.track],
    )

    assert len(streets) == 2
    assert street_of[0] != street_of[1]


def test_two_mapped_streets_under_same_street_m_are_one_street_without_mapped_apart() -> None:
    tracks, segments = _small_block()
    mapped = {0: 19, 1: 20}

    streets, _ = group_streets(
        tracks, segments, SegmentParams(), mapped_street=lambda seg: mapped[seg.track]
    )

    assert len(streets) == 1


def test_passes_of_one_mapped_street_stay_one_street_with_mapped_apart() -> None:
    tracks, segments = _small_block()

    streets, _ = group_streets(
        tracks, segments, SegmentParams(mapped_apart=True), mapped_street=lambda seg: 19
    )

    assert len(streets) == 1


def test_an_unmapped_pass_groups_by_its_gap_with_mapped_apart() -> None:
    tracks, segments = _small_block()
    mapped = {0: 19, 1: -1}

    streets, _ = group_streets(
        tracks,
        segments,
        SegmentParams(mapped_apart=True),
        mapped_street=lambda seg: mapped[seg.track],
    )

    assert len(streets) == 1


Points = list[tuple[float, float]]


def _two_ways(
    other_way: Points, walks: list[Points]
) -> tuple[list[Track], list[Segment], MatchedCuts]:
    """Two mapped ways between nodes (0, 0) and (0, 45): a straight one (street 0) and
    ``other_way`` (street 1); one pass along each of ``walks``, the first matched to street 0,
    the second to street 1 (every frame)."""
    graph = nx.MultiGraph()
    graph.add_node(1, x_m=0.0, y_m=0.0)
    graph.add_node(2, x_m=0.0, y_m=45.0)
    graph.add_edge(1, 2, polyline_xy=[(0.0, 0.0), (0.0, 45.0)])
    graph.add_edge(1, 2, polyline_xy=other_way)
    osm = streets_from_graph(graph, source="test")
    tracks = [polyline_track(points, f"walk{i}") for i, points in enumerate(walks)]
    segments = [Segment(i, 0, 1, 0, len(t.xy) - 1) for i, t in enumerate(tracks)]
    matches = [np.full(len(t.xy), i, dtype=np.int64) for i, t in enumerate(tracks)]
    matched = MatchedCuts(osm, tracks, matches, [], 8.0, 8.0, 8.0, 4.0)
    return tracks, segments, matched


def _streets(
    tracks: list[Track], segments: list[Segment], matched: MatchedCuts, params: SegmentParams
) -> int:
    streets, _ = group_streets(
        tracks,
        segments,
        params,
        mapped_street=matched.mapped_street,
        mapped_gap=matched.mapped_gap_m,
    )
    return len(streets)


def test_parallel_ways_matched_by_one_walkers_passes_stay_one_street_with_mapped_apart() -> None:
    # a footway and a cycleway 5 m beside it (fresh Kaisaniemi); both passes walk between them
    cycleway = [(0.0, 0.0), (5.0, 5.0), (5.0, 40.0), (0.0, 45.0)]
    path = [(0.0, 0.0), (2.5, 5.0), (2.5, 40.0), (0.0, 45.0)]
    tracks, segments, matched = _two_ways(cycleway, [path, path])

    assert matched.mapped_gap_m(segments[0], segments[1]) < 6.0
    assert _streets(tracks, segments, matched, SegmentParams(mapped_apart=True)) == 1
    assert _streets(tracks, segments, matched, UNGUARDED) == 2


def test_a_small_blocks_two_mapped_sides_stay_two_streets_with_mapped_apart() -> None:
    # the Erottaja knot: a straight side and one round a corner 16 m off it
    corner = [(0.0, 0.0), (16.0, 22.5), (0.0, 45.0)]
    tracks, segments, matched = _two_ways(corner, [[(0.0, 0.0), (0.0, 45.0)], corner])

    assert matched.mapped_gap_m(segments[0], segments[1]) > 12.0
    assert _streets(tracks, segments, matched, SegmentParams(mapped_apart=True)) == 2
    assert _streets(tracks, segments, matched, SegmentParams(mapped_apart=False)) == 1


def _turn_back(*, between: bool) -> set[int]:
    """``turned_forks`` of node 0 with ``turned_legs_apart`` off and on. One walker comes from
    a dead end 30 m south (node 2) to node 0, walks 30 m north to junction 1 along x = 0,
    comes back 6 m east of that for most of the way (its pass runs ``apart_m`` apart from
    the first), turns back at node 0 and walks north again: 3 m east, near both passes,
    with ``between`` (Helsinki wander seed 1's (482.3, 374.8)), else along x = 0 again."""
    again = [(3.0, 3.0), (3.0, 27.0)] if between else []
    legs = [
        [(0.0, -30.0), (0.0, 0.0)],
        [(0.0, 0.0), (0.0, 30.0)],
        [(0.0, 30.0), (6.0, 24.0), (6.0, 6.0), (0.0, 0.0)],
        [(0.0, 0.0), *again, (0.0, 30.0)],
    ]
    points = [legs[0][0]]
    ends = [0]
    for leg in legs:
        points.extend(leg[1:])
        ends.append(sum(int(np.hypot(*np.subtract(b, a))) for a, b in itertools.pairwise(points)))
    track = polyline_track(points, "out, back, out again")
    nodes = [(2, 0), (0, 1), (1, 0), (0, 1)]
    segments = [
        Segment(0, u, v, first, last)
        for (u, v), first, last in zip(nodes, ends[:-1], ends[1:], strict=True)
    ]
    streets, _ = group_streets([track], segments)
    off, on = (
        turned_forks([track], segments, streets, {0}, SegmentParams(turned_legs_apart=flag))
        for flag in (False, True)
    )
    return off | {10 + n for n in on}


def test_a_walker_turning_back_along_one_street_keeps_no_node_with_turned_legs_apart() -> None:
    assert _turn_back(between=True) == {0}  # kept before the rule, dissolved with it


def test_a_walker_turning_from_one_line_into_one_apart_keeps_the_node_with_turned_legs_apart() -> (
    None
):
    assert _turn_back(between=False) == {0, 10}


def test_turned_legs_apart_is_on_by_default() -> None:
    assert SegmentParams().turned_legs_apart is True


def _fork_lines(
    branch: list[tuple[float, float]],
) -> tuple[list[Track], list[Segment], list[Street]]:
    """Two lines of one street leaving node 0 at the origin: a straight branch 45 m north,
    and ``branch`` (from the origin), each walked once away from the node to node 1."""
    tracks = [
        polyline_track([(0.0, 0.0), (0.0, 45.0)], "straight"),
        polyline_track(branch, "other"),
    ]
    segments = [Segment(k, 0, 1, 0, len(t) - 1) for k, t in enumerate(tracks)]
    lines = [Street(0, 0, 1, (0,), ()), Street(0, 0, 1, (1,), ())]
    return tracks, segments, lines


def test_a_fork_s_two_lines_of_unlike_length_leaving_apart_are_forked() -> None:
    # Bulevardi's Erottajankatu fork: a 45 m diagonal and a 64 m branch round a corner,
    # leaving 16-21 degrees apart
    tracks, segments, lines = _fork_lines([(0.0, 0.0), (-12.0, 30.0), (-12.0, 50.0), (0.0, 64.0)])
    assert _forked(tracks, segments, lines, 0, 15.0, 1.25)
    # the old behaviour: turned_forks wants a turn, which no pass here makes
    assert SegmentParams().forked_deg is None


def test_two_passes_splayed_alike_or_leaving_together_are_not_forked() -> None:
    # as long as each other (two passes of one street drifting apart) ...
    tracks, segments, lines = _fork_lines([(0.0, 0.0), (-12.0, 30.0), (0.0, 45.0)])
    assert not _forked(tracks, segments, lines, 0, 15.0, 1.25)
    # ... or leaving nearly one way
    tracks, segments, lines = _fork_lines([(0.0, 0.0), (-3.0, 40.0), (0.0, 64.0)])
    assert not _forked(tracks, segments, lines, 0, 15.0, 1.25)
