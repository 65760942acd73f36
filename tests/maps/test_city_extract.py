"""A city built from video with ``build --osm FILE`` keeps its OSM data inside itself.

The city here is what a user with real footage makes: the synthetic city's videos and GPX
ingested into a fresh folder (no ground truth, no map/), built with an OSM file that lies
outside the city and covers more than it. Every later stage must find the OSM data through the
city, and the folder must keep working after it is moved.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from city360.city import OSM_ATTRIBUTION, OSM_EXTRACT, CityDir, file_sha256
from city360.errors import CityFormatError
from city360.maps.city_extract import _crop_bbox, keep_city_extract
from tests.fixtures.built import run_cli
from tests.fixtures.cities import write_grid_osm


@pytest.fixture(scope="module")
def video_city(synth_city: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(city built from video with an OSM file outside it, that OSM file)."""
    work = tmp_path_factory.mktemp("video-city")
    osm = write_grid_osm(work / "district.osm")
    root = work / "city"
    videos = sorted(str(p) for p in (synth_city / "videos").glob("*.mp4"))
    gps = [a for p in sorted((synth_city / "videos").glob("*.gpx")) for a in ("--gps", str(p))]
    run_cli("ingest", *videos, *gps, "--out", str(root))
    run_cli("build", str(root), "--osm", str(osm))
    return root, osm


def test_build_keeps_a_cropped_extract_with_hashes_and_attribution(
    video_city: tuple[Path, Path],
) -> None:
    root, osm = video_city
    city = CityDir(root)
    assert city.osm_source() == city.osm_extract_path
    sources = {s.path: s for s in city.read_manifest().sources if s.kind == "osm"}
    kept, original = sources[OSM_EXTRACT], sources[str(osm.resolve())]
    assert kept.sha256 == file_sha256(city.osm_extract_path)
    assert original.sha256 == file_sha256(osm)
    assert kept.attribution == original.attribution == OSM_ATTRIBUTION
    assert city.read_manifest().build["pose_graph"]["osm"] == OSM_EXTRACT


def test_coverage_counts_only_the_city_s_own_area(
    video_city: tuple[Path, Path], tmp_path: Path
) -> None:
    """Every street of the filmed grid is filmed; a district extract four times its size has
    streets that are not the city's, and coverage does not count them as missed."""
    root, _ = video_city
    district = write_grid_osm(tmp_path / "district.osm", cols=6, rows=5)
    for extra in ([], ["--osm", str(district)]):
        stats = json.loads(run_cli("info", str(root), "--json", *extra))
        assert stats["osm_coverage"] > 0.9, extra
    # the district's streets: 5 of 200 m and 6 of 160 m; the city's area holds under half
    assert stats["osm_street_length_m"] < 0.5 * (5 * 200.0 + 6 * 160.0)


def test_the_kept_extract_is_cropped_to_the_city(video_city: tuple[Path, Path]) -> None:
    root, _ = video_city
    city = CityDir(root.parent / "crop-city")
    city.root.mkdir()
    shutil.copy(root / "city.json", city.manifest_path)
    district = write_grid_osm(root.parent / "large-district.osm", cols=12, rows=10)
    kept = keep_city_extract(city, district, margin_m=0.0)
    ways = [line for line in kept.read_text().splitlines() if "<way" in line]
    assert 0 < len(ways) < sum(1 for line in district.read_text().splitlines() if "<way" in line)


def test_tasks_from_the_kept_extract_include_named_place_families(
    video_city: tuple[Path, Path], tmp_path: Path
) -> None:
    """No ground truth: LandmarkSearchText and VLN come from the named shops in the extract."""
    root, _ = video_city
    moved = tmp_path / "moved-city"
    shutil.copytree(root, moved)  # a copy elsewhere: the original folder is not needed
    out = tmp_path / "suite"
    run_cli("tasks", "generate", str(moved), "--out", str(out), "--per-family", "2")
    families = {t["family"] for t in json.loads((out / "suite.json").read_text())["tasks"]}
    assert {"LandmarkSearchText", "VLN", "MapNavigation", "Localization"} <= families
    run_cli("tasks", "check", str(out), "--city", str(moved))
    run_cli("map", str(moved), "--out", str(tmp_path / "map.png"))
    assert (tmp_path / "map.png").stat().st_size > 0


def test_the_moved_city_walks_without_its_original_osm_file(
    video_city: tuple[Path, Path], tmp_path: Path
) -> None:
    import city360

    root, osm = video_city
    moved = tmp_path / "elsewhere" / "city"
    shutil.copytree(root, moved)
    hidden = osm.with_suffix(".away")
    osm.rename(hidden)  # the file the city was built from is gone
    try:
        assert CityDir(moved).osm_source() == moved / OSM_EXTRACT
        with city360.make(moved, view_width=64, view_height=48) as env:
            obs, _ = env.reset(seed=0)
            assert obs["view"].shape == (48, 64, 3)
    finally:
        hidden.rename(osm)


def test_a_synthetic_city_keeps_the_extract_its_scene_came_from(
    synth_city: Path, tmp_path: Path
) -> None:
    root = tmp_path / "city"
    shutil.copytree(synth_city, root, ignore=shutil.ignore_patterns("videos", "trajectories"))
    city = CityDir(root)
    before = file_sha256(city.osm_extract_path)
    other = write_grid_osm(tmp_path / "other.osm", cols=5, rows=5)
    assert keep_city_extract(city, other) == city.osm_extract_path
    assert file_sha256(city.osm_extract_path) == before


def test_a_synthetic_city_says_when_the_extract_passed_is_not_its_own(
    synth_city: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``build --osm`` with another area's extract on a twin built against the twin's own map
    without a word (issue 17, newuser); the twin's own extract passed again says nothing."""
    root = tmp_path / "city"
    shutil.copytree(synth_city, root, ignore=shutil.ignore_patterns("videos", "trajectories"))
    city = CityDir(root)
    other = write_grid_osm(tmp_path / "other.osm", cols=5, rows=5)
    with caplog.at_level("WARNING", logger="city360.maps.city_extract"):
        keep_city_extract(city, other)
    assert len(caplog.messages) == 1
    assert caplog.messages[0].startswith(
        f"{other} is not the extract this synthetic twin was made from ("
    )
    assert caplog.messages[0].endswith(
        f"the twin's own {city.osm_extract_path} is used, as its ground truth follows it"
    )
    caplog.clear()
    own = tmp_path / "own.osm"
    shutil.copy(city.osm_extract_path, own)
    with caplog.at_level("WARNING", logger="city360.maps.city_extract"):
        keep_city_extract(city, own)
    assert caplog.messages == []


def test_an_empty_bbox_names_the_manifest_and_the_fix(synth_city: Path, tmp_path: Path) -> None:
    root = tmp_path / "city"
    root.mkdir()
    shutil.copy(synth_city / "city.json", root / "city.json")
    city = CityDir(root)
    manifest = city.read_manifest()
    city.write_manifest(
        manifest.model_copy(update={"bbox": (90.0, 180.0, -90.0, -180.0), "synthetic": False})
    )
    with pytest.raises(CityFormatError, match=r"city\.json: bbox .* is empty.*city360 ingest"):
        keep_city_extract(city, write_grid_osm(tmp_path / "d.osm"))


def test_crop_bbox_widens_by_the_margin_in_metres() -> None:
    from city360.geo import LocalProjection

    projection = LocalProjection(60.005, 24.01)
    south, west, north, east = _crop_bbox((60.0, 24.0, 60.01, 24.02), 111.32, projection)
    assert south == pytest.approx(59.999, abs=1e-6)
    assert north == pytest.approx(60.011, abs=1e-6)
    assert west == pytest.approx(24.0 - 0.002, abs=1e-5)  # 1 / cos(60°) wider in longitude
    assert east == pytest.approx(24.022, abs=1e-5)
