"""L of SPL: the instructed route only where the family instructs one (VLN); elsewhere the
oracle's walk, even when the task records the generator's route (map navigation)."""

from __future__ import annotations

from pathlib import Path

from city360.eval.oracle_path import route_length_m, spl_reference_m
from city360.streets import StreetGraph
from city360.tasks.suite import load_suite


def test_only_an_instructed_route_is_the_yardstick(built_city: Path, built_suite: Path) -> None:
    graph = StreetGraph.open(built_city)
    tasks = load_suite(built_suite).tasks
    mapnav = next(t for t in tasks if str(t.family) == "MapNavigation" and t.truth.route)
    vln = next(t for t in tasks if str(t.family) == "VLN" and t.truth.route)
    # map navigation's recorded route is how the generator found the goal, not what the agent
    # is told: the oracle's walk (here a stand-in length) is L
    assert spl_reference_m(graph, mapnav, oracle_m=123.0) == 123.0
    goal = vln.truth.goal
    told_route = route_length_m(graph, vln.truth.route, vln.start.offset_m, (goal.x_m, goal.y_m))
    assert told_route is not None
    assert spl_reference_m(graph, vln, oracle_m=123.0) == told_route
