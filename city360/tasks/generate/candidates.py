"""What the family generators share: candidate search for navigation goals, id numbering,
start yaws, and the budget rules every generator applies.

Every navigation goal is reached by the oracle during generation; a candidate it cannot reach
within the step budget is rejected (and counted in the report), never kept.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from city360.tasks.generate.common import GenerationContext, GenerationReport, route_features
from city360.tasks.schema import Difficulty

__all__ = [
    "CANDIDATE_FACTOR",
    "STEP_HEADROOM",
    "NavCandidate",
    "navigation_candidates",
    "random_yaw",
    "task_ids",
]

STEP_HEADROOM = 0.8
"""Navigation candidates must be solvable in this share of the step limit, leaving the agent
room to look around."""

CANDIDATE_FACTOR = 6
"""Candidates drawn per task wanted, before balancing difficulties."""


@dataclass(frozen=True, slots=True)
class NavCandidate:
    start: tuple[str, float]
    goal_xy: tuple[float, float]
    result: Any
    payload: Any


def navigation_candidates(
    ctx: GenerationContext,
    goals: Sequence[tuple[tuple[float, float], Any]],
    threshold_m: float,
    wanted: int,
    family: str,
    report: GenerationReport,
    *,
    route_threshold_m: float | None = None,
) -> list[tuple[Difficulty, NavCandidate]]:
    candidates: list[tuple[Difficulty, NavCandidate]] = []
    if not goals:  # e.g. a city filmed along one street has no junction to walk to
        report.reject(family, "the city has no goal of this kind")
        return candidates
    budget = int(ctx.step_limit * STEP_HEADROOM)
    attempts = wanted * CANDIDATE_FACTOR * ctx.difficulty.candidate_factor
    for _ in range(attempts):
        goal_xy, payload = goals[int(ctx.rng.integers(len(goals)))]
        start = ctx.random_start()
        sx, sy = ctx.graph.position(*start)
        if math.hypot(sx - goal_xy[0], sy - goal_xy[1]) <= 2 * threshold_m:
            report.reject(family, "start too close to the goal")
            continue
        result = ctx.oracle(start, goal_xy, route_threshold_m or threshold_m)
        if not result.reachable or (result.steps or 0) > budget:
            report.reject(family, "goal not reachable within the step budget")
            continue
        if route_threshold_m is not None:
            check = ctx.oracle(start, goal_xy, threshold_m)
            if not check.reachable:
                report.reject(family, "goal not reachable within the step budget")
                continue
        features = route_features(ctx.graph, result)
        level = ctx.difficulty.route(features)
        if level is None:
            report.reject(family, f"no level under the {ctx.difficulty.name!r} difficulty rules")
            continue
        candidates.append((level, NavCandidate(start, goal_xy, result, payload)))
    return candidates


def _ids(prefix: str, n: int) -> list[str]:
    return [f"{prefix}-{k:03d}" for k in range(1, n + 1)]


def task_ids(prefix: str, n: int) -> list[str]:
    """``prefix-001`` ... ``prefix-n``."""
    return [f"{prefix}-{k:03d}" for k in range(1, n + 1)]


def random_yaw(ctx: GenerationContext) -> float:
    """A start view yaw: ahead twice as often as left, right or back."""
    return float(ctx.rng.choice([-90.0, 0.0, 0.0, 90.0, 180.0]))
