"""The map-reading agent reads markers and the arrow, and beats random on map navigation."""

from __future__ import annotations

import numpy as np
import pytest

from city360.agents.map_reader import MapReaderAgent, find_markers, read_arrow_heading
from city360.agents.random_agent import RandomAgent
from city360.maps.draw import draw_arrow
from tests.agents.conftest import AgentView, BuiltWorld
from tests.agents.episodes import run_episode


def test_arrow_heading_is_read_back() -> None:
    for heading in (0.0, 37.0, 90.0, 181.0, 275.0):
        image = np.full((96, 96, 3), 235, np.uint8)
        draw_arrow(image, 48, 48, heading)
        read = read_arrow_heading(image)
        assert read is not None
        assert abs((read - heading + 180) % 360 - 180) < 6


@pytest.mark.slow
def test_markers_are_found_by_colour(built_world: BuiltWorld) -> None:
    import cv2

    task = built_world.family("MapNavigation")[0]
    image = cv2.imread(str(built_world.suite_dir / task.told.route_map))[:, :, ::-1]
    found = find_markers(image)
    assert found is not None
    (sc, sr), (gc, gr) = found
    assert abs(sc - gc) + abs(sr - gr) > 10
    assert find_markers(np.zeros((20, 20, 3), np.uint8)) is None


@pytest.mark.slow
def test_map_reader_beats_random_on_map_navigation(built_world: BuiltWorld) -> None:
    world = built_world
    tasks = world.family("MapNavigation")
    assert tasks
    reader = [
        run_episode(world.env, AgentView(MapReaderAgent(), world.suite_dir), t) for t in tasks
    ]
    rand = [
        run_episode(world.env, AgentView(RandomAgent(), world.suite_dir), t, seed=k)
        for k, t in enumerate(tasks)
    ]
    assert sum(e.success for e in reader) > sum(e.success for e in rand)
    # it answers near the RED marker, not by luck: every answer is within the threshold
    for episode, task in zip(reader, tasks, strict=True):
        if episode.answered:
            assert episode.distance_m is not None
            assert episode.distance_m <= task.truth.goal.threshold_m
