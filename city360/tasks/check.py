"""Verification of a suite against its city: ``city360 tasks check SUITE --city CITY_DIR``.

Every task is checked, and every failure is reported by task id and field, never dropped:

- the start pose lies on the pose graph (its segment exists, its offset is within the
  segment, its lat/lon agrees with the graph's position there within ``START_TOLERANCE_M``);
- navigation families: the oracle (:func:`city360.tasks.walk.oracle_walk`, the controller's W
  step sizes and branch rules on the graph) reaches the goal within its threshold and the
  task's step limit, counting the final ANSWER; a family whose oracle is another plan
  (``FamilySpec.plan``; Errand: the tour through its waypoints) is proven with that plan;
  and the start is not within the goal's threshold already (an ANSWER on the spot would
  score: on a walk of 30 m every map-navigation goal was, with its 20 m threshold);
- localization: the answer is the grid cell of the start position;
- object count: the stretch starts at the start pose and, where the city carries the objects
  (a synthetic city's ground truth), the count equals the objects in range of the stretch;
- relational: where the city has ground truth, the answer is the anchor's neighbour in the
  stated relation; landmark goals stand in front of the named POI.

The family-specific rules (all but the start and the navigation reachability) live in each
family's module as ``FamilySpec.check`` and run with a :class:`CheckContext`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from city360.errors import TaskError
from city360.geo import LocalProjection
from city360.streets import StreetGraph
from city360.synth.groundtruth import PoiTruth, SceneTruth
from city360.tasks.families import get_family
from city360.tasks.generate.common import Grid
from city360.tasks.schema import TaskBase
from city360.tasks.walk import oracle_walk

__all__ = [
    "OFFSET_TOLERANCE_M",
    "START_TOLERANCE_M",
    "CheckContext",
    "CheckIssue",
    "CheckReport",
    "check_tasks",
    "normalize_name",
]

START_TOLERANCE_M = 5.0
"""A start's lat/lon may differ this much from the graph's position at its segment/offset."""

OFFSET_TOLERANCE_M = 0.5
"""A stretch or start offset may differ this much (metres) from where it should be."""


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


@dataclass
class CheckContext:
    """What a family's checker (``FamilySpec.check``) may read: the city's graph, its grid, its
    ground truth (None for a real city), the controller's step sizes; and where to note a
    check that could not run. :meth:`cached` keeps derived truth (facade order, objects) for
    the whole suite."""

    graph: StreetGraph
    grid: Grid | None = None
    truth: SceneTruth | None = None
    move_m: Sequence[float] = (2.0, 5.0, 10.0)
    place_names: frozenset[str] | None = None
    """Names of the city's places (ground-truth POIs, else its OSM extract's named POIs), to
    check that a task never tells of a place the city does not have; None: not known."""
    skipped: set[str] = field(default_factory=set)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def skip(self, reason: str) -> None:
        """Note a check that could not run (shown once per suite)."""
        self.skipped.add(reason)

    def cached(self, key: str, make: Callable[[], Any]) -> Any:
        """``make()`` once per suite under ``key``."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def truth_pois(self) -> list[PoiTruth]:
        return [] if self.truth is None else list(self.truth.pois)


def normalize_name(name: str) -> str:
    """How place names are compared: case and runs of spaces do not matter."""
    return " ".join(name.casefold().split())


def check_tasks(
    tasks: Sequence[TaskBase],
    graph: StreetGraph,
    *,
    projection: LocalProjection | None = None,
    grid: Grid | None = None,
    truth: SceneTruth | None = None,
    move_m: Sequence[float] = (2.0, 5.0, 10.0),
    place_names: Iterable[str] | None = None,
    on_task: Callable[[TaskBase], None] | None = None,
) -> CheckReport:
    """Check every task (rules in the module docstring and in each family's ``check``) and
    collect every issue."""
    report = CheckReport()
    names = None if place_names is None else frozenset(normalize_name(n) for n in place_names)
    if names is None and truth is not None:
        names = frozenset(normalize_name(p.name) for p in truth.pois)
    checker = CheckContext(
        graph=graph, grid=grid, truth=truth, move_m=move_m, place_names=names or None
    )
    for task in tasks:
        report.checked += 1
        issues = _check_start(task, graph, projection)
        if not issues:
            spec = get_family(task.family)
            if spec.navigation:
                issues = _check_navigation(task, graph, move_m, report)
            if spec.check is not None:
                issues += spec.check(task, checker)
        report.issues.extend(issues)
        if on_task is not None:
            on_task(task)
    report.skipped = sorted(checker.skipped)
    return report


def _check_navigation(
    task: TaskBase, graph: StreetGraph, move_m: Sequence[float], report: CheckReport
) -> list[CheckIssue]:
    goal = getattr(task.truth, "goal")  # noqa: B009 - every navigation truth has a goal
    plan = get_family(task.family).plan
    if plan is not None:
        # the family's own oracle (Errand: its tour); its check names what is out of reach
        result = plan(task, graph, move_m)
        if result.reachable:
            report.oracle_steps[task.id] = int(result.steps or 0)
        return []
    result = oracle_walk(
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
    start_x, start_y = graph.position(task.start.segment, task.start.offset_m)
    apart_m = math.hypot(goal.x_m - start_x, goal.y_m - start_y)
    if apart_m <= goal.threshold_m:
        return [
            CheckIssue(
                task.id,
                "truth.goal",
                f"the start is {apart_m:.1f} m from the goal, within its threshold "
                f"({goal.threshold_m:g} m): an ANSWER on the spot scores; pick a goal more "
                f"than {goal.threshold_m:g} m away, or a smaller threshold",
            )
        ]
    return []
