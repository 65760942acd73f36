"""Small builders shared by the tasks tests: hand-made tasks, a plain grid, simple images."""

from __future__ import annotations

from typing import Any

import numpy as np

from city360.tasks.schema import TaskBase
from city360.types import Image


class PlainImages:
    """An ImageSource drawing flat images whose pixels encode their inputs, so tests can tell
    which picture went where without a renderer or map."""

    def __init__(self) -> None:
        self.views: list[tuple[float, float, float]] = []

    def grid_map(self) -> Image:
        return np.full((8, 8, 3), 7, np.uint8)

    def route_map(self, start_xy: tuple[float, float], goal_xy: tuple[float, float]) -> Image:
        image = np.zeros((8, 8, 3), np.uint8)
        image[0, 0] = (int(start_xy[0]) % 256, int(start_xy[1]) % 256, 1)
        image[0, 1] = (int(goal_xy[0]) % 256, int(goal_xy[1]) % 256, 2)
        return image

    def landmark_view(
        self, x_m: float, y_m: float, *, heading_deg: float, look_bearing_deg: float
    ) -> Image:
        self.views.append((x_m, y_m, look_bearing_deg))
        return np.full((8, 8, 3), len(self.views) % 256, np.uint8)


def localization_task(**changes: Any) -> dict[str, Any]:
    task: dict[str, Any] = {
        "id": "loc-001",
        "family": "Localization",
        "difficulty": "Easy",
        "start": {
            "segment": "s0-1",
            "offset_m": 10.0,
            "lat": 60.17,
            "lon": 24.94,
            "heading_deg": 90.0,
        },
        "told": {"grid_size": 5, "grid_map": "assets/grid_map.png"},
        "truth": {"cell": [1, 1], "x_m": 10.0, "y_m": 0.0},
    }
    task.update(changes)
    return task


def vln_task(**changes: Any) -> dict[str, Any]:
    task: dict[str, Any] = {
        "id": "vln-001",
        "family": "VLN",
        "difficulty": "Medium",
        "start": {
            "segment": "s0-1",
            "offset_m": 5.0,
            "lat": 60.17,
            "lon": 24.94,
            "heading_deg": 90.0,
        },
        "told": {
            "instructions": ["1. Go straight.", "2. Stop in front of Kahvila Aalto on your right."]
        },
        "truth": {
            "goal": {"x_m": 22.0, "y_m": 0.0, "lat": 60.17, "lon": 24.94, "threshold_m": 10.0},
            "route": ["s0-1"],
        },
        "metric": {"name": "coordinate_match", "threshold_m": 10.0},
    }
    task.update(changes)
    return task


def as_task(raw: dict[str, Any]) -> TaskBase:
    from city360.tasks.families import parse_task

    return parse_task(raw)
