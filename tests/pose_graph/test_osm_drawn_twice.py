"""An OSM way drawn twice between the same nodes along nearly one line counts once
(``osm_match.DRAWN_ONCE``): a park footway and a cycleway 5 m beside it that leave and rejoin
at the same two nodes."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from city360.pose_graph import osm_match
from city360.pose_graph.osm_match import (
    OsmStreets,
    osm_junction_candidates,
    streets_from_graph,
)
from city360.pose_graph.tracks import Track
from tests.pose_graph.walks import polyline_track

NODES = {1: (0.0, 60.0), 2: (0.0, 20.0), 3: (0.0, -20.0), 4: (0.0, -60.0)}


def _park(bow_m: float) -> OsmStreets:
    """A path north-south; between nodes 2 and 3 (40 m) drawn twice: straight, and bowed
    ``bow_m`` east at its middle (the second way leaves node 3 for node 2, as OSM may draw it)."""
    graph = nx.MultiGraph()
    for n, (x, y) in NODES.items():
        graph.add_node(n, x_m=x, y_m=y)
    graph.add_edge(1, 2, polyline_xy=[NODES[1], NODES[2]])
    graph.add_edge(2, 3, polyline_xy=[NODES[2], NODES[3]])
    bowed = [(0.0, -20.0), (bow_m * 0.8, -10.0), (bow_m, 0.0), (bow_m * 0.8, 10.0), (0.0, 20.0)]
    graph.add_edge(3, 2, polyline_xy=bowed)
    graph.add_edge(3, 4, polyline_xy=[NODES[3], NODES[4]])
    return streets_from_graph(graph, source="test")


def _walks() -> list[Track]:
    """One walk down each of the two ways between nodes 2 and 3."""
    west = polyline_track([(0.0, 60.0), (0.0, -60.0)], "west")
    east = polyline_track(
        [(0.0, 60.0), (0.0, 20.0), (4.0, 5.0), (4.0, -5.0), (0.0, -20.0), (0.0, -60.0)], "east"
    )
    return [west, east]


@pytest.fixture(autouse=True)
def _drawn_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(osm_match, "DRAWN_ONCE", True)  # on by default


def test_a_way_drawn_twice_along_one_line_is_kept_once() -> None:
    assert len(_park(5.0).edge_nodes) == 3
    assert len(_park(12.0).edge_nodes) == 4  # 7 m apart on average: two ways


def test_walks_down_a_way_drawn_twice_make_no_junctions_at_its_ends() -> None:
    assert osm_junction_candidates(_park(5.0), _walks()).shape == (0, 2)


def test_without_the_rule_both_ways_count_and_each_end_is_a_junction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(osm_match, "DRAWN_ONCE", False)
    park = _park(5.0)
    assert len(park.edge_nodes) == 4
    found = osm_junction_candidates(park, _walks())
    np.testing.assert_allclose(sorted(map(tuple, found)), [(0.0, -20.0), (0.0, 20.0)])
