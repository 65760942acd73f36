"""Landmark search (text): find a named place, stand in front of it, ANSWER.

Scored by coordinate_match within 10 m of the pose in front of its sign. Made from ground truth
and from OSM (a POI with a unique name near a filmed street).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from city360.tasks.families import _landmark
from city360.tasks.families._landmark import LandmarkTruth
from city360.tasks.families._registry import FamilySpec
from city360.tasks.schema import Family, Metric, MetricName, TaskBase, Told

if TYPE_CHECKING:
    from city360.tasks.generate.common import GenerationContext, GenerationReport
    from city360.tasks.generate.sources import GenerationSource, PlacedPoi
    from city360.viewer.authoring import DraftForm

__all__ = ["SPEC", "LandmarkSearchTextTask", "LandmarkTextTold", "generate"]


class LandmarkTextTold(Told):
    landmark: str = Field(min_length=1)


class LandmarkSearchTextTask(TaskBase):
    EXPECTED_METRIC: ClassVar[str | None] = MetricName.COORDINATE_MATCH
    PROMPT_TEMPLATE: ClassVar[str] = (
        "Find {landmark} in this city. Walk through the streets until you stand on the street "
        "in front of it, then give the ANSWER action. Your answer is judged by where you are "
        "when you give it, not by its text."
    )
    ANSWER_FORMAT: ClassVar[str] = (
        "walk there, then ANSWER (any text) while standing in front of it"
    )
    GOAL_IS_NEAR: ClassVar[bool] = True
    family: Literal[Family.LANDMARK_TEXT] = Family.LANDMARK_TEXT
    told: LandmarkTextTold
    truth: LandmarkTruth
    metric: Metric = Metric(name=MetricName.COORDINATE_MATCH, threshold_m=10.0)


def _told(ctx: GenerationContext, task_id: str, place: PlacedPoi) -> dict[str, Any]:
    return {"landmark": place.poi.name}


def generate(
    ctx: GenerationContext, source: GenerationSource, n: int, report: GenerationReport
) -> list[TaskBase]:
    return _landmark.landmark_tasks(ctx, source.placed, n, report, spec=SPEC, told_for=_told)


def author(form: DraftForm) -> tuple[dict[str, Any], dict[str, Any]]:
    name, truth = _landmark.landmark_truth(form)
    return {"landmark": name}, truth


def draft_fields(task: TaskBase) -> dict[str, Any]:
    return {"landmark": task.truth.model_dump()["landmark_name"]}


SPEC = FamilySpec(
    results_name="LandmarkSearchWithLanguage",
    model=LandmarkSearchTextTask,
    short="lmt",
    navigation=True,
    from_truth=generate,
    from_osm=generate,
    check=_landmark.check,
    author=author,
    draft_fields=draft_fields,
)
