"""Distance to a goal along the streets, for the "moving away from the goal" stop rule.

Straight-line distance is the wrong yardstick on a street network: the shortest walk to a goal
behind a block first leads away from it, and the oracle itself would be stopped. So the rule
uses the walking distance over the pose graph's streets (either direction: the agent can turn
round), from the agent's (segment, offset) to the goal's.
"""

from __future__ import annotations

import math

import networkx as nx

from city360.streets import StreetGraph

__all__ = ["StreetDistance"]


class StreetDistance:
    """Walking distance in metres from any pose-graph position to one goal point."""

    def __init__(self, graph: StreetGraph, goal_xy: tuple[float, float]) -> None:
        self.graph = graph
        segment_id, offset, _ = graph.locate(*goal_xy)
        goal_segment = graph.segment(segment_id)
        self._goal = (goal_segment.u, goal_segment.v, offset, goal_segment.length_m)
        streets = nx.Graph()
        for seg in graph.segments.values():
            if seg.u == seg.v:
                continue
            old = streets.get_edge_data(seg.u, seg.v)
            if old is None or seg.length_m < old["weight"]:
                streets.add_edge(seg.u, seg.v, weight=seg.length_m)
        goal_node = ("goal",)
        streets.add_edge(goal_segment.u, goal_node, weight=offset)
        streets.add_edge(goal_segment.v, goal_node, weight=max(goal_segment.length_m - offset, 0))
        self._to_goal: dict[object, float] = nx.single_source_dijkstra_path_length(
            streets, goal_node, weight="weight"
        )

    def __call__(self, segment_id: str, offset_m: float) -> float:
        seg = self.graph.segment(segment_id)
        u, v, goal_offset, goal_length = self._goal
        best = min(
            offset_m + self._to_goal.get(seg.u, math.inf),
            max(seg.length_m - offset_m, 0.0) + self._to_goal.get(seg.v, math.inf),
        )
        if {seg.u, seg.v} == {u, v}:  # on the goal's street, in either direction
            along = offset_m if seg.u == u else goal_length - offset_m
            best = min(best, abs(goal_offset - along))
        return best
