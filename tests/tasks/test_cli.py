"""``city360 tasks generate`` / ``check`` end to end on a city made by ``city360 synth`` and
built by the pose-graph builder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from city360.cli import app
from city360.tasks.schema import Family
from city360.tasks.suite import load_suite

runner = CliRunner()


@pytest.fixture(scope="module")
def generated_suite(built_synth_city: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("suites") / "suite"
    result = runner.invoke(
        app,
        ["tasks", "generate", str(built_synth_city), "--out", str(out), "--per-family", "3"],
    )
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output
    return out


def test_generate_makes_every_family(generated_suite: Path) -> None:
    suite = load_suite(generated_suite)
    assert {t.family for t in suite.tasks} == set(Family)
    assert suite.created["generator"] == "city360.tasks (groundtruth)"
    assert suite.grid_area_m is not None


def test_reference_images_show_the_sign(generated_suite: Path) -> None:
    from PIL import Image

    suite = load_suite(generated_suite)
    for task in suite.tasks:
        if task.family is Family.LANDMARK_IMAGE:
            image = np.asarray(Image.open(generated_suite / task.told.reference_image))
            assert image.shape == (480, 640, 3)
            assert image.std() > 10  # a rendered scene, not a blank frame


def test_route_map_markers_are_at_start_and_goal(built_synth_city: Path) -> None:
    from city360.maps.citymap import CityMap
    from city360.streets import StreetGraph
    from city360.tasks.generate.images import MAP_PX, CityImages, grid_for_graph

    graph = StreetGraph.open(built_synth_city)
    grid = grid_for_graph(graph, 5)
    assert grid == CityMap.open(built_synth_city).grid  # one grid for maps and tasks
    with CityImages(built_synth_city, graph, grid) as images:
        image = images.route_map((0.0, 0.0), (40.0, -40.0))
    _, transform = CityMap.open(built_synth_city).route_map_with_transform(
        (0.0, 0.0), (40.0, -40.0), size_px=MAP_PX
    )
    for (x_m, y_m), colour in (((0.0, 0.0), "blue"), ((40.0, -40.0), "red")):
        col, row = (round(float(v)) for v in transform.xy_to_px(x_m, y_m))
        r, _g, b = (int(v) for v in image[row, col])
        strong, weak = (b, r) if colour == "blue" else (r, b)
        assert strong > 150, image[row, col]
        assert weak < 100, image[row, col]


def test_landmark_views_of_a_city_filmed_from_another_scene_are_refused(
    built_synth_city: Path, tmp_path: Path
) -> None:
    """The scene a landmark view renders is rebuilt from the city's extract; one that is not
    the scene the truth was made from (a city filmed by code that cut its bbox otherwise, so
    its signs stand elsewhere) is refused, as a refilm refuses it, not rendered."""
    from city360.errors import CityFormatError
    from city360.streets import StreetGraph
    from city360.tasks.generate.images import CityImages, grid_for_graph

    city = tmp_path / "city"
    shutil.copytree(built_synth_city, city)
    manifest = json.loads((city / "city.json").read_text())
    manifest["stats"]["pois"] += 1
    (city / "city.json").write_text(json.dumps(manifest))
    graph = StreetGraph.open(city)
    with (
        CityImages(city, graph, grid_for_graph(graph, 5)) as images,
        pytest.raises(CityFormatError, match=r"synthesize the city again"),
    ):
        images.landmark_view(0.0, 0.0, heading_deg=0.0, look_bearing_deg=90.0)


def test_check_passes_and_fails_with_task_ids(
    generated_suite: Path, built_synth_city: Path, tmp_path: Path
) -> None:
    result = runner.invoke(
        app, ["tasks", "check", str(generated_suite), "--city", str(built_synth_city)]
    )
    assert result.exit_code == 0, result.output
    assert "tasks pass" in result.output

    broken = tmp_path / "broken"
    shutil.copytree(generated_suite, broken)
    data = json.loads((broken / "suite.json").read_text(encoding="utf-8"))
    for task in data["tasks"]:
        if task["family"] == "MapNavigation":
            task["truth"]["goal"]["x_m"] += 5000.0
            bad_id = task["id"]
            break
    (broken / "suite.json").write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(app, ["tasks", "check", str(broken), "--city", str(built_synth_city)])
    assert result.exit_code == 1
    assert f"1 of {len(data['tasks'])} tasks fail: {bad_id}" in result.output


def test_real_city_gets_the_families_osm_can_carry(built_synth_city: Path, tmp_path: Path) -> None:
    real = tmp_path / "real"
    shutil.copytree(built_synth_city, real)
    shutil.rmtree(real / "groundtruth")
    from city360.tasks.generate.run import check_suite, generate_suite

    suite, report = generate_suite(real, per_family=3, seed=2)
    made = {t.family for t in suite.tasks}
    assert made == {
        Family.LOCALIZATION,
        Family.LANDMARK_TEXT,
        Family.MAP_NAVIGATION,
        Family.VLN,
        Family.ERRAND,
    }
    assert any("ObjectCount: not generated for a real city" in n for n in report.notes)
    assert suite.created["generator"] == "city360.tasks (osm)"
    assert {t.meta["source"] for t in suite.tasks if "source" in t.meta} == {"osm"}
    assert check_suite(suite, real).ok


def test_a_city_without_osm_labels_its_tasks_from_its_graph(
    built_synth_city: Path, tmp_path: Path
) -> None:
    """Tasks of a city built without any OSM data carried ``meta.source: "osm"`` while the
    suite's generator said ``(graph)`` (issue 17, round twenty-one: newuser4 saw it)."""
    from city360.city import CityDir
    from city360.tasks.generate.run import generate_suite

    real = tmp_path / "real"
    shutil.copytree(built_synth_city, real)
    shutil.rmtree(real / "groundtruth")
    city = CityDir(real)
    city.osm_extract_path.unlink(missing_ok=True)
    manifest = city.read_manifest()
    city.write_manifest(
        manifest.model_copy(update={"sources": [s for s in manifest.sources if s.kind != "osm"]})
    )
    assert city.osm_source() is None

    suite, _ = generate_suite(real, per_family=3, seed=2)
    assert suite.created["generator"] == "city360.tasks (graph)"
    labelled = [t.meta["source"] for t in suite.tasks if "source" in t.meta]
    assert labelled, "no family labelled its tasks' source"
    assert set(labelled) == {"graph"}


def test_show_prints_prompts_and_hides_truth(generated_suite: Path) -> None:
    result = runner.invoke(app, ["tasks", "show", str(generated_suite), "Localization"])
    assert result.exit_code == 0, result.output
    assert "x:i y:j" in result.output
    assert "[expected]" not in result.output
    result = runner.invoke(app, ["tasks", "show", str(generated_suite), "loc-001", "--truth"])
    assert "[expected] x:" in result.output


def test_check_refuses_a_suite_of_another_city(
    generated_suite: Path, built_synth_city: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    shutil.copytree(generated_suite, other)
    data = json.loads((other / "suite.json").read_text(encoding="utf-8"))
    data["city"] = "elsewhere"
    (other / "suite.json").write_text(json.dumps(data), encoding="utf-8")
    from city360.errors import TaskError
    from city360.tasks.generate.run import check_suite

    with pytest.raises(TaskError, match="is for city 'elsewhere'"):
        check_suite(load_suite(other), built_synth_city)


def test_show_and_check_take_a_suite_name_with_the_city(
    generated_suite: Path, built_synth_city: Path, tmp_path: Path
) -> None:
    """`eval demo --suite main` finds the demo's suite by name; `tasks check main --city demo`
    and `tasks show` said "main/suite.json not found" (issue 17, newuser4)."""
    city = tmp_path / "city"
    shutil.copytree(built_synth_city, city)
    shutil.copytree(generated_suite, city / "tasks" / "main")
    result = runner.invoke(app, ["tasks", "check", "main", "--city", str(city), "--no-replay"])
    assert result.exit_code == 0, result.output
    assert "tasks pass" in result.output
    result = runner.invoke(app, ["tasks", "show", "main", "loc-001", "--city", str(city)])
    assert result.exit_code == 0, result.output
    assert "x:i y:j" in result.output
    # a path still wins, and without --city a name is a path
    result = runner.invoke(app, ["tasks", "show", "main", "loc-001"])
    assert result.exit_code == 1
    assert "main/suite.json not found" in str(result.exception)
