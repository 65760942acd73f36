"""The street graph: the one object everybody walks (simulator, oracle, tasks, maps, viewer).

:class:`StreetGraph` holds the nodes and the directed segments of a built city's pose graph,
each segment with its frames, positions and headings in traversal order (see
:class:`~city360.streets.segment.Segment`). :meth:`StreetGraph.open` builds it from a city
directory (``graph.json`` through :func:`~city360.streets.schema.read_graph_file`, each
trajectory's ``poses.csv`` read once) and caches it per city, so the simulator, the oracle and
the street distances of one eval worker share one parse; :meth:`StreetGraph.from_networkx`
builds one from a ``MultiDiGraph`` made by hand (segments without frames run straight between
their nodes).

Frames of the city CRS: ``x_m`` east, ``y_m`` north, metres; headings clockwise from north.
Offsets are metres along a segment in its traversal direction, in ``[0, length_m]``.
"""

from __future__ import annotations

import heapq
import math
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import numpy.typing as npt

from city360.city import CityDir, TrajectoryMeta
from city360.errors import CityFormatError, TaskError, UnknownSegmentError, did_you_mean
from city360.geo import angle_diff_deg, bearing_deg
from city360.streets.moves import END_EPS_M, passthrough
from city360.streets.schema import EdgeModel, GraphFile, parse_graph, read_graph_file
from city360.streets.segment import Segment, scaled_offsets, twin_offset_m
from city360.streets.values import Node

__all__ = ["OFFSET_QUANTUM_M", "StreetGraph", "clear_cache"]

OFFSET_QUANTUM_M = 0.01
"""Oracle states keep offsets on a centimetre grid, so float sums of step sizes meet exactly."""
_CACHE_SIZE = 8
"""Street graphs kept per process (one per city directory in practice)."""

_cache: OrderedDict[Path, tuple[tuple[int, ...], StreetGraph]] = OrderedDict()
_cache_lock = threading.Lock()


def clear_cache() -> None:
    """Forget every cached :class:`StreetGraph` (tests; after editing poses by hand)."""
    with _cache_lock:
        _cache.clear()


class StreetGraph:
    """Nodes and segments of a pose graph with geometry; treat it as read-only.

    ``nodes`` maps node id to :class:`Node`, ``node_xy`` to its (x_m, y_m); ``segments`` maps
    segment id to :class:`Segment`; ``trajectories`` holds the ``trajectory.json`` of every
    trajectory a segment plays (empty for a hand-made graph); ``city_dir`` is the city folder
    read (None for a hand-made graph).
    """

    def __init__(
        self,
        nodes: Mapping[int, Node],
        segments: Mapping[str, Segment],
        *,
        source: str = "<memory>",
        city_dir: Path | None = None,
        trajectories: Mapping[str, TrajectoryMeta] | None = None,
        crs: str = "",
    ) -> None:
        self.nodes: dict[int, Node] = dict(nodes)
        self.node_xy: dict[int, tuple[float, float]] = {
            n: (node.x_m, node.y_m) for n, node in self.nodes.items()
        }
        self.segments: dict[str, Segment] = dict(segments)
        self.source = source
        self.city_dir = city_dir
        self.trajectories: dict[str, TrajectoryMeta] = dict(trajectories or {})
        self.crs = crs
        self._state_xy: dict[tuple[str, int], tuple[float, float]] = {}
        self._out: dict[int, list[str]] = {}
        for seg in self.segments.values():
            self._out.setdefault(seg.u, []).append(seg.id)
        self._onward: dict[str, str | None] = {}
        for seg in self.segments.values():
            tr = passthrough(self.nodes[seg.v].kind, seg.choices)
            self._onward[seg.id] = None if tr is None else tr.edge

    def __repr__(self) -> str:
        return (
            f"StreetGraph({self.source!r}, nodes={len(self.nodes)}, segments={len(self.segments)})"
        )

    # construction ------------------------------------------------------------------------
    @classmethod
    def open(cls, city_dir: str | Path | CityDir) -> StreetGraph:
        """The street graph of a built city, parsed once per process and reused until
        ``graph.json`` changes (keyed by its path, inode, size and times)."""
        city = city_dir if isinstance(city_dir, CityDir) else CityDir(city_dir)
        path = city.graph_path.resolve()
        try:
            st = path.stat()
        except FileNotFoundError:
            return cls.from_city(city)  # raises the "build the pose graph first" error
        key = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        with _cache_lock:
            hit = _cache.get(path)
            if hit is not None and hit[0] == key:
                _cache.move_to_end(path)
                return hit[1]
        graph = cls.from_city(city)
        with _cache_lock:
            _cache[path] = (key, graph)
            _cache.move_to_end(path)
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
        return graph

    @classmethod
    def from_city(cls, city_dir: str | Path | CityDir) -> StreetGraph:
        """Read ``graph.json`` and the poses of the trajectories it plays (not cached; see
        :meth:`open`)."""
        city = city_dir if isinstance(city_dir, CityDir) else CityDir(city_dir)
        path = city.graph_path
        parsed = read_graph_file(path, city_root=city.root)
        source = str(path)
        trajectories: dict[str, TrajectoryMeta] = {}
        tracks: dict[str, tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]] = {}
        segments: dict[str, Segment] = {}
        for i, edge in enumerate(parsed.edges):
            where = f"{source}: edge {edge.segment_id!r}"
            for name in ("trajectory", "first_frame", "last_frame"):
                if getattr(edge, name) is None:
                    msg = f"{where}: field 'edges.{i}.{name}' is missing; rebuild the graph"
                    raise CityFormatError(msg)
            trajectory = str(edge.trajectory)
            if trajectory not in tracks:
                meta = city.read_trajectory_meta(trajectory)
                poses = city.read_poses(trajectory)
                if len(poses) != meta.frame_count:
                    msg = (
                        f"{city.poses_path(trajectory)}: {len(poses)} poses for "
                        f"{meta.frame_count} frames; re-run `city360 ingest`"
                    )
                    raise CityFormatError(msg)
                trajectories[trajectory] = meta
                xy = np.column_stack([poses.x_m, poses.y_m]).astype(np.float64)
                tracks[trajectory] = (xy, np.asarray(poses.heading_deg, np.float64))
            xy, heading = tracks[trajectory]
            first, last = int(edge.first_frame or 0), int(edge.last_frame or 0)
            if last >= len(xy):
                msg = (
                    f"{where}: last_frame {last} but trajectory {trajectory!r} has {len(xy)} "
                    "frames; rebuild the graph"
                )
                raise CityFormatError(msg)
            frames = np.arange(first, last + 1, dtype=np.int64)
            if edge.reverse:
                frames = frames[::-1].copy()
            filmed = heading[frames]
            travel = np.mod(filmed + (180.0 if edge.reverse else 0.0), 360.0)
            camera = np.mod(filmed + trajectories[trajectory].camera_yaw_offset_deg, 360.0)
            segments[edge.segment_id] = _segment(edge, frames, xy[frames], travel, camera)
        return cls._finish(
            parsed, segments, source=source, city_dir=city.root, trajectories=trajectories
        )

    @classmethod
    def from_networkx(
        cls,
        graph: nx.MultiDiGraph,
        *,
        polylines: Mapping[str, npt.NDArray[np.float64]] | None = None,
        source: str = "<memory>",
    ) -> StreetGraph:
        """From a ``MultiDiGraph`` with the contract's attributes (validated by the same
        schema as ``graph.json``; ``schema_version`` may be left out). Segments without a
        polyline in ``polylines`` (K, 2 metres, traversal order) run straight between their
        nodes; their frames are -1 and their headings the polyline's."""
        data: dict[str, Any] = nx.node_link_data(graph, edges="edges")
        parsed = parse_graph(data, source=source, require_version=False)
        xy_of = {node.id: (node.x_m, node.y_m) for node in parsed.nodes}
        segments: dict[str, Segment] = {}
        for edge in parsed.edges:
            given = (polylines or {}).get(edge.segment_id)
            if given is None:
                xy = np.array([xy_of[edge.source], xy_of[edge.target]], dtype=np.float64)
            else:
                xy = np.asarray(given, dtype=np.float64).reshape(-1, 2)
            steps = np.diff(xy, axis=0)
            bearings = [bearing_deg(float(dx), float(dy)) for dx, dy in steps]
            travel = np.array([*bearings, bearings[-1]], dtype=np.float64)
            frames = np.full(len(xy), -1, dtype=np.int64)
            segments[edge.segment_id] = _segment(edge, frames, xy, travel, travel.copy())
        return cls._finish(parsed, segments, source=source, city_dir=None, trajectories=None)

    @classmethod
    def _finish(
        cls,
        parsed: GraphFile,
        segments: dict[str, Segment],
        *,
        source: str,
        city_dir: Path | None,
        trajectories: dict[str, TrajectoryMeta] | None,
    ) -> StreetGraph:
        if not segments:
            msg = f"{source} has no segments; there is nothing to walk"
            raise CityFormatError(msg)
        nodes = {node.id: node.value() for node in parsed.nodes}
        return cls(
            nodes,
            segments,
            source=source,
            city_dir=city_dir,
            trajectories=trajectories,
            crs=parsed.graph.crs,
        )

    # queries -----------------------------------------------------------------------------
    def segment(self, segment_id: str) -> Segment:
        """The segment with this id; an unknown id raises :class:`UnknownSegmentError` (a
        ``ConfigError`` and a ``TaskError``) with a close match."""
        try:
            return self.segments[segment_id]
        except KeyError:
            msg = f"segment {segment_id!r} is not in the pose graph."
            msg += did_you_mean(str(segment_id), list(self.segments))
            raise UnknownSegmentError(msg) from None

    def iter_segments(self) -> Iterator[Segment]:
        return iter(self.segments.values())

    def out_segments(self, node: int) -> list[str]:
        """Ids of the segments leaving ``node``."""
        return list(self._out.get(node, []))

    def position(self, segment_id: str, offset_m: float) -> tuple[float, float]:
        """(x_m, y_m) at ``offset_m`` along a segment."""
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

    def turned_round(self, segment_id: str, offset_m: float) -> tuple[str, float] | None:
        """(twin segment, offset_m) where W walks on after turning round at (``segment_id``,
        ``offset_m``), as the controller maps it (:func:`twin_offset_m`); None without a
        twin."""
        seg = self.segment(segment_id)
        if seg.twin is None or seg.twin not in self.segments:
            return None
        twin = self.segments[seg.twin]
        return twin.id, twin_offset_m(seg, twin, offset_m)

    def state_position(self, state: tuple[str, int]) -> tuple[float, float]:
        """Position of an oracle state (segment, offset in :data:`OFFSET_QUANTUM_M` units),
        memoised: searches from many starts revisit the same states."""
        xy = self._state_xy.get(state)
        if xy is None:
            xy = self.segments[state[0]].position(state[1] * OFFSET_QUANTUM_M)
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
        """Nearest (segment, offset_m, distance_m) on the polylines to a point, among segments
        whose travel heading there is within ``max_heading_diff_deg`` of ``heading_deg``."""
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

    def nearest_frame(
        self, x_m: float, y_m: float, heading_deg: float | None = None
    ) -> tuple[Segment, float]:
        """The segment and offset of the frame nearest to (x_m, y_m); with a heading, among
        frames whose travel heading is within 90 degrees of it when there are any."""
        best: tuple[float, Segment, float] | None = None
        for aligned_only in (True, False) if heading_deg is not None else (False,):
            for seg in self.segments.values():
                dist = np.hypot(seg.x_m - x_m, seg.y_m - y_m)
                if aligned_only and heading_deg is not None:
                    off = np.abs((seg.travel_deg - heading_deg + 180.0) % 360.0 - 180.0)
                    dist = np.where(off < 90.0, dist, np.inf)
                k = int(np.argmin(dist))
                if np.isfinite(dist[k]) and (best is None or dist[k] < best[0]):
                    best = (float(dist[k]), seg, float(seg.cum_m[k]))
            if best is not None:
                break
        if best is None:  # pragma: no cover - a street graph always has segments
            msg = "the city has no frames to start from"
            raise CityFormatError(msg)
        return best[1], best[2]

    def shortest_route(self, start: str, goal: str) -> list[str]:
        """Segments from ``start`` to ``goal`` (both included) following the offered
        transitions, shortest in metres."""
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
                if nd < dist.get(tr.edge, math.inf):
                    dist[tr.edge] = nd
                    prev[tr.edge] = seg_id
                    heapq.heappush(heap, (nd, tr.edge))
        msg = f"no route from segment {start!r} to segment {goal!r}"
        raise TaskError(msg)


def _segment(
    edge: EdgeModel,
    frames: npt.NDArray[np.int64],
    xy: npt.NDArray[np.float64],
    travel_deg: npt.NDArray[np.float64],
    camera_deg: npt.NDArray[np.float64],
) -> Segment:
    """A :class:`Segment` of ``edge`` with offsets scaled to its ``length_m`` (the polyline's
    own length when the file gives none)."""
    steps = np.hypot(*np.diff(xy, axis=0).T)
    length = float(edge.length_m) if edge.length_m is not None else float(steps.sum())
    if length <= 0:
        msg = f"edge {edge.segment_id!r}: length_m must be > 0, got {length}"
        raise CityFormatError(msg)
    return Segment(
        id=edge.segment_id,
        u=edge.source,
        v=edge.target,
        trajectory=edge.trajectory or "",
        first_frame=edge.first_frame,
        last_frame=edge.last_frame,
        reverse=edge.reverse,
        length_m=length,
        twin=edge.twin,
        transitions=tuple(t.value() for t in edge.transitions),
        frames=frames,
        cum_m=scaled_offsets(xy, length),
        xy=np.ascontiguousarray(xy, dtype=np.float64),
        travel_deg=np.asarray(travel_deg, np.float64),
        camera_deg=np.asarray(camera_deg, np.float64),
    )
