"""Success rate and mean return of a policy on held-out tasks, measured one way for all.

Each task is played ``repeats`` times in one Gymnasium env (``reset(seed=seed + k, options=
{"task": task})``) until it terminates (ANSWER) or truncates (the task's step limit). An
episode succeeds when its ANSWER scored (``info["reward_terms"]["answer"] > 0``: for Map
navigation the evaluator's coordinate_match, straight line within the task's radius). The
return is the env's reward summed over the episode (whatever reward the env was made with).

A policy is any callable ``(observation, legal) -> action indices`` over a batch of one (see
:mod:`city360.train.nav_actions`); :class:`RandomPolicy` is the baseline: a uniformly random
legal action each step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from city360.errors import ConfigError
from city360.train.nav_actions import env_actions, legal_actions, policy_observation

__all__ = ["EvalResult", "Policy", "RandomPolicy", "evaluate"]

Policy = Callable[[dict[str, npt.NDArray[Any]], npt.NDArray[np.bool_]], npt.NDArray[np.int64]]
"""``(policy observation batch, legal (N, K) bool) -> (N,) action indices``."""


@dataclass(frozen=True, slots=True)
class EvalResult:
    """A policy's figures over ``episodes`` held-out episodes."""

    episodes: int
    successes: int
    mean_return: float
    """Mean summed reward per episode (unitless)."""
    mean_steps: float

    @property
    def success_rate(self) -> float:
        return self.successes / self.episodes if self.episodes else 0.0


class RandomPolicy:
    """A uniformly random legal action each step, from its own seeded generator."""

    def __init__(self, seed: int) -> None:
        self._rng = np.random.default_rng(seed)

    def __call__(
        self, observation: dict[str, npt.NDArray[Any]], legal: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        return np.array([self._rng.choice(np.flatnonzero(row)) for row in legal], np.int64)


def _batched(obs: dict[str, Any]) -> dict[str, Any]:
    return {key: np.asarray(value)[None] for key, value in obs.items()}


def evaluate(
    policy: Policy,
    env: Any,
    tasks: Sequence[Any],
    *,
    repeats: int = 1,
    seed: int = 0,
    view: bool = False,
) -> EvalResult:
    """Play every task ``repeats`` times with ``policy`` in ``env`` (a ``CityGymEnv`` made with
    ``goal=True, text=False``); ``view`` gives the policy the view too."""
    if repeats < 1 or not tasks:
        msg = f"evaluation needs tasks and `repeats` >= 1, got {len(tasks)} tasks, {repeats}"
        raise ConfigError(msg)
    successes, returns, steps = 0, [], []
    for k in range(repeats):
        for task in tasks:
            obs, _ = env.reset(seed=seed + k, options={"task": task})
            total, count, done, success = 0.0, 0, False, False
            while not done:
                batch = _batched(obs)
                legal = legal_actions(batch["action_mask"])
                action = policy(policy_observation(batch, view=view), legal)
                obs, reward, terminated, truncated, info = env.step(
                    {key: value[0] for key, value in env_actions(action).items()}
                )
                total += float(reward)
                count += 1
                done = bool(terminated or truncated)
                success = success or info["reward_terms"]["answer"] > 0
            successes += int(success)
            returns.append(total)
            steps.append(count)
    return EvalResult(
        episodes=len(returns),
        successes=successes,
        mean_return=float(np.mean(returns)),
        mean_steps=float(np.mean(steps)),
    )
