"""The agent contract: ``reset(task)`` then ``act(observation)`` once per step.

An observation is the simulator's dict (see docs/contracts.md): ``view`` (uint8 HxWx3 RGB),
``map`` (uint8 hxwx3, only when the location map is enabled), ``branch_mask`` (int8[3] for
LEFT, UP, RIGHT), ``step`` (int) and ``feedback`` (str). Agents that declare
``privileged = True`` (the oracle) also read ``observation["info"]``, the simulator's privileged
``info`` dict, which the episode runner adds only for them.

A task is anything with the few attributes an agent needs (:class:`TaskLike`); the pydantic
schema in ``city360.tasks`` satisfies it, and so does a tiny stand-in in tests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TypeAlias, runtime_checkable

import numpy as np

from city360.simulator.actions import BRANCH_ACTIONS, Action, ActionCommand, Magnitude
from city360.types import Image

__all__ = [
    "Agent",
    "AgentDecision",
    "Observation",
    "TaskLike",
    "offered_branches",
]

Observation: TypeAlias = Mapping[str, Any]
"""The simulator's observation dict (keys above)."""


@runtime_checkable
class TaskLike(Protocol):
    """What an agent is told about a task: the prompt and the reference images.

    ``reference_images`` maps a caption ("goal landmark", "route map", ...) to an RGB image.
    """

    @property
    def prompt_text(self) -> str: ...

    @property
    def reference_images(self) -> Sequence[tuple[str, Image]]: ...


@dataclass(frozen=True, slots=True)
class AgentDecision:
    """One step's decision: the command for the simulator plus what the agent said about it.

    ``thought`` is the agent's reasoning for this step, ``memory`` the reflection memory it
    carries to the next one (empty for agents without one). ``valid`` is False when the agent
    could not produce a proper decision (an LMM reply that was not JSON or named no valid
    action) and ``command`` is a harmless fallback.
    """

    command: ActionCommand
    thought: str = ""
    memory: str = ""
    valid: bool = True
    answer_type: str = "string"
    """The JSON type the agent's reply gave the answer as (``"string"`` unless an LMM wrote,
    say, ``"answer": 7`` or ``null``); the protocol decides whether such an answer scores."""

    @property
    def action(self) -> Action:
        return self.command.action

    @property
    def magnitude(self) -> Magnitude | None:
        return self.command.magnitude

    @property
    def answer(self) -> str | None:
        return self.command.answer


class Agent(Protocol):
    """An agent acting in a city: ``reset`` once per episode, then ``act`` once per step."""

    name: str
    privileged: ClassVar[bool]

    def reset(self, task: Any) -> None:
        """Start an episode on ``task``; forget everything about the previous one."""

    def act(self, observation: Observation) -> AgentDecision:
        """Decide the next step from the current observation."""


def offered_branches(observation: Observation) -> tuple[Action, ...]:
    """The branch actions the observation's ``branch_mask`` offers, in LEFT, UP, RIGHT order."""
    mask = observation.get("branch_mask")
    if mask is None:
        return ()
    values = np.asarray(mask).reshape(-1)
    return tuple(a for a, m in zip(BRANCH_ACTIONS, values, strict=False) if int(m) != 0)
