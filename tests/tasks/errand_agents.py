"""A scripted Errand agent: the oracle told only the first place (``--agent
tests.tasks.errand_agents:FirstStopOnly``)."""

from __future__ import annotations

from typing import Any

from city360.agents.base import AgentDecision
from city360.agents.oracle import OracleAgent


class FirstStopOnly:
    """Walks to an errand's first place and answers there."""

    privileged = True

    def __init__(self, *, city_dir: str) -> None:
        self.oracle = OracleAgent(city_dir)
        self.name = "first-stop-only"

    def reset(self, task: Any) -> None:
        first = task.truth.waypoints[0]
        truth = task.truth.model_copy(update={"waypoints": [first], "goal": first.goal})
        self.oracle.reset(task.model_copy(update={"truth": truth}))

    def act(self, observation: Any) -> AgentDecision:
        return self.oracle.act(observation)
