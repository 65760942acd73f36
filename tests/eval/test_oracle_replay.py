from __future__ import annotations

from pathlib import Path

import pytest

from city360.eval.oracle_replay import replay_oracle
from city360.tasks.families import get_family
from city360.tasks.suite import load_suite


def test_the_oracle_solves_every_generated_navigation_task_in_the_simulator(
    built_city: Path, built_suite: Path
) -> None:
    tasks = [t for t in load_suite(built_suite).tasks if get_family(t.family).navigation]
    assert tasks
    played: list[str] = []
    issues = replay_oracle(tasks, built_city, on_task=lambda task: played.append(task.id))
    assert issues == []
    assert played == [t.id for t in tasks]


def test_an_episode_the_oracle_does_not_solve_is_reported_with_how_it_ended(
    built_city: Path, built_suite: Path
) -> None:
    suite = load_suite(built_suite)
    task = next(t for t in suite.tasks if str(t.family) == "MapNavigation")
    tight = task.model_copy(update={"step_limit": 2})
    (issue,) = replay_oracle([tight, suite.tasks[0]], built_city)
    assert issue.task_id == task.id
    assert issue.field == "truth.goal"
    # two steps leave no walk to the goal: the oracle answers where it stands, and misses
    assert "not solved: ended by answered after 1 steps" in issue.message


def test_the_oracle_scores_spl_1_where_its_steps_end_past_the_goals_street_point(
    built_city: Path, built_suite: Path
) -> None:
    """The controller walks in 2 / 5 / 10 m steps: the fewest steps to a VLN goal beside the
    street can end a few centimetres past the goal's nearest street point, which is where the
    told route's length ends (the packaged demo city's vln-009: 94.97 m walked against
    94.90 m, SPL 0.999). L is then the oracle's walk, so the oracle solves it with SPL 1."""
    import math

    from city360.eval.oracle_path import oracle_path, route_length_m, spl_reference_m
    from city360.streets import StreetGraph

    graph = StreetGraph.open(built_city)
    vln = [t for t in load_suite(built_suite).tasks if str(t.family) == "VLN"]
    overshooting = None
    for task, tenth in ((t, k) for t in vln for k in range(400)):
        # slide the goal along the told route's last street, 2 m to its left
        route = list(task.truth.route)
        last = graph.segment(route[-1])
        if tenth / 10 > last.length_m - 1.0:
            continue
        (x, y), (ahead_x, ahead_y) = last.position(tenth / 10), last.position(tenth / 10 + 1.0)
        norm = math.hypot(ahead_x - x, ahead_y - y)
        side_x, side_y = -(ahead_y - y) / norm * 2.0, (ahead_x - x) / norm * 2.0
        goal = task.truth.goal.model_copy(update={"x_m": x + side_x, "y_m": y + side_y})
        moved = task.model_copy(update={"truth": task.truth.model_copy(update={"goal": goal})})
        told = route_length_m(graph, route, task.start.offset_m, (goal.x_m, goal.y_m))
        walk = oracle_path(graph, moved, move_m=(2.0, 5.0, 10.0))
        if told is None or walk.length_m is None or walk.segments != tuple(route):
            continue
        if walk.length_m > told + 0.05:
            overshooting = moved
            assert spl_reference_m(
                graph, moved, oracle_m=walk.length_m, oracle_segments=walk.segments
            ) == pytest.approx(walk.length_m)
            break
    assert overshooting is not None, "no goal beside a told route the oracle walks past"
    assert replay_oracle([overshooting], built_city) == []
