"""Junctions whose passes keep to two streets side by side are none (builds without OSM)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from city360.geo import LocalProjection
from city360.pose_graph import build as build_module
from city360.pose_graph import build_from_tracks
from city360.pose_graph.apart import ApartParams, apart_junctions
from city360.pose_graph.build import BuildParams
from city360.pose_graph.dead_ends import find_dead_ends
from city360.pose_graph.segments import Segment, Street, cut_tracks, group_streets
from city360.pose_graph.tracks import Track
from tests.pose_graph.walks import polyline_track

_NORTH_EAST = np.array([np.cos(np.radians(40.0)), np.sin(np.radians(40.0))])
_RIGHT = np.array([_NORTH_EAST[1], -_NORTH_EAST[0]])  # of north-east


def _side_by_side(gap_m: float) -> list[Track]:
    """Street P comes from the north-west to a bend at the origin and runs north-east 110 m;
    street Q comes from the south to a bend ``gap_m`` to the right of P's and runs north-east
    beside P, ``gap_m`` away (0: Q joins P at the origin, a Y-junction). Each walked both
    ways, nobody turning from one to the other."""
    p = [(-11.0, 31.0), (0.0, 0.0), (110.0 * _NORTH_EAST[0], 110.0 * _NORTH_EAST[1])]
    bend = gap_m * _RIGHT
    far = bend + 110.0 * _NORTH_EAST
    q = [(bend[0] + 6.0, bend[1] - 29.0), (bend[0], bend[1]), (far[0], far[1])]
    return [
        polyline_track(p, "p out"),
        polyline_track(p[::-1], "p back"),
        polyline_track(q, "q out"),
        polyline_track(q[::-1], "q back"),
    ]


def _junctions(tracks: list[Track], params: BuildParams | None = None) -> np.ndarray:
    graph = build_from_tracks(tracks, LocalProjection(35.74, 139.67), params=params).graph
    return np.array(
        [[d["x_m"], d["y_m"]] for _, d in graph.nodes(data=True) if d["kind"] == "junction"]
    ).reshape(-1, 2)


def _cut(tracks: list[Track], junctions: np.ndarray) -> tuple[list[Segment], list[Street]]:
    dead_xy, events = find_dead_ends(tracks, junctions)
    segments = cut_tracks(tracks, junctions, events, dead_end_xy=dead_xy)
    streets, _ = group_streets(tracks, segments)
    return segments, streets


def test_two_streets_side_by_side_that_bend_apart_make_no_junction() -> None:
    # the old town's two lanes 6.5-8 m apart (tokyo-oldtown, (-124, 2)): grouped as one street,
    # and the bends' crossing votes made a three-way junction there
    assert len(_junctions(_side_by_side(7.0))) == 0


def test_with_the_rule_off_the_side_by_side_streets_make_a_junction() -> None:
    junctions = _junctions(_side_by_side(7.0), BuildParams(apart_params=None))
    assert len(junctions) == 1
    assert np.hypot(*junctions[0]) < 8.0


def test_a_street_that_joins_another_keeps_its_junction() -> None:
    junctions = _junctions(_side_by_side(0.0))
    assert len(junctions) == 1
    assert np.hypot(*junctions[0]) < 3.0


def test_a_crossing_walked_straight_through_both_ways_stays_a_junction() -> None:
    # two groups of passes, each through two arms, as at streets side by side, but leaving
    # by four ways
    tracks = [
        polyline_track([(-60.0, 0.0), (60.0, 0.0)], "east"),
        polyline_track([(60.0, 0.0), (-60.0, 0.0)], "west"),
        polyline_track([(0.0, -60.0), (0.0, 60.0)], "north"),
        polyline_track([(0.0, 60.0), (0.0, -60.0)], "south"),
    ]
    junctions = np.array([[0.0, 0.0]])
    assert not apart_junctions(tracks, junctions, *_cut(tracks, junctions))[0]
    assert len(_junctions(tracks)) == 1


@pytest.mark.parametrize("group_ways", [False, True])
def test_side_by_side_streets_with_a_walk_ending_at_their_bends_keep_the_junction(
    group_ways: bool,
) -> None:
    # a track that ends there may have come up a third street the passes alone cannot see
    # (with group_ways too: its street leaves by Q's own way, a second street there)
    params = ApartParams(group_ways=group_ways)
    tracks = _side_by_side(7.0)
    tracks.append(polyline_track([(3.0, -30.0), (3.0, -2.0)], "ends at the bends"))
    junctions = np.array([[3.5, -2.0]])
    assert not apart_junctions(tracks, junctions, *_cut(tracks, junctions), params)[0]
    assert apart_junctions(tracks[:-1], junctions, *_cut(tracks[:-1], junctions), params)[0]


def _a_walk_grouped_with_the_other_street() -> tuple[list[Track], list[Segment], list[Street]]:
    """The side-by-side streets 7 m apart and one more walk that starts at the bends and goes
    up P, cut at the bends. The grouping fuses the north-east arms into one street; here they
    are two, P's and Q's, with the walk's arm (on P's line) in Q's, as the grouping does when
    the walk leaves P farther on for the node Q's street ends at (tokyo-oldtown coverage seed
    0 at (-123.8, 2.4))."""
    tracks = _side_by_side(7.0)
    p_far = 110.0 * _NORTH_EAST
    tracks.append(polyline_track([(0.0, 0.0), (p_far[0], p_far[1])], "p start"))
    segments, grouped = _cut(tracks, np.array([[2.7, -2.3]]))
    streets: list[Street] = []
    for street in grouped:
        names = {tracks[segments[k].track].id for k in (*street.forward, *street.backward)}
        if "p start" not in names:
            streets.append(replace(street, id=len(streets)))
            continue
        for on_q in (False, True):

            def mine(k: int, on_q: bool = on_q) -> bool:
                return (tracks[segments[k].track].id in ("q out", "q back", "p start")) == on_q

            forward = tuple(k for k in street.forward if mine(k))
            backward = tuple(k for k in street.backward if mine(k))
            streets.append(replace(street, id=len(streets), forward=forward, backward=backward))
    return tracks, segments, streets


def test_a_group_through_two_ways_by_three_streets_is_side_by_side() -> None:
    # a group of passes holding three streets (P's and the walk's north-east arms are two)
    # whose arms leave by two ways: the shared stretch and P's own bend
    tracks, segments, streets = _a_walk_grouped_with_the_other_street()
    assert apart_junctions(tracks, np.array([[2.7, -2.3]]), segments, streets)[0]


def test_with_group_ways_off_a_group_of_three_streets_keeps_the_junction() -> None:
    tracks, segments, streets = _a_walk_grouped_with_the_other_street()
    off = ApartParams(group_ways=False)
    assert not apart_junctions(tracks, np.array([[2.7, -2.3]]), segments, streets, off)[0]


def test_group_ways_is_on_by_default() -> None:
    assert ApartParams().group_ways


def _a_pass_crossing_between_the_lines() -> list[Track]:
    """Two straight streets 7 m apart running north-east (P through the origin), each walked
    both ways, and a walk that comes up P and crosses to Q at the origin (GPS: the tokyo-oldtown
    pair's mid-street junctions)."""
    q_shift = 7.0 * _RIGHT
    p = [
        (-80.0 * _NORTH_EAST[0], -80.0 * _NORTH_EAST[1]),
        (80.0 * _NORTH_EAST[0], 80.0 * _NORTH_EAST[1]),
    ]
    q = [(x + q_shift[0], y + q_shift[1]) for x, y in p]
    cross = [
        p[0],
        (0.0, 0.0),
        (q_shift[0] + 8.0 * _NORTH_EAST[0], q_shift[1] + 8.0 * _NORTH_EAST[1]),
        q[1],
    ]
    return [
        polyline_track(p, "p out"),
        polyline_track(p[::-1], "p back"),
        polyline_track(q, "q out"),
        polyline_track(q[::-1], "q back"),
        polyline_track(cross, "crosses"),
    ]


def test_a_pass_crossing_between_streets_side_by_side_is_no_junction() -> None:
    tracks = _a_pass_crossing_between_the_lines()
    junctions = np.array([[0.0, 0.0]])
    on = ApartParams(crossed_lines=True)
    assert apart_junctions(tracks, junctions, *_cut(tracks, junctions), on)[0]


def test_with_crossed_lines_off_a_pass_crossing_between_the_lines_keeps_the_junction() -> None:
    tracks = _a_pass_crossing_between_the_lines()
    junctions = np.array([[0.0, 0.0]])
    off = ApartParams(crossed_lines=False)
    assert not apart_junctions(tracks, junctions, *_cut(tracks, junctions), off)[0]


def test_crossed_lines_and_its_guard_are_on_by_default() -> None:
    assert ApartParams().crossed_lines is True
    assert ApartParams().crossed_both_ways is True
    tracks = _a_pass_crossing_between_the_lines()
    junctions = np.array([[0.0, 0.0]])
    assert apart_junctions(tracks, junctions, *_cut(tracks, junctions))[0]


def _a_y_fork() -> list[Track]:
    """The crossing's walks without street Q: P walked both ways and a walk that comes up P and
    leaves it at the origin north-east 7 m to its right. That is a Y fork at the origin: two
    branches side by side north-east, one street south-west."""
    p_out, p_back, _, _, crosses = _a_pass_crossing_between_the_lines()
    return [p_out, p_back, crosses]


def test_a_y_fork_whose_branches_meet_at_it_keeps_its_junction() -> None:
    # the fresh-clone CI of round twenty-four: crossed_lines unguarded dropped test_two_lines'
    # Y fork (the branches leave one way 4-8 m apart, every pass goes straight through)
    tracks = _a_y_fork()
    junctions = np.array([[0.0, 0.0]])
    on = ApartParams(crossed_lines=True)
    assert not apart_junctions(tracks, junctions, *_cut(tracks, junctions), on)[0]


def test_without_the_guard_crossed_lines_drops_the_y_fork() -> None:
    tracks = _a_y_fork()
    junctions = np.array([[0.0, 0.0]])
    unguarded = ApartParams(crossed_lines=True, crossed_both_ways=False)
    assert apart_junctions(tracks, junctions, *_cut(tracks, junctions), unguarded)[0]


def test_a_line_walked_beside_the_forks_stem_makes_it_a_crossing() -> None:
    # Q's south-west half walked by a video that ends 10 m short of the crossing, so it is no
    # pass through the junction: the pair runs on past the crossing on both sides
    q_shift = 7.0 * _RIGHT
    start, end = q_shift - 80.0 * _NORTH_EAST, q_shift - 10.0 * _NORTH_EAST
    tracks = [*_a_y_fork(), polyline_track([tuple(start), tuple(end)], "q south-west half")]
    junctions = np.array([[0.0, 0.0]])
    on = ApartParams(crossed_lines=True)
    assert apart_junctions(tracks, junctions, *_cut(tracks, junctions), on)[0]


def _steps_after_apart_see(
    monkeypatch: pytest.MonkeyPatch, params: ApartParams
) -> tuple[list[np.ndarray], np.ndarray]:
    """Build the crossing pass's streets with one junction, at the origin where the pass crosses
    (found there, and not dissolved: a whole build of these walks finds none there, see
    above), and return the junctions ``fused_forks`` (the last step after ``apart``) is given
    and the built graph's nodes."""
    seen: list[np.ndarray] = []
    fused_forks = build_module.fused_forks

    def record(tracks: list[Track], junctions_xy: np.ndarray, *args: object) -> object:
        seen.append(np.asarray(junctions_xy).reshape(-1, 2))
        return fused_forks(tracks, junctions_xy, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(
        build_module,
        "find_junction_parts",
        lambda *_, **__: (
            np.zeros((1, 2)),
            np.array([3]),
            np.zeros(1, dtype=bool),
            np.zeros(1, dtype=bool),
        ),
    )
    monkeypatch.setattr(build_module, "dissolve_pass_through", lambda *_: set())
    monkeypatch.setattr(build_module, "fused_forks", record)
    build = BuildParams(refine=False, apart_params=params)
    graph = build_from_tracks(
        _a_pass_crossing_between_the_lines(), LocalProjection(35.74, 139.67), params=build
    ).graph
    nodes = np.array([[d["x_m"], d["y_m"]] for _, d in graph.nodes(data=True)]).reshape(-1, 2)
    return seen, nodes


def test_crossed_lines_drops_its_junction_after_the_steps_that_follow(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # dropped at once, the crossing pass becomes a street of its own beside the other line's and
    # those steps count one street more at a node far off (Helsinki coverage seed 0 at
    # (-239.2, -130.1): fused_forks no longer moved it to its fork)
    seen, nodes = _steps_after_apart_see(monkeypatch, ApartParams(crossed_lines=True))
    assert seen[-1].tolist() == [[0.0, 0.0]]
    assert np.hypot(*nodes.T).min() > 1.0  # and the built graph has no node there


def test_with_crossed_last_off_crossed_lines_drops_its_junction_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    params = ApartParams(crossed_lines=True, crossed_last=False)
    seen, nodes = _steps_after_apart_see(monkeypatch, params)
    assert len(seen[-1]) == 0
    assert np.hypot(*nodes.T).min() > 1.0


def _y_fork_with(extra: list[tuple[float, float]], junctions: list[tuple[float, float]]) -> bool:
    """Whether ``apart_junctions`` (crossed_lines on) drops the Y fork at the origin when a walk
    along ``extra`` (metres along P's south-west stem, metres to its right) is added and the
    tracks are cut at ``junctions`` (the same frame)."""

    def at(along: float, right: float) -> tuple[float, float]:
        xy = -along * _NORTH_EAST + right * _RIGHT
        return float(xy[0]), float(xy[1])

    tracks = [*_a_y_fork(), polyline_track([at(*p) for p in extra], "extra")]
    nodes = np.array([at(*j) for j in junctions])
    return bool(apart_junctions(tracks, nodes, *_cut(tracks, nodes), ApartParams())[0])


def test_a_street_crossing_the_forks_stem_at_a_slant_is_no_line_beside_it() -> None:
    # 35 degrees off the stem, 15 m out: its poses lie 4-8 m from the stem for 7 m along it
    assert not _y_fork_with(
        [
            (15.0 - 40.0 * np.cos(np.radians(35.0)), -40.0 * np.sin(np.radians(35.0))),
            (15.0 + 40.0 * np.cos(np.radians(35.0)), 40.0 * np.sin(np.radians(35.0))),
        ],
        [(0.0, 0.0)],
    )


def test_a_line_beyond_where_the_forks_stem_ends_is_no_line_beside_it() -> None:
    # the stem's segment ends at a junction 10 m out; a street 4.6 m to its right from there
    # runs beside the next street, not beside the stem (its poses lie 4-8 m from the stem's
    # last pose for 6 m)
    assert not _y_fork_with([(10.0, 4.6), (60.0, 4.6)], [(0.0, 0.0), (10.0, 0.0)])


def _rule(**changes: object) -> ApartParams:
    return replace(ApartParams(), **changes)  # type: ignore[arg-type]


def test_two_bends_nine_metres_apart_are_two_streets_side_by_side() -> None:
    # the old town's dual carriageway where its halves end in bends 8-9 m apart
    # (tokyo-oldtown coverage seed 6 at (-117.3, 9.5), seed 5 at (-123.1, 2.3)): a junction
    # between them that no pass turns at
    tracks = _side_by_side(9.0)
    junctions = np.array([4.5 * _RIGHT])
    segments, streets = _cut(tracks, junctions)
    assert apart_junctions(tracks, junctions, segments, streets).tolist() == [True]
    before = _rule(side_by_side_far_m=None)
    assert apart_junctions(tracks, junctions, segments, streets, before).tolist() == [False]


def _shallow_crossing(half_deg: float) -> list[Track]:
    """Two streets crossing at the origin at ``2 * half_deg`` degrees, each walked straight
    through both ways."""
    a = 60.0 * np.array([np.cos(np.radians(half_deg)), np.sin(np.radians(half_deg))])
    b = 60.0 * np.array([np.cos(np.radians(half_deg)), -np.sin(np.radians(half_deg))])
    return [
        polyline_track([(-a[0], -a[1]), (a[0], a[1])], "a out"),
        polyline_track([(a[0], a[1]), (-a[0], -a[1])], "a back"),
        polyline_track([(-b[0], -b[1]), (b[0], b[1])], "b out"),
        polyline_track([(b[0], b[1]), (-b[0], -b[1])], "b back"),
    ]


def test_two_streets_whose_passes_cross_are_no_streets_side_by_side() -> None:
    # 24 degrees: each way out is one way for both streets, their passes 4-12 m apart along
    # it, as beside two streets side by side; but they cross (crossed_lines off, and the
    # near band emptied, so that the far band's test alone decides)
    tracks = _shallow_crossing(12.0)
    junctions = np.zeros((1, 2))
    segments, streets = _cut(tracks, junctions)
    guarded = _rule(crossed_lines=False, side_by_side_m=4.0, side_by_side_far_m=12.0)
    assert apart_junctions(tracks, junctions, segments, streets, guarded).tolist() == [False]
    unguarded = replace(guarded, crossing_deg=90.0)
    assert apart_junctions(tracks, junctions, segments, streets, unguarded).tolist() == [True]


def _drawn_together(clarified_m: float, measured_m: float, params: ApartParams) -> bool:
    """Whether the bends' junction of :func:`_side_by_side` is two streets side by side when
    clarifying has drawn the two streets to ``clarified_m`` apart from ``measured_m``."""
    clarified, measured = _side_by_side(clarified_m), _side_by_side(measured_m)
    junctions = np.array([0.5 * clarified_m * _RIGHT])
    segments, streets = _cut(clarified, junctions)
    return bool(
        apart_junctions(clarified, junctions, segments, streets, params, measured=measured)[0]
    )


def test_side_by_side_streets_drawn_together_by_clarifying_are_told_by_their_measured_poses() -> (
    None
):
    # the old town's carriageway halves, walked 4.3-5.8 m apart at their bends and drawn to
    # 2.8 m by clarifying (tokyo-oldtown coverage seed 8 at (-121.7, 2.2)): the clarified
    # passes run together, one group; their measured poses keep the two streets apart
    assert _drawn_together(3.0, 5.5, ApartParams(measured_from_m=2.5))
    assert not _drawn_together(3.0, 5.5, ApartParams(measured_from_m=None))


def test_passes_clarifying_draws_onto_one_line_stay_together_whatever_their_measured_gap() -> None:
    # one street's passes, measured up to 4.6 m apart (a pass's GPS bias) and drawn to 0-2 m
    # (unseen Nerima N wander+stops 5 at (-124.5, -98.1): 4.5 m measured, 1.8 m clarified)
    assert not _drawn_together(1.5, 5.5, ApartParams(measured_from_m=2.5))
    assert _drawn_together(1.5, 5.5, ApartParams(measured_from_m=0.0))


def test_without_the_measured_tracks_the_clarified_ones_stand_in() -> None:
    clarified = _side_by_side(3.0)
    junctions = np.array([1.5 * _RIGHT])
    segments, streets = _cut(clarified, junctions)
    on = ApartParams(measured_from_m=2.5)
    assert not apart_junctions(clarified, junctions, segments, streets, on)[0]


def _stem_and_branches(
    branch_gap_m: float, *, spread_deg: float = 0.0, same_end: bool = False
) -> tuple[bool, bool]:
    """Two lines walked both ways north-east through the origin, 1 m apart south-west of it
    (drawn together there, as clarifying does) and, north-east of it, ``branch_gap_m`` apart
    from 1 m out, spreading ``spread_deg`` each side of north-east. The cut's north-east
    street is split into the two lines' streets (the grouping does that where the two end at
    different nodes: tokyo-oldtown coverage seed 1 at (-103.4, 21.8); with ``same_end`` both
    keep the cut's far node, a fork whose branches meet again). Whether the junction at the
    origin is dropped, with ``parallel_near_m`` 7 m and off."""
    tracks = []
    for side in (-1.0, 1.0):
        turn = np.radians(side * spread_deg)
        way = np.array(
            [
                _NORTH_EAST[0] * np.cos(turn) + _NORTH_EAST[1] * np.sin(turn),
                -_NORTH_EAST[0] * np.sin(turn) + _NORTH_EAST[1] * np.cos(turn),
            ]
        )
        start = 0.5 * branch_gap_m * side * _RIGHT + _NORTH_EAST
        points = [
            tuple(-60.0 * _NORTH_EAST + 0.5 * side * _RIGHT),
            tuple(0.5 * side * _RIGHT),
            tuple(start),
            tuple(start + 100.0 * way),
        ]
        name = "p" if side < 0 else "q"
        tracks += [
            polyline_track(points, f"{name} out"),
            polyline_track(points[::-1], f"{name} back"),
        ]
    junctions = np.zeros((1, 2))
    segments, grouped = _cut(tracks, junctions)
    streets: list[Street] = []
    for street in grouped:
        ends = [segments[k] for k in (*street.forward, *street.backward)]
        north_east = all(
            (tracks[s.track].xy[s.first_frame : s.last_frame + 1] @ _NORTH_EAST).mean() > 0
            for s in ends
        )
        if not north_east:
            streets.append(replace(street, id=len(streets)))
            continue
        for name in "pq":

            def mine(k: int, name: str = name) -> bool:
                return tracks[segments[k].track].id.startswith(name)

            forward = tuple(k for k in street.forward if mine(k))
            backward = tuple(k for k in street.backward if mine(k))
            far = street.b if same_end or name == "p" else street.b + 100  # a node of its own
            streets.append(
                replace(street, id=len(streets), b=far, forward=forward, backward=backward)
            )
    on = ApartParams(parallel_near_m=7.0)
    off = ApartParams(parallel_near_m=None)
    return (
        bool(apart_junctions(tracks, junctions, segments, streets, on)[0]),
        bool(apart_junctions(tracks, junctions, segments, streets, off)[0]),
    )


def test_lines_side_by_side_grouped_as_one_street_on_one_side_make_no_junction() -> None:
    assert _stem_and_branches(7.0) == (True, False)


def test_a_fork_whose_branches_meet_at_it_keeps_its_junction_with_parallel_near_m() -> None:
    # branches 1 m apart at the fork spreading 12 degrees each side: 3-10 m out they lie
    # 2-4 m apart (median), so they meet at the junction
    assert _stem_and_branches(1.0, spread_deg=12.0) == (False, False)


def test_branches_side_by_side_between_the_same_two_nodes_keep_their_junction() -> None:
    # a fork whose branches meet again (fresh Bulevardi coverage seed 1 at (153.5, 131.6),
    # branches 7.6 m apart from 3 m out, both to one node)
    assert _stem_and_branches(7.0, same_end=True) == (False, False)


def _knot_walked_apart_on_its_link() -> tuple[list[Track], np.ndarray]:
    """Junctions A (0, 0) and B (9.9, 0) of a knot, as fresh Bulevardi's Erottaja knot on
    held-out coverage seed 5: walks from the west street and from the south-west diagonal
    meet at A, run on along the 9.9 m link 5 m apart (their GPS biases) and leave B south;
    each walked both ways."""
    west = [(-60.0, 2.5), (0.0, 2.5), (9.9, 2.5), (9.9, -60.0)]
    diagonal = [(-40.0, -42.5), (0.0, -2.5), (9.9, -2.5), (9.9, -60.0)]
    tracks = [
        polyline_track(west, "west out"),
        polyline_track(west[::-1], "west back"),
        polyline_track(diagonal, "diagonal out"),
        polyline_track(diagonal[::-1], "diagonal back"),
    ]
    return tracks, np.array([[0.0, 0.0], [9.9, 0.0]])


def test_a_knots_junction_whose_groups_share_a_short_link_stays() -> None:
    """The two groups of walks at A share one street, the link, as two streets side by side
    share their stretch: without ``shared_link_m`` A is dropped; the link ends 9.9 m on at
    B, so A stays."""
    tracks, junctions = _knot_walked_apart_on_its_link()
    segments, streets = _cut(tracks, junctions)
    off = apart_junctions(tracks, junctions, segments, streets, _rule(shared_link_m=None))
    assert off.tolist()[0] is True
    kept = apart_junctions(tracks, junctions, segments, streets, _rule(shared_link_m=12.0))
    assert kept.tolist()[0] is False


def test_streets_side_by_side_stay_apart_with_the_short_link_guard() -> None:
    tracks = _side_by_side(7.0)
    junctions = np.array([3.5 * _RIGHT])
    segments, streets = _cut(tracks, junctions)
    rule = _rule(shared_link_m=12.0)
    assert apart_junctions(tracks, junctions, segments, streets, rule).tolist() == [True]


def test_shared_link_is_on_by_default() -> None:
    assert ApartParams().shared_link_m == 12.0
    tracks, junctions = _knot_walked_apart_on_its_link()
    segments, streets = _cut(tracks, junctions)
    assert apart_junctions(tracks, junctions, segments, streets).tolist()[0] is False


# Kamppi wander+stops camera 5 (-89.4, 199.9): a street's bend 7 m beside another street
# that meets it 16 m on (a hairpin of two streets), the legs grouped as one "stem" street:
# they run within ``together_m`` of each other along it, leaving the pile 24 degrees apart
_TIP = (-16.0, 0.0)
_LEG_P = [(60.0, 0.0), (0.0, 0.0), _TIP]
_LEG_M = [(45.0, -40.0), (0.0, -7.0), _TIP]
_WEST = (-90.0, 0.0)
_PILE = (0.0, -3.5)
_HAIRPIN_JUNCTIONS = np.array([list(_TIP), list(_PILE)])


def _hairpin() -> list[Track]:
    """Walkers along leg P to the tip and back along leg M, both ways, and walkers from a
    street west of the tip along either leg: no pass turns between the legs at the pile."""
    along_p, along_m = [_WEST, *_LEG_P[::-1]], [_WEST, *_LEG_M[::-1]]
    return [
        polyline_track([*_LEG_P, *_LEG_M[::-1][1:]], "p to the tip, back along m"),
        polyline_track([*_LEG_M, *_LEG_P[::-1][1:]], "m to the tip, back along p"),
        polyline_track(along_p, "west street, then p"),
        polyline_track(along_p[::-1], "p, then the west street"),
        polyline_track(along_m, "west street, then m"),
    ]


def _a_fork_on_one_stem() -> list[Track]:
    """A true Y: one stem street west of the pile that both branches' walkers walk."""
    stem = [(-60.0, _PILE[1]), _PILE]
    p, m = [*stem, (60.0, 0.0)], [*stem, (45.0, -40.0)]
    return [
        polyline_track(p, "stem, then p"),
        polyline_track(p[::-1], "p, then the stem"),
        polyline_track(m, "stem, then m"),
        polyline_track(m[::-1], "m, then the stem"),
    ]


def test_a_hairpins_legs_grouped_as_one_stem_make_no_junction() -> None:
    tracks = _hairpin()
    cut = _cut(tracks, _HAIRPIN_JUNCTIONS)
    old = ApartParams(hairpin_deg=None)
    assert not apart_junctions(tracks, _HAIRPIN_JUNCTIONS, *cut, old)[1]
    hairpin = ApartParams(hairpin_deg=20.0)
    assert list(apart_junctions(tracks, _HAIRPIN_JUNCTIONS, *cut, hairpin)) == [False, True]


def test_a_fork_whose_stem_is_one_street_keeps_its_junction() -> None:
    tracks = _a_fork_on_one_stem()
    junctions = np.array([list(_PILE)])
    hairpin = ApartParams(hairpin_deg=20.0)
    assert not apart_junctions(tracks, junctions, *_cut(tracks, junctions), hairpin)[0]


def test_a_fork_whose_stem_arms_begin_together_is_kept_at_any_angle() -> None:
    """The hairpin's legs, with the floor on their start gap raised past their 7 m apart."""
    tracks = _hairpin()
    cut = _cut(tracks, _HAIRPIN_JUNCTIONS)
    close = ApartParams(hairpin_deg=20.0, hairpin_gap_m=10.0)
    assert not apart_junctions(tracks, _HAIRPIN_JUNCTIONS, *cut, close)[1]


def test_the_hairpin_rule_is_on_by_default() -> None:
    assert ApartParams().hairpin_deg == 20.0
    assert ApartParams().hairpin_gap_m == 5.0
