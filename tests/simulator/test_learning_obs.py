"""Observation options for learning: layout, grayscale, several views, no text."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import city360
from city360.errors import ConfigError
from city360.simulator.gym_env import CityGymEnv

SMALL = {"view_width": 32, "view_height": 24, "renderer": "cpu", "map_size": 32}


def test_chw_grayscale_several_views_and_the_map_key(plus_city: Path) -> None:
    plain = CityGymEnv(plus_city, **SMALL)
    env = CityGymEnv(
        plus_city, layout="chw", grayscale=True, view_yaws_deg=(-90, 0, 90), text=False, **SMALL
    )
    assert env.observation_space["view"].shape == (3, 1, 24, 32)
    assert env.observation_space["map"].shape == (1, 32, 32)
    assert "feedback" not in env.observation_space.spaces
    options = {"segment": "ns_a", "offset_m": 5.0}
    obs, _ = env.reset(seed=0, options=options)
    reference, _ = plain.reset(seed=0, options=options)
    assert env.observation_space.contains(obs)
    import cv2

    gray = cv2.cvtColor(reference["view"], cv2.COLOR_RGB2GRAY)
    assert np.array_equal(obs["view"][1, 0], gray)  # offset 0 is the plain view
    assert not np.array_equal(obs["view"][0], obs["view"][2])  # left and right differ
    plain.step({"action": 3, "magnitude": 3, "answer": ""})  # D LARGE: 90 degrees right
    assert np.array_equal(
        obs["view"][2, 0], cv2.cvtColor(plain.city_env.render(), cv2.COLOR_RGB2GRAY)
    )
    check_env(env, skip_render_check=True)
    env.close()
    plain.close()


def test_hwc_rgb_is_the_default(plus_city: Path) -> None:
    env = CityGymEnv(plus_city, map=False, **SMALL)
    assert env.observation_space["view"].shape == (24, 32, 3)
    assert "feedback" in env.observation_space.spaces
    env.close()


def test_vector_env_takes_the_options(plus_city: Path) -> None:
    with city360.make_vec(
        plus_city, num_envs=2, layout="chw", grayscale=True, text=False, map=False, **SMALL
    ) as env:
        obs, _ = env.reset(seed=0)
        assert obs["view"].shape == (2, 1, 24, 32)
        assert "feedback" not in obs


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"layout": "nchw"}, "`layout` must be 'hwc' or 'chw', got 'nchw'"),
        ({"view_yaws_deg": ()}, "`view_yaws_deg` must be 1 to 16 finite angles"),
    ],
)
def test_bad_observation_options(plus_city: Path, options: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        CityGymEnv(plus_city, **options, **SMALL)


def test_goal_key_gives_a_told_goal_relative_to_the_view(plus_city: Path) -> None:
    from tests.simulator.test_rewards import act, nav_task

    env = CityGymEnv(plus_city, goal=True, text=False, map=False, **SMALL)
    assert env.observation_space["goal"].shape == (3,)
    # start at the north end looking south; the goal is the east end, 30 m on and 30 m left
    obs, _ = env.reset(seed=0, options={"task": nav_task()})
    assert obs["goal"] == pytest.approx([-30.0, 30.0, 1.0], abs=1e-3)
    obs, *_ = env.step(act("W"))  # 5 m south (the default MEDIUM step)
    assert obs["goal"] == pytest.approx([-30.0, 25.0, 1.0], abs=1e-3)
    obs, *_ = env.step({"action": 3, "magnitude": 3, "answer": ""})  # D LARGE: look west
    assert obs["goal"] == pytest.approx([-25.0, -30.0, 1.0], abs=1e-3)
    check_env(env, skip_render_check=True)
    env.close()


def test_goal_key_is_zero_where_the_goal_is_not_told(plus_city: Path) -> None:
    from types import SimpleNamespace

    from tests.simulator.test_rewards import grid_task, nav_task

    env = CityGymEnv(plus_city, goal=True, map=False, **SMALL)
    found = nav_task()
    found.family = "LandmarkSearchText"  # a goal to be found: the key must not show it
    for options in ({"task": found}, {"task": grid_task((1, 1))}, {"segment": "ew_a"}):
        obs, _ = env.reset(seed=0, options=options)
        assert obs["goal"].tolist() == [0.0, 0.0, 0.0], options
    assert isinstance(found, SimpleNamespace)
    env.close()
