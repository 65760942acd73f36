"""A seeded random agent: the floor every score must clear.

Each step it picks uniformly among the moves available in the observation (W with a random
magnitude, A/D/Q/E, S, and the branches the ``branch_mask`` offers) and, with probability
``answer_probability``, answers instead with a random answer in the task's format (a grid cell
for localization, a small number for counting, empty text otherwise). Randomness comes from a
``numpy.random.Generator`` seeded per episode, never from global state.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from city360.agents.base import AgentDecision, Observation, offered_branches
from city360.errors import ConfigError
from city360.simulator.actions import Action, ActionCommand, Magnitude

__all__ = ["RandomAgent"]

_MOVES = (Action.W, Action.A, Action.D, Action.Q, Action.E, Action.S)
_MAGNITUDES = (None, Magnitude.SMALL, Magnitude.MEDIUM, Magnitude.LARGE)


class RandomAgent:
    """Uniform random actions; ``seed`` fixes the sequence for a given task order."""

    privileged: ClassVar[bool] = False

    def __init__(self, *, seed: int | None = None, answer_probability: float = 0.05) -> None:
        if not 0.0 <= answer_probability <= 1.0:
            msg = f"`answer_probability` must be in [0, 1], got {answer_probability}"
            raise ConfigError(msg)
        self.name = "random"
        self.seed = seed
        self.answer_probability = answer_probability
        self._rng = np.random.default_rng(seed)
        self._family = ""
        self._grid_size = 5

    def __repr__(self) -> str:
        return f"RandomAgent(seed={self.seed}, answer_probability={self.answer_probability})"

    def reset(self, task: Any, *, seed: int | None = None) -> None:
        """New episode; ``seed`` (e.g. the runner's per-task seed) re-seeds the generator."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._family = str(getattr(task, "family", "") or "")
        told = getattr(task, "told", None)
        self._grid_size = int(getattr(told, "grid_size", 5) or 5)

    def _random_answer(self) -> str:
        family = self._family.lower()
        if "local" in family:
            i, j = self._rng.integers(1, self._grid_size + 1, size=2)
            return f"x:{i} y:{j}"
        if "count" in family:
            return str(int(self._rng.integers(0, 11)))
        return ""

    def act(self, observation: Observation) -> AgentDecision:
        if self._rng.random() < self.answer_probability:
            command = ActionCommand(Action.ANSWER, answer=self._random_answer())
            return AgentDecision(command=command, thought="random answer")
        choices = [*_MOVES, *offered_branches(observation)]
        action = choices[int(self._rng.integers(len(choices)))]
        magnitude = None
        if action not in (Action.S, *offered_branches(observation)):
            magnitude = _MAGNITUDES[int(self._rng.integers(len(_MAGNITUDES)))]
        return AgentDecision(command=ActionCommand(action, magnitude), thought="random move")
