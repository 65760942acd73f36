from __future__ import annotations

import numpy as np
import pytest

from city360.pose_graph.dead_ends import find_dead_ends
from city360.pose_graph.junction_params import JunctionParams
from city360.pose_graph.junctions import find_junctions
from city360.pose_graph.segments import cut_tracks, group_streets
from city360.pose_graph.tracks import Track, make_track


def _line(
    start: tuple[float, float], end: tuple[float, float], name: str, *, noise: float = 0.3
) -> Track:
    rng = np.random.default_rng(sum(map(ord, name)))
    a, b = np.asarray(start, float), np.asarray(end, float)
    n = int(np.hypot(*(b - a))) + 1
    xy = a + np.linspace(0.0, 1.0, n)[:, None] * (b - a) + rng.normal(0, noise, (n, 2))
    return make_track(name, xy, spacing_m=1.0, frame_count=n)


def test_crossing_tracks_make_one_junction_at_the_crossing() -> None:
    tracks = [_line((-60, 0), (60, 0), "ew"), _line((3, -60), (3, 60), "sn")]
    junctions, _ = find_junctions(tracks)
    assert junctions.shape == (1, 2)
    assert np.hypot(*(junctions[0] - [3.0, 0.0])) < 2.0


def test_track_ending_short_of_another_is_a_t_junction() -> None:
    # the stem stops 6 m before the bar: GPS never shows them touching
    tracks = [_line((-60, 0), (60, 0), "bar"), _line((0, 70), (0, 6), "stem")]
    junctions, _ = find_junctions(tracks)
    assert junctions.shape == (1, 2)
    assert np.hypot(*junctions[0]) < 3.0


def test_same_street_both_directions_is_no_junction() -> None:
    tracks = [_line((0, 0), (100, 10), "there"), _line((100, 12), (0, 2), "back")]
    junctions, _ = find_junctions(tracks)
    assert len(junctions) == 0


def test_opposite_passes_merge_into_one_street_with_two_directions() -> None:
    tracks = [
        _line((-60, 0), (60, 0), "ew"),
        _line((60, 2), (-60, 2), "we"),
        _line((0, -60), (0, 60), "sn"),
    ]
    junctions, _ = find_junctions(tracks)
    dead_xy, events = find_dead_ends(tracks, junctions)
    assert len(junctions) == 1
    assert len(dead_xy) == 4  # the four open ends
    segments = cut_tracks(tracks, junctions, events)
    streets, _ = group_streets(tracks, segments)
    assert len(streets) == 4
    both_ways = [s for s in streets if s.forward and s.backward]
    assert len(both_ways) == 2  # east and west arms were filmed both ways


def test_two_videos_the_same_way_are_one_street_direction() -> None:
    tracks = [
        _line((-60, 0), (60, 0), "first"),
        _line((-60, 1.5), (60, 1.0), "second"),
        _line((0, -60), (0, 60), "cross"),
    ]
    junctions, _ = find_junctions(tracks)
    dead_xy, events = find_dead_ends(tracks, junctions)
    segments = cut_tracks(tracks, junctions, events, dead_end_xy=dead_xy)
    streets, _ = group_streets(tracks, segments)
    assert len(streets) == 4
    east_west = [s for s in streets if len(s.forward) + len(s.backward) == 2]
    assert len(east_west) == 2  # both videos of each arm share one street, one direction
    for street in east_west:
        assert sorted((len(street.forward), len(street.backward))) == [0, 2]


@pytest.mark.parametrize("gap_m", [3.0, 6.0])
def test_staggered_crossing_a_few_metres_apart_is_one_junction(gap_m: float) -> None:
    """Side streets meeting a main street a few metres apart make one node, never a walkable
    segment of a few metres between two junctions (shorter than a W step)."""
    tracks = [
        _line((-60, 0), (60, 0), "main"),
        _line((0, 60), (0, 1), "north"),
        _line((gap_m, -60), (gap_m, -1), "south"),
    ]
    junctions, _ = find_junctions(tracks)
    assert junctions.shape == (1, 2)
    assert -1.0 < junctions[0][0] < gap_m + 1.0


def test_milling_about_at_the_end_of_filming_makes_no_loop_streets() -> None:
    from city360.pose_graph.segments import SegmentParams

    # along a street to its end at (0, 0), then three 31 m circles of GPS jitter through it
    angle = np.linspace(0.0, 6 * np.pi, 94)
    circles = np.column_stack([5.0 * np.sin(angle), 5.0 - 5.0 * np.cos(angle)])
    approach = np.column_stack([np.linspace(-60.0, 0.0, 61)[:-1], np.zeros(60)])
    xy = np.concatenate([approach, circles])
    track = make_track("stands", xy, spacing_m=1.0, frame_count=len(xy))
    junctions = np.array([[0.0, 0.0]])  # where the loops start and end
    dead_xy, events = find_dead_ends([track], junctions)
    loops = SegmentParams(loop_reach_m=0.0)
    with_loops = cut_tracks([track], junctions, events, loops, dead_end_xy=dead_xy)
    assert any(s.u == s.v for s in with_loops)  # the rule is what removes them
    segments = cut_tracks([track], junctions, events, dead_end_xy=dead_xy)
    assert not any(s.u == s.v for s in segments)


def _kinked(name: str, y_m: float, toward: float, *, reverse: bool = False) -> Track:
    """A straight pass along y = ``y_m`` whose GPS swings 2.5 m ``toward`` (+1 north, -1
    south) and back over 12 m around x = 0: its local heading turns 23 degrees each way."""
    x = np.arange(-60.0, 60.5, 1.0)
    if reverse:
        x = x[::-1]
    xy = np.column_stack([x, y_m + toward * 2.5 * np.clip(1.0 - np.abs(x) / 6.0, 0.0, None)])
    return make_track(name, xy, spacing_m=1.0, frame_count=len(x))


def test_passes_on_streets_side_by_side_cast_no_votes_with_vote_chord_m() -> None:
    """Two parallel streets 8 m apart, one pass each, whose GPS swings toward each other
    at the same place (unseen Kamppi coverage camera 6 near (-147, -4)): the local headings
    differ by up to 45 degrees, so the passes voted for a junction between the streets.
    Their chords over 8 m either way run side by side 4 m or more apart: with
    ``vote_chord_m`` they cast no votes. A crossing keeps its votes."""
    from dataclasses import replace

    from city360.pose_graph.junction_params import JunctionParams
    from city360.pose_graph.junctions import crossing_votes

    side_by_side = [_kinked("north", 0.0, -1.0), _kinked("south", -8.0, 1.0, reverse=True)]
    local = JunctionParams(vote_chord_m=None)
    chords = replace(local, vote_chord_m=8.0)
    assert len(crossing_votes(side_by_side, local, without_osm=True)) > 20
    assert len(crossing_votes(side_by_side, chords, without_osm=True)) == 0
    assert len(crossing_votes(side_by_side, chords)) > 20  # with OSM: the local headings

    crossing = [_line((-60, 0), (60, 0), "ew"), _line((3, -60), (3, 60), "sn")]
    before = len(crossing_votes(crossing, local, without_osm=True))
    assert len(crossing_votes(crossing, chords, without_osm=True)) == before > 0
    assert JunctionParams().vote_chord_m is None


def test_a_root_on_one_street_leaves_two_ways_and_at_a_fork_three() -> None:
    """``root_apart_ways`` reads the ways the passes leave a far root by: a street walked
    both ways through it is two (a walker's turn-back beside a junction), a pass turning
    off it north makes three (a fork's arms)."""
    from city360.pose_graph.junctions import _ways

    params = JunctionParams()
    street = [_line((-40, 0), (40, 0), "east"), _line((40, 0.5), (-40, 0.5), "west")]
    assert _ways(street, np.array([0.0, 0.0]), params) == 2
    fork = _line((-40, 0), (0, 0), "in")
    turned = make_track(
        "turned",
        np.concatenate([fork.xy, np.column_stack([np.zeros(40), np.arange(1.0, 41.0)])]),
        spacing_m=1.0,
        frame_count=len(fork.xy) + 40,
    )
    assert _ways([*street, turned], np.array([0.0, 0.0]), params) == 3
