"""A small, honest street network around a recorded walk, for walks no OSM extract covers.

The real Hamburg walk in ``../shared/data/gps`` lies outside every extract the project has, so
its twin needs streets to film along. This module *generates* them (they are not OpenStreetMap
data and are written with ``generator="city360 walk_network"``): the streets the walked path
takes (the track simplified by ``simplify_m``), and cross streets every ``cross_every_m``
metres along them, perpendicular to the path, reaching ``cross_arm_m`` to both sides (every
other one to one side only, a T-junction). The walk passes every cross street on its own
street alone, so those junctions are filmed on two arms only; what a build can find of them is
scored against the filmed part of the truth (:func:`city360.pose_graph.accuracy.filmed_truth`).

A walk that comes back to a street it walked before (within :data:`REVISIT_M`: an
out-and-back spur, a loop round a block, a crossing of its own path, a stretch walked twice)
walks that street again, not a new one beside it (:func:`walked_streets`): the street is split
where the walk joins and leaves it, so the junctions the walk passes (a spur's base, a loop's
closing corner, a self-crossing) are junctions of the truth, and a spur's tip, where the walk
turns back, is a dead end.

Positions are WGS84 in the output; work is in a local transverse Mercator around the track.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from city360.errors import GpsError
from city360.geo import LocalProjection

__all__ = ["REVISIT_M", "walk_network_osm", "walked_streets"]

FloatArray = npt.NDArray[np.float64]

REVISIT_M = 10.0
"""A point of the walk this close (metres) to a street it walked before walks that street
again: the GPS of one street walked twice (3-5 m off each time) and its two sidewalks."""
LOOP_BACK_M = 30.0
"""The walk's own path further back than this (metres of travel) counts as walked before, so
that a loop closes on itself; nearer, it is the street being walked."""
TURN_BACK_DEG = 135.0
"""A point near the street being walked that heads this far (degrees) from it walks it back:
the walk turned back (the tip of an out-and-back spur)."""
_SAMPLE_M = 2.0
"""Spacing (metres) of the points the path is walked at."""
_NODE_MERGE_M = 6.0
"""Street ends this close (metres) are one node: a walk crossing a street leaves it a few
metres from where it joined it (up to about 6 m under 3 m of GPS noise)."""


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
    streets = walked_streets(np.asarray(line.coords, np.float64), simplify_m=simplify_m)

    nodes: list[tuple[int, float, float, dict[str, str]]] = []
    ends: dict[tuple[int, int], int] = {}  # street ends by centimetre: shared where they meet

    def node(point: FloatArray, *, end: bool = False) -> int:
        key = (round(float(point[0]) * 100), round(float(point[1]) * 100))
        if end and key in ends:
            return ends[key]
        lat, lon = projection.to_latlon(float(point[0]), float(point[1]))
        nodes.append((len(nodes) + 1, float(lat), float(lon), {}))
        if end:
            ends[key] = len(nodes)
        return len(nodes)

    ways: list[tuple[int, list[int], dict[str, str]]] = []
    crosses: list[list[int]] = []
    for number, path in enumerate(streets, start=1):
        arc = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(path, axis=0).T))])
        length = float(arc[-1])
        crossings = np.arange(cross_every_m / 2, length - cross_every_m / 4, cross_every_m)

        def at(s: float, arc: FloatArray = arc, path: FloatArray = path) -> FloatArray:
            return np.array([np.interp(s, arc, path[:, 0]), np.interp(s, arc, path[:, 1])])

        # the walked street: its vertices and the crossing points, in order along it
        marks = sorted({*arc.tolist(), *crossings.tolist()})
        refs = {s: node(at(s), end=s in (0.0, length)) for s in marks}
        name = "walk street" if len(streets) == 1 else f"walk street {number}"
        ways.append(
            (len(ways) + 1, [refs[s] for s in marks], {"highway": "residential", "name": name})
        )
        for s in crossings:
            ahead = at(min(s + 10.0, length)) - at(max(s - 10.0, 0.0))
            direction = ahead / max(float(np.hypot(*ahead)), 1e-9)
            right = np.array([direction[1], -direction[0]])
            centre = at(s)
            left_end = node(centre - cross_arm_m * right) if len(crosses) % 2 == 0 else None
            right_end = node(centre + cross_arm_m * right)
            crosses.append([n for n in (left_end, refs[float(s)], right_end) if n is not None])
    first = len(ways) + 1
    for k, way in enumerate(crosses):
        tags = {"highway": "residential", "name": f"cross street {k + 1}"}
        ways.append((first + k, way, tags))
    return atomic_write_text(out, osm_xml(nodes, ways, generator="city360 walk_network"))


def walked_streets(path: FloatArray, *, simplify_m: float = 4.0) -> list[FloatArray]:
    """The streets a walk along ``path`` ((N, 2) metres, in walking order) takes: polylines
    ((K, 2) metres) sharing their end points exactly where the walk joins, leaves or crosses
    a street it walked before (within :data:`REVISIT_M`), each simplified by ``simplify_m``.
    A walk that takes one street (it never comes back, or only turns back along it) is that
    street: ``path`` itself.

    The path is walked at points :data:`_SAMPLE_M` apart. A point near a street walked before
    (the walk's own path more than :data:`LOOP_BACK_M` back included) ends the street being
    walked at the nearest point of that one, which is split there; the first point away again
    starts a new street at the nearest point of the last one near. A point near the street
    being walked but heading back along it (:data:`TURN_BACK_DEG`) is the walk turning back:
    the street ends at its tip (the point farthest on), a dead end, and the walk is on it.
    """
    import shapely

    arc = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(path, axis=0).T))])
    if len(path) < 2 or arc[-1] <= 4 * _SAMPLE_M:
        return [path]
    marks = np.arange(0.0, float(arc[-1]), _SAMPLE_M)
    marks = np.append(marks, float(arc[-1]))  # the walk's last point too
    points = np.column_stack([np.interp(marks, arc, path[:, 0]), np.interp(marks, arc, path[:, 1])])
    streets: list[FloatArray] = []
    current: list[FloatArray] = [points[0]]
    current_marks: list[float] = [0.0]
    last_near: FloatArray | None = None
    came_back = False
    for i in range(1, len(points)):
        point, mark = points[i], float(marks[i])
        heading = point - points[i - 1]
        if last_near is None and len(current) > 2:
            back = _turned_back(point, heading, np.asarray(current))
            if back is not None:  # walking back along the street: it ends at the tip
                tip, foot = back
                came_back = True
                streets.append(np.asarray(current[: tip + 1]))
                current, current_marks = [], []
                last_near = foot
                continue
        old = [p for p, m in zip(current, current_marks, strict=True) if m < mark - LOOP_BACK_M]
        walked = [*streets, np.asarray(old)] if len(old) >= 2 else streets
        nearest = _nearest_on(point, walked)
        if nearest is not None and float(np.hypot(*(nearest - point))) <= REVISIT_M:
            came_back = True
            if last_near is None and len(current) > 1:  # joins a street walked before
                streets = _split_at([*streets, np.asarray([*current, nearest])], nearest)
            if last_near is None:
                current, current_marks = [], []
            last_near = nearest
            continue
        if last_near is not None:  # leaves it: a new street from the last point near
            streets = _split_at(streets, last_near)
            current, current_marks = [last_near], [mark - _SAMPLE_M]
            last_near = None
        current.append(point)
        current_marks.append(mark)
    if len(current) > 1:
        streets.append(np.asarray(current))
    lines = [half for line in _join_through(_merge_ends(streets)) for half in _open(line)]
    if not came_back or len(lines) == 1:
        return [path]
    simplified = [
        np.asarray(shapely.LineString(s).simplify(simplify_m, preserve_topology=False).coords)
        for s in lines
    ]
    return [s for s in simplified if len(s) >= 2]


def _open(line: FloatArray) -> list[FloatArray]:
    """A street that ends where it starts (a loop round a block) as two halves, else itself."""
    if not np.array_equal(line[0], line[-1]) or len(line) < 3:
        return [line]
    arc = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(line, axis=0).T))])
    middle = int(np.argmin(np.abs(arc - arc[-1] / 2)))
    middle = min(max(middle, 1), len(line) - 2)
    return [line[: middle + 1], line[middle:]]


def _turned_back(
    point: FloatArray, heading: FloatArray, street: FloatArray
) -> tuple[int, FloatArray] | None:
    """Whether ``point``, walking along ``heading``, is coming back along ``street`` (the
    points walked so far): within :data:`REVISIT_M` of one of its segments, heading at least
    :data:`TURN_BACK_DEG` away from it. Then the index of the tip (the point of ``street``
    after that segment farthest from ``point``) and the nearest point on the street before
    the tip; else None."""
    a, b = street[:-1], street[1:]
    ab = b - a
    t = np.clip(((point - a) * ab).sum(axis=1) / np.maximum((ab**2).sum(axis=1), 1e-12), 0, 1)
    foot = a + t[:, None] * ab
    near = np.hypot(*(foot - point).T) <= REVISIT_M
    cos = (ab * heading).sum(axis=1) / np.maximum(np.hypot(*ab.T) * np.hypot(*heading), 1e-12)
    back = np.flatnonzero(near & (cos <= math.cos(math.radians(TURN_BACK_DEG))))
    if not back.size:
        return None
    j = int(back[np.argmin(np.hypot(*(foot[back] - point).T))])
    tip = j + 1 + int(np.argmax(np.hypot(*(street[j + 1 :] - point).T)))
    return tip, foot[j]


def _nearest_on(point: FloatArray, lines: list[FloatArray]) -> FloatArray | None:
    """The nearest point to ``point`` on any of the polylines ``lines``, or None."""
    best: FloatArray | None = None
    best_d = math.inf
    for line in lines:
        if len(line) < 2:
            continue
        a, b = line[:-1], line[1:]
        ab = b - a
        t = np.clip(((point - a) * ab).sum(axis=1) / np.maximum((ab**2).sum(axis=1), 1e-12), 0, 1)
        foot = a + t[:, None] * ab
        d = np.hypot(*(foot - point).T)
        j = int(np.argmin(d))
        if d[j] < best_d:
            best_d, best = float(d[j]), foot[j]
    return best


def _split_at(lines: list[FloatArray], point: FloatArray) -> list[FloatArray]:
    """``lines`` with the one that passes through ``point`` inside it split in two there."""
    out: list[FloatArray] = []
    for line in lines:
        a, b = line[:-1], line[1:]
        ab = b - a
        t = ((point - a) * ab).sum(axis=1) / np.maximum((ab**2).sum(axis=1), 1e-12)
        foot = a + np.clip(t, 0, 1)[:, None] * ab
        on = np.flatnonzero(np.hypot(*(foot - point).T) < 1e-6)
        inside = [
            j
            for j in on
            if not (j == 0 and t[j] <= 1e-9) and not (j == len(ab) - 1 and t[j] >= 1 - 1e-9)
        ]
        if not inside:
            out.append(line)
            continue
        j = inside[0]
        out += [np.vstack([line[: j + 1], point]), np.vstack([point, line[j + 1 :]])]
    return [line for line in out if _length(line) > 0.0]


def _length(line: FloatArray) -> float:
    return float(np.hypot(*np.diff(line, axis=0).T).sum())


def _merge_ends(lines: list[FloatArray]) -> list[FloatArray]:
    """Street ends within :data:`_NODE_MERGE_M` of each other moved to their mean; streets
    left with both ends at one node and shorter than twice that dropped."""
    ends = np.array([p for line in lines for p in (line[0], line[-1])])
    from scipy.cluster.hierarchy import fcluster, linkage

    if len(ends) > 1:
        groups = fcluster(linkage(ends, method="single"), _NODE_MERGE_M, criterion="distance")
    else:
        groups = np.ones(len(ends), dtype=int)
    centre = {g: ends[groups == g].mean(axis=0) for g in set(groups.tolist())}
    merged: list[FloatArray] = []
    for k, line in enumerate(lines):
        line = line.copy()
        line[0], line[-1] = centre[groups[2 * k]], centre[groups[2 * k + 1]]
        if groups[2 * k] == groups[2 * k + 1] and _length(line) < 2 * _NODE_MERGE_M:
            continue
        merged.append(line)
    return merged


def _join_through(lines: list[FloatArray]) -> list[FloatArray]:
    """Streets meeting end to end at a node no other street reaches joined into one (where
    the walk turned back without coming back along the same street, or split a street it
    then did not leave); a join that would close a loop on itself is not made."""
    lines = list(lines)
    while True:
        count: dict[tuple[float, float], int] = {}
        for line in lines:
            for p in (line[0], line[-1]):
                key = (float(p[0]), float(p[1]))
                count[key] = count.get(key, 0) + 1
        joined = False
        for a in range(len(lines)):
            for b in range(a + 1, len(lines)):
                first, second = lines[a], lines[b]
                for x, y in (
                    (first, second),
                    (first, second[::-1]),
                    (first[::-1], second),
                    (first[::-1], second[::-1]),
                ):
                    key = (float(x[-1][0]), float(x[-1][1]))
                    if (
                        count[key] == 2
                        and np.array_equal(x[-1], y[0])
                        and not np.array_equal(x[0], y[-1])
                    ):
                        lines[a] = np.vstack([x, y[1:]])
                        del lines[b]
                        joined = True
                        break
                if joined:
                    break
            if joined:
                break
        if not joined:
            return lines
