"""The walkable world of one built city: its street graph and the trajectories' frame stores.

The pose graph is the city's :class:`~city360.streets.StreetGraph` (``StreetGraph.open``, parsed
once per process and shared with the oracle and the street distances): nodes and segments, each
segment with the trajectory frames it plays in traversal order, their distance along it, their
positions and the travel heading at each (a ``reverse`` segment plays frames backwards, so its
travel heading is the filmed heading + 180 degrees). The world adds the frame stores.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from city360.city import BASE_CONDITION, CityDir, CityManifest, TrajectoryMeta
from city360.errors import CityFormatError, ClosedResourceError
from city360.geo import LocalProjection
from city360.streets import Node, Segment, StreetGraph

__all__ = [
    "FrameSource",
    "FrameSourceFactory",
    "World",
    "default_frame_source",
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


class World:
    """A built city opened for walking. Owns the frame stores; a context manager.

    ``frame_source`` opens one trajectory's ``frames.mp4``; it defaults to
    ``city360.video_store.FrameStore``. ``condition`` picks the visual condition whose frames
    are read (``day``: the trajectories' own; others from ``conditions/<name>/``); a condition
    the city lacks raises :class:`~city360.errors.ConditionMissingError` naming those it has.
    """

    def __init__(
        self,
        city_dir: str | Path,
        *,
        cache_bytes: int = 256 * 1024 * 1024,
        frame_source: FrameSourceFactory | None = None,
        condition: str = BASE_CONDITION,
    ) -> None:
        self.city = CityDir(city_dir)
        self.manifest: CityManifest = self.city.read_manifest()
        self.city.check_condition(condition)
        self.condition = condition
        self.projection: LocalProjection = self.manifest.projection
        self._open_frames = frame_source or default_frame_source
        self._cache_bytes = int(cache_bytes)
        self.graph: StreetGraph = StreetGraph.open(self.city)
        self._stores: dict[tuple[str, int], FrameSource] = {}
        self._levels: dict[str, dict[int, Path]] = {}
        self._closed = False

    def __repr__(self) -> str:
        condition = "" if self.condition == BASE_CONDITION else f", condition={self.condition!r}"
        return f"World({str(self.city.root)!r}, segments={len(self.segments)}{condition})"

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

    # queries ----------------------------------------------------------------------------
    @property
    def nodes(self) -> dict[int, Node]:
        """Node id -> :class:`~city360.streets.Node` (the street graph's)."""
        return self.graph.nodes

    @property
    def segments(self) -> dict[str, Segment]:
        """Segment id -> :class:`~city360.streets.Segment` (the street graph's)."""
        return self.graph.segments

    @property
    def trajectories(self) -> dict[str, TrajectoryMeta]:
        """``trajectory.json`` of every trajectory a segment plays."""
        return self.graph.trajectories

    def segment(self, segment_id: str) -> Segment:
        """The segment with this id; an unknown id raises with a close match."""
        return self.graph.segment(segment_id)

    def iter_segments(self) -> Iterator[Segment]:
        return self.graph.iter_segments()

    def nearest(
        self, x_m: float, y_m: float, heading_deg: float | None = None
    ) -> tuple[Segment, float]:
        """The segment and offset whose frame is nearest to (x_m, y_m); with a heading, among
        frames whose travel heading is within 90 degrees of it when there are any."""
        return self.graph.nearest_frame(x_m, y_m, heading_deg)

    def latlon(self, x_m: float, y_m: float) -> tuple[float, float]:
        lat, lon = self.projection.to_latlon(x_m, y_m)
        return float(lat), float(lon)

    # frames -------------------------------------------------------------------------------
    def level_width(self, trajectory_id: str, min_width: float | None = None) -> int:
        """Width of the frames :meth:`store` reads for ``min_width``: the smallest stored
        pyramid level at least ``min_width`` pixels wide, else the full frames' width
        (``video_store.pyramid``); the full width when ``min_width`` is None."""
        full = int(self.trajectories[trajectory_id].width)
        if min_width is None:
            return full
        levels = self._levels.get(trajectory_id)
        if levels is None:
            from city360.video_store.pyramid import stored_levels

            levels = stored_levels(self._frames_path(trajectory_id))
            self._levels[trajectory_id] = levels
        wide_enough = [w for w in levels if min_width <= w < full]
        return min(wide_enough) if wide_enough else full

    def _frames_path(self, trajectory_id: str) -> Path:
        return self.city.frames_path(trajectory_id, condition=self.condition)

    def store(self, trajectory_id: str, *, min_width: float | None = None) -> FrameSource:
        """The (lazily opened) frame store of a trajectory; with ``min_width`` (pixels over
        360°) the store of its smallest pyramid level that wide (:meth:`level_width`)."""
        if self._closed:
            msg = f"{self!r} is closed"
            raise ClosedResourceError(msg)
        width = self.level_width(trajectory_id, min_width)
        key = (trajectory_id, width)
        store = self._stores.get(key)
        if store is None:
            per_store = max(self._cache_bytes // max(1, len(self.trajectories)), 1 << 20)
            path = self._frames_path(trajectory_id)
            if width != int(self.trajectories[trajectory_id].width):
                path = self._levels[trajectory_id][width]
            store = self._open_frames(path, per_store)
            meta = self.trajectories[trajectory_id]
            if len(store) != meta.frame_count:
                msg = (
                    f"{path} has {len(store)} frames but trajectory.json says "
                    f"{meta.frame_count}; re-run `city360 ingest`"
                    + ("" if path.name == "frames.mp4" else " or `city360 pyramid --force`")
                )
                store.close()
                raise CityFormatError(msg)
            self._stores[key] = store
        return store
