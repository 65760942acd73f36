from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
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


def _graph(
    nodes: dict[int, tuple[float, float]],
    edges: list[tuple[str, int, int, list[tuple[float, float]]]],
) -> StreetGraph:
    """Segments with the given polylines (metres); lengths are the polylines' own."""
    graph = nx.MultiDiGraph()
    for node, (x, y) in nodes.items():
        graph.add_node(node, x_m=x, y_m=y, kind="junction")
    polylines = {}
    for seg_id, u, v, points in edges:
        length = sum(math.dist(a, b) for a, b in itertools.pairwise(points))
        graph.add_edge(u, v, key=seg_id, id=seg_id, length_m=length, transitions=[], twin=None)
        polylines[seg_id] = np.array(points, dtype=np.float64)
    return StreetGraph.from_networkx(graph, polylines=polylines)


def _ladder() -> StreetGraph:
    """Two parallel streets 30 m apart joined only at their ends: g (y=0) and h (y=30)."""
    corners = {0: (0.0, 0.0), 1: (200.0, 0.0), 2: (0.0, 30.0), 3: (200.0, 30.0)}
    return _graph(
        corners,
        [
            ("g", 0, 1, [corners[0], corners[1]]),
            ("h", 2, 3, [corners[2], corners[3]]),
            ("west", 0, 2, [corners[0], corners[2]]),
            ("east", 1, 3, [corners[1], corners[3]]),
        ],
    )


def test_walking_into_the_success_region_on_another_street_is_never_away() -> None:
    # The goal (100, 12) snaps to g (12 m off), but h passes 18 m from it: inside the 20 m
    # success disc for x in 100 +- 8.72. Walking east on h from its west end reaches that
    # region, while the walk to g's snapped point grows (back west, down, along g): the
    # map-017 failure.
    graph = _ladder()
    region = StreetDistance(graph, (100.0, 12.0), threshold_m=20.0)
    snapped = StreetDistance(graph, (100.0, 12.0))
    offsets = [0.0, 20.0, 40.0, 60.0, 80.0]
    to_region = [region("h", offset) for offset in offsets]
    entry = 100.0 - math.sqrt(20.0**2 - 18.0**2)
    assert to_region == pytest.approx([entry - offset for offset in offsets])
    assert [snapped("h", offset) for offset in offsets] == pytest.approx(
        [130.0 + offset for offset in offsets]
    )
    assert region("h", 95.0) == 0.0
    assert region("g", 100.0) == 0.0
    assert region("g", 60.0) == pytest.approx(100.0 - math.sqrt(20.0**2 - 12.0**2) - 60.0)
    # from the east end of h: 200 - 108.72 m along h, not round by g
    assert region("h", 200.0) == pytest.approx(200.0 - (100.0 + math.sqrt(20.0**2 - 18.0**2)))


def test_parallel_segments_between_the_same_nodes_keep_their_own_offsets() -> None:
    # "straight" and "arc" both run 0 -> 1; the goal lies on the arc's apex. Halfway along
    # the straight one, the goal is 50 m back (or on) to a node plus the arc's half, not the
    # 14 m difference of the two segments' offsets.
    ends = {0: (0.0, 0.0), 1: (100.0, 0.0)}
    graph = _graph(
        ends,
        [
            ("straight", 0, 1, [ends[0], ends[1]]),
            ("arc", 0, 1, [ends[0], (50.0, 40.0), ends[1]]),
        ],
    )
    half_arc = math.hypot(50.0, 40.0)
    distance = StreetDistance(graph, (50.0, 40.0))
    assert distance("arc", half_arc) == pytest.approx(0.0)
    assert distance("straight", 50.0) == pytest.approx(50.0 + half_arc)
