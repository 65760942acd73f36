"""The oracle's walk from a task's start to its goal, as the report draws it and SPL uses it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from city360.streets import StreetGraph
from city360.tasks.walk import oracle_walk

__all__ = ["oracle_path"]


def oracle_path(
    graph: StreetGraph, task: Any, *, move_m: Sequence[float]
) -> tuple[list[list[float]], float | None]:
    """The positions (metres, city CRS) of the oracle's walk on ``task`` and its length in
    metres; ``([], None)`` when the task has no goal or the oracle cannot reach it within the
    task's step limit with the controller's step sizes ``move_m`` (SMALL, MEDIUM, LARGE)."""
    goal = getattr(task.truth, "goal", None)
    if goal is None:
        return [], None
    result = oracle_walk(
        graph,
        (task.start.segment, task.start.offset_m),
        (goal.x_m, goal.y_m),
        goal.threshold_m,
        step_limit=task.step_limit,
        move_m=tuple(move_m),
    )
    if not result.reachable or result.final is None:
        return [], None
    polyline = _walked_polyline(graph, result.segments, task.start.offset_m, result.final)
    return polyline, result.path_m


def _walked_polyline(
    graph: StreetGraph, segments: Sequence[str], start_offset_m: float, final: tuple[str, float]
) -> list[list[float]]:
    """The positions (metres) of a walk over ``segments``: from ``start_offset_m`` on the
    first to the final offset on the last, following each segment's polyline."""
    points: list[list[float]] = []
    for k, segment_id in enumerate(segments):
        seg = graph.segment(segment_id)
        lo = start_offset_m if k == 0 else 0.0
        hi = final[1] if k == len(segments) - 1 else seg.length_m
        inner = [(x, y) for (x, y), arc in zip(seg.xy, seg.cum_m, strict=True) if lo < arc < hi]
        points.extend([list(seg.position(lo)), *map(list, inner), list(seg.position(hi))])
    return [[round(float(x), 3), round(float(y), 3)] for x, y in points]
