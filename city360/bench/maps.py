"""Location-map render time: ``CityMap.location_map`` at random positions and headings inside
the city's exploration area (the base map is drawn once beforehand, as the simulator does)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from city360.bench.common import time_calls

__all__ = ["measure_location_map"]


def measure_location_map(city: Path, *, repeats: int, seed: int = 0) -> dict[str, Any]:
    """Time ``repeats`` location maps (256 px, the default scale, with a 20-point trail)."""
    from city360.maps import CityMap

    rng = np.random.default_rng(seed)
    city_map = CityMap.open(city)
    area = city_map.area
    xs = rng.uniform(area.x_min_m, area.x_max_m, repeats + 1)
    ys = rng.uniform(area.y_min_m, area.y_max_m, repeats + 1)
    headings = rng.uniform(0.0, 360.0, repeats + 1)
    trail = np.column_stack([xs[:20], ys[:20]])

    def draw(k: int) -> None:
        city_map.location_map(float(xs[k]), float(ys[k]), float(headings[k]), trail=trail)

    return {"location_map": time_calls(draw, repeats)}
