from __future__ import annotations

import pytest
from pydantic import ValidationError

from city360.errors import TaskError
from city360.tasks.families import all_families, get_family
from city360.tasks.families.localization import LocalizationTask
from city360.tasks.families.vln import VLNTask
from city360.tasks.prompts import prompt_hash
from city360.tasks.schema import Family, MetricName
from tests.tasks.helpers import as_task, localization_task, vln_task


def test_discriminated_union_picks_the_family_model() -> None:
    assert isinstance(as_task(localization_task()), LocalizationTask)
    assert isinstance(as_task(vln_task()), VLNTask)


def test_defaults_metric_and_step_limit() -> None:
    task = as_task(localization_task())
    assert task.metric.name == MetricName.EXACT_MATCH
    assert task.step_limit == 50
    assert task.expected_answer() == "x:1 y:1"


def test_agent_view_hides_truth_and_start() -> None:
    task = as_task(vln_task())
    view = task.agent_view(suite_root="/suites/demo")
    dumped = view.model_dump_json()
    assert "Kahvila Aalto" in view.prompt
    assert "threshold_m" not in dumped
    assert "s0-1" not in dumped
    assert "22.0" not in dumped
    assert set(view.model_dump()) == {
        "id", "family", "difficulty", "prompt", "answer_format", "reference_images", "step_limit"
    }  # fmt: skip


def test_agent_view_resolves_reference_images() -> None:
    view = as_task(localization_task()).agent_view(suite_root="/suites/demo")
    assert view.reference_images == ["/suites/demo/assets/grid_map.png"]
    assert "x:i y:j" in view.prompt


def test_wrong_metric_for_family_is_rejected() -> None:
    with pytest.raises(ValidationError, match="scored by exact_match, not count_mra"):
        as_task(localization_task(metric={"name": "count_mra"}))


def test_goal_threshold_must_match_metric() -> None:
    with pytest.raises(ValidationError, match=r"truth.goal.threshold_m \(10.0\) differs"):
        as_task(vln_task(metric={"name": "coordinate_match", "threshold_m": 20.0}))


def test_grid_cells_count_from_one() -> None:
    with pytest.raises(ValidationError, match="grid cells count from 1"):
        as_task(localization_task(truth={"cell": [0, 2], "x_m": 0, "y_m": 0}))


def test_registry_has_eight_families_with_prompts() -> None:
    names = [spec.name for spec in all_families()]
    assert names == list(Family)
    assert all(spec.template and spec.answer_format for spec in all_families())
    assert get_family("MapNavigation").threshold_m == 20.0
    assert get_family(Family.MAP_NAVIGATION).away_from_goal
    # Version 2: the localization template numbers its grid from {first} (protocols); the
    # rendered default prompt is the wording of round one. Errand's template joined in issue 19.
    assert prompt_hash() == "10b197d2e0e7242bf09d3c7204a32affd3ee2ce042d02d3151fa5430c42fab6a"


def test_unknown_family_name_suggests_a_close_match() -> None:
    with pytest.raises(TaskError, match=r"unknown task family 'VLM'.*Did you mean 'VLN'"):
        get_family("VLM")


def test_schema_is_a_leaf_so_prompts_cannot_form_a_circle() -> None:
    import ast
    from pathlib import Path

    import city360.tasks.schema as schema

    tree = ast.parse(Path(schema.__file__).read_text(encoding="utf-8"))
    imported = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module is not None
    }
    assert not {name for name in imported if name.startswith("city360.tasks")}
