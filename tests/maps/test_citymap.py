"""A city's cached base map and every map image drawn from it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from city360.city import CityDir, CityManifest, SourceFile
from city360.errors import CityFormatError, InputFileError, OsmError
from city360.maps.basemap import STREET_RGB
from city360.maps.citymap import BASEMAP_NAME, MAP_JSON_NAME, CityMap, load_map_meta
from city360.maps.draw import ARROW_RGB, GOAL_RGB, LANDMARK_RGB, START_RGB, TRAIL_RGB
from city360.maps.geotransform import GeoTransform
from city360.maps.osm import OsmData
from city360.types import Image

Ocr = Callable[[Image], str]


@pytest.fixture(scope="module")
def osm_map(osm_city: tuple[Path, OsmData]) -> CityMap:
    return CityMap.open(osm_city[0])


@pytest.fixture(scope="module")
def plain_map(plain_city: tuple[Path, OsmData]) -> CityMap:
    return CityMap.open(plain_city[0])


def _mask(image: Image, color: tuple[int, int, int]) -> np.ndarray:
    return np.all(image == np.array(color, dtype=np.uint8), axis=2)


def _centroid(image: Image, color: tuple[int, int, int]) -> tuple[float, float]:
    rows, cols = np.nonzero(_mask(image, color))
    assert len(rows) > 20, f"no {color} pixels"
    return float(cols.mean()), float(rows.mean())


def _share_on_streets(
    image: Image, transform: GeoTransform, x_m: np.ndarray, y_m: np.ndarray, radius_px: int = 3
) -> float:
    """Share of the points with a pure street-coloured pixel within ``radius_px``."""
    white = _mask(image, STREET_RGB)
    cols, rows = transform.xy_to_px(x_m, y_m)
    hits = 0
    for col, row in zip(np.round(cols).astype(int), np.round(rows).astype(int), strict=True):
        r0, c0 = max(row - radius_px, 0), max(col - radius_px, 0)
        window = white[r0 : row + radius_px + 1, c0 : col + radius_px + 1]
        hits += bool(window.any())
    return hits / len(cols)


# the cached base map -------------------------------------------------------------------------
def test_base_map_is_cached_with_its_geotransform(
    osm_map: CityMap, osm_city: tuple[Path, OsmData]
) -> None:
    root = osm_city[0]
    meta = load_map_meta(root)
    assert (root / "map" / BASEMAP_NAME).is_file()
    assert meta.attribution == "© OpenStreetMap contributors"
    assert meta.layers["source"] == "osm"
    assert meta.layers["buildings"] > 20
    assert meta.transform == osm_map.transform
    assert osm_map.image.shape == (osm_map.transform.height, osm_map.transform.width, 3)
    assert meta.area["source"] == "graph positions"
    assert "grown by" in meta.area["rule"]
    stamp = (root / "map" / MAP_JSON_NAME).stat().st_mtime_ns
    again = CityMap.open(root)
    assert (root / "map" / MAP_JSON_NAME).stat().st_mtime_ns == stamp  # reused, not redrawn
    assert np.array_equal(again.image, osm_map.image)
    assert again.grid == osm_map.grid


def test_stale_cache_is_redrawn(
    plain_map: CityMap, plain_city: tuple[Path, OsmData], tmp_path: Path
) -> None:
    root = tmp_path / "city"
    shutil.copytree(plain_city[0], root)
    first = CityMap.open(root)
    assert first.meta.inputs == plain_map.meta.inputs  # a moved city keeps its cache
    graph = json.loads((root / "graph.json").read_text(encoding="utf-8"))
    for node in graph["nodes"]:
        node["x_m"] += 30.0  # the graph moved: the area and grid must follow
    (root / "graph.json").write_text(json.dumps(graph), encoding="utf-8")
    second = CityMap.open(root)
    assert second.area.x_max_m > first.area.x_max_m + 25.0
    assert load_map_meta(root).inputs != first.meta.inputs


def test_street_nodes_fall_on_drawn_streets(
    osm_map: CityMap, osm_city: tuple[Path, OsmData]
) -> None:
    streets = osm_city[1].streets
    x_m = np.array([d["x_m"] for _, d in streets.nodes(data=True)])
    y_m = np.array([d["y_m"] for _, d in streets.nodes(data=True)])
    assert len(x_m) >= 20
    assert _share_on_streets(osm_map.image, osm_map.transform, x_m, y_m) >= 0.95
    # and the check can fail: the same points shifted by 30 m mostly miss
    assert _share_on_streets(osm_map.image, osm_map.transform, x_m + 30, y_m + 30) < 0.8


def test_junctions_of_a_synthetic_city_fall_on_drawn_streets(synth_city_poses: Path) -> None:
    from city360.synth.groundtruth import SceneTruth

    citymap = CityMap.open(synth_city_poses)
    truth = SceneTruth.load(CityDir(synth_city_poses).groundtruth_dir / "scene.json")
    x_m = np.array([j.x_m for j in truth.junctions])
    y_m = np.array([j.y_m for j in truth.junctions])
    assert len(x_m) >= 6
    assert _share_on_streets(citymap.image, citymap.transform, x_m, y_m) >= 0.95
    lat = np.array([j.lat for j in truth.junctions])
    lon = np.array([j.lon for j in truth.junctions])
    cols, rows = citymap.transform.latlon_to_px(lat, lon)
    cols_xy, rows_xy = citymap.transform.xy_to_px(x_m, y_m)
    assert np.allclose(cols, cols_xy, atol=0.05)
    assert np.allclose(rows, rows_xy, atol=0.05)


def test_city_without_osm_is_drawn_from_its_trajectories(
    plain_map: CityMap, plain_city: tuple[Path, OsmData]
) -> None:
    root = plain_city[0]
    assert plain_map.meta.layers["source"] == "graph"
    assert plain_map.meta.layers["buildings"] == 0
    city = CityDir(root)
    xs, ys = [], []
    for trajectory_id in city.trajectory_ids()[:20]:
        poses = city.read_poses(trajectory_id)
        xs.append(poses.x_m)
        ys.append(poses.y_m)
    x_m, y_m = np.concatenate(xs), np.concatenate(ys)
    assert _share_on_streets(plain_map.image, plain_map.transform, x_m, y_m, radius_px=1) >= 0.99


def test_area_and_grid_cover_the_graph(osm_map: CityMap, osm_city: tuple[Path, OsmData]) -> None:
    streets = osm_city[1].streets
    for _, data in streets.nodes(data=True):
        assert osm_map.grid.contains(data["x_m"], data["y_m"])
    assert osm_map.grid.n == 5
    assert osm_map.area.margin_m >= 20.0
    x0, y0, x1, y1 = osm_map.transform.extent_m
    assert x0 < osm_map.area.x_min_m
    assert x1 > osm_map.area.x_max_m
    assert y0 < osm_map.area.y_min_m
    assert y1 > osm_map.area.y_max_m


# location map --------------------------------------------------------------------------------
def test_location_map_centres_the_agent(osm_map: CityMap, osm_city: tuple[Path, OsmData]) -> None:
    node = next(iter(osm_city[1].streets.nodes(data=True)))[1]
    image, transform = osm_map.location_map_with_transform(
        node["x_m"], node["y_m"], 90.0, size_px=256
    )
    assert image.shape == (256, 256, 3)
    col, row = transform.xy_to_px(node["x_m"], node["y_m"])
    assert float(col) == pytest.approx(127.5, abs=0.5)
    assert float(row) == pytest.approx(127.5, abs=0.5)
    red_col, red_row = _centroid(image, ARROW_RGB)
    # the arrowhead's area centroid lies a little ahead of the position, along the heading
    assert red_col - float(col) == pytest.approx(1.5, abs=2.5)
    assert red_row == pytest.approx(float(row), abs=1.0)
    # the crop is the base map: away from the arrow and the stamp, pixels equal the base
    base_col, base_row = osm_map.transform.xy_to_px(node["x_m"], node["y_m"])
    c0 = round(float(base_col) - 127.5)
    r0 = round(float(base_row) - 127.5)
    assert np.array_equal(image[:60, :60], osm_map.image[r0 : r0 + 60, c0 : c0 + 60])


def test_location_map_scale_trail_and_edges(osm_map: CityMap) -> None:
    x_m, y_m = osm_map.grid.cell_centre(3, 3)
    trail = [(x_m - 40.0, y_m), (x_m - 20.0, y_m), (x_m, y_m)]
    image, transform = osm_map.location_map_with_transform(
        x_m, y_m, 0.0, size_px=200, metres_per_px=1.0, trail=trail
    )
    assert image.shape == (200, 200, 3)
    assert transform.metres_per_px == 1.0
    trail_cols, _trail_rows = np.nonzero(_mask(image, TRAIL_RGB).T)
    assert len(trail_cols) > 20
    assert trail_cols.min() == pytest.approx(float(transform.xy_to_px(x_m - 40.0, y_m)[0]), abs=3)
    # far outside the base map: background, the arrow, the attribution, no error
    far = osm_map.location_map(x_m + 5000.0, y_m, 180.0, size_px=64)
    assert far.shape == (64, 64, 3)
    assert _mask(far, ARROW_RGB).sum() > 10


def test_location_map_pixels_match_geotransform_at_other_scales(
    osm_map: CityMap, osm_city: tuple[Path, OsmData]
) -> None:
    """A resampled level keeps an exact geotransform: street nodes stay on streets."""
    streets = osm_city[1].streets
    x_m = np.array([d["x_m"] for _, d in streets.nodes(data=True)])
    y_m = np.array([d["y_m"] for _, d in streets.nodes(data=True)])
    centre = (float(x_m.mean()), float(y_m.mean()))
    for scale in (1.0, 0.8, 0.6):
        image, transform = osm_map.location_map_with_transform(
            *centre, 0.0, size_px=600, metres_per_px=scale
        )
        cols, rows = transform.xy_to_px(x_m, y_m)
        inside = (cols > 5) & (cols < 595) & (rows > 5) & (rows < 560)
        inside &= np.hypot(cols - 299.5, rows - 299.5) > 30  # not under the arrow
        assert inside.sum() >= 5
        share = _share_on_streets(image, transform, x_m[inside], y_m[inside])
        assert share >= 0.95, scale
        lat, lon = transform.px_to_latlon(10.0, 20.0)
        assert transform.latlon_to_px(lat, lon) == pytest.approx((10.0, 20.0), abs=1e-6)


# grid, route, landmark -----------------------------------------------------------------------
@pytest.mark.ocr
def test_grid_map_labels_cells(osm_map: CityMap, ocr_text: Ocr) -> None:
    image, transform = osm_map.grid_map_with_transform(size_px=800)
    assert max(image.shape[:2]) == pytest.approx(800, abs=1)
    x_min, _, _, y_max = osm_map.grid.cell_bounds(2, 3)
    col, row = transform.xy_to_px(x_min, y_max)
    c, r = round(float(col)), round(float(row))
    # the label starts past the grid line: read it without the line, which OCR takes for a
    # glyph ("/x:2", or "bxe2" once the fixture city's streets ran to its crop's edge)
    label = ocr_text(image[r : r + 30, c + 2 : c + 92])
    assert "x:2 y:3" in label
    assert "x:4 y:1" not in label
    # grid lines are dark where the grid says
    line = image[r + 40 : r + 60, c - 1 : c + 2]
    assert (line.max(axis=2) < 90).any(axis=1).all()


def test_grid_map_with_other_n(osm_map: CityMap) -> None:
    image, transform = osm_map.grid_map_with_transform(n=3, size_px=600)
    grid = osm_map.grid.with_n(3)
    col, _ = transform.xy_to_px(grid.x_min_m + grid.cell_width_m, grid.y_max_m)
    _, row = transform.xy_to_px(grid.x_min_m, (grid.y_min_m + grid.y_max_m) / 2 + 7.0)
    column = image[round(float(row)) : round(float(row)) + 5, round(float(col))]
    assert (column.max(axis=1) < 90).all()


def test_route_map_markers(osm_map: CityMap, osm_city: tuple[Path, OsmData]) -> None:
    nodes = list(osm_city[1].streets.nodes(data=True))
    start = (nodes[0][1]["x_m"], nodes[0][1]["y_m"])
    goal = (nodes[-1][1]["x_m"], nodes[-1][1]["y_m"])
    image, transform = osm_map.route_map_with_transform(start, goal, size_px=800)
    for point, color in ((start, START_RGB), (goal, GOAL_RGB)):
        expected = transform.xy_to_px(*point)
        assert _centroid(image, color) == pytest.approx(
            (float(expected[0]), float(expected[1])), abs=0.6
        )


def test_landmark_at_known_latlon_lands_on_expected_pixel(osm_map: CityMap) -> None:
    lat, lon = 60.16765, 24.94480  # Esplanadi park
    x_m, y_m = osm_map.projection.to_xy(lat, lon)
    image, transform = osm_map.landmark_map_with_transform(float(x_m), float(y_m), size_px=700)
    col, row = transform.latlon_to_px(lat, lon)
    assert _centroid(image, LANDMARK_RGB) == pytest.approx((float(col), float(row)), abs=0.6)
    # the area view's pixel grid: its left edge is at the area's west edge (within a pixel)
    assert transform.extent_m[0] == pytest.approx(osm_map.area.x_min_m, abs=transform.metres_per_px)


@pytest.mark.ocr
def _corner_text(images: list[Image], ocr_text: Ocr) -> str:
    """Tesseract over the bottom-right corners of ``images``, stacked with gaps (one run)."""
    corners = []
    for image in images:
        corner = np.full((50, 300, 3), 242, dtype=np.uint8)
        part = image[-30:, -300:]
        corner[: part.shape[0], 300 - part.shape[1] :] = part
        corners.append(corner)
    return ocr_text(np.vstack(corners))


def _every_image(citymap: CityMap) -> list[Image]:
    x_m, y_m = citymap.grid.cell_centre(2, 2)
    return [
        citymap.image,
        citymap.area_map(size_px=600),
        citymap.grid_map(size_px=600),
        citymap.route_map((x_m, y_m), citymap.grid.cell_centre(4, 4), size_px=600),
        citymap.landmark_map(x_m, y_m, size_px=600, label="Kappeli"),
        citymap.location_map(x_m, y_m, 30.0),
        citymap.location_map(x_m, y_m, 30.0, metres_per_px=1.0),
    ]


def test_attribution_on_every_image_of_osm_data(
    osm_map: CityMap, plain_city: tuple[Path, OsmData], tmp_path: Path, ocr_text: Ocr
) -> None:
    # a city drawn from its graph whose city.json says it was made from OSM (a synthetic twin,
    # a build --osm whose extract was removed) is OSM data too
    root = tmp_path / "city"
    shutil.copytree(plain_city[0], root)
    shutil.rmtree(root / "map", ignore_errors=True)
    city = CityDir(root)
    manifest = city.read_manifest()
    source = SourceFile(kind="osm", path="map/extract.osm", sha256="0" * 64)
    city.write_manifest(manifest.model_copy(update={"sources": [source]}))
    from_osm = CityMap.open(root)
    assert from_osm.meta.layers["source"] != "osm"
    assert from_osm.meta.attribution == "© OpenStreetMap contributors"
    images = _every_image(osm_map) + _every_image(from_osm)
    text = _corner_text(images, ocr_text)
    assert text.count("OpenStreetMap contributors") == len(images), text


def test_no_osm_credit_on_a_city_drawn_from_its_own_walks(
    plain_map: CityMap, plain_city: tuple[Path, OsmData], ocr_text: Ocr
) -> None:
    # city.json lists no OSM source: the streets are the user's own, and the licence asks
    # for the credit only where OSM data is shown
    assert CityDir(plain_city[0]).read_manifest().sources == []
    assert plain_map.meta.attribution is None
    assert load_map_meta(plain_city[0]).attribution is None
    text = _corner_text(_every_image(plain_map), ocr_text)
    assert "OpenStreetMap" not in text, text


# bad input -----------------------------------------------------------------------------------
def _bare_city(root: Path, osm_city: tuple[Path, OsmData]) -> Path:
    root.mkdir()
    manifest = CityDir(osm_city[0]).read_manifest()
    CityDir(root).write_manifest(CityManifest(**{**manifest.model_dump(), "sources": []}))
    return root


def test_not_a_city(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match=r"city\.json not found: .* is not a city directory"):
        CityMap.open(tmp_path)


def test_nothing_to_draw(tmp_path: Path, osm_city: tuple[Path, OsmData]) -> None:
    root = _bare_city(tmp_path / "bare", osm_city)
    with pytest.raises(CityFormatError, match=r"no graph\.json, no trajectories and no OSM"):
        CityMap.open(root)


def test_missing_osm_file(tmp_path: Path, osm_city: tuple[Path, OsmData]) -> None:
    missing = tmp_path / "gone.osm.pbf"
    with pytest.raises(InputFileError, match=rf"OSM file {missing} does not exist"):
        CityMap.open(osm_city[0], osm=missing)


def test_osm_that_does_not_overlap_the_city(
    tmp_path: Path, osm_city: tuple[Path, OsmData], shared_data: Path
) -> None:
    root = tmp_path / "city"
    shutil.copytree(osm_city[0], root)
    CityMap.open(root)  # the cache this test keeps (the shared fixture's may not be drawn yet)
    tokyo = shared_data / "osm" / "tokyo_nerima.osm"
    with pytest.raises(OsmError, match=rf"OSM extract {tokyo} does not overlap bbox 60\.16"):
        CityMap.open(root, osm=tokyo)
    assert load_map_meta(root).layers["source"] == "osm"  # the old cache is untouched


def test_corrupt_osm(tmp_path: Path, osm_city: tuple[Path, OsmData]) -> None:
    root = tmp_path / "city"
    shutil.copytree(osm_city[0], root)
    extract = root / "map" / "extract.osm"
    extract.write_bytes(extract.read_bytes()[:5000])
    with pytest.raises(OsmError, match=rf"OSM file {extract} cannot be read .*corrupt"):
        CityMap.open(root, rebuild=True)


def test_osm_without_streets(tmp_path: Path, osm_city: tuple[Path, OsmData]) -> None:
    root = tmp_path / "city"
    shutil.copytree(osm_city[0], root)
    extract = root / "map" / "extract.osm"
    extract.write_text(
        '<?xml version="1.0"?><osm version="0.6">'
        '<node id="1" version="1" lat="60.1680" lon="24.9440"/>'
        '<node id="2" version="1" lat="60.1681" lon="24.9440"/>'
        '<node id="3" version="1" lat="60.1681" lon="24.9442"/>'
        '<way id="1" version="1"><nd ref="1"/><nd ref="2"/><nd ref="3"/><nd ref="1"/>'
        '<tag k="building" v="yes"/></way></osm>',
        encoding="utf-8",
    )
    with pytest.raises(OsmError, match=rf"no streets inside bbox .* of {extract}; widen"):
        CityMap.open(root)


def test_corrupt_graph_is_reported_even_with_osm(
    tmp_path: Path, osm_city: tuple[Path, OsmData]
) -> None:
    root = tmp_path / "city"
    shutil.copytree(osm_city[0], root)
    (root / "graph.json").write_text('{"nodes": [{"id": 1}]}', encoding="utf-8")
    with pytest.raises(
        CityFormatError, match=r"graph\.json: field 'nodes\.0\.x_m': Field required"
    ):
        CityMap.open(root)


def test_read_only_city_gets_maps_without_a_cache(
    tmp_path: Path,
    plain_city: tuple[Path, OsmData],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import city360.maps.citymap as citymap_module
    from city360.errors import OutputError

    root = tmp_path / "city"
    shutil.copytree(plain_city[0], root, ignore=shutil.ignore_patterns("map"))

    def refuse(path: object, data: object) -> None:
        raise OutputError(f"output folder {root / 'map'} is not writable; choose a writable path")

    monkeypatch.setattr(citymap_module, "atomic_write_bytes", refuse)
    citymap = CityMap.open(root)
    assert citymap.image.shape[2] == 3
    assert not (root / "map" / MAP_JSON_NAME).exists()
    assert "base map not cached" in caplog.text
