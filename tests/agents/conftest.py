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


class ArrowMapEnv:
    """Wraps an env (with privileged info on) to add a stand-in location map: a blank north-up
    square with the maps stage's red arrow at the centre along the view bearing. Agents see
    only the arrow, which is all the map-reading agent reads from it."""

    def __init__(self, env: Any, size_px: int = 96) -> None:
        self.env = env
        self.size_px = size_px

    def _with_map(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        from city360.maps.draw import draw_arrow

        image = np.full((self.size_px, self.size_px, 3), 235, np.uint8)
        centre = self.size_px / 2
        draw_arrow(image, centre, centre, float(info["pose"]["view_bearing_deg"]))
        return {**obs, "map": image}

    def reset(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return self._with_map(obs, info), info

    def step(self, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        obs, reward, terminated, truncated, info = self.env.step(*args, **kwargs)
        return self._with_map(obs, info), reward, terminated, truncated, info


@pytest.fixture(scope="session")
def route_map_suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any], Path]:
    """Map-navigation tasks on a fresh toy city with real route maps (BLUE start, RED goal),
    saved to disk so agents read their reference maps from files."""
    from city360.tasks.generate.images import CityImages, grid_for_graph
    from city360.tasks.generate.run import generate_suite
    from city360.tasks.schema import Family
    from city360.tasks.suite import save_suite
    from city360.tasks.walk import WalkGraph

    root = build_toy_city(tmp_path_factory.mktemp("agents_map_city"))
    graph = WalkGraph.from_city(root)
    real = CityImages(root, graph, grid_for_graph(graph, 5))

    class RouteImages(PlainImages):
        def route_map(self, start_xy: tuple[float, float], goal_xy: tuple[float, float]) -> Any:
            return real.route_map(start_xy, goal_xy)

    suite, _ = generate_suite(
        root, per_family=6, seed=11, images=RouteImages(), families=[Family.MAP_NAVIGATION]
    )
    folder = tmp_path_factory.mktemp("agents_map_suite")
    save_suite(suite, folder, overwrite=True)
    return root, list(suite), folder


@pytest.fixture(scope="session")
def toy_suite_dir(
    toy_city_suite: tuple[Path, Any], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The toy suite saved to disk (tasks' reference images as files)."""
    from city360.tasks.suite import save_suite

    folder = tmp_path_factory.mktemp("agents_toy_suite")
    save_suite(toy_city_suite[1], folder, overwrite=True)
    return folder
