"""With OSM, a walk whose GPS runs 10-15 m beside a junction's street is still cut at the
junction the map matching turns it through; beyond that, the error says where the walks cross.

Two straight walks cross on a 3 x 3 grid of 100 m blocks: ``east`` along the middle street,
``north`` parallel to the middle avenue but ``offset`` metres to its east (urban-canyon drift).
The OSM junction is the avenue's node at (100, 100); the walks cross at (100 + offset, 100).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from city360.errors import GraphBuildError
from city360.pose_graph import build_city
from tests.pose_graph.walks import grid_streets, write_city, write_osm, write_trajectory


def _crossing(root: Path, offset_m: float) -> tuple[Path, Path]:
    graph = grid_streets(columns=3, rows=3, block_m=100.0, jitter_m=0.0)
    city = write_city(root / "city", graph, [])
    osm = write_osm(graph, root / "grid.osm")
    projection = city.read_manifest().projection
    line = np.linspace(0.0, 200.0, 201)
    write_trajectory(city, "east", np.column_stack([line, np.full(201, 100.0)]), projection)
    north = np.column_stack([np.full(201, 100.0 + offset_m), line])
    write_trajectory(city, "north", north, projection)
    return city.root, osm


@pytest.mark.parametrize("offset_m", [0.0, 11.0, 14.0])
def test_a_walk_matched_through_a_junction_is_cut_there(tmp_path: Path, offset_m: float) -> None:
    city, osm = _crossing(tmp_path, offset_m)
    graph = build_city(city, osm_path=osm, require_frames=False)
    (node,) = [n for n in graph.nodes() if str(n.kind) == "junction"]
    assert np.hypot(node.x_m - 100.0, node.y_m - 100.0) < 2.0  # at the OSM node
    walks_there = {e.trajectory for e in graph.edges() if node.id in (e.u, e.v)}
    assert walks_there == {"east", "north"}


def test_walks_crossing_beyond_reach_of_the_osm_junction_say_where(tmp_path: Path) -> None:
    city, osm = _crossing(tmp_path, 18.0)
    with pytest.raises(GraphBuildError, match=r"though east and north cross near x=118, y=100"):
        build_city(city, osm_path=osm, require_frames=False)
