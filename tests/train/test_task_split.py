"""Held-out tasks are never training tasks."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from city360.errors import TaskError
from city360.train.task_split import select, split_tasks


def task(segment: str, offset_m: float, goal: tuple[float, float], difficulty: str = "Easy") -> Any:
    return SimpleNamespace(
        family="MapNavigation",
        difficulty=difficulty,
        start=SimpleNamespace(segment=segment, offset_m=offset_m),
        truth=SimpleNamespace(goal=SimpleNamespace(x_m=goal[0], y_m=goal[1])),
    )


def test_split_drops_training_tasks_equal_to_held_out_ones() -> None:
    held = [task("a", 10.0, (0.0, 0.0))]
    same = task("a", 25.0, (5.0, 5.0))  # 15 m along, goal 7 m off: the same task
    other_start = task("a", 40.0, (0.0, 0.0))
    other_segment = task("b", 10.0, (0.0, 0.0))
    other_goal = task("a", 10.0, (50.0, 0.0))
    kept = split_tasks([same, other_start, other_segment, other_goal], held)
    assert kept == [other_start, other_segment, other_goal]


def test_split_refuses_to_leave_nothing_to_train_on() -> None:
    held = [task("a", 10.0, (0.0, 0.0))]
    with pytest.raises(TaskError) as caught:
        split_tasks([task("a", 12.0, (1.0, 0.0))], held)
    assert str(caught.value).startswith("all 1 training tasks equal held-out ones; generate")


def test_select_keeps_one_family_and_difficulty() -> None:
    easy, hard = task("a", 0.0, (0.0, 0.0)), task("a", 0.0, (0.0, 0.0), "Hard")
    assert select([easy, hard], family="MapNavigation", difficulty="Easy") == [easy]
    assert select([easy, hard], family="VLN", difficulty="Easy") == []
