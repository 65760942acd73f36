from __future__ import annotations

import math

import networkx as nx
import pytest

from city360.eval.distance import StreetDistance
from city360.streets import StreetGraph


def _u_street() -> StreetGraph:
    """A(0,0) -> B(0,100) -> C(50,100) -> D(50,0): a U whose ends are 50 m apart."""
    graph = nx.MultiDiGraph()
    for node, (x, y) in enumerate([(0, 0), (0, 100), (50, 100), (50, 0)]):
        graph.add_node(node, x_m=float(x), y_m=float(y), kind="junction")
    for k, (u, v) in enumerate([(0, 1), (1, 2), (2, 3)]):
        a, b = graph.nodes[u], graph.nodes[v]
        length = math.dist((a["x_m"], a["y_m"]), (b["x_m"], b["y_m"]))
        graph.add_edge(u, v, key=f"e{k}", id=f"e{k}", length_m=length, transitions=[], twin=None)
    return StreetGraph.from_networkx(graph)


def test_walking_distance_falls_where_the_straight_line_rises() -> None:
    distance = StreetDistance(_u_street(), goal_xy=(50.0, 0.0))
    along_first = [distance("e0", offset) for offset in (0.0, 20.0, 40.0, 60.0)]
    assert along_first == pytest.approx([250.0, 230.0, 210.0, 190.0])
    straight = [math.hypot(50.0, y) for y in (0.0, 20.0, 40.0, 60.0)]
    assert straight == sorted(straight)  # the straight line says "away" at every step
    assert distance("e2", 90.0) == pytest.approx(10.0)
    assert distance("e2", 100.0) == pytest.approx(0.0)
