"""How streets end at a bbox (``city360.maps._osm_window``, issue 17 "Real capture"): a map's
run to its edge; a twin's end at junctions, never where the crop does."""

from __future__ import annotations

import math
from pathlib import Path

import networkx as nx
import pytest

from city360.errors import ConfigError
from city360.geo import LocalProjection
from city360.maps.osm import BEYOND_EDGE_M, load_osm

LAT0, LON0 = 35.74, 139.67
M_LAT, M_LON = 1 / 111_320.0, 1 / (111_320.0 * math.cos(math.radians(LAT0)))
BBOX = (LAT0 - 50 * M_LAT, LON0 - 10 * M_LON, LAT0 + 10 * M_LAT, LON0 + 100 * M_LON)
"""x from -10 to 100 m, y from -50 to 10 m (metres east and north of LAT0, LON0)."""


def _edge_city(path: Path) -> Path:
    """Three ways, each crossing the window's edge, in metres from (LAT0, LON0):

    - main street, west to east: (0, 0) (20, 0) (50, 0) (60, 0) (140, 0) (200, 0); the window's
      east edge is at x = 100, 40 m past its last node inside;
    - a lane north from (50, 0) through (50, 7) to (50, 150): the north edge (y = 10) cuts it
      10 m from the main street, 3 m past the lane's last node inside;
    - a side street south from (20, 0) to (20, -150): no node of it inside but its junction;
      the south edge (y = -50) cuts it 50 m from the main street;
    - a corner 7 m beyond the south edge, (75, -57), where a street from the main street at
      (60, 0) meets a dead-end street from (95, -20) and a third street runs on south (not in
      the crop the streets are read from, having no node inside: the corner is a bend of one
      way out of the window and back);
    - a dead-end street north from (20, 0) that ends 4 m beyond the north edge, at (20, 14).
    """
    nodes = {
        1: (0, 0), 2: (20, 0), 3: (50, 0), 4: (60, 0), 5: (140, 0), 6: (200, 0),
        11: (50, 7), 12: (50, 150),
        21: (20, -150),
        31: (75, -57), 32: (95, -20), 33: (75, -150),
        41: (20, 14),
    }  # fmt: skip
    ways = {
        100: [1, 2, 3, 4, 5, 6],
        101: [3, 11, 12],
        102: [2, 21],
        103: [4, 31, 32],
        104: [31, 33],
        105: [2, 41],
    }
    lines = ["<?xml version='1.0' encoding='UTF-8'?>", '<osm version="0.6" generator="test">']
    for i, (x, y) in nodes.items():
        lat, lon = LAT0 + y * M_LAT, LON0 + x * M_LON
        lines.append(f'  <node id="{i}" version="1" lat="{lat:.9f}" lon="{lon:.9f}"/>')
    for way_id, refs in ways.items():
        lines.append(f'  <way id="{way_id}" version="1">')
        lines += [f'    <nd ref="{r}"/>' for r in refs]
        lines += ['    <tag k="highway" v="residential"/>', "  </way>"]
    lines.append("</osm>")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _streets(tmp_path: Path, *, edge: str | None = None) -> nx.MultiGraph:
    osm = _edge_city(tmp_path / "edge.osm")
    projection = LocalProjection(LAT0, LON0)
    if edge is None:
        return load_osm(osm, bbox=BBOX, projection=projection).streets
    return load_osm(osm, bbox=BBOX, projection=projection, edge=edge).streets


def _xy(streets: nx.MultiGraph, node: int) -> tuple[float, float]:
    return streets.nodes[node]["x_m"], streets.nodes[node]["y_m"]


def _dead_ends(streets: nx.MultiGraph) -> list[float]:
    """x, y of every dead end, sorted and flattened (to compare with ``pytest.approx``)."""
    ends = sorted(
        (_xy(streets, n) for n in streets if streets.degree(n) == 1),
        key=lambda xy: (round(xy[0]), round(xy[1])),
    )
    return [value for xy in ends for value in xy]


TOLERANCE_M = 0.5
"""Tolerance, metres: the city's projection is transverse Mercator, the test's flat metres
about 0.2 m off 100 m from the origin."""


def test_a_map_s_streets_run_to_the_edge_of_its_bbox(tmp_path: Path) -> None:
    # by default (maps) the main street ends at the east edge (x = 100), not at its last node
    # inside (x = 60); the side street, no node of which lies inside, runs to the south edge
    streets = _streets(tmp_path)
    ends = _dead_ends(streets)
    for x_m, y_m in ((100, 0), (20, -50), (50, 10)):
        assert any(
            ends[i : i + 2] == pytest.approx([x_m, y_m], abs=TOLERANCE_M)
            for i in range(0, len(ends), 2)
        ), (x_m, y_m)
    south, west, north, east = BBOX
    for _, data in streets.nodes(data=True):
        assert south - 1e-9 <= data["lat"] <= north + 1e-9
        assert west - 1e-9 <= data["lon"] <= east + 1e-9


def test_a_twin_s_streets_end_at_junctions_not_where_the_crop_does(tmp_path: Path) -> None:
    # edge="junction": the pieces from the edge to the first junction inside go (the main
    # street east of (60, 0), the side street, the lane: no 7 m stub of it, and the street
    # whose end lies 4 m beyond the edge), so (20, 0) and (50, 0) are no junctions; what is
    # left ends at its real dead ends only
    streets = _streets(tmp_path, edge="junction")
    assert _dead_ends(streets) == pytest.approx([0, 0, 95, -20], abs=TOLERANCE_M)
    assert not [n for n in streets if streets.degree(n) >= 3]
    assert max(y for _, _, d in streets.edges(data=True) for _, y in d["polyline_xy"]) < 1.0


def test_two_streets_meeting_just_beyond_the_edge_go_round_that_corner(tmp_path: Path) -> None:
    # not two dead ends 4 m apart on the south edge (the crossings at x = 73 and 77), nor two
    # pieces dropped: one street from the main street round the corner 7 m beyond the edge
    streets = _streets(tmp_path, edge="junction")
    (street,) = [d for _, _, d in streets.edges(data=True)]
    assert min(y for _, y in street["polyline_xy"]) == pytest.approx(-57, abs=TOLERANCE_M)
    assert street["length_m"] == pytest.approx(
        60 + math.hypot(15, 57) + math.hypot(20, 37), abs=TOLERANCE_M
    )
    south, west, north, east = BBOX
    slack_lat, slack_lon = BEYOND_EDGE_M * M_LAT, BEYOND_EDGE_M * M_LON
    for _, data in streets.nodes(data=True):
        assert south - slack_lat <= data["lat"] <= north + slack_lat
        assert west - slack_lon <= data["lon"] <= east + slack_lon


def test_an_unknown_edge_names_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"edge 'junktion' is not known; expected one of "
                       r"clip, junction\. Did you mean 'junction'\?"):  # fmt: skip
        _streets(tmp_path, edge="junktion")


def test_without_a_bbox_nothing_is_cut(tmp_path: Path) -> None:
    osm = _edge_city(tmp_path / "edge.osm")
    for edge in ("clip", "junction"):
        streets = load_osm(osm, projection=LocalProjection(LAT0, LON0), edge=edge).streets
        assert all(n > 0 for n in streets)
        assert _dead_ends(streets) == pytest.approx(
            [0, 0, 20, -150, 20, 14, 50, 150, 75, -150, 95, -20, 200, 0], abs=TOLERANCE_M
        )
