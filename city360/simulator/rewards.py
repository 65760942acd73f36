"""Rewards for learning in the Gymnasium env, per task family.

``CityEnv`` itself always returns 0.0: the evaluator (``city360.eval``) owns scoring. The
Gymnasium face (:class:`~city360.simulator.gym_env.CityGymEnv`) adds a reward when an episode
has a task (``reset(options={"task": task})`` or ``tasks=`` given to the env), built here from
a :class:`RewardConfig`:

- ``sparse`` (the default): nothing until ANSWER, then the task's own metric
  (:func:`city360.eval.metrics.score_answer`, a value in [0, 1]) times ``answer_scale``. For
  navigation families that is success (1 within the task's radius, else 0, measured from the
  answering position as the evaluator measures it: straight line to the goal); for answer
  families it is the metric of the answer (exact grid cell, count accuracy, fuzzy name).
- ``shaped``: the sparse term plus, for navigation families (``FamilySpec.navigation``),
  ``progress_per_m`` times the metres of *walking distance* to the goal gained by the step
  (:class:`city360.eval.distance.StreetDistance`: along the streets, so a detour round a block
  is not punished). This is potential-based shaping (potential = -walking distance), which
  keeps the optimal policy of the sparse task (Ng, Harada & Russell 1999).
- ``step_cost`` (either kind) is subtracted on every step, ANSWER included.

An episode without a task (a random start) has no goal and no answer to score: its reward is
``-step_cost`` per step. Every step's parts are in ``info["reward_terms"]``.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Literal

from city360.errors import ConfigError
from city360.streets import StreetGraph

__all__ = ["REWARD_KINDS", "RewardConfig", "RewardKind", "RewardTerms", "TaskReward"]

RewardKind = Literal["sparse", "shaped"]
REWARD_KINDS: tuple[str, ...] = ("sparse", "shaped")
_MAX_DISTANCE_FIELDS = 64
"""Street-distance fields (one Dijkstra from each goal) kept per reward; tasks repeat."""


@dataclass(frozen=True, slots=True)
class RewardConfig:
    """How the Gymnasium env rewards an episode (see the module docstring)."""

    kind: RewardKind = "sparse"
    """``sparse``: the task's metric at ANSWER only; ``shaped``: plus walking progress."""
    progress_per_m: float = 0.1
    """Reward per metre of walking distance to the goal gained (``shaped``, navigation
    families only; losing distance costs the same)."""
    step_cost: float = 0.0
    """Subtracted from every step's reward (>= 0)."""
    answer_scale: float = 1.0
    """Multiplies the metric's score at ANSWER (>= 0)."""

    def __post_init__(self) -> None:
        if self.kind not in REWARD_KINDS:
            msg = f"`reward` must be one of {', '.join(REWARD_KINDS)}, got {self.kind!r}"
            raise ConfigError(msg)
        for name in ("progress_per_m", "step_cost", "answer_scale"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
                msg = f"`{name}` must be a finite number >= 0, got {value!r}"
                raise ConfigError(msg)


@dataclass(frozen=True, slots=True)
class RewardTerms:
    """One step's reward and its parts (all unitless reward)."""

    progress: float = 0.0
    step_cost: float = 0.0
    answer: float = 0.0

    @property
    def total(self) -> float:
        return self.progress - self.step_cost + self.answer

    def as_info(self) -> dict[str, float]:
        return {"progress": self.progress, "step_cost": self.step_cost, "answer": self.answer}


class TaskReward:
    """The reward of one env's episodes on one city's street graph.

    ``reset(task, segment_id, offset_m)`` at each episode start (``task`` None for a random
    start), then ``step(segment_id, offset_m, x_m, y_m, answer)`` after each env step with the
    agent's new position (``x_m``/``y_m``: its frame's position in city metres) and the ANSWER
    text when the step answered.
    """

    def __init__(self, config: RewardConfig, graph: StreetGraph) -> None:
        self.config = config
        self.graph = graph
        self._fields: OrderedDict[tuple[float, float], Any] = OrderedDict()
        self._task: Any | None = None
        self._navigation = False
        self._distance: Any | None = None
        self._last_m: float | None = None

    def __repr__(self) -> str:
        return f"TaskReward({self.config!r})"

    def _street_distance(self, goal_xy: tuple[float, float]) -> Any:
        from city360.eval.distance import StreetDistance

        field = self._fields.get(goal_xy)
        if field is None:
            field = StreetDistance(self.graph, goal_xy)
            self._fields[goal_xy] = field
            if len(self._fields) > _MAX_DISTANCE_FIELDS:
                self._fields.popitem(last=False)
        else:
            self._fields.move_to_end(goal_xy)
        return field

    def reset(self, task: Any | None, segment_id: str, offset_m: float) -> None:
        """Start an episode of ``task`` (None: no task, no goal) at (segment, offset)."""
        self._task = task
        self._distance, self._last_m, self._navigation = None, None, False
        if task is None:
            return
        from city360.tasks.families import get_family

        self._navigation = get_family(str(task.family)).navigation
        goal = getattr(getattr(task, "truth", None), "goal", None)
        if self._navigation and goal is not None and self.config.kind == "shaped":
            self._distance = self._street_distance((float(goal.x_m), float(goal.y_m)))
            self._last_m = float(self._distance(segment_id, offset_m))

    def step(
        self, segment_id: str, offset_m: float, x_m: float, y_m: float, answer: str | None
    ) -> RewardTerms:
        """The reward of the step that left the agent at (segment, offset)."""
        progress = 0.0
        if self._distance is not None and self._last_m is not None:
            now = float(self._distance(segment_id, offset_m))
            if math.isfinite(now) and math.isfinite(self._last_m):
                progress = self.config.progress_per_m * (self._last_m - now)
            self._last_m = now
        scored = 0.0
        if answer is not None and self._task is not None:
            scored = self.config.answer_scale * self._score(answer, x_m, y_m)
        return RewardTerms(progress=progress, step_cost=self.config.step_cost, answer=scored)

    def _score(self, answer: str, x_m: float, y_m: float) -> float:
        from city360.eval.metrics import score_answer

        task = self._task
        goal = getattr(getattr(task, "truth", None), "goal", None)
        # the evaluator's distance (eval.recorder): straight line from the answering frame
        distance = None if goal is None else math.hypot(x_m - goal.x_m, y_m - goal.y_m)
        return float(score_answer(task, answer, distance).score)
