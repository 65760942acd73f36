"""Object count: count the objects of one kind along a stretch of street, ANSWER a number.

Scored by count_mra (mean relative accuracy over θ = 0.50 ... 0.95). Made from ground truth
only: OSM does not map every object along a street (a street's trees and benches are rarely all
there). Stretches are walked by :mod:`city360.tasks.stretch`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, model_validator

from city360.tasks.difficulty import CountFeatures
from city360.tasks.families._registry import FamilySpec
from city360.tasks.schema import CountStretch, Family, Metric, MetricName, TaskBase, Told, Truth

if TYPE_CHECKING:
    from city360.synth.groundtruth import SceneTruth
    from city360.tasks.check import CheckContext, CheckIssue
    from city360.tasks.generate.common import GenerationContext, GenerationReport
    from city360.tasks.generate.sources import GenerationSource
    from city360.tasks.stretch import CountableObject
    from city360.viewer.authoring import DraftForm

__all__ = [
    "COUNT_LATERAL_RANGE_M",
    "SPEC",
    "ObjectCountTask",
    "ObjectCountTold",
    "ObjectCountTruth",
    "countable_objects",
    "generate",
]

COUNT_LATERAL_RANGE_M = 12.0
"""Objects further than this from the walked line are not on the stretch (sidewalk + verge)."""


class ObjectCountTold(Told):
    object_kind: str = Field(min_length=1, description="e.g. tree, bench, vending_machine")
    stretch: str = Field(min_length=1, description="the stretch in words, as the agent reads it")


class ObjectCountTruth(Truth):
    count: int = Field(ge=0)
    object_ids: list[str] = Field(default_factory=list)
    stretch: CountStretch

    def expected(self) -> str:
        return str(self.count)

    @model_validator(mode="after")
    def _ids_match_count(self) -> ObjectCountTruth:
        if self.object_ids and len(self.object_ids) != self.count:
            msg = f"count is {self.count} but {len(self.object_ids)} object_ids are listed"
            raise ValueError(msg)
        return self


class ObjectCountTask(TaskBase):
    EXPECTED_METRIC: ClassVar[str | None] = MetricName.COUNT_MRA
    PROMPT_TEMPLATE: ClassVar[str] = (
        "Count every {object_kind} you can see {stretch}. Look at both sides of the street. "
        "When you have counted them all, answer with one whole number."
    )
    ANSWER_FORMAT: ClassVar[str] = "ANSWER with a single whole number, e.g. `3`"
    family: Literal[Family.OBJECT_COUNT] = Family.OBJECT_COUNT
    told: ObjectCountTold
    truth: ObjectCountTruth
    metric: Metric = Metric(name=MetricName.COUNT_MRA)

    SIDE_PROMPT_TEMPLATE: ClassVar[str] = (
        "Count every {object_kind} you can see {stretch}. Count only those on the {side} side "
        "of the street, walking the stretch from its beginning. When you have counted them "
        "all, answer with one whole number."
    )

    def prompt_variables(self) -> dict[str, Any]:
        told = self.told.model_dump()
        told["object_kind"] = told["object_kind"].replace("_", " ")
        told["side"] = self.truth.stretch.side
        return told

    def prompt_template(self) -> str:
        """A range on one side of the street says so (annotated ranges)."""
        if self.truth.stretch.side != "both":
            return type(self).SIDE_PROMPT_TEMPLATE
        return type(self).PROMPT_TEMPLATE


def generate(
    ctx: GenerationContext, source: GenerationSource, n: int, report: GenerationReport
) -> list[TaskBase]:
    objects = countable_objects(source.truth) if source.truth is not None else []
    return object_count_tasks(ctx, objects, n, report, source=source.kind)


def countable_objects(truth: SceneTruth) -> list[CountableObject]:
    from city360.tasks.stretch import CountableObject

    return [CountableObject(o.id, o.kind, o.x_m, o.y_m) for o in truth.objects]


def object_count_tasks(
    ctx: GenerationContext,
    objects: Sequence[CountableObject],
    n: int,
    report: GenerationReport,
    *,
    source: str,
) -> list[TaskBase]:
    from city360.tasks.generate.candidates import CANDIDATE_FACTOR, STEP_HEADROOM, task_ids
    from city360.tasks.generate.common import balanced_pick
    from city360.tasks.stretch import (
        StretchIndex,
        describe_stretch,
        objects_in_stretch,
        stretch_length_m,
        walk_stretch,
    )

    kinds = sorted({o.kind for o in objects})
    if not kinds:
        report.notes.append("ObjectCount: the city has no countable objects")
        return []
    index = StretchIndex(ctx.graph)
    candidates = []
    for _ in range(n * CANDIDATE_FACTOR * ctx.difficulty.candidate_factor):
        seg, offset = ctx.random_start()
        through = int(ctx.rng.choice(list(ctx.difficulty.count_through)))
        stretch = walk_stretch(
            ctx.graph, seg, offset, through=through, lateral_range_m=COUNT_LATERAL_RANGE_M
        )
        if stretch is None:
            report.reject(SPEC.name, "no straight stretch of that length ahead")
            continue
        kind = kinds[int(ctx.rng.integers(len(kinds)))]
        ids = objects_in_stretch(ctx.graph, stretch, objects, kind=kind, index=index)
        length = stretch_length_m(ctx.graph, stretch)
        if length > ctx.step_limit * STEP_HEADROOM * max(ctx.move_m) / 2:
            report.reject(SPEC.name, "stretch too long to walk in the step budget")
            continue
        features = CountFeatures(len(ids), length)
        level = ctx.difficulty.count(features)
        if level is None:
            report.reject(SPEC.name, f"no level under the {ctx.difficulty.name!r} rules")
            continue
        candidates.append((level, (stretch, kind, ids, features)))
    chosen = balanced_pick(
        candidates,
        n,
        key=lambda c: f"{c[0].segments[0]}:{round(c[0].start_offset_m / 10)}:{c[1]}",
        closeness=lambda level, c: ctx.difficulty.count_distance(level, c[3]),
    )
    tasks: list[TaskBase] = []
    for task_id, (level, (stretch, kind, ids, features)) in zip(
        task_ids(SPEC.short, n), chosen, strict=False
    ):
        tasks.append(
            ObjectCountTask.model_validate(
                {
                    "id": task_id,
                    "difficulty": level,
                    "start": ctx.start_pose(stretch.segments[0], stretch.start_offset_m),
                    "told": {"object_kind": kind, "stretch": describe_stretch(ctx.graph, stretch)},
                    "truth": {"count": len(ids), "object_ids": ids, "stretch": stretch},
                    "step_limit": ctx.step_limit,
                    "meta": {**features.as_meta(), "source": source},
                }
            )
        )
    return tasks


# --- check ------------------------------------------------------------------------------------


def check(task: TaskBase, checker: CheckContext) -> list[CheckIssue]:
    """The stretch starts at the start pose; with object ground truth, the count is right."""
    from city360.errors import TaskError
    from city360.tasks.check import OFFSET_TOLERANCE_M, CheckIssue
    from city360.tasks.stretch import StretchIndex, objects_in_stretch

    truth = task.truth
    if not isinstance(truth, ObjectCountTruth):
        return []
    graph = checker.graph
    stretch = truth.stretch
    if checker.truth is None:
        checker.skip("object counts: the city has no object ground truth")
    for seg_id in stretch.segments:
        if seg_id not in graph.segments:
            return [
                CheckIssue(
                    task.id, "truth.stretch.segments", f"segment {seg_id!r} is not in the graph"
                )
            ]
    scene = checker.truth
    begins_at_start = stretch.segments[0] == task.start.segment and (
        abs(stretch.start_offset_m - task.start.offset_m) <= OFFSET_TOLERANCE_M
    )
    if not begins_at_start and not stretch.marked:
        return [
            CheckIssue(task.id, "truth.stretch", "the stretch does not begin at the start pose")
        ]
    if not begins_at_start:  # a range marked on the map: the agent must be able to walk there
        try:
            graph.shortest_route(task.start.segment, stretch.segments[0])
        except TaskError:
            return [
                CheckIssue(
                    task.id, "truth.stretch", "the marked range cannot be walked to from the start"
                )
            ]
    if scene is None:
        return []
    objects = checker.cached("countable_objects", lambda: countable_objects(scene))
    index = checker.cached("stretch_index", lambda: StretchIndex(graph))
    kind = str(task.told.model_dump()["object_kind"])
    found = objects_in_stretch(graph, stretch, objects, kind=kind, index=index)
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


# --- authoring --------------------------------------------------------------------------------


def author(form: DraftForm) -> tuple[dict[str, Any], dict[str, Any]]:
    """The stretch runs from the start to the picked goal (or the street's end ahead)."""
    from city360.tasks.stretch import describe_stretch

    kind = form.text("object_kind")
    if not kind:
        form.problem("object_kind", "say what to count, e.g. tree")
        kind = "?"
    answer = form.text("answer")
    if not re.fullmatch(r"\d{1,6}", answer):
        form.problem("answer", f"the count must be one whole number, got {answer!r}")
        answer = "0"
    stretch = form.stretch(lateral_range_m=COUNT_LATERAL_RANGE_M)
    side = form.text("count_side") or "both"
    if side not in ("both", "left", "right"):
        form.problem("count_side", f"side must be both, left or right, got {side!r}")
        side = "both"
    stretch = stretch.model_copy(update={"side": side})
    told = {
        "object_kind": kind.replace(" ", "_"),
        "stretch": form.text("stretch") or describe_stretch(form.graph, stretch),
    }
    return told, {"count": int(answer), "stretch": stretch.model_dump()}


def draft_fields(task: TaskBase) -> dict[str, Any]:
    told, truth = task.told.model_dump(), task.truth.model_dump()
    stretch = truth["stretch"]
    return {
        "object_kind": told["object_kind"].replace("_", " "),
        "stretch": told["stretch"],
        "answer": str(truth["count"]),
        "goal": {"segment": stretch["segments"][-1], "offset_m": stretch["end_offset_m"]},
        "count_side": stretch.get("side", "both"),
        **(
            {
                "range_start": {
                    "segment": stretch["segments"][0],
                    "offset_m": stretch["start_offset_m"],
                }
            }
            if stretch.get("marked")
            else {}
        ),
    }


SPEC = FamilySpec(
    results_name="Counting",
    model=ObjectCountTask,
    short="cnt",
    from_truth=generate,
    osm_note="OSM does not map every object along a street",
    check=check,
    author=author,
    draft_fields=draft_fields,
)
