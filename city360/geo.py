"""Geodesy helpers: the city's local metric CRS and angle arithmetic.

Each city uses one local transverse Mercator projection centred on its origin, so that
``x_m`` (east) and ``y_m`` (north) are metres with negligible scale error over a district.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np
import numpy.typing as npt
from pyproj import CRS, Transformer

from city360.errors import ConfigError

__all__ = [
    "LocalProjection",
    "angle_diff_deg",
    "bearing_deg",
    "distance_to_polyline_m",
    "haversine_m",
    "mean_gap_m",
    "principal_axis",
    "wrap_deg",
]

EARTH_RADIUS_M = 6_371_008.8


def wrap_deg(angle_deg: float) -> float:
    """Wrap an angle to [0, 360)."""
    wrapped = math.fmod(angle_deg, 360.0)
    if wrapped < 0:
        wrapped += 360.0
    return 0.0 if wrapped >= 360.0 else wrapped


def angle_diff_deg(to_deg: float, from_deg: float) -> float:
    """Signed smallest rotation from ``from_deg`` to ``to_deg``, in (-180, 180]; + is clockwise."""
    diff = math.fmod(to_deg - from_deg, 360.0)
    if diff <= -180.0:
        diff += 360.0
    elif diff > 180.0:
        diff -= 360.0
    return diff


def bearing_deg(dx_m: float, dy_m: float) -> float:
    """Bearing of the vector (east ``dx_m``, north ``dy_m``), degrees clockwise from north."""
    return wrap_deg(math.degrees(math.atan2(dx_m, dy_m)))


def haversine_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance in metres between two WGS84 points."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(math.sqrt(a))


class LocalProjection:
    """A local transverse Mercator CRS centred on ``(origin_lat, origin_lon)``.

    ``to_xy`` maps WGS84 degrees to metres (x east, y north); ``to_latlon`` is its inverse.
    Both accept scalars or numpy arrays. ``proj4`` is what a city manifest records.
    """

    def __init__(self, origin_lat: float, origin_lon: float) -> None:
        if not (-90.0 <= origin_lat <= 90.0) or not (-180.0 <= origin_lon <= 180.0):
            msg = f"origin must be a WGS84 lat/lon, got ({origin_lat}, {origin_lon})"
            raise ConfigError(msg)
        self.origin_lat = float(origin_lat)
        self.origin_lon = float(origin_lon)

    @classmethod
    def from_proj4(cls, proj4: str) -> LocalProjection:
        """Rebuild a projection from the string :attr:`proj4` wrote."""
        params = dict(part.lstrip("+").split("=", 1) for part in proj4.split() if "=" in part)
        try:
            return cls(float(params["lat_0"]), float(params["lon_0"]))
        except KeyError as exc:
            msg = f"CRS {proj4!r} is not a city360 local projection (missing {exc.args[0]})"
            raise ConfigError(msg) from None

    @property
    def proj4(self) -> str:
        return (
            f"+proj=tmerc +lat_0={self.origin_lat:.9f} +lon_0={self.origin_lon:.9f} "
            "+k=1 +x_0=0 +y_0=0 +ellps=WGS84 +units=m +no_defs"
        )

    @cached_property
    def crs(self) -> CRS:
        return CRS.from_proj4(self.proj4)

    @cached_property
    def _forward(self) -> Transformer:
        return Transformer.from_crs("EPSG:4326", self.crs, always_xy=True)

    @cached_property
    def _inverse(self) -> Transformer:
        return Transformer.from_crs(self.crs, "EPSG:4326", always_xy=True)

    def to_xy(
        self, lat: float | npt.ArrayLike, lon: float | npt.ArrayLike
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """WGS84 degrees -> local metres (x east, y north)."""
        x, y = self._forward.transform(np.asarray(lon, float), np.asarray(lat, float))
        return np.asarray(x, np.float64), np.asarray(y, np.float64)

    def to_latlon(
        self, x_m: float | npt.ArrayLike, y_m: float | npt.ArrayLike
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Local metres -> WGS84 degrees (lat, lon)."""
        lon, lat = self._inverse.transform(np.asarray(x_m, float), np.asarray(y_m, float))
        return np.asarray(lat, np.float64), np.asarray(lon, np.float64)

    def __repr__(self) -> str:
        return f"LocalProjection(origin_lat={self.origin_lat}, origin_lon={self.origin_lon})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LocalProjection):
            return NotImplemented
        return (self.origin_lat, self.origin_lon) == (other.origin_lat, other.origin_lon)

    def __hash__(self) -> int:
        return hash((self.origin_lat, self.origin_lon))


def mean_gap_m(a: npt.ArrayLike, b: npt.ArrayLike, samples: int = 10) -> float:
    """Mean distance between two polylines (N, 2) running the same way, metres: at
    ``samples`` points spread by arc length along each."""

    def resample(line: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        arc = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(line, axis=0).T))])
        marks = np.linspace(0.0, arc[-1], samples)
        return np.column_stack(
            [np.interp(marks, arc, line[:, 0]), np.interp(marks, arc, line[:, 1])]
        )

    first = resample(np.asarray(a, dtype=np.float64))
    second = resample(np.asarray(b, dtype=np.float64))
    return float(np.mean(np.hypot(*(first - second).T)))


def principal_axis(
    points: npt.ArrayLike, away_from: npt.ArrayLike | None = None
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """``(centre, direction)`` of the straight line fitted to ``points`` (N, 2), metres: their
    centroid and the unit vector of their principal axis (numpy SVD, least squares across the
    line). With ``away_from`` (x, y) the direction points away from it, so that a line fitted
    to a street's poses beside a junction points out along the street; else its sign is
    numpy's."""
    xy = np.asarray(points, dtype=np.float64)
    centre = xy.mean(axis=0)
    _, _, vt = np.linalg.svd(xy - centre, full_matrices=False)
    direction = vt[0]
    if away_from is not None and float(np.dot(centre - np.asarray(away_from), direction)) < 0:
        direction = -direction
    return centre, direction


def distance_to_polyline_m(point: npt.ArrayLike, line: npt.ArrayLike) -> float:
    """Distance (metres) from ``point`` (x, y) to the polyline ``line`` (N, 2), N >= 2: to the
    nearest foot on any of its segments (a segment of zero length is its end point)."""
    xy = np.asarray(point, dtype=np.float64)
    poly = np.asarray(line, dtype=np.float64)
    a, b = poly[:-1], poly[1:]
    ab = b - a
    length2 = np.einsum("ij,ij->i", ab, ab)
    share = np.clip(
        np.einsum("ij,ij->i", xy - a, ab) / np.where(length2 > 0, length2, 1.0), 0.0, 1.0
    )
    foot = a + share[:, None] * ab
    return float(np.hypot(*(foot - xy).T).min())
