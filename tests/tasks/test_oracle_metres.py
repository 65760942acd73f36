"""The oracle's plan is the fewest controller steps and, among walks of that many steps, the
fewest metres (SPL measures an agent against it)."""

from __future__ import annotations

import networkx as nx
import pytest

from city360.streets import StreetGraph
from city360.tasks.walk import oracle_walk


def _diamond() -> nx.MultiDiGraph:
    """A 10 m street to a fork; LEFT is a 9 m street, RIGHT a 3 m one (each one W step to its
    end); both meet again at node 3, where UP leads on east to node 4."""
    graph = nx.MultiDiGraph()
    for node, (x, y) in enumerate([(0.0, 0.0), (10.0, 0.0), (12.0, 4.0), (13.0, 0.0), (40.0, 0.0)]):
        graph.add_node(node, x_m=x, y_m=y, kind="junction")
    edges = [
        ("in", 0, 1, 10.0, [("left", "LEFT", -60.0), ("right", "RIGHT", 30.0)]),
        ("left", 1, 3, 9.0, [("out", "RIGHT", 60.0)]),
        ("right", 1, 3, 3.0, [("out", "LEFT", -30.0)]),
        ("out", 3, 4, 27.0, []),
    ]
    for key, u, v, length, transitions in edges:
        graph.add_edge(
            u, v, key=key, id=key, length_m=length, twin=None,
            transitions=[{"edge": e, "label": lab, "turn_deg": t} for e, lab, t in transitions],
        )  # fmt: skip
    return graph


def test_of_two_walks_with_as_many_steps_the_shorter_is_planned() -> None:
    graph = StreetGraph.from_networkx(_diamond())
    result = oracle_walk(graph, ("in", 0.0), (25.0, 0.0), 2.0, step_limit=20)
    assert result.reachable
    # W to the fork, RIGHT (LEFT is as many steps), W to its end, LEFT onto "out", W east
    assert result.segments == ("in", "right", "out")
    assert result.path_m == pytest.approx(10.0 + 3.0 + 10.0, abs=0.05)
