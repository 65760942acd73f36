"""A minimal episode loop for agent tests (the real runner, with stop conditions and results,
is ``city360.eval``): privileged ``info`` is handed to agents that declare ``privileged``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from city360.simulator.actions import Action


@dataclass
class Episode:
    answered: bool
    answer: str | None
    steps: int
    final_xy: tuple[float, float]
    distance_m: float | None
    success: bool


def run_episode(env: Any, agent: Any, task: Any, *, seed: int = 0) -> Episode:
    obs, info = env.reset(seed=seed, options={"task": task})
    if hasattr(agent, "reset"):
        try:
            agent.reset(task, seed=seed)
        except TypeError:
            agent.reset(task)
    answer: str | None = None
    answered = False
    steps = 0
    for _ in range(task.step_limit):
        seen = {**obs, "info": info} if getattr(agent, "privileged", False) else obs
        decision = agent.act(seen)
        obs, _, terminated, truncated, info = env.step(decision.command)
        steps += 1
        if decision.action is Action.ANSWER:
            answered, answer = True, decision.answer
        if terminated or truncated:
            break
    x, y = info["pose"]["x_m"], info["pose"]["y_m"]
    goal = getattr(task.truth, "goal", None)
    distance = None if goal is None else math.hypot(x - goal.x_m, y - goal.y_m)
    if goal is not None:
        success = answered and distance is not None and distance <= goal.threshold_m
    else:
        success = answered and (answer or "").strip() == task.expected_answer().strip()
    return Episode(answered, answer, steps, (x, y), distance, success)
