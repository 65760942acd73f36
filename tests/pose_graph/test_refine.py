"""Junctions moved to where their arms' centre lines meet (builds without OSM)."""

from __future__ import annotations

import csv
import gzip
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from city360.geo import LocalProjection
from city360.pose_graph import build_from_tracks
from city360.pose_graph.build import BuildParams
from city360.pose_graph.dead_ends import find_dead_ends
from city360.pose_graph.junction_params import JunctionParams
from city360.pose_graph.refine import (
    RefineParams,
    _arm_poses,
    _bridged,
    _forked_arms,
    _forked_placing,
    _lined_arms,
    _normal_equations,
    _own_arms_jog,
    _places,
    _ways,
    refine_junctions,
    split_junctions,
    split_side_by_side,
)
from city360.pose_graph.segments import (
    Segment,
    SegmentParams,
    Street,
    cut_tracks,
    group_streets,
)
from city360.pose_graph.tracks import Track, make_track
from tests.pose_graph.walks import noisy_walk, polyline_track

DATA = Path(__file__).parent / "data"

_walk = polyline_track


def _refined(tracks: list[Track], junction: tuple[float, float]) -> np.ndarray:
    junctions = np.array([junction])
    dead_xy, events = find_dead_ends(tracks, junctions)
    segments = cut_tracks(tracks, junctions, events, dead_end_xy=dead_xy)
    streets, _ = group_streets(tracks, segments)
    moved, branching = refine_junctions(tracks, junctions, segments, streets)
    assert branching.all()
    return moved[0]


def test_shallow_fork_junction_moves_to_where_the_streets_meet() -> None:
    # a stem along y = 0 forking at the origin into two arms 30 degrees apart; the passes
    # separate (and vote) metres past the fork
    left = (60 * np.cos(np.radians(15)), 60 * np.sin(np.radians(15)))
    right = (left[0], -left[1])
    tracks = [
        _walk([(-60, 0), (0, 0), left], "left"),
        _walk([(-60, 0), (0, 0), right], "right"),
        _walk([left, (0, 0), right], "across"),
    ]
    moved = _refined(tracks, (7.0, 0.0))
    assert np.hypot(*moved) < 2.0


def test_junction_on_a_straight_street_with_only_its_two_arms_stays() -> None:
    tracks = [_walk([(-60, 0), (60, 0)], "straight")]
    assert np.allclose(_refined(tracks, (5.0, 3.0)), [5.0, 3.0])


def test_junction_between_two_carriageways_of_a_divided_road_is_no_branch_point() -> None:
    # two carriageways 12 m apart, cut at a spot between them where noisy headings voted
    tracks = [_walk([(-60, 0), (60, 0)], "north side"), _walk([(60, -12), (-60, -12)], "south")]
    junctions = np.array([[0.0, -6.0]])
    dead_xy, events = find_dead_ends(tracks, junctions)
    segments = cut_tracks(tracks, junctions, events, dead_end_xy=dead_xy)
    streets, _ = group_streets(tracks, segments)
    assert sum(0 in (s.a, s.b) for s in streets) == 4  # the false junction has four arms
    _, branching = refine_junctions(tracks, junctions, segments, streets)
    assert not branching[0]


def _branching(tracks: list[Track], junction: tuple[float, float]) -> bool:
    junctions = np.array([junction])
    dead_xy, events = find_dead_ends(tracks, junctions)
    segments = cut_tracks(tracks, junctions, events, dead_end_xy=dead_xy)
    streets, _ = group_streets(tracks, segments)
    _, branching = refine_junctions(tracks, junctions, segments, streets)
    return bool(branching[0])


def test_junction_between_two_streets_14_degrees_apart_that_go_two_ways_is_dropped() -> None:
    # two streets 7 m either side of the cut, 14 degrees apart: too far from parallel for the
    # divided-road rule, but their four arms leave by two ways only
    tracks = [_walk([(-60, 0), (60, 0)], "straight"), _walk([(-60, 1), (60, -29)], "slanted")]
    assert not _branching(tracks, (0.0, -7.0))


def test_shallow_y_fork_16_degrees_wide_stays_a_junction() -> None:
    # both branches' lines start at the fork, so they are two ways though 16 degrees apart
    left = (60 * np.cos(np.radians(8)), 60 * np.sin(np.radians(8)))
    right = (left[0], -left[1])
    tracks = [
        _walk([(-60, 0), (0, 0), left], "left"),
        _walk([(-60, 0), (0, 0), right], "right"),
        _walk([left, (0, 0), right], "across"),
    ]
    assert _branching(tracks, (0.0, 0.0))


def _split(
    tracks: list[Track], junction: tuple[float, float], params: RefineParams | None = None
) -> np.ndarray:
    junctions = np.array([junction])
    dead_xy, events = find_dead_ends(tracks, junctions)
    segments = cut_tracks(tracks, junctions, events, dead_end_xy=dead_xy)
    streets, _ = group_streets(tracks, segments)
    return split_junctions(tracks, junctions, segments, streets, params)


def test_one_junction_across_both_carriageways_splits_where_the_street_crosses_each() -> None:
    # a street crossing a divided road whose carriageways run 9 m apart: two true junctions,
    # fused into one between them by the 8 m merge
    tracks = [
        _walk([(0, 60), (0, -70)], "across"),
        _walk([(-60, 0), (60, 0)], "north carriageway"),
        _walk([(60, -9), (-60, -9)], "south carriageway"),
    ]
    split = _split(tracks, (0.0, -4.5))
    assert len(split) == 2
    found = split[np.argsort(split[:, 1])]
    assert np.hypot(*(found[0] - [0.0, -9.0])) < 2.0
    assert np.hypot(*(found[1] - [0.0, 0.0])) < 2.0


def test_a_plain_crossing_stays_one_junction() -> None:
    tracks = [_walk([(0, 60), (0, -60)], "north-south"), _walk([(-60, 0), (60, 0)], "east-west")]
    assert np.allclose(_split(tracks, (1.0, 1.0)), [[1.0, 1.0]])


def _five_arms() -> tuple[list[Track], np.ndarray]:
    # a cross street (y = 0) meeting two streets side by side 8 m apart (x = -4, +4) that
    # both go north, and one street going south from between them: the 8 m merge fused the
    # junctions into one at the origin
    tracks = [
        _walk([(-60, 0), (60, 0)], "east-west"),
        _walk([(-4, 60), (-4, 0.5)], "left north"),
        _walk([(4, 60), (4, 0.5)], "right north"),
        _walk([(0, -0.5), (0, -60)], "south"),
    ]
    return tracks, np.array([[0.0, 0.0]])


def test_two_junctions_fused_between_streets_side_by_side_split_on_each() -> None:
    tracks, junctions = _five_arms()
    dead_xy, events = find_dead_ends(tracks, junctions)
    segments = cut_tracks(tracks, junctions, events, dead_end_xy=dead_xy)
    streets, _ = group_streets(tracks, segments)
    # the meeting places of the cross street with both sides and with the south arm between
    # them chain into one (4 m apart): the places rule keeps one junction
    unbridged = RefineParams(split_bridged=False)
    assert len(split_junctions(tracks, junctions, segments, streets, unbridged)) == 1
    # ... unless the south arm, the line that bridges them, is left out (split_bridged)
    places = split_junctions(tracks, junctions, segments, streets)
    places = places[np.argsort(places[:, 0])]
    assert len(places) == 2
    assert np.hypot(*(places[0] - [-4.0, 0.0])) < 1.5
    assert np.hypot(*(places[1] - [4.0, 0.0])) < 1.5
    halves, origin = split_side_by_side(tracks, junctions, segments, streets)
    assert len(halves) == 2
    assert origin.tolist() == [0, 0]
    found = halves[np.argsort(halves[:, 0])]
    assert np.hypot(*(found[0] - [-4.0, 0.0])) < 1.5
    assert np.hypot(*(found[1] - [4.0, 0.0])) < 1.5


def test_a_junction_whose_same_way_arms_pass_it_on_one_side_is_not_split() -> None:
    # the same five arms but both northern streets left of the junction (x = -4, -12): no
    # street runs on its far side, so they are not two sides of a fused junction
    tracks = [
        _walk([(-60, 0), (60, 0)], "east-west"),
        _walk([(-4, 60), (-4, 0.5)], "near north"),
        _walk([(-12, 60), (-12, 0.5)], "far north"),
        _walk([(0, -0.5), (0, -60)], "south"),
        _walk([(4, -0.5), (4, -60)], "south east"),
    ]
    junctions = np.array([[0.0, 0.0]])
    dead_xy, events = find_dead_ends(tracks, junctions)
    segments = cut_tracks(tracks, junctions, events, dead_end_xy=dead_xy)
    streets, _ = group_streets(tracks, segments)
    halves, _ = split_side_by_side(tracks, junctions, segments, streets)
    assert np.allclose(halves, junctions)


def _twin_poses(name: str) -> list[Track]:
    """The tracks of a fixture of ``tests/pose_graph/data`` (track, x_m, y_m[, t_s])."""
    with gzip.open(DATA / name, "rt", newline="") as f:
        rows = list(csv.DictReader(f))
    tracks = []
    for track in dict.fromkeys(r["track"] for r in rows):
        mine = [r for r in rows if r["track"] == track]
        xy = np.array([[float(r["x_m"]), float(r["y_m"])] for r in mine])
        t_s = np.array([float(r["t_s"]) for r in mine]) if "t_s" in mine[0] else None
        tracks.append(make_track(track, xy, spacing_m=1.0, frame_count=len(xy), t_s=t_s))
    return tracks


UNPARTED = BuildParams(
    junctions=JunctionParams(split_peaks_m=None),
    segments=SegmentParams(graze_m=None),
    refine_params=RefineParams(knot_ways_m=None),
)
"""The build without the vote pile's parting and the rules that serve it (before round
thirty-two's defaults)."""


def _junctions_near_origin(
    tracks: list[Track], within_m: float, params: BuildParams | None = None
) -> np.ndarray:
    graph = build_from_tracks(tracks, LocalProjection(35.74, 139.67), params=params).graph
    return np.array(
        [
            [d["x_m"], d["y_m"]]
            for _, d in graph.nodes(data=True)
            if d["kind"] == "junction" and abs(d["x_m"]) < within_m and abs(d["y_m"]) < within_m
        ]
    ).reshape(-1, 2)


def test_a_twin_s_junctions_on_two_streets_side_by_side_are_built_apart() -> None:
    # a Helsinki twin's poses (tests/pose_graph/data/README.md): a cross street meets two
    # parallel streets 8 m apart; the places rule alone builds one six-armed junction
    # between them, at (0.0, 0.1), 4 m from each true junction
    built = _junctions_near_origin(_twin_poses("side_by_side_poses.csv.gz"), 20.0)
    for true in ([-4.0, 0.0], [4.0, 0.0]):
        assert np.hypot(*(built - true).T).min() < 2.0


def test_a_side_by_side_split_that_loses_a_half_is_undone() -> None:
    # an old-town twin's corner where junctions 8-11 m apart meet (data/README.md): two of
    # the arms of the six-armed junction built there leave it the same way on either side,
    # but cut at the two halves one of them is no junction and would be dropped, leaving
    # one junction for the corner; undone, the corner keeps its two junctions. Without the
    # vote pile's parting: with it (the default since round thirty-two) the split is not
    # made on these cropped poses and the corner is one junction, (-6.0, -0.4), 3.2 m from
    # (-3, -4) (the whole twin's build with the parting finds all three, R 1.000)
    tracks = _twin_poses("oldtown_corner_poses.csv.gz")
    assert len(_junctions_near_origin(tracks, 15.0, UNPARTED)) == 2


def _two_tees(gap_m: float) -> list[Track]:
    # a through street (y = 0) and two side streets leaving it southwards at x = -gap/2 and
    # x = +gap/2: two T-junctions whose crossing votes chained into one at the origin
    half = gap_m / 2.0
    return [
        _walk([(-60, 0), (60, 0)], "through"),
        _walk([(-half, -0.5), (-half, -60)], "west side street"),
        _walk([(half, -0.5), (half, -60)], "east side street"),
    ]


def _side_by_side_split(tracks: list[Track], params: RefineParams | None = None) -> np.ndarray:
    junctions = np.array([[0.0, 0.0]])
    dead_xy, events = find_dead_ends(tracks, junctions)
    segments = cut_tracks(tracks, junctions, events, dead_end_xy=dead_xy)
    streets, _ = group_streets(tracks, segments)
    halves, _ = split_side_by_side(tracks, junctions, segments, streets, params)
    return halves[np.argsort(halves[:, 0])]


def test_two_tees_10_m_apart_fused_into_one_junction_split_on_each() -> None:
    # four arms, two of them the same way on either side: below side_by_side_arms (5), so
    # only the gap between the side streets (10 m, over side_by_side_gap_m) splits it
    found = _side_by_side_split(_two_tees(10.0))
    assert len(found) == 2
    assert np.hypot(*(found[0] - [-5.0, 0.0])) < 1.5
    assert np.hypot(*(found[1] - [5.0, 0.0])) < 1.5


def test_staggered_tees_7_m_apart_stay_one_junction() -> None:
    # side streets 7 m apart are one place to the scorer (it contracts streets under 8 m)
    assert np.allclose(_side_by_side_split(_two_tees(7.0)), [[0.0, 0.0]])


def test_two_tees_are_not_split_with_the_gap_rule_off() -> None:
    off = RefineParams(side_by_side_gap_m=None)
    assert np.allclose(_side_by_side_split(_two_tees(10.0), off), [[0.0, 0.0]])


def _staggered_tees(gap_m: float) -> list[Track]:
    # a through street (y = 0), one side street leaving it northwards at x = -gap/2 and one
    # southwards at x = +gap/2: a staggered crossing whose votes chained into one junction
    half = gap_m / 2.0
    return [
        _walk([(-60, 0), (60, 0)], "through"),
        _walk([(-half, 0.5), (-half, 60)], "north side street"),
        _walk([(half, -0.5), (half, -60)], "south side street"),
    ]


def test_a_staggered_crossing_10_m_apart_fused_into_one_junction_splits_on_each() -> None:
    found = _side_by_side_split(_staggered_tees(10.0))
    assert len(found) == 2
    assert np.hypot(*(found[0] - [-5.0, 0.0])) < 1.5
    assert np.hypot(*(found[1] - [5.0, 0.0])) < 1.5


def test_a_plain_crossing_and_a_staggered_one_7_m_apart_stay_one_junction() -> None:
    # the opposite arms of a crossing run along one line; 7 m is one place to the scorer
    assert np.allclose(_side_by_side_split(_staggered_tees(0.0)), [[0.0, 0.0]])
    assert np.allclose(_side_by_side_split(_staggered_tees(7.0)), [[0.0, 0.0]])


_OWN = RefineParams(split_own_arms_m=6.0)


def _tees_one_side_street_slanted(*, crossed: bool = True) -> list[Track]:
    # staggered Ts on a through street (y = 0): a side street north from x = 4, one south
    # whose passes slant from x = -3 at the street to x = -6 16 m down (passes turning into
    # it cut the corner, or one walked diagonally across from the north street), then
    # straight: lines to 18 m meet the through street 6.7 m apart, lines to 30 m 7.3 m.
    # ``crossed``: a walker also goes from the north street along the through street into
    # the south one (its legs jog 8 m: split_own_arms_jog_m)
    tracks = [
        _walk([(-60, 0), (60, 0)], "through"),
        _walk([(4, 60), (4, 0.5)], "north side street"),
        _walk([(-3, -0.5), (-6, -16), (-6, -60)], "south side street, its first metres slanted"),
    ]
    if crossed:
        tracks.append(
            _walk([(4, 60), (4, 0), (-3, 0), (-6, -16), (-6, -60)], "north street to south")
        )
    return tracks


def test_staggered_tees_whose_far_lines_meet_apart_split_with_own_arms() -> None:
    found = _split(_tees_one_side_street_slanted(), (0.0, 0.0), _OWN)
    assert len(found) == 2
    found = found[np.argsort(found[:, 0])]
    assert np.hypot(*(found[0] - [-3.3, 0.0])) < 0.5
    assert np.hypot(*(found[1] - [4.0, 0.0])) < 0.5


def test_staggered_tees_whose_far_lines_meet_apart_stay_one_with_own_arms_off() -> None:
    off = RefineParams(split_own_arms_m=None)
    assert np.allclose(_split(_tees_one_side_street_slanted(), (0.0, 0.0), off), [[0.0, 0.0]])


def test_split_own_arms_is_on_by_default() -> None:
    assert RefineParams().split_own_arms_m == 6.0
    assert RefineParams().split_own_arms_jog_m == 5.0


def test_staggered_tees_that_no_walker_crosses_stay_one_junction() -> None:
    # nothing shows that a walker going from one side street to the other must jog along
    # the through street: lines alone cannot tell these Ts from a single crossing's (below)
    tees = _tees_one_side_street_slanted(crossed=False)
    assert np.allclose(_split(tees, (0.0, 0.0), _OWN), [[0.0, 0.0]])
    assert len(_split(tees, (0.0, 0.0), _OWN_NO_JOG)) == 2


_OWN_NO_JOG = RefineParams(split_own_arms_m=6.0, split_own_arms_jog_m=None)


def _crossing_whose_turns_drift(*, across: bool) -> list[Track]:
    # one crossing at the origin, one line north-south: a one-way walker turns from the west
    # into the north street, another from the east into the south street; each cuts its
    # corner and drifts off the street's line (a sidewalk and GPS error), 3 m east or west
    # at the street and 4.5 m 16 m out, so the side streets' lines meet the through street
    # 6-7 m apart near and over 7 m apart far: the Helsinki one-way rows' single crossings
    tracks = [
        _walk([(-60, 0), (60, 0)], "through"),
        _walk([(-60, 0), (0, 0), (3, 3), (4.5, 16), (4.5, 60)], "west into north"),
        _walk([(60, 0), (0, 0), (-3, -3), (-4.5, -16), (-4.5, -60)], "east into south"),
    ]
    if across:
        tracks.append(_walk([(0, 60), (0, -60)], "north to south, straight on"))
    return tracks


def test_a_crossing_whose_turning_passes_drift_apart_stays_one_junction() -> None:
    crossing = _crossing_whose_turns_drift(across=False)
    assert len(_split(crossing, (0.0, 0.0), _OWN_NO_JOG)) == 2  # round twenty-six's rule
    assert np.allclose(_split(crossing, (0.0, 0.0), _OWN), [[0.0, 0.0]])


def _walker_jog(tracks: list[Track], walker: int) -> float | None:
    # the jog of track ``walker`` through the junction at the origin, between the two
    # streets it walks in and out by
    junctions = np.array([[0.0, 0.0]])
    dead_xy, events = find_dead_ends(tracks, junctions)
    segments = cut_tracks(tracks, junctions, events, dead_end_xy=dead_xy)
    streets, _ = group_streets(tracks, segments)
    street_of = {i: st.id for st in streets for i in (*st.forward, *st.backward)}
    came, went = next(
        (street_of[i], street_of[i + 1])
        for i in range(len(segments) - 1)
        if segments[i].track == walker == segments[i + 1].track
    )
    return _own_arms_jog(tracks, segments, street_of, 0, junctions[0], ({came}, {went}), _OWN)


def test_own_arms_jog_measures_the_walkers_offset_between_the_side_streets() -> None:
    jog = _walker_jog(_tees_one_side_street_slanted(), 3)
    assert jog is not None
    assert 7.5 < jog < 10.0  # x = 4 against the south street's -3 .. -6
    jog = _walker_jog(_crossing_whose_turns_drift(across=True), 3)
    assert jog is not None
    assert jog < 0.5


def test_a_walker_who_turns_back_into_a_street_on_the_same_side_jogs_nowhere() -> None:
    # two Ts 10 m apart whose side streets both leave southwards; the walker comes up one
    # and goes down the other: its legs leave the junction the same way, not across it
    tees = [
        *_two_tees(10.0),
        _walk([(-5, -60), (-5, 0), (5, 0), (5, -60)], "up the west street, down the east"),
    ]
    assert _walker_jog(tees, 3) is None


def test_staggered_tees_whose_far_lines_stay_6_2_m_apart_stay_one_junction() -> None:
    # side streets 5.7 m apart, straight: their lines meet the through street 6.2 m apart
    # near and far; only the unconfirmed rule (split_own_arms_far_m None) splits them
    assert np.allclose(_split(_staggered_tees(5.7), (0.0, 0.0), _OWN), [[0.0, 0.0]])
    near_only = RefineParams(
        split_own_arms_m=6.0, split_own_arms_far_m=None, split_own_arms_jog_m=None
    )
    found = _split(_staggered_tees(5.7), (0.0, 0.0), near_only)
    assert len(found) == 2
    found = found[np.argsort(found[:, 0])]
    assert np.hypot(*(found[0] - [-2.85, 0.0])) < 1.0
    assert np.hypot(*(found[1] - [2.85, 0.0])) < 1.0


def test_staggered_tees_closer_than_split_own_arms_m_stay_one_junction() -> None:
    near_only = RefineParams(
        split_own_arms_m=6.0, split_own_arms_far_m=None, split_own_arms_jog_m=None
    )
    assert np.allclose(_split(_staggered_tees(5.0), (0.0, 0.0), near_only), [[0.0, 0.0]])
    assert np.allclose(_split(_staggered_tees(0.0), (0.0, 0.0), _OWN), [[0.0, 0.0]])


def _widening_tees(near_gap_m: float, far_gap_m: float) -> list[Track]:
    # a through street (y = 0) and two side streets leaving it southwards, near_gap_m apart
    # for their first 12 m and far_gap_m apart 60 m down: two T-junctions whose side
    # streets' arms measure under side_by_side_gap_m near the fused junction
    near, far = near_gap_m / 2.0, far_gap_m / 2.0
    return [
        _walk([(-60, 0), (60, 0)], "through"),
        _walk([(-near, -0.5), (-near, -12), (-far, -60)], "west side street"),
        _walk([(near, -0.5), (near, -12), (far, -60)], "east side street"),
    ]


def test_two_tees_whose_side_streets_run_apart_farther_out_split_on_each() -> None:
    # 8.4 m apart near the junction (under side_by_side_gap_m, 9), 10.5 m across 18-45 m
    # out (far_gap_m, 10): two streets side by side, each with its own T at y = 0
    found = _side_by_side_split(_widening_tees(8.4, 14.0))
    assert len(found) == 2
    assert np.hypot(*(found[0] - [-4.2, 0.0])) < 1.5
    assert np.hypot(*(found[1] - [4.2, 0.0])) < 1.5


def test_two_tees_whose_side_streets_stay_close_stay_one_junction() -> None:
    # 8.4 m near, 9.3 m across 18-45 m out: under far_gap_m
    assert np.allclose(_side_by_side_split(_widening_tees(8.4, 10.0)), [[0.0, 0.0]])


def test_widening_tees_are_not_split_with_the_far_rule_off() -> None:
    off = RefineParams(far_gap_m=None)
    assert np.allclose(_side_by_side_split(_widening_tees(8.4, 14.0), off), [[0.0, 0.0]])


def test_a_fork_whose_branches_run_apart_farther_out_stays_one_junction() -> None:
    # a stem from the north and a street to the west meet two branches leaving southwards
    # 20 degrees apart: 10 m apart 30 m down, but both start at the junction
    tracks = [
        _walk([(0, 60), (0, 0), (-60, 0)], "stem to the west"),
        _walk([(0, 60), (0, 0), (-10.4, -59.1)], "west branch"),
        _walk([(0, 60), (0, 0), (10.4, -59.1)], "east branch"),
    ]
    assert np.allclose(_side_by_side_split(tracks), [[0.0, 0.0]])


def _lopsided_tees() -> list[Track]:
    # as _widening_tees(8.4, 14.0), but the fused junction sits 2 m from the east side
    # street's arm (under through_m, 2.5) and 6.4 m from the west one's
    return [
        _walk([(-60, 0), (60, 0)], "through"),
        _walk([(-6.4, -0.5), (-6.4, -12), (-9.2, -60)], "west side street"),
        _walk([(2.0, -0.5), (2.0, -12), (4.8, -60)], "east side street"),
    ]


def test_far_apart_tees_close_to_one_arm_split_only_with_far_through_m() -> None:
    tracks = _lopsided_tees()
    junctions = np.array([[0.0, 0.0]])
    dead_xy, events = find_dead_ends(tracks, junctions)
    segments = cut_tracks(tracks, junctions, events, dead_end_xy=dead_xy)
    streets, _ = group_streets(tracks, segments)
    halves, _ = split_side_by_side(tracks, junctions, segments, streets)
    assert np.allclose(halves, junctions)  # off by default
    loose = RefineParams(far_through_m=1.5)
    halves, _ = split_side_by_side(tracks, junctions, segments, streets, loose)
    found = halves[np.argsort(halves[:, 0])]
    assert len(found) == 2
    assert np.hypot(*(found[0] - [-6.4, 0.0])) < 1.5
    assert np.hypot(*(found[1] - [2.0, 0.0])) < 1.5


_BESIDE = RefineParams(split_own_arms_beside=True)


def _side_streets_side_by_side(seed: int) -> list[Track]:
    # a through street (y = 0) and two side streets leaving it south-west at 45 degrees,
    # side by side (old town wander+stops seed 1's knot): the west one from x = -4.5, the
    # east one from x = 4.5, whose passes slant from x = 1.5 at the street (passes turning
    # into it cut the corner): near lines meet the street 6-7 m apart, far ones 7 m or
    # more; no walker goes from one side street into the other (no jog to read)
    s = np.sqrt(0.5)

    def walk(points: list[tuple[float, float]], street: str) -> Track:
        return noisy_walk(points, f"{street}{seed}", noise_m=0.2)

    return [
        walk([(-60, 0), (60, 0)], "through"),
        walk([(-4.5 - 0.5 * s, -0.5 * s), (-4.5 - 60 * s, -60 * s)], "west"),
        walk([(1.5, -0.5), (4.5 - 16 * s, -16 * s), (4.5 - 60 * s, -60 * s)], "east"),
    ]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_two_side_streets_side_by_side_that_no_walker_crosses_split_with_beside(
    seed: int,
) -> None:
    tees = _side_streets_side_by_side(seed)
    off = RefineParams(split_own_arms_beside=False)
    assert np.allclose(_split(tees, (0.0, 0.0), off), [[0.0, 0.0]])
    found = _split(tees, (0.0, 0.0), _BESIDE)
    assert len(found) == 2
    found = found[np.argsort(found[:, 0])]
    assert np.hypot(*(found[0] - [-4.5, 0.0])) < 1.0
    assert np.hypot(*(found[1] - [3.0, 0.0])) < 1.5


def test_side_streets_leaving_opposite_ways_stay_one_junction_with_beside() -> None:
    # a single crossing's side streets leave opposite ways: no two streets side by side
    tees = _tees_one_side_street_slanted(crossed=False)
    assert np.allclose(_split(tees, (0.0, 0.0), _BESIDE), [[0.0, 0.0]])


def test_split_own_arms_beside_is_on_by_default() -> None:
    assert RefineParams().split_own_arms_beside is True


def _staggered_tees_crossed(gap_m: float) -> list[Track]:
    # _staggered_tees, and a walker from the north side street along the through street
    # into the south one: its legs jog gap_m, the Ts' own offset
    half = gap_m / 2.0
    return [
        *_staggered_tees(gap_m),
        _walk([(-half, 60), (-half, 0), (half, 0), (half, -60)], "north street to south"),
    ]


def test_jogged_tees_whose_far_places_fall_short_of_split_min_m_split_with_the_jog() -> None:
    # places 6.3 m apart near and far: under split_min_m (7 m), so the confirmation keeps
    # them one; a walker's 6.3 m jog lowers that bar to split_own_arms_jogged_far_m
    tees = _staggered_tees_crossed(6.3)
    off = RefineParams(split_own_arms_jogged_far_m=None)
    assert np.allclose(_split(tees, (0.0, 0.0), off), [[0.0, 0.0]])
    found = _split(tees, (0.0, 0.0), RefineParams(split_own_arms_jogged_far_m=6.0))
    assert len(found) == 2
    found = found[np.argsort(found[:, 0])]
    assert np.hypot(*(found[0] - [-3.15, 0.0])) < 1.0
    assert np.hypot(*(found[1] - [3.15, 0.0])) < 1.0


def test_unjogged_tees_stay_one_with_split_own_arms_jogged_far_m() -> None:
    jogged = RefineParams(split_own_arms_m=6.0, split_own_arms_jogged_far_m=6.0)
    assert np.allclose(_split(_staggered_tees(6.3), (0.0, 0.0), jogged), [[0.0, 0.0]])


def test_split_own_arms_jogged_far_m_is_on_at_6_m_by_default() -> None:
    assert RefineParams().split_own_arms_jogged_far_m == 6.0


def _knot_arms() -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray, float]], list]:
    # old town wander+stops 0's part (-21.3, 87.2), moved to the origin: arms leaving at 227
    # and 248 degrees (21 apart) to two parts of its vote pile 10.6 and 14.1 m off, and one
    # at 121 degrees to a dead end; the two lines pass the node 3 m off (no shallow fork)
    node = np.zeros(2)
    lines, ends = [], []
    arms = [(227.0, -3.0, (-6.9, -8.0)), (248.0, 3.0, (-13.9, -2.4)), (121.0, 0.0, None)]
    for bearing, side, end in arms:
        axis = np.array([np.sin(np.radians(bearing)), np.cos(np.radians(bearing))])
        across = np.array([axis[1], -axis[0]])
        lines.append((8.0 * axis + side * across, axis, 1.0))
        ends.append(None if end is None else np.array(end))
    return node, lines, ends


def test_arms_of_a_knot_to_two_junctions_go_two_ways_with_knot_ways_m() -> None:
    node, lines, ends = _knot_arms()
    off = RefineParams(knot_ways_m=None)
    assert _ways(node, lines, off, ends) == 2  # the old behaviour: dropped
    assert _ways(node, lines, RefineParams(knot_ways_m=15.0), ends) == 3


def test_same_way_arms_to_one_junction_or_far_ones_stay_one_way_with_knot_ways_m() -> None:
    node, lines, ends = _knot_arms()
    knot = RefineParams(knot_ways_m=15.0)
    assert _ways(node, lines, knot, [ends[0], ends[0], None]) == 2  # one street, two passes
    assert _ways(node, lines, knot, [ends[0], None, None]) == 2  # one leads to a dead end
    far = [ends[0], 2.0 * ends[1], None]  # the second junction 28 m off: no knot
    assert _ways(node, lines, knot, far) == 2


def test_knot_ways_m_is_on_by_default_with_the_parting_it_serves() -> None:
    assert RefineParams().knot_ways_m == 15.0
    assert JunctionParams().split_peaks_m == 8.0


def _street_and_stub(*, turned_back: bool = True, corner: bool = False) -> tuple[bool, bool]:
    """Branching of a node N at the origin with ``through_stub_m`` off and at 10 m. A street
    is walked straight through N (or round a corner there) and on to a junction J 12 m east;
    a walker comes from J 9 m past N's side, turns back 6.4 m from N and is cut at N on the
    way back: a stub of five poses from that dead end to N, too short for a line (Helsinki
    wander+stops 0's (-480.1, -303.1)). ``turned_back=False``: the second video starts at
    that dead end instead (a video starting a few metres up a side street)."""
    west = (0.0, -40.0) if corner else (-40.0, 0.0)
    street = _walk([west, (0.0, 0.0), (12.0, 0.0), (40.0, 0.0)], "street")
    walker = _walk([(12.0, 0.0), (4.0, -5.0), (5.0, 0.5), (12.0, 0.5)], "turn back")
    apex = int(np.argmin(np.hypot(*(walker.xy - (4.0, -5.0)).T)))
    at_n = apex + 4
    tracks = [street, walker]
    n_frame = int(np.argmin(np.hypot(*street.xy.T)))
    j_frame = int(np.argmin(np.hypot(*(street.xy - (12.0, 0.0)).T)))
    last = len(street.xy) - 1
    segments = [
        Segment(0, 3, 0, 0, n_frame),
        Segment(0, 0, 1, n_frame, j_frame),
        Segment(0, 1, 4, j_frame, last),
        Segment(1, 2, 0, apex, at_n),
        Segment(1, 0, 1, at_n, len(walker.xy) - 1),
    ]
    if turned_back:
        segments.append(Segment(1, 1, 2, 0, apex))
    streets, _ = group_streets(tracks, segments)
    junctions = np.array([[0.0, 0.0], [12.0, 0.0]])
    assert sum(0 in (s.a, s.b) for s in streets) == 3
    off, on = (
        bool(refine_junctions(tracks, junctions, segments, streets, params)[1][0])
        for params in (RefineParams(through_stub_m=None), RefineParams(through_stub_m=10.0))
    )
    return off, on


def test_a_street_with_a_turn_back_cut_at_it_is_no_junction_with_through_stub_m() -> None:
    assert _street_and_stub() == (True, False)  # kept before the rule


def test_a_video_starting_up_a_side_street_or_a_corner_stays_with_through_stub_m() -> None:
    assert _street_and_stub(turned_back=False) == (True, True)
    assert _street_and_stub(corner=True) == (True, True)


def test_through_stub_m_is_on_at_10_m_by_default() -> None:
    assert RefineParams().through_stub_m == 10.0


def _bridged_knot() -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray, float]]]:
    """Fresh Bulevardi coverage seed 2's Erottaja knot without OSM, moved to the origin: one
    junction (147.2, 133.1) for two 8.7 m apart, its five arm lines (centre, heading degrees);
    the third is a bend walked to a dead end from both, grouped as one arm between them."""
    node = np.array([147.2, 133.1])
    arms = [
        ((136.6, 133.5), 284.0),
        ((140.3, 126.1), 209.0),
        ((146.1, 137.5), 346.0),
        ((157.8, 134.6), 78.0),
        ((154.5, 127.3), 149.0),
    ]
    lines = []
    for (x, y), deg in arms:
        rad = np.radians(deg)
        lines.append((np.array([x, y]) - node, np.array([np.sin(rad), np.cos(rad)]), 1.0))
    return np.zeros(2), lines


def test_a_knot_whose_places_one_line_bridges_splits_with_split_bridged() -> None:
    node, lines = _bridged_knot()
    params = RefineParams(split_bridged=True)
    assert len(_places(node, lines, params)) == 1  # the old behaviour: one place
    places = _bridged(node, lines, params)
    assert len(places) == 2
    assert np.hypot(*(places[0] - places[1])) > 8.0
    # the two true junctions, (142.6, 132.7) and (151.3, 132.7) before the move
    true = np.array([[-4.6, -0.4], [4.1, -0.4]])
    assert all(np.hypot(*(true - place).T).min() < 2.0 for place in places)


def test_four_lines_or_five_through_one_place_are_not_bridged() -> None:
    node, lines = _bridged_knot()
    params = RefineParams(split_bridged=True)
    assert _bridged(node, lines[:4], params) == []
    # five streets through one point: every line left out leaves one place
    star = []
    for deg in (0.0, 72.0, 144.0, 216.0, 288.0):
        rad = np.radians(deg)
        way = np.array([np.sin(rad), np.cos(rad)])
        star.append((10.0 * way, way, 1.0))
    assert _bridged(node, star, params) == []


def test_a_square_of_footpaths_with_eight_lines_is_not_bridged() -> None:
    # fresh Kaisaniemi coverage seed 2 without OSM, (-26.7, -124.4) moved to the origin: one
    # line left out gives a place 14 m from any true junction
    node = np.array([-26.7, -124.4])
    arms = [
        ((-36.5, -124.2), 283.0),
        ((-32.5, -115.5), 351.0),
        ((-25.5, -114.3), 350.0),
        ((-16.7, -126.2), 100.0),
        ((-18.2, -127.6), 88.0),
        ((-21.3, -129.2), 158.0),
        ((-21.4, -117.6), 42.0),
        ((-30.4, -131.6), 154.0),
    ]
    lines = []
    for (x, y), deg in arms:
        rad = np.radians(deg)
        lines.append((np.array([x, y]) - node, np.array([np.sin(rad), np.cos(rad)]), 1.0))
    assert len(_bridged(np.zeros(2), lines, RefineParams(split_bridged_max_lines=8))) == 2
    assert _bridged(np.zeros(2), lines, RefineParams()) == []


def test_split_bridged_is_on_by_default() -> None:
    assert RefineParams().split_bridged is True
    assert RefineParams().split_bridged_max_lines == 5


def _fork_arm(
    bent: tuple[float, float], *, any_arm: bool = True
) -> list[tuple[int, int, np.ndarray]]:
    """Node 0 at the origin, node 1 at (0, 60), one street between them walked twice: north
    along x = 0 and out through ``bent``; the arms at node 0 with ``forked_arm_deg`` 40."""
    tracks = [
        polyline_track([(0.0, 0.0), (0.0, 60.0)], "straight"),
        polyline_track([(0.0, 0.0), bent, (0.0, 60.0)], "bent"),
    ]
    segments = [Segment(k, 0, 1, 0, len(t) - 1) for k, t in enumerate(tracks)]
    streets, _ = group_streets(tracks, segments)
    params = RefineParams(forked_arm_deg=40.0, forked_arm_any=any_arm)
    junctions = np.array([[0.0, 0.0], [0.0, 60.0]])
    poses = _arm_poses(tracks, junctions, segments, streets, params)
    lined = [arm for arm in _lined_arms(poses, params) if arm[0] == 0]
    return _forked_arms(tracks, junctions, segments, streets, lined, params, {0: 1})


def test_a_fork_s_two_branches_grouped_as_one_street_are_two_arms_with_forked_arm_deg() -> None:
    # Bulevardi's knot B and its arm to the fork: one street, two branches leaving 45 degrees
    # apart; refine fitted one line between them (the old behaviour: forked_arm_deg None)
    assert len(streets_of := _fork_arm((14.0, 14.0))) == 2
    assert {arm[1] for arm in streets_of} == {0}
    assert RefineParams().forked_arm_deg == 40.0
    assert RefineParams().forked_arm_any is False


def test_two_passes_of_one_street_are_one_arm_with_forked_arm_deg() -> None:
    assert len(_fork_arm((2.0, 30.0))) == 1


def test_forked_arm_any_off_wants_the_fork_at_the_street_s_other_node() -> None:
    # node 1 ends the street (one street there), no fork of two streets: one arm
    assert len(_fork_arm((14.0, 14.0), any_arm=False)) == 1


def _lines_across(*xs: float) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """An arm along y = 0 and one arm along x = ``x`` for each of ``xs``: lines meeting at
    (x, 0)."""
    lines = [(np.zeros(2), np.array([1.0, 0.0]), 1.0)]
    lines += [(np.array([x, 0.0]), np.array([0.0, 1.0]), 1.0) for x in xs]
    return lines


def _placed(pooled_x: float, forked_x: float, *, tempers: bool = True) -> np.ndarray:
    pooled = _lines_across(pooled_x)
    lhs, rhs = _normal_equations(pooled)
    params = RefineParams(forked_arm_deg=40.0, forked_arm_tempers=tempers)
    placing = _forked_placing(np.zeros(2), lhs, rhs, _lines_across(forked_x, forked_x), params)
    return _meet_of(placing)


def _meet_of(equations: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    return np.asarray(np.linalg.solve(*equations))


def test_forked_lines_temper_a_move_the_pooled_lines_make() -> None:
    # Bulevardi wander+stops 0's B: pooled 5.7 m off, split 2.7 m: the split lines place it
    assert np.allclose(_placed(5.7, 2.7), [2.7, 0.0])


def test_forked_lines_make_no_move_the_pooled_lines_do_not() -> None:
    # Bulevardi wander 0's knot node: pooled 17.6 m off (beyond max_shift_m: it stays), split
    # 6.2 m off, where it was dropped; the old behaviour (tempers False) moved it there
    assert np.allclose(_placed(17.6, 6.2), [17.6, 0.0])
    assert np.allclose(_placed(17.6, 6.2, tempers=False), [6.2, 0.0])
    # and no split line that moves it farther than the pooled ones
    assert np.allclose(_placed(3.0, 5.0), [3.0, 0.0])
    assert RefineParams().forked_arm_tempers is True


def test_forked_lines_leave_a_move_of_a_few_metres_alone() -> None:
    # Kaisaniemi coverage 1's (-50.8, -105.9): pooled 2.5 m, split 0.6 m; under
    # forked_arm_from_m (4 m) the pooled lines place it, as with forked_arm_deg None
    assert np.allclose(_placed(2.5, 0.6), [2.5, 0.0])
    assert RefineParams().forked_arm_from_m == 4.0


def _carriageways_grouped_as_one_street() -> tuple[list[Track], np.ndarray]:
    # a divided road's two carriageways (x = -3.5 and x = +3.5, 7 m apart) from a cross
    # street (y = 0) north to a second cross street (y = 60), with a street south from the
    # first: both crossings were fused across the road (junctions at x = 0), so both
    # carriageways run between the same two nodes under same_street_m and are one street
    tracks = [
        _walk([(-60, 0), (60, 0)], "south cross street"),
        _walk([(-60, 60), (60, 60)], "north cross street"),
        _walk([(-3.5, 0.5), (-3.5, 59.5)], "west carriageway"),
        _walk([(3.5, 59.5), (3.5, 0.5)], "east carriageway"),
        _walk([(0, -0.5), (0, -60)], "south"),
    ]
    return tracks, np.array([[0.0, 0.0], [0.0, 60.0]])


def _cut_at(tracks: list[Track], junctions: np.ndarray) -> tuple[list[Segment], list[Street]]:
    dead_xy, events = find_dead_ends(tracks, junctions)
    segments = cut_tracks(tracks, junctions, events, dead_end_xy=dead_xy)
    streets, _ = group_streets(tracks, segments)
    return segments, streets


def _south_halves(tracks: list[Track], junctions: np.ndarray, params: RefineParams) -> np.ndarray:
    """The parts ``split_side_by_side`` splits the south node (0) into, west to east."""
    segments, streets = _cut_at(tracks, junctions)
    halves, origin = split_side_by_side(tracks, junctions, segments, streets, params)
    south = halves[origin == 0]
    return south[np.argsort(south[:, 0])]


def _assert_split_on_each_carriageway(tracks: list[Track], junctions: np.ndarray) -> None:
    """With ``side_by_side_parted_m`` 6 the south node splits in two, one on each carriageway
    (x = -3.5 and 3.5 m)."""
    south = _south_halves(tracks, junctions, RefineParams(side_by_side_parted_m=6.0))
    assert len(south) == 2
    assert np.hypot(*(south[0] - [-3.5, 0.0])) < 1.5
    assert np.hypot(*(south[1] - [3.5, 0.0])) < 1.5


def test_a_junction_fused_across_carriageways_grouped_as_one_street_splits_on_each() -> None:
    tracks, junctions = _carriageways_grouped_as_one_street()
    segments, streets = _cut_at(tracks, junctions)
    between = [st for st in streets if {st.a, st.b} == {0, 1}]
    assert len(between) == 1  # the two carriageways: one street, one arm line at each node
    # off: four arm lines at the south node, under side_by_side_arms, and no gap test fires
    off = RefineParams(side_by_side_parted_m=None)
    halves, _ = split_side_by_side(tracks, junctions, segments, streets, off)
    assert len(halves) == len(junctions)
    _assert_split_on_each_carriageway(tracks, junctions)


def test_an_arm_of_two_lines_not_parallel_is_not_parted_for_the_side_by_side_split() -> None:
    # the two lines 13 m apart at the south node, crossing 5 m short of the north one, 13.5
    # degrees apart (over side_by_side_parted_deg, 7): a fork's branches grouped as one street
    # (Helsinki coverage seeds 1 and 2, 14-21 degrees), not two carriageways
    tracks, junctions = _carriageways_grouped_as_one_street()
    tracks[2] = _walk([(-6.5, 0.5), (0.5, 59.5)], "west branch")
    tracks[3] = _walk([(-0.5, 59.5), (6.5, 0.5)], "east branch")
    segments, streets = _cut_at(tracks, junctions)
    assert len([st for st in streets if {st.a, st.b} == {0, 1}]) == 1
    parted = RefineParams(side_by_side_parted_m=6.0)
    halves, _ = split_side_by_side(tracks, junctions, segments, streets, parted)
    assert np.allclose(halves, junctions)
    wider = RefineParams(side_by_side_parted_m=6.0, side_by_side_parted_deg=15.0)
    halves, _ = split_side_by_side(tracks, junctions, segments, streets, wider)
    assert len(halves) == 3


def test_a_junction_fused_onto_one_carriageway_splits_with_the_nearer_line_close() -> None:
    # the votes put the fused junction 0.7 m off the west carriageway, 6.3 m off the east
    tracks, _ = _carriageways_grouped_as_one_street()
    junctions = np.array([[-2.8, 0.0], [0.0, 60.0]])
    segments, streets = _cut_at(tracks, junctions)
    through = RefineParams(side_by_side_parted_m=6.0, side_by_side_parted_through_m=2.5)
    halves, _ = split_side_by_side(tracks, junctions, segments, streets, through)
    assert len(halves) == len(junctions)
    _assert_split_on_each_carriageway(tracks, junctions)


def _bent_arm_junction(params: RefineParams, *, noise_m: float = 0.1) -> bool:
    # a stem from the west; an arm east that turns south 14 m out (its line 3-18 m out cuts
    # across the corner, about 135 degrees) and a diagonal at 150 degrees: 15 degrees apart by
    # their full lines, 60 by the bent arm's first 10 m; walked with 0.1 m of noise, as the
    # build's clarified passes run (bent_arm_across_m)
    diagonal = (60 * np.sin(np.radians(150)), 60 * np.cos(np.radians(150)))
    bent = [(0.0, 0.0), (14.0, 0.0), (14.0, -60.0)]
    tracks = [
        noisy_walk([(-60, 0), *bent], "stem to the bent arm", noise_m=noise_m),
        noisy_walk([(-60, 0), (0, 0), diagonal], "stem to the diagonal", noise_m=noise_m),
        noisy_walk([diagonal, *bent], "diagonal to the bent arm", noise_m=noise_m),
    ]
    junctions = np.array([[0.0, 0.0]])
    dead_xy, events = find_dead_ends(tracks, junctions)
    segments = cut_tracks(tracks, junctions, events, dead_end_xy=dead_xy)
    streets, _ = group_streets(tracks, segments)
    _, branching = refine_junctions(tracks, junctions, segments, streets, params)
    return bool(branching[0])


BENT_ARM = RefineParams(bent_arm_near_m=10.0)
"""The measured setting of the bent-arm rule (off by default)."""


def test_a_junction_whose_arm_bends_near_it_goes_three_ways_by_the_arm_s_nearer_line() -> None:
    assert _bent_arm_junction(BENT_ARM)


def test_a_junction_whose_arm_bends_near_it_is_dropped_with_bent_arm_near_m_off() -> None:
    assert not _bent_arm_junction(RefineParams(bent_arm_near_m=None))


def test_a_bent_arm_whose_first_metres_scatter_gives_no_nearer_line() -> None:
    # 0.5 m of noise: the near poses spread wider than bent_arm_across_m, no line to trust
    assert not _bent_arm_junction(BENT_ARM, noise_m=0.5)
    assert _bent_arm_junction(replace(BENT_ARM, bent_arm_across_m=1.0), noise_m=0.5)


def test_bent_arm_defaults() -> None:
    assert RefineParams().bent_arm_near_m is None
    assert RefineParams().bent_arm_deg == 20.0
    assert RefineParams().bent_arm_across_m == 0.25


def _at(
    bearing_deg: float, distance_m: float, base: tuple[float, float] = (0.0, 0.0)
) -> tuple[float, float]:
    rad = np.radians(bearing_deg)
    return (base[0] + distance_m * float(np.sin(rad)), base[1] + distance_m * float(np.cos(rad)))


def _tee_with_an_arm_to_a_dead_end() -> tuple[
    list[Track], np.ndarray, np.ndarray, list[Segment], list[Street]
]:
    """The old town knot's C (-19.5, 86.5) moved to the origin: arms east-south-east, to a
    junction B 12.7 m away at 224 degrees, and a line at 248 degrees, 3 m off the T, to a
    video's start 10 m out (a dead end). The two west arms lie 21 degrees apart, the third
    line does not pass through the T (no fork): one way unless their far nodes say two."""
    b = _at(224.0, 12.7)
    east = _at(119.0, 60.0)
    start = _at(338.0, 3.0, _at(248.0, 10.0))
    beside = _at(338.0, 3.0, _at(248.0, 3.0))
    tracks = [
        noisy_walk(
            [east, (0.0, 0.0), b, _at(224.0, 60.0, b)], "east arm, through the T and B", noise_m=0.2
        ),
        noisy_walk(
            [start, beside, (0.0, 0.0), east], "from the dead end, through the T, east", noise_m=0.2
        ),
        noisy_walk([_at(120.0, 50.0, b), b, _at(300.0, 50.0, b)], "across B", noise_m=0.2),
    ]
    junctions = np.array([(0.0, 0.0), b])
    # a cut of 4 m: in the old town the dead end lay 8.1 m from B, here the arms are straight
    dead_xy, events = find_dead_ends(tracks, junctions, JunctionParams(junction_clearance_m=4.0))
    segments = cut_tracks(
        tracks, junctions, events, SegmentParams(cut_radius_m=4.0), dead_end_xy=dead_xy
    )
    streets, _ = group_streets(tracks, segments)
    return tracks, junctions, dead_xy, segments, streets


def test_an_arm_to_a_dead_end_near_the_tee_is_a_way_of_its_own() -> None:
    # held-out old town coverage 8: (-19.5, 86.5) dropped by the branching check, its arms to
    # B and to a video's end 9.8 m off 24 degrees apart
    tracks, junctions, dead_xy, segments, streets = _tee_with_an_arm_to_a_dead_end()
    _, branching = refine_junctions(tracks, junctions, segments, streets, dead_xy=dead_xy)
    assert branching[0]


def test_with_knot_dead_ends_off_the_tee_goes_two_ways() -> None:
    tracks, junctions, dead_xy, segments, streets = _tee_with_an_arm_to_a_dead_end()
    params = RefineParams(knot_dead_ends=False)
    _, branching = refine_junctions(tracks, junctions, segments, streets, params, dead_xy=dead_xy)
    assert not branching[0]
    _, branching = refine_junctions(tracks, junctions, segments, streets)
    assert not branching[0]


def _jog(gap_m: float = 9.7) -> list[Track]:
    # Helsinki SE's (121.3, -36.4) / (131.0, -35.9): a street from the west ends in a jog;
    # at its west T a street leaves south, at the east T one north and one south-south-east
    # (18 degrees off the north street's line, too shallow to meet it). Only the through
    # street's line crosses the south street's: that place is met by one pair
    half = gap_m / 2.0
    west, east = (-half, 0.0), (half, 0.0)
    south, north = (-half, -60.0), (half, 60.0)
    sse = (half + 60.0 * np.cos(np.radians(-72.0)), 60.0 * np.sin(np.radians(-72.0)))
    return [
        _walk([(-60, 0), west, south], "west street to south"),
        _walk([(-60, 0), west, east, north], "west street to north"),
        _walk([(-60, 0), west, east, sse], "west street to south-south-east"),
        _walk([north, east, west, south], "north street across the jog to south"),
        _walk([south, west, east, sse], "south street across the jog to south-south-east"),
    ]


def test_a_jog_whose_south_street_meets_one_line_splits_on_each_with_split_lone_pair() -> None:
    jog = _jog()
    assert np.allclose(_split(jog, (0.0, 0.0), RefineParams(split_lone_pair=False)), [[0, 0]])
    found = _split(jog, (0.0, 0.0), RefineParams(split_lone_pair=True))
    assert len(found) == 2
    found = found[np.argsort(found[:, 0])]
    assert np.hypot(*(found[0] - [-4.85, 0.0])) < 1.0
    assert np.hypot(*(found[1] - [4.85, 0.0])) < 1.0


def test_a_plain_crossing_stays_one_junction_with_split_lone_pair() -> None:
    crossing = [
        _walk([(-60, 0), (0, 0), (60, 0)], "west to east"),
        _walk([(0, -60), (0, 0), (0, 60)], "south to north"),
        _walk([(-60, 0), (0, 0), (0, 60)], "west to north"),
        _walk([(0, -60), (0, 0), (60, 0)], "south to east"),
    ]
    found = _split(crossing, (0.0, 0.0), RefineParams(split_lone_pair=True))
    assert len(found) == 1


def test_place_min_pairs_is_two_by_default() -> None:
    assert RefineParams().place_min_pairs == 2


def test_a_jog_that_no_walker_crosses_stays_one_junction_with_split_lone_pair() -> None:
    # the lone pair's place is weak evidence: without a walker's jog across it, no split
    # (split_own_arms_beside does not stand in)
    uncrossed = _jog()[:3]
    found = _split(uncrossed, (0.0, 0.0), RefineParams(split_lone_pair=True))
    assert len(found) == 1


def test_split_lone_pair_is_on_by_default() -> None:
    assert RefineParams().split_lone_pair is True
    assert len(_split(_jog(), (0.0, 0.0))) == 2
