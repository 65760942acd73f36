"""The walkable world of one built city: its pose graph, trajectories and frame stores.

The graph is read and validated by :func:`city360.pose_graph.load_graph` (docs/contracts.md,
``pose_graph -> graph.json``); its nodes and transitions are used as they are. Each edge becomes
a :class:`Segment` that also carries, in traversal order, the trajectory frames it plays, their
distance along the segment, their positions and the travel heading at each (a ``reverse``
segment plays frames backwards, so its travel heading is the filmed heading + 180 degrees).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from city360.city import CityDir, CityManifest, TrajectoryMeta, TrajectoryPoses
from city360.errors import CityFormatError, ClosedResourceError, ConfigError, did_you_mean
from city360.geo import LocalProjection

if TYPE_CHECKING:
    from city360.pose_graph.graph import Edge, Node
    from city360.pose_graph.transitions import Transition

__all__ = [
    "FrameSource",
    "Segment",
    "World",
]

logger = logging.getLogger(__name__)

BRANCH_LABELS = ("LEFT", "UP", "RIGHT")
_CANONICAL_TURN_DEG = {"LEFT": -90.0, "UP": 0.0, "RIGHT": 90.0}


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


def _default_frame_source(path: Path, cache_bytes: int) -> FrameSource:
    try:
        from city360.video_store import FrameStore
    except ImportError:  # the package may not re-export it yet
        from city360.video_store.frame_store import FrameStore

    store: FrameSource = FrameStore(path, cache_bytes=cache_bytes)
    return store


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


def _unique_labels(transitions: tuple[Transition, ...]) -> tuple[Transition, ...]:
    """One transition per label, the one its action takes: the lowest ``rank``, then (for
    graphs without ranks) the one closest to the label's canonical turn. The others are not
    reachable by LEFT/UP/RIGHT, so they are not offered."""
    best: dict[str, Transition] = {}
    for transition in transitions:
        canonical = _CANONICAL_TURN_DEG[transition.label]
        current = best.get(transition.label)
        if current is None or (transition.rank, abs(transition.turn_deg - canonical)) < (
            current.rank,
            abs(current.turn_deg - canonical),
        ):
            best[transition.label] = transition
    return tuple(best[label] for label in BRANCH_LABELS if label in best)


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
        self._open_frames = frame_source or _default_frame_source
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
        from city360.pose_graph.graph import load_graph

        self.graph = load_graph(self.city)
        self.nodes.update((node.id, node) for node in self.graph.nodes())
        for edge in self.graph.edges():
            self.segments[edge.id] = self._segment(edge)

    def _trajectory(self, trajectory_id: str) -> tuple[TrajectoryMeta, TrajectoryPoses]:
        if trajectory_id not in self.trajectories:
            self.trajectories[trajectory_id] = self.city.read_trajectory_meta(trajectory_id)
            self._poses[trajectory_id] = self.city.read_poses(trajectory_id)
        return self.trajectories[trajectory_id], self._poses[trajectory_id]

    def _segment(self, edge: Edge) -> Segment:
        meta, poses = self._trajectory(edge.trajectory)
        frames = np.asarray(edge.frames(), dtype=np.int64)
        x, y = poses.x_m[frames], poses.y_m[frames]
        cum = np.concatenate([[0.0], np.cumsum(np.hypot(np.diff(x), np.diff(y)))])
        # offsets are metres of the graph's length_m (what tasks give as start offsets);
        # frames are placed along it in proportion to the distance between their poses
        length = float(edge.length_m)
        cum = cum * (length / cum[-1]) if cum[-1] > 0 else np.linspace(0.0, length, len(cum))
        filmed = poses.heading_deg[frames]
        return Segment(
            id=edge.id,
            trajectory=edge.trajectory,
            u=edge.u,
            v=edge.v,
            reverse=edge.reverse,
            length_m=length,
            twin=edge.twin,
            transitions=_unique_labels(edge.transitions),
            frames=frames,
            cum_m=cum,
            x_m=np.asarray(x, np.float64),
            y_m=np.asarray(y, np.float64),
            travel_deg=np.mod(filmed + (180.0 if edge.reverse else 0.0), 360.0),
            camera_deg=np.mod(filmed + meta.camera_yaw_offset_deg, 360.0),
        )

    # queries ------------------------------------------------------------------------------
    def segment(self, segment_id: str) -> Segment:
        """The segment with this id; an unknown id raises with a close match."""
        try:
            return self.segments[segment_id]
        except KeyError:
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
