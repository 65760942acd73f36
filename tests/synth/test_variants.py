"""Conditions as variants of one built city: same frames, poses and times; other pictures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from city360._gl import gl_available
from city360.city import CityDir, file_sha256
from city360.errors import CityFormatError, ConditionMissingError, ConfigError, OutputError
from city360.simulator.world import World
from city360.synth.variants import add_condition
from city360.video_store import FrameStore
from tests.fixtures.built import NIGHT


@pytest.fixture(autouse=True)
def _needs_gl() -> None:
    if not gl_available():
        pytest.skip("no OpenGL context (install Mesa EGL: apt-get install libegl1 libegl-mesa0)")


def _luma_mean(store: FrameStore, index: int) -> float:
    image = store.get(index).astype(np.float64)
    return float((image @ np.array([0.299, 0.587, 0.114])).mean())


def test_variant_has_the_base_frame_count_and_poses(night_city: Path) -> None:
    city = CityDir(night_city)
    meta = city.read_condition(NIGHT)
    assert city.condition_names() == ["day", NIGHT]
    assert set(meta.frame_counts) == set(city.trajectory_ids())
    for trajectory_id in city.trajectory_ids():
        base = city.read_trajectory_meta(trajectory_id)
        assert meta.frame_counts[trajectory_id] == base.frame_count
        with (
            FrameStore(city.frames_path(trajectory_id)) as day,
            FrameStore(city.frames_path(trajectory_id, condition=NIGHT)) as night,
        ):
            assert len(night) == len(day) == base.frame_count
            assert (night.width, night.height) == (day.width, day.height)
    # the variant brings no poses of its own: the trajectory's poses.csv serves both
    assert not list(city.condition_dir(NIGHT).rglob("poses.csv"))
    assert meta.synth["seed"] == city.read_manifest().build["synth"]["seed"]


def test_variant_frames_are_darker_at_the_same_poses(night_city: Path) -> None:
    city = CityDir(night_city)
    trajectory_id = city.trajectory_ids()[0]
    with (
        FrameStore(city.frames_path(trajectory_id)) as day,
        FrameStore(city.frames_path(trajectory_id, condition=NIGHT)) as night,
    ):
        for index in (0, len(day) // 2, len(day) - 1):
            assert _luma_mean(night, index) < 0.6 * _luma_mean(day, index)


def test_adding_a_condition_leaves_the_base_city_unchanged(
    built_city: Path, night_city: Path
) -> None:
    base, variant = CityDir(built_city), CityDir(night_city)
    for trajectory_id in base.trajectory_ids():
        for name in ("frames.mp4", "poses.csv", "trajectory.json"):
            before = base.trajectory_dir(trajectory_id) / name
            after = variant.trajectory_dir(trajectory_id) / name
            assert file_sha256(before) == file_sha256(after)
    assert file_sha256(base.graph_path) == file_sha256(variant.graph_path)


def test_info_lists_the_conditions(night_city: Path) -> None:
    from typer.testing import CliRunner

    from city360.cli import app

    info = CliRunner().invoke(app, ["info", str(night_city), "--json"])
    assert info.exit_code == 0, info.output
    assert '"conditions": "day, night"' in info.stdout


def test_world_reads_the_condition_and_refuses_a_missing_one(night_city: Path) -> None:
    with World(night_city, condition=NIGHT) as world:
        assert world.condition == NIGHT
        trajectory_id = next(iter(world.trajectories))
        assert len(world.store(trajectory_id)) == world.trajectories[trajectory_id].frame_count
    with pytest.raises(
        ConditionMissingError,
        match=r"has no condition 'fog'; it has day, night\. Add it with "
        r"`city360 condition add .* fog`",
    ):
        World(night_city, condition="fog")
    with pytest.raises(
        ConditionMissingError,
        match=r"no condition 'snow'; it has day, night\. conditions that can be filmed: dusk, fog, "
        r"night, rain",
    ):
        World(night_city, condition="snow")


def test_a_variant_with_a_wrong_frame_count_is_refused(night_city: Path, tmp_path: Path) -> None:
    root = tmp_path / "city"
    shutil.copytree(night_city, root, ignore=shutil.ignore_patterns("frames_*.mp4"))
    meta_path = CityDir(root).condition_dir(NIGHT) / "condition.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    first = sorted(meta["frame_counts"])[0]
    meta["frame_counts"][first] += 1
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(CityFormatError, match=rf"does not match trajectory '{first}'"):
        World(root, condition=NIGHT)


def test_conditions_need_a_synth_city(built_city: Path, tmp_path: Path) -> None:
    root = tmp_path / "filmed"
    shutil.copytree(built_city, root, ignore=shutil.ignore_patterns("*.mp4"))
    city = CityDir(root)
    manifest = city.read_manifest()
    build = {k: v for k, v in manifest.build.items() if k != "synth"}
    city.write_manifest(manifest.model_copy(update={"synthetic": False, "build": build}))
    with pytest.raises(ConfigError, match="was built from real video, not by `city360 synth`"):
        add_condition(root, "night")


def test_bad_condition_requests(night_city: Path) -> None:
    with pytest.raises(ConfigError, match="condition 'day' is the city's own frames"):
        add_condition(night_city, "day")
    with pytest.raises(ConfigError, match="unknown condition 'smog'"):
        add_condition(night_city, "smog")
    with pytest.raises(OutputError, match="already exists; pass --replace"):
        add_condition(night_city, NIGHT)
