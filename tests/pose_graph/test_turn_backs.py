"""A U-turn mid-street casts no crossing votes (``JunctionParams.quiet_turn_backs``).

A street runs west-east through a T at the origin (a side street leaves it south); two
walkers walk it end to end both ways, a third comes up the side street and turns east. A
fourth comes along the street from the west and turns back before the T, on the other
sidewalk. While that walker turns, its heading sweeps across the street and its samples vote
with the passes walking on: a junction where no street leaves (tokyo-oldtown wander seed 0
at (-104.6, 122.5), 11 m from a T, round twenty-six).
"""

from __future__ import annotations

import numpy as np
import pytest

from city360.pose_graph.junction_params import JunctionParams
from city360.pose_graph.junctions import find_junctions, mid_street_turns
from city360.pose_graph.track_turns import spur_roots
from city360.pose_graph.tracks import Track, sample_tracks
from tests.pose_graph.walks import noisy_walk

QUIET = JunctionParams(quiet_turn_backs=True)


def _street(turn_x: float) -> list[Track]:
    """The T's walkers and one turning back ``turn_x`` metres east of the street's west end
    at (-100, 0) (negative: west of the T)."""
    return [
        noisy_walk([(-100, 0), (100, 0)], "east", noise_m=0.3),
        noisy_walk([(100, 1), (-100, 1)], "west", noise_m=0.3),
        noisy_walk([(0, -80), (0, 0), (100, 0)], "up", noise_m=0.3),
        noisy_walk(
            [(-100, -1), (turn_x, -1), (turn_x + 2, -3), (turn_x, -5), (-100, -5)],
            "back",
            noise_m=0.3,
        ),
    ]


def _near(junctions: np.ndarray, x: float, y: float, radius_m: float = 5.0) -> bool:
    return bool(len(junctions)) and bool(
        (np.hypot(junctions[:, 0] - x, junctions[:, 1] - y) < radius_m).any()
    )


@pytest.mark.parametrize("turn_x", [-14.0, -20.0, -30.0])
def test_a_turn_back_mid_street_makes_no_junction(turn_x: float) -> None:
    tracks = _street(turn_x)
    built, _ = find_junctions(tracks, JunctionParams(quiet_turn_backs=False), without_osm=True)
    assert _near(built, turn_x + 2, 0.0)  # the turn's votes: a junction mid-street
    quiet, _ = find_junctions(tracks, QUIET, without_osm=True)
    assert not _near(quiet, turn_x + 2, 0.0)
    assert _near(quiet, 0.0, 0.0)  # the T stays


def test_a_turn_back_at_the_end_of_a_street_keeps_its_votes() -> None:
    """Nobody walks on beyond the apex: the street may end there, the turn is all there is."""
    tracks = [
        noisy_walk([(-100, 0), (60, 0)], "east", noise_m=0.3),
        noisy_walk([(100, -3), (80, -3), (78, -5), (80, -7), (100, -7)], "back", noise_m=0.3),
    ]
    samples = sample_tracks(tracks, QUIET.sample_step_m)
    assert not (mid_street_turns(tracks, samples, QUIET) >= 0).any()


def test_a_stub_walked_in_and_out_keeps_its_root() -> None:
    """Into a 12 m stub off the street and back out: the turn is at the stub's end, nobody
    walks on beyond it, and the stub's root is a junction as before."""
    stub = noisy_walk(
        [(-100, 0), (0, 0), (0, 12), (2, 14), (4, 12), (4, 2), (100, 2)], "stub", noise_m=0.2
    )
    tracks = [noisy_walk([(100, -1), (-100, -1)], "west", noise_m=0.3), stub]
    roots = spur_roots(tracks, QUIET)
    built, _ = find_junctions(tracks, QUIET, without_osm=True)
    assert len(roots) == 1
    assert _near(built, 2.0, 0.0, 6.0)


def test_a_turn_back_beside_a_crossing_street_keeps_its_votes() -> None:
    """A street crosses within ``turn_back_clear_m`` of the apex: the turn's votes may be that
    junction's (old town seed 0: a U-turn 15 m from a pair of Ts placed them)."""
    tracks = _street(-8.0)
    samples = sample_tracks(tracks, QUIET.sample_step_m)
    assert not (mid_street_turns(tracks, samples, QUIET) >= 0).any()
    assert (mid_street_turns(tracks, samples, JunctionParams(turn_back_clear_m=0.0)) >= 0).any()


def _sharp_corner() -> list[Track]:
    """A street west-east walked both ways; a walker comes along it from the east and turns
    sharply (143 degrees) at x = 0 into a street leaving east-south-east that only it walks:
    a corner at a T, not a turn back (Helsinki one-way seed 1, walk_023)."""
    return [
        noisy_walk([(-100, 0), (100, 0)], "east", noise_m=0.3),
        noisy_walk([(100, 1), (-100, 1)], "west", noise_m=0.3),
        noisy_walk([(100, -1), (0, -1), (80, -61)], "corner", noise_m=0.3),
    ]


def test_a_sharp_corner_into_another_street_is_no_turn_back() -> None:
    tracks = _sharp_corner()
    samples = sample_tracks(tracks, QUIET.sample_step_m)
    assert not (mid_street_turns(tracks, samples, QUIET) >= 0).any()
    same_street_off = JunctionParams(quiet_turn_backs=True, turn_back_same_street=False)
    assert (mid_street_turns(tracks, samples, same_street_off) >= 0).any()


def test_a_turn_back_crossing_the_walkers_own_other_pass_keeps_its_votes() -> None:
    """The street that crosses 8 m from the apex is walked only by the turning walker, on
    another pass of its video (a route walk crosses each street once): that pass counts."""
    route = noisy_walk(
        [(0, -80), (0, 0), (-100, 0), (-100, -1), (-8, -1), (-6, -3), (-8, -5), (-100, -5)],
        "route",
        noise_m=0.3,
    )
    tracks = [*_street(-8.0)[:2], route]
    samples = sample_tracks(tracks, QUIET.sample_step_m)
    assert not (mid_street_turns(tracks, samples, QUIET) >= 0).any()


def test_a_walker_turning_back_and_forth_is_milling_not_turning_back() -> None:
    """Three turns 6-8 m apart on the street beside the T: a walker milling about at a stop
    (Helsinki wander+stops seed 5, walk_010 in a dead-end street); alone, the last is a
    turn back mid-street."""
    mill = noisy_walk(
        [
            (-100, -1),
            (-30, -1),
            (-28, -3),
            (-30, -5),
            (-38, -5),
            (-40, -3),
            (-38, -1),
            (-22, -1),
            (-20, -3),
            (-22, -5),
            (-100, -5),
        ],
        "mill",
        noise_m=0.3,
    )
    tracks = [*_street(-60.0)[:3], mill]
    samples = sample_tracks(tracks, QUIET.sample_step_m)
    assert not (mid_street_turns(tracks, samples, QUIET) >= 0).any()
    alone_off = JunctionParams(quiet_turn_backs=True, turn_back_alone=False)
    assert (mid_street_turns(tracks, samples, alone_off) >= 0).any()


def test_quiet_turn_backs_is_on_by_default() -> None:
    assert JunctionParams().quiet_turn_backs is True
