"""Dead ends placed by the map matching: ends at junctions, spurs, mid-street turn-backs
(issue 17, filming patterns with OSM)."""

from __future__ import annotations

import numpy as np
import pytest

from city360.errors import ConfigError
from city360.geo import LocalProjection
from city360.pose_graph import PoseGraph, build_from_tracks
from city360.pose_graph.build import BuildParams
from city360.pose_graph.dead_ends import DeadEndEvent
from city360.pose_graph.map_match import viterbi_match
from city360.pose_graph.osm_dead_ends import (
    dead_end_pass_radius,
    find_spurs,
    place_dead_ends,
    spurs_into_stubs,
)
from city360.pose_graph.osm_match import OsmStreets
from city360.pose_graph.segments import cut_tracks
from city360.pose_graph.tracks import Track
from tests.pose_graph.walks import ORIGIN, noisy_walk, osm_streets

PROJECTION = LocalProjection(*ORIGIN)

# a crossing at (100, 0) of a west-east and a south-north street, 100 m arms
CROSSING = osm_streets(
    {0: (0, 0), 1: (100, 0), 2: (200, 0), 3: (100, -100), 4: (100, 100)},
    [(0, 1), (1, 2), (3, 1), (1, 4)],
)


def _build(osm: OsmStreets, tracks: list[Track]) -> PoseGraph:
    return build_from_tracks(tracks, PROJECTION, osm=osm)


def _kinds(graph: PoseGraph) -> dict[str, list[tuple[float, float]]]:
    found: dict[str, list[tuple[float, float]]] = {}
    for _, data in graph.graph.nodes(data=True):
        found.setdefault(data["kind"], []).append((data["x_m"], data["y_m"]))
    return found


def _streets(graph: PoseGraph) -> int:
    return len({edge.street for edge in graph.edges()})


def _near(points: list[tuple[float, float]], xy: tuple[float, float], radius_m: float) -> int:
    return sum(1 for p in points if np.hypot(p[0] - xy[0], p[1] - xy[1]) <= radius_m)


def test_a_video_ending_just_past_a_junction_belongs_to_it_whatever_the_side_offset() -> None:
    # the smoothed end stands 6 m along the east arm and 6.5 m beside it: 8.8 m from the node
    through_we = noisy_walk([(10, 0), (190, 0)], "we", noise_m=0.3)
    through_sn = noisy_walk([(100, -90), (100, 90)], "sn", noise_m=0.3)
    ends = noisy_walk([(100, 90), (100, 2), (103, 4), (106, 6.5)], "ends", noise_m=0.0)
    graph = _build(CROSSING, [through_we, through_sn, ends])
    kinds = _kinds(graph)
    assert len(kinds["junction"]) == 1
    assert _near(kinds["junction"], (100, 0), 1.0) == 1
    assert _streets(graph) == 4  # the four arms; no stub to the end, no split east arm
    assert _near(kinds.get("dead_end", []), (106, 6.5), 8.0) == 0


@pytest.mark.parametrize("stub_m", [11.0, 50.0])
def test_a_spur_walked_7_m_into_a_street_and_back_is_the_junctions_third_arm(
    stub_m: float,
) -> None:
    # smoothing cuts the U-turn at the end of an 11 m stub to 7 m; a 50 m street filmed only
    # to a turn-back 7 m in is the same walk
    osm = osm_streets(
        {0: (0, 0), 1: (100, 0), 2: (200, 0), 3: (100, stub_m)}, [(0, 1), (1, 2), (1, 3)]
    )
    spur = noisy_walk([(10, 0), (100, 0), (100, 7), (100, 0), (190, 0)], "spur", noise_m=0.3)
    back = noisy_walk([(190, -1), (10, -1)], "back", noise_m=0.3)
    graph = _build(osm, [spur, back])
    kinds = _kinds(graph)
    assert len(kinds["junction"]) == 1
    assert _near(kinds["junction"], (100, 0), 2.0) == 1
    assert _near(kinds["dead_end"], (100, 7), 2.0) == 1
    assert _streets(graph) == 3


def test_a_mid_street_turn_back_is_shared_by_a_pass_5_m_beside_it() -> None:
    # one video turns back 60 m east of the crossing; another passes 5 m north of the apex
    turn_back = noisy_walk([(100, -90), (100, 0), (160, 0), (100, 0), (100, 90)], "tb", noise_m=0.3)
    passing = noisy_walk([(10, 4), (190, 5)], "pass", noise_m=0.3)
    graph = _build(CROSSING, [turn_back, passing])
    kinds = _kinds(graph)
    assert _near(kinds.get("dead_end", []), (160, 0), 8.0) == 0  # no street ends at the apex
    assert _near(kinds["link"], (160, 2), 6.0) == 1  # the east arm runs through it
    assert _near(kinds["junction"], (100, 0), 1.0) == 1
    assert len(kinds["junction"]) == 1


@pytest.mark.parametrize("turn_backs_m", [(60.0,), (59.0, 47.0)])
def test_mid_street_turn_backs_are_shared_by_a_pass_8_5_m_beside_them(
    turn_backs_m: tuple[float, ...],
) -> None:
    """Helsinki wander+stops seed 1: a walker paced a street, turning back 59 m and 47 m from
    its junction; a pass smoothed 8.5 m beside the first turn-back was not cut there (the cut
    radius is 8 m), so the passes made two streets between the turn-backs and a three-way
    node. Matched to the street, the pass walks past both turn-backs' places along it."""
    corners: list[tuple[float, float]] = [(100, -90), (100, 0)]
    for reach in turn_backs_m:
        corners += [(100 + reach, 0), (100, 0)]
    corners.append((100, 90))
    turn_back = noisy_walk(corners, "tb", noise_m=0.3)
    passing = noisy_walk([(10, 0), (110, 0), (125, 8.5), (190, 8.5)], "pass", noise_m=0.3)
    graph = _build(CROSSING, [turn_back, passing])
    kinds = _kinds(graph)
    assert len(kinds["junction"]) == 1
    assert _near(kinds["junction"], (100, 0), 1.0) == 1
    for reach in turn_backs_m:  # no street ends at an apex: the east arm runs through it
        assert _near(kinds.get("dead_end", []), (100 + reach, 0), 10.0) == 0
    assert _streets(graph) == 4 + len(turn_backs_m)  # four arms, the east one cut at each


def test_walking_a_street_to_the_junction_at_its_far_end_and_back_is_no_spur() -> None:
    # a ladder: streets y = 0 and y = 100 joined by x = 100; one video walks the rung down to
    # the lower junction, turns there and walks back up
    osm = osm_streets(
        {0: (0, 0), 1: (100, 0), 2: (200, 0), 3: (0, 100), 4: (100, 100), 5: (200, 100)},
        [(0, 1), (1, 2), (3, 4), (4, 5), (1, 4)],
    )
    rung = noisy_walk(
        [(10, 100), (100, 100), (100, 3), (100, 100), (190, 100)], "rung", noise_m=0.3
    )
    lower = noisy_walk([(10, 0), (190, 0)], "lower", noise_m=0.3)
    graph = _build(osm, [rung, lower])
    kinds = _kinds(graph)
    assert _near(kinds["junction"], (100, 0), 1.0) == 1
    assert _near(kinds["junction"], (100, 100), 1.0) == 1
    assert _near(kinds.get("dead_end", []), (100, 3), 8.0) == 0


def test_a_turn_back_inside_a_spur_stays_a_node_of_the_spur() -> None:
    # into a 90 m dead-end street, to its end, back 40 m, to the end again and out
    osm = osm_streets({0: (0, 0), 1: (100, 0), 2: (200, 0), 3: (100, 90)}, [(0, 1), (1, 2), (1, 3)])
    walk = noisy_walk(
        [(10, 0), (100, 0), (100, 90), (100, 50), (100, 90), (100, 0), (190, 0)], "in", noise_m=0.3
    )
    through = noisy_walk([(190, -1), (10, -1)], "through", noise_m=0.3)
    graph = _build(osm, [walk, through])
    kinds = _kinds(graph)
    assert all(edge.u != edge.v for edge in graph.edges())  # no loop from the end back to it
    assert _near(kinds["dead_end"], (100, 90), 3.0) == 1
    assert _near(kinds["link"], (100, 50), 3.0) == 1
    assert _streets(graph) == 4


def test_spurs_are_out_and_backs_not_streets_walked_through_or_ends() -> None:
    osm = osm_streets({0: (0, 0), 1: (100, 0), 2: (200, 0), 3: (100, 50)}, [(0, 1), (1, 2), (1, 3)])
    into = noisy_walk([(10, 0), (100, 0), (100, 20), (100, 0), (190, 0)], "into", noise_m=0.2)
    step = noisy_walk([(10, 0), (100, 0), (100, 3), (100, 0), (190, 0)], "step", noise_m=0.0)
    ends_up = noisy_walk([(10, 0), (100, 0), (100, 40)], "up", noise_m=0.2)
    tracks = [into, step, ends_up]
    spurs = find_spurs(osm, tracks, viterbi_match(osm, tracks))
    assert [s.track for s in spurs] == [0]
    (spur,) = spurs
    assert osm.node_ids[spur.node] == 1
    assert spur.reach_m == pytest.approx(20.0, abs=1.0)
    assert np.hypot(*(into.xy[spur.apex] - [100.0, 20.0])) < 1.5


def _event(track: Track, k: int, frame: int) -> DeadEndEvent:
    return DeadEndEvent(k, frame, *map(float, track.xy[frame]))


def test_u_turns_into_two_stubs_of_one_place_are_one_dead_end() -> None:
    # a street from the north ends at a T whose two arms are 6 m stubs (one place to a camera);
    # the U-turns into them stand 8.4 m apart
    osm = osm_streets({0: (0, 100), 1: (0, 0), 2: (-6, 0), 3: (6, 0)}, [(0, 1), (1, 2), (1, 3)])
    walk = noisy_walk(
        [(0, 90), (0, 0), (-4.2, 0), (0, 0), (0, 40), (0, 0), (4.2, 0), (0, 0), (0, 90)],
        "t",
        noise_m=0.0,
    )
    matches = viterbi_match(osm, [walk])
    west = int(np.argmin(np.hypot(*(walk.xy - [-4.2, 0.0]).T)))
    east = int(np.argmin(np.hypot(*(walk.xy - [4.2, 0.0]).T)))
    events = [[_event(walk, 0, west)], [_event(walk, 0, east)]]
    dead_xy, grouped = place_dead_ends(
        osm,
        [walk],
        matches,
        [],
        np.zeros((0, 2)),
        events,
        clearance_m=8.0,
        merge_m=8.0,
        cut_radius_m=8.0,
    )
    assert len(grouped) == 1
    assert np.allclose(dead_xy[0], [0.0, 0.0], atol=0.5)


def test_spur_ends_of_two_streets_leaving_one_junction_stay_apart() -> None:
    # two dead-end streets leave the junction at (100, 0) 40 degrees apart; spurs 7 m into each
    a = (100 + 7 * np.sin(np.radians(-20)), 7 * np.cos(np.radians(-20)))
    b = (100 + 7 * np.sin(np.radians(20)), 7 * np.cos(np.radians(20)))
    far_a = (100 + 30 * np.sin(np.radians(-20)), 30 * np.cos(np.radians(-20)))
    far_b = (100 + 30 * np.sin(np.radians(20)), 30 * np.cos(np.radians(20)))
    osm = osm_streets(
        {0: (0, 0), 1: (100, 0), 2: (200, 0), 3: far_a, 4: far_b}, [(0, 1), (1, 2), (1, 3), (1, 4)]
    )
    walk = noisy_walk([(10, 0), (100, 0), a, (100, 0), b, (100, 0), (190, 0)], "v", noise_m=0.0)
    matches = viterbi_match(osm, [walk])
    spurs = find_spurs(osm, [walk], matches)
    assert len(spurs) == 2
    dead_xy, grouped = place_dead_ends(
        osm,
        [walk],
        matches,
        spurs,
        np.array([[100.0, 0.0]]),
        [],
        clearance_m=8.0,
        merge_m=8.0,
        cut_radius_m=8.0,
    )
    assert len(grouped) == 2
    assert sorted(np.round(dead_xy[:, 0]).tolist()) == [98.0, 102.0]


def test_mapped_dead_ends_are_passed_within_the_cut_radius_others_within_4_m() -> None:
    walk = noisy_walk([(10, 0), (100, 0), (100, 60)], "w", noise_m=0.0)
    park = noisy_walk([(40, 60), (80, 60)], "park", noise_m=0.0)
    tracks = [walk, park]
    matches = viterbi_match(CROSSING, tracks)
    events = [[_event(walk, 0, len(walk) - 1)], [_event(park, 1, 0)]]
    radius = dead_end_pass_radius(matches, events, mapped_m=8.0, unmapped_m=4.0)
    assert radius.tolist() == [8.0, 4.0]
    with pytest.raises(ConfigError) as caught:
        cut_tracks(tracks, np.zeros((0, 2)), events, dead_end_xy=np.zeros((2, 2)),
                   dead_end_pass_m=radius[:1])  # fmt: skip
    assert (
        str(caught.value) == "`dead_end_pass_m` needs one radius per dead end (2), got shape (1,)"
    )


def _place(
    osm: OsmStreets, tracks: list[Track], events: list[list[DeadEndEvent]], junctions: list
) -> tuple[np.ndarray, list[list[DeadEndEvent]]]:
    matches = viterbi_match(osm, tracks)
    return place_dead_ends(
        osm,
        tracks,
        matches,
        [],
        np.asarray(junctions, dtype=np.float64).reshape(-1, 2),
        events,
        clearance_m=8.0,
        merge_m=8.0,
        cut_radius_m=8.0,
    )


def test_a_video_ending_where_the_next_starts_at_a_corner_is_one_dead_end() -> None:
    # one-way trails: one ends at a corner on the east street, the next starts there on the
    # north street; the corner's third (west) street nobody filmed, so no junction stands there
    osm = osm_streets({0: (0, 0), 1: (100, 0), 2: (0, 100), 3: (-100, 0)}, [(0, 1), (0, 2), (0, 3)])
    ends = noisy_walk([(90, 0), (1.5, 0)], "ends", noise_m=0.0)
    starts = noisy_walk([(0, 1.5), (0, 90)], "starts", noise_m=0.0)
    events = [[_event(ends, 0, len(ends) - 1)], [_event(starts, 1, 0)]]
    _, grouped = _place(osm, [ends, starts], events, [])
    assert len(grouped) == 1


def test_ends_of_two_parallel_streets_cut_7_5_m_apart_stay_two() -> None:
    osm = osm_streets({0: (0, 0), 1: (100, 0), 2: (0, 7.5), 3: (100, 7.5)}, [(0, 1), (2, 3)])
    low = noisy_walk([(10, 0), (99, 0)], "low", noise_m=0.0)
    high = noisy_walk([(10, 7.5), (99, 7.5)], "high", noise_m=0.0)
    events = [[_event(low, 0, len(low) - 1)], [_event(high, 1, len(high) - 1)]]
    _, grouped = _place(osm, [low, high], events, [])
    assert len(grouped) == 2


def test_an_end_6_m_along_from_a_junction_it_never_comes_near_stays_a_dead_end() -> None:
    # smoothed 12 m to the side of the east arm: no cut at the junction stands for this end
    aside = noisy_walk([(190, 12), (106, 12)], "aside", noise_m=0.0)
    past = noisy_walk([(100, 90), (100, 2), (103, 4), (106, 6.5)], "past", noise_m=0.0)
    tracks = [aside, past]
    events = [[_event(aside, 0, len(aside) - 1)], [_event(past, 1, len(past) - 1)]]
    dead_xy, grouped = _place(CROSSING, tracks, events, [(100.0, 0.0)])
    assert [e.track for group in grouped for e in group] == [0]
    assert np.allclose(dead_xy[0], [106.0, 12.0])


def _edge(osm: OsmStreets, a: int, b: int) -> int:
    ids = osm.node_ids[osm.edge_nodes]
    return int(np.flatnonzero(((ids == [a, b]) | (ids == [b, a])).all(axis=1))[0])


def test_a_short_u_turn_into_a_mapped_stub_is_a_spur_not_into_a_street_that_goes_on() -> None:
    # smoothing left the tip of an 8.4 m stub 4.4-4.9 m from its node (Helsinki wander rows);
    # 4.5 m into a 25 m street that goes on is a walker turning back after a few metres
    osm = osm_streets(
        {0: (0, 0), 1: (100, 0), 2: (200, 0), 3: (100, 8.4), 4: (100, -25), 5: (130, -25)},
        [(0, 1), (1, 2), (1, 3), (1, 4), (4, 5)],
    )
    stub = noisy_walk([(10, 0), (100, 0), (100, 4.5), (100, 0), (190, 0)], "stub", noise_m=0.0)
    on = noisy_walk([(10, 0), (100, 0), (100, -4.5), (100, 0), (190, 0)], "on", noise_m=0.0)
    spurs = find_spurs(osm, [stub, on], viterbi_match(osm, [stub, on]))
    assert [(s.track, s.edge) for s in spurs] == [(0, _edge(osm, 1, 3))]
    assert spurs[0].reach_m == pytest.approx(4.5, abs=0.6)


def test_a_video_starting_at_the_tip_of_a_6_m_stub_and_one_ending_at_its_root_are_one_end() -> None:
    # one-way trails in Nerima (unseen window, seed 7): one trail ends where a 6.3 m stub leaves
    # a bend, the next starts at the stub's tip, 9.7 m from that end as smoothed; to a camera
    # (and the scorer) the stub is part of the bend, so the street goes on through it
    # (the bend's street crosses a west-east street at (0, -100))
    osm = osm_streets(
        {0: (0, 100), 1: (0, 0), 2: (6.3, 0), 3: (0, -100), 4: (-100, -100), 5: (100, -100)},
        [(0, 1), (1, 2), (1, 3), (4, 3), (3, 5)],
    )
    ends = noisy_walk([(-2.5, 90), (-2.5, -1.0)], "ends", noise_m=0.0)
    starts = noisy_walk([(7.0, -2.0), (1.0, -2.0), (1.0, -100), (90, -100)], "starts", noise_m=0.0)
    across = noisy_walk([(-90, -100), (90, -100)], "across", noise_m=0.0)
    events = [[_event(ends, 0, len(ends) - 1)], [_event(starts, 1, 0)]]
    _, grouped = _place(osm, [ends, starts], events, [])
    assert len(grouped) == 1
    kinds = _kinds(_build(osm, [ends, starts, across]))
    assert _near(kinds["junction"], (0, -100), 2.0) == 1
    assert _near(kinds["junction"], (0, 0), 20.0) == 0
    # one node joins the two videos at the bend (before: a dead end ending each)
    assert _near(kinds.get("link", []), (2, -1), 8.0) == 1
    assert _near(kinds["dead_end"], (2, -1), 8.0) == 0


def test_a_track_overshooting_a_corner_into_a_6_m_stub_does_not_end_there() -> None:
    # camera GPS at a stop on a corner (Nerima, unseen window, wander+stops seed 5): the smoothed
    # track runs 6 m up a 5.8 m stub past the corner and back, then turns the corner; a walk
    # that turns back 8.5 m along the corner's west street shares the street with it
    osm = osm_streets(
        {0: (-100, 0), 1: (0, 0), 2: (0, 5.8), 3: (0, -100)}, [(0, 1), (1, 2), (1, 3)]
    )
    corner = noisy_walk([(0, -90), (0, 0), (0, 6.0), (0, 0), (-90, 0)], "corner", noise_m=0.0)
    turn = noisy_walk([(0, -90), (0, 0), (-8.5, 0), (0, 0), (0, -90)], "turn", noise_m=0.0)
    overshoot = int(np.argmin(np.hypot(*(corner.xy - [0.0, 6.0]).T)))
    events = [[_event(corner, 0, overshoot)]]
    _, grouped = _place(osm, [corner], events, [])
    assert grouped == []
    graph = _build(osm, [corner, turn])
    assert "junction" not in _kinds(graph)


def test_a_video_ending_at_the_tip_of_a_mapped_9_m_stub_ends_the_stub() -> None:
    # Helsinki, unseen window (Kasarmikatu, wander seed 9): a video ends at the tip of a 9.3 m
    # dead-end stub; smoothed, the end lies 7.5 m along it, inside the junction's clearance, and
    # was given to the junction, which lost its third arm. Nearer the stub's tip than its root
    # (and STUB_SPUR_MIN_M along) it ends the stub; an end 3 m along stays the junction's
    osm = osm_streets(
        {0: (0, 0), 1: (100, 0), 2: (200, 0), 3: (100, -9.3)}, [(0, 1), (1, 2), (1, 3)]
    )
    through = noisy_walk([(10, 0), (190, 0)], "through", noise_m=0.0)
    tip = noisy_walk([(190, 1), (100, 1), (100, -7.5)], "tip", noise_m=0.0)
    root = noisy_walk([(10, 1), (100, 1), (100, -3)], "root", noise_m=0.0)
    events = [[_event(tip, 1, len(tip) - 1)], [_event(root, 2, len(root) - 1)]]
    dead_xy, grouped = _place(osm, [through, tip, root], events, [(100.0, 0.0)])
    assert [e.track for group in grouped for e in group] == [1]
    assert np.allclose(dead_xy[0], [100.0, -7.5])
    kinds = _kinds(_build(osm, [through, tip]))
    assert _near(kinds["junction"], (100, 0), 1.0) == 1
    assert _near(kinds["dead_end"], (100, -8), 2.0) == 1


def test_a_video_starting_with_a_step_into_a_mapped_stub_and_back_walks_a_spur() -> None:
    # the same stub (coverage seed 5): the next video starts at the junction, walks 7 m into
    # the 9.3 m stub and back, then on east; at a video's start only a stub says it came back
    osm = osm_streets(
        {0: (0, 0), 1: (100, 0), 2: (200, 0), 3: (100, -9.3), 4: (100, -60)},
        [(0, 1), (1, 2), (1, 3), (3, 4)],
    )
    stub = osm_streets(
        {0: (0, 0), 1: (100, 0), 2: (200, 0), 3: (100, -9.3)}, [(0, 1), (1, 2), (1, 3)]
    )
    walk = noisy_walk([(100, 0.5), (100, -7), (100, 0.5), (190, 0.5)], "start", noise_m=0.0)
    assert [s.reach_m > 6 for s in find_spurs(stub, [walk], viterbi_match(stub, [walk]))] == [True]
    assert find_spurs(osm, [walk], viterbi_match(osm, [walk])) == []  # the street goes on


def test_a_walk_into_a_mapped_stub_and_back_is_a_spur_however_the_legs_are_matched() -> None:
    # Kamppi, unseen window (coverage seeds 5 and 6): a walker goes 7.4 m into an 8.4 m dead-end
    # stub and back. The matching gave one leg to the street the walk came along or left by
    # (a pose beyond a street's end is clamped onto that end), so the run matched to the stub
    # entered at its root and left it 5.6 m along, or entered 4.1 m along and left at the root;
    # taken for a walk through, the stub lost its spur and the junction its third arm. Nobody
    # leaves a stub by its tip: matched to streets at the root either side, the run went in and
    # came back out there. Into a street that goes on, the same poses stay no spur.
    nodes = {0: (0, 0), 1: (100, 0), 2: (200, 0), 3: (100, 8.4)}
    stub = osm_streets(nodes, [(0, 1), (1, 2), (1, 3)])
    goes_on = osm_streets({**nodes, 4: (100, 60)}, [(0, 1), (1, 2), (1, 3), (3, 4)])
    back_beside = noisy_walk(
        [(190, 0), (100, 0), (100, 5.6), (95, 2.5), (90, 0), (10, 0)], "back", noise_m=0.0
    )
    in_beside = noisy_walk(
        [(190, 0), (105, 0), (101, 4.5), (100, 5.0), (100, 0), (10, 0)], "in", noise_m=0.0
    )
    tracks = [back_beside, in_beside]
    spurs = find_spurs(stub, tracks, viterbi_match(stub, tracks))
    assert [(s.track, s.edge, s.node) for s in spurs] == [
        (0, _edge(stub, 1, 3), 1),
        (1, _edge(stub, 1, 3), 1),
    ]
    assert all(s.reach_m >= 4.4 for s in spurs)
    assert find_spurs(goes_on, tracks, viterbi_match(goes_on, tracks)) == []
    through = noisy_walk([(10, 0), (190, 0)], "through", noise_m=0.0)
    kinds = _kinds(_build(stub, [through, back_beside]))
    assert _near(kinds["junction"], (100, 0), 1.0) == 1
    assert _near(kinds["dead_end"], (100, 8.4), 4.5) == 1


def test_a_video_starting_beside_a_junction_on_a_street_it_cannot_cut_keeps_its_start() -> None:
    # Kamppi, unseen window (one-way seed 7): a video ends 10 m up a link from a junction and
    # the next starts 6 m from the junction, on the street beyond the link (which runs on
    # east beside the junction's street); within 8 m of the junction, its start was given to
    # it, but the junction cannot cut a frame of a street it does not end, so the video's
    # first 207 m had no node to start from and were lost (a street of the truth missing)
    osm = osm_streets(
        {
            0: (0, 0),
            1: (-100, 0),
            2: (100, 0),
            3: (0, -100),
            4: (-6, 8.4),
            5: (100, 14),
            6: (-10, 100),
        },
        [(1, 0), (0, 2), (3, 0), (0, 4), (4, 5), (4, 6)],
    )
    through = noisy_walk([(-90, 0), (90, 0)], "through", noise_m=0.0)
    up = noisy_walk([(0, -90), (0, 0), (-90, 0)], "up", noise_m=0.0)
    ends = noisy_walk([(90, 0), (0, 0), (-5.5, 7.7)], "ends", noise_m=0.0)
    north = noisy_walk([(-3.5, 5.5), (-1, 11), (95, 14)], "north", noise_m=0.0)
    graph = _build(osm, [through, up, ends, north])
    assert [e.first_frame for e in graph.edges() if e.trajectory == "north" and not e.reverse] == [
        0
    ]
    kinds = _kinds(graph)
    assert _near(kinds["junction"], (0, 0), 1.0) == 1
    assert _near(kinds["link"], (-5, 7), 3.0) == 1  # where one video ends and the next starts


def test_a_turn_back_at_a_street_s_end_node_matched_to_the_streets_beyond_is_a_spur() -> None:
    # Helsinki, Kaivokatu (wander seeds 0, 2, 8 with OSM): a walk comes up to a bend at (0, 0),
    # walks the 9.2 m street to a node where two streets nobody films leave, turns back and
    # goes on round the bend. The matching gave the poses of the U-turn to a street beyond
    # the node, so the way in and the way back were each read as the street walked end to
    # end: no spur, no dead end, and the bend lost its third arm
    osm = osm_streets(
        {
            0: (19.8, -86.2),
            1: (0.0, 0.0),
            2: (-125.6, -26.9),
            3: (7.3, 5.7),
            4: (1.5, 113.5),
            5: (159.3, 161.9),
        },
        [(0, 1), (1, 2), (1, 3), (3, 4), (3, 5)],
    )
    walk = noisy_walk(
        [(19.4, -86.2), (0.0, -0.7), (-0.1, 1.3), (6.2, 5.5), (6.2, 4.7), (-0.5, 0.3), (-115, -27)],
        "walk",
        noise_m=0.0,
    )
    through = noisy_walk([(18.4, -85.2), (0.0, -0.7), (-115, -27)], "through", noise_m=0.0)
    matches = viterbi_match(osm, [walk, through])
    street = _edge(osm, 1, 3)
    beyond = {_edge(osm, 3, 4), _edge(osm, 3, 5)}
    assert beyond & set(matches[0].tolist())  # the U-turn was matched beyond the node
    spurs = find_spurs(osm, [walk, through], matches)
    assert [(s.track, s.edge, osm.node_ids[s.node]) for s in spurs] == [(0, street, 1)]
    kinds = _kinds(_build(osm, [walk, through]))
    assert _near(kinds["junction"], (0.0, 0.0), 1.0) == 1
    assert _near(kinds["dead_end"], (7.3, 5.7), 2.5) == 1


def test_a_u_turn_short_of_a_stub_s_tip_matched_to_a_street_from_its_root_stays_rooted() -> None:
    # Helsinki, wander seed 0 with OSM: a walker goes 5 m into a 9.7 m stub and back; the two
    # U-turn poses were matched to a second stub leaving the same root. That is no turn-back
    # at the root (the walk leaves the root before it and comes back after): the spur keeps
    # its root (a first version of the turn-back rule lost it, and the row's recall)
    osm = osm_streets(
        {0: (79.9, -114.3), 1: (0.0, 0.0), 2: (128.9, 90.2), 3: (-8.3, -4.9), 4: (-9.1, 12.8)},
        [(0, 1), (1, 2), (1, 3), (1, 4)],
    )
    walk = noisy_walk(
        [(75, -107), (2.7, -1.0), (-0.1, 1.7), (-5.1, -1.0), (-5.6, -2.7), (0.7, 0.3), (120, 84)],
        "walk",
        noise_m=0.0,
    )
    (matched,) = viterbi_match(osm, [walk])
    turn = [int(np.argmin(np.hypot(*(walk.xy - xy).T))) for xy in [(-5.1, -1.0), (-5.6, -2.7)]]
    matched[turn] = _edge(osm, 1, 4)  # as the matching labelled the real walk's U-turn
    spurs = find_spurs(osm, [walk], [matched])
    assert [(s.edge, osm.node_ids[s.node]) for s in spurs] == [(_edge(osm, 1, 3), 1)]


def test_a_walk_3_5_m_into_a_mapped_stub_and_back_between_streets_at_its_root_is_a_spur() -> None:
    # Kamppi, unseen window, coverage and wander seed 40 (phone GPS): a walker comes along one
    # arm of the junction (0, 0), goes to the tip of the 8.4 m dead-end stub and back, and
    # leaves by the other arm. Smoothing cut the U-turn to 3.5 m into the stub, under the
    # stub floor of 4 m: no spur, and the junction lost its third arm (an extra street
    # through it, R 0.909). Under 4 m the run's own poses must go in and come back out: the
    # same walk with its way back matched to the arm beside the stub stays no spur.
    osm = osm_streets(
        {0: (0.0, 0.0), 1: (27.3, 17.9), 2: (-53.4, -35.9), 3: (-4.4, 7.2)},
        [(1, 0), (2, 0), (3, 0)],
    )
    stub = _edge(osm, 0, 3)
    into = noisy_walk(
        [(24.0, 16.0), (0.7, -1.0), (-0.6, 0.0), (-1.9, 3.0), (-0.4, -0.7), (-50.0, -33.6)],
        "into",
        noise_m=0.0,
    )
    matched = viterbi_match(osm, [into])[0]
    spurs = find_spurs(osm, [into], [matched])
    assert [(s.track, s.edge, s.node) for s in spurs] == [(0, stub, 0)]
    assert spurs[0].reach_m == pytest.approx(3.5, abs=0.5)
    back_beside = matched.copy()
    back_beside[spurs[0].apex + 1 : spurs[0].last + 1] = _edge(osm, 0, 2)
    assert find_spurs(osm, [into], [back_beside]) == []
    through = noisy_walk([(24.0, 16.0), (-50.0, -33.6)], "through", noise_m=0.0)
    kinds = _kinds(_build(osm, [through, into]))
    assert _near(kinds["junction"], (0.0, 0.0), 1.0) == 1
    assert _near(kinds.get("dead_end", []), (-4.4, 7.2), 5.5) == 1


def _spur_from_a_node_of_the_place(*, place_nodes: bool) -> np.ndarray:
    """A crossing at (100, 0); east of it OSM draws a knot: 6 m to a node of three (a lane
    goes north from it), 6 m on to a node 12 m from the crossing, then a 60 m path east. A
    walk comes up from the south, turns east through the knot, turns back 25 m along the
    path and leaves west. The pose-only rule found no dead end there (none given). Returns
    the dead ends placed."""
    import city360.pose_graph.osm_dead_ends as dead_ends

    osm = osm_streets(
        {0: (0, 0), 1: (100, 0), 2: (100, -100), 3: (100, 100), 4: (106, 0), 5: (112, 0)}
        | {6: (172, 0), 7: (106, 40)},
        [(0, 1), (2, 1), (1, 3), (1, 4), (4, 5), (5, 6), (4, 7)],
    )
    walk = noisy_walk([(100, -90), (100, 0), (137, 0), (100, 0), (10, 0)], "knot", noise_m=0.0)
    matches = viterbi_match(osm, [walk])
    spurs = find_spurs(osm, [walk], matches)
    assert [(int(osm.node_ids[s.node]), round(s.reach_m)) for s in spurs] == [(5, 25)]
    previous = dead_ends.PLACE_NODES
    dead_ends.PLACE_NODES = place_nodes
    try:
        dead_xy, _ = place_dead_ends(
            osm,
            [walk],
            matches,
            spurs,
            np.array([[100.0, 0.0]]),
            [],
            clearance_m=8.0,
            merge_m=8.0,
            cut_radius_m=8.0,
        )
    finally:
        dead_ends.PLACE_NODES = previous
    return dead_xy


def test_a_spur_from_a_node_of_the_junctions_place_past_its_reach_gets_its_dead_end() -> None:
    """The path's end node is 12 m from the crossing, past ``merge_m``, but in the place of
    the crossing's node of three 6 m off, whose streets the cut filter's gate lets the
    junction cut (``PLACE_GATE``): the spur's apex is a dead end, else the walk out and back
    is cut at the junction twice, a street from it to itself (``PLACE_NODES``)."""
    dead_xy = _spur_from_a_node_of_the_place(place_nodes=True)
    assert len(dead_xy) == 1
    assert np.allclose(dead_xy[0], [137.0, 0.0], atol=1.5)


def test_a_spur_from_past_the_junctions_reach_gets_no_dead_end_with_the_switch_off() -> None:
    assert len(_spur_from_a_node_of_the_place(place_nodes=False)) == 0


def _stub_beside_path(angle_deg: float) -> OsmStreets:
    """A west-east path through (100, 0) and an 11.6 m stub leaving that node south-east,
    ``angle_deg`` off the path (Kaisaniemi's 173248856 stub: 20-25 degrees, 4 m beside)."""
    angle = np.radians(angle_deg)
    tip = (100 + 11.6 * np.cos(angle), -11.6 * np.sin(angle))
    return osm_streets({0: (0, 0), 1: (100, 0), 2: (200, 0), 3: tip}, [(0, 1), (1, 2), (1, 3)])


def _into_the_stub() -> list[Track]:
    # the walker went to the stub's tip; GPS pulled the smoothed out-and-back toward the
    # path, 6.5 m out at 10 degrees, 1.5 m beside the path on the way back
    apex = (100 + 6.5 * np.cos(np.radians(10)), -6.5 * np.sin(np.radians(10)))
    into = noisy_walk(
        [(10, 0), (100, 0), apex, (103, -1.5), (100, 0), (10, 0)], "into", noise_m=0.2
    )
    on = noisy_walk([(10, -1), (190, -1)], "on", noise_m=0.2)
    return [into, on]


def test_a_short_out_and_back_matched_to_the_path_beside_a_mapped_stub_walks_the_stub() -> None:
    osm = _stub_beside_path(25.0)
    tracks = _into_the_stub()
    on = BuildParams(spur_into_stub_m=3.5)
    graph = build_from_tracks(tracks, PROJECTION, osm=osm, params=on)
    kinds = _kinds(graph)
    assert _near(kinds["junction"], (100, 0), 1.0) == 1
    assert _near(kinds["dead_end"], (106.4, -1.1), 2.0) == 1
    assert _streets(graph) == 3  # west, east and the stub
    # as matched, the walk turned back 6.5 m along the path: no third arm, no junction
    off = build_from_tracks(tracks, PROJECTION, osm=osm, params=BuildParams(spur_into_stub_m=None))
    assert "junction" not in _kinds(off)
    assert _streets(off) == 2


def test_only_a_spur_near_the_stub_along_a_street_that_goes_on_is_read_as_the_stubs() -> None:
    tracks = _into_the_stub()
    for angle_deg, stub_edge in ((25.0, True), (60.0, False)):  # 60: 5.6 m off the walk
        osm = _stub_beside_path(angle_deg)
        matches = viterbi_match(osm, tracks)
        spurs = find_spurs(osm, tracks, matches)
        assert [(s.track, s.edge) for s in spurs] == [(0, _edge(osm, 1, 2))]
        moved, read = spurs_into_stubs(osm, tracks, matches, spurs, near_m=3.5)
        edge = _edge(osm, 1, 3) if stub_edge else _edge(osm, 1, 2)
        assert [(s.track, s.edge, s.node) for s in read] == [(0, edge, 1)]
        spur = read[0]
        assert (moved[0][spur.first : spur.last + 1] == edge).all()
        assert (moved[1] == matches[1]).all()


def test_a_spur_beside_a_stub_is_read_as_the_stubs_by_default() -> None:
    assert BuildParams().spur_into_stub_m == 3.5
