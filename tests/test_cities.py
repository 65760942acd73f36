"""Packaged cities by name: paths win, names build on first use, unknown names say which exist."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import city360
from city360 import cities
from city360.cli import app
from city360.errors import ConfigError


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
    assert rows["demo"]["size_bytes"] == 4
    assert rows["demo"]["path"] == str(root)
    assert rows["demo"]["stale_builds"] == [str(tmp_path / "demo-oldkey")]
    table = CliRunner().invoke(app, ["cities"], env={"COLUMNS": "80"})
    assert table.exit_code == 0
    assert "demo" in table.output
