"""Small typed values shared by every stage.

Conventions (see DESIGN.md "Space and time"): metric coordinates ``x_m`` east and ``y_m`` north
in the city's local projected CRS, metres; geographic ``lat``/``lon`` in WGS84 degrees; headings
and bearings in degrees clockwise from north in [0, 360); times in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

__all__ = ["FrameRef", "GeoPoint", "Image", "Pose"]

Image: TypeAlias = npt.NDArray[np.uint8]
"""An RGB image, shape (H, W, 3), dtype uint8."""


@dataclass(frozen=True, slots=True)
class GeoPoint:
    """A WGS84 position in degrees."""

    lat: float
    lon: float


@dataclass(frozen=True, slots=True)
class Pose:
    """A camera position and travel direction at one instant.

    ``x_m``/``y_m`` are metres in the city CRS (east, north); ``heading_deg`` is the direction of
    travel, clockwise from north; ``t_s`` is seconds from the start of the source video.
    """

    x_m: float
    y_m: float
    lat: float
    lon: float
    heading_deg: float
    t_s: float = 0.0


@dataclass(frozen=True, slots=True)
class FrameRef:
    """One frame of one trajectory in a city directory."""

    trajectory: str
    index: int
