"""``city.json`` as ingest makes and extends it: one frame for every trajectory, whoever
writes at the same time."""

from __future__ import annotations

import dataclasses
import multiprocessing
import shutil
from pathlib import Path

import numpy as np
import pytest

from city360.city import CityDir
from city360.geo import LocalProjection
from city360.video_store import cli
from city360.video_store.city_manifest import claim_city, release_city, update_manifest
from city360.video_store.gps import read_track
from city360.video_store.ingest import IngestOptions, IngestResult, ingest_video
from tests.fixtures.videos import ORIGIN, SyntheticWalk, write_gpx

OPTIONS = IngestOptions(max_width=256, pyramid=False)


def _moved_walk(walk: SyntheticWalk, folder: Path, name: str, north_m: float) -> tuple[Path, Path]:
    """The walk's video as ``name``.mp4 with its GPS track moved ``north_m`` metres north."""
    import gpxpy

    folder.mkdir(parents=True, exist_ok=True)
    video = shutil.copy(walk.video, folder / f"{name}.mp4")
    points = [
        p for t in gpxpy.parse(walk.gpx.read_text()).tracks for s in t.segments for p in s.points
    ]
    x, y = walk.projection.to_xy([p.latitude for p in points], [p.longitude for p in points])
    lat, lon = walk.projection.to_latlon(x, y + north_m)
    times = [p.time.timestamp() for p in points]  # type: ignore[union-attr]
    return Path(video), write_gpx(folder / f"{name}.gpx", times, lat, lon)


def _in_city_frame(city: CityDir, trajectory_id: str) -> float:
    """The largest distance, metres, between a trajectory's stored x/y and its lat/lon put
    into the city's frame."""
    poses = city.read_poses(trajectory_id)
    x, y = city.read_manifest().projection.to_xy(poses.lat, poses.lon)
    return float(np.max(np.hypot(poses.x_m - x, poses.y_m - y)))


def test_two_ingests_into_one_new_city_at_once_share_its_frame(
    synthetic_walk: SyntheticWalk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two ``city360 ingest`` runs into one new city (two cards, two terminals): each centred
    the city on its own tracks, and the run whose city.json landed second had its poses in
    the other frame: here walk B's lay 150 m off its GPS, without a word."""
    video_a, gpx_a = _moved_walk(synthetic_walk, tmp_path / "a", "walk_a", 0.0)
    video_b, gpx_b = _moved_walk(synthetic_walk, tmp_path / "b", "walk_b", 300.0)
    city_dir = tmp_path / "city"
    ingest_everything = cli._ingest_all

    def b_runs_meanwhile(*args: object, **kwargs: object) -> None:
        monkeypatch.setattr(cli, "_ingest_all", ingest_everything)
        cli.run_ingest([(video_b, gpx_b)], city_dir, OPTIONS)  # B starts and ends inside A
        ingest_everything(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cli, "_ingest_all", b_runs_meanwhile)
    results, failures = cli.run_ingest([(video_a, gpx_a)], city_dir, OPTIONS)
    assert failures == []
    assert [r.trajectory_id for r in results] == ["walk_a"]
    city = CityDir(city_dir)
    assert city.trajectory_ids() == ["walk_a", "walk_b"]
    assert city.read_manifest().stats["trajectories"] == 2
    assert {s.path for s in city.read_manifest().sources} >= {str(video_a), str(video_b)}
    for trajectory_id in ("walk_a", "walk_b"):
        assert _in_city_frame(city, trajectory_id) < 0.01


def test_results_made_in_another_frame_are_put_into_the_city_s(
    synthetic_walk: SyntheticWalk, tmp_path: Path
) -> None:
    """A caller of ingest_video that picked its own projection for a city that has one."""
    city_dir = tmp_path / "city"
    first = ingest_video(
        synthetic_walk.video, synthetic_walk.gpx, city_dir, projection=synthetic_walk.projection,
        options=OPTIONS, trajectory_id="first",
    )  # fmt: skip
    update_manifest(city_dir, synthetic_walk.projection, [first], OPTIONS)
    elsewhere = LocalProjection(synthetic_walk.projection.origin_lat + 0.002,
                                synthetic_walk.projection.origin_lon - 0.003)  # fmt: skip
    second = ingest_video(
        synthetic_walk.video, synthetic_walk.gpx, city_dir, projection=elsewhere,
        options=OPTIONS, trajectory_id="second",
    )  # fmt: skip
    city = CityDir(city_dir)
    assert _in_city_frame(city, "second") > 100  # made in the other frame
    update_manifest(city_dir, elsewhere, [second], OPTIONS)
    assert _in_city_frame(city, "second") < 0.01
    first_poses, second_poses = city.read_poses("first"), city.read_poses("second")
    np.testing.assert_allclose(second_poses.x_m, first_poses.x_m, atol=0.01)
    assert city.read_manifest().projection == synthetic_walk.projection


def test_a_batch_that_keeps_nothing_leaves_no_new_city(
    synthetic_walk: SyntheticWalk, tmp_path: Path
) -> None:
    """The city.json claimed at the start goes again when every video fails."""
    broken = tmp_path / "walk.mp4"
    broken.write_bytes(synthetic_walk.video.read_bytes()[:3000])  # cut off: no frame decodes
    results, failures = cli.run_ingest([(broken, synthetic_walk.gpx)], tmp_path / "city", OPTIONS)
    assert results == []
    assert len(failures) == 1
    assert not (tmp_path / "city").exists()


def test_a_batch_that_keeps_nothing_leaves_another_s_new_city_alone(tmp_path: Path) -> None:
    """Run B made the new city and failed while run A, which read B's frame, was still
    writing its trajectory's partial folder: B removed city.json and then died on the
    folder ("Directory not empty"), a traceback instead of B's own error."""
    lat = [ORIGIN[0], ORIGIN[0] + 1e-4]
    track_path = write_gpx(tmp_path / "t.gpx", [0.0, 10.0], lat, [ORIGIN[1]] * 2)
    city_dir = tmp_path / "city"
    _, created = claim_city(city_dir, [read_track(track_path)])
    assert created
    partial = city_dir / "trajectories" / ".walk_a.123.abc.partial"
    partial.mkdir(parents=True)
    release_city(city_dir)
    assert CityDir(city_dir).exists()  # A will record its trajectory in it
    partial.rmdir()
    release_city(city_dir)
    assert not city_dir.exists()


def _add_offsets(
    city_dir: Path, result: IngestResult, first: int, projection: LocalProjection
) -> None:
    """Record 15 made-up trajectories' clock offsets, one update of city.json each."""
    for k in range(first, first + 15):
        fake = dataclasses.replace(result, trajectory_id=f"t{k}", offset_s=float(k))
        update_manifest(city_dir, projection, [fake], OPTIONS)


def test_two_processes_extending_one_manifest_keep_each_other_s_entries(
    synthetic_walk: SyntheticWalk, tmp_path: Path
) -> None:
    """update_manifest read city.json, changed it and wrote it whole, so of two writers at
    once the later one dropped what the earlier one had added."""
    city_dir = tmp_path / "city"
    result = ingest_video(
        synthetic_walk.video, synthetic_walk.gpx, city_dir, projection=synthetic_walk.projection,
        options=OPTIONS,
    )  # fmt: skip
    update_manifest(city_dir, synthetic_walk.projection, [result], OPTIONS)
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(
            target=_add_offsets, args=(city_dir, result, first, synthetic_walk.projection)
        )
        for first in (0, 100)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    offsets = CityDir(city_dir).read_manifest().build["ingest"]["offsets_s"]
    assert {f"t{k}" for k in [*range(15), *range(100, 115)]} <= set(offsets)
