"""Agents as a user writes them, outside city360: ``--agent tests.agents.user_agents:X``."""

from __future__ import annotations

from typing import Any

from city360.agents.base import AgentDecision
from city360.simulator.actions import Action, ActionCommand


class AnswerAtOnce:
    """Answers at the first step: ``answers[task id]`` when given, else ``answer``. Has no
    ``privileged`` or ``name`` attribute, as a user's class may not."""

    def __init__(
        self, *, answer: str = "x:1 y:1", answers: dict[str, str] | None = None, **extra: Any
    ) -> None:
        self.answer = answer
        self.answers = dict(answers or {})
        self.extra = extra
        self._now = answer

    def reset(self, task: Any) -> None:
        self._now = self.answers.get(str(getattr(task, "id", "")), self.answer)

    def act(self, observation: Any) -> AgentDecision:
        return AgentDecision(command=ActionCommand(Action.ANSWER, answer=self._now))


class Strict:
    """Takes one option only."""

    def __init__(self, *, depth: int = 1) -> None:
        self.depth = depth

    def reset(self, task: Any) -> None: ...

    def act(self, observation: Any) -> AgentDecision:
        return AgentDecision(command=ActionCommand(Action.ANSWER, answer=""))


class NoAct:
    def reset(self, task: Any) -> None: ...


def not_a_class() -> None: ...
