"""city360.pose_graph: trajectories -> junctions -> segments -> a branching pose graph.

``build_city(city_dir, osm_path=...)`` builds and writes ``graph.json``;
``load_graph(city_dir)`` reads and validates it into a :class:`PoseGraph`. Names are imported on
first use, so ``import city360.pose_graph`` does not pull in scipy or the OSM reader.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOME = {
    "BuildParams": "build",
    "build_city": "build",
    "build_from_tracks": "build",
    "DisconnectedGraphWarning": "graph",
    "Edge": "graph",
    "Node": "graph",
    "PoseGraph": "graph",
    "load_graph": "graph",
    "save_graph": "graph",
    "validate_graph": "graph",
    "Transition": "transitions",
}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        msg = f"module 'city360.pose_graph' has no attribute {name!r}"
        raise AttributeError(msg)
    return getattr(importlib.import_module(f"city360.pose_graph.{module}"), name)
