"""Landmark search (image): find the place a reference picture shows, stand there, ANSWER.

Scored by coordinate_match within 10 m. Made from ground truth only: from OSM it would need a
view of the place taken from the video that a person has confirmed shows the sign.
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

__all__ = ["SPEC", "LandmarkImageTold", "LandmarkSearchImageTask", "generate"]


class LandmarkImageTold(Told):
    reference_image: str = Field(description="suite-relative path of the landmark's picture")


class LandmarkSearchImageTask(TaskBase):
    EXPECTED_METRIC: ClassVar[str | None] = MetricName.COORDINATE_MATCH
    PROMPT_TEMPLATE: ClassVar[str] = (
        "The attached picture was taken on a street in this city, looking at a place. Find "
        "that place: walk until you stand where the picture could have been taken, then give "
        "the ANSWER action. Your answer is judged by where you are when you give it."
    )
    ANSWER_FORMAT: ClassVar[str] = (
        "walk there, then ANSWER (any text) while standing in front of it"
    )
    GOAL_IS_NEAR: ClassVar[bool] = True
    family: Literal[Family.LANDMARK_IMAGE] = Family.LANDMARK_IMAGE
    told: LandmarkImageTold
    truth: LandmarkTruth
    metric: Metric = Metric(name=MetricName.COORDINATE_MATCH, threshold_m=10.0)


def _told(ctx: GenerationContext, task_id: str, place: PlacedPoi) -> dict[str, Any]:
    view = place.poi.view
    image = ctx.images.landmark_view(
        view.x_m, view.y_m, heading_deg=view.heading_deg, look_bearing_deg=view.look_bearing_deg
    )
    return {"reference_image": ctx.add_asset(task_id, image)}


def generate(
    ctx: GenerationContext, source: GenerationSource, n: int, report: GenerationReport
) -> list[TaskBase]:
    return _landmark.landmark_tasks(ctx, source.placed, n, report, spec=SPEC, told_for=_told)


def author(form: DraftForm) -> tuple[dict[str, Any], dict[str, Any]]:
    _, truth = _landmark.landmark_truth(form)
    return {"reference_image": form.reference_image()}, truth


def draft_fields(task: TaskBase) -> dict[str, Any]:
    return {
        "landmark": task.truth.model_dump()["landmark_name"],
        "reference_image": task.told.model_dump()["reference_image"],
    }


SPEC = FamilySpec(
    results_name="LandmarkSearchWithImage",
    model=LandmarkSearchImageTask,
    short="lmi",
    navigation=True,
    from_truth=generate,
    osm_note="needs a confirmed view of the place from the video",
    check=_landmark.check,
    author=author,
    draft_fields=draft_fields,
)
