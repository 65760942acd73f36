"""``city360.make(city, condition=...)``: the same walk, the condition's pictures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import city360
from city360.errors import ConditionMissingError, ConfigError
from city360.simulator.config import EnvConfig
from city360.simulator.env import CityEnv
from city360.simulator.world import World
from tests.fixtures.built import NIGHT

OPTIONS = {"map": False, "privileged_info": True, "view_width": 96, "view_height": 64}


def _walk(city: Path, condition: str) -> tuple[list[np.ndarray], list[dict[str, float]]]:
    views, poses = [], []
    with city360.make(city, condition=condition, renderer="cpu", **OPTIONS) as env:
        obs, info = env.reset(seed=5)
        views.append(obs["view"])
        poses.append(info["pose"])
        for action in ("W", "D", "W"):
            obs, _, _, _, info = env.step(action)
            views.append(obs["view"])
            poses.append(info["pose"])
    return views, poses


def test_same_poses_darker_views_at_night(night_city: Path) -> None:
    day_views, day_poses = _walk(night_city, "day")
    night_views, night_poses = _walk(night_city, NIGHT)
    assert night_poses == day_poses
    for day, night in zip(day_views, night_views, strict=True):
        assert day.shape == night.shape
        assert night.mean() < 0.7 * day.mean()


def test_unknown_condition_in_make_names_the_available_ones(night_city: Path) -> None:
    with pytest.raises(ConditionMissingError, match=r"it has day, night\."):
        city360.make(night_city, condition="rain", renderer="cpu", **OPTIONS)
    with pytest.raises(ConfigError, match="`condition` must be a condition name"):
        EnvConfig(condition="no way")


def test_a_shared_world_must_show_the_configured_condition(night_city: Path) -> None:
    with World(night_city) as world, pytest.raises(ConfigError, match="shows condition 'day'"):
        CityEnv(night_city, EnvConfig.from_kwargs(condition=NIGHT, **OPTIONS), world=world)
