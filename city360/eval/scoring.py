"""Scoring an episode's ANSWER: the one place that turns a task's metric into a score.

:class:`~city360.eval.recorder.EpisodeRecorder` calls it for agents and for people playing in
the viewer alike, so both are scored by the same code.
"""

from __future__ import annotations

import math
from typing import Any

from city360.eval.metrics import (
    MetricResult,
    coordinate_match,
    count_mean_relative_accuracy,
    exact_match_grid,
    fuzzy_match,
)

__all__ = ["score_answer"]


def score_answer(task: Any, answer: str, distance_to_goal_m: float | None) -> MetricResult:
    """Score an ANSWER against the task's hidden truth with the task's metric."""
    metric = task.metric.name.value
    truth = task.truth
    if metric == "coordinate_match":
        distance = math.inf if distance_to_goal_m is None else distance_to_goal_m
        return coordinate_match(distance, float(task.metric.threshold_m))
    if metric == "exact_match":
        return exact_match_grid(answer, tuple(truth.cell))
    if metric == "count_mra":
        return count_mean_relative_accuracy(answer, int(truth.count))
    question = getattr(task.told, "question", "")
    return fuzzy_match(answer, truth.answer, question=question)
