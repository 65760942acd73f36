"""The LLM judge of RelationalSpatial answers, end to end through `city360 eval` against the
local OpenAI-compatible test server; and the offline fallback's labels."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from city360.agents.providers.registry import make_provider
from city360.eval.judge import JUDGE_MAX_OUTPUT_TOKENS, LLMJudge
from tests.fixtures.built import run_cli
from tests.fixtures.fake_llm_server import FakeLLMServer


def _rows(run_dir: Path) -> list[dict[str, str]]:
    with open(run_dir / "results.csv", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_eval_with_a_judge_writes_judge_scored_rows(
    built_city: Path, built_suite: Path, tmp_path: Path, fake_llm_server: FakeLLMServer
) -> None:
    # one verdict per RelationalSpatial task, in suite order: yes, no, and one it cannot read
    fake_llm_server.enqueue("is_correct: True", "is_correct: false", "I am not sure.")
    run_cli(
        "eval",
        str(built_city),
        "--suite",
        str(built_suite),
        "--agent",
        "oracle",
        "--tasks",
        "RelationalSpatial",
        "--protocol",
        "reference",
        "--judge-provider",
        "openai",
        "--judge-model",
        "fake-model",
        "--base-url",
        fake_llm_server.openai_base_url,
        "--output-root",
        str(tmp_path),
        "--run-id",
        "judged",
        "--no-report",
    )
    rows = _rows(tmp_path / "judged")
    assert [row["evaluation_score"] for row in rows] == ["1.0000", "0.0000", "0.0000"]
    for row in rows:
        assert row["task_type"] == "RelationalSpatialReasoning"
        assert (row["validation_provider"], row["validation_model"]) == ("openai", "fake-model")
        assert row["judge"] == "openai:fake-model"
        assert row["evaluation_method"] == "llm-judge:openai:fake-model"
    asked = fake_llm_server.generation_requests()
    assert len(asked) == 3
    body = asked[0].body
    assert body["max_tokens"] == JUDGE_MAX_OUTPUT_TOKENS
    question = body["messages"][-1]["content"]
    text = question if isinstance(question, str) else json.dumps(question)
    assert "Expected answer: " in text
    assert "is_correct: True/False" in text
    metadata = json.loads((tmp_path / "judged" / "run_metadata.json").read_text("utf-8"))
    assert metadata["judge"]["label"] == "openai:fake-model"
    assert metadata["protocol"]["name"] == "reference"


def test_without_a_judge_rows_and_summary_say_offline(
    built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    output = run_cli(
        "eval",
        str(built_city),
        "--suite",
        str(built_suite),
        "--agent",
        "oracle",
        "--tasks",
        "RelationalSpatial",
        "--output-root",
        str(tmp_path),
        "--run-id",
        "offline",
        "--no-report",
    )
    rows = _rows(tmp_path / "offline")
    assert {row["evaluation_method"] for row in rows} == {"offline-similarity"}
    assert {row["judge"] for row in rows} == {""}
    assert "3 answer(s) scored offline" in " ".join(output.split())


def test_a_judge_reads_its_verdict(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.enqueue("is_correct: TRUE", "Verdict -> is_correct : False", "yes")
    provider = make_provider("openai", "fake-model", base_url=fake_llm_server.openai_base_url)
    judge = LLMJudge(provider, label="openai:fake-model")
    assert judge("Which shop?", "Agebaka", "Agebaka") is True
    assert judge("Which shop?", "Not Agebaka", "Agebaka") is False
    assert judge("Which shop?", "Agebaka", "Agebaka") is False  # no verdict: not correct
    judge.close()


def test_judge_options_go_together(built_city: Path, built_suite: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from city360.cli import app

    result = CliRunner().invoke(
        app,
        ["eval", str(built_city), "--suite", str(built_suite), "--judge-provider", "openai"],
    )
    assert result.exit_code == 2
    assert "--judge-provider and --judge-model go together" in result.output


@pytest.mark.parametrize("answer", ["Not {name}", "It is not {name}", "{name} or the bakery"])
def test_offline_fallback_rejects_negations_of_the_real_answers(
    built_suite: Path, answer: str
) -> None:
    from city360.eval.metrics import score_answer
    from city360.tasks.suite import load_suite

    for task in load_suite(built_suite).tasks:
        if task.family == "RelationalSpatial":
            name = task.expected_answer()
            assert score_answer(task, name, None).score == 1.0
            assert score_answer(task, answer.format(name=name), None).score == 0.0
