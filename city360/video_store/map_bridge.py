"""GPS gaps bridged along the mapped streets.

Where the GPS drops out (a tunnel, an underpass, a canyon burst the cleaner masked) the
smoother bridges the gap with a cubic Hermite of its two end states (:mod:`.smooth`): a good
guess on a straight street, a corner cut through a turn. SF camera seed 2 of the accuracy
suite is the measured case: an 8 s dropout through a left turn and a bend back, 65.8 m of true
path against a 53.6 m chord, bridged 7.0 m RMS off the truth (12.9 m at most).

With an OSM extract the streets the camera can be on are known. A gap of at least
:attr:`MapBridgeParams.min_gap_s` is re-bridged along the shortest route on the street network
between its two ends when the route fits the track:

- each end lies within :attr:`~MapBridgeParams.max_snap_m` of a street running the way the
  track moves there (within :attr:`~MapBridgeParams.max_heading_deg`; up to
  :data:`CANDIDATES_PER_END` streets per end are tried);
- the route leaves and arrives the way the track does (the same angle);
- its length is at most :attr:`~MapBridgeParams.max_length_ratio` times the longer of the
  Hermite bridge and the distance the end speeds cover in the gap's time, and at least the
  Hermite bridge's length less :attr:`~MapBridgeParams.length_slack_m` (a route shorter than
  the smoother's own guess is a shortcut the map offers, not the way the track went);
- it does not double back (``_turns_back``), and it runs at least
  :attr:`~MapBridgeParams.min_disagreement_m` from the Hermite bridge somewhere (where the two
  agree, on a straight street, the bridge keeps the GPS's side of the street).

Of the routes that fit, the shortest is taken. The sideways offset of each end from the
street's centre line (a sidewalk, a lane) is carried along the route, changing linearly from
one end's to the other's, and a pose keeps the smoother's own progress: its share of the
Hermite bridge's length, placed at that share of this offset path's length. A gap no route
fits keeps its Hermite bridge. Positions are metres in the city CRS; times GPS POSIX seconds.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import numpy as np
import numpy.typing as npt
from shapely.geometry import LineString, Point
from shapely.strtree import STRtree

from city360.geo import LocalProjection
from city360.video_store.clean import SmoothTrack

__all__ = [
    "CANDIDATES_PER_END",
    "ROUTE_NETWORK",
    "MapBridgeParams",
    "StreetRoutes",
    "bridge_gaps",
    "gaps_to_bridge",
    "load_street_routes",
]

ROUTE_NETWORK = "all"
"""The OSM network routed along (``city360.maps.NETWORK_HIGHWAYS``): every usable way, since a
camera may be on a footpath or a road; the checks of a route (ends, directions, length, no
turning back) keep it to the way the track went."""

FloatArray = npt.NDArray[np.float64]

CANDIDATES_PER_END = 3
"""Streets tried at each end of a gap (nearest first, those running the track's way)."""

PATH_STEP_M = 0.5
"""Spacing of the points of a bridge's path along the route, metres."""

MAX_TURN_DEG = 135.0
"""A route turning more than this over a few metres doubles back (see ``_turns_back``)."""

END_REACH_M = 1.0
"""A gap's end projecting onto a street's end node counts as on that street only when it lies
at most this far beyond it along the street, metres."""

NORMAL_SPAN_M = 3.0
"""The route's sideways direction at a point is taken over this arc either side of it, so the
offset turns round a corner instead of jumping across it."""


@dataclass(frozen=True, slots=True)
class MapBridgeParams:
    """When a GPS gap is re-bridged along the streets (see the module docstring)."""

    min_gap_s: float = 4.0
    """Shortest gap between kept fixes re-bridged, seconds: the Hermite of shorter gaps is
    within the GPS noise of any street."""
    max_gap_s: float = 120.0
    """Longest, seconds: beyond it the camera may have gone anywhere the map allows."""
    max_snap_m: float = 12.0
    """How far a gap's end may be from the street it is on, metres (half a wide street plus
    its sidewalk and the GPS noise)."""
    max_heading_deg: float = 50.0
    """How far the track's direction at a gap's end may be from the route's there, degrees."""
    max_length_ratio: float = 1.5
    """The longest route taken, as a multiple of the longer of the Hermite bridge and the end
    speeds times the gap's time."""
    min_disagreement_m: float = 5.0
    """A route is taken only where it runs at least this far from the Hermite bridge at some
    pose, metres: where the two agree (a straight street) the bridge, which carries the GPS's
    side of the street, is as good, and the route adds only the map's own error."""
    length_slack_m: float = 5.0
    """How much shorter than the Hermite bridge a route may be, metres (the bridge swings wide
    of a corner when the end states overshoot it)."""


@dataclass(frozen=True, slots=True)
class StreetRoutes:
    """A street network to route along: ``graph`` has a node per street end and an edge per
    street, ``lines[k]`` the polyline (metres, city CRS) of edge ``edges[k] = (u, v, key)``
    running from ``u`` to ``v``."""

    graph: nx.MultiGraph
    edges: tuple[tuple[int, int, int], ...]
    lines: tuple[LineString, ...]
    tree: STRtree

    @classmethod
    def from_streets(cls, streets: nx.MultiGraph) -> StreetRoutes:
        """From an ``OsmData.streets`` graph (:func:`city360.maps.osm.load_osm`): edge
        attributes ``polyline_xy`` (from ``from_node``) and ``length_m``."""
        edges: list[tuple[int, int, int]] = []
        lines: list[LineString] = []
        for u, v, key, data in streets.edges(keys=True, data=True):
            points = list(data["polyline_xy"])
            if data.get("from_node", u) != u:
                points.reverse()
            if len(points) < 2:
                continue
            edges.append((int(u), int(v), int(key)))
            lines.append(LineString(points))
        return cls(streets, tuple(edges), tuple(lines), STRtree(lines))


def load_street_routes(path: Path, projection: LocalProjection) -> StreetRoutes:
    """The :data:`ROUTE_NETWORK` of the OSM extract at ``path`` in the city's CRS, every
    connected piece of it (read once per process, extract and CRS). Raises
    :class:`~city360.errors.InputFileError` or :class:`~city360.errors.OsmError` naming the
    file when it is missing, corrupt or has no ways."""
    return _load_street_routes(str(Path(path).resolve()), projection.proj4)


@functools.lru_cache(maxsize=4)
def _load_street_routes(path: str, proj4: str) -> StreetRoutes:
    from city360.maps.osm import load_osm

    projection = LocalProjection.from_proj4(proj4)
    data = load_osm(path, projection=projection, network=ROUTE_NETWORK, all_components=True)
    return StreetRoutes.from_streets(data.streets)


@dataclass(frozen=True, slots=True)
class _Anchor:
    """A gap's end on a street: the street's index in :class:`StreetRoutes` and the end's arc
    position along it (metres from its ``u``)."""

    edge: int
    along_m: float
    forward: bool
    """Whether the track moves from ``u`` towards ``v`` there."""


def bridge_gaps(
    smooth: SmoothTrack, routes: StreetRoutes, params: MapBridgeParams | None = None
) -> tuple[SmoothTrack, list[tuple[float, float]]]:
    """``smooth`` with every gap a route fits re-bridged along the streets, and the GPS-time
    spans ``(last fix before, first fix after)`` that were. Gaps inside a break
    (:attr:`SmoothTrack.breaks_s`) are left alone: the track is cut there."""
    params = params or MapBridgeParams()
    x, y = smooth.x_m.copy(), smooth.y_m.copy()
    changed = np.zeros(x.shape, bool)
    bridged: list[tuple[float, float]] = []
    for start, end in gaps_to_bridge(smooth, params):
        inside = np.flatnonzero((smooth.t_s >= start) & (smooth.t_s <= end))
        guessed = (start, end) in smooth.arc_gaps_s
        placed = _along_route(smooth, inside, routes, params, guessed=guessed)
        if placed is not None:
            x[inside], y[inside] = placed
            changed[inside] = True
            bridged.append((start, end))
    if not bridged:
        return smooth, []
    heading = _headings(x, y, smooth.heading_deg, changed)
    return dataclasses.replace(smooth, x_m=x, y_m=y, heading_deg=heading), bridged


def gaps_to_bridge(
    smooth: SmoothTrack, params: MapBridgeParams | None = None
) -> list[tuple[float, float]]:
    """The gaps :func:`bridge_gaps` tries to route, as GPS-time spans ``(last fix before,
    first fix after)``: ``min_gap_s`` to ``max_gap_s`` long, outside the track's breaks, with
    at least three grid poses inside. A track without one needs no street network, so a
    caller reads the extract (seconds for a city's) only when this is not empty."""
    params = params or MapBridgeParams()
    fixes = smooth.meas_t_s
    gaps: list[tuple[float, float]] = []
    for k in np.flatnonzero(np.diff(fixes) >= params.min_gap_s):
        start, end = float(fixes[k]), float(fixes[k + 1])
        if end - start > params.max_gap_s or smooth.in_break([(start + end) / 2])[0]:
            continue
        if int(((smooth.t_s >= start) & (smooth.t_s <= end)).sum()) < 3:
            continue
        gaps.append((start, end))
    return gaps


def _along_route(
    smooth: SmoothTrack,
    inside: npt.NDArray[np.int64],
    routes: StreetRoutes,
    params: MapBridgeParams,
    *,
    guessed: bool = False,
) -> tuple[FloatArray, FloatArray] | None:
    """Positions of the grid poses ``inside`` a gap along the best fitting route, or None.
    ``guessed``: the gap was redrawn by the cleaning's ``gap_arcs``, a guess that a fitting
    route replaces even where the two agree (``min_disagreement_m`` keeps the GPS's side of a
    straight street; an arc carries no side of its own)."""
    first, last = int(inside[0]), int(inside[-1])
    a = np.array([smooth.x_m[first], smooth.y_m[first]])
    b = np.array([smooth.x_m[last], smooth.y_m[last]])
    steps = np.hypot(np.diff(smooth.x_m[inside]), np.diff(smooth.y_m[inside]))
    hermite = np.concatenate([[0.0], np.cumsum(steps)])
    duration = float(smooth.t_s[last] - smooth.t_s[first])
    by_speed = 0.5 * float(smooth.speed_mps[first] + smooth.speed_mps[last]) * duration
    longest = params.max_length_ratio * max(float(hermite[-1]), by_speed)
    shortest = float(hermite[-1]) - params.length_slack_m
    best: LineString | None = None
    for start in _anchors(routes, a, float(smooth.heading_deg[first]), params):
        for end in _anchors(routes, b, float(smooth.heading_deg[last]), params):
            line = _route(routes, start, end)
            if line is None or not shortest <= line.length <= longest or _turns_back(line):
                continue
            if best is None or line.length < best.length:
                best = line
    if best is None or best.length <= 0.0:
        return None
    path = _offset_path(best, _side_offset(best, 0.0, a), _side_offset(best, best.length, b))
    arc = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(path, axis=0).T))])
    share = hermite / hermite[-1] if hermite[-1] > 0 else np.linspace(0.0, 1.0, inside.size)
    xs = np.interp(share * arc[-1], arc, path[:, 0])
    ys = np.interp(share * arc[-1], arc, path[:, 1])
    apart = np.hypot(xs - smooth.x_m[inside], ys - smooth.y_m[inside])
    return (xs, ys) if guessed or float(apart.max()) >= params.min_disagreement_m else None


def _offset_path(line: LineString, offset_a: float, offset_b: float) -> FloatArray:
    """Points (N, 2) every :data:`PATH_STEP_M` of ``line``'s centre line, moved sideways by an
    offset changing linearly from ``offset_a`` to ``offset_b`` (metres, positive left): the
    path of a camera keeping its side of the street. Poses are placed by arc length along
    this path, which is shorter than the centre line round the inside of a corner."""
    marks = np.linspace(0.0, line.length, max(2, int(np.ceil(line.length / PATH_STEP_M)) + 1))
    share = marks / line.length
    points = np.empty((marks.size, 2))
    for i, (mark, part) in enumerate(zip(marks, share, strict=True)):
        centre = line.interpolate(float(mark))
        nx_, ny_ = _left_normal(line, float(mark))
        offset = offset_a + (offset_b - offset_a) * part
        points[i] = centre.x + offset * nx_, centre.y + offset * ny_
    return points


def _anchors(
    routes: StreetRoutes, point: FloatArray, heading_deg: float, params: MapBridgeParams
) -> list[_Anchor]:
    """Up to :data:`CANDIDATES_PER_END` streets within reach of ``point`` running the track's
    way (``heading_deg`` clockwise from north), nearest first."""
    here = Point(float(point[0]), float(point[1]))
    near = routes.tree.query(here.buffer(params.max_snap_m))
    found: list[tuple[float, _Anchor]] = []
    travel = np.array([np.sin(np.radians(heading_deg)), np.cos(np.radians(heading_deg))])
    for index in near:
        line = routes.lines[int(index)]
        distance = line.distance(here)
        if distance > params.max_snap_m:
            continue
        along = line.project(here)
        direction = _direction(line, along)
        foot = line.interpolate(along)
        beyond = abs((point[0] - foot.x) * direction[0] + (point[1] - foot.y) * direction[1])
        if beyond > END_REACH_M:
            continue  # past the street's end: the street beyond it is the one it is on
        cosine = float(np.dot(direction, travel))
        if abs(cosine) < np.cos(np.radians(params.max_heading_deg)):
            continue
        found.append((distance, _Anchor(int(index), along, cosine > 0)))
    found.sort(key=lambda item: item[0])
    return [anchor for _, anchor in found[:CANDIDATES_PER_END]]


def _route(routes: StreetRoutes, start: _Anchor, end: _Anchor) -> LineString | None:
    """The shortest line along the streets from ``start`` to ``end`` that leaves and arrives
    the way the track moves, or None when the network does not join them."""
    line_a, line_b = routes.lines[start.edge], routes.lines[end.edge]
    u_a, v_a, _ = routes.edges[start.edge]
    u_b, v_b, _ = routes.edges[end.edge]
    if start.edge == end.edge:
        if start.forward != end.forward or (end.along_m >= start.along_m) != start.forward:
            return None
        return _piece(line_a, start.along_m, end.along_m)
    # leave start's street by the end it moves towards; enter end's by the end it comes from
    exit_node = v_a if start.forward else u_a
    entry_node = u_b if end.forward else v_b
    head = _piece(line_a, start.along_m, line_a.length if start.forward else 0.0)
    tail = _piece(line_b, 0.0 if end.forward else line_b.length, end.along_m)
    try:
        nodes = nx.shortest_path(routes.graph, exit_node, entry_node, weight="length_m")
    except (nx.NetworkXNoPath, nx.NodeNotFound):
        return None
    points: list[tuple[float, float]] = list(head.coords)
    for u, v in itertools.pairwise(nodes):
        key = min(routes.graph[u][v], key=lambda k: routes.graph[u][v][k]["length_m"])
        data = routes.graph[u][v][key]
        leg = list(data["polyline_xy"])
        if data.get("from_node", u) != u:
            leg.reverse()
        points.extend(leg[1:])
    points.extend(list(tail.coords)[1:])
    return LineString(points) if len(points) >= 2 else None


def _turns_back(line: LineString) -> bool:
    """Whether ``line`` doubles back on itself: its direction over :data:`NORMAL_SPAN_M` turns
    more than :data:`MAX_TURN_DEG` between two points that far apart (a route through a street
    end and back, which a track moving forward at both ends of a gap did not take)."""
    marks = np.arange(0.0, line.length + 1e-9, 1.0)
    if marks.size < 2:
        return False
    points = np.array([line.interpolate(float(m)).coords[0] for m in marks])
    step = max(1, int(NORMAL_SPAN_M))
    ahead = points[step:] - points[:-step]
    if len(ahead) <= step:
        return False
    angle = np.degrees(np.arctan2(ahead[:, 0], ahead[:, 1]))
    turn = np.abs((angle[step:] - angle[:-step] + 180.0) % 360.0 - 180.0)
    return bool((turn > MAX_TURN_DEG).any())


def _piece(line: LineString, from_m: float, to_m: float) -> LineString:
    """The part of ``line`` between two arc positions, running from ``from_m`` to ``to_m``."""
    lo, hi = sorted((from_m, to_m))
    marks = [lo, *(m for m in _vertex_arcs(line) if lo < m < hi), hi]
    points = [line.interpolate(m).coords[0] for m in marks]
    if from_m > to_m:
        points.reverse()
    if len(points) < 2 or lo == hi:
        points = [points[0], points[0]]
    return LineString(points)


def _vertex_arcs(line: LineString) -> FloatArray:
    coords = np.asarray(line.coords)
    return np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(coords, axis=0).T))])


def _direction(line: LineString, along_m: float) -> FloatArray:
    """Unit vector (east, north) of ``line`` at arc position ``along_m``, over
    :data:`NORMAL_SPAN_M` either side."""
    lo = max(0.0, along_m - NORMAL_SPAN_M)
    hi = min(line.length, along_m + NORMAL_SPAN_M)
    p, q = line.interpolate(lo), line.interpolate(hi)
    vector = np.array([q.x - p.x, q.y - p.y])
    norm = float(np.hypot(*vector))
    return vector / norm if norm > 0 else np.array([0.0, 1.0])


def _left_normal(line: LineString, along_m: float) -> tuple[float, float]:
    east, north = _direction(line, along_m)
    return float(-north), float(east)


def _side_offset(line: LineString, along_m: float, point: FloatArray) -> float:
    """Signed distance of ``point`` from ``line`` at ``along_m``, metres, positive left."""
    centre = line.interpolate(along_m)
    nx_, ny_ = _left_normal(line, along_m)
    return float((point[0] - centre.x) * nx_ + (point[1] - centre.y) * ny_)


def _headings(
    x: FloatArray, y: FloatArray, previous_deg: FloatArray, changed: npt.NDArray[np.bool_]
) -> FloatArray:
    """Unwrapped travel headings (degrees clockwise from north): those of the moved positions
    (``changed``) from the new positions, where they move; the rest as they were."""
    dx, dy = np.gradient(x), np.gradient(y)
    fresh = np.degrees(np.arctan2(dx, dy))
    use = changed & (np.hypot(dx, dy) > 1e-3)
    wrapped = np.where(use, fresh, np.mod(previous_deg, 360.0))
    return np.degrees(np.unwrap(np.radians(wrapped)))
