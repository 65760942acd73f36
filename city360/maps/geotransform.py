"""Pixel <-> metres <-> lat/lon for a north-up raster in the city's local CRS.

Pixel coordinates are continuous ``(col, row)``: the *centre* of pixel ``[r, c]`` of an image
array is ``(col=c, row=r)``, columns grow east and rows grow south — the convention of OpenCV's
drawing functions and of matplotlib's ``imshow``. The affine map is exact both ways, so a round
trip is limited only by floating point (~1e-9 px), far inside the 0.5 px the issue asks for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from city360.errors import ConfigError
from city360.geo import LocalProjection

__all__ = ["GeoTransform"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class GeoTransform:
    """A north-up raster of ``width`` x ``height`` pixels at ``metres_per_px``.

    ``x0_m``/``y0_m`` are the city-CRS metres of the centre of pixel ``(col=0, row=0)`` (the
    top-left pixel). ``projection`` is the city's :class:`LocalProjection`.
    """

    x0_m: float
    y0_m: float
    metres_per_px: float
    width: int
    height: int
    projection: LocalProjection

    def __post_init__(self) -> None:
        if not (self.metres_per_px > 0 and math.isfinite(self.metres_per_px)):
            msg = f"`metres_per_px` must be > 0, got {self.metres_per_px}"
            raise ConfigError(msg)
        if self.width < 1 or self.height < 1:
            msg = f"raster size must be at least 1x1 px, got {self.width}x{self.height}"
            raise ConfigError(msg)

    @classmethod
    def covering(
        cls,
        x_min_m: float,
        y_min_m: float,
        x_max_m: float,
        y_max_m: float,
        *,
        metres_per_px: float,
        projection: LocalProjection,
    ) -> GeoTransform:
        """The smallest raster at ``metres_per_px`` whose pixels cover the given rectangle."""
        if not (x_max_m > x_min_m and y_max_m > y_min_m):
            msg = f"empty rectangle x {x_min_m}..{x_max_m}, y {y_min_m}..{y_max_m} m"
            raise ConfigError(msg)
        width = max(1, math.ceil((x_max_m - x_min_m) / metres_per_px))
        height = max(1, math.ceil((y_max_m - y_min_m) / metres_per_px))
        return cls(
            x0_m=x_min_m + metres_per_px / 2,
            y0_m=y_max_m - metres_per_px / 2,
            metres_per_px=metres_per_px,
            width=width,
            height=height,
            projection=projection,
        )

    # extent --------------------------------------------------------------------------------
    @property
    def extent_m(self) -> tuple[float, float, float, float]:
        """Outer edges of the raster in metres: ``(x_min, y_min, x_max, y_max)``."""
        half = self.metres_per_px / 2
        return (
            self.x0_m - half,
            self.y0_m - (self.height - 1) * self.metres_per_px - half,
            self.x0_m + (self.width - 1) * self.metres_per_px + half,
            self.y0_m + half,
        )

    # conversions ---------------------------------------------------------------------------
    def xy_to_px(
        self, x_m: float | npt.ArrayLike, y_m: float | npt.ArrayLike
    ) -> tuple[FloatArray, FloatArray]:
        """City metres -> continuous pixel ``(col, row)``."""
        col = (np.asarray(x_m, np.float64) - self.x0_m) / self.metres_per_px
        row = (self.y0_m - np.asarray(y_m, np.float64)) / self.metres_per_px
        return col, row

    def px_to_xy(
        self, col: float | npt.ArrayLike, row: float | npt.ArrayLike
    ) -> tuple[FloatArray, FloatArray]:
        """Continuous pixel ``(col, row)`` -> city metres."""
        x_m = self.x0_m + np.asarray(col, np.float64) * self.metres_per_px
        y_m = self.y0_m - np.asarray(row, np.float64) * self.metres_per_px
        return x_m, y_m

    def latlon_to_px(
        self, lat: float | npt.ArrayLike, lon: float | npt.ArrayLike
    ) -> tuple[FloatArray, FloatArray]:
        """WGS84 degrees -> continuous pixel ``(col, row)``."""
        return self.xy_to_px(*self.projection.to_xy(lat, lon))

    def px_to_latlon(
        self, col: float | npt.ArrayLike, row: float | npt.ArrayLike
    ) -> tuple[FloatArray, FloatArray]:
        """Continuous pixel ``(col, row)`` -> WGS84 ``(lat, lon)``."""
        return self.projection.to_latlon(*self.px_to_xy(col, row))

    # persistence ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "x0_m": self.x0_m,
            "y0_m": self.y0_m,
            "metres_per_px": self.metres_per_px,
            "width": self.width,
            "height": self.height,
            "crs": self.projection.proj4,
            "pixel_convention": "(col, row) of pixel centres; col east, row south",
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GeoTransform:
        return cls(
            x0_m=float(data["x0_m"]),
            y0_m=float(data["y0_m"]),
            metres_per_px=float(data["metres_per_px"]),
            width=int(data["width"]),
            height=int(data["height"]),
            projection=LocalProjection.from_proj4(str(data["crs"])),
        )
