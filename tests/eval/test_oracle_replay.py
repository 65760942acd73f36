from __future__ import annotations

from pathlib import Path

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
