"""A stand-in for the simulator in agent tests: a straight street ending at a junction.

It hands out observations with the contract's keys (``view``, ``map``, ``branch_mask``,
``step``, ``feedback``) and follows W/branch actions on a 1-D street, so the LMM agent can be
driven through a scripted episode without a rendered city.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from city360.simulator.actions import Action, ActionCommand, Magnitude

WALK_M = {Magnitude.SMALL: 2.0, Magnitude.MEDIUM: 5.0, Magnitude.LARGE: 10.0, None: 5.0}


@dataclass
class StandInTask:
    prompt_text: str
    reference_images: list[tuple[str, np.ndarray]]
    step_limit: int = 50
    id: str = "standin-1"


class StandInEnv:
    def __init__(self, *, street_m: float = 20.0, with_map: bool = True) -> None:
        self.street_m = street_m
        self.with_map = with_map
        self.position_m = 0.0
        self.step_count = 0
        self.branch: Action | None = None
        self.answer: str | None = None

    def _obs(self, feedback: str) -> dict[str, Any]:
        shade = int(min(255, self.position_m * 10))
        view = np.full((96, 128, 3), shade, np.uint8)
        view[40:56, 60:68] = (255, 0, 0)  # a red "arrow"
        at_junction = self.position_m >= self.street_m and self.branch is None
        obs: dict[str, Any] = {
            "view": view,
            "branch_mask": np.array([1, 0, 1] if at_junction else [0, 0, 0], np.int8),
            "step": self.step_count,
            "feedback": feedback,
        }
        if self.with_map:
            obs["map"] = np.full((64, 64, 3), 200, np.uint8)
        return obs

    def reset(self) -> dict[str, Any]:
        self.__init__(street_m=self.street_m, with_map=self.with_map)  # type: ignore[misc]
        return self._obs("")

    def step(self, command: ActionCommand) -> tuple[dict[str, Any], bool]:
        self.step_count += 1
        if command.action is Action.ANSWER:
            self.answer = command.answer
            return self._obs("answered"), True
        if command.action is Action.W:
            if self.position_m >= self.street_m and self.branch is None:
                return self._obs("You are at a junction: choose LEFT or RIGHT."), False
            self.position_m = min(self.street_m, self.position_m + WALK_M[command.magnitude])
            return self._obs(f"Moved to {self.position_m:g} m."), False
        if command.action in (Action.LEFT, Action.RIGHT, Action.UP):
            if self.position_m >= self.street_m and command.action is not Action.UP:
                self.branch = command.action
                return self._obs(f"Took {command.action.value}."), False
            return self._obs(f"{command.action.value} is not offered here."), False
        return self._obs(f"Looked ({command.action.value})."), False
