"""Fixtures of the simulator tests: the hand-made plus-shaped city and environments on it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from city360.simulator.config import EnvConfig
from city360.simulator.env import CityEnv
from tests.simulator.handmade import build_city

EnvFactory = Callable[..., CityEnv]


@pytest.fixture(scope="session")
def plus_city(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plus-shaped city of :mod:`tests.simulator.handmade` (built once per session)."""
    return build_city(tmp_path_factory.mktemp("plus-city"))


@pytest.fixture
def make_env(plus_city: Path) -> Iterator[EnvFactory]:
    """``make_env(**config)``: a CityEnv on the plus city (real frame store), no map,
    privileged info on, a small CPU-rendered view unless overridden; closed after the test."""
    made: list[CityEnv] = []

    def make(**overrides: Any) -> CityEnv:
        options: dict[str, Any] = {
            "map": False,
            "privileged_info": True,
            "view_width": 96,
            "view_height": 64,
            "renderer": "cpu",
        }
        options.update(overrides)
        env = CityEnv(plus_city, EnvConfig.from_kwargs(**options))
        made.append(env)
        return env

    yield make
    for env in made:
        env.close()
