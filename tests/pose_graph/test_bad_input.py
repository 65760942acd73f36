"""Inputs a build must refuse with a clear error, writing no graph.json."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from city360.city import CityDir
from city360.errors import CityFormatError, GraphBuildError, InputFileError, OsmError
from city360.geo import LocalProjection
from city360.pose_graph import build_city
from tests.pose_graph.walks import ORIGIN, grid_streets, write_city, write_osm, write_trajectory


def _straight(x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    n = int(np.hypot(x1 - x0, y1 - y0)) + 1
    return np.column_stack([np.linspace(x0, x1, n), np.linspace(y0, y1, n)])


def _empty_city(root: Path) -> CityDir:
    graph = grid_streets(columns=2, rows=2, block_m=200.0, jitter_m=0.0)
    return write_city(root, graph, [])


def test_no_trajectories(tmp_path: Path) -> None:
    city = _empty_city(tmp_path / "c")
    with pytest.raises(GraphBuildError, match=r"trajectories: no trajectories found; add some"):
        build_city(city.root, require_frames=False)
    assert not city.graph_path.exists()


def test_trajectories_that_never_meet(tmp_path: Path) -> None:
    city = _empty_city(tmp_path / "c")
    projection = city.read_manifest().projection
    write_trajectory(city, "north", _straight(0, 150, 200, 150), projection)
    write_trajectory(city, "south", _straight(200, 20, 0, 20), projection)
    with pytest.raises(GraphBuildError, match=r"the 2 trajectories never meet.*north \(200 m"):
        build_city(city.root, require_frames=False)
    assert not city.graph_path.exists()


def test_trajectory_projected_with_another_crs(tmp_path: Path) -> None:
    city = _empty_city(tmp_path / "c")
    projection = city.read_manifest().projection
    write_trajectory(city, "good", _straight(0, 100, 200, 100), projection)
    elsewhere = LocalProjection(ORIGIN[0] + 0.01, ORIGIN[1] + 0.01)
    # x/y in the city CRS but lat/lon computed with another origin: the two disagree
    write_trajectory(city, "bad", _straight(100, 0, 100, 200), elsewhere)
    with pytest.raises(CityFormatError, match=r"bad/poses.csv: x_m/y_m do not match lat/lon"):
        build_city(city.root, require_frames=False)


def test_trajectory_filmed_somewhere_else(tmp_path: Path) -> None:
    city = _empty_city(tmp_path / "c")
    projection = city.read_manifest().projection
    write_trajectory(city, "here", _straight(0, 100, 200, 100), projection)
    write_trajectory(city, "away", _straight(50_000, 0, 50_200, 0), projection)
    with pytest.raises(GraphBuildError, match=r"trajectory 'away' lies up to 4\d\.\d km outside"):
        build_city(city.root, require_frames=False)


def test_osm_extract_of_another_place(walk_city: Callable[[str], Path], tmp_path: Path) -> None:
    city = walk_city("both")
    other = write_osm(grid_streets(), tmp_path / "other.osm", origin=(ORIGIN[0] + 0.05, ORIGIN[1]))
    manifest_before = (city / "city.json").read_bytes()
    with pytest.raises(
        OsmError,
        match=r"other.osm does not cover the city .*: the city lies in .* \(S,W,N,E\) and the "
        r"extract covers .*; pass the extract of this city's area",
    ):
        build_city(city, osm_path=other, require_frames=False)
    assert not (city / "graph.json").exists()
    assert not (city / "map" / "extract.osm").exists()  # a failed build changes nothing
    assert (city / "city.json").read_bytes() == manifest_before


def test_osm_extract_with_a_hole_where_the_city_is(
    walk_city: Callable[[str], Path], tmp_path: Path
) -> None:
    """An extract whose nodes span the city but none lies near it (cut around another part of
    that span, ways kept whole): saying it "covers" a span holding the city told the user
    nothing; the message says no node lies near the city."""
    city = walk_city("both")
    lat0, lon0 = ORIGIN
    holed = tmp_path / "holed.osm"
    holed.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<osm version="0.6" generator="tests">\n'
        f'  <node id="1" version="1" lat="{lat0 - 0.05}" lon="{lon0 - 0.05}"/>\n'
        f'  <node id="2" version="1" lat="{lat0 + 0.05}" lon="{lon0 + 0.05}"/>\n'
        '  <way id="1" version="1"><nd ref="1"/><nd ref="2"/>'
        '<tag k="highway" v="residential"/></way>\n</osm>\n'
    )
    with pytest.raises(
        OsmError,
        match=r"holed.osm has no map data within 250 m of the city .*: the city lies in .* "
        r"\(S,W,N,E\) and the extract's 2 nodes span .*, none of them near the city; pass "
        r"an extract that includes this city's area",
    ):
        build_city(city, osm_path=holed, require_frames=False)
    assert not (city / "graph.json").exists()


def test_missing_osm_file(walk_city: Callable[[str], Path], tmp_path: Path) -> None:
    city = walk_city("both")
    with pytest.raises(InputFileError, match=r"nothing\.osm"):
        build_city(city, osm_path=tmp_path / "nothing.osm", require_frames=False)
