from __future__ import annotations

import json
from pathlib import Path

import pytest

from city360.errors import InputFileError
from city360.eval.results import (
    RESULT_COLUMNS,
    EpisodeResult,
    ResultsWriter,
    StepLogWriter,
    finished_task_ids,
    read_results,
)


def _result(task_id: str, **kwargs: object) -> EpisodeResult:
    fields: dict[str, object] = {
        "task_type": "map_navigation",
        "difficulty": "Easy",
        "status": "answered",
        **kwargs,
    }
    return EpisodeResult(task_id=task_id, **fields)  # type: ignore[arg-type]


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    original = _result(
        "t1",
        scored_success=True,
        is_correct=True,
        evaluation_score=1.0,
        distance_to_goal_m=3.25,
        final_lat=60.1,
        spl=None,
        oracle_success=True,
        extra={"note": "ö"},
        user_answer="a,b\n",
    )
    with ResultsWriter(path) as writer:
        writer.append(original)
        writer.append(_result("t2", status="step_limit"))
    rows = read_results(path)
    assert rows[0] == original
    assert rows[1].status == "step_limit"
    assert rows[1].distance_to_goal_m is None
    header = path.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert tuple(header) == RESULT_COLUMNS
    for column in (
        "task_id",
        "task_type",
        "difficulty",
        "status",
        "scored_success",
        "is_correct",
        "completed_by_answer",
        "evaluation_metric",
        "evaluation_score",
        "steps",
        "elapsed_seconds",
        "user_answer",
        "expected",
    ):
        assert column in header


def test_torn_last_line_is_dropped_and_repaired(tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    with ResultsWriter(path) as writer:
        writer.append(_result("t1"))
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("t2,map_navigation,Ea")  # killed mid-write
    assert finished_task_ids(read_results(path)) == {"t1"}
    with ResultsWriter(path) as writer:
        writer.append(_result("t3"))
    assert [r.task_id for r in read_results(path)] == ["t1", "t3"]


def test_missing_results_file_says_what_it_expected(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match=r"results\.csv not found; is this a run folder"):
        read_results(tmp_path / "results.csv")


def test_step_log_is_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "episodes" / "t1.jsonl"
    with StepLogWriter(path) as log:
        log.write({"step": 1, "action": "W"})
        log.write({"step": 2, "action": "ANSWER", "answer": "x:1 y:2"})
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert lines[1]["answer"] == "x:1 y:2"


REFERENCE_HEADER = [
    "timestamp",
    "run_id",
    "experiment_id",
    "task_id",
    "task_type",
    "difficulty",
    "map_id",
    "landmark",
    "model",
    "provider",
    "pretrained",
    "max_tokens",
    "temperature",
    "validation_model",
    "validation_provider",
    "validation_pretrained",
    "status",
    "scored_success",
    "is_correct",
    "validation_available",
    "completed_by_answer",
    "evaluation_metric",
    "evaluation_score",
    "steps",
    "act_requests",
    "elapsed_seconds",
    "final_action",
    "final_position_x",
    "final_position_z",
    "final_segment_path",
    "user_answer",
    "expected",
    "distance_to_goal",
    "validation_threshold",
    "message",
    "stop_reason_detail",
    "llm_request_count",
    "llm_error_count",
    "parse_error_count",
    "invalid_action_count",
    "request_error_count",
    "total_prompt_tokens",
    "total_completion_tokens",
    "total_tokens",
    "total_llm_latency_seconds",
    "avg_llm_latency_seconds",
    "last_finish_reason",
    "last_response_model",
    "last_error_type",
    "last_error_message",
    "artifact_dir",
]
"""360CityArena's results.csv schema v3 (docs/results_schema.md; RESULT_FIELDNAMES of
python/src/cityarena/runner/agent_server.py), in its order."""


def test_the_reference_columns_come_first_in_its_order() -> None:
    assert len(REFERENCE_HEADER) == 51
    assert list(RESULT_COLUMNS[:51]) == REFERENCE_HEADER
    assert not set(RESULT_COLUMNS[51:]) & set(REFERENCE_HEADER)


@pytest.mark.parametrize(
    ("family", "task_type"),
    [
        ("Localization", "Localization"),
        ("LandmarkSearchText", "LandmarkSearchWithLanguage"),
        ("LandmarkSearchImage", "LandmarkSearchWithImage"),
        ("MapNavigation", "MapNavigation"),
        ("VLN", "LanguageGuidedNavigation"),
        ("ObjectCount", "Counting"),
        ("RelationalSpatial", "RelationalSpatialReasoning"),
    ],
)
def test_task_types_are_the_references(family: str, task_type: str) -> None:
    row = _result("t", task_type=family).to_row()
    assert (row["task_type"], row["family"]) == (task_type, family)


@pytest.mark.parametrize(
    ("status", "reference"),
    [
        ("answered", "ANSWER"),
        ("step_limit", "STEP_LIMIT"),
        ("stagnation", "STAGNATION"),
        ("away_from_goal", "AWAY_FROM_GOAL"),
        ("step_timeout", "IDLE_TIMEOUT"),
    ],
)
def test_statuses_are_the_references(status: str, reference: str) -> None:
    row = _result("t", status=status).to_row()
    assert (row["status"], row["stop_reason"]) == (reference, status)


@pytest.mark.parametrize(
    ("metric", "reference"),
    [
        ("exact_match", "exact_match"),
        ("coordinate_match", "coordinate_match"),
        ("fuzzy_match", "fuzzy_match"),
        ("count_mra", "mean_relative_accuracy"),
    ],
)
def test_metric_names_are_the_references(metric: str, reference: str) -> None:
    row = _result("t", evaluation_metric=metric).to_row()
    assert (row["evaluation_metric"], row["metric"]) == (reference, metric)


def test_navigation_rows_write_the_references_answer_forms() -> None:
    row = _result(
        "t",
        task_type="MapNavigation",
        status="step_limit",
        threshold_m=20.0,
        final_x_m=12.3456,
        final_y_m=-4.5,
        user_answer="",
        reference_expected="x:10.00 y:-3.00",
        expected="x:10.000 y:-3.000",
        is_correct=True,
        distance_to_goal_m=2.9,
        evaluation_score=0.0,
    ).to_row()
    assert row["user_answer"] == "12.35 -4.50"
    assert row["expected"] == "x:10.00 y:-3.00"
    assert (row["final_position_x"], row["final_position_z"]) == ("12.3456", "-4.5000")
    assert (row["distance_to_goal"], row["validation_threshold"]) == ("2.9000", "20")
    # final-position correctness without ANSWER: is_correct true, no score, no success
    assert (row["is_correct"], row["scored_success"], row["evaluation_score"]) == (
        "true",
        "false",
        "0.0000",
    )


def test_files_of_the_37_column_schema_still_read(tmp_path: Path) -> None:
    old = (
        "task_id,task_type,difficulty,status,scored_success,is_correct,evaluation_score,steps\n"
        "t1,VLN,Easy,answered,true,true,1,7\n"
    )
    path = tmp_path / "results.csv"
    path.write_text(old, encoding="utf-8")
    (row,) = read_results(path)
    assert (row.task_type, row.status, row.steps, row.scored_success) == (
        "VLN",
        "answered",
        7,
        True,
    )
