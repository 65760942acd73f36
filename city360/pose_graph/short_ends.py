"""A true dead end that stops a few metres short of another street: the scorer's reading of it
as a T-junction on that street (``city360 score``; the reading is applied only where the build
made it, see :mod:`city360.pose_graph.score`).

OSM draws some streets ending 5 m short of the street they run into (Kalevankatu's east end
in Kamppi and Helsinki: 5.2 m). The synthetic twin paints each street's carriageway with a
round end, so two residential carriageways (6 m wide) whose centrelines end that close touch
in its pictures; the GPS (about 2 m of error at the video's end and along the other street)
cannot tell an end 5 m short from one at the street either. A build that meets the other
street there makes a T-junction, which the truth as drawn scores as an extra 37 m from any
true junction. Here that place is found in the truth: a dead end (a node with one street)
within :data:`SHORT_END_M` of another street that its own street runs into (at
:data:`SHORT_END_MIN_DEG` or more to it), the foot of the gap on that street farther than
``MATCH_M`` from every other true node. All positions are metres in the city CRS.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["SHORT_END_M", "SHORT_END_MIN_DEG", "ShortEnd", "join_short_end", "short_ends"]

SHORT_END_M = 6.0
"""A dead end this close to another street's centreline, metres, ends at that street to the
scorer: two residential carriageways (6 m wide, 3 m either side of the centreline) touch in
the twin's pictures. On the cached twins' truths (round twenty-seven) the dead ends short of
a street away from its nodes lie 5.2 m (Kalevankatu), then 6.8 m (two, read as drawn)."""
SHORT_END_MIN_DEG = 45.0
"""The dead end's street meets the other street at least this steeply (axial degrees, its last
10 m against the other street's 6 m around the foot): it runs into it. A street that ends
beside another and parallel to it is a side-by-side reading, not this one."""

_CHORD_M = 10.0
"""The dead end's street direction is the chord over its last this many metres."""

_ON_M = 0.5
"""A dead end this close to another street lies on it (a node the map lacks): not read here,
the cut would split its own street too."""

Street = tuple[int, int, np.ndarray]
"""A true street: (u, v, polyline (N, 2), metres)."""


@dataclass(frozen=True, slots=True)
class ShortEnd:
    """The dead end ``node`` at ``end`` stopping ``gap_m`` short of another street, whose
    closest point to it is ``foot`` (metres)."""

    node: int
    end: tuple[float, float]
    foot: tuple[float, float]
    gap_m: float


def _arc(line: np.ndarray) -> np.ndarray:
    return np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(line, axis=0).T))])


def _axial_deg(a: np.ndarray, b: np.ndarray) -> float:
    """The angle between the directions ``a`` and ``b`` (vectors), 0..90 degrees."""
    angle = math.degrees(math.atan2(float(a[0]), float(a[1])) - math.atan2(b[0], b[1]))
    return abs((angle + 90.0) % 180.0 - 90.0)


def short_ends(
    streets: Sequence[Street], nodes: Mapping[int, tuple[float, float]], clear_m: float
) -> list[ShortEnd]:
    """Every dead end of ``streets`` (a node one street ends at) within :data:`SHORT_END_M` of
    another street it runs into (:data:`SHORT_END_MIN_DEG`), where the foot on that street
    lies farther than ``clear_m`` from every node of ``nodes`` but the dead end (metres): an
    end beside a street's own node is a stub's, read as drawn."""
    from shapely.geometry import LineString, Point

    degree: dict[int, int] = {}
    for u, v, _ in streets:
        degree[u] = degree.get(u, 0) + 1
        degree[v] = degree.get(v, 0) + 1
    shapes = [LineString(line) if len(line) >= 2 else None for _, _, line in streets]
    found: list[ShortEnd] = []
    for i, (u, v, line) in enumerate(streets):
        for node in (u, v):
            if degree[node] != 1 or u == v or len(line) < 2:
                continue
            towards = line if node == v else line[::-1]
            arc = _arc(towards)
            end = towards[-1]
            back = np.array([np.interp(arc[-1] - _CHORD_M, arc, towards[:, k]) for k in (0, 1)])
            best: ShortEnd | None = None
            for k, shape in enumerate(shapes):
                if k == i or shape is None:
                    continue
                gap = shape.distance(Point(end))
                if gap > SHORT_END_M or gap < _ON_M or (best is not None and gap >= best.gap_m):
                    continue
                at = shape.project(Point(end))
                foot = shape.interpolate(at)
                ahead = shape.interpolate(min(at + 3.0, shape.length))
                behind = shape.interpolate(max(at - 3.0, 0.0))
                along = np.array([ahead.x - behind.x, ahead.y - behind.y])
                if _axial_deg(end - back, along) < SHORT_END_MIN_DEG:
                    continue
                clear = all(
                    math.hypot(x - foot.x, y - foot.y) > clear_m
                    for n, (x, y) in nodes.items()
                    if n != node
                )
                if clear:
                    best = ShortEnd(
                        node, (float(end[0]), float(end[1])), (foot.x, foot.y), float(gap)
                    )
            if best is not None:
                found.append(best)
    return found


def join_short_end(streets: list[Street], short: ShortEnd, new_node: int) -> list[Street]:
    """``streets`` read with ``short``: a street from its dead end to ``new_node`` at the foot
    (the street under the foot is cut there by the caller, which owns that split)."""
    line = np.array([short.end, short.foot], dtype=np.float64)
    return [*streets, (short.node, new_node, line)]
