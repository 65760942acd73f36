"""The walkable world of one built city: graph.json, trajectories and their frame stores.

The pose graph is read as docs/contracts.md defines it (``pose_graph -> graph.json``), tolerant
of extra fields, into small frozen values: :class:`Node`, :class:`Segment` with its
:class:`Transition` choices. (``pose_graph.load_graph`` is stricter than the contract: it also
requires fields only the builder writes, so hand-made and other contract-conforming cities would
not load through it.) Each segment also carries, in traversal order, the trajectory frames it
plays, their distance along it, their positions and the travel heading at each (a ``reverse``
segment plays frames backwards, so its travel heading is the filmed heading + 180 degrees).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from city360.city import CityDir, CityManifest, TrajectoryMeta, TrajectoryPoses
from city360.errors import CityFormatError, ClosedResourceError, ConfigError, InputFileError
from city360.geo import LocalProjection
from city360.simulator.moves import offered

__all__ = [
    "FrameSource",
    "Node",
    "Segment",
    "Transition",
    "World",
]

logger = logging.getLogger(__name__)


class FrameSource(Protocol):
    """What the simulator needs from a frame store (``city360.video_store.FrameStore``)."""

    @property
    def width(self) -> int: ...
    @property
    def height(self) -> int: ...
    def __len__(self) -> int: ...
    def get_yuv(
        self, index: int
    ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8], npt.NDArray[np.uint8]]: ...
    def prefetch(self, indices: Any) -> Any: ...
    def close(self) -> None: ...


FrameSourceFactory = Callable[[Path, int], FrameSource]
"""``(frames_mp4_path, cache_bytes) -> FrameSource``."""


def default_frame_source(path: Path, cache_bytes: int, *, threads: int = 2) -> FrameSource:
    """A :class:`~city360.video_store.FrameStore` decoding with ``threads`` slice threads."""
    from city360.video_store import FrameStore

    store: FrameSource = FrameStore(path, cache_bytes=cache_bytes, threads=threads)
    return store


@dataclass(frozen=True, slots=True)
class Node:
    """A junction or dead end; metres in the city CRS and WGS84 degrees."""

    id: int
    kind: str
    x_m: float
    y_m: float
    lat: float
    lon: float


@dataclass(frozen=True, slots=True)
class Transition:
    """A choice offered on arriving at a segment's end: the next segment and its turn.

    ``turn_deg`` is signed, + to the right; ``label`` is LEFT, UP or RIGHT; ``rank`` 0 is the
    choice the label's action takes (pose_graph keeps extra choices at ranks 1, 2, ...);
    ``uturn`` marks turning back along the same street (offered where nothing else is).
    """

    edge: str
    turn_deg: float
    label: str
    rank: int = 0
    uturn: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class Segment:
    """A directed segment (graph edge) with its frames in traversal order.

    ``frames[k]`` is the trajectory frame shown ``cum_m[k]`` metres after the segment's start;
    ``x_m``/``y_m`` its position; ``travel_deg`` the travel heading there; ``camera_deg`` the
    bearing of the frame's centre column (filmed heading + the camera's yaw offset), which is
    what the renderer subtracts from an absolute view bearing.
    """

    id: str
    trajectory: str
    u: int
    v: int
    first_frame: int
    last_frame: int
    reverse: bool
    length_m: float
    twin: str | None
    transitions: tuple[Transition, ...]
    frames: npt.NDArray[np.int64]
    cum_m: npt.NDArray[np.float64]
    x_m: npt.NDArray[np.float64]
    y_m: npt.NDArray[np.float64]
    travel_deg: npt.NDArray[np.float64]
    camera_deg: npt.NDArray[np.float64]

    @property
    def walk_m(self) -> float:
        """Walkable length: offsets run from 0 to this (= ``length_m``)."""
        return float(self.cum_m[-1])

    def index_at(self, offset_m: float) -> int:
        """Position in :attr:`frames` of the frame nearest ``offset_m`` (clamped to the ends)."""
        k = int(np.searchsorted(self.cum_m, offset_m))
        if k <= 0:
            return 0
        if k >= len(self.cum_m):
            return len(self.cum_m) - 1
        return k if self.cum_m[k] - offset_m < offset_m - self.cum_m[k - 1] else k - 1

    def branch(self, label: str) -> Transition | None:
        """The offered transition with ``label`` (LEFT/UP/RIGHT), or None."""
        for transition in self.transitions:
            if transition.label == label:
                return transition
        return None


def _num(raw: Mapping[str, Any], key: str, where: str) -> float:
    try:
        value = float(raw[key])
    except KeyError:
        msg = f"{where}: field {key!r} is missing"
        raise CityFormatError(msg) from None
    except (TypeError, ValueError):
        msg = f"{where}: field {key!r} must be a number, got {raw[key]!r}"
        raise CityFormatError(msg) from None
    if not math.isfinite(value):
        msg = f"{where}: field {key!r} must be finite, got {value}"
        raise CityFormatError(msg)
    return value


def _unique_labels(transitions: list[Transition], where: str) -> tuple[Transition, ...]:
    """One transition per label, the one its action takes (:func:`moves.offered`: the lowest
    ``rank``, then the one closest to the label's canonical turn). The others are not
    reachable by LEFT/UP/RIGHT, so they are not offered."""
    try:
        return offered(transitions)
    except ValueError as exc:
        msg = f"{where}: {exc}"
        raise CityFormatError(msg) from None


class World:
    """A built city opened for walking. Owns the frame stores; a context manager.

    ``frame_source`` opens one trajectory's ``frames.mp4``; it defaults to
    ``city360.video_store.FrameStore``.
    """

    def __init__(
        self,
        city_dir: str | Path,
        *,
        cache_bytes: int = 256 * 1024 * 1024,
        frame_source: FrameSourceFactory | None = None,
    ) -> None:
        self.city = CityDir(city_dir)
        self.manifest: CityManifest = self.city.read_manifest()
        self.projection: LocalProjection = self.manifest.projection
        self._open_frames = frame_source or default_frame_source
        self._cache_bytes = int(cache_bytes)
        self.nodes: dict[int, Node] = {}
        self.segments: dict[str, Segment] = {}
        self.trajectories: dict[str, TrajectoryMeta] = {}
        self._poses: dict[str, TrajectoryPoses] = {}
        self._stores: dict[str, FrameSource] = {}
        self._closed = False
        self._load_graph()

    def __repr__(self) -> str:
        return f"World({str(self.city.root)!r}, segments={len(self.segments)})"

    def __enter__(self) -> World:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close every open frame store; safe to call twice."""
        for store in self._stores.values():
            store.close()
        self._stores.clear()
        self._closed = True

    # loading ------------------------------------------------------------------------------
    def _load_graph(self) -> None:
        path = self.city.graph_path
        if not path.is_file():
            msg = f"{path} not found; build the pose graph first: `city360 build {self.city.root}`"
            raise InputFileError(msg)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            msg = f"{path}: not valid JSON (line {exc.lineno}: {exc.msg}); rebuild the graph"
            raise CityFormatError(msg) from None
        if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
            msg = f"{path}: not networkx node-link data (no 'nodes' list); rebuild the graph"
            raise CityFormatError(msg)
        edges = data.get("edges", data.get("links"))
        if not isinstance(edges, list):
            msg = f"{path}: not networkx node-link data (no 'edges' list); rebuild the graph"
            raise CityFormatError(msg)
        for raw in data["nodes"]:
            where = f"{path}: node {raw.get('id')!r}"
            node = Node(
                id=int(raw["id"]),
                kind=str(raw.get("kind", "junction")),
                x_m=_num(raw, "x_m", where),
                y_m=_num(raw, "y_m", where),
                lat=_num(raw, "lat", where),
                lon=_num(raw, "lon", where),
            )
            self.nodes[node.id] = node
        raw_edges = {}
        for raw in edges:
            edge_id = str(raw.get("id", raw.get("key")))
            if edge_id in raw_edges:
                msg = f"{path}: edge id {edge_id!r} appears twice"
                raise CityFormatError(msg)
            raw_edges[edge_id] = raw
        for edge_id, raw in raw_edges.items():
            self.segments[edge_id] = self._segment(path, edge_id, raw, raw_edges)
        if not self.segments:
            msg = f"{path} has no segments; there is nothing to walk"
            raise CityFormatError(msg)

    def _trajectory(self, trajectory_id: str) -> tuple[TrajectoryMeta, TrajectoryPoses]:
        if trajectory_id not in self.trajectories:
            meta = self.city.read_trajectory_meta(trajectory_id)
            poses = self.city.read_poses(trajectory_id)
            if len(poses) != meta.frame_count:
                msg = (
                    f"{self.city.poses_path(trajectory_id)}: {len(poses)} poses for "
                    f"{meta.frame_count} frames; re-run `city360 ingest`"
                )
                raise CityFormatError(msg)
            self.trajectories[trajectory_id] = meta
            self._poses[trajectory_id] = poses
        return self.trajectories[trajectory_id], self._poses[trajectory_id]

    def _segment(
        self, path: Path, edge_id: str, raw: Mapping[str, Any], raw_edges: Mapping[str, Any]
    ) -> Segment:
        where = f"{path}: edge {edge_id!r}"
        try:
            u, v = int(raw["source"]), int(raw["target"])
            trajectory = str(raw["trajectory"])
            first, last = int(raw["first_frame"]), int(raw["last_frame"])
        except KeyError as exc:
            msg = f"{where}: field {exc.args[0]!r} is missing"
            raise CityFormatError(msg) from None
        if u not in self.nodes or v not in self.nodes:
            msg = f"{where}: node {u if u not in self.nodes else v} is not in the graph"
            raise CityFormatError(msg)
        if not 0 <= first < last:
            msg = f"{where}: needs 0 <= first_frame < last_frame, got {first}, {last}"
            raise CityFormatError(msg)
        meta, poses = self._trajectory(trajectory)
        if last >= len(poses):
            msg = f"{where}: last_frame {last} but trajectory {trajectory!r} has {len(poses)}"
            raise CityFormatError(msg)
        reverse = bool(raw.get("reverse", False))
        frames = np.arange(first, last + 1, dtype=np.int64)
        if reverse:
            frames = frames[::-1].copy()
        x, y = poses.x_m[frames], poses.y_m[frames]
        step = np.hypot(np.diff(x), np.diff(y))
        cum = np.concatenate([[0.0], np.cumsum(step)])
        filmed = poses.heading_deg[frames]
        travel = np.mod(filmed + (180.0 if reverse else 0.0), 360.0)
        camera = np.mod(filmed + meta.camera_yaw_offset_deg, 360.0)
        transitions = []
        for i, item in enumerate(raw.get("transitions") or []):
            target = str(item.get("edge"))
            if target not in raw_edges:
                msg = f"{where}: transitions[{i}] names unknown edge {target!r}"
                raise CityFormatError(msg)
            transitions.append(
                Transition(
                    edge=target,
                    turn_deg=_num(item, "turn_deg", f"{where} transitions[{i}]"),
                    label=str(item.get("label")),
                    rank=int(item.get("rank", 0)),
                    uturn=bool(item.get("uturn", False)),
                )
            )
        twin = raw.get("twin")
        if twin is not None and str(twin) not in raw_edges:
            msg = f"{where}: twin {twin!r} is not an edge of the graph"
            raise CityFormatError(msg)
        length = _num(raw, "length_m", where) if "length_m" in raw else float(cum[-1])
        if length <= 0:
            msg = f"{where}: length_m must be > 0, got {length}"
            raise CityFormatError(msg)
        # offsets are metres of the graph's length_m (what tasks give as start offsets);
        # frames are placed along it in proportion to the distance between their poses
        cum = cum * (length / cum[-1]) if cum[-1] > 0 else np.linspace(0.0, length, len(cum))
        return Segment(
            id=edge_id,
            trajectory=trajectory,
            u=u,
            v=v,
            first_frame=first,
            last_frame=last,
            reverse=reverse,
            length_m=length,
            twin=None if twin is None else str(twin),
            transitions=_unique_labels(transitions, where),
            frames=frames,
            cum_m=cum,
            x_m=np.asarray(x, np.float64),
            y_m=np.asarray(y, np.float64),
            travel_deg=travel,
            camera_deg=camera,
        )

    # queries ------------------------------------------------------------------------------
    def segment(self, segment_id: str) -> Segment:
        """The segment with this id; an unknown id raises with a close match."""
        try:
            return self.segments[segment_id]
        except KeyError:
            from city360.errors import did_you_mean

            msg = f"unknown segment {segment_id!r} in {self.city.graph_path}."
            msg += did_you_mean(str(segment_id), self.segments)
            raise ConfigError(msg) from None

    def iter_segments(self) -> Iterator[Segment]:
        return iter(self.segments.values())

    def nearest(
        self, x_m: float, y_m: float, heading_deg: float | None = None
    ) -> tuple[Segment, float]:
        """The segment and offset whose frame is nearest to (x_m, y_m); with a heading, among
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
        if best is None:  # pragma: no cover - a world always has segments
            msg = "the city has no frames to start from"
            raise CityFormatError(msg)
        return best[1], best[2]

    def latlon(self, x_m: float, y_m: float) -> tuple[float, float]:
        lat, lon = self.projection.to_latlon(x_m, y_m)
        return float(lat), float(lon)

    # frames -------------------------------------------------------------------------------
    def store(self, trajectory_id: str) -> FrameSource:
        """The (lazily opened) frame store of a trajectory."""
        if self._closed:
            msg = f"{self!r} is closed"
            raise ClosedResourceError(msg)
        store = self._stores.get(trajectory_id)
        if store is None:
            per_store = max(self._cache_bytes // max(1, len(self.trajectories)), 1 << 20)
            store = self._open_frames(self.city.frames_path(trajectory_id), per_store)
            meta = self.trajectories[trajectory_id]
            if len(store) != meta.frame_count:
                msg = (
                    f"{self.city.frames_path(trajectory_id)} has {len(store)} frames but "
                    f"trajectory.json says {meta.frame_count}; re-run `city360 ingest`"
                )
                store.close()
                raise CityFormatError(msg)
            self._stores[trajectory_id] = store
        return store
