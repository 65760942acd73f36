"""Distance to a goal along the streets, for the "moving away from the goal" stop rule.

Straight-line distance is the wrong yardstick on a street network: the shortest walk to a goal
behind a block first leads away from it, and the oracle itself would be stopped. So the rule
uses the walking distance over the pose graph's streets (either direction: the agent can turn
round), from the agent's (segment, offset) to the goal's *success region*: every street
position within the task's threshold (metres, Euclidean, as success is scored) of the goal
point, plus the goal's snapped point, so a goal farther than its threshold from every street
still has a target. Measuring to the snapped point alone disagrees with success: the nearest
place that scores may lie on another street than the one the goal snaps to, and walking there
would count as walking away (docs/design-notes.md, "Away-from-goal measures to the success
region").

Each segment is measured on its own polyline, so parallel segments between the same two nodes
(a multigraph) and a street's twin never borrow each other's offsets.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import numpy.typing as npt

from city360.streets import Segment, StreetGraph

__all__ = ["StreetDistance", "disc_intervals"]

_SOURCE = ("region",)
"""The Dijkstra source standing for the whole success region."""


def disc_intervals(
    segment: Segment, centre_xy: tuple[float, float], radius_m: float
) -> list[tuple[float, float]]:
    """Offset intervals ``[(start_m, end_m), ...]`` (sorted, merged, metres along the segment)
    where the segment's polyline lies within ``radius_m`` of ``centre_xy`` (city metres)."""
    if radius_m <= 0:
        return []
    gx, gy = centre_xy
    pieces: list[tuple[float, float]] = []
    xy: npt.NDArray[np.float64] = segment.xy
    cum = segment.cum_m
    for k in range(len(xy) - 1):
        ax, ay = float(xy[k, 0]) - gx, float(xy[k, 1]) - gy
        dx, dy = float(xy[k + 1, 0] - xy[k, 0]), float(xy[k + 1, 1] - xy[k, 1])
        # |a + t d|^2 <= r^2 for t in [0, 1]: a quadratic in t
        a2 = dx * dx + dy * dy
        c = ax * ax + ay * ay - radius_m * radius_m
        if a2 <= 1e-18:
            t_lo, t_hi = (0.0, 1.0) if c <= 0 else (1.0, 0.0)
        else:
            b = ax * dx + ay * dy
            disc = b * b - a2 * c
            if disc < 0:
                continue
            root = math.sqrt(disc)
            t_lo, t_hi = max((-b - root) / a2, 0.0), min((-b + root) / a2, 1.0)
        if t_lo > t_hi:
            continue
        span = float(cum[k + 1] - cum[k])
        pieces.append((float(cum[k]) + t_lo * span, float(cum[k]) + t_hi * span))
    pieces.sort()
    merged: list[tuple[float, float]] = []
    for lo, hi in pieces:
        if merged and lo <= merged[-1][1] + 1e-9:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


class StreetDistance:
    """Walking distance in metres from any pose-graph position to the street positions within
    ``threshold_m`` of ``goal_xy`` (city metres); 0 inside that region. With ``threshold_m``
    0 the region is the goal's snapped point alone."""

    def __init__(
        self, graph: StreetGraph, goal_xy: tuple[float, float], *, threshold_m: float = 0.0
    ) -> None:
        self.graph = graph
        self.threshold_m = float(threshold_m)
        self._region: dict[str, list[tuple[float, float]]] = {}
        for seg in graph.segments.values():
            inside = disc_intervals(seg, goal_xy, self.threshold_m)
            if inside:
                self._region[seg.id] = inside
        goal_id, goal_offset, _ = graph.locate(*goal_xy)
        snapped = self._region.setdefault(goal_id, [])
        if not any(lo <= goal_offset <= hi for lo, hi in snapped):
            snapped.append((goal_offset, goal_offset))
            snapped.sort()
        streets = nx.Graph()
        for seg in graph.segments.values():
            if seg.u == seg.v:
                continue
            old = streets.get_edge_data(seg.u, seg.v)
            if old is None or seg.length_m < old["weight"]:
                streets.add_edge(seg.u, seg.v, weight=seg.length_m)
        # multi-source Dijkstra: one source joined to each segment end by the walk from that
        # end to the region's nearest entry on the segment
        entry: dict[int, float] = {}
        for seg_id, inside in self._region.items():
            seg = graph.segment(seg_id)
            for node, metres in ((seg.u, inside[0][0]), (seg.v, seg.length_m - inside[-1][1])):
                entry[node] = min(entry.get(node, math.inf), max(metres, 0.0))
        for node, metres in entry.items():
            streets.add_edge(_SOURCE, node, weight=metres)
        self._to_region: dict[object, float] = nx.single_source_dijkstra_path_length(
            streets, _SOURCE, weight="weight"
        )

    def __call__(self, segment_id: str, offset_m: float) -> float:
        seg = self.graph.segment(segment_id)
        best = min(
            offset_m + self._to_region.get(seg.u, math.inf),
            max(seg.length_m - offset_m, 0.0) + self._to_region.get(seg.v, math.inf),
        )
        for lo, hi in self._region.get(segment_id, ()):
            if lo <= offset_m <= hi:
                return 0.0
            best = min(best, lo - offset_m if offset_m < lo else offset_m - hi)
        return best
