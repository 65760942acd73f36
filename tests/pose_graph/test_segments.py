"""Grouping segments between the same two nodes into streets (``group_streets``)."""

from __future__ import annotations

import itertools
from functools import partial

import networkx as nx
import numpy as np

from city360.pose_graph.osm_dead_ends import MatchedCuts
from city360.pose_graph.osm_match import streets_from_graph
from city360.pose_graph.segments import (
    Segment,
    SegmentParams,
    Street,
    _forked,
    cut_tracks,
    group_streets,
    turned_forks,
)
from city360.pose_graph.tracks import Track
from tests.pose_graph.walks import noisy_walk, polyline_track

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


def _one_line_cut_at_a_bend(
    shares: tuple[int, int],
) -> tuple[list[Track], list[Segment], MatchedCuts]:
    """One line from (0, 0) north-east to a bend at (30, 30), then east to (70, 30), mapped as
    two ways (streets 0 and 1) because a third way leaves the bend north (street 2, never
    walked): the held-out tokyo old town's line through its OSM node (109.6, 141.7)
    (round thirty-three). Two passes from node 0 to node 1 along it, matched to street 0 up
    to ``shares[k]`` frames before the bend (negative: past it) and to street 1 after."""
    graph = nx.MultiGraph()
    for node, (x_m, y_m) in enumerate([(0.0, 0.0), (30.0, 30.0), (70.0, 30.0), (30.0, 70.0)]):
        graph.add_node(node, x_m=x_m, y_m=y_m)
    graph.add_edge(0, 1, polyline_xy=[(0.0, 0.0), (30.0, 30.0)])
    graph.add_edge(1, 2, polyline_xy=[(30.0, 30.0), (70.0, 30.0)])
    graph.add_edge(1, 3, polyline_xy=[(30.0, 30.0), (30.0, 70.0)])
    osm = streets_from_graph(graph, source="test")
    line = [(0.0, 0.0), (30.0, 30.0), (70.0, 30.0)]
    tracks = [polyline_track(line, f"pass{k}") for k in range(2)]
    segments = [Segment(k, 0, 1, 0, len(t.xy) - 1) for k, t in enumerate(tracks)]
    matches = []
    for track, early in zip(tracks, shares, strict=True):
        bend = int(np.argmin(np.hypot(*(track.xy - (30.0, 30.0)).T)))
        matched = np.ones(len(track.xy), dtype=np.int64)
        matched[: bend + early] = 0
        matches.append(matched)
    return tracks, segments, MatchedCuts(osm, tracks, matches, [], 8.0, 8.0, 8.0, 4.0)


def test_passes_of_one_line_cut_in_two_by_the_map_stay_one_street_with_mapped_gap_share() -> None:
    # one pass walks 42 m way 0 for a few frames more than half, the other way 1 (40 m)
    tracks, segments, matched = _one_line_cut_at_a_bend((4, -4))
    assert [matched.mapped_street(seg) for seg in segments] == [0, 1]

    def streets(share: float | None) -> int:
        params = SegmentParams(mapped_gap_share=share)
        grouped, _ = group_streets(
            tracks,
            segments,
            params,
            mapped_street=matched.mapped_street,
            mapped_gap=partial(matched.mapped_gap_m, share=share),
        )
        return len(grouped)

    assert matched.mapped_gap_m(segments[0], segments[1]) > 12.0
    assert streets(None) == 2
    share = SegmentParams().mapped_gap_share  # the default: on
    assert share is not None
    assert matched.mapped_gap_m(segments[0], segments[1], share=share) < 2.0
    assert streets(share) == 1


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


# the old town's knot (tokyo-oldtown coverage with stops seed 0, parted), the eastern junction at
# the origin: the western one 8.5 m off, a dual carriageway's eastern half from the south-west
# into the eastern junction, passing the western one 6.4 m off, then on to the east
_KNOT = np.array([[0.0, 0.0], [-8.4, 1.3], [-92.1, -77.2], [35.8, -22.4]])
_EAST, _WEST, _SOUTH_WEST, _ON_EAST = 0, 1, 2, 3


def _knot_cuts(
    walks: list[list[tuple[float, float]]], params: SegmentParams
) -> list[list[tuple[int, int]]]:
    tracks = [noisy_walk(points, f"carriageway{k}", noise_m=0.0) for k, points in enumerate(walks)]
    segments = cut_tracks(tracks, _KNOT, [], params)
    return [[(s.u, s.v) for s in segments if s.track == t] for t in range(len(tracks))]


def test_a_street_grazing_a_junction_into_a_nearer_one_is_not_cut_there_with_graze_m() -> None:
    there = [(-92.1, -77.2), (0.0, 0.0), (35.8, -22.4)]
    back = there[::-1]

    assert _knot_cuts([there, back], SegmentParams()) == [
        [(_SOUTH_WEST, _WEST), (_WEST, _EAST), (_EAST, _ON_EAST)],
        [(_ON_EAST, _EAST), (_EAST, _WEST), (_WEST, _SOUTH_WEST)],
    ]
    assert _knot_cuts([there, back], SegmentParams(graze_m=5.0)) == [
        [(_SOUTH_WEST, _EAST), (_EAST, _ON_EAST)],
        [(_ON_EAST, _EAST), (_EAST, _SOUTH_WEST)],
    ]


def test_one_track_grazing_a_junction_is_cut_there_with_graze_m() -> None:
    # one video straying beside a junction: GPS error, not a street (graze_tracks)
    there = [(-92.1, -77.2), (0.0, 0.0), (35.8, -22.4)]
    one = [(_SOUTH_WEST, _WEST), (_WEST, _EAST), (_EAST, _ON_EAST)]

    assert _knot_cuts([there], SegmentParams(graze_m=5.0)) == [one]
    assert _knot_cuts([there], SegmentParams(graze_m=5.0, graze_tracks=1)) == [
        [
            (_SOUTH_WEST, _EAST),
            (_EAST, _ON_EAST),
        ]
    ]


def test_videos_starting_beside_a_junction_are_cut_there_with_graze_m() -> None:
    # two videos that start 7.5 m before the western junction (no street walked past it)
    there = [(-10.0, -8.4), (0.0, 0.0), (35.8, -22.4)]

    assert _knot_cuts([there, there], SegmentParams(graze_m=5.0)) == [
        [(_WEST, _EAST), (_EAST, _ON_EAST)],
        [(_WEST, _EAST), (_EAST, _ON_EAST)],
    ]


def test_passes_by_two_junctions_are_cut_at_both_with_graze_m() -> None:
    # the eastern junction moved 4 m off the carriageway, outside its bend: the passes go
    # through neither (graze_through_m)
    there = [(-92.1, -77.2), (0.0, 0.0), (35.8, -22.4)]
    tracks = [noisy_walk(points, f"by{k}", noise_m=0.0) for k, points in enumerate([there] * 2)]
    junctions = _KNOT.copy()
    junctions[_EAST] = (0.0, 4.0)
    through = SegmentParams(graze_m=5.0)
    nearer = SegmentParams(graze_m=5.0, graze_through_m=5.0)

    assert [(s.u, s.v) for s in cut_tracks(tracks, junctions, [], through) if s.track == 0] == [
        (_SOUTH_WEST, _WEST),
        (_WEST, _EAST),
        (_EAST, _ON_EAST),
    ]
    assert [(s.u, s.v) for s in cut_tracks(tracks, junctions, [], nearer) if s.track == 0] == [
        (_SOUTH_WEST, _EAST),
        (_EAST, _ON_EAST),
    ]


def test_a_pass_through_both_junctions_of_a_knot_is_cut_at_both_with_graze_m() -> None:
    # the western half into the western junction, then along the link to the eastern one
    link = [(-100.0, -73.0), (-8.4, 1.3), (0.0, 0.0), (35.8, -22.4)]
    track = noisy_walk(link, "link", noise_m=0.0)
    junctions = np.concatenate([_KNOT[:3], [[-100.0, -73.0]], _KNOT[3:]])
    segments = cut_tracks([track], junctions, [], SegmentParams(graze_m=5.0, graze_tracks=1))

    assert [(s.u, s.v) for s in segments] == [(3, _WEST), (_WEST, _EAST), (_EAST, 4)]


def test_a_pass_grazing_a_lone_junction_is_cut_there_with_graze_m() -> None:
    # 6.4 m beside the western junction and no other junction within graze_reach_m on
    beside = [(-92.1, -77.2), (0.0, 0.0)]
    junctions = _KNOT[[_WEST, _SOUTH_WEST]]
    track = noisy_walk(beside, "beside", noise_m=0.0)
    segments = cut_tracks([track], junctions, [], SegmentParams(graze_m=5.0, graze_tracks=1))

    assert [(s.u, s.v) for s in segments] == [(1, 0)]


def test_a_pass_cutting_a_junctions_corner_is_cut_there_with_graze_m() -> None:
    # from the west 6.7 m beside the western junction, turning 55 degrees 5.9 m off it and
    # on into the eastern one: it turns at the western junction, so it is cut there
    corner = [(-60.0, 8.0), (-6.0, 8.0), (0.0, 0.0), (0.0, -40.0)]
    track = noisy_walk(corner, "corner", noise_m=0.0)
    junctions = np.array([[0.0, 0.0], [-8.4, 1.3], [-60.0, 8.0], [0.0, -40.0]])
    straight_only = SegmentParams(graze_m=5.0, graze_tracks=1)
    any_turn = SegmentParams(graze_m=5.0, graze_tracks=1, graze_turn_deg=180.0)

    assert [(s.u, s.v) for s in cut_tracks([track], junctions, [], straight_only)] == [
        (2, 1),
        (1, 0),
        (0, 3),
    ]
    assert [(s.u, s.v) for s in cut_tracks([track], junctions, [], any_turn)] == [(2, 0), (0, 3)]


def test_graze_m_is_on_by_default_with_the_parting() -> None:
    assert SegmentParams().graze_m == 7.0
    assert SegmentParams().graze_reach_m == 10.0
    assert SegmentParams().graze_turn_deg == 15.0
    assert SegmentParams().graze_tracks == 2
    assert SegmentParams().graze_through_m == 3.0
