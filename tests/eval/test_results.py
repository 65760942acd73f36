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
