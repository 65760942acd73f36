"""Map matching to OSM streets and what the build takes from it (issue 17, dense cities)."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from city360.geo import LocalProjection
from city360.pose_graph import map_match, osm_match
from city360.pose_graph.dead_ends import DeadEndEvent, find_dead_ends
from city360.pose_graph.map_match import viterbi_match
from city360.pose_graph.osm_match import (
    MIN_POSES_PER_STREET,
    OsmStreets,
    load_matching_streets,
    matched_cut_filter,
    osm_junction_candidates,
    streets_from_graph,
)
from city360.pose_graph.segments import cut_tracks
from tests.pose_graph.walks import ORIGIN, polyline_track
from tests.pose_graph.walks import noisy_walk as _walk
from tests.pose_graph.walks import osm_streets as _streets


def _edge(osm: OsmStreets, u: int, v: int) -> int:
    ids = osm.node_ids[osm.edge_nodes]
    return int(
        np.flatnonzero(
            ((ids[:, 0] == u) & (ids[:, 1] == v)) | ((ids[:, 0] == v) & (ids[:, 1] == u))
        )[0]
    )


# a street (0-1-2, y = 0) and a lane 7 m north of it (3-4-5, y = 7) joined at both ends, with
# a side street north from the lane's middle node 4
LANE_Y = 7.0
PARALLEL = _streets(
    {0: (0, 0), 1: (100, 0), 2: (200, 0), 3: (0, LANE_Y), 4: (100, LANE_Y), 5: (200, LANE_Y),
     6: (100, 80)},
    [(0, 1), (1, 2), (3, 4), (4, 5), (0, 3), (2, 5), (4, 6)],
)  # fmt: skip
STREET = {_edge(PARALLEL, 0, 1), _edge(PARALLEL, 1, 2)}


def test_parallel_lane_9_m_away_is_told_apart_by_the_sequence_not_per_pose() -> None:
    track = _walk([(10, 0), (190, 0)], "street", noise_m=2.5)
    matched = viterbi_match(PARALLEL, [track])[0]
    assert set(matched.tolist()) <= STREET
    # per pose the nearest street is the lane for some poses: the test can fail
    nearest_lane = np.abs(track.xy[:, 1] - LANE_Y) < np.abs(track.xy[:, 1])
    assert nearest_lane.sum() > 0


def test_turn_at_a_node_switches_street_once_there() -> None:
    track = _walk([(10, LANE_Y), (100, LANE_Y), (100, 75)], "turn", noise_m=1.0)
    matched = viterbi_match(PARALLEL, [track])[0]
    switches = np.flatnonzero(np.diff(matched) != 0) + 1
    assert matched[0] == _edge(PARALLEL, 3, 4)
    assert matched[-1] == _edge(PARALLEL, 4, 6)
    assert len(switches) == 1
    assert np.hypot(*(track.xy[switches[0]] - [100.0, LANE_Y])) < 8.0


def test_poses_far_from_every_street_are_off_network() -> None:
    track = _walk([(40, 60), (80, 60)], "park", noise_m=0.5)
    assert (viterbi_match(PARALLEL, [track])[0] == -1).all()


def test_street_beside_another_streets_junction_is_not_cut_there() -> None:
    along = _walk([(10, 0), (190, 0)], "street", noise_m=0.5)
    side = _walk([(100, 75), (100, LANE_Y), (10, LANE_Y)], "side", noise_m=0.5)
    tracks = [along, side]
    matches = viterbi_match(PARALLEL, tracks)
    junction = np.array([[100.0, LANE_Y]])
    dead_xy, events = find_dead_ends(tracks, junction)
    may_cut = matched_cut_filter(PARALLEL, matches, junction, events, reach_m=8.0)
    frames = np.arange(len(along), dtype=np.int64)
    assert not may_cut(0, frames, np.zeros(len(along), dtype=np.int64)).any()
    ungated = cut_tracks(tracks, junction, events, dead_end_xy=dead_xy)
    gated = cut_tracks(tracks, junction, events, dead_end_xy=dead_xy, may_cut=may_cut)
    assert any(s.track == 0 and 0 in (s.u, s.v) for s in ungated)  # 9 m: within the cut radius
    assert not any(s.track == 0 and 0 in (s.u, s.v) for s in gated)
    assert any(s.track == 1 and 0 in (s.u, s.v) for s in gated)


def test_video_starting_mid_street_is_shared_but_an_unconnected_street_end_is_not() -> None:
    # street 0-1 (y = 0); street 2-3 ends at node 2, 2 m north of it, not connected
    osm = _streets({0: (0, 0), 1: (200, 0), 2: (100, 2), 3: (100, 120)}, [(0, 1), (2, 3)])
    along = _walk([(10, 0), (190, 0)], "along", noise_m=0.3)
    starts_mid = _walk([(100, 0), (190, 0)], "mid", noise_m=0.3)
    unconnected = _walk([(100, 4), (100, 110)], "north", noise_m=0.3)
    tracks = [along, starts_mid, unconnected]
    matches = viterbi_match(osm, tracks)
    events = [
        [DeadEndEvent(1, 0, *map(float, starts_mid.xy[0]))],
        [DeadEndEvent(2, 0, *map(float, unconnected.xy[0]))],
    ]
    may_cut = matched_cut_filter(osm, matches, np.zeros((0, 2)), events, reach_m=8.0)
    near_mid = np.flatnonzero(np.abs(along.xy[:, 0] - 100.0) < 3.0)
    nodes = np.zeros(len(near_mid), dtype=np.int64)
    assert may_cut(0, near_mid, nodes).all()  # dead end 0: on the same street
    assert not may_cut(0, near_mid, nodes + 1).any()  # dead end 1: another street's end


def test_a_short_stub_at_a_bend_makes_no_osm_junction() -> None:
    bend = {0: (0.0, 0.0), 1: (100.0, 0.0), 2: (100.0, 100.0)}
    track = _walk([(0, 0), (100, 0), (100, 100)], "bend", noise_m=0.5)
    stub = _streets({**bend, 3: (101.0, -1.0)}, [(0, 1), (1, 2), (1, 3)])
    assert osm_junction_candidates(stub, [track]).shape == (0, 2)
    side = _streets({**bend, 3: (140.0, 0.0)}, [(0, 1), (1, 2), (1, 3)])
    spur = _walk([(0, 0), (100, 0), (135, 0), (100, 0), (100, 100)], "spur", noise_m=0.5)
    found = osm_junction_candidates(side, [spur])
    assert found.shape == (1, 2)
    assert np.allclose(found[0], [100.0, 0.0])


def test_stepping_into_a_stub_and_out_along_another_street_is_no_dead_end() -> None:
    # from the east to a bend at (0, 0), 5 m on into a stub, back, then north
    step = _walk([(60, 0), (-5, 0), (0, 0), (0, 60)], "step", noise_m=0.2)
    dead_xy, _ = find_dead_ends([step], np.zeros((0, 2)))
    assert not (np.hypot(*(dead_xy - [-5.0, 0.0]).T) < 8.0).any()
    # walking a 30 m street to its end and back is a dead end
    spur = _walk([(60, 0), (-30, 0), (0, 0), (0, 60)], "spur", noise_m=0.2)
    dead_xy, _ = find_dead_ends([spur], np.zeros((0, 2)))
    assert (np.hypot(*(dead_xy - [-30.0, 0.0]).T) < 4.0).any()


def _osm_file(path: Path, ways: list[tuple[str, list[tuple[float, float]]]]) -> Path:
    """OSM XML of ``ways`` (highway value, points in metres around ``walks.ORIGIN``)."""
    projection = LocalProjection(*ORIGIN)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<osm version="0.6" generator="tests">']
    refs: list[list[int]] = []
    for _highway, points in ways:
        refs.append([])
        for x, y in points:
            lat, lon = projection.to_latlon(x, y)
            node_id = sum(len(r) for r in refs)
            lines.append(f'  <node id="{node_id}" version="1" lat="{lat:.9f}" lon="{lon:.9f}"/>')
            refs[-1].append(node_id)
    for k, ((highway, _), way) in enumerate(zip(ways, refs, strict=True)):
        nds = "".join(f'<nd ref="{r}"/>' for r in way)
        lines.append(f'  <way id="{k + 1}" version="1">{nds}<tag k="highway" v="{highway}"/></way>')
    path.write_text("\n".join([*lines, "</osm>"]) + "\n", encoding="utf-8")
    return path


_CROSS = [(-60.0, 0.0), (0.0, 0.0), (60.0, 0.0)], [(0.0, -60.0), (0.0, 0.0), (0.0, 60.0)]
_FAR_SQUARE = [(-900.0, 0.0), (-300.0, 0.0), (-300.0, 600.0), (-900.0, 600.0), (-900.0, 0.0)]


def test_the_walked_streets_are_matched_in_whichever_piece_they_are(tmp_path: Path) -> None:
    """An extract's streets often fall apart into pieces (the crop cuts them, a river, a
    fence); the matcher saw only the longest, so a walk on any other failed the build with
    "extract of another area" (Helsinki 60.174-60.1775, 24.938-24.944, street network)."""
    path = _osm_file(
        tmp_path / "pieces.osm",
        [("residential", _FAR_SQUARE), ("residential", _CROSS[0]), ("residential", _CROSS[1])],
    )
    tracks = [
        polyline_track([(-50.0, 0.0), (50.0, 0.0)], "a"),
        polyline_track([(0.0, -50.0), (0.0, 50.0)], "b"),
    ]
    streets, network, shares, _ = load_matching_streets(
        path, LocalProjection(*ORIGIN), tracks, network="auto"
    )
    assert network == "street"
    assert shares["street"] > 0.9
    assert streets.node_xy[:, 0].min() < -800.0  # the longer piece is there too


def test_auto_takes_service_roads_before_footways(tmp_path: Path) -> None:
    """A walk along service roads (lanes, yards) matches street+service as well as walk; auto
    skipped street+service and took walk, whose footpaths moved junctions the walk never
    passed (Helsinki one-way twin on street+service: junction recall 0.5 with walk, 1.0 with
    street+service)."""
    path = _osm_file(
        tmp_path / "service.osm",
        [
            ("residential", _FAR_SQUARE),
            ("service", _CROSS[0]),
            ("service", _CROSS[1]),
            ("footway", [(-60.0, 30.0), (60.0, 30.0)]),
        ],
    )
    tracks = [
        polyline_track([(-50.0, 0.0), (50.0, 0.0)], "a"),
        polyline_track([(0.0, -50.0), (0.0, 50.0)], "b"),
    ]
    _, network, _, _ = load_matching_streets(path, LocalProjection(*ORIGIN), tracks)
    assert network == "street+service"


def test_an_unknown_network_lists_auto_too(tmp_path: Path) -> None:
    """`build --osm-network wlk` said "expected one of street, street+service, walk, all",
    leaving out the default, auto."""
    import pytest

    from city360.errors import ConfigError

    path = _osm_file(tmp_path / "x.osm", [("residential", _CROSS[0])])
    with pytest.raises(
        ConfigError,
        match=r"--osm-network 'wlk' is not known; expected one of auto, street, "
        r"street\+service, walk, all\. Did you mean 'walk'\?",
    ):
        load_matching_streets(path, LocalProjection(*ORIGIN), [], network="wlk")


# Nerima, unseen window SE, wander seed 40: two OSM nodes 7.1 m apart, each where three
# streets meet; a walker turns the corner at the north node A from the east arm to the south
# (through the south node B), and another walks the north arm down to A. A's three streets
# are filmed; B's west arm is not.
TWO_NODES = _streets(
    {0: (0.0, 0.0), 1: (-0.2, -7.1), 2: (33.2, 2.1), 3: (1.6, 48.0), 4: (-2.3, -59.5),
     5: (-90.2, -5.4)},
    [(0, 1), (0, 2), (0, 3), (1, 4), (1, 5)],
)  # fmt: skip


def test_two_close_osm_nodes_put_their_junction_at_the_node_filmed_on_more_arms(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(osm_match, "PLACE_BY_FILMED_ARMS", True)  # off by default
    corner = _walk([(33.0, 2.1), (0.0, 0.0), (-0.2, -7.1), (-2.2, -58.0)], "corner", noise_m=0.3)
    north = _walk([(1.6, 47.0), (0.1, 4.9)], "north", noise_m=0.3)
    found = osm_junction_candidates(TWO_NODES, [corner, north])
    # at A, not halfway to B (3.55 m off: the video that ends 4.9 m short of A was 8.3 m from
    # the junction, made a dead end of its own, and the junction lost its third arm)
    assert found.shape == (1, 2)
    assert np.allclose(found[0], [0.0, 0.0], atol=1e-9)
    # B's west arm filmed too: two arms each, the junction stays between them
    west = _walk([(-88.0, -5.4), (-0.2, -7.1)], "west", noise_m=0.3)
    found = osm_junction_candidates(TWO_NODES, [corner, north, west])
    assert found.shape == (1, 2)
    assert np.allclose(found[0], [-0.1, -3.55], atol=1e-9)
    # off (the default): between the two nodes of three streets, as before
    monkeypatch.setattr(osm_match, "PLACE_BY_FILMED_ARMS", False)
    found = osm_junction_candidates(TWO_NODES, [corner, north])
    assert np.allclose(found[0], [-0.1, -3.55], atol=1e-9)


def _stub_and_loop() -> tuple[OsmStreets, int]:
    """A junction 1 at the origin (streets west and north, a 12 m stub east to node 4) and a
    street from the stub's end that loops round north and comes back south along x = 5,
    crossing the stub with no node there (a square's outline over a station's steps:
    Kaisaniemi, round thirty-one); the loop street's index."""
    nodes = {1: (0.0, 0.0), 2: (-60.0, 0.0), 3: (0.0, 60.0), 4: (12.0, 0.0)}
    nodes |= {5: (5.0, -30.0), 6: (5.0, -70.0)}
    loop = [(12.0, 0.0), (12.0, 10.0), (5.0, 10.0), (5.0, -30.0)]
    graph = nx.MultiGraph()
    for n, (x, y) in nodes.items():
        graph.add_node(n, x_m=x, y_m=y)
    for u, v in [(2, 1), (1, 3), (1, 4), (5, 6)]:
        graph.add_edge(u, v, polyline_xy=[nodes[u], nodes[v]])
    graph.add_edge(4, 5, polyline_xy=loop)
    osm = streets_from_graph(graph, source="test")
    return osm, _edge(osm, 4, 5)


# into the stub, a U-turn that swings south across the loop street's leg, back and north
STUB_TURN = [(-40.0, 0.0), (0.0, 0.0), (10.0, 0.0), (6.0, -1.0), (6.0, -6.0), (3.0, -6.0)]
STUB_TURN += [(1.0, -1.0), (0.0, 0.0), (0.0, 40.0)]


def test_a_turn_onto_a_street_is_not_taken_where_it_passes_far_along_from_the_node() -> None:
    """The U-turn's poses lie on the loop street's leg and within 8 m of node 4, but 25-30 m
    along the loop street from it: no walker got there by turning at node 4."""
    osm, loop = _stub_and_loop()
    matched = viterbi_match(osm, [_walk(STUB_TURN, "u", noise_m=0.5)])[0]
    assert not (matched == loop).any()


def test_without_the_route_term_the_u_turn_jumps_onto_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(map_match, "TURN_ALONG", False)
    osm, loop = _stub_and_loop()
    matched = viterbi_match(osm, [_walk(STUB_TURN, "u", noise_m=0.5)])[0]
    assert (matched == loop).sum() >= 5


# junction A (0, 0) with streets north and east, junction B 10 m south with streets south and
# south-east, joined by the 10 m link; one walk cuts from the east street across the link's
# middle to the south-east one (Kaisaniemi (27.5, -44.1), round thirty-one)
LINKED = _streets(
    {1: (0, 0), 2: (0, -10), 3: (0, 60), 4: (60, 0), 5: (0, -70), 6: (50, -60)},
    [(1, 2), (1, 3), (1, 4), (2, 5), (2, 6)],
)
LINKED_WALKS = [
    _walk([(0, 50), (0, 0), (50, 0)], "n-e", noise_m=0.5),
    _walk([(50, 0), (5, -5), (45, -55)], "e-se", noise_m=0.5),
    _walk([(0, -10), (0, -60)], "s", noise_m=0.5),
]


def test_a_link_walked_end_to_end_on_one_pose_is_filmed_at_both_ends() -> None:
    """The matching gives the link one pose between the east and the south-east street: the
    walk went from A to B along it, so both are junctions of three filmed streets."""
    matches = viterbi_match(LINKED, LINKED_WALKS)
    assert (matches[1] == _edge(LINKED, 1, 2)).sum() < MIN_POSES_PER_STREET
    found = osm_junction_candidates(LINKED, LINKED_WALKS, matches=matches)
    assert sorted(map(tuple, found.round(1).tolist())) == [(0.0, -10.0), (0.0, 0.0)]


def test_a_link_walked_end_to_end_counts_by_its_poses_with_the_switch_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(osm_match, "THROUGH_FILMED", False)
    matches = viterbi_match(LINKED, LINKED_WALKS)
    assert len(osm_junction_candidates(LINKED, LINKED_WALKS, matches=matches)) == 0


# node A (0, 0): a path from the south and one north 3.7-4.3 m east of the walk; node B 5 m
# west of A (the 5 m link A-B): a path north from B to junction C (-6, 16), 1 m west of the
# walk. The walk comes up from the south and cuts from A onto B's path without walking the
# link (Kaisaniemi one-way 5 and 7, (-40.9, -20.6), round thirty-five)
BESIDE = _streets(
    {1: (0, -60), 2: (0, 0), 3: (-5, 0), 4: (-2, 60), 5: (-6, 16), 6: (-20, 35), 7: (-35, -20)},
    [(1, 2), (2, 3), (2, 4), (3, 5), (5, 6), (5, 7)],
)
BESIDE_WALK = _walk([(0, -40), (0, -4), (-4.8, 10), (-4.8, 15)], "up", noise_m=0.3)


def test_a_walk_onto_a_path_across_a_short_link_is_matched_to_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With :data:`map_match.PLACE_TURNS` (on by default), the move from A's path onto B's
    beside it (both heading north from the link's ends) costs as a turn, the link's length
    added to the route; the first pose on B's path is given to the link, so the walk turns at
    A and at B."""
    monkeypatch.setattr(map_match, "PLACE_TURNS", True)
    matched = viterbi_match(BESIDE, [BESIDE_WALK])[0]
    assert (matched[-10:] == _edge(BESIDE, 3, 5)).all()
    assert (matched == _edge(BESIDE, 2, 3)).sum() == 1


def test_no_short_cut_between_streets_that_leave_a_link_apart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """From the south street (heading south from A) onto B's path (north from B): the link
    does not join them; the walk reaches B's path through A's path beside it."""
    monkeypatch.setattr(map_match, "PLACE_TURNS", True)
    matched = viterbi_match(BESIDE, [BESIDE_WALK])[0]
    south, beside = _edge(BESIDE, 1, 2), _edge(BESIDE, 2, 4)
    first_off_south = int(np.flatnonzero(matched != south)[0])
    assert matched[first_off_south] == beside


def test_without_place_turns_the_walk_stays_on_the_path_beside(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(map_match, "PLACE_TURNS", False)
    matched = viterbi_match(BESIDE, [BESIDE_WALK])[0]
    assert not (matched == _edge(BESIDE, 3, 5)).any()


def test_place_turns_are_on_by_default() -> None:
    assert map_match.PLACE_TURNS


# BESIDE with two more lanes under 8 m at A (6 m east, 6.4 m south-east): A is a knot of short
# lanes, its link to B one lane of it (Kaisaniemi seed 8 wander, the theatre knot, round
# thirty-five, branch osmc35)
KNOT = _streets(
    {
        1: (0, -60),
        2: (0, 0),
        3: (-5, 0),
        4: (-2, 60),
        5: (-6, 16),
        6: (-20, 35),
        7: (-35, -20),
        8: (6, 0),
        9: (5, -4),
    },
    [(1, 2), (2, 3), (2, 4), (3, 5), (5, 6), (5, 7), (2, 8), (2, 9)],
)


def test_no_place_turn_across_a_lane_of_a_knot(monkeypatch: pytest.MonkeyPatch) -> None:
    """With three short streets at A (over :data:`map_match.PLACE_LINK_MAX_SHORT`), the link
    A-B is a lane of a knot: the walk is not moved across it onto B's path, as without
    :data:`map_match.PLACE_TURNS`."""
    monkeypatch.setattr(map_match, "PLACE_TURNS", True)
    matched = viterbi_match(KNOT, [BESIDE_WALK])[0]
    assert not (matched == _edge(KNOT, 3, 5)).any()


def test_without_the_knot_limit_the_walk_crosses_the_lane(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(map_match, "PLACE_TURNS", True)
    monkeypatch.setattr(map_match, "PLACE_LINK_MAX_SHORT", 0)
    matched = viterbi_match(KNOT, [BESIDE_WALK])[0]
    assert (matched[-10:] == _edge(KNOT, 3, 5)).all()


def test_the_knot_limit_is_two_short_streets() -> None:
    assert map_match.PLACE_LINK_MAX_SHORT == 2
