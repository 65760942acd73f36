"""Frame poses pulled across the street towards where the walker walks it, along the map.

A canyon's GPS error is slow (``video_store.gps`` canyon model: ~3.5 m RMS correlated over
30 s, plus bursts): the heading-aided smoother (``ingest._aided_positions``) follows it, so a
walk's poses drift metres to one side of the street and back over a minute. With an OSM
extract the street the walker is on is known, and the walker keeps one line along it (a
sidewalk, the kerb, the middle of a lane) far more steadily than the GPS does.

:func:`pull_across` map-matches the kept frames' positions to the extract's ways (the build's
hidden-Markov matcher, :func:`city360.pose_graph.osm_match.match_tracks`) on every usable way
of the extract, the network the map bridge routes along, read once per process for both
(reading a city's ``.osm.pbf`` takes tens of seconds; the build's choice of network reads it
once per network, up to four times). A footway beside the street only parts a stretch: the
walker's line is the poses' own, not the way's.

A **stretch** is a run of consecutive poses matched to one way, or to ways that carry on
from each other within :attr:`MapPullParams.straight_deg` of straight on (a walk past side
streets: the walker keeps their sidewalk through the junction), at least
:attr:`MapPullParams.min_stretch_m` long. Over each, every pose's signed offset from the
way's centre line is measured (left of the direction of travel) and the walker's line
estimated robustly from the poses themselves: their median offset, never a width from the
map or the scene. The longer the stretch, the more of the GPS's slow error the median
averages out: one 80 m block holds about one of its swings, a street walked past side streets
several. Each pose then moves across the way, along the way's normal at its foot, by
:attr:`MapPullParams.strength` of its offset's difference from that line; its place along
the way is the smoother's. The pull fades to nothing over :attr:`MapPullParams.node_clear_m`
at each end of a stretch (a junction turned at, a dead end) and at each bend of a way (a
corner that joins no other way): there the way's normal turns and the pose may be on the next
way, so no pose is moved across a junction turned at or onto a way the track is not on. Poses
matched to no way (off the network) and stretches too short keep their place.

Positions are metres in the city CRS (x east, y north).
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from city360.errors import ConfigError
from city360.geo import LocalProjection

if TYPE_CHECKING:
    from city360.pose_graph.osm_match import OsmStreets

__all__ = ["MapPullParams", "pull_across"]

FloatArray = npt.NDArray[np.float64]

NORMAL_SPAN_M = 1.5
"""The way's direction at a pose's foot is taken over this arc either side of it, metres."""
BEND_SPAN_M = 5.0
"""A way's bend is measured between this many metres of it behind and ahead of a point."""
DIRECTION_SPAN_M = 10.0
"""A way's direction at its end node is taken over this many metres of it (straight on or a
turn, :attr:`MapPullParams.straight_deg`)."""


@dataclass(frozen=True, slots=True)
class MapPullParams:
    """How the frame poses are pulled across the street (module docstring)."""

    enabled: bool = True
    """Pull at all (with ``IngestOptions.osm``). False: the poses are the smoother's. **On**,
    measured on the filmed walk twins of seeds 0-9 with OSM, the frame poses of an ingest with
    ``--osm`` against main's one ingest (round thirty-four, branch canyon34; design notes):
    the Hamburg canyon walk 10 of 10 better (mean 4.106 -> 3.780 m; seed 2 3.428 -> 2.947,
    seed 8 3.976 -> 3.429), the Hamburg phone walk 10 of 10 (mean 1.956 -> 1.838; seed 0
    1.839 -> 1.838), the SF car under camera GPS 10 of 10 (2.077 -> 1.905) and phone GPS 10
    of 10 (2.005 -> 1.844); junction P / R, street F1 and turns unchanged (1.0 on all 40).
    Held-out canyon seeds 10-13: 3.243 / 3.065 / 4.235 / 3.335 -> 2.570 / 2.667 / 3.906 /
    2.889 m. Without ``--osm`` nothing is read or moved."""
    strength: float = 0.7
    """Share (0..1) of a pose's across-street distance from its stretch's walking line that
    the pull removes; 1 puts every pose on the line."""
    walker_stray_m: float = 1.0
    """RMS of a walker's own stray about their line, metres: over a stretch whose poses
    spread ``s`` about it the pull's strength is scaled by ``1 - (walker_stray_m / s)^2``
    (0 when they spread no further than a walker would); 0: the full strength everywhere. At
    0 the Hamburg phone walk of seed 0, whose poses follow the walker's own weave across the
    street (0.77 m RMS across, the truth 1.2 m off its way), was pulled off it: 1.839 ->
    1.949 m."""
    min_stretch_m: float = 20.0
    """A stretch of poses on one way shorter than this (metres of the way) is not pulled: too
    few poses to tell the walker's line from the GPS's."""
    node_clear_m: float = 8.0
    """The pull fades in linearly over this many metres of the way from each end of a
    stretch and from each bend of a way (more than :attr:`straight_deg` over
    :data:`BEND_SPAN_M` either side), metres: nothing at the node or the bend."""
    straight_deg: float = 30.0
    """Ways met one after the other at a node within this angle of straight on (a walk past a
    side street) make one stretch, degrees: the walker keeps their line through the
    junction, and the longer stretch tells it from the GPS's slow error better."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.strength <= 1.0:
            msg = f"`strength` must be in [0, 1], got {self.strength}"
            raise ConfigError(msg)
        for name in ("walker_stray_m", "min_stretch_m", "node_clear_m", "straight_deg"):
            if getattr(self, name) < 0.0:
                msg = f"`{name}` must be >= 0, got {getattr(self, name)}"
                raise ConfigError(msg)


def pull_across(
    x_m: FloatArray,
    y_m: FloatArray,
    *,
    osm: Path,
    projection: LocalProjection,
    params: MapPullParams,
) -> tuple[FloatArray, FloatArray]:
    """The kept frames' positions ``x_m``, ``y_m`` (metres, city CRS) pulled across the ways
    of the OSM extract ``osm`` (module docstring); unchanged where no way matches."""
    from city360.pose_graph.osm_match import match_tracks
    from city360.pose_graph.tracks import make_track

    x_m = np.asarray(x_m, np.float64)
    y_m = np.asarray(y_m, np.float64)
    if not params.enabled or x_m.shape[0] < 2:
        return x_m, y_m
    xy = np.column_stack([x_m, y_m])
    track = make_track("pull", xy, spacing_m=1.0, frame_count=len(xy))
    streets = _streets(str(Path(osm).resolve()), projection.proj4)
    matches = match_tracks(streets, [track])
    runs = [
        _on_way(streets, xy, track.heading_deg, (first, last), int(matches[0][first]), params)
        for first, last in _runs(matches[0])
        if matches[0][first] >= 0
    ]
    moved = xy.copy()
    for stretch in _stretches(streets, runs, params.straight_deg):
        if sum(run.span_m for run in stretch) < params.min_stretch_m:
            continue
        travel_offset = np.concatenate([run.offset_m * run.travel_sign for run in stretch])
        line = float(np.median(travel_offset))
        strength = params.strength
        if params.walker_stray_m > 0.0:  # the GPS strays no further than a walker: keep it
            spread = float(np.sqrt(np.mean((travel_offset - line) ** 2)))
            strength *= max(0.0, 1.0 - (params.walker_stray_m / max(spread, 1e-9)) ** 2)
        for k, run in enumerate(stretch):
            # the pull fades out towards the stretch's own ends only: through a junction the
            # walk goes straight across, the way's normal carries on
            clear = run.from_bend_m.copy()
            if k == 0:
                clear = np.minimum(clear, run.from_start_m if run.forward else run.from_end_m)
            if k == len(stretch) - 1:
                clear = np.minimum(clear, run.from_end_m if run.forward else run.from_start_m)
            fade = np.clip(clear / max(params.node_clear_m, 1e-9), 0.0, 1.0)
            move = -strength * fade * (run.offset_m - line * run.travel_sign)
            moved[run.first : run.last] += move[:, None] * run.normal
    return moved[:, 0], moved[:, 1]


@dataclass(frozen=True, slots=True)
class _WayRun:
    """Poses ``[first, last)`` matched to way ``edge``: each pose's signed offset from the
    way's centre line (metres, + left of the way's own direction), that normal (n, 2),
    ``travel_sign`` +1 where the pose travels the way's direction, -1 against it, how far
    along the way each pose's foot lies from its start, from its end and from the nearest
    bend of the way (metres; inf: none), and whether the run as a whole travels the way
    forwards."""

    first: int
    last: int
    edge: int
    offset_m: FloatArray
    normal: FloatArray
    travel_sign: FloatArray
    from_start_m: FloatArray
    from_end_m: FloatArray
    from_bend_m: FloatArray
    forward: bool

    @property
    def span_m(self) -> float:
        return float(np.max(self.from_start_m) - np.min(self.from_start_m))


def _on_way(
    streets: OsmStreets,
    xy: FloatArray,
    heading_deg: FloatArray,
    span: tuple[int, int],
    edge: int,
    params: MapPullParams,
) -> _WayRun:
    import shapely

    first, last = span

    line = shapely.linestrings(streets.samples_xy[streets.sample_edge == edge])
    length = float(shapely.length(line))
    points = shapely.points(xy[first:last, 0], xy[first:last, 1])
    along = np.asarray(shapely.line_locate_point(line, points), np.float64)
    ahead = shapely.get_coordinates(
        shapely.line_interpolate_point(line, np.minimum(along + NORMAL_SPAN_M, length))
    )
    behind = shapely.get_coordinates(
        shapely.line_interpolate_point(line, np.maximum(along - NORMAL_SPAN_M, 0.0))
    )
    foot = shapely.get_coordinates(shapely.line_interpolate_point(line, along))
    direction = ahead - behind
    direction /= np.maximum(np.hypot(*direction.T), 1e-9)[:, None]
    normal = np.column_stack([-direction[:, 1], direction[:, 0]])
    offset = np.einsum("ij,ij->i", xy[first:last] - foot, normal)
    heading = np.radians(heading_deg[first:last])
    travel = np.column_stack([np.sin(heading), np.cos(heading)])
    sign = np.where(np.einsum("ij,ij->i", travel, direction) >= 0.0, 1.0, -1.0)
    bends = _bend_arcs(line, length, params.straight_deg)
    from_bend = (
        np.min(np.abs(along[:, None] - bends[None, :]), axis=1)
        if bends.shape[0]
        else np.full(along.shape, np.inf)
    )
    return _WayRun(
        first=first,
        last=last,
        edge=edge,
        offset_m=offset,
        normal=normal,
        travel_sign=sign,
        from_start_m=along,
        from_end_m=length - along,
        from_bend_m=from_bend,
        forward=bool(along[-1] >= along[0]),
    )


def _bend_arcs(line: object, length: float, straight_deg: float) -> FloatArray:
    """Arcs (metres from the way's start, every metre) where the way turns by more than
    ``straight_deg`` between the :data:`BEND_SPAN_M` behind and ahead: a corner inside one
    way (a node that joins only two ways is no junction and splits no way)."""
    import shapely

    arcs = np.arange(0.0, length + 0.5, 1.0)
    at = shapely.get_coordinates(shapely.line_interpolate_point(line, arcs))
    behind = at - shapely.get_coordinates(
        shapely.line_interpolate_point(line, np.maximum(arcs - BEND_SPAN_M, 0.0))
    )
    ahead = (
        shapely.get_coordinates(
            shapely.line_interpolate_point(line, np.minimum(arcs + BEND_SPAN_M, length))
        )
        - at
    )
    norms = np.hypot(*behind.T) * np.hypot(*ahead.T)
    cos = np.einsum("ij,ij->i", behind, ahead) / np.maximum(norms, 1e-9)
    bent = (norms > 1e-6) & (cos < np.cos(np.radians(straight_deg)))
    return arcs[bent]


def _stretches(
    streets: OsmStreets, runs: list[_WayRun], straight_deg: float
) -> list[list[_WayRun]]:
    """``runs`` grouped into stretches: a run joins the one before it when it follows it
    pose for pose and its way carries on from that way's end node within ``straight_deg``
    of straight on (a walk through a side street's junction)."""
    stretches: list[list[_WayRun]] = []
    for run in runs:
        if stretches and _straight_on(streets, stretches[-1][-1], run, straight_deg):
            stretches[-1].append(run)
        else:
            stretches.append([run])
    return stretches


def _straight_on(streets: OsmStreets, before: _WayRun, after: _WayRun, straight_deg: float) -> bool:
    if before.last != after.first:
        return False
    end = streets.edge_nodes[before.edge][1 if before.forward else 0]
    start = streets.edge_nodes[after.edge][0 if after.forward else 1]
    if end != start:
        return False
    node = streets.node_xy[end]
    into = node - _point_near(streets, before.edge, node)
    out = _point_near(streets, after.edge, node) - node
    cos = float(into @ out) / max(float(np.hypot(*into) * np.hypot(*out)), 1e-9)
    return cos >= np.cos(np.radians(straight_deg))


def _point_near(streets: OsmStreets, edge: int, node: FloatArray) -> FloatArray:
    """The way's point :data:`DIRECTION_SPAN_M` along it from its end at ``node``."""
    samples = streets.samples_xy[streets.sample_edge == edge]
    if np.hypot(*(samples[0] - node)) > np.hypot(*(samples[-1] - node)):
        samples = samples[::-1]
    steps = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(samples, axis=0).T))])
    k = min(int(np.searchsorted(steps, DIRECTION_SPAN_M)), len(samples) - 1)
    return samples[k]


@functools.lru_cache(maxsize=2)
def _streets(path: str, proj4: str) -> OsmStreets:
    """The ways of the extract at ``path`` as the matcher takes them: the map bridge's network
    (:func:`~city360.video_store.map_bridge.load_street_routes`, every usable way, read once
    per process and shared with the bridging)."""
    from city360.pose_graph.osm_match import streets_from_graph
    from city360.video_store.map_bridge import load_street_routes

    routes = load_street_routes(Path(path), LocalProjection.from_proj4(proj4))
    return streets_from_graph(routes.graph, source=path)


def _runs(labels: npt.NDArray[np.int64]) -> list[tuple[int, int]]:
    """``[first, last)`` index ranges of the runs of equal consecutive ``labels``."""
    if labels.shape[0] == 0:
        return []
    cuts = np.flatnonzero(np.diff(labels) != 0) + 1
    bounds = np.concatenate([[0], cuts, [labels.shape[0]]])
    return [(int(a), int(b)) for a, b in itertools.pairwise(bounds)]
