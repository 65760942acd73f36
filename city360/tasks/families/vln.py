"""Vision-and-language navigation: follow written directions, ANSWER where they say to stop.

Scored by coordinate_match within 10 m. Directions are written turn by turn from the oracle's
route to a named place (:mod:`city360.tasks.generate.vln_text`); made from ground truth and from
OSM places.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from city360.tasks.families._registry import FamilySpec
from city360.tasks.schema import Family, GoalTruth, Metric, MetricName, TaskBase, Told, Truth

if TYPE_CHECKING:
    from city360.tasks.generate.common import GenerationContext, GenerationReport
    from city360.tasks.generate.sources import GenerationSource, PlacedPoi
    from city360.viewer.authoring import DraftForm

__all__ = ["SPEC", "VLNTask", "VLNTold", "VLNTruth", "generate"]


class VLNTold(Told):
    instructions: list[str] = Field(min_length=1)


class VLNTruth(Truth):
    goal: GoalTruth
    route: list[str] = Field(min_length=1, description="segments the directions describe")
    goal_landmark_id: str | None = None

    def expected(self) -> str:
        return f"{self.goal.lat:.7f},{self.goal.lon:.7f}"


class VLNTask(TaskBase):
    EXPECTED_METRIC: ClassVar[str | None] = MetricName.COORDINATE_MATCH
    PROMPT_TEMPLATE: ClassVar[str] = (
        "Follow these directions from where you stand:\n{instructions}\n"
        "When you reach the end of the directions, give the ANSWER action. Your answer is "
        "judged by where you are when you give it."
    )
    ANSWER_FORMAT: ClassVar[str] = (
        "follow the directions, then ANSWER (any text) where they tell you to stop"
    )
    family: Literal[Family.VLN] = Family.VLN
    told: VLNTold
    truth: VLNTruth
    metric: Metric = Metric(name=MetricName.COORDINATE_MATCH, threshold_m=10.0)

    def prompt_variables(self) -> dict[str, Any]:
        return {"instructions": "\n".join(self.told.instructions)}


def generate(
    ctx: GenerationContext, source: GenerationSource, n: int, report: GenerationReport
) -> list[TaskBase]:
    return vln_tasks(ctx, source.placed, n, report)


def vln_tasks(
    ctx: GenerationContext, placed: Sequence[PlacedPoi], n: int, report: GenerationReport
) -> list[TaskBase]:
    from city360.tasks.generate.candidates import navigation_candidates, task_ids
    from city360.tasks.generate.common import balanced_pick, route_features
    from city360.tasks.generate.vln_text import directions, side_of

    threshold = SPEC.threshold_m or 10.0
    goals = [((p.poi.view.x_m, p.poi.view.y_m), p) for p in placed]
    if not goals:
        report.notes.append("VLN: no POI with a unique name stands on a filmed street")
        return []
    # The route is planned to within 2 m of the goal so that it ends on the goal's street.
    candidates = navigation_candidates(
        ctx, goals, threshold, n, SPEC.name, report, route_threshold_m=2.0
    )
    chosen = balanced_pick(candidates, n, key=lambda c: f"{c.payload.poi.id}:{c.start[0]}")
    landmarks = [p.landmark for p in placed]
    tasks: list[TaskBase] = []
    for task_id, (level, cand) in zip(task_ids(SPEC.short, n), chosen, strict=False):
        place: PlacedPoi = cand.payload
        final_seg, final_off = cand.result.final
        heading = ctx.graph.segment(final_seg).heading(final_off)
        fx, fy = ctx.graph.position(final_seg, final_off)
        side = side_of(heading, place.poi.x_m - fx, place.poi.y_m - fy)
        lines = directions(
            ctx.graph, cand.result.segments, place.landmark, side, landmarks=landmarks
        )
        tasks.append(
            VLNTask.model_validate(
                {
                    "id": task_id,
                    "difficulty": level,
                    "start": ctx.start_pose(*cand.start),
                    "told": {"instructions": lines},
                    "truth": {
                        "goal": ctx.goal(
                            place.poi.view.x_m,
                            place.poi.view.y_m,
                            threshold,
                            segment=place.segment,
                            offset_m=place.offset_m,
                        ),
                        "route": list(cand.result.segments),
                        "goal_landmark_id": place.poi.id,
                    },
                    "step_limit": ctx.step_limit,
                    "meta": {**route_features(ctx.graph, cand.result).as_meta(), "goal_side": side},
                }
            )
        )
    return tasks


def author(form: DraftForm) -> tuple[dict[str, Any], dict[str, Any]]:
    goal = form.goal()
    steps = [line.strip() for line in form.draft.instructions if line.strip()]
    if not steps:
        form.problem("instructions", "write at least one direction")
        steps = ["?"]
    route = form.route(goal)
    return {"instructions": steps}, {
        "goal": goal.model_dump(),
        "route": route or [form.start.segment],
    }


def draft_fields(task: TaskBase) -> dict[str, Any]:
    return {"instructions": task.told.model_dump()["instructions"]}


SPEC = FamilySpec(
    results_name="LanguageGuidedNavigation",
    model=VLNTask,
    short="vln",
    navigation=True,
    instructed_route=True,
    from_truth=generate,
    from_osm=generate,
    author=author,
    draft_fields=draft_fields,
)
