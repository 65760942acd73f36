"""Summary figures of a pose graph, for ``city360 info`` and ``city.json`` ``stats``.

The branching degree of a node is the number of streets meeting there; the mean branching degree
is ``2 * streets / nodes`` (the figure the reference benchmark reports: 193 nodes, 305 edges,
3.16). With an OSM street network, ``osm_coverage`` is the share of its street length within
``COVERAGE_RADIUS_M`` of some pose.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from city360.pose_graph.graph import PoseGraph
from city360.pose_graph.tracks import Track

if TYPE_CHECKING:
    from city360.pose_graph.osm_match import OsmStreets

__all__ = ["COVERAGE_RADIUS_M", "graph_stats"]

COVERAGE_RADIUS_M = 10.0
"""An OSM street point counts as filmed when a pose lies this close."""


def graph_stats(
    pose_graph: PoseGraph, *, osm: OsmStreets | None = None, tracks: Sequence[Track] = ()
) -> dict[str, Any]:
    """Counts and lengths of ``pose_graph``; OSM coverage when ``osm`` and ``tracks`` given."""
    graph = pose_graph.graph
    kinds = [d["kind"] for _, d in graph.nodes(data=True)]
    edges = list(pose_graph.edges())
    streets: dict[int, float] = {}
    for edge in edges:
        if edge.primary:
            streets[edge.street] = max(streets.get(edge.street, 0.0), edge.length_m)
    nodes = graph.number_of_nodes()
    primary = [e for e in edges if e.primary]
    junctions = [n for n, d in graph.nodes(data=True) if d["kind"] == "junction"]
    stats: dict[str, Any] = {
        "nodes": nodes,
        "junctions": kinds.count("junction"),
        "dead_ends": kinds.count("dead_end"),
        "links": kinds.count("link"),
        "streets": len(streets),
        "edges": len(primary),
        "segments": len(edges),
        "reverse_edges": sum(e.reverse for e in edges),
        "mean_branching_degree": round(2.0 * len(streets) / nodes, 3) if nodes else 0.0,
        "mean_junction_degree": round(
            float(np.mean([graph.nodes[n]["degree"] for n in junctions])), 3
        )
        if junctions
        else 0.0,
        "connected_components": len(pose_graph.components()),
        "total_length_m": round(sum(streets.values()), 1),
        "trajectories": len({e.trajectory for e in edges}),
    }
    if osm is not None and tracks:
        from city360.pose_graph.osm_match import coverage

        covered, total = coverage(osm, tracks, radius_m=COVERAGE_RADIUS_M)
        stats["osm_street_length_m"] = round(total, 1)
        stats["osm_covered_length_m"] = round(covered, 1)
        stats["osm_coverage"] = round(covered / total, 4) if total > 0 else 0.0
    return stats
