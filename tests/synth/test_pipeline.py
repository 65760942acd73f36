"""``synthesize`` end to end on the small test city: layout, frames, GPS, clock, determinism,
bad input."""

from __future__ import annotations

import datetime as dt
import hashlib
import math
from pathlib import Path

import av
import gpxpy
import numpy as np
import pytest

from city360.city import CityDir, file_sha256
from city360.errors import GpsError, InputFileError, OsmError, OutputError
from city360.synth.groundtruth import SceneTruth, VideoTruth, read_true_poses
from city360.synth.pipeline import synthesize
from tests.fixtures.cities import SYNTH_CITY_OPTIONS, write_grid_osm


def creation_time(video: VideoTruth) -> dt.datetime:
    return dt.datetime.fromisoformat(video.creation_time_utc.replace("Z", "+00:00"))


def gps_errors_m(city_dir: Path, video: VideoTruth, *, offset_s: float) -> np.ndarray:
    """Distance of each GPX fix from the true pose at the video time its stamp implies."""
    city = CityDir(city_dir)
    projection = city.read_manifest().projection
    poses = read_true_poses(city.groundtruth_dir / "poses" / f"{video.name}.csv")
    gpx = gpxpy.parse((city.videos_dir / f"{video.name}.gpx").read_text(encoding="utf-8"))
    points = [p for track in gpx.tracks for segment in track.segments for p in segment.points]
    start = creation_time(video)
    video_t = np.array([(p.time - start).total_seconds() - offset_s for p in points])
    x, y = projection.to_xy([p.latitude for p in points], [p.longitude for p in points])
    true_x = np.interp(video_t, poses[:, 1], poses[:, 2])
    true_y = np.interp(video_t, poses[:, 1], poses[:, 3])
    return np.hypot(x - true_x, y - true_y)


def test_layout_follows_the_contract(synth_city: Path) -> None:
    city = CityDir(synth_city)
    manifest = city.read_manifest()
    truth = SceneTruth.load(city.groundtruth_dir / "scene.json")
    assert manifest.synthetic
    assert manifest.name == "grid"
    assert manifest.crs.startswith("+proj=tmerc")
    osm_source = next(s for s in manifest.sources if s.path.endswith("grid.osm"))
    assert osm_source.sha256 == file_sha256(osm_source.path)
    extract = next(s for s in manifest.sources if s.path == "map/extract.osm")
    assert extract.sha256 == file_sha256(synth_city / "map" / "extract.osm")
    assert manifest.build["synth"]["width"] == SYNTH_CITY_OPTIONS["width"]
    names = sorted(v.name for v in truth.videos)
    assert len(names) >= 2
    assert sorted(p.stem for p in city.videos_dir.glob("*.mp4")) == names
    assert sorted(p.stem for p in city.videos_dir.glob("*.gpx")) == names
    assert sorted(p.stem for p in (city.groundtruth_dir / "poses").glob("*.csv")) == names
    assert manifest.stats["frames"] == sum(v.frame_count for v in truth.videos)
    assert len(truth.pois) == 16
    assert truth.objects
    assert not list(synth_city.parent.glob(".*.partial"))


def test_test_city_has_six_junctions_and_every_street_filmed_both_ways(synth_city: Path) -> None:
    truth = SceneTruth.load(synth_city / "groundtruth" / "scene.json")
    assert sum(j.degree >= 3 for j in truth.junctions) >= 6
    walked = [
        (a, b)
        for video in truth.videos
        for a, b in zip(video.junction_sequence[:-1], video.junction_sequence[1:], strict=True)
    ]
    expected = [(s.u, s.v) for s in truth.streets] + [(s.v, s.u) for s in truth.streets]
    assert sorted(walked) == sorted(expected)


def test_frames_are_2to1_and_match_the_true_poses(synth_city: Path) -> None:
    city = CityDir(synth_city)
    truth = SceneTruth.load(city.groundtruth_dir / "scene.json")
    for video in truth.videos:
        poses = read_true_poses(city.groundtruth_dir / "poses" / f"{video.name}.csv")
        with av.open(str(city.videos_dir / f"{video.name}.mp4")) as container:
            assert container.metadata["creation_time"] == video.creation_time_utc
            stream = container.streams.video[0]
            frames = [(f.pts * f.time_base, f.width, f.height) for f in container.decode(stream)]
        assert len(frames) == video.frame_count == len(poses)
        assert {(w, h) for _, w, h in frames} == {(video.width, video.height)}
        assert video.width == 2 * video.height == SYNTH_CITY_OPTIONS["width"]
        np.testing.assert_allclose([float(t) for t, _, _ in frames], poses[:, 1], atol=1e-3)
        np.testing.assert_array_equal(poses[:, 0], np.arange(len(poses)))
        steps = np.hypot(np.diff(poses[:, 2]), np.diff(poses[:, 3]))
        speed = SYNTH_CITY_OPTIONS["speed"] / SYNTH_CITY_OPTIONS["fps"]
        assert steps.max() <= speed + 1e-3
        assert speed <= 1.0, "the test city must keep at least one frame per metre"


def test_gps_error_matches_the_requested_sigma(synth_city: Path) -> None:
    truth = SceneTruth.load(synth_city / "groundtruth" / "scene.json")
    regular: list[float] = []
    for video in truth.videos:
        errors = gps_errors_m(synth_city, video, offset_s=video.clock_offset_s)
        keep = np.setdiff1d(np.arange(len(errors)), video.gps_outlier_indices)
        rms = math.sqrt(float(np.mean(errors[keep] ** 2)))
        assert rms == pytest.approx(video.gps_noise_sigma_m, rel=0.2), video.name
        regular += list(errors[keep])
        assert video.gps_noise_sigma_m == 3.0
    assert math.sqrt(float(np.mean(np.square(regular)))) == pytest.approx(3.0, rel=0.2)


def test_clock_offset_is_recorded_and_applied(synth_city_factory) -> None:
    city_dir = synth_city_factory(
        **SYNTH_CITY_OPTIONS, poses_only=True, gps_noise_m=0.0, clock_offset_s=2.5
    )
    truth = SceneTruth.load(city_dir / "groundtruth" / "scene.json")
    for video in truth.videos:
        assert video.clock_offset_s == 2.5
        gpx = gpxpy.parse((city_dir / "videos" / f"{video.name}.gpx").read_text(encoding="utf-8"))
        first = gpx.tracks[0].segments[0].points[0].time
        lag = (first - creation_time(video)).total_seconds()
        assert 2.5 <= lag < 3.5  # first whole GPS second after the camera started
        right = gps_errors_m(city_dir, video, offset_s=2.5)
        wrong = gps_errors_m(city_dir, video, offset_s=0.0)
        assert np.median(right) < 0.01
        assert np.median(wrong) == pytest.approx(2.5 * SYNTH_CITY_OPTIONS["speed"], rel=0.05)


def test_poses_only_variant_has_everything_but_video(synth_city_poses: Path) -> None:
    assert not list((synth_city_poses / "videos").glob("*.mp4"))
    truth = SceneTruth.load(synth_city_poses / "groundtruth" / "scene.json")
    assert truth.videos
    assert all((synth_city_poses / "videos" / f"{v.name}.gpx").is_file() for v in truth.videos)
    assert CityDir(synth_city_poses).read_manifest().build["synth"]["poses_only"] is True


def tree_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_same_inputs_same_bytes(tmp_path: Path) -> None:
    osm = write_grid_osm(tmp_path / "tiny.osm", cols=2, rows=2, spacing_m=30.0, stub_m=10.0)
    options = {"width": 128, "fps": 1, "speed": 3.0, "seed": 5, "clock_offset_s": 1.5}
    first = tree_digest(synthesize(osm, out=tmp_path / "a", **options))
    second = tree_digest(synthesize(osm, out=tmp_path / "b", **options))
    assert first == second
    assert any(name.endswith(".mp4") for name in first)
    other_seed = tree_digest(synthesize(osm, out=tmp_path / "c", **{**options, "seed": 6}))
    assert other_seed["groundtruth/scene.json"] != first["groundtruth/scene.json"]


# bad input ---------------------------------------------------------------------------------
@pytest.fixture
def grid_osm(tmp_path: Path) -> Path:
    return write_grid_osm(tmp_path / "grid.osm")


def assert_nothing_written(out: Path) -> None:
    assert not out.exists()
    assert not list(out.parent.glob(f".{out.name}.*"))


def test_missing_osm(tmp_path: Path) -> None:
    out = tmp_path / "city"
    with pytest.raises(
        InputFileError,
        match=r"OSM file .*nowhere\.osm does not exist; pass a local \.osm, \.osm\.bz2 or "
        r"\.osm\.pbf extract",
    ):
        synthesize(tmp_path / "nowhere.osm", out=out, width=128)
    assert_nothing_written(out)


def test_empty_osm(tmp_path: Path) -> None:
    empty = tmp_path / "empty.osm"
    empty.write_bytes(b"")
    out = tmp_path / "city"
    with pytest.raises(
        InputFileError,
        match=r"OSM file .*empty\.osm is empty; export the area again",
    ):
        synthesize(empty, out=out, width=128)
    assert_nothing_written(out)


def test_corrupt_osm(tmp_path: Path, grid_osm: Path) -> None:
    corrupt = tmp_path / "corrupt.osm"
    corrupt.write_bytes(grid_osm.read_bytes()[:3000])
    out = tmp_path / "city"
    with pytest.raises(
        OsmError,
        match=r"OSM file .*corrupt\.osm cannot be read \(.*\); it is corrupt or truncated: "
        r"download or export the extract again",
    ):
        synthesize(corrupt, out=out, width=128)
    assert_nothing_written(out)


def test_bbox_without_streets(tmp_path: Path, grid_osm: Path) -> None:
    # the south-west block: a building and its shops, no street
    from city360.geo import LocalProjection
    from tests.fixtures.cities import GRID_ORIGIN

    lat, lon = LocalProjection(*GRID_ORIGIN).to_latlon([6.0, 34.0], [6.0, 34.0])
    south, north, west, east = float(lat[0]), float(lat[1]), float(lon[0]), float(lon[1])
    out = tmp_path / "city"
    with pytest.raises(OsmError, match=r"no streets inside bbox .* of .*grid\.osm; widen --bbox"):
        synthesize(grid_osm, out=out, width=128, bbox=(south, west, north, east))
    assert_nothing_written(out)


def test_unwritable_output(tmp_path: Path, grid_osm: Path) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder", encoding="utf-8")
    with pytest.raises(
        OutputError, match=r"cannot create output folder .*a_file.*choose a writable"
    ):
        synthesize(grid_osm, out=blocker / "city", width=128)
    existing = tmp_path / "existing"
    existing.mkdir()
    (existing / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(OutputError, match=r"output folder .*existing already exists and is not"):
        synthesize(grid_osm, out=existing, width=128)
    assert (existing / "keep.txt").read_text(encoding="utf-8") == "mine"


def test_route_gpx_outside_the_extract(tmp_path: Path, grid_osm: Path) -> None:
    gpx = gpxpy.gpx.GPX()
    segment = gpxpy.gpx.GPXTrackSegment()
    segment.points += [gpxpy.gpx.GPXTrackPoint(48.85, 2.35), gpxpy.gpx.GPXTrackPoint(48.86, 2.35)]
    gpx.tracks.append(gpxpy.gpx.GPXTrack())
    gpx.tracks[0].segments.append(segment)
    route = tmp_path / "paris.gpx"
    route.write_text(gpx.to_xml(), encoding="utf-8")
    out = tmp_path / "city"
    with pytest.raises(
        GpsError,
        match=r"route GPX .*paris\.gpx: 2 of 2 points lie outside the OSM extract .*give a track "
        r"inside the extract",
    ):
        synthesize(grid_osm, out=out, width=128, route_gpx=route)
    assert_nothing_written(out)


def test_route_gpx_is_filmed_instead_of_every_street(tmp_path: Path, grid_osm: Path) -> None:
    from city360.geo import LocalProjection
    from tests.fixtures.cities import GRID_ORIGIN

    projection = LocalProjection(*GRID_ORIGIN)
    gpx = gpxpy.gpx.GPX()
    segment = gpxpy.gpx.GPXTrackSegment()
    for x, y in [(0.0, 0.0), (80.0, 0.0), (80.0, 40.0)]:
        lat, lon = projection.to_latlon(x, y)
        segment.points.append(gpxpy.gpx.GPXTrackPoint(float(lat), float(lon)))
    gpx.tracks.append(gpxpy.gpx.GPXTrack())
    gpx.tracks[0].segments.append(segment)
    route = tmp_path / "my_walk.gpx"
    route.write_text(gpx.to_xml(), encoding="utf-8")
    city_dir = synthesize(
        grid_osm, out=tmp_path / "city", width=128, fps=1, speed=2.0, route_gpx=route
    )
    truth = SceneTruth.load(city_dir / "groundtruth" / "scene.json")
    assert [v.name for v in truth.videos] == ["my_walk"]
    # 120 m at 2 m/s and 1 fps: 61 frames, one fewer when projection round-off shortens the track
    assert truth.videos[0].frame_count in (60, 61)
    assert len(truth.videos[0].junction_sequence) == 4
    manifest = CityDir(city_dir).read_manifest()
    assert any(s.kind == "route" and s.path.endswith("my_walk.gpx") for s in manifest.sources)
