"""A junction's cut gate with OSM admits the streets of every node of its place
(``osm_match.PLACE_GATE``): a crossing drawn as a node of three streets and, 3.3 m from it, a
node of two; a walk that turns back 2 m short of the node of two is cut at the junction."""

from __future__ import annotations

import pytest

from city360.geo import LocalProjection
from city360.pose_graph import PoseGraph, build_from_tracks, osm_match
from tests.pose_graph.walks import ORIGIN, noisy_walk, osm_streets

PROJECTION = LocalProjection(*ORIGIN)

# a crossing at (100, 0); a street east from it to node 2 (140, 0), of two streets: a 3.3 m
# link joins it to node 5 (143.3, 0), where a street north and one south meet
STREETS = osm_streets(
    {0: (0, 0), 1: (100, 0), 3: (100, -100), 4: (100, 100), 2: (140, 0), 5: (143.3, 0),
     6: (143.3, 100), 7: (143.3, -100)},
    [(0, 1), (1, 3), (1, 4), (1, 2), (2, 5), (5, 6), (5, 7)],
)  # fmt: skip


def _build() -> PoseGraph:
    tracks = [
        noisy_walk([(10, 0), (100, 0), (143.3, 0), (143.3, 90)], "through", noise_m=0.5),
        noisy_walk([(143.3, -90), (143.3, 90)], "south", noise_m=0.5),
        noisy_walk([(100, -90), (100, 90)], "cross", noise_m=0.5),
        # east from the crossing, back 2 m short of node 2, and north at the crossing
        noisy_walk([(10, 0), (100, 0), (138, 0), (100, 0), (100, 90)], "back", noise_m=0.5),
    ]
    return build_from_tracks(tracks, PROJECTION, osm=STREETS)


def _loops(graph: PoseGraph) -> list[int]:
    return [edge.street for edge in graph.edges() if edge.u == edge.v]


def test_a_turn_back_short_of_a_node_of_the_junctions_place_makes_no_loop_street(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(osm_match, "PLACE_GATE", True)  # on by default
    assert _loops(_build()) == []


def test_without_the_rule_the_turn_back_is_a_loop_street_from_the_crossing_to_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(osm_match, "PLACE_GATE", False)
    assert _loops(_build()) != []
