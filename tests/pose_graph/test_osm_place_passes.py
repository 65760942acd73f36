"""With OSM, a walk the map matching turns at an outer node of a knot is cut at the junction
standing for the knot (``osm_match.through_junction_passes``, ``by_place``;
``BuildParams.through_place_passes``).

The knot: node A (100, 0) of four streets, where the junction stands, and node C (112, 0) of
three, joined to A by two 6 m links through B (106, 0): one place (``node_groups``), C 12 m
from the junction, beyond ``merge_m`` and the cut radius. A walk comes west along C's east
street and turns north at C: it passes the junction 12 m off. Where another video starts at
C, on the street the turn's frame walks, the walk is cut at that start instead."""

from __future__ import annotations

import numpy as np

from city360.pose_graph.build import BuildParams
from city360.pose_graph.dead_ends import DeadEndEvent
from city360.pose_graph.osm_match import match_tracks, node_groups, through_junction_passes
from tests.pose_graph.walks import noisy_walk, osm_streets

STREETS = osm_streets(
    {0: (0, 0), 1: (100, 0), 2: (100, 100), 3: (100, -100), 4: (106, 0), 5: (112, 0),
     6: (212, 0), 7: (112, 100)},
    [(0, 1), (1, 2), (1, 3), (1, 4), (4, 5), (5, 6), (5, 7)],
)  # fmt: skip
JUNCTION = np.array([[100.0, 0.0]])
TURN = noisy_walk([(200, 0), (112, 0), (112, 90)], "turn", noise_m=0.3)


START = noisy_walk([(112, 1), (112, 90)], "start", noise_m=0.3)  # a video starting at C


def _passes(*, by_place: bool, start_at_c: bool = False) -> dict[int, list[tuple[int, int]]]:
    tracks = [TURN, START]
    ends = [[DeadEndEvent(1, 0, *map(float, START.xy[0]))]] if start_at_c else []
    return through_junction_passes(
        STREETS,
        tracks,
        match_tracks(STREETS, tracks),
        JUNCTION,
        reach_m=8.0,
        cut_radius_m=8.0,
        pass_m=14.99,
        by_place=by_place,
        dead_ends=ends,
    )


def test_the_knot_is_one_place_and_its_outer_node_beyond_reach_of_the_junction() -> None:
    place = node_groups(STREETS)
    assert place[1] == place[4] == place[5]
    assert np.hypot(*(STREETS.node_xy[5] - JUNCTION[0])) > 8.0


def test_a_turn_at_the_knots_outer_node_is_cut_at_the_knots_junction() -> None:
    ((frame, junction),) = _passes(by_place=True)[0]
    assert junction == 0
    assert np.hypot(*(TURN.xy[frame] - [112.0, 0.0])) < 2.0  # the turn's nearest pose


def test_without_the_place_the_turn_is_left_uncut() -> None:
    assert _passes(by_place=False) == {}


def test_a_turn_cut_at_another_videos_start_at_the_outer_node_is_not_cut_twice() -> None:
    assert 0 in _passes(by_place=True)
    assert 0 not in _passes(by_place=True, start_at_c=True)


def test_the_build_reads_the_knots_place_by_default() -> None:
    assert BuildParams().through_place_passes is True  # on: measured, round thirty-five
