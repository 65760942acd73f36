"""Packaged cities by name: paths win, names build on first use, unknown names say which exist."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import city360
from city360 import cities
from city360.cli import app
from city360.errors import ConfigError, PackagedCityBuildError


def test_an_existing_path_wins_over_a_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "demo").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cities, "ensure_city", lambda *_a, **_k: pytest.fail("built a city"))
    assert cities.resolve_city("demo") == Path("demo")


def test_a_name_builds_the_packaged_city(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    asked: list[str] = []

    def fake_ensure(name: str) -> Path:
        asked.append(name)
        return tmp_path / "built"

    monkeypatch.setattr(cities, "ensure_city", fake_ensure)
    assert cities.resolve_city("demo") == tmp_path / "built"
    assert asked == ["demo"]


def test_an_unknown_name_lists_the_packaged_cities(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="expected a path or one of demo") as info:
        cities.resolve_city("dmeo")
    assert str(info.value).endswith("Did you mean 'demo'?")


def test_a_missing_path_is_left_to_the_reader(tmp_path: Path) -> None:
    assert cities.resolve_city(str(tmp_path / "nowhere")) == tmp_path / "nowhere"


def test_a_suite_name_is_found_in_the_city(tmp_path: Path) -> None:
    (tmp_path / "tasks" / "main").mkdir(parents=True)
    assert cities.resolve_suite("main", tmp_path) == tmp_path / "tasks" / "main"
    assert cities.resolve_suite(str(tmp_path / "x"), tmp_path) == tmp_path / "x"


def test_make_opens_a_packaged_city_by_name(
    built_city: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cities, "ensure_city", lambda _name: built_city)
    with city360.make("demo", renderer="cpu", view_width=64, view_height=48, map=False) as env:
        obs, _ = env.reset(seed=0)
    assert obs["view"].shape == (48, 64, 3)


def test_cities_command_lists_build_state_size_and_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITY360_CACHE_DIR", str(tmp_path))
    root = cities.city_cache_dir("demo")
    (root / "tasks" / "main").mkdir(parents=True)
    (root / "graph.json").write_text("{}")
    (root / "tasks" / "main" / "suite.json").write_text("{}")
    (tmp_path / "demo-oldkey").mkdir()
    result = CliRunner().invoke(app, ["cities", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["demo"]["built"] is True
    assert rows["demo"]["graph"] is None  # no city.json: nothing to say about the build
    assert rows["demo"]["size_bytes"] == 4
    assert rows["demo"]["path"] == str(root)
    assert rows["demo"]["stale_builds"] == [str(tmp_path / "demo-oldkey")]
    table = CliRunner().invoke(app, ["cities"], env={"COLUMNS": "80"})
    assert table.exit_code == 0
    assert "demo" in table.output


def test_cities_command_gives_what_the_build_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo's description said "19 junctions"; the city `make demo` builds has 17 nodes,
    10 of them junctions (issue 17, newuser4). A built city's line is its own city.json's."""
    monkeypatch.setenv("CITY360_CACHE_DIR", str(tmp_path))
    root = cities.city_cache_dir("demo")
    (root / "tasks" / "main").mkdir(parents=True)
    (root / "graph.json").write_text("{}")
    (root / "tasks" / "main" / "suite.json").write_text("{}")
    graph = {"nodes": 17, "junctions": 10, "segments": 42, "total_length_m": 1032.0}
    (root / "city.json").write_text(json.dumps({"stats": {"pose_graph": graph}}))
    result = CliRunner().invoke(app, ["cities", "--json"])
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["demo"]["graph"] == {
        "nodes": 17,
        "junctions": 10,
        "segments": 42,
        "length_m": 1032.0,
    }
    assert rows["helsinki"]["graph"] is None  # not built
    table = CliRunner().invoke(app, ["cities"], env={"COLUMNS": "200"})
    assert "built: 17 nodes (10 junctions), 42 segments, 1.0 km of streets" in table.output
    assert "junctions" not in rows["demo"]["description"]


def test_a_script_without_a_main_guard_can_build_with_ingest_workers(
    synth_city: Path, tmp_path: Path
) -> None:
    """``spawn`` workers re-import the parent's main module: building from a plain script (the
    README's ``city360.make("demo")``) must not run the script again in every worker."""
    videos = sorted((synth_city / "videos").glob("*.mp4"))[:2]
    gps = [a for v in videos for a in ("--gps", str(v.with_suffix(".gpx")))]
    out = tmp_path / "city"
    args = [*(str(v) for v in videos), *gps, "--out", str(out), "--workers", "2"]
    script = tmp_path / "build.py"
    script.write_text(
        "import sys\nfrom city360.cities import run_command_process\n"
        f"print('script ran', file=sys.stderr)\nrun_command_process('ingest', *{args!r})\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr.count("script ran") == 1
    assert len(list((out / "trajectories").iterdir())) == len(videos)


def test_a_failed_build_step_names_the_command(tmp_path: Path) -> None:
    with pytest.raises(PackagedCityBuildError) as info:
        cities.run_command_process("info", str(tmp_path / "nowhere"))
    assert str(info.value).startswith(f"`city360 info {tmp_path / 'nowhere'}` exited with 1 ")


def test_the_code_digest_follows_the_code_that_makes_a_city(tmp_path: Path) -> None:
    package = tmp_path / "city360"
    (package / "pose_graph").mkdir(parents=True)
    (package / "eval").mkdir()
    (package / "city.py").write_text("CITY = 1\n")
    (package / "pose_graph" / "build.py").write_text("SAME_STREET_M = 8.0\n")
    (package / "eval" / "runner.py").write_text("RETRIES = 3\n")
    before = cities.city_making_code_digest(package)
    (package / "eval" / "runner.py").write_text("RETRIES = 4\n")
    assert cities.city_making_code_digest(package) == before
    (package / "pose_graph" / "build.py").write_text("SAME_STREET_M = 7.0\n")
    assert cities.city_making_code_digest(package) != before


def test_a_change_of_the_city_making_code_moves_the_demo_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The version stays 0.1.0 between development commits: the demo built by older build code
    must not be reused (round seventeen's `make demo` reused one, 1092.6 m of streets against
    1035.6 m rebuilt)."""
    monkeypatch.setenv("CITY360_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cities, "_installed_code_digest", lambda: b"old build code")
    old = cities.city_cache_dir("demo")
    monkeypatch.setattr(cities, "_installed_code_digest", lambda: b"new build code")
    assert cities.city_cache_dir("demo") != old
    assert cities.city_cache_dir("demo").parent == old.parent
