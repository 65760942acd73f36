"""Agents for fault-injection runs: ``--agent tests.reliability.agents:Slow``."""

from __future__ import annotations

import time
from typing import Any

from city360.agents.base import AgentDecision
from city360.simulator.actions import Action, ActionCommand


class Slow:
    """Turns right every step after ``delay_s`` seconds, so that episodes last long enough to
    be killed mid-run (a task's step limit still ends each one)."""

    def __init__(self, *, delay_s: float = 0.5) -> None:
        self.delay_s = delay_s

    def reset(self, task: Any) -> None: ...

    def act(self, observation: Any) -> AgentDecision:
        time.sleep(self.delay_s)
        return AgentDecision(command=ActionCommand(Action.D))
