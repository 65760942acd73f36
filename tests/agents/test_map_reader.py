"""The map-reading agent reads markers and the arrow, and beats random on map navigation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from city360.agents.map_reader import MapReaderAgent, find_markers, read_arrow_heading
from city360.agents.random_agent import RandomAgent
from city360.maps.draw import draw_arrow
from tests.agents.conftest import ArrowMapEnv
from tests.agents.episodes import run_episode


class _Seen:
    """The task as the map reader gets it (prompt and reference images, no truth), scored
    against the full task."""


def _run(env: Any, agent: Any, task: Any, folder: Path, seed: int) -> Any:
    view = task.agent_view(suite_root=str(folder))

    class Proxy:
        def __init__(self) -> None:
            self.privileged = False

        def reset(self, _task: Any, seed: int | None = None) -> None:
            agent.reset(view) if not isinstance(agent, RandomAgent) else agent.reset(
                view, seed=seed
            )

        def act(self, obs: Any) -> Any:
            return agent.act(obs)

    return run_episode(env, Proxy(), task, seed=seed)


def test_arrow_heading_is_read_back() -> None:
    for heading in (0.0, 37.0, 90.0, 181.0, 275.0):
        image = np.full((96, 96, 3), 235, np.uint8)
        draw_arrow(image, 48, 48, heading)
        read = read_arrow_heading(image)
        assert read is not None
        assert abs((read - heading + 180) % 360 - 180) < 6


def test_markers_are_found_by_colour(route_map_suite: tuple[Path, list[Any], Path]) -> None:
    import cv2

    _, tasks, folder = route_map_suite
    path = folder / tasks[0].told.route_map
    image = cv2.imread(str(path))[:, :, ::-1]
    found = find_markers(image)
    assert found is not None
    (sc, sr), (gc, gr) = found
    assert abs(sc - gc) + abs(sr - gr) > 10
    assert find_markers(np.zeros((20, 20, 3), np.uint8)) is None


def test_map_reader_beats_random(
    route_map_suite: tuple[Path, list[Any], Path], toy_env: Any
) -> None:
    root, tasks, folder = route_map_suite
    from city360.simulator.config import EnvConfig
    from city360.simulator.env import CityEnv
    from tests.agents.conftest import FlatFrames

    options = {
        "map": False,
        "renderer": "cpu",
        "view_width": 32,
        "view_height": 24,
        "prefetch": False,
        "privileged_info": True,
    }
    with CityEnv(root, EnvConfig(**options), frame_source=FlatFrames) as raw:
        env = ArrowMapEnv(raw)
        reader = [_run(env, MapReaderAgent(), t, folder, k) for k, t in enumerate(tasks)]
        rand = [_run(env, RandomAgent(), t, folder, k) for k, t in enumerate(tasks)]
    reader_ok = sum(e.success for e in reader)
    random_ok = sum(e.success for e in rand)
    print("map reader", reader_ok, "random", random_ok, [round(e.distance_m or -1) for e in reader])
    assert reader_ok > random_ok
    assert reader_ok >= len(tasks) // 2
