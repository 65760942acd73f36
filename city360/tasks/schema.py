"""The task schema: seven families, one pydantic model each, discriminated by ``family``.

A task is what the evaluator needs to run and score one episode:

- ``start``: where the episode begins, as a segment of the pose graph plus an offset along it
  (what the simulator uses), and the same pose as lat/lon/heading for people;
- ``told``: what the agent is told (prompt variables and reference images, paths relative to
  the suite folder);
- ``truth``: hidden ground truth (goal position and threshold, answer, count, grid cell);
- ``metric``: how the answer is scored; ``step_limit``: the episode's step budget.

Ground truth lives in its own sub-model so that :meth:`TaskBase.agent_view` can hand an agent
everything it may see and nothing it may not (the start pose is hidden too: a localization agent
must not learn where it is from its task).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "DEFAULT_STEP_LIMIT",
    "AgentTask",
    "CountStretch",
    "Difficulty",
    "Family",
    "GoalTruth",
    "LandmarkSearchImageTask",
    "LandmarkSearchTextTask",
    "LocalizationTask",
    "MapNavigationTask",
    "Metric",
    "MetricName",
    "ObjectCountTask",
    "RelationalSpatialTask",
    "StartPose",
    "Task",
    "TaskBase",
    "VLNTask",
]

DEFAULT_STEP_LIMIT = 50
"""Steps an episode may take before it is stopped (the reference benchmark's limit)."""

_STRICT = ConfigDict(extra="forbid", frozen=True)


class Family(StrEnum):
    """The seven task families of DESIGN.md "Tasks and results"."""

    LOCALIZATION = "Localization"
    LANDMARK_TEXT = "LandmarkSearchText"
    LANDMARK_IMAGE = "LandmarkSearchImage"
    MAP_NAVIGATION = "MapNavigation"
    VLN = "VLN"
    OBJECT_COUNT = "ObjectCount"
    RELATIONAL = "RelationalSpatial"


class Difficulty(StrEnum):
    EASY = "Easy"
    MEDIUM = "Medium"
    HARD = "Hard"


class MetricName(StrEnum):
    """Names shared with :mod:`city360.eval.metrics`."""

    EXACT_MATCH = "exact_match"
    COORDINATE_MATCH = "coordinate_match"
    COUNT_MRA = "count_mra"
    FUZZY_MATCH = "fuzzy_match"


class Metric(BaseModel):
    """How an answer is scored. ``threshold_m`` only for coordinate_match (metres)."""

    model_config = _STRICT
    name: MetricName
    threshold_m: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _threshold_only_for_coordinates(self) -> Metric:
        if self.name is MetricName.COORDINATE_MATCH and self.threshold_m is None:
            msg = "coordinate_match needs threshold_m (metres)"
            raise ValueError(msg)
        if self.name is not MetricName.COORDINATE_MATCH and self.threshold_m is not None:
            msg = f"threshold_m is only used by coordinate_match, not {self.name.value}"
            raise ValueError(msg)
        return self


class StartPose(BaseModel):
    """Where an episode starts.

    ``segment`` is a pose-graph edge id and ``offset_m`` the distance travelled along it (in its
    traversal direction), which is what the simulator resets to. ``lat``/``lon``/``heading_deg``
    (travel heading, clockwise from north) describe the same pose for people and maps.
    ``yaw_deg`` is the initial view yaw relative to travel, positive to the right.
    """

    model_config = _STRICT
    segment: str = Field(min_length=1)
    offset_m: float = Field(ge=0)
    lat: float = Field(ge=-90, le=90)
    lon: float = Field(ge=-180, le=180)
    heading_deg: float = Field(ge=0, lt=360)
    yaw_deg: float = Field(0.0, ge=-180, le=180)


class GoalTruth(BaseModel):
    """A place to arrive at: metres in the city CRS plus WGS84, and the success radius."""

    model_config = _STRICT
    x_m: float
    y_m: float
    lat: float = Field(ge=-90, le=90)
    lon: float = Field(ge=-180, le=180)
    threshold_m: float = Field(gt=0)
    segment: str | None = Field(None, description="pose-graph edge the goal lies on, if known")
    offset_m: float | None = Field(None, ge=0)


class CountStretch(BaseModel):
    """A stretch of street along which objects are counted: consecutive pose-graph segments,
    from ``start_offset_m`` on the first to ``end_offset_m`` on the last, and objects within
    ``lateral_range_m`` of the walked line."""

    model_config = _STRICT
    segments: list[str] = Field(min_length=1)
    start_offset_m: float = Field(ge=0)
    end_offset_m: float = Field(ge=0)
    lateral_range_m: float = Field(gt=0)


# --- what the agent is told, per family -------------------------------------------------------


class _Told(BaseModel):
    model_config = _STRICT


class LocalizationTold(_Told):
    grid_size: int = Field(ge=2, le=26)
    grid_map: str = Field(description="suite-relative path of the gridded map image")


class LandmarkTextTold(_Told):
    landmark: str = Field(min_length=1)


class LandmarkImageTold(_Told):
    reference_image: str = Field(description="suite-relative path of the landmark's picture")


class MapNavigationTold(_Told):
    route_map: str = Field(description="suite-relative path of the map with BLUE start, RED goal")


class VLNTold(_Told):
    instructions: list[str] = Field(min_length=1)


class ObjectCountTold(_Told):
    object_kind: str = Field(min_length=1, description="e.g. tree, bench, vending_machine")
    stretch: str = Field(min_length=1, description="the stretch in words, as the agent reads it")


class RelationalTold(_Told):
    question: str = Field(min_length=1)


# --- hidden ground truth, per family ----------------------------------------------------------


class _Truth(BaseModel):
    model_config = _STRICT

    def expected(self) -> str:
        """The answer as text, as a results table shows it."""
        raise NotImplementedError


class LocalizationTruth(_Truth):
    cell: tuple[int, int] = Field(description="(i, j): column from 1 at west, row from 1 at north")
    x_m: float
    y_m: float

    @field_validator("cell")
    @classmethod
    def _cell_positive(cls, cell: tuple[int, int]) -> tuple[int, int]:
        if min(cell) < 1:
            msg = f"grid cells count from 1, got {cell}"
            raise ValueError(msg)
        return cell

    def expected(self) -> str:
        return f"x:{self.cell[0]} y:{self.cell[1]}"


class LandmarkTruth(_Truth):
    goal: GoalTruth
    landmark_id: str
    landmark_name: str

    def expected(self) -> str:
        return f"{self.goal.lat:.7f},{self.goal.lon:.7f}"


class MapNavigationTruth(_Truth):
    goal: GoalTruth
    route: list[str] = Field(default_factory=list, description="segments of a shortest route")

    def expected(self) -> str:
        return f"{self.goal.lat:.7f},{self.goal.lon:.7f}"


class VLNTruth(_Truth):
    goal: GoalTruth
    route: list[str] = Field(min_length=1, description="segments the directions describe")
    goal_landmark_id: str | None = None

    def expected(self) -> str:
        return f"{self.goal.lat:.7f},{self.goal.lon:.7f}"


class ObjectCountTruth(_Truth):
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


class RelationalTruth(_Truth):
    answer: str = Field(min_length=1)
    answer_id: str | None = None
    relation: Literal["left_of", "right_of", "across_from"]
    anchor_id: str
    anchor_name: str

    def expected(self) -> str:
        return self.answer


# --- tasks ------------------------------------------------------------------------------------


class AgentTask(BaseModel):
    """Everything an agent may see of a task: no start pose, no ground truth.

    ``reference_images`` are absolute paths when produced by a loaded suite, else as stored.
    """

    model_config = _STRICT
    id: str
    family: Family
    difficulty: Difficulty
    prompt: str
    answer_format: str
    reference_images: list[str]
    step_limit: int


class TaskBase(BaseModel):
    """Fields every family shares. ``meta`` holds generator statistics (route length, decision
    points, ...) for people and reports; it is never shown to an agent."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.\-]+$")
    difficulty: Difficulty
    start: StartPose
    metric: Metric
    step_limit: int = Field(DEFAULT_STEP_LIMIT, ge=1, le=1000)
    meta: dict[str, Any] = Field(default_factory=dict)

    # Narrowed by each family.
    family: Family
    told: _Told
    truth: _Truth

    EXPECTED_METRIC: ClassVar[MetricName | None] = None

    @model_validator(mode="after")
    def _metric_fits_family(self) -> TaskBase:
        expected = type(self).EXPECTED_METRIC
        if expected is not None and self.metric.name is not expected:
            msg = (
                f"a {self.family.value} task is scored by {expected.value}, "
                f"not {self.metric.name.value}"
            )
            raise ValueError(msg)
        goal = getattr(self.truth, "goal", None)
        if goal is not None and goal.threshold_m != self.metric.threshold_m:
            msg = (
                f"truth.goal.threshold_m ({goal.threshold_m}) differs from "
                f"metric.threshold_m ({self.metric.threshold_m})"
            )
            raise ValueError(msg)
        return self

    def expected_answer(self) -> str:
        """The hidden answer as text (for results tables), never for agents."""
        return self.truth.expected()

    def reference_image_paths(self) -> list[str]:
        """Suite-relative paths of every image the agent is given."""
        return [
            value
            for name, value in self.told
            if name in {"grid_map", "reference_image", "route_map"} and isinstance(value, str)
        ]

    def agent_view(self, *, suite_root: str | None = None) -> AgentTask:
        """What the agent may see: the prompt, the answer format and the reference images."""
        from city360.tasks.prompts import answer_format, render_prompt

        images = self.reference_image_paths()
        if suite_root is not None:
            from pathlib import Path

            images = [str(Path(suite_root) / image) for image in images]
        return AgentTask(
            id=self.id,
            family=self.family,
            difficulty=self.difficulty,
            prompt=render_prompt(self),
            answer_format=answer_format(self.family),
            reference_images=images,
            step_limit=self.step_limit,
        )


def _coordinate(threshold_m: float) -> Metric:
    return Metric(name=MetricName.COORDINATE_MATCH, threshold_m=threshold_m)


class LocalizationTask(TaskBase):
    EXPECTED_METRIC: ClassVar[MetricName | None] = MetricName.EXACT_MATCH
    family: Literal[Family.LOCALIZATION] = Family.LOCALIZATION
    told: LocalizationTold
    truth: LocalizationTruth
    metric: Metric = Metric(name=MetricName.EXACT_MATCH)


class LandmarkSearchTextTask(TaskBase):
    EXPECTED_METRIC: ClassVar[MetricName | None] = MetricName.COORDINATE_MATCH
    family: Literal[Family.LANDMARK_TEXT] = Family.LANDMARK_TEXT
    told: LandmarkTextTold
    truth: LandmarkTruth
    metric: Metric = _coordinate(10.0)


class LandmarkSearchImageTask(TaskBase):
    EXPECTED_METRIC: ClassVar[MetricName | None] = MetricName.COORDINATE_MATCH
    family: Literal[Family.LANDMARK_IMAGE] = Family.LANDMARK_IMAGE
    told: LandmarkImageTold
    truth: LandmarkTruth
    metric: Metric = _coordinate(10.0)


class MapNavigationTask(TaskBase):
    EXPECTED_METRIC: ClassVar[MetricName | None] = MetricName.COORDINATE_MATCH
    family: Literal[Family.MAP_NAVIGATION] = Family.MAP_NAVIGATION
    told: MapNavigationTold
    truth: MapNavigationTruth
    metric: Metric = _coordinate(20.0)


class VLNTask(TaskBase):
    EXPECTED_METRIC: ClassVar[MetricName | None] = MetricName.COORDINATE_MATCH
    family: Literal[Family.VLN] = Family.VLN
    told: VLNTold
    truth: VLNTruth
    metric: Metric = _coordinate(10.0)


class ObjectCountTask(TaskBase):
    EXPECTED_METRIC: ClassVar[MetricName | None] = MetricName.COUNT_MRA
    family: Literal[Family.OBJECT_COUNT] = Family.OBJECT_COUNT
    told: ObjectCountTold
    truth: ObjectCountTruth
    metric: Metric = Metric(name=MetricName.COUNT_MRA)


class RelationalSpatialTask(TaskBase):
    EXPECTED_METRIC: ClassVar[MetricName | None] = MetricName.FUZZY_MATCH
    family: Literal[Family.RELATIONAL] = Family.RELATIONAL
    told: RelationalTold
    truth: RelationalTruth
    metric: Metric = Metric(name=MetricName.FUZZY_MATCH)


Task = Annotated[
    LocalizationTask
    | LandmarkSearchTextTask
    | LandmarkSearchImageTask
    | MapNavigationTask
    | VLNTask
    | ObjectCountTask
    | RelationalSpatialTask,
    Field(discriminator="family"),
]
"""Any task; pydantic picks the model from ``family``."""
