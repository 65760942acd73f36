"""Street grids as OSM XML, so benchmark cities need no downloaded data.

A ``cols`` x ``rows`` grid of junctions ``spacing_m`` apart, one ``highway=residential`` way
per grid line ("Street r" east-west, "Avenue c" north-south), a short dead-end stub at each
corner (so corners are junctions too) and a building with four named shops in every block. A
single row or column is one straight street with buildings on both sides.
"""

from __future__ import annotations

from pathlib import Path

from city360.geo import LocalProjection
from city360.maps.osm_xml import osm_xml

__all__ = ["GRID_ORIGIN", "write_grid_osm"]

GRID_ORIGIN = (60.17, 24.94)
"""lat, lon of the south-west junction (an arbitrary spot; only distances matter)."""

_SHOPS = (
    ("shop", "bakery", "BAKERY NOVA"),
    ("amenity", "cafe", "CAFE AURORA"),
    ("shop", "books", "BOOK HOUSE"),
    ("amenity", "pharmacy", "CITY PHARMACY"),
    ("shop", "florist", "FLOWER LAB"),
    ("amenity", "restaurant", "PASTA BAR"),
    ("shop", "convenience", "MINI MART"),
    ("amenity", "bank", "NORTH BANK"),
)


def write_grid_osm(
    path: Path,
    *,
    cols: int,
    rows: int,
    spacing_m: float = 40.0,
    stub_m: float = 15.0,
    origin: tuple[float, float] = GRID_ORIGIN,
) -> Path:
    """Write the grid described in the module docstring to ``path`` (OSM XML); return it."""
    if cols < 1 or rows < 1 or cols * rows < 2:
        msg = f"a grid needs at least two junctions, got cols={cols} rows={rows}"
        raise ValueError(msg)
    projection = LocalProjection(*origin)
    nodes: list[tuple[int, float, float, dict[str, str]]] = []
    ways: list[tuple[list[int], dict[str, str]]] = []

    def node(x_m: float, y_m: float, tags: dict[str, str] | None = None) -> int:
        lat, lon = projection.to_latlon(x_m, y_m)
        node_id = 1000 + len(nodes)
        nodes.append((node_id, float(lat), float(lon), tags or {}))
        return node_id

    grid = {(c, r): node(c * spacing_m, r * spacing_m) for r in range(rows) for c in range(cols)}
    if cols > 1:
        for r in range(rows):
            refs = [grid[(c, r)] for c in range(cols)]
            ways.append((refs, {"highway": "residential", "name": f"Street {r + 1}"}))
    if rows > 1:
        for c in range(cols):
            refs = [grid[(c, r)] for r in range(rows)]
            ways.append((refs, {"highway": "residential", "name": f"Avenue {c + 1}"}))
    if cols > 1 and rows > 1 and stub_m > 0:
        diagonal = stub_m / 2**0.5
        for c, r in [(0, 0), (cols - 1, 0), (0, rows - 1), (cols - 1, rows - 1)]:
            dx = -diagonal if c == 0 else diagonal
            dy = -diagonal if r == 0 else diagonal
            end = node(c * spacing_m + dx, r * spacing_m + dy)
            ways.append(([grid[(c, r)], end], {"highway": "residential", "name": "Lane"}))

    half, inset = spacing_m / 2, 8.0
    if cols > 1 and rows > 1:
        centres = [
            (c * spacing_m + half, r * spacing_m + half)
            for r in range(rows - 1)
            for c in range(cols - 1)
        ]
    else:  # one straight street: a block on each side of every stretch
        length = (max(cols, rows) - 1) * spacing_m
        along = [k * spacing_m + half for k in range(round(length / spacing_m))]
        centres = [
            (a, side * (half)) if rows == 1 else (side * half, a)
            for a in along
            for side in (-1.0, 1.0)
        ]
    shop = 0
    for k, (cx, cy) in enumerate(centres):
        size = half - inset
        corners = [
            node(cx - size, cy - size),
            node(cx + size, cy - size),
            node(cx + size, cy + size),
            node(cx - size, cy + size),
        ]
        ways.append(
            ([*corners, corners[0]], {"building": "yes", "building:levels": str(3 + k % 3)})
        )
        for fx, fy in [(0.0, -size), (size, 0.0), (0.0, size), (-size, 0.0)]:
            key, value, name = _SHOPS[shop % len(_SHOPS)]
            shop += 1
            node(cx + fx, cy + fy, {key: value, "name": name})

    numbered = [(way_id, refs, tags) for way_id, (refs, tags) in enumerate(ways, start=1)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(osm_xml(nodes, numbered), encoding="utf-8")
    return path
