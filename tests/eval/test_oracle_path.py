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


def test_the_yardstick_turns_round_when_the_goal_is_behind(
    built_city: Path, built_suite: Path
) -> None:
    """The oracle agent turns round onto the twin when that is fewer steps; L must too, or an
    agent that walked round the block scored SPL 1 against an equally long yardstick."""
    from city360.eval.oracle_path import oracle_path
    from city360.tasks.walk import oracle_walk

    graph = StreetGraph.open(built_city)
    task = next(t for t in load_suite(built_suite).tasks if str(t.family) == "MapNavigation")
    seg = max(
        (s for s in graph.segments.values() if graph.turned_round(s.id, 1.0)),
        key=lambda s: s.length_m,
    )
    start_offset = seg.length_m - 2.0
    x, y = seg.position(start_offset - 30.0)  # 30 m behind the start, on the same street
    goal = task.truth.goal.model_copy(update={"x_m": float(x), "y_m": float(y)})
    start = task.start.model_copy(update={"segment": seg.id, "offset_m": start_offset})
    behind = task.model_copy(
        update={
            "start": start,
            "truth": task.truth.model_copy(update={"goal": goal}),
            "step_limit": 60,
        }
    )
    ahead_only = oracle_walk(graph, (seg.id, start_offset), (x, y), goal.threshold_m * 0.5,
                             step_limit=60)  # fmt: skip
    walked_m = oracle_path(graph, behind, move_m=(2.0, 5.0, 10.0)).length_m
    assert walked_m is not None
    assert walked_m < 30.0 + 1.0  # turned round: at most the 30 m back (plus the slack)
    assert not ahead_only.reachable or ahead_only.path_m > 2 * walked_m
