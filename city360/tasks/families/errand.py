"""Errand (Mine Odyssey's ordered waypoints): visit named places in the order given, and give
the ANSWER action in front of the last one.

Scored by ``errand_match`` (:mod:`city360.eval.metrics`): success when the agent answers within
10 m of the last place *and* passed within 10 m of every earlier one, in order; checkpoint
coverage (the share of the places reached in order, :class:`CheckpointCoverage`) is recorded in
every row's ``extra`` column, SPL against the oracle's tour (:mod:`city360.tasks.tour`). Made
from ground truth and from OSM named places alike (POIs with a unique name on a filmed
street); Easy / Medium / Hard visit 2 / 3 / 4 places. An errand gets ``STEP_FACTOR`` times the
suite's step budget: the reference's 50 steps are for one goal.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from city360.tasks.families._registry import FamilySpec
from city360.tasks.schema import (
    Difficulty,
    Family,
    GoalTruth,
    Metric,
    MetricName,
    TaskBase,
    Told,
    Truth,
)

if TYPE_CHECKING:
    from city360.streets import StreetGraph
    from city360.tasks.check import CheckContext, CheckIssue
    from city360.tasks.generate.common import GenerationContext, GenerationReport
    from city360.tasks.generate.sources import GenerationSource, PlacedPoi
    from city360.tasks.tour import TourResult
    from city360.tasks.walk import OracleResult
    from city360.viewer.authoring import DraftForm

__all__ = [
    "COVERAGE_KEY",
    "LEG_MAX_M",
    "NAME",
    "PLACES_PER_LEVEL",
    "SPEC",
    "STEP_FACTOR",
    "CheckpointCoverage",
    "ErrandStop",
    "ErrandTask",
    "ErrandTold",
    "ErrandTruth",
    "generate",
    "plan",
]

NAME = Family.ERRAND.value
COVERAGE_KEY = "checkpoint_coverage"
"""The key of the coverage in a results row's ``extra`` and in the scoring context."""
THRESHOLD_M = 10.0
PLACES_PER_LEVEL: dict[Difficulty, int] = {
    Difficulty.EASY: 2,
    Difficulty.MEDIUM: 3,
    Difficulty.HARD: 4,
}
STEP_FACTOR = 2
LEG_MAX_M = 150.0
"""The start and consecutive places are at most this far apart (straight line, metres), so
that an errand is a walk round a few blocks, not across the city."""
"""An errand's step limit is this many times the suite's (one goal's) budget."""


class ErrandTold(Told):
    places: list[str] = Field(min_length=2, max_length=10)


class ErrandStop(BaseModel):
    """One place of the errand: its name, its POI id and the pose in front of its sign."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(min_length=1)
    landmark_id: str
    goal: GoalTruth


class ErrandTruth(Truth):
    goal: GoalTruth
    """The last place (where the agent must ANSWER): the navigation goal of the row."""
    waypoints: list[ErrandStop] = Field(min_length=2)

    def expected(self) -> str:
        return f"{self.goal.lat:.7f},{self.goal.lon:.7f}"


class ErrandTask(TaskBase):
    EXPECTED_METRIC: ClassVar[str | None] = MetricName.ERRAND_MATCH
    PROMPT_TEMPLATE: ClassVar[str] = (
        "Run an errand: visit these places in this order: {places}. Walk through the streets "
        "and stand on the street in front of each one in turn; in front of the last one, give "
        "the ANSWER action. You are judged by whether you passed each place in order and by "
        "where you are when you ANSWER."
    )
    ANSWER_FORMAT: ClassVar[str] = (
        "visit every place in order, then ANSWER (any text) in front of the last one"
    )
    GOAL_IS_NEAR: ClassVar[bool] = False
    family: Literal[Family.ERRAND] = Family.ERRAND
    told: ErrandTold
    truth: ErrandTruth
    metric: Metric = Metric(name=MetricName.ERRAND_MATCH, threshold_m=THRESHOLD_M)

    def prompt_variables(self) -> dict[str, Any]:
        numbered = ", ".join(f"{k}. {name}" for k, name in enumerate(self.told.places, 1))
        return {"places": numbered}


class CheckpointCoverage:
    """Follows an episode's poses: the share of the task's waypoints reached in order (a
    waypoint counts once the agent stands within its radius, after every earlier one)."""

    def __init__(self, task: TaskBase) -> None:
        truth = task.truth
        self._goals = [
            (stop.goal.x_m, stop.goal.y_m, stop.goal.threshold_m)
            for stop in getattr(truth, "waypoints", ())
        ]
        self.reached = 0

    def update(self, x_m: float, y_m: float) -> None:
        # several waypoints may share a pose's radius: take each in turn
        while self.reached < len(self._goals):
            gx, gy, radius = self._goals[self.reached]
            if math.hypot(x_m - gx, y_m - gy) > radius:
                return
            self.reached += 1

    def values(self) -> dict[str, float]:
        total = len(self._goals)
        return {COVERAGE_KEY: round(self.reached / total, 6) if total else 0.0}


def _goals_xy(task: TaskBase) -> list[tuple[float, float]]:
    return [(s.goal.x_m, s.goal.y_m) for s in task.truth.waypoints]  # type: ignore[attr-defined]


def _errand_places(
    ctx: GenerationContext, placed: list[PlacedPoi], k: int
) -> list[PlacedPoi] | None:
    """``k`` distinct places, each more than twice the radius and at most :data:`LEG_MAX_M`
    (straight line) from the one before; None when the draw runs into a dead end."""
    stops = [placed[int(ctx.rng.integers(len(placed)))]]
    while len(stops) < k:
        here = (stops[-1].poi.view.x_m, stops[-1].poi.view.y_m)
        near = [
            p
            for p in placed
            if p not in stops
            and 2 * THRESHOLD_M < math.dist(here, (p.poi.view.x_m, p.poi.view.y_m)) <= LEG_MAX_M
        ]
        if not near:
            return None
        stops.append(near[int(ctx.rng.integers(len(near)))])
    return stops


START_DRAWS = 40
"""Random starts drawn per errand before giving up on a first place."""


def _start_near(ctx: GenerationContext, first_xy: tuple[float, float]) -> tuple[str, float] | None:
    """A random start more than twice the radius and at most :data:`LEG_MAX_M` from the first
    place (straight line)."""
    for _ in range(START_DRAWS):
        start = ctx.random_start()
        if 2 * THRESHOLD_M < math.dist(ctx.graph.position(*start), first_xy) <= LEG_MAX_M:
            return start
    return None


def generate(
    ctx: GenerationContext, source: GenerationSource, n: int, report: GenerationReport
) -> list[TaskBase]:
    """``n`` errands over distinct named places, as even over the levels as the city allows;
    each one the oracle tours within the step budget (:data:`STEP_HEADROOM`)."""
    from city360.tasks.generate.candidates import CANDIDATE_FACTOR, STEP_HEADROOM, task_ids
    from city360.tasks.generate.common import balanced_pick, route_features
    from city360.tasks.tour import oracle_tour

    placed = list(source.placed)
    if len(placed) < 2:
        report.notes.append(f"{NAME}: fewer than two POIs with a unique name on a filmed street")
        return []
    step_limit = ctx.step_limit * STEP_FACTOR
    budget = int(step_limit * STEP_HEADROOM)
    levels = [lv for lv in Difficulty if PLACES_PER_LEVEL[lv] <= len(placed)]
    candidates: list[tuple[Difficulty, tuple[tuple[str, float], list[PlacedPoi], Any]]] = []
    for attempt in range(n * CANDIDATE_FACTOR):
        level = levels[attempt % len(levels)]
        stops = _errand_places(ctx, placed, PLACES_PER_LEVEL[level])
        if stops is None:
            report.reject(NAME, f"no places {LEG_MAX_M:g} m apart in a row")
            continue
        goals = [(p.poi.view.x_m, p.poi.view.y_m) for p in stops]
        start = _start_near(ctx, goals[0])
        if start is None:
            report.reject(NAME, "no start within reach of the first place")
            continue
        tour = oracle_tour(
            ctx.graph, start, goals, THRESHOLD_M, step_limit=budget, move_m=ctx.move_m
        )
        if not tour.reachable:
            report.reject(NAME, "places not all reachable in order within the step budget")
            continue
        candidates.append((level, (start, stops, tour)))
    chosen = balanced_pick(
        candidates, n, key=lambda c: "|".join(p.poi.id for p in c[1]) + f"@{c[0][0]}"
    )
    tasks: list[TaskBase] = []
    for task_id, (level, (start, stops, tour)) in zip(task_ids("err", n), chosen, strict=False):
        waypoints = [
            {
                "name": p.poi.name,
                "landmark_id": p.poi.id,
                "goal": ctx.goal(
                    p.poi.view.x_m,
                    p.poi.view.y_m,
                    THRESHOLD_M,
                    segment=p.segment,
                    offset_m=p.offset_m,
                ),
            }
            for p in stops
        ]
        tasks.append(
            ErrandTask.model_validate(
                {
                    "id": task_id,
                    "difficulty": level,
                    "start": ctx.start_pose(*start),
                    "told": {"places": [p.poi.name for p in stops]},
                    "truth": {"goal": waypoints[-1]["goal"], "waypoints": waypoints},
                    "step_limit": step_limit,
                    "meta": {
                        **route_features(ctx.graph, tour.as_walk()).as_meta(),
                        "places": len(stops),
                    },
                }
            )
        )
    return tasks


def check(task: TaskBase, checker: CheckContext) -> list[CheckIssue]:
    """Every place exists in the city (by name, where its places are known), the last
    waypoint is the goal, and the oracle visits every place in order within the step limit."""
    from city360.tasks.check import CheckIssue, normalize_name

    truth: ErrandTruth = task.truth  # type: ignore[assignment]
    told: ErrandTold = task.told  # type: ignore[assignment]
    if [s.name for s in truth.waypoints] != told.places:
        return [CheckIssue(task.id, "told.places", "the places told differ from the waypoints")]
    if truth.waypoints[-1].goal != truth.goal:
        return [CheckIssue(task.id, "truth.goal", "the goal is not the last waypoint")]
    if checker.place_names:
        for k, name in enumerate(told.places):
            if normalize_name(name) not in checker.place_names:
                return [
                    CheckIssue(
                        task.id,
                        f"told.places[{k}]",
                        f"{name!r} is not a place of this city (no POI of its ground truth or "
                        "OSM extract has that name); name a place the city has",
                    )
                ]
    tour = _tour(task, checker.graph, checker.move_m)
    if not tour.reachable:
        name = truth.waypoints[tour.reached].name
        return [
            CheckIssue(
                task.id,
                f"truth.waypoints[{tour.reached}]",
                f"the oracle reaches {tour.reached} of {tour.goals} places in order within "
                f"{task.step_limit} steps; {name!r} is out of reach",
            )
        ]
    return []


def _located(form: DraftForm, line: str, field: str) -> dict[str, Any] | None:
    """``Name @ segment:offset_m`` (the walk readout's pose) -> a waypoint."""
    from city360.viewer.authoring import PoseRef

    name, _, pose = (part.strip() for part in line.partition("@"))
    segment, _, offset = pose.rpartition(":")
    try:
        ref = PoseRef(segment=segment, offset_m=float(offset), yaw_deg=0.0)
        goal = form.editor.goal_truth(ref, THRESHOLD_M)
    except (ValueError, KeyError):
        form.problem(field, f"{line!r}: write a place as 'Name @ segment:offset_m'")
        return None
    return {"name": name, "landmark_id": f"viewer:{_slug(name)}", "goal": goal.model_dump()}


def _slug(name: str) -> str:
    from city360.tasks.families._landmark import slug

    return slug(name)


def author(form: DraftForm) -> tuple[dict[str, Any], dict[str, Any]]:
    """The form: ``waypoints``, one earlier place a line as ``Name @ segment:offset_m`` (walk
    there and copy the readout), and ``landmark``, the last place, at the picked goal."""
    last = form.text("landmark")
    if not last:
        form.problem("landmark", "name the last place (what its sign says)")
        last = "?"
    goal = form.goal()
    stops = []
    for line in form.text("waypoints").splitlines():
        if line.strip():
            stop = _located(form, line.strip(), "waypoints")
            if stop is not None:
                stops.append(stop)
    if not stops:
        form.problem("waypoints", "add at least one place before the last")
    final = {"name": last, "landmark_id": f"viewer:{_slug(last)}", "goal": goal.model_dump()}
    stops.append(final)
    told = {"places": [s["name"] for s in stops]}
    return told, {"goal": goal.model_dump(), "waypoints": stops}


def draft_fields(task: TaskBase) -> dict[str, Any]:
    truth: ErrandTruth = task.truth  # type: ignore[assignment]
    lines = [
        f"{s.name} @ {s.goal.segment}:{s.goal.offset_m}"
        for s in truth.waypoints[:-1]
        if s.goal.segment is not None
    ]
    return {"landmark": truth.waypoints[-1].name, "waypoints": "\n".join(lines)}


_TOURS: weakref.WeakKeyDictionary[StreetGraph, dict[tuple[Any, ...], TourResult]] = (
    weakref.WeakKeyDictionary()
)
"""Tours already planned, per graph (read-only) and per inputs: ``tasks check`` asks for one
errand's tour twice (its oracle plan, then its own check)."""


def _tour(task: TaskBase, graph: StreetGraph, move_m: Sequence[float]) -> TourResult:
    """The oracle's tour of ``task``: every waypoint in order, from the start (planned once
    per graph and inputs)."""
    from city360.tasks.tour import oracle_tour

    start = (task.start.segment, task.start.offset_m)
    goals = tuple(_goals_xy(task))
    threshold_m = task.metric.threshold_m or THRESHOLD_M
    key = (start, goals, threshold_m, task.step_limit, tuple(move_m))
    tours = _TOURS.setdefault(graph, {})
    if key not in tours:
        tours[key] = oracle_tour(
            graph, start, list(goals), threshold_m, step_limit=task.step_limit, move_m=move_m
        )
    return tours[key]


def plan(task: TaskBase, graph: StreetGraph, move_m: Sequence[float]) -> OracleResult:
    """The oracle of an errand is its tour (``FamilySpec.plan``), not one walk to the last
    place: a leg may begin by turning round, which one walk from the start never does."""
    return _tour(task, graph, move_m).as_walk()


def coverage(task: TaskBase) -> CheckpointCoverage:
    return CheckpointCoverage(task)


SPEC = FamilySpec(
    model=ErrandTask,
    short="err",
    navigation=True,
    from_truth=generate,
    from_osm=generate,
    check=check,
    plan=plan,
    author=author,
    draft_fields=draft_fields,
    progress=coverage,
)
