"""The parts of a task every family shares; each family's own models live in its module under
:mod:`city360.tasks.families` and are found through the family registry.

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

This module is a leaf: it imports no other part of :mod:`city360.tasks`. A family's prompt is
carried by its task model (``PROMPT_TEMPLATE``, ``ANSWER_FORMAT``), so rendering a prompt needs
no registry look-up and no import back from :mod:`city360.tasks.prompts`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

__all__ = [
    "DEFAULT_STEP_LIMIT",
    "IMAGE_FIELDS",
    "AgentTask",
    "CountStretch",
    "Difficulty",
    "Family",
    "GoalTruth",
    "Metric",
    "MetricName",
    "PromptRules",
    "StartPose",
    "Task",
    "TaskBase",
    "Told",
    "Truth",
]

DEFAULT_STEP_LIMIT = 50
"""Steps an episode may take before it is stopped (the reference benchmark's limit)."""

IMAGE_FIELDS = frozenset({"grid_map", "reference_image", "route_map"})
"""``told`` fields that hold a suite-relative image path the agent is given."""

_STRICT = ConfigDict(extra="forbid", frozen=True)


class Family(StrEnum):
    """Names of the built-in families: the seven of DESIGN.md "Tasks and results" and Errand
    (Mine Odyssey's ordered waypoints, issue 19).

    A task's ``family`` is a plain string: plugin families registered with
    :func:`city360.tasks.families.register_family` have names outside this enum.
    """

    LOCALIZATION = "Localization"
    LANDMARK_TEXT = "LandmarkSearchText"
    LANDMARK_IMAGE = "LandmarkSearchImage"
    MAP_NAVIGATION = "MapNavigation"
    VLN = "VLN"
    OBJECT_COUNT = "ObjectCount"
    RELATIONAL = "RelationalSpatial"
    ERRAND = "Errand"


class Difficulty(StrEnum):
    EASY = "Easy"
    MEDIUM = "Medium"
    HARD = "Hard"


class MetricName(StrEnum):
    """Names of the built-in metrics of :mod:`city360.eval.metrics` (plugins add more)."""

    EXACT_MATCH = "exact_match"
    COORDINATE_MATCH = "coordinate_match"
    COUNT_MRA = "count_mra"
    FUZZY_MATCH = "fuzzy_match"
    ERRAND_MATCH = "errand_match"


class Metric(BaseModel):
    """How an answer is scored: a metric registered in :mod:`city360.eval.metrics` by name.
    ``threshold_m`` (metres) only for metrics that need one (coordinate_match)."""

    model_config = _STRICT
    name: str
    threshold_m: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _threshold_only_where_used(self) -> Metric:
        # The metric registry is a leaf module (stdlib only), so this import is cheap.
        from city360.eval.metrics import get_metric

        try:
            spec = get_metric(self.name)
        except ValueError as exc:
            raise ValueError(str(exc)) from None
        if spec.needs_threshold and self.threshold_m is None:
            msg = f"{self.name} needs threshold_m (metres)"
            raise ValueError(msg)
        if not spec.needs_threshold and self.threshold_m is not None:
            msg = f"threshold_m is only used by coordinate_match, not {self.name}"
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
    side: Literal["both", "left", "right"] = "both"
    """Which side of the street counts, seen walking the stretch from its beginning."""
    marked: bool = False
    """True when an annotator marked the range on the map: it may begin away from the start
    pose (the agent walks there first), as the reference's ranges do ("the block to your
    left")."""

    @model_serializer(mode="wrap")
    def _omit_defaults(self, handler: Any) -> Any:
        # stretches written before ``side``/``marked`` existed keep their JSON, so the content
        # hashes of existing suites do not change
        data = handler(self)
        if isinstance(data, dict):
            if data.get("side") == "both":
                data.pop("side")
            if data.get("marked") is False:
                data.pop("marked")
        return data


@dataclass(frozen=True, slots=True)
class PromptRules:
    """What a protocol has the prompts tell the agent beyond the task's own text
    (:mod:`city360.eval.protocols` holds one per protocol).

    ``grid_origin``: the first grid index on the grid map and in the prompt (1 or 0);
    ``state_step_limit``: the prompt states the episode's step budget; ``goal_is_near``: the
    search prompts say the goal is not far from the start.
    """

    grid_origin: int = 1
    state_step_limit: bool = False
    goal_is_near: bool = False


class Told(BaseModel):
    """Base of what the agent is told (prompt variables, suite-relative image paths)."""

    model_config = _STRICT


class Truth(BaseModel):
    """Base of a family's hidden ground truth."""

    model_config = _STRICT

    def expected(self) -> str:
        """The answer as text, as a results table shows it."""
        raise NotImplementedError


class AgentTask(BaseModel):
    """Everything an agent may see of a task: no start pose, no ground truth.

    ``reference_images`` are absolute paths when produced by a loaded suite, else as stored.
    """

    model_config = _STRICT
    id: str
    family: str
    difficulty: Difficulty
    prompt: str
    answer_format: str
    reference_images: list[str]
    step_limit: int


class TaskBase(BaseModel):
    """Fields every family shares. ``meta`` holds generator statistics (route length, decision
    points, ...) for people and reports; it is never shown to an agent.

    A family narrows ``family`` (a ``Literal`` of its name), ``told``, ``truth`` and the default
    ``metric``, and sets the class variables below.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_\-][A-Za-z0-9_.\-]*$")
    """A slug; never starting with '.' (ids name files: step logs, assets)."""
    difficulty: Difficulty
    start: StartPose
    metric: Metric
    step_limit: int = Field(DEFAULT_STEP_LIMIT, ge=1, le=1000)
    meta: dict[str, Any] = Field(default_factory=dict)

    family: str
    told: Told
    truth: Truth

    EXPECTED_METRIC: ClassVar[str | None] = None
    """The metric this family is scored by; a task naming another is rejected."""
    PROMPT_TEMPLATE: ClassVar[str] = ""
    """``str.format`` template over :meth:`prompt_variables`."""
    ANSWER_FORMAT: ClassVar[str] = ""
    """The exact answer form the agent is told, appended to the prompt."""
    GOAL_IS_NEAR: ClassVar[bool] = False
    """The family's goal is near the start (the reference's landmark prompts say so)."""

    @model_validator(mode="after")
    def _metric_fits_family(self) -> TaskBase:
        expected = type(self).EXPECTED_METRIC
        if expected is not None and self.metric.name != expected:
            msg = f"a {self.family} task is scored by {expected}, not {self.metric.name}"
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
            value for name, value in self.told if name in IMAGE_FIELDS and isinstance(value, str)
        ]

    def prompt_variables(self) -> dict[str, Any]:
        """The template's variables; a family overrides this to format lists, units, ..."""
        return self.told.model_dump()

    def prompt_variables_for(self, rules: PromptRules) -> dict[str, Any]:
        """The template's variables under a protocol's ``rules`` (Localization numbers its
        grid from ``rules.grid_origin``); by default :meth:`prompt_variables`."""
        return self.prompt_variables()

    def answer_format_for(self, rules: PromptRules) -> str:
        """The answer format under ``rules``; by default ``ANSWER_FORMAT``."""
        return type(self).ANSWER_FORMAT

    def prompt_template(self) -> str:
        """The template this task renders (a family may pick a variant per task)."""
        return type(self).PROMPT_TEMPLATE

    def render_prompt(self, rules: PromptRules | None = None) -> str:
        """The task's prompt, with the protocol's notes (the step budget, "the goal is not
        far") and the answer format appended on their own lines."""
        rules = rules or PromptRules()
        body = self.prompt_template().format(**self.prompt_variables_for(rules))
        notes: list[str] = []
        if rules.goal_is_near and type(self).GOAL_IS_NEAR:
            notes.append("The goal is not far from the starting point.")
        if rules.state_step_limit:
            notes.append(f"You must give your final answer within {self.step_limit} steps.")
        lines = [body, *notes, f"Answer format: {self.answer_format_for(rules)}."]
        return "\n".join(lines)

    def agent_view(
        self,
        *,
        suite_root: str | None = None,
        rules: PromptRules | None = None,
        images: Mapping[str, str] | None = None,
    ) -> AgentTask:
        """What the agent may see: the prompt, the answer format and the reference images.

        ``rules`` are the protocol's prompt rules; ``images`` replaces told image fields by
        other files (absolute paths), e.g. a grid map numbered from 0 under the reference."""
        rules = rules or PromptRules()
        replaced = dict(images or {})
        paths: list[str] = []
        for name, value in self.told:
            if name not in IMAGE_FIELDS or not isinstance(value, str):
                continue
            if name in replaced:
                paths.append(replaced[name])
            elif suite_root is not None:
                paths.append(str(Path(suite_root) / value))
            else:
                paths.append(value)
        return AgentTask(
            id=self.id,
            family=str(self.family),
            difficulty=self.difficulty,
            prompt=self.render_prompt(rules),
            answer_format=self.answer_format_for(rules),
            reference_images=paths,
            step_limit=self.step_limit,
        )


Task = TaskBase
"""Any task. Parse one from JSON with :func:`city360.tasks.families.parse_task`, which picks the
family's model from ``family`` through the registry (built-in and plugin families alike)."""
