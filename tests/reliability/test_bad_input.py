"""Bad values and broken files: each is a clean error naming the value or file and the fix."""

from __future__ import annotations

import errno
import json
import math
import os
import shutil
from pathlib import Path

import pytest

import city360
from city360._atomic import atomic_dir, atomic_write_json, clean_stale_partials
from city360.city import CityDir
from city360.errors import (
    CityFormatError,
    ConfigError,
    GraphBuildError,
    OutputError,
)
from city360.eval.results import EpisodeResult, ResultsWriter
from city360.eval.runner import AgentSpec, EvalConfig, run_eval
from city360.simulator.config import EnvConfig


@pytest.fixture(scope="module")
def env(built_city: Path):  # type: ignore[no-untyped-def]
    with city360.make(built_city, renderer="cpu", prefetch=False) as environment:
        yield environment


# --- sizes, seeds, poses ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"view_width": 100_000}, "`view_width` must be in 8..4096 pixels, got 100000"),
        ({"view_height": 2**31}, "`view_height` must be in 8..4096 pixels"),
        ({"map_size": 10**6}, "`map_size` must be in 16..2048 pixels"),
        ({"multiview_size": 65536}, "`multiview_size` must be in 8..2048 pixels"),
        ({"view_width": 64.5}, "`view_width` must be a whole number of pixels"),
        ({"seed": -1}, "`seed` must be in 0.."),
    ],
)
def test_huge_or_odd_sizes_are_refused_before_any_allocation(
    options: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(".", r"\.")):
        EnvConfig.from_kwargs(**options)


@pytest.mark.parametrize("seed", [-1, 1.5, "abc", True, 2**64])
def test_reset_refuses_bad_seeds(env, seed: object) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match=r"`seed` must be"):
        env.reset(seed=seed)
    obs, _info = env.reset(seed=7)
    assert obs["step"] == 0


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, "left", None])
@pytest.mark.parametrize("name", ["yaw_deg", "pitch_deg"])
def test_reset_refuses_non_finite_view_angles(env, name: str, value: object) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match=rf"reset option '{name}' must be a finite number"):
        env.reset(options={name: value})


def test_reset_refuses_non_finite_positions(env) -> None:  # type: ignore[no-untyped-def]
    segment = next(iter(env.world.segments))
    with pytest.raises(ConfigError, match="reset option 'offset_m' must be a finite number"):
        env.reset(options={"segment": segment, "offset_m": math.nan})
    with pytest.raises(ConfigError, match="reset option 'lat' must be a finite number"):
        env.reset(options={"lat": math.inf, "lon": 0.0})
    with pytest.raises(ConfigError, match="not a WGS84 position"):
        env.reset(options={"lat": 123.0, "lon": 0.0})


def test_a_start_far_outside_the_city_is_refused_not_snapped(env) -> None:  # type: ignore[no-untyped-def]
    _south, _west, north, east = env.world.manifest.bbox
    with pytest.raises(
        ConfigError,
        match=r"the start lies \d+ m from the nearest street of the city \(at most 50 m "
        r"allowed\); the city covers lat .*\.\..*, lon .*: give a position inside it",
    ):
        env.reset(options={"lat": north + 0.05, "lon": east + 0.05})
    # A start on a street of the city is still placed at the nearest frame.
    segment = env.world.segment(next(iter(env.world.segments)))
    x_m, y_m = segment.position(segment.walk_m / 2)
    obs, _info = env.reset(options={"x_m": x_m + 3.0, "y_m": y_m})
    assert obs["step"] == 0


@pytest.mark.parametrize("seed", [-1, 1.5, "abc", True])
def test_run_seeds_are_whole_numbers(
    built_city: Path, built_suite: Path, tmp_path: Path, seed: object
) -> None:
    config = EvalConfig(
        city_dir=built_city,
        suite_dir=built_suite,
        agent=AgentSpec(kind="oracle"),
        output_root=tmp_path,
        seed=seed,  # type: ignore[arg-type]
    )
    with pytest.raises(ConfigError, match=r"`seed` must be a whole number >= 0, got"):
        run_eval(config)
    assert not any(tmp_path.iterdir())


# --- broken files ----------------------------------------------------------------------------


def test_a_truncated_frames_mp4_names_the_file_and_the_fix(
    built_city: Path, tmp_path: Path
) -> None:
    from city360.video_store import FrameStore

    source = next((built_city / "trajectories").glob("*/frames.mp4"))
    cut = tmp_path / "frames.mp4"
    data = source.read_bytes()
    cut.write_bytes(data[: len(data) * 2 // 3])
    with FrameStore(cut) as store, pytest.raises(CityFormatError) as caught:
        store.get(len(store) - 1)  # in the part that was cut off
    message = str(caught.value)
    assert str(cut) in message
    assert "re-run `city360 ingest ... --overwrite` for this trajectory" in message


def test_build_refuses_a_trajectory_without_trajectory_json(
    built_city: Path, tmp_path: Path
) -> None:
    from city360.pose_graph.tracks import load_tracks

    city = tmp_path / "city"
    shutil.copytree(built_city, city, ignore=shutil.ignore_patterns("*.mp4", "videos"))
    lost = sorted((city / "trajectories").iterdir())[1]
    (lost / "trajectory.json").unlink()
    with pytest.raises(GraphBuildError, match=rf"{lost}: no trajectory\.json.*re-ingest it"):
        load_tracks(CityDir(city), require_frames=False)
    from typer.testing import CliRunner

    from city360.cli import app

    result = CliRunner().invoke(app, ["build", str(city), "--pose-only"])
    assert result.exit_code != 0
    assert isinstance(result.exception, GraphBuildError)


def test_tasks_check_fails_a_landmark_the_city_does_not_have(
    built_city: Path, built_suite: Path
) -> None:
    from city360.tasks.generate.run import check_suite
    from city360.tasks.suite import load_suite

    suite = load_suite(built_suite)
    task = next(t for t in suite.tasks if t.family.value == "LandmarkSearchText")
    assert check_suite(suite, built_city).ok
    index = suite.tasks.index(task)
    told = task.told.model_copy(update={"landmark": "Imaginary Shop That Is Not There"})
    suite.tasks[index] = task.model_copy(update={"told": told})
    report = check_suite(suite, built_city)
    [issue] = [i for i in report.issues if i.task_id == task.id]
    assert issue.field == "told.landmark"
    assert "'Imaginary Shop That Is Not There' is not a place of this city" in issue.message


# --- disks that fail ---------------------------------------------------------------------------


def _fail_with(code: int):  # type: ignore[no-untyped-def]
    def fail(*_args: object, **_kwargs: object) -> None:
        raise OSError(code, os.strerror(code))

    return fail


def test_disk_full_is_an_output_error_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = ResultsWriter(tmp_path / "results.csv")
    monkeypatch.setattr(os, "fsync", _fail_with(errno.ENOSPC))
    with pytest.raises(OutputError, match=r"results\.csv: No space left on device; the disk is"):
        writer.append(EpisodeResult("t", "VLN", "Easy", "answered"))
    with pytest.raises(OutputError, match=r"run_metadata\.json: No space left.*free some space"):
        atomic_write_json(tmp_path / "run_metadata.json", {"status": "running"})
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_read_only_output_root_is_an_output_error(
    built_city: Path, built_suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ro"
    real_mkdir = Path.mkdir

    def mkdir(self: Path, *args: object, **kwargs: object) -> None:
        if self == root or root in self.parents:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))
        real_mkdir(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "mkdir", mkdir)
    config = EvalConfig(
        city_dir=built_city, suite_dir=built_suite, agent=AgentSpec(kind="oracle"), output_root=root
    )
    with pytest.raises(OutputError, match=r"Read-only file system; the file system is read-only"):
        run_eval(config)


def test_partials_of_killed_writers_are_cleaned_on_the_next_run(tmp_path: Path) -> None:
    target = tmp_path / "walk_000"
    dead = tmp_path / ".walk_000.999999999.k3j2.partial"  # a pid no process has
    old_style = tmp_path / ".walk_000.abcd1234.partial"  # written before partials named pids
    mine = tmp_path / f".walk_000.{os.getpid()}.zz.partial"
    other = tmp_path / ".walk_001.999999999.k3j2.partial"
    for folder in (dead, old_style, mine, other):
        folder.mkdir()
        (folder / "frames.mp4").write_bytes(b"\0" * 1000)
    assert sorted(p.name for p in clean_stale_partials(target)) == sorted(
        [dead.name, old_style.name]
    )
    assert mine.exists()
    assert other.exists()  # another target's
    shutil.rmtree(mine)
    with atomic_dir(target) as tmp:
        (tmp / "trajectory.json").write_text(json.dumps({}), encoding="utf-8")
    assert (target / "trajectory.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == [other.name, "walk_000"]


def test_ingest_offset_overflow_is_a_config_error() -> None:
    from city360.video_store.cli import parse_offset

    with pytest.raises(ConfigError, match=r"--offset 1e300 s is more than \d+ s \(10 years\)"):
        parse_offset("1e300")
    assert parse_offset("-3600.5") == -3600.5
