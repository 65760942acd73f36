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

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from city360.city import CityDir, TrajectoryPoses
from city360.errors import CityFormatError, InputFileError

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
    "read_graph_json",
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
def read_graph_json(path: Path) -> tuple[dict[int, tuple[float, float]], list[dict[str, Any]]]:
    """Node positions and edge records of a ``graph.json`` (docs/contracts.md).

    Only what maps need is read, so this works on any graph that follows the contract.
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        msg = f"{path} not found; build the graph with `city360 build`"
        raise InputFileError(msg) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        msg = f"{path}: not valid JSON ({exc}); rebuild it with `city360 build`"
        raise CityFormatError(msg) from None
    if not isinstance(raw, dict) or not isinstance(raw.get("nodes"), list):
        msg = f"{path}: not networkx node-link data (no 'nodes' list); rebuild the graph"
        raise CityFormatError(msg)
    nodes: dict[int, tuple[float, float]] = {}
    for i, node in enumerate(raw["nodes"]):
        try:
            nodes[int(node["id"])] = (float(node["x_m"]), float(node["y_m"]))
        except (KeyError, TypeError, ValueError):
            msg = f"{path}: node #{i} needs numeric 'id', 'x_m' and 'y_m'; rebuild the graph"
            raise CityFormatError(msg) from None
    edges = raw.get("edges", raw.get("links", []))
    if not isinstance(edges, list):
        msg = f"{path}: 'edges' must be a list; rebuild the graph"
        raise CityFormatError(msg)
    return nodes, [e for e in edges if isinstance(e, dict)]


def _poses_by_trajectory(city: CityDir, ids: Iterable[str]) -> dict[str, TrajectoryPoses]:
    poses: dict[str, TrajectoryPoses] = {}
    for trajectory_id in sorted(set(ids)):
        if city.poses_path(trajectory_id).is_file():
            poses[trajectory_id] = city.read_poses(trajectory_id)
    return poses


def city_street_lines(city: CityDir) -> tuple[list[StreetLine], npt.NDArray[np.float64], str]:
    """Street lines drawn from the city itself, every point they use, and their source.

    With ``graph.json``: one line per street (an edge and its ``twin`` are drawn once) along
    the poses of its frames, or straight between its nodes when the poses are missing. Without
    a graph: each trajectory's poses. Raises :class:`CityFormatError` when there is neither.
    """
    if city.graph_path.is_file():
        nodes, edges = read_graph_json(city.graph_path)
        poses = _poses_by_trajectory(city, (str(e.get("trajectory", "")) for e in edges))
        lines: list[StreetLine] = []
        seen: set[str] = set()
        for edge in edges:
            edge_id = str(edge.get("id", edge.get("key", "")))
            if edge_id in seen:
                continue
            seen.add(edge_id)
            if edge.get("twin") is not None:
                seen.add(str(edge["twin"]))
            points = _edge_points(edge, nodes, poses)
            if points is not None and len(points) >= 2:
                lines.append(StreetLine(points=points))
        node_points = np.array(list(nodes.values()), dtype=np.float64).reshape(-1, 2)
        all_points = np.vstack([node_points, *(line.points for line in lines)])
        if len(all_points) == 0:
            msg = f"{city.graph_path} has no nodes; rebuild the graph with `city360 build`"
            raise CityFormatError(msg)
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


def _edge_points(
    edge: dict[str, Any],
    nodes: dict[int, tuple[float, float]],
    poses: dict[str, TrajectoryPoses],
) -> npt.NDArray[np.float64] | None:
    try:
        source, target = int(edge["source"]), int(edge["target"])
    except (KeyError, TypeError, ValueError):
        return None
    track = poses.get(str(edge.get("trajectory", "")))
    first, last = edge.get("first_frame"), edge.get("last_frame")
    if track is not None and isinstance(first, int) and isinstance(last, int):
        lo, hi = sorted((first, last))
        if lo >= 0 and hi < len(track):
            points = np.column_stack([track.x_m[lo : hi + 1], track.y_m[lo : hi + 1]])
            return points[::-1] if edge.get("reverse") else points
    if source in nodes and target in nodes:
        return np.array([nodes[source], nodes[target]], dtype=np.float64)
    return None


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
