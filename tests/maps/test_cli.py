"""``city360 map CITY_DIR --out map.png [--grid N] [--route A B] [--landmark P]``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from city360.city import CityDir
from city360.cli import main
from city360.maps.citymap import CityMap
from city360.maps.draw import GOAL_RGB, LANDMARK_RGB, START_RGB
from city360.maps.osm import OsmData


def _run(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr("sys.argv", ["city360", *[str(a) for a in args]])
    try:
        main()
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def _has(image: np.ndarray, color: tuple[int, int, int]) -> int:
    return int(np.all(image == np.array(color, dtype=np.uint8), axis=2).sum())


def test_plain_and_grid_maps(
    monkeypatch: pytest.MonkeyPatch, plain_city: tuple[Path, OsmData], tmp_path: Path
) -> None:
    out = tmp_path / "map.png"
    assert _run(monkeypatch, "map", plain_city[0], "--out", out, "--size", "500") == 0
    image = np.asarray(Image.open(out).convert("RGB"))
    assert max(image.shape[:2]) == pytest.approx(500, abs=1)
    grid_out = tmp_path / "grid.jpg"
    assert _run(monkeypatch, "map", plain_city[0], "--out", grid_out, "--grid", "4") == 0
    assert Image.open(grid_out).format == "JPEG"
    # the grid in map.json stays the default 5 x 5 that tasks and the simulator read
    meta = json.loads((plain_city[0] / "map" / "map.json").read_text(encoding="utf-8"))
    assert meta["grid"]["n"] == 5


def test_route_between_node_ids(
    monkeypatch: pytest.MonkeyPatch, plain_city: tuple[Path, OsmData], tmp_path: Path
) -> None:
    nodes = sorted(plain_city[1].streets.nodes)
    out = tmp_path / "route.png"
    code = _run(monkeypatch, "map", plain_city[0], "--out", out, "--route", nodes[0], nodes[-1])
    assert code == 0
    image = np.asarray(Image.open(out).convert("RGB"))
    assert _has(image, START_RGB) > 50
    assert _has(image, GOAL_RGB) > 50


def test_landmark_at_lat_lon(
    monkeypatch: pytest.MonkeyPatch, plain_city: tuple[Path, OsmData], tmp_path: Path
) -> None:
    out = tmp_path / "landmark.png"
    code = _run(
        monkeypatch,
        "map",
        plain_city[0],
        "--out",
        out,
        "--landmark",
        "60.16765,24.94480",
        "--label",
        "Esplanadi",
    )
    assert code == 0
    image = np.asarray(Image.open(out).convert("RGB"))
    citymap = CityMap.open(plain_city[0])
    _, transform = citymap.landmark_map_with_transform(
        *map(float, citymap.projection.to_xy(60.16765, 24.94480)), size_px=800
    )
    rows, cols = np.nonzero(np.all(image == np.array(LANDMARK_RGB, np.uint8), axis=2))
    col, row = transform.latlon_to_px(60.16765, 24.94480)
    assert (cols.mean(), rows.mean()) == pytest.approx((float(col), float(row)), abs=0.6)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--route", "1", "2"], "node 1 is not in"),
        (["--route", "60.1670,24.9440", "abc"], "must be a graph node id or 'lat,lon'"),
        (["--landmark", "95,24"], "lat must be in"),
        (["--grid", "5", "--landmark", "60.1,24.9"], "choose one of --grid, --route"),
        (["--location", "x"], "must be a graph node id or 'lat,lon'"),
        (["--osm", "/nonexistent/x.osm"], "OSM file /nonexistent/x.osm does not exist"),
        # a point in another city: it was "cannot resample the base map to 9451.2 m/px"
        (
            ["--route", "60.1670,24.9440", "35.75,139.66"],
            "--route goal '35.75,139.66' lies outside the city's map",
        ),
        (["--landmark", "60.30,24.9440"], "--landmark '60.30,24.9440' lies outside"),
        (["--location", "60.1670,25.5"], "--location '60.1670,25.5' lies outside"),
    ],
)
def test_bad_arguments(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    plain_city: tuple[Path, OsmData],
    tmp_path: Path,
    args: list[str],
    message: str,
) -> None:
    out = tmp_path / "x.png"
    assert _run(monkeypatch, "map", plain_city[0], "--out", out, *args) == 1
    assert message in " ".join(capsys.readouterr().err.split())
    assert not out.exists()


def test_bad_output_suffix(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    plain_city: tuple[Path, OsmData],
    tmp_path: Path,
) -> None:
    assert _run(monkeypatch, "map", plain_city[0], "--out", tmp_path / "x.gif") == 1
    assert "must end in .png or .jpg" in " ".join(capsys.readouterr().err.split())


def test_network_without_osm_is_refused(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    plain_city: tuple[Path, OsmData],
    helsinki_crop: tuple[Path, OsmData],
    tmp_path: Path,
) -> None:
    # the map of a city without OSM draws its own walks: a network choice would be recorded
    # in city.json and do nothing, unsaid
    root = tmp_path / "city"
    shutil.copytree(plain_city[0], root)
    out = tmp_path / "x.png"
    assert _run(monkeypatch, "map", root, "--out", out, "--network", "walk") == 1
    err = " ".join(capsys.readouterr().err.split())
    assert (
        f"--network walk chooses which OSM streets the map draws, but {root} has no OSM "
        "extract (no map/extract.osm, no OSM source in city.json), so its map draws the "
        "city's own walks: pass --osm FILE"
    ) in err
    assert not out.exists()
    assert "maps" not in CityDir(root).read_manifest().build
    # with --osm the choice is used, and recorded
    osm = helsinki_crop[0]
    assert _run(monkeypatch, "map", root, "--out", out, "--osm", osm, "--network", "walk") == 0
    assert CityDir(root).read_manifest().build["maps"] == {"network": "walk"}


def test_not_a_city(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert _run(monkeypatch, "map", tmp_path, "--out", tmp_path / "x.png") == 1
    assert "is not a city directory" in " ".join(capsys.readouterr().err.split())


def test_location_map_by_node(
    monkeypatch: pytest.MonkeyPatch, plain_city: tuple[Path, OsmData], tmp_path: Path
) -> None:
    node = sorted(plain_city[1].streets.nodes)[3]
    out = tmp_path / "here.png"
    args = ["--location", str(node), "--heading", "90", "--size", "200"]
    assert _run(monkeypatch, "map", plain_city[0], "--out", out, *args) == 0
    image = np.asarray(Image.open(out).convert("RGB"))
    assert image.shape == (200, 200, 3)
    from city360.maps.draw import ARROW_RGB

    rows, cols = np.nonzero(np.all(image == np.array(ARROW_RGB, np.uint8), axis=2))
    assert cols.mean() == pytest.approx(99.5, abs=4)
    assert cols.max() >= 99.5 + 0.6 * 200 / 12 - 2  # heading 90: the tip is right of centre
    assert rows.mean() == pytest.approx(99.5, abs=1.5)
