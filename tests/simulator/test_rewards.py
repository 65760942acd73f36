"""Rewards of the Gymnasium env: sparse by default, progress shaping, step cost, metrics."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from gymnasium.utils.env_checker import check_env

from city360.errors import ConfigError
from city360.simulator.actions import Action
from city360.simulator.gym_env import CityGymEnv
from city360.simulator.rewards import RewardConfig
from tests.simulator.handmade import ARM_M

SMALL = {"view_width": 32, "view_height": 24, "map": False, "renderer": "cpu"}
ACTIONS = list(Action)


def act(name: str, answer: str = "") -> dict[str, Any]:
    return {"action": ACTIONS.index(Action(name)), "magnitude": 0, "answer": answer}


def nav_task(goal_xy: tuple[float, float] = (ARM_M, 0.0), threshold_m: float = 10.0) -> Any:
    """A map-navigation task from the north end of the plus city to a goal (default: the east
    end, 60 m walk)."""
    return SimpleNamespace(
        family="MapNavigation",
        start=SimpleNamespace(segment="ns_a", offset_m=0.0, yaw_deg=0.0),
        step_limit=50,
        truth=SimpleNamespace(goal=SimpleNamespace(x_m=goal_xy[0], y_m=goal_xy[1]), route=None),
        metric=SimpleNamespace(name="coordinate_match", threshold_m=threshold_m),
    )


def grid_task(cell: tuple[int, int]) -> Any:
    return SimpleNamespace(
        family="Localization",
        start=SimpleNamespace(segment="ew_a", offset_m=3.0, yaw_deg=0.0),
        step_limit=50,
        truth=SimpleNamespace(cell=cell, goal=None, route=None),
        metric=SimpleNamespace(name="exact_match", threshold_m=None),
    )


def test_sparse_is_the_default_and_pays_only_at_answer(plus_city: Path) -> None:
    env = CityGymEnv(plus_city, **SMALL)
    assert env.reward_config == RewardConfig()
    env.reset(seed=0, options={"task": nav_task(goal_xy=(0.0, ARM_M - 5.0))})
    _, reward, *_ = env.step(act("W"))
    assert reward == 0.0
    _, reward, terminated, _, info = env.step(act("ANSWER", "here"))
    assert terminated
    assert reward == 1.0  # 5 m walked, the goal is 5 m down the street
    assert info["reward_terms"] == {"progress": 0.0, "step_cost": 0.0, "answer": 1.0}
    env.close()


def test_sparse_answer_away_from_the_goal_scores_zero(plus_city: Path) -> None:
    env = CityGymEnv(plus_city, **SMALL)
    env.reset(seed=0, options={"task": nav_task()})
    _, reward, *_ = env.step(act("ANSWER", "here"))
    assert reward == 0.0
    env.close()


def test_shaped_pays_walking_progress_and_the_step_cost(plus_city: Path) -> None:
    env = CityGymEnv(plus_city, reward="shaped", progress_per_m=0.1, step_cost=0.01, **SMALL)
    env.reset(seed=0, options={"task": nav_task()})
    _, reward, *_, info = env.step(act("W"))  # 5 m nearer along the streets
    assert info["reward_terms"]["progress"] == pytest.approx(0.5)
    assert reward == pytest.approx(0.5 - 0.01)
    _, reward, *_ = env.step(act("A"))  # a turn does not move
    assert reward == pytest.approx(-0.01)
    # facing backwards, W walks away: progress is negative
    env.step({"action": ACTIONS.index(Action.D), "magnitude": 3, "answer": ""})
    env.step({"action": ACTIONS.index(Action.D), "magnitude": 3, "answer": ""})
    _, reward, *_, info = env.step(act("W"))
    assert info["reward_terms"]["progress"] == pytest.approx(-0.5)
    env.close()


def test_shaped_progress_follows_streets_not_the_straight_line(plus_city: Path) -> None:
    # the goal is 5 m down the east arm; walking south towards the junction gains 5 m of walk
    # while the straight line to the goal shrinks by less
    env = CityGymEnv(plus_city, reward="shaped", progress_per_m=1.0, **SMALL)
    env.reset(seed=0, options={"task": nav_task(goal_xy=(5.0, 0.0))})
    _, reward, *_ = env.step(act("W"))
    assert reward == pytest.approx(5.0)
    env.close()


def test_answer_families_are_paid_their_metric(plus_city: Path) -> None:
    env = CityGymEnv(plus_city, reward="shaped", **SMALL)
    env.reset(seed=0, options={"task": grid_task((2, 3))})
    _, reward, *_, info = env.step(act("W"))
    assert info["reward_terms"]["progress"] == 0.0  # not a navigation family
    _, reward, *_ = env.step(act("ANSWER", "x:2 y:3"))
    assert reward == 1.0
    env.reset(seed=0, options={"task": grid_task((2, 3))})
    _, reward, *_ = env.step(act("ANSWER", "x:1 y:3"))
    assert reward == 0.0
    env.close()


def test_without_a_task_only_the_step_cost_is_paid(plus_city: Path) -> None:
    env = CityGymEnv(plus_city, step_cost=0.5, **SMALL)
    env.reset(seed=3)
    _, reward, *_ = env.step(act("ANSWER", "x"))
    assert reward == -0.5
    env.close()


def test_tasks_are_drawn_per_reset_from_the_seed(plus_city: Path) -> None:
    tasks = [nav_task(), grid_task((1, 1))]
    env = CityGymEnv(plus_city, tasks=tasks, **SMALL)
    starts = []
    for seed in range(6):
        env.reset(seed=seed)
        state = env.city_env.state
        assert state is not None
        starts.append(state.segment)
    again = []
    for seed in range(6):
        env.reset(seed=seed)
        assert env.city_env.state is not None
        again.append(env.city_env.state.segment)
    assert starts == again
    assert set(starts) <= {"ns_a", "ew_a"}
    env.close()


def test_check_env_passes_with_shaped_rewards_and_tasks(plus_city: Path) -> None:
    env = CityGymEnv(plus_city, reward="shaped", step_cost=0.01, tasks=[nav_task()], **SMALL)
    check_env(env, skip_render_check=True)
    env.close()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"reward": "dense"}, "`reward` must be one of sparse, shaped, got 'dense'"),
        ({"step_cost": -1.0}, "`step_cost` must be a finite number >= 0, got -1.0"),
        ({"progress_per_m": float("nan")}, "`progress_per_m` must be a finite number >= 0"),
    ],
)
def test_bad_reward_options_say_what_is_wrong(
    plus_city: Path, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        CityGymEnv(plus_city, **options, **SMALL)
