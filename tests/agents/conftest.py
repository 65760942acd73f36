"""Fixtures of the agents tests: the tasks stage's toy city with a generated suite, and a
simulator over it whose frames are flat colours (no video needed for baselines that walk)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from city360.city import CityDir
from tests.tasks.helpers import PlainImages
from tests.tasks.toy_city import build_toy_city


class FlatFrames:
    """A frame source for a city without videos: grey frames, as many as the poses."""

    def __init__(self, path: Path, cache_bytes: int) -> None:
        poses = path.parent / "poses.csv"
        self._n = max(1, sum(1 for _ in poses.open(encoding="utf-8")) - 1)
        self._y = np.full((32, 64), 128, np.uint8)
        self._uv = np.full((16, 32), 128, np.uint8)

    @property
    def width(self) -> int:
        return 64

    @property
    def height(self) -> int:
        return 32

    def __len__(self) -> int:
        return self._n

    def get_yuv(self, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self._y, self._uv, self._uv

    def prefetch(self, indices: Any) -> None:
        return None

    def close(self) -> None:
        return None


@pytest.fixture(scope="session")
def toy_city_suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    from city360.tasks.generate.run import generate_suite

    root = build_toy_city(tmp_path_factory.mktemp("agents_toy_city"))
    suite, _ = generate_suite(root, per_family=4, seed=5, images=PlainImages())
    assert CityDir(root).graph_path.exists()
    return root, suite


@pytest.fixture
def toy_env(toy_city_suite: tuple[Path, Any]) -> Iterator[Callable[..., Any]]:
    from city360.simulator.config import EnvConfig
    from city360.simulator.env import CityEnv

    opened: list[CityEnv] = []

    def make(**config: Any) -> CityEnv:
        options = {
            "map": False,
            "renderer": "cpu",
            "view_width": 32,
            "view_height": 24,
            "prefetch": False,
            **config,
        }
        env = CityEnv(toy_city_suite[0], EnvConfig(**options), frame_source=FlatFrames)
        opened.append(env)
        return env

    yield make
    for env in opened:
        env.close()
