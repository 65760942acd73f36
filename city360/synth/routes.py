"""Camera routes: where the synthetic person with the 360° camera walks.

Coverage routes walk every street of the street graph once in each direction. Each undirected
street becomes two directed arcs; at every junction each arriving arc is paired with a leaving
arc so that the total turning is smallest (straight on where possible, a U-turn only at a dead
end), which splits the arcs into closed walks that look like a person's. Closed walks that meet
are joined while they stay under ``max_video_m``, and any walk still longer is cut at junctions
into several videos, as a person would stop and start the camera.

A route given as a GPX track (``--route``) is filmed as recorded instead: along its path and,
when every point has a time, with its timing (stops, speed changes, turning back), so the
twin's truth keeps the real track's clock.

Coordinates are metres in the city CRS (x east, y north); bearings are degrees clockwise from
north.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import numpy.typing as npt

from city360.errors import ConfigError, GpsError, InputFileError
from city360.geo import LocalProjection, angle_diff_deg, bearing_deg

__all__ = [
    "DEFAULT_MAX_VIDEO_M",
    "Arc",
    "PathSampler",
    "Route",
    "RouteTiming",
    "arcs_of",
    "cut_walk",
    "plan_coverage_routes",
    "route_from_arcs",
    "route_from_gpx",
]

DEFAULT_MAX_VIDEO_M = 600.0
"""Longest video a coverage route produces, metres (about 7 minutes at walking speed)."""

_HEADING_PROBE_M = 5.0
"""How far into a street its end bearing is measured, so a kink at the node does not count."""

_UTURN_COST_DEG = 1000.0
"""Cost of turning back on the street just walked: chosen only where nothing else is left."""

_ROUTE_NODE_RADIUS_M = 10.0
"""A GPX route passes a junction when it comes this close to it."""

_ROUTE_MARGIN_M = 30.0
"""How far outside the street network's extent a GPX route point may lie."""

ArcId = tuple[Hashable, Hashable, Hashable]
"""(u, v, key): one street walked from node u to node v."""


@dataclass(frozen=True, slots=True)
class Arc:
    """One street walked in one direction: ``polyline_xy`` runs from node ``u`` to ``v``.

    ``start_bearing_deg`` is the travel bearing leaving ``u``, ``end_bearing_deg`` arriving at
    ``v``, both measured over the first/last few metres of the street.
    """

    u: Hashable
    v: Hashable
    key: Hashable
    polyline_xy: npt.NDArray[np.float64] = field(repr=False)
    length_m: float
    start_bearing_deg: float
    end_bearing_deg: float

    @classmethod
    def along(
        cls, u: Hashable, v: Hashable, key: Hashable, polyline_xy: npt.NDArray[np.float64]
    ) -> Arc:
        """The arc from u to v following ``polyline_xy`` (which must run from u to v)."""
        length = float(np.sum(np.hypot(*np.diff(polyline_xy, axis=0).T)))
        return cls(
            u,
            v,
            key,
            polyline_xy,
            length,
            _bearing_from(polyline_xy),
            _bearing_from(polyline_xy[::-1], reverse=True),
        )

    @property
    def id(self) -> ArcId:
        return (self.u, self.v, self.key)


@dataclass(frozen=True, slots=True)
class RouteTiming:
    """A recorded walk's clock: at ``t_s`` (seconds since its first point, increasing) the
    walker had gone ``s_m`` metres along the route's polyline (non-decreasing; flat during a
    stop)."""

    t_s: npt.NDArray[np.float64] = field(repr=False)
    s_m: npt.NDArray[np.float64] = field(repr=False)
    start_utc: float | None = None
    """POSIX time of the first point (UTC), so a twin films on the real walk's clock."""

    @property
    def duration_s(self) -> float:
        return float(self.t_s[-1])

    def distance_at(self, t_s: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """Metres along the path at times ``t_s`` (clamped to the recording)."""
        return np.interp(np.asarray(t_s, np.float64), self.t_s, self.s_m)


@dataclass(frozen=True, slots=True)
class Route:
    """One video's walk.

    ``polyline_xy`` is the path in metres (N, 2); ``junction_sequence`` the street-graph nodes
    passed, in order, including the first and last; ``arcs`` the (u, v, key) streets walked
    (empty for a GPX route).
    """

    name: str
    polyline_xy: npt.NDArray[np.float64] = field(repr=False)
    junction_sequence: tuple[int, ...]
    arcs: tuple[ArcId, ...] = ()
    timing: RouteTiming | None = None
    """When the walker was where along the path (a timed GPX route), else None: walk at the
    filming speed."""

    @property
    def length_m(self) -> float:
        return float(np.sum(np.hypot(*np.diff(self.polyline_xy, axis=0).T)))


class PathSampler:
    """Positions along a polyline by distance walked from its start (metres)."""

    def __init__(self, polyline_xy: npt.NDArray[np.float64]) -> None:
        points = np.asarray(polyline_xy, np.float64).reshape(-1, 2)
        steps = np.hypot(*np.diff(points, axis=0).T)
        keep = np.concatenate([[True], steps > 0])
        self.points = points[keep]
        if len(self.points) < 2:
            msg = "a path needs at least two distinct points"
            raise ConfigError(msg)
        self.cumulative_m = np.concatenate([[0.0], np.cumsum(steps[steps > 0])])

    @property
    def length_m(self) -> float:
        return float(self.cumulative_m[-1])

    def xy_at(self, s_m: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """(N, 2) positions at distances ``s_m`` (clipped to the path)."""
        s = np.clip(np.atleast_1d(np.asarray(s_m, np.float64)), 0.0, self.length_m)
        x = np.interp(s, self.cumulative_m, self.points[:, 0])
        y = np.interp(s, self.cumulative_m, self.points[:, 1])
        return np.stack([x, y], axis=1)

    def segment_bearings_rad(self) -> npt.NDArray[np.float64]:
        """Bearing of each polyline segment, radians clockwise from north, unwrapped."""
        d = np.diff(self.points, axis=0)
        return np.unwrap(np.arctan2(d[:, 0], d[:, 1]))


def _bearing_from(points: npt.NDArray[np.float64], *, reverse: bool = False) -> float:
    """Bearing from ``points[0]`` towards the point ``_HEADING_PROBE_M`` along the polyline.

    With ``reverse`` the polyline is given end-first and the bearing of travel into its end
    (from the probe point to ``points[0]``) is returned.
    """
    start = points[0]
    probe = points[-1]
    walked = 0.0
    for a, b in itertools.pairwise(points):
        step = float(np.hypot(*(b - a)))
        if walked + step >= _HEADING_PROBE_M:
            probe = a + (b - a) * ((_HEADING_PROBE_M - walked) / step)
            break
        walked += step
    dx, dy = float(probe[0] - start[0]), float(probe[1] - start[1])
    if reverse:
        dx, dy = -dx, -dy
    return bearing_deg(dx, dy)


def _oriented_polyline(
    graph: nx.MultiGraph, u: Hashable, v: Hashable, data: dict[str, Any]
) -> npt.NDArray[np.float64]:
    """The edge's polyline running from u to v.

    An undirected graph may report an edge as (v, u) although its polyline was stored from u
    to v, so the orientation is taken from which end lies nearer node u.
    """
    start = np.array([graph.nodes[u]["x_m"], graph.nodes[u]["y_m"]], np.float64)
    end = np.array([graph.nodes[v]["x_m"], graph.nodes[v]["y_m"]], np.float64)
    raw = data.get("polyline_xy")
    points = (
        np.asarray(raw, np.float64).reshape(-1, 2)
        if raw is not None and len(raw) >= 2
        else np.stack([start, end])
    )
    forward = np.hypot(*(points[0] - start)) + np.hypot(*(points[-1] - end))
    backward = np.hypot(*(points[-1] - start)) + np.hypot(*(points[0] - end))
    if backward < forward:
        points = points[::-1]
    return np.ascontiguousarray(points)


def arcs_of(graph: nx.MultiGraph) -> list[Arc]:
    """Both directions of every edge, in a deterministic order: arc ``2k`` walks street k
    forward, arc ``2k + 1`` backward (zero-length edges are left out)."""
    arcs: list[Arc] = []
    for u, v, key, data in sorted(graph.edges(keys=True, data=True), key=_edge_sort_key):
        forward = _oriented_polyline(graph, u, v, data)
        if not np.any(np.diff(forward, axis=0)):
            continue  # zero length: nothing to film
        arcs.append(Arc.along(u, v, key, forward))
        arcs.append(Arc.along(v, u, key, np.ascontiguousarray(forward[::-1])))
    return arcs


def _edge_sort_key(edge: tuple[Any, Any, Any, Any]) -> tuple[str, str, str]:
    u, v, key, _ = edge
    a, b = sorted((repr(u), repr(v)))
    return (a, b, repr(key))


def _pair_turns(arcs: list[Arc]) -> dict[int, int]:
    """At each node pair every arriving arc with a leaving arc, least total turning first.

    Returns ``successor[i] = j``: after arc i the walk continues on arc j. Solved per node as an
    assignment problem; U-turns on the same street cost :data:`_UTURN_COST_DEG`.
    """
    from scipy.optimize import linear_sum_assignment

    arriving: dict[Hashable, list[int]] = {}
    leaving: dict[Hashable, list[int]] = {}
    for index, arc in enumerate(arcs):
        arriving.setdefault(arc.v, []).append(index)
        leaving.setdefault(arc.u, []).append(index)
    successor: dict[int, int] = {}
    for node, ins in arriving.items():
        outs = leaving[node]
        cost = np.array([[_turn_cost(arcs, i, j) for j in outs] for i in ins], np.float64)
        rows, cols = linear_sum_assignment(cost)
        for row, col in zip(rows, cols, strict=True):
            successor[ins[int(row)]] = outs[int(col)]
    return successor


def _cycles(successor: dict[int, int]) -> list[list[int]]:
    """Split a successor permutation into its closed walks, in a deterministic order."""
    seen: set[int] = set()
    cycles: list[list[int]] = []
    for start in sorted(successor):
        if start in seen:
            continue
        cycle = []
        arc = start
        while arc not in seen:
            seen.add(arc)
            cycle.append(arc)
            arc = successor[arc]
        cycles.append(cycle)
    return cycles


def _is_u_turn(arcs: list[Arc], into: int, out: int) -> bool:
    """Whether ``out`` walks straight back along the street ``into`` arrived on."""
    a, b = arcs[into], arcs[out]
    return a.key == b.key and a.u == b.v and a.v == b.u


def _turn_cost(arcs: list[Arc], into: int, out: int) -> float:
    """Degrees turned from arc ``into`` to arc ``out``; a U-turn costs :data:`_UTURN_COST_DEG`."""
    turn = abs(angle_diff_deg(arcs[out].start_bearing_deg, arcs[into].end_bearing_deg))
    return turn + (_UTURN_COST_DEG if _is_u_turn(arcs, into, out) else 0.0)


def _join_cycles(arcs: list[Arc], successor: dict[int, int], *, max_video_m: float) -> None:
    """Join closed walks that share a node while the joined walk stays under ``max_video_m``.

    Swapping the successors of two arriving arcs at a shared node turns two closed walks into
    one; swaps that add the least turning go first (a heap, re-costed lazily when an earlier
    swap changed a successor). Walks only ever merge, so a union-find tracks them.
    ``successor`` is changed in place.
    """
    import heapq

    cycles = _cycles(successor)
    owner = {arc: n for n, cycle in enumerate(cycles) for arc in cycle}
    parent = list(range(len(cycles)))
    lengths = [sum(arcs[a].length_m for a in cycle) for cycle in cycles]

    def find(walk: int) -> int:
        while parent[walk] != walk:
            parent[walk] = parent[parent[walk]]
            walk = parent[walk]
        return walk

    def added_turning(a: int, b: int) -> float:
        before = _turn_cost(arcs, a, successor[a]) + _turn_cost(arcs, b, successor[b])
        after = _turn_cost(arcs, a, successor[b]) + _turn_cost(arcs, b, successor[a])
        return after - before

    by_node: dict[Hashable, list[int]] = {}
    for index in sorted(successor):
        by_node.setdefault(arcs[index].v, []).append(index)
    heap = [
        (added_turning(a, b), a, b)
        for ins in by_node.values()
        for pos, a in enumerate(ins)
        for b in ins[pos + 1 :]
        if owner[a] != owner[b]
    ]
    heapq.heapify(heap)
    while heap:
        cost, a, b = heapq.heappop(heap)
        wa, wb = find(owner[a]), find(owner[b])
        if wa == wb or lengths[wa] + lengths[wb] > max_video_m:
            continue  # walks only grow and merge: this swap can never become possible again
        if _is_u_turn(arcs, a, successor[b]) or _is_u_turn(arcs, b, successor[a]):
            continue  # a person turns back at a dead end, not mid-street
        fresh = added_turning(a, b)
        if fresh > cost + 1e-9:
            heapq.heappush(heap, (fresh, a, b))
            continue
        successor[a], successor[b] = successor[b], successor[a]
        parent[wb] = wa
        lengths[wa] += lengths[wb]


def _rotate_to_best_start(arcs: list[Arc], cycle: list[int]) -> list[int]:
    """Start a closed walk where a person would: at a dead end, else at the sharpest turn."""
    if len(cycle) == 1:
        return cycle

    def start_score(pos: int) -> tuple[float, int]:
        into = cycle[pos - 1]
        return (-_turn_cost(arcs, into, cycle[pos]), pos)

    best = min(range(len(cycle)), key=start_score)
    return cycle[best:] + cycle[:best]


def cut_walk(arcs: list[Arc], cycle: list[int], *, max_video_m: float) -> list[list[int]]:
    """Cut a walk at junctions into pieces of at most ``max_video_m`` (one arc may exceed it).

    Aims at equal pieces (total / number needed); cuts earlier only to respect the bound.
    """
    total = sum(arcs[a].length_m for a in cycle)
    pieces = max(1, math.ceil(total / max_video_m - 1e-9))
    if pieces == 1:
        return [cycle]
    target = total / pieces
    out: list[list[int]] = []
    current: list[int] = []
    walked = 0.0
    for arc in cycle:
        length = arcs[arc].length_m
        over = walked + length > max_video_m
        near_target = walked + length / 2 > target
        if current and (over or (near_target and len(out) < pieces - 1)):
            out.append(current)
            current, walked = [], 0.0
        current.append(arc)
        walked += length
    out.append(current)
    return out


def route_from_arcs(arcs: list[Arc], walk: Sequence[int], name: str) -> Route:
    """The route walking ``arcs[i]`` for each ``i`` of ``walk`` in turn (they must join)."""
    parts = [arcs[walk[0]].polyline_xy]
    parts += [arcs[a].polyline_xy[1:] for a in walk[1:]]
    polyline = np.concatenate(parts, axis=0)
    nodes = [arcs[walk[0]].u] + [arcs[a].v for a in walk]
    return Route(
        name=name,
        polyline_xy=polyline,
        junction_sequence=tuple(int(n) for n in nodes),  # type: ignore[call-overload]
        arcs=tuple(arcs[a].id for a in walk),
    )


def plan_coverage_routes(
    graph: nx.MultiGraph,
    *,
    max_video_m: float = DEFAULT_MAX_VIDEO_M,
    name_prefix: str = "walk",
) -> list[Route]:
    """Routes that walk every street of ``graph`` once in each direction.

    ``graph`` is an undirected street graph with node attributes ``x_m``/``y_m`` (metres) and
    edge attributes ``polyline_xy`` (metres; either orientation) and ``length_m``. Videos are
    named ``<name_prefix>_000``, ``_001``, ... and are at most ``max_video_m`` long unless a
    single street is longer. The result is deterministic for a given graph.
    """
    if not max_video_m > 0:
        msg = f"`max_video_m` must be > 0, got {max_video_m}"
        raise ConfigError(msg)
    arcs = arcs_of(graph)
    if not arcs:
        msg = "the street graph has no streets of non-zero length to film"
        raise ConfigError(msg)
    successor = _pair_turns(arcs)
    _join_cycles(arcs, successor, max_video_m=max_video_m)
    walks: list[list[int]] = []
    for cycle in _cycles(successor):
        walks.extend(cut_walk(arcs, _rotate_to_best_start(arcs, cycle), max_video_m=max_video_m))
    return [route_from_arcs(arcs, walk, f"{name_prefix}_{n:03d}") for n, walk in enumerate(walks)]


def route_from_gpx(
    path: str | Path,
    *,
    graph: nx.MultiGraph,
    projection: LocalProjection,
    name: str | None = None,
) -> Route:
    """A route along the track in the GPX file ``path`` (all tracks, segments and routes).

    When every point has a time, the route keeps the track's timing (:class:`RouteTiming`):
    the camera stops where the walker stopped and walks as fast as they did. Without times it
    walks the path at the filming speed.

    Raises :class:`GpsError` when the file cannot be parsed, has fewer than two distinct points
    or lies outside the street network of the extract (more than 30 m beyond its extent).
    """
    import gpxpy
    import gpxpy.gpx

    path = Path(path)
    if not path.is_file():
        msg = f"route GPX {path} not found; pass --route with an existing .gpx file"
        raise InputFileError(msg)
    from city360.video_store.gps.gpx import gpx_text

    try:
        gpx = gpxpy.parse(gpx_text(path))
    except gpxpy.gpx.GPXException as exc:
        msg = f"route GPX {path} cannot be parsed ({exc}); pass a valid GPX 1.0/1.1 file"
        raise GpsError(msg) from None
    points_in: list[Any] = [
        p for track in gpx.tracks for segment in track.segments for p in segment.points
    ]
    points_in += [p for route in gpx.routes for p in route.points]
    latlon = [(p.latitude, p.longitude) for p in points_in]
    stamps = [p.time.timestamp() if p.time is not None else math.nan for p in points_in]
    if not latlon:
        msg = f"route GPX {path} has no track or route points; record or draw a track first"
        raise GpsError(msg)
    lat, lon = np.asarray(latlon, np.float64).T
    x, y = projection.to_xy(lat, lon)
    points = np.stack([x, y], axis=1)
    timing = _timing(points, np.asarray(stamps, np.float64))
    keep = np.concatenate([[True], np.hypot(*np.diff(points, axis=0).T) > 0.05])
    points = points[keep]
    if len(points) < 2:
        msg = f"route GPX {path} has fewer than two distinct points; it needs a path to walk"
        raise GpsError(msg)

    node_xy = np.array([[d["x_m"], d["y_m"]] for _, d in graph.nodes(data=True)], np.float64)
    low = node_xy.min(axis=0) - _ROUTE_MARGIN_M
    high = node_xy.max(axis=0) + _ROUTE_MARGIN_M
    outside = np.any((points < low) | (points > high), axis=1)
    if outside.any():
        first = int(np.argmax(outside))
        olat, olon = projection.to_latlon(points[first, 0], points[first, 1])
        msg = (
            f"route GPX {path}: {int(outside.sum())} of {len(points)} points lie outside the "
            f"OSM extract (first at lat {float(olat):.6f}, lon {float(olon):.6f}); "
            "give a track inside the extract, or an extract / --bbox that covers the track"
        )
        raise GpsError(msg)

    node_ids = list(graph.nodes)
    sequence: list[int] = []
    dense = PathSampler(points)
    for point in dense.xy_at(np.arange(0.0, dense.length_m, 1.0)):
        dist = np.hypot(*(node_xy - point).T)
        nearest = int(np.argmin(dist))
        if dist[nearest] <= _ROUTE_NODE_RADIUS_M and (
            not sequence or sequence[-1] != node_ids[nearest]
        ):
            sequence.append(int(node_ids[nearest]))
    return Route(
        name=name or path.stem,
        polyline_xy=np.ascontiguousarray(points),
        junction_sequence=tuple(sequence),
        timing=timing,
    )


def _timing(points: npt.NDArray[np.float64], stamps: npt.NDArray[np.float64]) -> RouteTiming | None:
    """The track's clock as distance along ``points`` over time, or None unless every point
    has a time and time runs forward (later duplicates of a stamp are dropped)."""
    if len(stamps) < 2 or not np.all(np.isfinite(stamps)):
        return None
    s_m = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(points, axis=0).T))])
    order_ok = np.concatenate([[True], np.diff(stamps) > 0])
    if not np.all(np.diff(stamps) >= 0) or order_ok.sum() < 2:
        return None
    t_s = stamps[order_ok] - stamps[0]
    return RouteTiming(t_s=t_s, s_m=s_m[order_ok], start_utc=float(stamps[0]))
