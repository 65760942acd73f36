"""Stretches of street for counting tasks: how they are walked, described and counted.

A stretch starts at a pose and follows the street ahead: through junctions with a single way on
(bends), and straight on (UP) through ``through`` intersections, ending at the next
intersection or dead end. An object is *in range* of a stretch when

- it lies within ``lateral_range_m`` of the stretch's line, with its foot strictly inside the
  walked part (not past either end), and
- no other street is nearer to it (segments of the stretch and their twins excepted), so a
  tree on a cross street by the corner belongs to the cross street.

Generators and ``city360 tasks check`` both count through :func:`objects_in_stretch`, and the
tests check it against ground truth on hand-made cities.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from city360.errors import TaskError
from city360.streets import Segment, StreetGraph
from city360.tasks.generate.vln_text import ordinal
from city360.tasks.schema import CountStretch

__all__ = [
    "CountableObject",
    "StretchIndex",
    "describe_stretch",
    "objects_in_stretch",
    "side_of",
    "walk_stretch",
]

_NEARER_TOLERANCE_M = 0.5


@dataclass(frozen=True, slots=True)
class CountableObject:
    """A countable thing at (x_m, y_m), metres in the city CRS."""

    id: str
    kind: str
    x_m: float
    y_m: float


def walk_stretch(
    graph: StreetGraph,
    segment: str,
    offset_m: float,
    *,
    through: int,
    lateral_range_m: float,
    max_segments: int = 12,
) -> CountStretch | None:
    """The stretch from (segment, offset_m) to the intersection after ``through`` straight-on
    crossings; None when the street ends, turns away or loops before that."""
    segments = [segment]
    crossed = 0
    while True:
        seg = graph.segment(segments[-1])
        offered = [t for t in seg.choices if t.edge in graph.segments and not t.uturn]
        if len(offered) == 1:
            nxt = offered[0].edge  # a bend or a link: the street goes on
        elif len(offered) > 1 and crossed < through:
            ups = [t.edge for t in offered if t.label == "UP"]
            if len(ups) != 1:
                return None
            nxt = ups[0]
            crossed += 1
        else:
            break
        if nxt in segments or len(segments) >= max_segments:
            return None
        segments.append(nxt)
    if crossed < through:
        return None
    end = graph.segment(segments[-1]).length_m
    return CountStretch(
        segments=segments,
        start_offset_m=round(offset_m, 2),
        end_offset_m=round(end, 2),
        lateral_range_m=lateral_range_m,
    )


def stretch_length_m(graph: StreetGraph, stretch: CountStretch) -> float:
    """Metres walked along the stretch."""
    total = sum(graph.segment(s).length_m for s in stretch.segments)
    last = graph.segment(stretch.segments[-1]).length_m
    return total - stretch.start_offset_m - (last - stretch.end_offset_m)


def describe_stretch(graph: StreetGraph, stretch: CountStretch) -> str:
    """The stretch in words, as the agent reads it after "Count every tree you can see ..."."""
    crossings = 0
    for here in stretch.segments[:-1]:
        if graph.segment(here).is_intersection:
            crossings += 1
    end_seg = graph.segment(stretch.segments[-1])
    dead_end = not any(not t.uturn for t in end_seg.choices)
    if dead_end:
        target = "the end of the street"
    else:
        target = f"the {ordinal(crossings + 1)} intersection ahead"
    text = f"along the street ahead of you, from where you stand to {target}"
    if crossings:
        text += " (keep straight on at every intersection before it)"
    return text


class StretchIndex:
    """Spatial index of the graph's segments for fast in-range tests (shapely STRtree)."""

    def __init__(self, graph: StreetGraph) -> None:
        from shapely import STRtree
        from shapely.geometry import LineString

        self.graph = graph
        self._ids = sorted(graph.segments)
        self._lines = [LineString(graph.segments[s].xy) for s in self._ids]
        self._tree = STRtree(self._lines)

    @cached_property
    def _twins(self) -> dict[str, str]:
        return {s.id: s.twin for s in self.graph.segments.values() if s.twin}

    def nearest_other_m(self, x_m: float, y_m: float, exclude: set[str], radius_m: float) -> float:
        """Distance to the nearest segment not in ``exclude`` within ``radius_m`` (else inf)."""
        from shapely.geometry import Point

        point = Point(x_m, y_m)
        best = math.inf
        for k in self._tree.query(point, predicate="dwithin", distance=radius_m):
            if self._ids[int(k)] in exclude:
                continue
            best = min(best, float(self._lines[int(k)].distance(point)))
        return best

    def excluded(self, stretch: CountStretch) -> set[str]:
        ids = set(stretch.segments)
        ids |= {self._twins[s] for s in stretch.segments if s in self._twins}
        # Segments with the same two end nodes (the same street walked the other way).
        ends = {
            frozenset((self.graph.segments[s].u, self.graph.segments[s].v))
            for s in stretch.segments
        }
        ids |= {s.id for s in self.graph.segments.values() if frozenset((s.u, s.v)) in ends}
        return ids


def side_of(seg: Segment, offset_m: float, obj: CountableObject) -> str:
    """``"left"`` or ``"right"``: the side of ``seg`` (walked in its direction) an object is on."""
    heading = math.radians(seg.heading(offset_m))
    dx, dy = math.sin(heading), math.cos(heading)  # x east, y north
    px, py = seg.position(offset_m)
    cross = dx * (obj.y_m - py) - dy * (obj.x_m - px)
    return "left" if cross > 0 else "right"


def objects_in_stretch(
    graph: StreetGraph,
    stretch: CountStretch,
    objects: Iterable[CountableObject],
    *,
    kind: str,
    index: StretchIndex | None = None,
) -> list[str]:
    """Ids of the objects of ``kind`` in range of ``stretch`` (rules in the module docstring)."""
    for seg_id in stretch.segments:
        if seg_id not in graph.segments:
            msg = f"stretch segment {seg_id!r} is not in the pose graph"
            raise TaskError(msg)
    index = index or StretchIndex(graph)
    exclude = index.excluded(stretch)
    last = len(stretch.segments) - 1
    found = []
    for obj in objects:
        if obj.kind != kind:
            continue
        nearest = math.inf
        for position, seg_id in enumerate(stretch.segments):
            seg = graph.segment(seg_id)
            lo = stretch.start_offset_m if position == 0 else 0.0
            hi = stretch.end_offset_m if position == last else seg.length_m
            offset, dist = seg.project(obj.x_m, obj.y_m)
            inside = lo <= offset <= hi and 1e-6 < offset < seg.length_m - 1e-6
            if inside and stretch.side != "both" and side_of(seg, offset, obj) != stretch.side:
                continue
            if inside:
                nearest = min(nearest, dist)
        if nearest > stretch.lateral_range_m:
            continue
        other = index.nearest_other_m(obj.x_m, obj.y_m, exclude, nearest + 1.0)
        if nearest <= other + _NEARER_TOLERANCE_M:
            found.append(obj.id)
    return sorted(found)
