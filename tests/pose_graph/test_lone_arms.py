"""A junction one of whose streets no pass leaves it by, that street running beside the
passes through it: dropped, and those passes left uncut at its dead end (no OSM)."""

from __future__ import annotations

from collections import Counter

import numpy as np

from city360.pose_graph.build import BuildParams, _cut
from city360.pose_graph.lone_arms import LoneArmParams, lone_arm_junctions
from city360.pose_graph.segments import Street
from city360.pose_graph.tracks import Track
from tests.pose_graph.walks import polyline_track

_SWING_M = 3.5  # GPS drawing the two streets together where the dead-end street ends
_THROUGH = [(-80.0, 0.0), (-30.0, 0.0), (-22.0, -_SWING_M), (-14.0, 0.0), (80.0, 0.0)]
_FALSE_XY = (-22.0, -3.0)  # the vote pile between the two streets


def _tracks(lone_way: list[tuple[float, float]]) -> list[Track]:
    """A through street along y = 0 and a cross street along x = 0, each walked both ways,
    and two walkers who come down the cross street, walk ``lone_way`` and go on."""
    return [
        polyline_track(_THROUGH, "through east"),
        polyline_track(_THROUGH[::-1], "through west"),
        polyline_track([(0.0, 60.0), (0.0, -60.0)], "cross south"),
        polyline_track([(0.0, -60.0), (0.0, 60.0)], "cross north"),
        polyline_track([(0.0, 60.0), *lone_way, (0.0, -60.0)], "lone street, out and back"),
        polyline_track([(0.0, -60.0), *lone_way, (0.0, 60.0)], "lone street again"),
    ]


# Kamppi (-155, -10): a dead-end street 5.5 m beside the through street (by GPS), from the
# cross street to its end, where the walkers turn back
_BESIDE = [(0.0, -5.5), (-14.0, -5.5), (-22.0, -5.5 + _SWING_M), (-14.0, -5.5), (0.0, -5.5)]


def _streets_near(
    junctions_xy: np.ndarray, dead_xy: np.ndarray, streets: list[Street], point: tuple[float, float]
) -> int:
    """How many street ends meet at the node nearest ``point`` (within 8 m), 0 when none."""
    nodes = np.concatenate([junctions_xy.reshape(-1, 2), dead_xy.reshape(-1, 2)])
    gaps = np.hypot(*(nodes - np.asarray(point)).T)
    if gaps.min() > 8.0:
        return 0
    node = int(gaps.argmin())
    ends = Counter(end for street in streets for end in (street.a, street.b))
    return ends[node]


def _first_cut(tracks: list[Track]) -> tuple:
    junctions_xy = np.array([[0.0, 0.0], [0.0, -5.5], list(_FALSE_XY)])
    return _cut(tracks, junctions_xy, BuildParams())


def test_a_dead_end_street_beside_the_through_street_is_no_junction() -> None:
    tracks = _tracks(_BESIDE)
    dead_xy, junctions_xy, segments, streets, _ = _first_cut(tracks)
    assert _streets_near(junctions_xy, dead_xy, streets, _FALSE_XY) == 3  # the old build
    lone = lone_arm_junctions(tracks, junctions_xy, segments, streets, LoneArmParams())
    assert lone.dropped.tolist() == [False, False, True]
    assert {track for track, _, _ in lone.passes} == {0, 1}
    # dropped alone, the dead-end street's end cuts the through passes: a junction again
    dead_xy, kept_xy, _, streets, _ = _cut(tracks, junctions_xy[~lone.dropped], BuildParams())
    assert _streets_near(kept_xy, dead_xy, streets, _FALSE_XY) == 3
    # held uncut there, the end is a dead end of its one street
    dead_xy, kept_xy, _, streets, _ = _cut(
        tracks, junctions_xy[~lone.dropped], BuildParams(), lone=lone
    )
    assert _streets_near(kept_xy, dead_xy, streets, _FALSE_XY) == 1


def test_a_branch_that_leaves_the_through_street_is_kept() -> None:
    """A fork's branch at 35 degrees walked from its far end to the fork and back: no pass
    leaves it into another street either, but it leaves the through street's passes (11 m
    off 20 m on), so it is no street beside them."""
    branch = [(-60.0, -30.0), (-22.0, -3.0), (-60.0, -30.5)]
    tracks = [
        *_tracks(_BESIDE)[:4],
        polyline_track(branch, "branch, to the fork and back"),
        polyline_track(branch, "branch again"),
    ]
    _, junctions_xy, segments, streets, _ = _cut(
        tracks, np.array([[0.0, 0.0], list(_FALSE_XY)]), BuildParams()
    )
    lone = lone_arm_junctions(tracks, junctions_xy, segments, streets, LoneArmParams())
    assert not lone.dropped.any()
    assert lone.passes == ()
    wide = lone_arm_junctions(tracks, junctions_xy, segments, streets, LoneArmParams(beside_m=30.0))
    assert wide.dropped.tolist() == [False, True]  # kept by the way it leaves


def test_a_street_reached_once_is_kept() -> None:
    """The two walkers' U-turns reach the junction four times; asking five (``min_ends``)
    keeps it."""
    tracks = _tracks(_BESIDE)
    _, junctions_xy, segments, streets, _ = _first_cut(tracks)
    params = LoneArmParams(min_ends=5)
    lone = lone_arm_junctions(tracks, junctions_xy, segments, streets, params)
    assert not lone.dropped.any()


def test_the_rule_is_on_by_default() -> None:
    assert BuildParams().lone_arm_params == LoneArmParams()
    assert LoneArmParams().single_end_off_m == 3.0  # a street met once, beside: on


# Kamppi one-way 7 (-163, -14): one walker passes along the through street; another's video
# starts at the dead-end street's end, 3 m beside it by GPS, and walks that street (5.5 m
# beside the through street) to where it bends down to the cross street
_ONCE_START = (-30.0, -3.0)
_ONCE = [_ONCE_START, (-25.0, -5.5), (-8.0, -5.5), (0.0, -12.0), (0.0, -60.0)]
_ONCE_JUNCTIONS = np.array([[0.0, 0.0], [0.0, -12.0]])


def _once_tracks(lone_way: list[tuple[float, float]]) -> list[Track]:
    """The through street along y = 0 walked once, the cross street along x = 0 walked both
    ways, and one video along ``lone_way`` from its first point."""
    return [
        polyline_track([(-80.0, 0.0), (80.0, 0.0)], "through, once"),
        polyline_track([(0.0, 60.0), (0.0, -60.0)], "cross south"),
        polyline_track([(0.0, -60.0), (0.0, 60.0)], "cross north"),
        polyline_track(lone_way, "a video from the lone street's end"),
    ]


_SINGLE = LoneArmParams(single_end_off_m=3.0)


def test_a_video_start_beside_the_through_street_is_no_dead_end_of_three() -> None:
    tracks = _once_tracks(_ONCE)
    dead_xy, junctions_xy, segments, streets, _ = _cut(tracks, _ONCE_JUNCTIONS, BuildParams())
    assert _streets_near(junctions_xy, dead_xy, streets, _ONCE_START) == 3  # the old build
    off = LoneArmParams(single_end_off_m=None)
    assert lone_arm_junctions(tracks, junctions_xy, segments, streets, off).passes == ()
    lone = lone_arm_junctions(tracks, junctions_xy, segments, streets, _SINGLE)
    assert not lone.dropped.any()  # a dead end: nothing to drop, the pass is held
    assert {track for track, _, _ in lone.passes} == {0}
    dead_xy, junctions_xy, _, streets, _ = _cut(tracks, _ONCE_JUNCTIONS, BuildParams(), lone=lone)
    assert _streets_near(junctions_xy, dead_xy, streets, _ONCE_START) == 1


def test_a_junction_met_once_by_a_street_beside_the_through_street_is_dropped() -> None:
    """Kamppi one-way 13: the votes put a junction at the video's start."""
    tracks = _once_tracks(_ONCE)
    given = np.concatenate([_ONCE_JUNCTIONS, [list(_ONCE_START)]])
    _, junctions_xy, segments, streets, _ = _cut(tracks, given, BuildParams())
    assert not lone_arm_junctions(
        tracks, junctions_xy, segments, streets, LoneArmParams(single_end_off_m=None)
    ).dropped.any()
    lone = lone_arm_junctions(tracks, junctions_xy, segments, streets, _SINGLE)
    assert lone.dropped.tolist() == [False, False, True]


def test_a_stem_or_a_branch_met_once_is_kept() -> None:
    """A T's stem and a fork's branch at 25 degrees whose one video starts at the junction
    leave the through street (10 m and 4.2 m off 10 m on, 8.5 m 20 m on)."""
    branch = 20.0 * np.array([-np.cos(np.radians(25.0)), -np.sin(np.radians(25.0))])
    for way in (
        [(-30.0, 0.0), (-30.0, -60.0)],
        [(-30.0, 0.0), (-30.0 + 3 * branch[0], 3 * branch[1])],
    ):
        tracks = _once_tracks(way)
        given = np.array([[0.0, 0.0], [-30.0, 0.0]])
        _, junctions_xy, segments, streets, _ = _cut(tracks, given, BuildParams())
        lone = lone_arm_junctions(tracks, junctions_xy, segments, streets, _SINGLE)
        assert not lone.dropped.any()
        assert lone.passes == ()
        wide = LoneArmParams(single_end_off_m=0.0, single_end_beside_m=100.0)
        lone = lone_arm_junctions(tracks, junctions_xy, segments, streets, wide)
        assert lone.dropped.tolist() == [False, True]  # kept by the way it leaves
