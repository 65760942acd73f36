"""The oracle's walk and the controller share one rule for a segment's end (err-009)."""

from __future__ import annotations

from types import SimpleNamespace

import networkx as nx
import pytest

from city360.agents.oracle import OracleAgent
from city360.simulator.controller import at_end
from city360.streets import StreetGraph
from city360.tasks.walk import oracle_walk

_STREET_M = 10.001
"""A street a millimetre longer than one LARGE step: W LARGE from its start stops 1 mm short
of the junction, inside the oracle's 1 cm offset grid but not at the controller's end."""


def _bend() -> StreetGraph:
    """Segment "a" runs east 10.001 m to a junction whose LEFT branch "b" runs 30 m north."""
    graph = nx.MultiDiGraph()
    for node, (x, y, kind) in enumerate(
        [(0.0, 0.0, "dead_end"), (_STREET_M, 0.0, "junction"), (_STREET_M, 30.0, "dead_end")]
    ):
        graph.add_node(node, x_m=x, y_m=y, kind=kind)
    left = [{"edge": "b", "turn_deg": -90.0, "label": "LEFT"}]
    graph.add_edge(0, 1, key="a", id="a", length_m=_STREET_M, transitions=left, twin=None)
    graph.add_edge(1, 2, key="b", id="b", length_m=30.0, transitions=[], twin=None)
    return StreetGraph.from_networkx(graph)


def test_branches_are_planned_only_where_the_controller_offers_them() -> None:
    graph = _bend()
    result = oracle_walk(graph, ("a", 0.0), (_STREET_M, 25.0), 1.0, step_limit=20)
    assert result.reachable
    assert len(result.states) == len(result.actions)
    turn = result.actions.index(("LEFT", None))
    # the W before the branch reaches the end exactly: 10.0 m would be "no branch here"
    before = result.states[turn - 1]
    assert before == ("a", _STREET_M)
    assert at_end(graph.segment("a"), before[1])
    assert result.steps == 2 + 1 + 3 + 1  # two W to the end, LEFT, 25 m in 3 W, ANSWER
    assert result.final == ("b", pytest.approx(25.0))


def test_a_plan_from_a_millimetre_before_the_end_walks_it_first() -> None:
    graph = _bend()
    result = oracle_walk(graph, ("a", 10.0), (_STREET_M, 25.0), 1.0, step_limit=20)
    assert result.actions[0] == ("W", "SMALL")
    assert result.states[0] == ("a", _STREET_M)
    assert result.actions[1] == ("LEFT", None)


def test_the_oracle_walks_every_waypoint_without_privileged_info() -> None:
    # Without observation["info"] the oracle cannot compare states, but it still plans the
    # next leg from where its plan leads instead of answering at the first waypoint.
    graph = _bend()
    goal = SimpleNamespace(x_m=_STREET_M, y_m=25.0, threshold_m=1.0)
    first = SimpleNamespace(x_m=5.0, y_m=0.0, threshold_m=1.0)
    task = SimpleNamespace(
        id="err-t",
        truth=SimpleNamespace(
            goal=goal, waypoints=[SimpleNamespace(goal=first), SimpleNamespace(goal=goal)]
        ),
        start=SimpleNamespace(segment="a", offset_m=0.0, yaw_deg=0.0),
        step_limit=20,
        expected_answer=lambda: "done",
    )
    agent = OracleAgent(graph=graph)
    agent.reset(task)
    actions = []
    for step in range(20):
        decision = agent.act({"step": step})
        actions.append(decision.command.action.value)
        if actions[-1] == "ANSWER":
            break
    assert actions[-1] == "ANSWER"
    assert "LEFT" in actions
