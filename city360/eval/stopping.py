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

Two sets of rules implement them, picked by the run's protocol (:mod:`city360.eval.protocols`)
through :data:`STOP_RULES`:

- :class:`StopMonitor` (``"city360"``, the default protocol) judges each action after it was
  applied, counts every action (a fallback done for an unusable reply too), and the
  away-from-goal streak only counts and resets on moves;
- :class:`ReferenceStopMonitor` (``"reference"``) reproduces 360CityArena's agent server
  (``python/src/cityarena/runner/agent_server.py``, ``early_stopping``): the rules run on each
  decision *before* it is applied, on the position the previous action left; only successful
  decisions count as steps; the step limit stops the decision that reaches it unless it is
  ANSWER; stagnation counts decisions whose action repeats the previous one while the position
  stayed within ``position_epsilon_m`` (so it fires on the 21st identical decision); the
  away-from-goal streak resets on any decision that did not increase the distance by more than
  ``max(position_epsilon_m, 0.01)`` m (a rotation too).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from city360.errors import ConfigError

__all__ = [
    "STOP_RULES",
    "ReferenceStopMonitor",
    "StopConfig",
    "StopMonitor",
    "StopReason",
    "StopRules",
    "make_stop_monitor",
]


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
    request_cap_factor: int = 4
    """Under rules that do not count unusable decisions as steps, an episode also stops after
    ``request_cap_factor * step_limit`` decisions (a city360 safeguard: the reference waits for
    its idle time-out instead)."""

    def __post_init__(self) -> None:
        for name in ("step_limit", "stagnation_steps", "away_steps", "request_cap_factor"):
            if getattr(self, name) < 1:
                msg = f"`{name}` must be >= 1, got {getattr(self, name)}"
                raise ConfigError(msg)
        if not self.step_timeout_s > 0:
            msg = f"`step_timeout_s` must be > 0, got {self.step_timeout_s}"
            raise ConfigError(msg)


class StopRules(Protocol):
    """What the recorder asks a stop monitor. ``before`` sees each decision before it is
    applied (``action`` None for an unusable one) at the current position; ``after`` sees each
    applied action at the position it left. Either returns a reason to stop, or None."""

    config: StopConfig
    steps: int
    """Steps as these rules count them (the results' ``steps``)."""
    requests: int
    """Every decision, usable or not (the results' ``act_requests``)."""
    counts_invalid: bool
    """True when an unusable decision is a step (and its fallback is applied)."""

    def start(self, x_m: float, y_m: float, distance_to_goal_m: float | None = None) -> None: ...

    def before(
        self, action: str | None, x_m: float, y_m: float, distance_to_goal_m: float | None
    ) -> StopReason | None: ...

    def after(
        self, action: str, x_m: float, y_m: float, distance_to_goal_m: float | None
    ) -> StopReason | None: ...


class StopMonitor:
    """Feed it every step; it says when the episode must stop and why (city360's rules,
    judged after each action; see the module docstring)."""

    counts_invalid = True

    def __init__(self, config: StopConfig) -> None:
        self.config = config
        self.steps = 0
        self.requests = 0
        self._last_action: str | None = None
        self._identical_still = 0
        self._away_moves = 0
        self._last_xy: tuple[float, float] | None = None
        self._last_distance: float | None = None

    def start(self, x_m: float, y_m: float, distance_to_goal_m: float | None = None) -> None:
        """Record the start pose (and distance to the goal, if the task has one)."""
        self._last_xy = (x_m, y_m)
        self._last_distance = distance_to_goal_m

    def before(
        self, action: str | None, x_m: float, y_m: float, distance_to_goal_m: float | None
    ) -> StopReason | None:
        """Count the decision; these rules judge actions after they are applied."""
        self.requests += 1
        return None

    def after(
        self, action: str, x_m: float, y_m: float, distance_to_goal_m: float | None
    ) -> StopReason | None:
        return self.update(action, x_m, y_m, distance_to_goal_m)

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


class ReferenceStopMonitor:
    """360CityArena's stop rules (see the module docstring), judged before each decision is
    applied. Distances fed to it are the straight line, as the reference measures them."""

    counts_invalid = False

    def __init__(self, config: StopConfig) -> None:
        self.config = config
        self.steps = 0
        self.requests = 0
        self._prev_xy: tuple[float, float] | None = None
        self._prev_action: str | None = None
        self._unchanged = 0
        self._prev_distance: float | None = None
        self._away = 0

    def start(self, x_m: float, y_m: float, distance_to_goal_m: float | None = None) -> None:
        """The reference keeps no start state: its first decision has nothing to compare."""

    def before(
        self, action: str | None, x_m: float, y_m: float, distance_to_goal_m: float | None
    ) -> StopReason | None:
        config = self.config
        self.requests += 1
        if action is not None:
            self.steps += 1
        answering = action == "ANSWER"
        if self.steps >= config.step_limit and not answering:
            return StopReason.STEP_LIMIT
        unchanged = (
            self._prev_xy is not None
            and math.dist(self._prev_xy, (x_m, y_m)) < config.position_epsilon_m
        )
        same_action = action is not None and action == self._prev_action
        self._unchanged = self._unchanged + 1 if unchanged and same_action else 0
        self._prev_xy, self._prev_action = (x_m, y_m), action
        if self._unchanged >= config.stagnation_steps:
            return StopReason.STAGNATION
        if config.away_from_goal and distance_to_goal_m is not None:
            margin = max(config.position_epsilon_m, 0.01)
            away = self._prev_distance is not None and (
                distance_to_goal_m > self._prev_distance + margin
            )
            self._away = self._away + 1 if away else 0
            self._prev_distance = distance_to_goal_m
            if self._away >= config.away_steps:
                return StopReason.AWAY_FROM_GOAL
        if self.requests >= config.request_cap_factor * config.step_limit and not answering:
            return StopReason.STEP_LIMIT
        return None

    def after(
        self, action: str, x_m: float, y_m: float, distance_to_goal_m: float | None
    ) -> StopReason | None:
        return None


STOP_RULES: Mapping[str, Callable[[StopConfig], StopRules]] = {
    "city360": StopMonitor,
    "reference": ReferenceStopMonitor,
}
"""Stop monitors by name (a protocol's ``stop_rules``)."""


def make_stop_monitor(rules: str, config: StopConfig) -> StopRules:
    """The monitor of the rules named ``rules`` (a key of :data:`STOP_RULES`)."""
    try:
        factory = STOP_RULES[rules]
    except KeyError:
        msg = f"unknown stop rules {rules!r}; expected one of {', '.join(STOP_RULES)}"
        raise ConfigError(msg) from None
    return factory(config)
