"""Stop conditions of an episode (DESIGN.md "Tasks and results").

An episode ends when the agent answers, or when one of these fires first:

- ``STEP_LIMIT``: the task's step limit (default 50) is used up;
- ``STAGNATION``: the same action ``stagnation_steps`` times in a row (default 20) without the
  agent's position changing;
- ``AWAY_FROM_GOAL``: ``away_steps`` consecutive moves (default 5) that each increased the
  distance to the goal (map navigation only). The runner feeds the walking distance along the
  streets (:mod:`city360.eval.distance`), not the straight line, so a shortest route that
  first leads away from the goal is not stopped;
- ``STEP_TIMEOUT``: the agent took longer than ``step_timeout_s`` to decide (checked by the
  runner, recorded here for one vocabulary).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from city360.errors import ConfigError

__all__ = ["StopConfig", "StopMonitor", "StopReason"]


class StopReason(StrEnum):
    ANSWERED = "answered"
    STEP_LIMIT = "step_limit"
    STAGNATION = "stagnation"
    AWAY_FROM_GOAL = "away_from_goal"
    STEP_TIMEOUT = "step_timeout"
    AGENT_ERROR = "agent_error"
    INFRASTRUCTURE_ERROR = "infrastructure_error"
    INTERRUPTED = "interrupted"


@dataclass(frozen=True, slots=True)
class StopConfig:
    """Thresholds of the stop conditions; defaults are the reference benchmark's."""

    step_limit: int = 50
    stagnation_steps: int = 20
    away_steps: int = 5
    away_from_goal: bool = False
    step_timeout_s: float = 120.0
    position_epsilon_m: float = 0.05

    def __post_init__(self) -> None:
        for name in ("step_limit", "stagnation_steps", "away_steps"):
            if getattr(self, name) < 1:
                msg = f"`{name}` must be >= 1, got {getattr(self, name)}"
                raise ConfigError(msg)
        if not self.step_timeout_s > 0:
            msg = f"`step_timeout_s` must be > 0, got {self.step_timeout_s}"
            raise ConfigError(msg)


class StopMonitor:
    """Feed it every step; it says when the episode must stop and why."""

    def __init__(self, config: StopConfig) -> None:
        self.config = config
        self.steps = 0
        self._last_action: str | None = None
        self._identical_still = 0
        self._away_moves = 0
        self._last_xy: tuple[float, float] | None = None
        self._last_distance: float | None = None

    def start(self, x_m: float, y_m: float, distance_to_goal_m: float | None = None) -> None:
        """Record the start pose (and distance to the goal, if the task has one)."""
        self._last_xy = (x_m, y_m)
        self._last_distance = distance_to_goal_m

    def update(
        self,
        action: str,
        x_m: float,
        y_m: float,
        distance_to_goal_m: float | None = None,
    ) -> StopReason | None:
        """Account for one step that ended at ``(x_m, y_m)``; return a reason to stop, or None."""
        self.steps += 1
        previous = self._last_xy if self._last_xy is not None else (x_m, y_m)
        moved = math.dist(previous, (x_m, y_m)) > self.config.position_epsilon_m
        self._last_xy = (x_m, y_m)

        if not moved and action == self._last_action:
            self._identical_still += 1
        elif not moved:
            self._identical_still = 1
        else:
            self._identical_still = 0
        self._last_action = action

        if moved and distance_to_goal_m is not None and self._last_distance is not None:
            if distance_to_goal_m > self._last_distance + 1e-6:
                self._away_moves += 1
            elif distance_to_goal_m < self._last_distance - 1e-6:
                self._away_moves = 0
        if distance_to_goal_m is not None:
            self._last_distance = distance_to_goal_m

        if self.config.away_from_goal and self._away_moves >= self.config.away_steps:
            return StopReason.AWAY_FROM_GOAL
        if self._identical_still >= self.config.stagnation_steps:
            return StopReason.STAGNATION
        if self.steps >= self.config.step_limit:
            return StopReason.STEP_LIMIT
        return None
