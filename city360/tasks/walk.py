"""The pose graph as the task code walks it: segment polylines, positions and the oracle.

This reads ``graph.json`` (the contract in docs/contracts.md) and each trajectory's
``poses.csv`` so that a pose given as (segment, offset along it) has a position in metres, and a
position can be located on the graph. :func:`oracle_walk` searches the controller's own moves on
the graph — W by the SMALL/MEDIUM/LARGE step sizes, stopping at the segment's end unless the
end node is walked through, and the offered branches at a junction — so solvability is proven
without rendering a frame. The rules (which branches an action takes, where W walks through,
the end of a segment) are the simulator's own, read from :mod:`city360.simulator.moves`, and
segment lengths and geometry come from the same frame positions scaled to ``length_m``.

Frames of the city CRS: ``x_m`` east, ``y_m`` north, metres; headings clockwise from north.
Offsets are metres along a segment in its traversal direction, in ``[0, length_m]``.
"""

from __future__ import annotations

import bisect
import heapq
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx
import numpy as np
import numpy.typing as npt

from city360.city import CityDir
from city360.errors import CityFormatError, InputFileError, TaskError, did_you_mean
from city360.geo import angle_diff_deg, bearing_deg
from city360.simulator.moves import END_EPS_M, offered, passthrough

__all__ = [
    "OracleResult",
    "Segment",
    "Transition",
    "WalkGraph",
    "oracle_walk",
    "route_points",
]

_OFFSET_QUANTUM_M = 0.01
"""Offsets are compared on a centimetre grid, so float sums of step sizes meet exactly."""


@dataclass(frozen=True, slots=True)
class Transition:
    """A choice offered on arriving at a segment's end: take ``edge``, labelled ``label``.

    ``rank`` 0 is the choice the LEFT/UP/RIGHT action takes (higher ranks cannot be taken by an
    action); ``uturn`` marks turning back along the same street (offered only at dead ends)."""

    edge: str
    label: str
    turn_deg: float
    rank: int = 0
    uturn: bool = False


@dataclass(frozen=True, slots=True)
class Segment:
    """One directed pose-graph edge with its polyline in traversal order (metres)."""

    id: str
    u: int
    v: int
    length_m: float
    xy: npt.NDArray[np.float64]
    """(K, 2) positions from the start of the segment to its end."""
    arc_m: npt.NDArray[np.float64]
    """(K,) distance along the polyline, scaled so that ``arc_m[-1] == length_m``."""
    transitions: tuple[Transition, ...]
    twin: str | None
    _arc: tuple[float, ...] = field(default=(), repr=False, compare=False)
    _x: tuple[float, ...] = field(default=(), repr=False, compare=False)
    _y: tuple[float, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        # Plain tuples make the scalar interpolation below (the oracle's inner loop) several
        # times faster than numpy on single values.
        object.__setattr__(self, "_arc", tuple(float(a) for a in self.arc_m))
        object.__setattr__(self, "_x", tuple(float(v) for v in self.xy[:, 0]))
        object.__setattr__(self, "_y", tuple(float(v) for v in self.xy[:, 1]))

    @property
    def choices(self) -> tuple[Transition, ...]:
        """Transitions an action can take: per label the lowest rank (the simulator's rule,
        :func:`city360.simulator.moves.offered`)."""
        return offered(self.transitions)

    @property
    def is_intersection(self) -> bool:
        """True when arriving at this segment's end offers a real choice: more than one way on,
        not counting a U-turn."""
        return sum(not t.uturn for t in self.choices) > 1

    def position(self, offset_m: float) -> tuple[float, float]:
        """(x_m, y_m) at ``offset_m`` along the segment (clamped to its ends)."""
        arc, xs, ys = self._arc, self._x, self._y
        offset = min(max(offset_m, 0.0), self.length_m)
        k = bisect.bisect_right(arc, offset)
        if k <= 0:
            return xs[0], ys[0]
        if k >= len(arc):
            return xs[-1], ys[-1]
        span = arc[k] - arc[k - 1]
        t = (offset - arc[k - 1]) / span if span > 0 else 0.0
        return xs[k - 1] + t * (xs[k] - xs[k - 1]), ys[k - 1] + t * (ys[k] - ys[k - 1])

    def heading(self, offset_m: float, *, probe_m: float = 3.0) -> float:
        """Travel heading (degrees clockwise from north) at ``offset_m``."""
        lo = max(0.0, min(offset_m - probe_m / 2, self.length_m - probe_m))
        hi = min(self.length_m, lo + probe_m)
        x0, y0 = self.position(lo)
        x1, y1 = self.position(hi)
        return bearing_deg(x1 - x0, y1 - y0)

    def project(self, x_m: float, y_m: float) -> tuple[float, float]:
        """(offset_m, distance_m) of the polyline point nearest to (x_m, y_m)."""
        a = self.xy[:-1]
        d = self.xy[1:] - a
        seg_len2 = np.maximum((d**2).sum(axis=1), 1e-12)
        t = np.clip(((np.array([x_m, y_m]) - a) * d).sum(axis=1) / seg_len2, 0.0, 1.0)
        nearest = a + d * t[:, None]
        dist = np.hypot(nearest[:, 0] - x_m, nearest[:, 1] - y_m)
        k = int(np.argmin(dist))
        offset = self.arc_m[k] + t[k] * (self.arc_m[k + 1] - self.arc_m[k])
        return float(offset), float(dist[k])


def _polyline(xy: npt.NDArray[np.float64], length_m: float) -> npt.NDArray[np.float64]:
    steps = np.hypot(*np.diff(xy, axis=0).T)
    arc = np.concatenate([[0.0], np.cumsum(steps)])
    if arc[-1] <= 0:
        return np.linspace(0.0, length_m, len(xy))
    return arc * (length_m / arc[-1])


class WalkGraph:
    """Nodes and segments of a pose graph with geometry; built by :meth:`from_city` or
    :meth:`from_networkx` (a ``MultiDiGraph`` with the contract's attributes)."""

    def __init__(
        self,
        nodes: dict[int, tuple[float, float]],
        segments: dict[str, Segment],
        *,
        city_dir: Path | None = None,
        node_kinds: dict[int, str] | None = None,
    ) -> None:
        self.nodes = nodes
        self.segments = segments
        self.node_kinds = dict(node_kinds or {})
        """Node id -> ``kind`` (junction, dead_end, link); a node not listed is a junction."""
        self.city_dir = city_dir
        """The city folder the graph was read from (None for a hand-made graph)."""
        self._state_xy: dict[tuple[str, int], tuple[float, float]] = {}
        self._out: dict[int, list[str]] = {}
        for seg in segments.values():
            self._out.setdefault(seg.u, []).append(seg.id)
        self._onward: dict[str, str | None] = {}
        for seg in segments.values():
            kind = self.node_kinds.get(seg.v, "junction")
            tr = passthrough(kind, seg.choices)
            self._onward[seg.id] = tr.edge if tr is not None and tr.edge in segments else None

    def __repr__(self) -> str:
        return f"WalkGraph(nodes={len(self.nodes)}, segments={len(self.segments)})"

    # construction ------------------------------------------------------------------------
    @classmethod
    def from_city(cls, city_dir: str | Path) -> WalkGraph:
        """Read ``graph.json`` and the trajectories' poses of a built city."""
        city = CityDir(city_dir)
        path = city.graph_path
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            msg = f"{path} not found; build the pose graph first with `city360 build {city.root}`"
            raise InputFileError(msg) from None
        except json.JSONDecodeError as exc:
            msg = f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})"
            raise CityFormatError(msg) from None
        try:
            graph = nx.node_link_graph(data, directed=True, multigraph=True, edges="edges")
        except (KeyError, TypeError, nx.NetworkXError) as exc:
            msg = f"{path}: not networkx node-link data ({exc!r})"
            raise CityFormatError(msg) from None
        poses: dict[str, npt.NDArray[np.float64]] = {}

        def frames_xy(trajectory: str) -> npt.NDArray[np.float64]:
            if trajectory not in poses:
                table = city.read_poses(trajectory)
                poses[trajectory] = np.column_stack([table.x_m, table.y_m])
            return poses[trajectory]

        polylines: dict[str, npt.NDArray[np.float64]] = {}
        for _, _, key, attrs in graph.edges(keys=True, data=True):
            xy = frames_xy(str(attrs["trajectory"]))
            first, last = int(attrs["first_frame"]), int(attrs["last_frame"])
            if not 0 <= first < last < len(xy):
                msg = (
                    f"{path}: segment {key!r}: frames {first}..{last} outside trajectory "
                    f"{attrs['trajectory']!r} ({len(xy)} frames)"
                )
                raise CityFormatError(msg)
            part = xy[first : last + 1]
            polylines[str(key)] = part[::-1] if attrs.get("reverse") else part
        walk = cls.from_networkx(graph, polylines=polylines)
        walk.city_dir = city.root
        return walk

    @classmethod
    def from_networkx(
        cls,
        graph: nx.MultiDiGraph,
        *,
        polylines: dict[str, npt.NDArray[np.float64]] | None = None,
    ) -> WalkGraph:
        """From a contract ``MultiDiGraph``; segments without a polyline run straight between
        their nodes."""
        nodes = {
            int(n): (float(attrs["x_m"]), float(attrs["y_m"]))
            for n, attrs in graph.nodes(data=True)
        }
        kinds = {int(n): str(attrs.get("kind", "junction")) for n, attrs in graph.nodes(data=True)}
        segments: dict[str, Segment] = {}
        for u, v, key, attrs in graph.edges(keys=True, data=True):
            seg_id = str(attrs.get("id", key))
            xy = (polylines or {}).get(seg_id)
            if xy is None:
                xy = np.array([nodes[int(u)], nodes[int(v)]], dtype=np.float64)
            length = float(attrs["length_m"])
            segments[seg_id] = Segment(
                id=seg_id,
                u=int(u),
                v=int(v),
                length_m=length,
                xy=np.asarray(xy, np.float64),
                arc_m=_polyline(np.asarray(xy, np.float64), length),
                transitions=tuple(
                    Transition(
                        str(t["edge"]),
                        str(t["label"]),
                        float(t["turn_deg"]),
                        int(t.get("rank", 0)),
                        bool(t.get("uturn", False)),
                    )
                    for t in attrs.get("transitions", [])
                ),
                twin=attrs.get("twin"),
            )
        return cls(nodes, segments, node_kinds=kinds)

    # queries -----------------------------------------------------------------------------
    def segment(self, segment_id: str) -> Segment:
        try:
            return self.segments[segment_id]
        except KeyError:
            msg = f"segment {segment_id!r} is not in the pose graph."
            msg += did_you_mean(segment_id, list(self.segments))
            raise TaskError(msg) from None

    def out_segments(self, node: int) -> list[str]:
        return list(self._out.get(node, []))

    def position(self, segment_id: str, offset_m: float) -> tuple[float, float]:
        return self.segment(segment_id).position(offset_m)

    def onward(self, segment_id: str) -> str | None:
        """The segment W walks onto without stopping at the end of ``segment_id`` (its end
        node is not a junction and offers one way on that is not a U-turn), else None."""
        return self._onward.get(segment_id)

    def forward(
        self,
        segment_id: str,
        offset_m: float,
        distance_m: float,
        *,
        end_eps_m: float = END_EPS_M,
        visited: list[str] | None = None,
    ) -> tuple[str, float, float]:
        """Where W of ``distance_m`` metres from (``segment_id``, ``offset_m``) ends, as the
        simulator's controller walks: (segment, offset_m, metres walked). It stops at the
        segment's end unless :meth:`onward` walks through; an offset within ``end_eps_m`` of
        the length is the end. Segments walked onto are appended to ``visited`` when given."""
        seg = self.segment(segment_id)
        offset = offset_m
        remaining = distance_m
        walked = 0.0
        for _ in range(len(self.segments) + 1):  # pass-through chains are finite
            if offset >= seg.length_m - end_eps_m:
                onward = self._onward.get(seg.id)
                if onward is None or remaining <= END_EPS_M:
                    break
                seg, offset = self.segments[onward], 0.0
                if visited is not None:
                    visited.append(seg.id)
            new = min(offset + remaining, seg.length_m)
            walked += new - offset
            remaining -= new - offset
            offset = new
            if remaining <= END_EPS_M:
                break
        return seg.id, offset, walked

    def state_position(self, state: tuple[str, int]) -> tuple[float, float]:
        """Position of an oracle state (segment, offset in centimetres), memoised: searches
        from many starts revisit the same states."""
        xy = self._state_xy.get(state)
        if xy is None:
            xy = self.segments[state[0]].position(state[1] * _OFFSET_QUANTUM_M)
            self._state_xy[state] = xy
        return xy

    def locate(
        self,
        x_m: float,
        y_m: float,
        *,
        heading_deg: float | None = None,
        max_heading_diff_deg: float = 60.0,
    ) -> tuple[str, float, float]:
        """Nearest (segment, offset_m, distance_m) to a point, among segments whose travel
        heading there is within ``max_heading_diff_deg`` of ``heading_deg`` when given."""
        best: tuple[float, str, float] | None = None
        for seg in self.segments.values():
            offset, dist = seg.project(x_m, y_m)
            if best is not None and dist >= best[0]:
                continue
            if heading_deg is not None:
                diff = abs(angle_diff_deg(seg.heading(offset), heading_deg))
                if diff > max_heading_diff_deg:
                    continue
            best = (dist, seg.id, offset)
        if best is None:
            msg = f"no segment runs near ({x_m:.1f}, {y_m:.1f}) at heading {heading_deg}"
            raise TaskError(msg)
        return best[1], best[2], best[0]

    def shortest_route(self, start: str, goal: str) -> list[str]:
        """Segments from ``start`` to ``goal`` (both included) following transitions, by length."""
        dist = {start: 0.0}
        prev: dict[str, str] = {}
        heap = [(0.0, start)]
        while heap:
            d, seg_id = heapq.heappop(heap)
            if seg_id == goal:
                route = [goal]
                while route[-1] != start:
                    route.append(prev[route[-1]])
                return route[::-1]
            if d > dist[seg_id]:
                continue
            for tr in self.segments[seg_id].choices:
                nd = d + self.segments[seg_id].length_m
                if tr.edge in self.segments and nd < dist.get(tr.edge, math.inf):
                    dist[tr.edge] = nd
                    prev[tr.edge] = seg_id
                    heapq.heappush(heap, (nd, tr.edge))
        msg = f"no route from segment {start!r} to segment {goal!r}"
        raise TaskError(msg)


@dataclass(frozen=True, slots=True)
class OracleResult:
    """The oracle's verdict: ``steps`` counts moves plus the final ANSWER (None if the goal
    is not reachable), ``final`` the (segment, offset_m) where it answers, ``distance_m`` from
    there to the goal, ``actions`` the moves as ``("W", "LARGE")`` / ``("LEFT", None)``."""

    reachable: bool
    steps: int | None
    final: tuple[str, float] | None
    distance_m: float
    actions: tuple[tuple[str, str | None], ...]
    path_m: float
    segments: tuple[str, ...] = ()
    """Segments the walk passes through, in order (start segment first)."""


def oracle_walk(
    graph: WalkGraph,
    start: tuple[str, float],
    goal_xy: tuple[float, float],
    threshold_m: float,
    *,
    step_limit: int,
    move_m: Sequence[float] = (2.0, 5.0, 10.0),
    max_states: int = 2_000_000,
) -> OracleResult:
    """Fewest controller steps from ``start`` to a pose within ``threshold_m`` of ``goal_xy``.

    Breadth-first over (segment, offset) states with the controller's rules: W moves
    ``move_m[k]`` metres forward and stops at the segment's end, except where the end node is
    walked through (:meth:`WalkGraph.forward`); at the end every offered transition
    (LEFT/UP/RIGHT) enters its segment at offset 0. The final ANSWER is one more step, so a
    goal counts as reachable when ``moves + 1 <= step_limit``.
    """
    names = ("SMALL", "MEDIUM", "LARGE")
    gx, gy = goal_xy
    q = _OFFSET_QUANTUM_M

    def state_of(seg_id: str, offset: float) -> tuple[str, int]:
        return seg_id, round(offset / q)

    first = state_of(start[0], start[1])
    parent: dict[tuple[str, int], tuple[tuple[str, int], tuple[str, str | None], float] | None]
    parent = {first: None}
    frontier = [first]
    depth = 0
    best_dist = math.inf
    found: tuple[str, int] | None = None
    longest_move = max(move_m)
    while frontier and depth + 1 <= step_limit:
        # States that cannot close the gap in the moves left (even walking straight at the
        # goal with LARGE steps) are dropped: this keeps unreachable searches short.
        moves_left = step_limit - 1 - depth
        alive: list[tuple[str, int]] = []
        for state in frontier:
            x, y = graph.state_position(state)
            dist = math.hypot(x - gx, y - gy)
            best_dist = min(best_dist, dist)
            if dist <= threshold_m:
                found = state
                break
            if dist - threshold_m <= moves_left * longest_move:
                alive.append(state)
        if found is not None or len(parent) > max_states:
            break
        next_frontier: list[tuple[str, int]] = []
        for state in alive:
            seg = graph.segments[state[0]]
            offset = state[1] * q
            moves: list[tuple[tuple[str, int], tuple[str, str | None], float]] = []
            at_end = offset >= seg.length_m - q / 2
            if not at_end or graph.onward(seg.id) is not None:
                for name, step in zip(names, move_m, strict=True):
                    to_seg, to_offset, walked = graph.forward(seg.id, offset, step, end_eps_m=q / 2)
                    moves.append((state_of(to_seg, to_offset), ("W", name), walked))
            if at_end:
                for tr in seg.choices:
                    if tr.edge in graph.segments:
                        moves.append((state_of(tr.edge, 0.0), (tr.label, None), 0.0))
            for new_state, action, walked in moves:
                if new_state not in parent:
                    parent[new_state] = (state, action, walked)
                    next_frontier.append(new_state)
        frontier = next_frontier
        depth += 1
    if found is None:
        return OracleResult(False, None, None, best_dist, (), 0.0)
    actions: list[tuple[str, str | None]] = []
    walked_m = 0.0
    cursor = found
    while (link := parent[cursor]) is not None:
        cursor, action, walked = link
        actions.append(action)
        walked_m += walked
    actions.reverse()
    # replay the moves to list every segment passed, including ones W walks through whole
    segments = [first[0]]
    seg_id, offset = first[0], first[1] * q
    for action in actions:
        if action[0] == "W":
            step = move_m[names.index(str(action[1]))]
            seg_id, offset, _ = graph.forward(
                seg_id, offset, step, end_eps_m=q / 2, visited=segments
            )
            offset = round(offset / q) * q
        else:
            seg_id = next(t.edge for t in graph.segments[seg_id].choices if t.label == action[0])
            offset = 0.0
            segments.append(seg_id)
    x, y = graph.segments[found[0]].position(found[1] * q)
    return OracleResult(
        True,
        len(actions) + 1,
        (found[0], found[1] * q),
        math.hypot(x - gx, y - gy),
        tuple(actions),
        walked_m,
        tuple(segments),
    )


def route_points(graph: WalkGraph, route: Iterable[str]) -> list[tuple[float, float]]:
    """Polyline points of consecutive segments (for maps and directions)."""
    points: list[tuple[float, float]] = []
    for seg_id in route:
        points.extend((float(x), float(y)) for x, y in graph.segment(seg_id).xy)
    return points
