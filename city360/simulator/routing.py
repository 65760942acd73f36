"""Shortest routes over the controller's own moves, for the route-guidance overlay.

A route is a list of segment ids the controller can walk in order: from a segment to one of
the transitions offered at its end, or to its twin (turning round and walking back). Edge
weights are the target segment's length, so the route is the shortest walk in metres.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from city360.simulator.world import World

__all__ = ["RoutePlanner"]


class RoutePlanner:
    """Plans routes on a :class:`World`; the move graph is built once."""

    def __init__(self, world: World) -> None:
        self.world = world
        graph: nx.DiGraph = nx.DiGraph()
        for segment in world.iter_segments():
            graph.add_node(segment.id)
            for transition in segment.choices:
                target = world.segment(transition.edge)
                graph.add_edge(segment.id, target.id, weight=target.walk_m)
            if segment.twin is not None:
                twin = world.segment(segment.twin)
                graph.add_edge(segment.id, twin.id, weight=twin.walk_m)
        self.graph = graph

    def goal_segment(self, x_m: float, y_m: float) -> str:
        """The segment whose frames pass nearest to the goal point."""
        best_id, best = "", np.inf
        for segment in self.world.iter_segments():
            distance = float(np.min(np.hypot(segment.x_m - x_m, segment.y_m - y_m)))
            if distance < best:
                best_id, best = segment.id, distance
        return best_id

    def plan(self, start_segment: str, goal_x_m: float, goal_y_m: float) -> list[str] | None:
        """Segments from ``start_segment`` to the one nearest the goal, or None if unreachable."""
        goal = self.goal_segment(goal_x_m, goal_y_m)
        try:
            route: list[str] = nx.shortest_path(self.graph, start_segment, goal, weight="weight")
        except nx.NetworkXNoPath:
            return None
        return route
