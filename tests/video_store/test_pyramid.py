"""The frame pyramid: level sizes, the level a view reads, cities without levels, the command."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from city360.errors import ConfigError
from city360.simulator.config import EnvConfig
from city360.video_store import FrameStore
from city360.video_store.pyramid import (
    build_city_pyramid,
    choose_level,
    level_widths,
    required_width,
    stored_levels,
)


def test_levels_halve_down_to_the_first_at_or_below_512() -> None:
    assert level_widths(3840, 1920) == [1920, 960, 480]
    assert level_widths(1536, 768) == [768, 384]
    assert level_widths(4096, 2048) == [2048, 1024, 512]
    assert level_widths(512, 256) == []
    assert level_widths(1000, 500) == [500]  # 250 would be odd: stop
    assert level_widths(256, 128) == []


def test_the_smallest_level_with_a_source_pixel_per_view_pixel_is_chosen() -> None:
    assert required_width(640, 90.0) == 2560
    assert required_width(84, 90.0) == 336
    levels = level_widths(3840, 1920)
    assert choose_level(3840, levels, 640, 90.0) == 3840  # 1920 < 2560
    assert choose_level(3840, levels, 84, 90.0) == 480
    assert choose_level(3840, levels, 640, 90.0, density=0.75) == 1920
    assert choose_level(5760, [2880, 1440, 720], 640, 90.0) == 2880
    assert choose_level(3840, [], 84, 90.0) == 3840  # no levels: the full frames
    assert choose_level(1536, [768, 384], 84, 90.0) == 384
    assert choose_level(1536, [768, 384], 256, 90.0) == 1536  # 1024 wanted
    with pytest.raises(ConfigError, match="need view_width > 0"):
        required_width(84, 0.0)


def test_the_default_density_reads_the_1920_level_of_a_3840_city_at_640_px() -> None:
    config = EnvConfig()
    levels = level_widths(3840, 1920)
    assert config.source_width(640, 90.0) == pytest.approx(1920.0)
    assert choose_level(3840, levels, 640, 90.0, density=config.pyramid_density or 1.0) == 1920
    assert choose_level(3840, levels, 84, 90.0, density=config.pyramid_density or 1.0) == 480
    assert EnvConfig(pyramid_density=None).source_width(640, 90.0) is None


@pytest.fixture(scope="module")
def pyramid_city(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The simulator's plus city at 1024x512 (levels 512), with its pyramid built."""
    from tests.simulator.handmade import build_city

    root = build_city(tmp_path_factory.mktemp("pyramid-city"), width=1024, height=512)
    return root


def test_command_builds_levels_and_a_city_without_them_keeps_working(
    pyramid_city: Path, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    import city360
    from city360.cli import app

    bare = tmp_path / "bare"
    shutil.copytree(pyramid_city, bare)
    frames = bare / "trajectories" / "ns" / "frames.mp4"
    assert stored_levels(frames) == {}
    view = {"view_width": 84, "view_height": 84, "map": False, "renderer": "cpu"}
    with city360.make(bare, **view) as env:  # no levels: the full frames
        before, _ = env.reset(seed=0, options={"segment": "ns_a", "offset_m": 4.0})
        assert env.world.level_width("ns", 336.0) == 1024
    result = CliRunner().invoke(app, ["pyramid", str(bare)])
    assert result.exit_code == 0, result.output
    assert "2 level files written" in result.output
    assert set(stored_levels(frames)) == {512}
    with FrameStore(frames.with_name("frames_512.mp4")) as level, FrameStore(frames) as full:
        assert (level.width, level.height, len(level)) == (512, 256, len(full))
        small = level.get(10).astype(np.float64)
        big = full.get(10).astype(np.float64)
        # the level is the area average of the full frame
        shrunk = big.reshape(256, 2, 512, 2, 3).mean(axis=(1, 3))
        assert np.abs(small - shrunk).mean() < 4.0
    with city360.make(bare, **view) as env:
        after, _ = env.reset(seed=0, options={"segment": "ns_a", "offset_m": 4.0})
        assert env.world.level_width("ns", 336.0) == 512
        assert env.world.store("ns", min_width=336.0).width == 512
        assert env.world.store("ns").width == 1024
    # the same picture from the smaller level
    diff = np.abs(after["view"].astype(int) - before["view"].astype(int))
    assert diff.mean() < 6.0
    with city360.make(bare, pyramid_density=None, **view) as env:
        env.reset(seed=0)
        assert {s.width for s in env.world._stores.values()} == {1024}
    again = CliRunner().invoke(app, ["pyramid", str(bare)])
    assert "0 level files written" in again.output


def test_a_big_view_reads_the_full_frames(pyramid_city: Path) -> None:
    import city360

    build_city_pyramid(pyramid_city)
    with city360.make(pyramid_city, view_width=320, view_height=240, map=False) as env:
        env.reset(seed=0)
        assert {s.width for s in env.world._stores.values()} == {1024}  # 1280 wanted


def test_pyramid_of_a_city_without_trajectories_says_what_to_do(tmp_path: Path) -> None:
    from city360.errors import InputFileError

    with pytest.raises(InputFileError, match="has no trajectories/; run `city360 ingest"):
        build_city_pyramid(tmp_path)
