"""Map layers in the city CRS, from OSM or from the city's own graph and trajectories.

A city filmed where an OSM extract is at hand gets streets with names, buildings, parks, water
and POIs from OSM. A city without one still gets a map: its streets are the polylines its
videos walked — each ``graph.json`` edge drawn along the poses of its frames
(``trajectories/<id>/poses.csv``), or, without a graph, each whole trajectory.

The exploration area (the rectangle the localization grid divides) is the bounding box of the
graph's nodes and of the poses its edges run through (or of all trajectory poses when there is
no graph), grown by a margin: ``max(MIN_MARGIN_M, MARGIN_FRACTION * longer side)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from city360.city import CityDir, TrajectoryPoses
from city360.errors import CityFormatError

if TYPE_CHECKING:
    from shapely.geometry import Polygon

    from city360.maps.osm import OsmData, Poi

__all__ = [
    "MARGIN_FRACTION",
    "MIN_MARGIN_M",
    "ExplorationArea",
    "MapLayers",
    "StreetLine",
    "city_street_lines",
    "exploration_area",
    "layers_from_osm",
]

MIN_MARGIN_M = 20.0
"""Smallest margin around the city's graph in the exploration area, metres."""
MARGIN_FRACTION = 0.05
"""Margin as a fraction of the longer side of the graph's bounding box."""


@dataclass(frozen=True, slots=True)
class StreetLine:
    """One drawable street piece: ``points`` (N, 2) metres (x east, y north)."""

    points: npt.NDArray[np.float64]
    name: str = ""
    highway: str = ""

    @property
    def length_m(self) -> float:
        return (
            float(np.hypot(*np.diff(self.points, axis=0).T).sum()) if len(self.points) > 1 else 0.0
        )


@dataclass(frozen=True)
class MapLayers:
    """Everything the base map draws, in city metres. ``source``: "osm", "graph" or
    "trajectories"."""

    source: str
    streets: list[StreetLine]
    buildings: list[Polygon] = field(default_factory=list)
    parks: list[Polygon] = field(default_factory=list)
    water: list[Polygon] = field(default_factory=list)
    pois: list[Poi] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {
            "streets": len(self.streets),
            "buildings": len(self.buildings),
            "parks": len(self.parks),
            "water": len(self.water),
            "pois": len(self.pois),
        }


@dataclass(frozen=True, slots=True)
class ExplorationArea:
    """The rectangle (city metres) maps and the localization grid cover, and how it was found."""

    x_min_m: float
    y_min_m: float
    x_max_m: float
    y_max_m: float
    margin_m: float
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "x_min_m": self.x_min_m,
            "y_min_m": self.y_min_m,
            "x_max_m": self.x_max_m,
            "y_max_m": self.y_max_m,
            "margin_m": self.margin_m,
            "source": self.source,
            "rule": (
                f"bbox of {self.source}, grown by max({MIN_MARGIN_M:g} m, "
                f"{MARGIN_FRACTION:g} x longer side)"
            ),
        }


def layers_from_osm(data: OsmData) -> MapLayers:
    """OSM streets (one line per graph edge, with name and highway class) and areas."""
    streets = [
        StreetLine(
            points=np.asarray(d["polyline_xy"], dtype=np.float64),
            name=str(d.get("name", "")),
            highway=str(d.get("highway", "")),
        )
        for _, _, d in data.streets.edges(data=True)
    ]
    return MapLayers(
        source="osm",
        streets=streets,
        buildings=[b.footprint for b in data.buildings],
        parks=list(data.parks),
        water=list(data.water),
        pois=list(data.pois),
    )


# the city's own graph and trajectories ------------------------------------------------------
def _poses_by_trajectory(city: CityDir, ids: Iterable[str]) -> dict[str, TrajectoryPoses]:
    poses: dict[str, TrajectoryPoses] = {}
    for trajectory_id in sorted(set(ids)):
        if city.poses_path(trajectory_id).is_file():
            poses[trajectory_id] = city.read_poses(trajectory_id)
    return poses


def city_street_lines(city: CityDir) -> tuple[list[StreetLine], npt.NDArray[np.float64], str]:
    """Street lines drawn from the city itself, every point they use, and their source.

    With ``graph.json``: one line per street (an edge and its ``twin`` are drawn once) along
    the poses of its frames (the city's :class:`~city360.streets.StreetGraph`). Without a
    graph: each trajectory's poses. Raises :class:`CityFormatError` when there is neither.
    """
    if city.graph_path.is_file():
        from city360.streets import StreetGraph

        graph = StreetGraph.open(city)
        lines: list[StreetLine] = []
        seen: set[str] = set()
        for segment in graph.iter_segments():
            if segment.id in seen:
                continue
            seen.add(segment.id)
            if segment.twin is not None:
                seen.add(segment.twin)
            lines.append(StreetLine(points=segment.xy))
        node_points = np.array(list(graph.node_xy.values()), dtype=np.float64).reshape(-1, 2)
        all_points = np.vstack([node_points, *(line.points for line in lines)])
        return lines, all_points, "graph"
    ids = city.trajectory_ids()
    poses = _poses_by_trajectory(city, ids)
    if not poses:
        msg = (
            f"{city.root} has no graph.json, no trajectories and no OSM extract: nothing to draw "
            "a map from; run `city360 ingest` and `city360 build`, or pass --osm FILE"
        )
        raise CityFormatError(msg)
    lines = [
        StreetLine(points=np.column_stack([p.x_m, p.y_m])) for p in poses.values() if len(p) >= 2
    ]
    all_points = np.vstack([np.column_stack([p.x_m, p.y_m]) for p in poses.values()])
    return lines, all_points, "trajectories"


def exploration_area(points: npt.NDArray[np.float64], source: str) -> ExplorationArea:
    """Bounding box of ``points`` (N, 2 metres) grown by the margin rule of this module."""
    finite = points[np.isfinite(points).all(axis=1)]
    if len(finite) == 0:
        msg = f"no finite positions in the city's {source}; cannot place a map"
        raise CityFormatError(msg)
    x_min, y_min = finite.min(axis=0)
    x_max, y_max = finite.max(axis=0)
    margin = max(MIN_MARGIN_M, MARGIN_FRACTION * max(x_max - x_min, y_max - y_min))
    return ExplorationArea(
        x_min_m=math.floor(float(x_min) - margin),
        y_min_m=math.floor(float(y_min) - margin),
        x_max_m=math.ceil(float(x_max) + margin),
        y_max_m=math.ceil(float(y_max) + margin),
        margin_m=margin,
        source=source,
    )
