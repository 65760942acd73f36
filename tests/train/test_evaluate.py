"""Evaluation of a policy on held-out tasks: success, return, the random baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from city360.errors import ConfigError
from city360.simulator.gym_env import CityGymEnv
from city360.train.evaluate import RandomPolicy, evaluate
from tests.simulator.handmade import ARM_M
from tests.simulator.test_rewards import nav_task

SMALL = {"view_width": 24, "view_height": 16, "map": False, "renderer": "cpu"}
OPTIONS = {"goal": True, "text": False, "reward": "shaped", "step_cost": 0.01}


def fixed(index: int) -> Any:
    def policy(obs: dict[str, Any], legal: np.ndarray) -> np.ndarray:
        return np.full(len(legal), index, np.int64)

    return policy


def test_answering_near_the_goal_succeeds_and_far_fails(plus_city: Path) -> None:
    env = CityGymEnv(plus_city, **OPTIONS, **SMALL)
    near = nav_task(goal_xy=(0.0, ARM_M - 5.0))
    far = nav_task()
    result = evaluate(fixed(6), env, [near, far], repeats=2)  # 6: ANSWER at once
    assert (result.episodes, result.successes, result.success_rate) == (4, 2, 0.5)
    assert result.mean_steps == 1.0
    assert result.mean_return == pytest.approx((1.0 - 0.01 + 0.0 - 0.01) / 2)
    env.close()


def test_a_policy_that_never_answers_truncates_at_the_step_limit(plus_city: Path) -> None:
    env = CityGymEnv(plus_city, **OPTIONS, **SMALL)
    task = nav_task()
    task.step_limit = 6  # the task's limit is the episode's
    result = evaluate(fixed(1), env, [task])  # 1: yaw left, forever
    assert (result.successes, result.mean_steps) == (0, 6.0)
    assert result.mean_return == pytest.approx(-0.06)
    env.close()


def test_the_random_baseline_is_seeded(plus_city: Path) -> None:
    env = CityGymEnv(plus_city, **OPTIONS, **SMALL)
    tasks = [nav_task(), nav_task(goal_xy=(0.0, ARM_M - 5.0))]
    for task in tasks:
        task.step_limit = 10
    first = evaluate(RandomPolicy(3), env, tasks, repeats=3, seed=1)
    again = evaluate(RandomPolicy(3), env, tasks, repeats=3, seed=1)
    assert first == again
    assert first.episodes == 6
    env.close()


def test_evaluate_needs_tasks(plus_city: Path) -> None:
    env = CityGymEnv(plus_city, **OPTIONS, **SMALL)
    with pytest.raises(ConfigError) as caught:
        evaluate(fixed(0), env, [], repeats=1)
    assert str(caught.value) == "evaluation needs tasks and `repeats` >= 1, got 0 tasks, 1"
    env.close()
