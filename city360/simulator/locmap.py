"""The location map of each observation: a crop of the city's base map centred on the agent
with a red arrow along the view direction, drawn by ``city360.maps``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from city360.errors import ConfigError
from city360.simulator.config import EnvConfig
from city360.simulator.world import World

__all__ = ["LocationMapper"]


class LocationMapper:
    """Draws ``obs["map"]`` for one city with the sizes of an :class:`EnvConfig`."""

    def __init__(self, world: World, config: EnvConfig) -> None:
        import city360.maps as maps

        factory: Any = getattr(maps, "LocationMap", None)
        if factory is None:
            msg = (
                "the location map needs city360.maps.LocationMap, which this installation "
                "lacks; pass map=False for views without a map"
            )
            raise ConfigError(msg)
        self._map = factory(
            world.city.root, size_px=config.map_size, m_per_px=config.map_scale_m_per_px
        )

    def render(
        self, x_m: float, y_m: float, heading_deg: float, trail: Sequence[tuple[float, float]]
    ) -> npt.NDArray[np.uint8]:
        image: npt.NDArray[np.uint8] = self._map.render(x_m, y_m, heading_deg, trail=trail)
        return image
