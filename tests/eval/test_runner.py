"""End-to-end runs on the built synthetic city: oracle, random, resume, workers, Ray."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from city360.errors import ConfigError, InputFileError
from city360.eval.results import read_results
from city360.eval.runner import AgentSpec, EvalConfig, run_eval
from city360.tasks.suite import load_suite
from tests.processes import sigint_as_from_a_terminal

NAVIGATION = ("LandmarkSearchText", "LandmarkSearchImage", "MapNavigation", "VLN")


def _config(city: Path, suite: Path, out: Path, kind: str, **kwargs: object) -> EvalConfig:
    return EvalConfig(
        city_dir=city, suite_dir=suite, agent=AgentSpec(kind=kind), output_root=out, **kwargs
    )  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def oracle_run(built_city: Path, built_suite: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("runs")
    return run_eval(_config(built_city, built_suite, out, "oracle", run_id="oracle"))


def test_oracle_solves_every_task_and_writes_every_output(oracle_run, built_suite: Path) -> None:
    suite = load_suite(built_suite)
    assert oracle_run.status == "complete"
    assert [r.task_id for r in oracle_run.results] == [t.id for t in suite.tasks]
    failures = [
        (r.task_id, r.status, r.evaluation_score)
        for r in oracle_run.results
        if not r.scored_success
    ]
    assert failures == []
    run_dir = oracle_run.run_dir
    rows = read_results(run_dir / "results.csv")
    assert len(rows) == len(suite.tasks)
    metadata = json.loads((run_dir / "run_metadata.json").read_text(encoding="utf-8"))
    assert metadata["status"] == "complete"
    assert metadata["config"]["env_options"] == {
        "map": True,
        "prefetch": False,
        "condition": "day",
    }
    assert metadata["condition"] == "day"
    assert {row.condition for row in rows} == {"day"}
    assert metadata["suite_hash"] == suite.content_hash()
    assert metadata["code"]["commit"]
    for row in rows:
        log = (run_dir / "episodes" / f"{row.task_id}.jsonl").read_text(encoding="utf-8")
        records = [json.loads(line) for line in log.splitlines()]
        assert records[0]["type"] == "episode"
        assert records[-1]["step"] == row.steps
        assert "view" not in records[-1]


def test_scores_match_a_hand_check(oracle_run, built_suite: Path) -> None:
    suite = load_suite(built_suite)
    for row in oracle_run.results:
        task = suite.task(row.task_id)
        if row.task_type in NAVIGATION:
            goal = task.truth.goal
            distance = math.hypot(row.final_x_m - goal.x_m, row.final_y_m - goal.y_m)
            assert row.distance_to_goal_m == pytest.approx(distance, abs=1e-3)
            assert (distance <= goal.threshold_m) == row.is_correct
            assert row.spl is not None
            assert 0.0 < row.spl <= 1.0
        else:
            assert row.user_answer == task.expected_answer()
            assert row.evaluation_score == 1.0


def test_runs_started_in_the_same_second_get_their_own_folders(
    built_city: Path, built_suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs without --run-id whose stamps collide (same second, same agent) do not
    share a folder: the second one is ``-2`` (it failed "already exists" before)."""
    from city360.eval import runner

    monkeypatch.setattr(runner, "_new_run_id", lambda agent: "20261204-030000-random")
    config = _config(built_city, built_suite, tmp_path, "random", select="VLN", seed=1)
    first, second = run_eval(config), run_eval(config)
    assert (first.run_dir.name, second.run_dir.name) == (
        "20261204-030000-random",
        "20261204-030000-random-2",
    )
    assert first.status == second.status == "complete"
    for outcome in (first, second):
        metadata = json.loads((outcome.run_dir / "run_metadata.json").read_text("utf-8"))
        assert metadata["run_id"] == outcome.run_dir.name


def test_random_agent_does_not_solve_navigation(
    built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    outcome = run_eval(
        _config(built_city, built_suite, tmp_path, "random", select="MapNavigation,VLN", seed=3)
    )
    solved = sum(r.scored_success for r in outcome.results)
    assert len(outcome.results) == 6
    assert solved < len(outcome.results) / 2
    assert {r.status for r in outcome.results} <= {
        "answered",
        "step_limit",
        "stagnation",
        "away_from_goal",
    }


def test_process_workers_and_ray_match_the_local_run(
    built_city: Path, built_suite: Path, tmp_path: Path, oracle_run
) -> None:
    select = "MapNavigation,Localization"
    local = {
        r.task_id: (r.status, r.evaluation_score, r.steps)
        for r in oracle_run.results
        if r.task_type in select.split(",")
    }
    # prefetching (off by default for the oracle) changes how fast, never what happens
    two = run_eval(
        _config(
            built_city,
            built_suite,
            tmp_path,
            "oracle",
            select=select,
            workers=2,
            env_options={"prefetch": True},
        )
    )
    metadata = json.loads((two.run_dir / "run_metadata.json").read_text(encoding="utf-8"))
    assert metadata["config"]["env_options"]["prefetch"] is True
    ray = run_eval(
        _config(
            built_city, built_suite, tmp_path, "oracle", select=select, workers=2, executor="ray"
        )
    )
    for outcome in (two, ray):
        assert {
            r.task_id: (r.status, r.evaluation_score, r.steps) for r in outcome.results
        } == local


def _eval_cmd(city: Path, suite: Path, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "city360.cli",
        "eval",
        str(city),
        "--suite",
        str(suite),
        "--agent",
        "oracle",
        "--output-root",
        str(out),
        "--no-report",
        *extra,
    ]


def _wait_for_rows(results: Path, rows: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if results.is_file() and results.read_text(encoding="utf-8").count("\n") > rows:
            return
        time.sleep(0.05)
    pytest.fail(f"run did not reach {rows} rows (exit {proc.poll()})")


def test_sigkill_then_resume_loses_nothing_and_repeats_nothing(
    built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    total = len(load_suite(built_suite).tasks)
    env = {**os.environ, "CITY360_NO_PROGRESS": "1"}
    proc = subprocess.Popen(
        _eval_cmd(built_city, built_suite, tmp_path, "--run-id", "killed"),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    results = tmp_path / "killed" / "results.csv"
    _wait_for_rows(results, 3, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = read_results(results)
    assert 2 <= len(before) < total
    done = subprocess.run(
        _eval_cmd(built_city, built_suite, tmp_path, "--resume", "killed"),
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    after = read_results(results)
    ids = [r.task_id for r in after]
    assert len(ids) == len(set(ids)) == total
    assert [r.task_id for r in after[: len(before)]] == [r.task_id for r in before]
    metadata = json.loads((tmp_path / "killed" / "run_metadata.json").read_text("utf-8"))
    assert metadata["status"] == "complete"
    assert len(metadata["resumed_at"]) == 1


def test_ctrl_c_marks_the_run_interrupted(
    built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    env = {**os.environ, "CITY360_NO_PROGRESS": "1"}
    proc = subprocess.Popen(
        _eval_cmd(built_city, built_suite, tmp_path, "--run-id", "stopped"),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=sigint_as_from_a_terminal,
    )
    _wait_for_rows(tmp_path / "stopped" / "results.csv", 1, proc)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=120) == 130
    metadata = json.loads((tmp_path / "stopped" / "run_metadata.json").read_text("utf-8"))
    assert metadata["status"] == "interrupted"
    assert read_results(tmp_path / "stopped" / "results.csv")


def test_bad_inputs_fail_before_any_episode(
    built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match=r"unknown agent 'orcale'.*Did you mean 'oracle'"):
        run_eval(_config(built_city, built_suite, tmp_path, "orcale"))
    with pytest.raises(ConfigError, match="the lmm agent needs --provider and --model"):
        run_eval(_config(built_city, built_suite, tmp_path, "lmm"))
    with pytest.raises(InputFileError, match="is not a city directory"):
        run_eval(_config(tmp_path, built_suite, tmp_path, "oracle"))
    with pytest.raises(ConfigError, match="resume needs the run id"):
        run_eval(_config(built_city, built_suite, tmp_path, "oracle", resume=True))
    with pytest.raises(ConfigError, match="unknown executor 'dask'"):
        run_eval(_config(built_city, built_suite, tmp_path, "oracle", executor="dask"))
    assert not any(tmp_path.iterdir())


def test_lmm_agent_runs_through_a_provider_and_keeps_keys_out(
    built_city: Path, built_suite: Path, tmp_path: Path, fake_llm_server, monkeypatch
) -> None:
    secret = "sk-test-SECRET-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    suite = load_suite(built_suite)
    task = next(t for t in suite.tasks if t.family.value == "Localization")
    fake_llm_server.enqueue(
        '{"thought": "look around", "action": "D", "magnitude": "LARGE", "memory": "turned"}',
        "not json at all",
        '```json\n{"thought": "done", "action": "ANSWER", "answer": "'
        + task.expected_answer()
        + '", "memory": "answered"}\n```',
    )
    outcome = run_eval(
        EvalConfig(
            city_dir=built_city,
            suite_dir=built_suite,
            output_root=tmp_path,
            select=task.id,
            agent=AgentSpec(
                kind="lmm",
                provider="openai-compatible",
                model="fake-model",
                base_url=fake_llm_server.openai_base_url,
            ),
        )
    )
    [row] = outcome.results
    assert row.status == "answered"
    assert row.scored_success
    assert row.steps == 3
    assert row.parse_errors == 1
    assert row.requests >= 3
    assert row.input_tokens == 300
    assert row.last_finish_reason == "stop"
    assert row.last_response_model == "fake-model"
    [read_back] = read_results(outcome.run_dir / "results.csv")
    assert (read_back.last_finish_reason, read_back.last_response_model) == ("stop", "fake-model")
    for path in outcome.run_dir.rglob("*"):
        if path.is_file():
            assert secret not in path.read_text(encoding="utf-8", errors="ignore"), path
    metadata = json.loads((outcome.run_dir / "run_metadata.json").read_text("utf-8"))
    assert metadata["agent_prompt_hash"]
    images = [r for r in fake_llm_server.generation_requests() if "image" in json.dumps(r.body)]
    assert images, "the view must reach the model"


def test_a_suite_of_another_city_is_refused(
    built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    """``city360 eval pcity --suite real_osm/tasks/main``: every episode of the other city's
    suite ended as an agent error ("segment ... is not in the pose graph") and the run scored
    0; the viewer and ``tasks check`` refuse such a suite (issue 17, newuser3)."""
    import shutil

    suite_dir = tmp_path / "other"
    shutil.copytree(built_suite, suite_dir)
    raw = json.loads((suite_dir / "suite.json").read_text(encoding="utf-8"))
    raw["city"] = "elsewhere"
    (suite_dir / "suite.json").write_text(json.dumps(raw), encoding="utf-8")
    out = tmp_path / "runs"
    with pytest.raises(ConfigError) as raised:
        run_eval(_config(built_city, suite_dir, out, "random", run_id="other"))
    assert str(raised.value).startswith(
        f"suite {raw['name']!r} ({suite_dir.resolve()}) is for city 'elsewhere', but "
        f"{built_city.resolve()} is "
    )
    assert not (out / "other").exists()
