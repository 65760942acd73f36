"""Training tasks and held-out evaluation tasks for learning on a city.

A held-out task must not be a training task: two Map navigation tasks are the same when they
start on the same segment within :data:`SAME_START_M` of each other and go to the same goal
(within the same distance). :func:`split_tasks` keeps the evaluation tasks as given and drops
every training task that equals one of them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from city360.errors import TaskError

__all__ = ["SAME_START_M", "select", "split_tasks"]

SAME_START_M = 20.0
"""Starts (along one segment) and goals closer than this (metres) count as the same task."""


def select(tasks: Iterable[Any], *, family: str, difficulty: str) -> list[Any]:
    """The tasks of one family and difficulty (names as task files spell them)."""
    return [t for t in tasks if str(t.family) == family and str(t.difficulty) == difficulty]


def _same(a: Any, b: Any) -> bool:
    if a.start.segment != b.start.segment:
        return False
    if abs(float(a.start.offset_m) - float(b.start.offset_m)) >= SAME_START_M:
        return False
    ga, gb = a.truth.goal, b.truth.goal
    return math.hypot(ga.x_m - gb.x_m, ga.y_m - gb.y_m) < SAME_START_M


def split_tasks(train: Sequence[Any], held_out: Sequence[Any]) -> list[Any]:
    """``train`` without any task that is the same as a held-out one (see the module
    docstring); raises when nothing is left to train on."""
    kept = [t for t in train if not any(_same(t, h) for h in held_out)]
    if not kept:
        msg = (
            f"all {len(train)} training tasks equal held-out ones; generate more: "
            "`city360 tasks generate CITY --out DIR --family MapNavigation --seed 1`"
        )
        raise TaskError(msg)
    return kept
