"""Street centrelines with their cross-section (road and sidewalk widths) and geometry queries.

Each undirected street-graph edge becomes a :class:`Street` whose polyline runs from ``u`` to
``v`` with ``u <= v`` (the node ids as given), checked against the node positions so a
hand-built graph with the polyline stored the other way round still works. Lateral offsets are
metres to the left (+) or right (-) of travel from ``u`` to ``v``.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np
import numpy.typing as npt
from shapely.geometry import LineString, Point

from city360.errors import ConfigError
from city360.geo import bearing_deg

__all__ = ["ROAD_WIDTH_M", "Street", "cross_section", "street_list"]

FloatArray = npt.NDArray[np.float64]

ROAD_WIDTH_M: dict[str, tuple[float, float]] = {
    "motorway": (14.0, 0.0),
    "trunk": (12.0, 2.5),
    "primary": (11.0, 3.0),
    "secondary": (9.5, 3.0),
    "tertiary": (8.0, 2.5),
    "unclassified": (6.0, 2.0),
    "residential": (6.0, 2.0),
    "living_street": (5.0, 1.5),
    "service": (4.5, 1.0),
    "road": (6.0, 2.0),
    "pedestrian": (6.0, 0.0),
    "footway": (3.0, 0.0),
    "path": (2.5, 0.0),
    "cycleway": (3.0, 0.0),
    "steps": (2.5, 0.0),
    "track": (3.5, 0.0),
}
"""``highway`` class -> (carriageway width, sidewalk width on each side), metres. ``_link``
roads take their parent's width; unknown classes are treated as residential."""

PAVED_ONLY = frozenset({"pedestrian", "footway", "path", "cycleway", "steps", "track"})
"""Classes drawn in paving colour with no separate sidewalk and no cars."""


def cross_section(highway: Any) -> tuple[float, float]:
    """(road width, sidewalk width) in metres for an OSM ``highway`` value (str or list)."""
    value = highway[0] if isinstance(highway, list | tuple) and highway else highway
    name = str(value or "residential").removesuffix("_link")
    return ROAD_WIDTH_M.get(name, ROAD_WIDTH_M["residential"])


@dataclass(eq=False)
class Street:
    """One street: centreline ``polyline`` (N, 2) metres from node ``u`` to node ``v``."""

    index: int
    u: int
    v: int
    key: Hashable
    name: str
    highway: str
    polyline: FloatArray = field(repr=False)
    road_half_m: float
    sidewalk_m: float
    cumlen: FloatArray = field(init=False, repr=False)
    line: LineString = field(init=False, repr=False)
    _cum: list[float] = field(init=False, repr=False)
    _xy: list[tuple[float, float]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        steps = np.hypot(*np.diff(self.polyline, axis=0).T)
        self.cumlen = np.concatenate([[0.0], np.cumsum(steps)])
        self.line = LineString(self.polyline)
        # plain-Python copies: point_at is called per sign and object, on scalars
        self._cum = [float(c) for c in self.cumlen]
        self._xy = [(float(x), float(y)) for x, y in self.polyline]

    @property
    def length_m(self) -> float:
        return float(self.cumlen[-1])

    @property
    def paved_only(self) -> bool:
        return self.highway in PAVED_ONLY

    @property
    def building_line_m(self) -> float:
        """Lateral distance from the centreline to the back of the sidewalk, metres."""
        return self.road_half_m + self.sidewalk_m

    def point_at(self, offset_m: float) -> tuple[float, float, float]:
        """(x_m, y_m, heading_deg) at ``offset_m`` from ``u``; heading is travel u -> v."""
        cum = self._cum
        s = min(max(offset_m, 0.0), cum[-1])
        i = min(max(bisect.bisect_right(cum, s) - 1, 0), len(cum) - 2)
        seg = cum[i + 1] - cum[i]
        f = 0.0 if seg <= 0 else (s - cum[i]) / seg
        (x0, y0), (x1, y1) = self._xy[i], self._xy[i + 1]
        return x0 + f * (x1 - x0), y0 + f * (y1 - y0), bearing_deg(x1 - x0, y1 - y0)

    def frame_at(self, offset_m: float) -> tuple[FloatArray, FloatArray]:
        """(point, unit tangent u->v) at ``offset_m``; the left normal is (-ty, tx)."""
        x, y, heading = self.point_at(offset_m)
        rad = math.radians(heading)
        return np.array([x, y]), np.array([math.sin(rad), math.cos(rad)])

    def offset_point(self, offset_m: float, lateral_m: float) -> FloatArray:
        """The point ``lateral_m`` to the left (+) or right (-) of the centreline at offset."""
        point, tangent = self.frame_at(offset_m)
        return point + lateral_m * np.array([-tangent[1], tangent[0]])

    def locate(self, x_m: float, y_m: float) -> tuple[float, float]:
        """(offset_m along the street, signed lateral metres, + left) of the nearest point."""
        s = float(self.line.project(Point(x_m, y_m)))
        point, tangent = self.frame_at(s)
        dx, dy = x_m - point[0], y_m - point[1]
        return s, float(tangent[0] * dy - tangent[1] * dx)

    def resample(self, step_m: float) -> tuple[FloatArray, FloatArray]:
        """Points and unit tangents every ``step_m`` metres (last sample at the far end)."""
        count = max(2, math.ceil(self.length_m / step_m) + 1)
        offsets = np.linspace(0.0, self.length_m, count)
        xs = np.interp(offsets, self.cumlen, self.polyline[:, 0])
        ys = np.interp(offsets, self.cumlen, self.polyline[:, 1])
        points = np.stack([xs, ys], axis=1)
        tangents = np.gradient(points, axis=0)
        norms = np.maximum(np.hypot(tangents[:, 0], tangents[:, 1]), 1e-9)
        return points, tangents / norms[:, None]


def _node_xy(graph: nx.MultiGraph, node: Hashable) -> tuple[float, float]:
    data = graph.nodes[node]
    try:
        return float(data["x_m"]), float(data["y_m"])
    except KeyError:
        msg = f"street node {node!r} has no x_m/y_m attributes; build the graph with load_osm"
        raise ConfigError(msg) from None


def street_list(graph: nx.MultiGraph) -> list[Street]:
    """Every edge of ``graph`` as a :class:`Street`, in a deterministic order.

    Edges are sorted by (u, v, key) with ``u <= v``; a missing ``polyline_xy`` becomes the
    straight segment between the nodes. Zero-length edges are skipped.
    """
    if graph.number_of_edges() == 0:
        msg = "the street graph has no edges; choose an extract or bbox that contains streets"
        raise ConfigError(msg)
    rows = []
    for node in graph.nodes:
        if not isinstance(node, int | np.integer):
            msg = f"street node ids must be integers (OSM node ids), got {node!r}"
            raise ConfigError(msg)
    for a, b, key, data in graph.edges(keys=True, data=True):
        u, v = (a, b) if _sort_key(a) <= _sort_key(b) else (b, a)
        rows.append((_sort_key(u), _sort_key(v), _sort_key(key), u, v, key, data))
    rows.sort(key=lambda row: row[:3])
    streets: list[Street] = []
    for _, _, _, u, v, key, data in rows:
        start, end = np.array(_node_xy(graph, u)), np.array(_node_xy(graph, v))
        raw = data.get("polyline_xy")
        polyline = np.asarray(raw, np.float64) if raw else np.stack([start, end])
        if np.hypot(*(polyline[0] - start)) > np.hypot(*(polyline[-1] - start)):
            polyline = polyline[::-1].copy()
        keep = np.concatenate([[True], np.hypot(*np.diff(polyline, axis=0).T) > 1e-6])
        polyline = polyline[keep]
        if len(polyline) < 2:
            continue
        width, sidewalk = cross_section(data.get("highway"))
        highway = data.get("highway") or "residential"
        streets.append(
            Street(
                index=len(streets),
                u=int(u),
                v=int(v),
                key=key,
                name=str(data.get("name") or ""),
                highway=str(highway[0] if isinstance(highway, list) else highway),
                polyline=polyline,
                road_half_m=width / 2.0,
                sidewalk_m=sidewalk,
            )
        )
    return streets


def _sort_key(value: Hashable) -> tuple[int, Any]:
    """Sort ints numerically and anything else by its string, ints first."""
    return (0, value) if isinstance(value, int) else (1, str(value))
