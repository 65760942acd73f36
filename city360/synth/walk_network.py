"""A small, honest street network around a recorded walk, for walks no OSM extract covers.

The real Hamburg walk in ``../shared/data/gps`` lies outside every extract the project has, so
its twin needs streets to film along. This module *generates* them (they are not OpenStreetMap
data and are written with ``generator="city360 walk_network"``): one street that follows the
walked path (the track simplified by ``simplify_m``), and cross streets every ``cross_every_m``
metres along it, perpendicular to the path, reaching ``cross_arm_m`` to both sides (every other
one to one side only, a T-junction). The walk passes every crossing on the path street alone, so
those junctions are filmed on two arms only; what a build can find of them is scored against
the filmed part of the truth (:func:`city360.pose_graph.accuracy.filmed_truth`).

Positions are WGS84 in the output; work is in a local transverse Mercator around the track.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from city360.errors import GpsError
from city360.geo import LocalProjection

__all__ = ["walk_network_osm"]

FloatArray = npt.NDArray[np.float64]


def _track_xy(gpx: Path) -> tuple[FloatArray, LocalProjection]:
    import gpxpy

    parsed = gpxpy.parse(gpx.read_text(encoding="utf-8", errors="replace"))
    points: list[Any] = [p for t in parsed.tracks for s in t.segments for p in s.points]
    points += [p for r in parsed.routes for p in r.points]
    if len(points) < 2:
        msg = f"route GPX {gpx} has fewer than two points; it needs a path to build streets on"
        raise GpsError(msg)
    lat = np.array([p.latitude for p in points])
    lon = np.array([p.longitude for p in points])
    projection = LocalProjection(float(lat.mean()), float(lon.mean()))
    x, y = projection.to_xy(lat, lon)
    return np.column_stack([x, y]), projection


def walk_network_osm(
    gpx: str | Path,
    out: str | Path,
    *,
    simplify_m: float = 4.0,
    cross_every_m: float = 80.0,
    cross_arm_m: float = 40.0,
) -> Path:
    """Write an OSM XML street network around the walk in ``gpx`` to ``out`` (see the module
    docstring); returns ``out``. Raises :class:`GpsError` for a track of fewer than two points.
    """
    import shapely

    from city360._atomic import atomic_write_text
    from city360.maps.osm_xml import osm_xml

    xy, projection = _track_xy(Path(gpx))
    line = shapely.LineString(xy).simplify(simplify_m, preserve_topology=False)
    path = np.asarray(line.coords, np.float64)
    arc = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(path, axis=0).T))])
    length = float(arc[-1])
    crossings = np.arange(cross_every_m / 2, length - cross_every_m / 4, cross_every_m)

    nodes: list[tuple[int, float, float, dict[str, str]]] = []

    def node(point: FloatArray) -> int:
        lat, lon = projection.to_latlon(float(point[0]), float(point[1]))
        nodes.append((len(nodes) + 1, float(lat), float(lon), {}))
        return len(nodes)

    def at(s: float) -> FloatArray:
        return np.array([np.interp(s, arc, path[:, 0]), np.interp(s, arc, path[:, 1])])

    # the path street: its vertices and the crossing points, in order along it
    marks = sorted({*arc.tolist(), *crossings.tolist()})
    refs = {s: node(at(s)) for s in marks}
    tags = {"highway": "residential", "name": "walk street"}
    ways: list[tuple[int, list[int], dict[str, str]]] = [(1, [refs[s] for s in marks], tags)]
    for k, s in enumerate(crossings):
        ahead = at(min(s + 10.0, length)) - at(max(s - 10.0, 0.0))
        direction = ahead / max(float(np.hypot(*ahead)), 1e-9)
        right = np.array([direction[1], -direction[0]])
        centre = at(s)
        left_end = node(centre - cross_arm_m * right) if k % 2 == 0 else None
        right_end = node(centre + cross_arm_m * right)
        way = [n for n in (left_end, refs[float(s)], right_end) if n is not None]
        ways.append((k + 2, way, {"highway": "residential", "name": f"cross street {k + 1}"}))
    return atomic_write_text(out, osm_xml(nodes, ways, generator="city360 walk_network"))
