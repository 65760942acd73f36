"""The Gymnasium face: registration, spaces, action mask, check_env."""

from __future__ import annotations

from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from city360._gl import gl_available
from city360.simulator.actions import Action
from city360.simulator.gym_env import ENV_ID, CityGymEnv
from tests.simulator.handmade import ARM_M

SMALL = {"view_width": 48, "view_height": 32, "map": False}


def make(city: Path, **config: object) -> CityGymEnv:
    """Through gymnasium.make (check_env wants a spec), unwrapped to the env itself."""
    env = gymnasium.make(f"city360.simulator.gym_env:{ENV_ID}", city_dir=city, **config)
    assert isinstance(env.unwrapped, CityGymEnv)
    return env.unwrapped


@pytest.mark.parametrize(
    "renderer",
    [
        "cpu",
        pytest.param(
            "gl",
            marks=pytest.mark.skipif(not gl_available(), reason="no OpenGL context (EGL)"),
        ),
    ],
)
def test_check_env_passes(plus_city: Path, renderer: str) -> None:
    env = make(plus_city, renderer=renderer, **SMALL)
    check_env(env)
    env.close()


def test_check_env_passes_with_every_option(plus_city: Path) -> None:
    env = make(
        plus_city,
        render_mode="rgb_array",
        renderer="cpu",
        multiview=True,
        multiview_size=16,
        route_guidance=True,
        max_steps=5,
        **SMALL,
    )
    check_env(env)
    obs, _ = env.reset(seed=1)
    assert obs["views"].shape == (6, 16, 16, 3)
    assert env.render().shape == (32, 48, 3)
    env.close()


def test_registered_id_makes_the_env(plus_city: Path) -> None:
    assert ENV_ID == "city360/City-v0"
    env = gymnasium.make(
        f"city360.simulator.gym_env:{ENV_ID}",
        city_dir=plus_city,
        renderer="cpu",
        **SMALL,
    )
    obs, _ = env.reset(seed=0, options={"segment": "ns_a", "offset_m": ARM_M})
    assert env.observation_space.contains(obs)
    mask = obs["action_mask"]
    actions = list(Action)
    assert mask[actions.index(Action.W)] == 0  # at a junction facing forward, W cannot move
    assert mask[actions.index(Action.LEFT)] == 1
    assert obs["branch_mask"].tolist() == [1, 1, 1]
    left = {"action": actions.index(Action.LEFT), "magnitude": 0, "answer": ""}
    obs, _reward, terminated, _truncated, info = env.step(left)
    assert obs["branch_mask"].tolist() == [0, 0, 0]
    assert obs["action_mask"][actions.index(Action.W)] == 1
    assert obs["step"] == np.int64(1)
    answer = {"action": actions.index(Action.ANSWER), "magnitude": 0, "answer": "x:1 y:2"}
    _, _, terminated, _, info = env.step(answer)
    assert terminated
    assert info["answer"] == "x:1 y:2"
    env.close()


def test_feedback_outside_the_charset_is_made_printable(plus_city: Path) -> None:
    env = CityGymEnv(plus_city, renderer="cpu", **SMALL)
    env.reset(seed=0)
    answer = {"action": list(Action).index(Action.ANSWER), "magnitude": 0, "answer": "東京"}
    obs, *_ = env.step(answer)
    assert env.observation_space["feedback"].contains(obs["feedback"])
    env.close()
