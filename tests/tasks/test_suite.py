from __future__ import annotations

import json
from pathlib import Path

import pytest

from city360.errors import InputFileError, TaskError
from city360.tasks.suite import Suite, load_suite, save_suite
from tests.tasks.helpers import as_task, localization_task, vln_task


def _suite() -> Suite:
    return Suite(
        name="hand",
        city="toy",
        tasks=[as_task(localization_task()), as_task(vln_task())],
        assets={"assets/grid_map.png": b"\x89PNG fake bytes"},
        grid_area_m=(-10.0, -170.0, 170.0, 10.0),
    )


def _write(folder: Path, payload: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "suite.json").write_text(json.dumps(payload), encoding="utf-8")
    return folder


def test_round_trip_and_stable_hash(tmp_path: Path) -> None:
    suite = _suite()
    before = suite.content_hash()
    save_suite(suite, tmp_path / "s")
    loaded = load_suite(tmp_path / "s")
    assert loaded == suite
    assert loaded.content_hash() == before
    save_suite(loaded, tmp_path / "s2")
    assert load_suite(tmp_path / "s2").content_hash() == before


def test_hash_covers_asset_bytes_and_tasks(tmp_path: Path) -> None:
    suite = _suite()
    changed = Suite(
        name=suite.name,
        city=suite.city,
        tasks=suite.tasks,
        assets={"assets/grid_map.png": b"other"},
        grid_area_m=suite.grid_area_m,
    )
    assert changed.content_hash() != suite.content_hash()
    fewer = Suite(name="hand", city="toy", tasks=suite.tasks[1:], grid_area_m=suite.grid_area_m)
    assert fewer.content_hash() != suite.content_hash()


def test_select_by_family_and_id() -> None:
    suite = _suite()
    assert [t.id for t in suite.select("VLN")] == ["vln-001"]
    assert [t.id for t in suite.select("loc-001,vln-001")] == ["loc-001", "vln-001"]
    with pytest.raises(TaskError, match=r"has no task 'vln-01'\. Did you mean 'vln-001'"):
        suite.select("vln-01")


def test_save_refuses_to_overwrite(tmp_path: Path) -> None:
    save_suite(_suite(), tmp_path / "s")
    with pytest.raises(OSError, match="already exists and is not empty"):
        save_suite(_suite(), tmp_path / "s")


def test_missing_suite_file(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match=r"suite\.json not found"):
        load_suite(tmp_path)


def test_malformed_json(tmp_path: Path) -> None:
    tmp_path.joinpath("suite.json").write_text('{"name": "x", "tasks": [', encoding="utf-8")
    with pytest.raises(TaskError, match=r"suite.json: not valid JSON \(line 1, column 25"):
        load_suite(tmp_path)


def test_unknown_family_names_task_and_close_match(tmp_path: Path) -> None:
    folder = _write(tmp_path, {"name": "s", "city": "c", "tasks": [vln_task(family="VLM")]})
    with pytest.raises(TaskError) as info:
        load_suite(folder)
    assert str(info.value) == (
        f"{folder / 'suite.json'}: task 'vln-001': field 'family': unknown task family 'VLM'; "
        "expected one of Localization, LandmarkSearchText, LandmarkSearchImage, MapNavigation, "
        "VLN, ObjectCount, RelationalSpatial, Errand. Did you mean 'VLN'?"
    )


def test_missing_fields_are_named(tmp_path: Path) -> None:
    raw = vln_task()
    del raw["truth"]["goal"]
    del raw["difficulty"]
    folder = _write(tmp_path, {"name": "s", "city": "c", "tasks": [raw]})
    with pytest.raises(TaskError) as info:
        load_suite(folder)
    lines = str(info.value).splitlines()
    path = folder / "suite.json"
    assert f"{path}: task 'vln-001': field 'difficulty': Field required" in lines
    assert f"{path}: task 'vln-001': field 'truth.goal': Field required" in lines


def test_missing_family_field(tmp_path: Path) -> None:
    raw = localization_task()
    del raw["family"]
    folder = _write(tmp_path, {"name": "s", "city": "c", "tasks": [raw]})
    with pytest.raises(TaskError, match="task 'loc-001': field 'family': Field required"):
        load_suite(folder)


def test_reference_image_missing(tmp_path: Path) -> None:
    folder = _write(tmp_path, {"name": "s", "city": "c", "tasks": [localization_task()]})
    with pytest.raises(TaskError) as info:
        load_suite(folder)
    assert str(info.value) == (
        f"{folder / 'suite.json'}: task 'loc-001': field 'told.grid_map': reference image "
        "assets/grid_map.png not found in the suite's assets"
    )


def test_asset_path_must_stay_inside(tmp_path: Path) -> None:
    raw = localization_task(told={"grid_size": 5, "grid_map": "../outside.png"})
    folder = _write(tmp_path, {"name": "s", "city": "c", "tasks": [raw]})
    with pytest.raises(TaskError, match=r"'\.\./outside\.png' must be a relative path inside"):
        load_suite(folder)


def test_duplicate_ids(tmp_path: Path) -> None:
    folder = _write(tmp_path, {"name": "s", "city": "c", "tasks": [vln_task(), vln_task()]})
    with pytest.raises(TaskError, match="task id 'vln-001' is used 2 times"):
        load_suite(folder)


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    folder = _write(
        tmp_path,
        {"name": "s", "city": "c", "tasks": [vln_task(family="Nope"), localization_task()]},
    )
    with pytest.raises(TaskError) as info:
        load_suite(folder)
    text = str(info.value)
    assert "task 'vln-001': field 'family'" in text
    assert "task 'loc-001': field 'told.grid_map'" in text
