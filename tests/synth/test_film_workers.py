"""Filming on several cores: same bytes as one process, progress to the total, failures that
name the route and the worker and leave no video, bad worker counts refused."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
from pathlib import Path

import pytest

from city360._gl import gl_available
from city360.errors import ConfigError, WorkerError
from city360.synth.film import sample_route
from city360.synth.film_workers import (
    FilmJob,
    check_workers,
    default_workers,
    film_jobs,
    longest_first,
)
from city360.synth.pipeline import synthesize
from city360.synth.routes import plan_coverage_routes
from city360.synth.scene import Scene, build_scene
from tests.fixtures.cities import write_grid_osm
from tests.fixtures.scenes import grid_inputs

WIDTH = 128
START = dt.datetime(2024, 6, 1, 9, 0, tzinfo=dt.UTC)
TINY_CITY = {"width": WIDTH, "fps": 1, "speed": 2.0, "max_video_m": 120.0}
"""A 2 x 2 grid at 1 frame per 2 m in 120 m videos: a few hundred frames, several videos."""


@pytest.fixture(autouse=True)
def _needs_gl() -> None:
    if not gl_available():
        pytest.skip("no OpenGL context (install Mesa EGL: apt-get install libegl1 libegl-mesa0)")


@pytest.fixture(scope="module")
def scene_and_routes() -> tuple[Scene, list[FilmJob]]:
    inputs = grid_inputs(2, 2, block_m=40.0)
    scene = build_scene(**inputs, seed=3)
    routes = plan_coverage_routes(inputs["streets"], max_video_m=60.0)
    jobs = [
        FilmJob(r.name, sample_route(r, fps=1, speed_mps=2.0), Path(r.name + ".mp4"), START)
        for r in routes
    ]
    return scene, jobs


def in_folder(jobs: list[FilmJob], folder: Path) -> list[FilmJob]:
    return [dataclasses.replace(job, path=folder / job.path.name) for job in jobs]


def digests(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_two_workers_film_the_same_bytes_and_truth_as_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    osm = write_grid_osm(tmp_path / "grid.osm", cols=2, rows=2)
    one = synthesize(osm, out=tmp_path / "one", workers=1, **TINY_CITY)
    two = synthesize(osm, out=tmp_path / "two", workers=2, **TINY_CITY)
    videos = sorted((one / "videos").glob("*.mp4"))
    assert len(videos) >= 3, "the city must have more videos than workers"
    same = digests(one)
    assert any(name.startswith("groundtruth/") for name in same)
    assert "city.json" in same
    assert digests(two) == same
    err = " ".join(capsys.readouterr().err.split())
    frames = sum(1 for name in same if name.endswith(".mp4"))
    assert frames == len(videos)
    assert f"in {len(videos)} videos at 128 x 64 px on 1 worker" in err
    assert f"in {len(videos)} videos at 128 x 64 px on 2 workers" in err
    assert err.count("filmed ") == 2


def test_progress_reaches_the_total(
    scene_and_routes: tuple[Scene, list[FilmJob]], tmp_path: Path
) -> None:
    scene, jobs = scene_and_routes
    counted: list[int] = []
    ready: list[bool] = []
    film_jobs(
        scene,
        in_folder(jobs, tmp_path),
        width=WIDTH,
        workers=2,
        on_ready=lambda: ready.append(True),
        on_frames=counted.append,
    )
    assert ready == [True]
    assert sum(counted) == sum(len(job.poses) for job in jobs)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(j.path.name for j in jobs)


def test_a_failing_route_names_itself_and_its_worker_and_leaves_no_video(
    scene_and_routes: tuple[Scene, list[FilmJob]], tmp_path: Path
) -> None:
    scene, jobs = scene_and_routes
    good = in_folder(jobs, tmp_path)
    poses = good[0].poses
    # poses cut short after 5 frames: the worker writes 5 frames, then fails mid-video
    broken_poses = dataclasses.replace(poses, x_m=poses.x_m[:5])
    broken = FilmJob("broken", broken_poses, tmp_path / "broken.mp4", START)
    with pytest.raises(WorkerError) as caught:
        film_jobs(scene, [broken, *good[1:]], width=WIDTH, workers=2)
    message = str(caught.value)
    assert message.startswith("filming route 'broken' failed in worker ")
    assert " of 2 (pid " in message
    assert "IndexError" in message
    assert message.endswith(
        "its video was deleted (run with --workers 1 to film in this process and see the "
        "full traceback)"
    )
    assert not broken.path.exists()


def cut(job: FilmJob, frames: int, name: str) -> FilmJob:
    """``job`` shortened to its first ``frames`` frames, renamed ``name``."""
    fields = ("t_s", "s_m", "x_m", "y_m", "heading_deg")
    poses = dataclasses.replace(job.poses, **{f: getattr(job.poses, f)[:frames] for f in fields})
    return dataclasses.replace(job, name=name, poses=poses)


def test_videos_go_out_longest_first(scene_and_routes: tuple[Scene, list[FilmJob]]) -> None:
    job = scene_and_routes[1][0]
    jobs = [cut(job, 5, "a"), cut(job, 12, "b"), cut(job, 5, "c"), cut(job, 20, "d")]
    assert [j.name for j in longest_first(jobs)] == ["d", "b", "a", "c"]


@pytest.mark.parametrize("workers", [0, -2])
def test_fewer_than_one_worker_is_refused(workers: int) -> None:
    with pytest.raises(ConfigError) as caught:
        check_workers(workers)
    assert str(caught.value) == (
        "`--workers` must be >= 1 (1 films in this process; default: the "
        f"{default_workers()} cores this process may use), got {workers}"
    )
