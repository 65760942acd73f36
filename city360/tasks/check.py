"""Verification of a suite against its city: ``city360 tasks check SUITE --city CITY_DIR``.

Every task is checked, and every failure is reported by task id and field, never dropped:

- the start pose lies on the pose graph (its segment exists, its offset is within the
  segment, its lat/lon agrees with the graph's position there within ``START_TOLERANCE_M``);
- navigation families: the oracle (:func:`city360.tasks.walk.oracle_walk`, the controller's W
  step sizes and branch rules on the graph) reaches the goal within its threshold and the
  task's step limit, counting the final ANSWER;
- localization: the answer is the grid cell of the start position;
- object count: the stretch starts at the start pose and, where the city carries the objects
  (a synthetic city's ground truth), the count equals the objects in range of the stretch;
- relational: where the city has ground truth, the answer is the anchor's neighbour in the
  stated relation; landmark goals stand in front of the named POI.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from city360.errors import TaskError
from city360.geo import LocalProjection
from city360.streets import StreetGraph
from city360.synth.groundtruth import PoiTruth, SceneTruth
from city360.tasks.families import get_family
from city360.tasks.generate.common import Grid
from city360.tasks.schema import (
    LandmarkTruth,
    LocalizationTruth,
    ObjectCountTruth,
    RelationalTruth,
    TaskBase,
)
from city360.tasks.stretch import CountableObject, StretchIndex, objects_in_stretch
from city360.tasks.walk import OracleResult, oracle_walk

__all__ = ["START_TOLERANCE_M", "CheckIssue", "CheckReport", "check_tasks"]

START_TOLERANCE_M = 5.0
"""A start's lat/lon may differ this much from the graph's position at its segment/offset."""

OFFSET_TOLERANCE_M = 0.5
LANDMARK_TOLERANCE_M = 2.0


@dataclass(frozen=True, slots=True)
class CheckIssue:
    task_id: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"task {self.task_id!r}: field '{self.field}': {self.message}"


@dataclass
class CheckReport:
    """Result of checking a suite: ``issues`` (empty when it passes), the oracle's step count
    per navigation task, and per-family counts of tasks checked."""

    checked: int = 0
    issues: list[CheckIssue] = field(default_factory=list)
    oracle_steps: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    """Checks that could not run, and why (e.g. a real city has no object ground truth)."""

    @property
    def ok(self) -> bool:
        return not self.issues

    def failing_ids(self) -> list[str]:
        return sorted({i.task_id for i in self.issues})


def _check_start(
    task: TaskBase, graph: StreetGraph, projection: LocalProjection | None
) -> list[CheckIssue]:
    start = task.start
    if start.segment not in graph.segments:
        try:
            graph.segment(start.segment)
        except TaskError as exc:
            return [CheckIssue(task.id, "start.segment", f"start pose is off the graph: {exc}")]
    seg = graph.segments[start.segment]
    if start.offset_m > seg.length_m + OFFSET_TOLERANCE_M:
        return [
            CheckIssue(
                task.id,
                "start.offset_m",
                f"start pose is off the graph: offset {start.offset_m:.2f} m is beyond the end "
                f"of segment {seg.id!r} ({seg.length_m:.2f} m long)",
            )
        ]
    if projection is not None:
        x, y = seg.position(start.offset_m)
        sx, sy = projection.to_xy(start.lat, start.lon)
        gap = math.hypot(float(sx) - x, float(sy) - y)
        if gap > START_TOLERANCE_M:
            return [
                CheckIssue(
                    task.id,
                    "start.lat",
                    f"start lat/lon lies {gap:.1f} m from segment {seg.id!r} at offset "
                    f"{start.offset_m:.2f} m (tolerance {START_TOLERANCE_M} m)",
                )
            ]
    return []


def check_tasks(
    tasks: Sequence[TaskBase],
    graph: StreetGraph,
    *,
    projection: LocalProjection | None = None,
    grid: Grid | None = None,
    truth: SceneTruth | None = None,
    move_m: Sequence[float] = (2.0, 5.0, 10.0),
    on_task: Callable[[TaskBase], None] | None = None,
) -> CheckReport:
    """Check every task (rules in the module docstring) and collect every issue."""
    report = CheckReport()
    index: StretchIndex | None = None
    objects: list[CountableObject] | None = None
    neighbours = None
    poi_views: dict[str, tuple[float, float]] = {}
    if truth is not None:
        from city360.tasks.generate.from_truth import countable_objects, facade_neighbours

        objects = countable_objects(truth)
        neighbours = facade_neighbours(truth)
        poi_views = {p.id: (p.view.x_m, p.view.y_m) for p in truth.pois}
    skipped: set[str] = set()
    for task in tasks:
        report.checked += 1
        issues = _check_start(task, graph, projection)
        if not issues:
            spec = get_family(task.family)
            if spec.navigation:
                issues = _check_navigation(task, graph, move_m, report)
                if isinstance(task.truth, LandmarkTruth) and poi_views:
                    issues += _check_landmark(task, task.truth, poi_views)
            elif isinstance(task.truth, LocalizationTruth):
                if grid is None:
                    skipped.add("localization cells: no map grid for this city")
                else:
                    issues = _check_localization(task, task.truth, graph, grid)
            elif isinstance(task.truth, ObjectCountTruth):
                issues = _check_stretch(task, task.truth, graph)
                if not issues and objects is not None:
                    index = index or StretchIndex(graph)
                    issues = _check_count(task, task.truth, graph, objects, index)
                elif objects is None:
                    skipped.add("object counts: the city has no object ground truth")
            elif isinstance(task.truth, RelationalTruth):
                if neighbours is None:
                    skipped.add("relations: the city has no facade ground truth")
                else:
                    issues = _check_relation(task, task.truth, neighbours)
        report.issues.extend(issues)
        if on_task is not None:
            on_task(task)
    report.skipped = sorted(skipped)
    return report


def _check_navigation(
    task: TaskBase, graph: StreetGraph, move_m: Sequence[float], report: CheckReport
) -> list[CheckIssue]:
    goal = getattr(task.truth, "goal")  # noqa: B009 - every navigation truth has a goal
    result: OracleResult = oracle_walk(
        graph,
        (task.start.segment, task.start.offset_m),
        (goal.x_m, goal.y_m),
        goal.threshold_m,
        step_limit=task.step_limit,
        move_m=move_m,
    )
    if not result.reachable:
        return [
            CheckIssue(
                task.id,
                "truth.goal",
                f"goal unreachable: the oracle gets no closer than {result.distance_m:.1f} m "
                f"(threshold {goal.threshold_m:g} m) within {task.step_limit} steps",
            )
        ]
    report.oracle_steps[task.id] = int(result.steps or 0)
    return []


def _check_landmark(
    task: TaskBase, truth: LandmarkTruth, poi_views: dict[str, tuple[float, float]]
) -> list[CheckIssue]:
    view = poi_views.get(truth.landmark_id)
    if view is None:
        return [
            CheckIssue(task.id, "truth.landmark_id", f"no POI {truth.landmark_id!r} in the city")
        ]
    gap = math.hypot(view[0] - truth.goal.x_m, view[1] - truth.goal.y_m)
    if gap > LANDMARK_TOLERANCE_M:
        return [
            CheckIssue(
                task.id,
                "truth.goal",
                f"goal is {gap:.1f} m from the pose in front of {truth.landmark_name!r}",
            )
        ]
    return []


def _check_localization(
    task: TaskBase, truth: LocalizationTruth, graph: StreetGraph, grid: Grid
) -> list[CheckIssue]:
    x, y = graph.position(task.start.segment, task.start.offset_m)
    cell = grid.cell_of(x, y)
    if tuple(cell) != tuple(truth.cell):
        return [
            CheckIssue(
                task.id,
                "truth.cell",
                f"answer x:{truth.cell[0]} y:{truth.cell[1]} is not the start's grid cell "
                f"x:{cell[0]} y:{cell[1]}",
            )
        ]
    return []


def _check_stretch(task: TaskBase, truth: ObjectCountTruth, graph: StreetGraph) -> list[CheckIssue]:
    stretch = truth.stretch
    for seg_id in stretch.segments:
        if seg_id not in graph.segments:
            return [
                CheckIssue(
                    task.id, "truth.stretch.segments", f"segment {seg_id!r} is not in the graph"
                )
            ]
    if stretch.segments[0] != task.start.segment or (
        abs(stretch.start_offset_m - task.start.offset_m) > OFFSET_TOLERANCE_M
    ):
        return [
            CheckIssue(task.id, "truth.stretch", "the stretch does not begin at the start pose")
        ]
    return []


def _check_count(
    task: TaskBase,
    truth: ObjectCountTruth,
    graph: StreetGraph,
    objects: list[CountableObject],
    index: StretchIndex,
) -> list[CheckIssue]:
    kind = str(task.told.model_dump()["object_kind"])
    found = objects_in_stretch(graph, truth.stretch, objects, kind=kind, index=index)
    if len(found) != truth.count or (truth.object_ids and sorted(truth.object_ids) != found):
        return [
            CheckIssue(
                task.id,
                "truth.count",
                f"count {truth.count} but {len(found)} {kind} objects are in range of the "
                f"stretch ({', '.join(found) or 'none'})",
            )
        ]
    return []


def _check_relation(
    task: TaskBase, truth: RelationalTruth, neighbours: dict[str, dict[str, PoiTruth]]
) -> list[CheckIssue]:
    other = neighbours.get(truth.anchor_id, {}).get(truth.relation)
    name = None if other is None else other.name
    if name != truth.answer:
        return [
            CheckIssue(
                task.id,
                "truth.answer",
                f"{truth.relation} {truth.anchor_name!r} the ground truth has "
                f"{name!r}, not {truth.answer!r}",
            )
        ]
    return []
