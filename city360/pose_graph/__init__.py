"""city360.pose_graph: trajectories -> junctions -> segments -> a branching pose graph.

``build_city(city_dir, osm_path=...)`` builds and writes ``graph.json``;
``load_graph(city_dir)`` reads and validates it into a :class:`PoseGraph`.
"""

from __future__ import annotations

from city360.pose_graph.build import BuildParams, build_city, build_from_tracks
from city360.pose_graph.graph import (
    DisconnectedGraphWarning,
    Edge,
    Node,
    PoseGraph,
    load_graph,
    save_graph,
    validate_graph,
)
from city360.pose_graph.transitions import Transition

__all__ = [
    "BuildParams",
    "DisconnectedGraphWarning",
    "Edge",
    "Node",
    "PoseGraph",
    "Transition",
    "build_city",
    "build_from_tracks",
    "load_graph",
    "save_graph",
    "validate_graph",
]
