"""The location map of each observation (``obs["map"]``): a north-up crop of the city's base
map centred on the agent, with a red arrow along the view direction and the trail walked so
far, drawn by :class:`city360.maps.citymap.CityMap` (which renders and caches the base map in
``<city>/map/`` the first time).

The arrow follows the view bearing rather than the travel heading: it shows the agent which
way the picture it is looking at faces. Looking up or down (Q/E) or recentring (S) on the
spot changes neither position, bearing nor trail, so the last map is kept and handed out
again (as a copy: an agent may draw on its observation).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from city360.simulator.config import EnvConfig
from city360.simulator.world import World
from city360.types import Image

__all__ = ["LocationMapper"]


class LocationMapper:
    """Draws ``obs["map"]`` for one city with the size and scale of an :class:`EnvConfig`."""

    def __init__(self, world: World, config: EnvConfig) -> None:
        from city360.maps.citymap import CityMap

        self._map = CityMap.open(world.city.root)
        self._size_px = config.map_size
        self._metres_per_px = config.map_scale_m_per_px
        self._last: tuple[tuple[object, ...], Image] | None = None

    def render(
        self, x_m: float, y_m: float, heading_deg: float, trail: Sequence[tuple[float, float]]
    ) -> Image:
        """The map at (``x_m``, ``y_m``) metres with the arrow along ``heading_deg``."""
        key = (x_m, y_m, heading_deg, tuple(trail))
        if self._last is not None and self._last[0] == key:
            return np.array(self._last[1])
        image = self._map.location_map(
            x_m,
            y_m,
            heading_deg,
            size_px=self._size_px,
            metres_per_px=self._metres_per_px,
            trail=list(trail),
        )
        self._last = (key, image)
        return np.array(image)
