"""Walkable squares (``area=yes``) in the walk networks: the outline plus straight ways between
the entrances, so a walk across a square has a street to match (issue 17)."""

from __future__ import annotations

from pathlib import Path

import pytest

from city360.maps.osm import load_osm

LAT0, LON0 = 60.17, 24.94
M_LAT, M_LON = 1 / 111_320.0, 1 / (111_320.0 * 0.4975)  # degrees per metre at 60.17 N


def _square_city(path: Path, *, l_shaped: bool = False) -> Path:
    """A 60 x 60 m square (highway=pedestrian, area=yes) with a street entering at the middle
    of each side and a street along the south side; ``l_shaped`` cuts the north-east quarter
    out, so the straight way between the north and east entrances would leave the square."""
    nodes: dict[int, tuple[float, float]] = {}

    def node(i: int, x: float, y: float) -> int:
        nodes[i] = (LAT0 + y * M_LAT, LON0 + x * M_LON)
        return i

    corners = [(0, 0), (60, 0), (60, 60), (0, 60)]
    if l_shaped:
        corners = [(0, 0), (60, 0), (60, 30), (30, 30), (30, 60), (0, 60)]
    ring = [node(10 + k, x, y) for k, (x, y) in enumerate(corners)]
    side_y = 15 if l_shaped else 30  # where the east and north streets enter
    mids = {"south": (30, 0), "east": (60, side_y), "north": (side_y, 60), "west": (0, 30)}
    entrances = {}
    for k, (side, (x, y)) in enumerate(mids.items()):
        entrances[side] = node(20 + k, x, y)
    # put each entrance into the outline, in order along it
    outline: list[int] = []
    pts = [*corners, corners[0]]
    for a, b, ref in zip(pts, pts[1:], [*ring, ring[0]], strict=False):
        outline.append(ref)
        for side, (x, y) in mids.items():
            on_x = min(a[0], b[0]) <= x <= max(a[0], b[0])
            on_y = min(a[1], b[1]) <= y <= max(a[1], b[1])
            if on_x and on_y and (a[0] == b[0] == x or a[1] == b[1] == y) and (x, y) not in (a, b):
                outline.append(entrances[side])
    outline.append(ring[0])
    far = {"south": (30, -80), "east": (140, side_y), "north": (side_y, 140), "west": (-80, 30)}
    ways = []
    for k, (side, (x, y)) in enumerate(far.items()):
        ways.append((100 + k, [node(30 + k, x, y), entrances[side]], "residential"))
    lines = ["<?xml version='1.0' encoding='UTF-8'?>", '<osm version="0.6" generator="test">']
    for i, (lat, lon) in sorted(nodes.items()):
        lines.append(f'  <node id="{i}" version="1" lat="{lat:.8f}" lon="{lon:.8f}"/>')
    for way_id, refs, highway in ways:
        lines.append(f'  <way id="{way_id}" version="1">')
        lines += [f'    <nd ref="{r}"/>' for r in refs]
        lines.append(f'    <tag k="highway" v="{highway}"/>')
        lines.append("  </way>")
    lines.append('  <way id="200" version="1">')
    lines += [f'    <nd ref="{r}"/>' for r in outline]
    lines += ['    <tag k="highway" v="pedestrian"/>', '    <tag k="area" v="yes"/>',
              '    <tag k="name" v="Testitori"/>', "  </way>", "</osm>"]  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _crossings(streets: object) -> list[tuple[int, int]]:
    """Entrance pairs joined by a straight way (the outline's edges bend round corners)."""
    return sorted(
        (min(u, v), max(u, v))
        for u, v, d in streets.edges(data=True)  # type: ignore[attr-defined]
        if d["highway"] == "pedestrian" and len(d["polyline_xy"]) == 2
    )


def test_the_walk_network_crosses_a_square_between_its_entrances(tmp_path: Path) -> None:
    osm = _square_city(tmp_path / "square.osm")
    assert _crossings(load_osm(osm, network="street", all_components=True).streets) == []
    walk = load_osm(osm, network="walk").streets
    # south-north and east-west cross the middle; the four pairs of neighbouring sides cut
    # the corners, inside the square too
    assert _crossings(walk) == [(20, 21), (20, 22), (20, 23), (21, 22), (21, 23), (22, 23)]
    names = {d["name"] for _, _, d in walk.edges(data=True) if d["highway"] == "pedestrian"}
    assert names == {"Testitori"}
    north_south = next(
        d
        for u, v, d in walk.edges(data=True)
        if {u, v} == {20, 22} and d["highway"] == "pedestrian"
    )
    assert north_south["length_m"] == pytest.approx(60.0, abs=0.5)


def test_a_way_that_would_leave_an_l_shaped_square_is_not_made(tmp_path: Path) -> None:
    walk = load_osm(_square_city(tmp_path / "l.osm", l_shaped=True), network="walk").streets
    pairs = _crossings(walk)
    assert (21, 22) not in pairs  # east and north entrances: the straight way cuts the notch
    assert (20, 22) in pairs  # south to north runs inside the L


def test_the_build_reads_the_walk_network_without_squares_when_told(tmp_path: Path) -> None:
    """``load_streets(squares=False)`` (a twin's build, ``accuracy.MAP_AS_SCENE``) keeps the
    four streets and drops the square's outline and the ways across it, which the synth scene
    never had; by default the walk network has them."""
    from city360.geo import LocalProjection
    from city360.pose_graph.osm_match import load_streets

    osm = _square_city(tmp_path / "square.osm")
    projection = LocalProjection(LAT0, LON0)
    walk = load_streets(osm, projection, network="walk")
    as_scene = load_streets(osm, projection, network="walk", squares=False)
    assert len(as_scene.edge_length_m) == 4  # the four streets up to their entrances
    assert len(walk.edge_length_m) > 4 + 6  # and the outline's pieces and six crossings
