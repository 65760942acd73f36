"""Map navigation: a map shows a BLUE start and a RED goal; walk to the RED marker and ANSWER.

Scored by coordinate_match within 20 m. Goals are junctions of the graph (of degree >= 3 where
there are any), so the family is made from ground truth and from OSM (graph only) alike.
Episodes stop after 5 consecutive moves away from the goal (see :mod:`city360.eval.stopping`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from city360.tasks.families._registry import FamilySpec
from city360.tasks.schema import Family, GoalTruth, Metric, MetricName, TaskBase, Told, Truth

if TYPE_CHECKING:
    from city360.tasks.generate.common import GenerationContext, GenerationReport
    from city360.tasks.generate.sources import GenerationSource
    from city360.viewer.authoring import DraftForm

__all__ = ["SPEC", "MapNavigationTask", "MapNavigationTold", "MapNavigationTruth", "generate"]


class MapNavigationTold(Told):
    route_map: str = Field(description="suite-relative path of the map with BLUE start, RED goal")


class MapNavigationTruth(Truth):
    goal: GoalTruth
    route: list[str] = Field(default_factory=list, description="segments of a shortest route")

    def expected(self) -> str:
        return f"{self.goal.lat:.7f},{self.goal.lon:.7f}"


class MapNavigationTask(TaskBase):
    EXPECTED_METRIC: ClassVar[str | None] = MetricName.COORDINATE_MATCH
    PROMPT_TEMPLATE: ClassVar[str] = (
        "The attached map shows where you start (BLUE marker) and where you must go (RED "
        "marker). Walk through the streets to the RED marker, then give the ANSWER action "
        "there. Your answer is judged by where you are when you give it."
    )
    ANSWER_FORMAT: ClassVar[str] = "walk to the RED marker, then ANSWER (any text) on arrival"
    family: Literal[Family.MAP_NAVIGATION] = Family.MAP_NAVIGATION
    told: MapNavigationTold
    truth: MapNavigationTruth
    metric: Metric = Metric(name=MetricName.COORDINATE_MATCH, threshold_m=20.0)


def generate(
    ctx: GenerationContext, source: GenerationSource, n: int, report: GenerationReport
) -> list[TaskBase]:
    return map_navigation_tasks(ctx, source.junctions, n, report)


def map_navigation_tasks(
    ctx: GenerationContext,
    goals: Sequence[tuple[tuple[float, float], Any]],
    n: int,
    report: GenerationReport,
) -> list[TaskBase]:
    """Map-navigation tasks to ``goals`` (junction positions, metres, with an id each)."""
    from city360.tasks.generate.candidates import navigation_candidates, task_ids
    from city360.tasks.generate.common import balanced_pick, route_features

    threshold = SPEC.threshold_m or 20.0
    if not goals:  # a walk along one street, or several that never cross
        report.notes.append(
            f"{SPEC.name}: the graph has no junction (three or more streets meeting) to walk "
            "to; film streets that cross"
        )
        return []
    candidates = navigation_candidates(ctx, goals, threshold, n, SPEC.name, report)
    chosen = balanced_pick(
        candidates,
        n,
        key=lambda c: f"{c.payload}:{c.start[0]}:{round(c.start[1] / 20)}",
        closeness=lambda level, c: ctx.difficulty.route_distance(
            level, route_features(ctx.graph, c.result)
        ),
    )
    tasks: list[TaskBase] = []
    for task_id, (level, cand) in zip(task_ids(SPEC.short, n), chosen, strict=False):
        start_xy = ctx.graph.position(*cand.start)
        image = ctx.images.route_map(start_xy, cand.goal_xy)
        goal_seg, goal_off, _ = ctx.graph.locate(*cand.goal_xy)
        tasks.append(
            MapNavigationTask.model_validate(
                {
                    "id": task_id,
                    "difficulty": level,
                    "start": ctx.start_pose(*cand.start),
                    "told": {"route_map": ctx.add_asset(task_id, image)},
                    "truth": {
                        "goal": ctx.goal(
                            cand.goal_xy[0],
                            cand.goal_xy[1],
                            threshold,
                            segment=goal_seg,
                            offset_m=goal_off,
                        ),
                        "route": list(cand.result.segments),
                    },
                    "step_limit": ctx.step_limit,
                    "meta": {
                        **route_features(ctx.graph, cand.result).as_meta(),
                        "goal_junction": cand.payload,
                    },
                }
            )
        )
    return tasks


def author(form: DraftForm) -> tuple[dict[str, Any], dict[str, Any]]:
    """The route map is drawn from the picked start and goal."""
    goal = form.goal()
    told = {"route_map": form.route_map_asset(goal)}
    return told, {"goal": goal.model_dump(), "route": form.route(goal)}


SPEC = FamilySpec(
    results_name="MapNavigation",
    model=MapNavigationTask,
    short="map",
    navigation=True,
    away_from_goal=True,
    goal_told=True,
    from_truth=generate,
    from_osm=generate,
    author=author,
    draft_fields=lambda task: {},
)
