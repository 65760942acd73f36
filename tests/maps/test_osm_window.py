"""A bbox crop cuts streets at the window's edge, and drops pieces shorter than
``EDGE_STUB_MIN_M`` cut off there (``city360.maps._osm_window``, issue 17 "Real capture")."""

from __future__ import annotations

import math
from pathlib import Path

import networkx as nx
import pytest

from city360.geo import LocalProjection
from city360.maps.osm import EDGE_STUB_MIN_M, load_osm

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
      way out of the window and back).
    """
    nodes = {
        1: (0, 0), 2: (20, 0), 3: (50, 0), 4: (60, 0), 5: (140, 0), 6: (200, 0),
        11: (50, 7), 12: (50, 150),
        21: (20, -150),
        31: (75, -57), 32: (95, -20), 33: (75, -150),
    }  # fmt: skip
    ways = {
        100: [1, 2, 3, 4, 5, 6],
        101: [3, 11, 12],
        102: [2, 21],
        103: [4, 31, 32],
        104: [31, 33],
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


@pytest.fixture
def edge_streets(tmp_path: Path) -> nx.MultiGraph:
    osm = _edge_city(tmp_path / "edge.osm")
    return load_osm(osm, bbox=BBOX, projection=LocalProjection(LAT0, LON0)).streets


def _xy(streets: nx.MultiGraph, node: int) -> tuple[float, float]:
    return streets.nodes[node]["x_m"], streets.nodes[node]["y_m"]


def _dead_ends(streets: nx.MultiGraph) -> list[float]:
    """x, y of every dead end, sorted and flattened (to compare with ``pytest.approx``)."""
    ends = sorted(_xy(streets, n) for n in streets if streets.degree(n) == 1)
    return [value for xy in ends for value in xy]


TOLERANCE_M = 0.5
"""Tolerance, metres: the city's projection is transverse Mercator, the test's flat metres
about 0.2 m off 100 m from the origin."""


def test_a_street_leaving_the_window_runs_to_its_edge(edge_streets: nx.MultiGraph) -> None:
    # the main street ends at the east edge (x = 100), not at its last node inside (x = 60),
    # and the side street, no node of which lies inside, runs 50 m south to the south edge
    assert _dead_ends(edge_streets) == pytest.approx(
        [0, 0, 20, -50, 95, -20, 100, 0], abs=TOLERANCE_M
    )
    corner_m = math.hypot(15, 57) + math.hypot(20, 37)
    assert sum(d["length_m"] for _, _, d in edge_streets.edges(data=True)) == pytest.approx(
        150.0 + corner_m, abs=TOLERANCE_M
    )


def test_two_streets_meeting_just_beyond_the_edge_go_round_that_corner(
    edge_streets: nx.MultiGraph,
) -> None:
    # not two dead ends 4 m apart on the south edge (their crossings, x = 73 and 77), but
    # one street from the main street round the corner 7 m beyond it to the dead end inside
    from_main = [
        d for u, v, d in edge_streets.edges(data=True)
        if _xy(edge_streets, u) == pytest.approx((60, 0), abs=TOLERANCE_M)
        or _xy(edge_streets, v) == pytest.approx((60, 0), abs=TOLERANCE_M)
    ]  # fmt: skip
    round_corner = [d for d in from_main if min(y for _, y in d["polyline_xy"]) < -50]
    assert len(round_corner) == 1
    assert min(y for _, y in round_corner[0]["polyline_xy"]) == pytest.approx(-57, abs=0.5)
    assert round_corner[0]["length_m"] == pytest.approx(
        math.hypot(15, 57) + math.hypot(20, 37), abs=TOLERANCE_M
    )


def test_a_piece_cut_off_at_the_edge_under_the_floor_is_dropped(
    edge_streets: nx.MultiGraph,
) -> None:
    # the lane's 10 m to the north edge is no street of the window: the main street runs
    # straight through (50, 0), which is no junction
    assert EDGE_STUB_MIN_M > 10.0
    junctions = sorted(_xy(edge_streets, n) for n in edge_streets if edge_streets.degree(n) >= 3)
    assert [value for xy in junctions for value in xy] == pytest.approx(
        [20, 0, 60, 0], abs=TOLERANCE_M
    )
    assert all(y_m < 9.0 for _, y_m in (_xy(edge_streets, n) for n in edge_streets))


def test_every_street_node_lies_inside_the_window_or_a_few_metres_beyond(
    edge_streets: nx.MultiGraph,
) -> None:
    south, west, north, east = BBOX
    slack_lat, slack_lon = EDGE_STUB_MIN_M * M_LAT, EDGE_STUB_MIN_M * M_LON
    for _, data in edge_streets.nodes(data=True):
        assert south - slack_lat <= data["lat"] <= north + slack_lat
        assert west - slack_lon <= data["lon"] <= east + slack_lon


def test_without_a_bbox_nothing_is_cut(tmp_path: Path) -> None:
    osm = _edge_city(tmp_path / "edge.osm")
    streets = load_osm(osm, projection=LocalProjection(LAT0, LON0)).streets
    assert all(n > 0 for n in streets)
    assert _dead_ends(streets) == pytest.approx(
        [0, 0, 20, -150, 50, 150, 75, -150, 95, -20, 200, 0], abs=TOLERANCE_M
    )
