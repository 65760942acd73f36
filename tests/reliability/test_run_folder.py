"""Run folders under races and damage: one writer, honest resumes, malformed rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from city360.errors import ConfigError, RunLockedError
from city360.eval.results import (
    RESULT_COLUMNS,
    EpisodeResult,
    MalformedResultsWarning,
    read_results,
    read_results_file,
    rewrite_results,
)
from city360.eval.runlock import LOCK_NAME, lock_holder, run_lock
from city360.eval.runner import AgentSpec, EvalConfig, run_eval

FAMILY = "Localization"  # three quick tasks in the built suite


def _config(city: Path, suite: Path, out: Path, kind: str = "oracle", **kw: object) -> EvalConfig:
    return EvalConfig(
        city_dir=city,
        suite_dir=suite,
        agent=AgentSpec(kind=kind),
        output_root=out,
        **{"select": FAMILY, **kw},  # type: ignore[arg-type]
    )


def _metadata(run_dir: Path) -> dict[str, object]:
    return json.loads((run_dir / "run_metadata.json").read_text(encoding="utf-8"))


# --- locking ---------------------------------------------------------------------------------


def test_a_second_writer_is_refused_naming_the_holder(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    with run_lock(run_dir):
        holder = lock_holder(run_dir)
        assert holder["pid"] == os.getpid()
        with (
            pytest.raises(RunLockedError, match=rf"pid {os.getpid()} on .*, started 20"),
            run_lock(run_dir),
        ):
            pass  # pragma: no cover - refused
    with run_lock(run_dir):  # released: the next writer gets it
        pass


def test_a_lock_left_by_a_killed_run_is_taken_over(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from city360.eval.runlock import run_lock\n"
            "with run_lock(sys.argv[1]):\n"
            "    print('locked', flush=True)\n"
            "    time.sleep(60)\n",
            str(run_dir),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(RunLockedError, match=rf"pid {holder.pid} "), run_lock(run_dir):
            pass  # pragma: no cover - refused
    finally:
        holder.kill()
        holder.wait(timeout=10)
    assert lock_holder(run_dir)["pid"] == holder.pid  # the dead holder's record is still there
    with run_lock(run_dir):
        assert lock_holder(run_dir)["pid"] == os.getpid()


def test_eval_on_a_locked_run_folder_fails_and_writes_nothing(
    built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    first = run_eval(_config(built_city, built_suite, tmp_path, run_id="shared"))
    rows_before = (first.run_dir / "results.csv").read_bytes()
    with (
        run_lock(first.run_dir),
        pytest.raises(RunLockedError, match="being written by another city360 eval or viewer"),
    ):
        run_eval(_config(built_city, built_suite, tmp_path, run_id="shared", resume=True))
    assert (first.run_dir / "results.csv").read_bytes() == rows_before
    assert _metadata(first.run_dir)["status"] == "complete"


def test_concurrent_resumes_never_duplicate_rows(
    built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    """The issue's race: two `--resume RUN` at once gave 136 rows for 78 tasks."""
    run_eval(_config(built_city, built_suite, tmp_path, run_id="race", select="loc-001"))
    command = [
        sys.executable,
        "-m",
        "city360.cli",
        "eval",
        str(built_city),
        "--suite",
        str(built_suite),
        "--agent",
        "oracle",
        "--tasks",
        FAMILY,
        "--output-root",
        str(tmp_path),
        "--resume",
        "race",
        "--no-report",
    ]
    env = {**os.environ, "CITY360_NO_PROGRESS": "1"}
    runs = [
        subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=300)[0].decode() for run in runs]
    codes = sorted(run.returncode for run in runs)
    rows = read_results(tmp_path / "race" / "results.csv")
    ids = [r.task_id for r in rows]
    assert len(ids) == len(set(ids)) == 3, outputs
    if codes != [0, 0]:  # they overlapped: the loser was refused by name
        assert codes == [0, 1], outputs
        locked = "being written by another city360 eval or viewer (pid"
        assert any(locked in o for o in outputs), outputs


def test_a_failed_start_leaves_no_run_folder(
    built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match="unknown agent"):
        run_eval(_config(built_city, built_suite, tmp_path, kind="orcale", run_id="nope"))
    assert not (tmp_path / "nope").exists()


# --- resume identity -------------------------------------------------------------------------


def test_resume_refuses_another_agent_and_keeps_the_identity(
    built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    run_eval(_config(built_city, built_suite, tmp_path, run_id="mine", select="loc-001"))
    run_dir = tmp_path / "mine"
    before = _metadata(run_dir)
    with pytest.raises(
        ConfigError,
        match=r"cannot resume 'mine': it was started with another setup \(agent kind 'oracle' "
        r"→ 'random'\).*--resume-anyway",
    ):
        run_eval(_config(built_city, built_suite, tmp_path, "random", run_id="mine", resume=True))
    assert _metadata(run_dir) == before
    outcome = run_eval(
        _config(
            built_city, built_suite, tmp_path, "random", run_id="mine", resume=True,
            resume_anyway=True,
        )
    )  # fmt: skip
    after = _metadata(run_dir)
    assert after["agent"] == before["agent"]  # still the oracle's run
    assert after["started"] == before["started"]
    assert after["resumes"][-1]["agent"]["kind"] == "random"  # type: ignore[index]
    assert "agent kind 'oracle' → 'random'" in after["resumes"][-1]["differences"][0]  # type: ignore[index]
    assert any("resumed anyway" in w for w in outcome.warnings)


# --- what a resume runs again ----------------------------------------------------------------


def test_resume_reruns_episodes_that_ended_in_an_infrastructure_error(
    built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    first = run_eval(_config(built_city, built_suite, tmp_path, run_id="infra"))
    results = first.run_dir / "results.csv"
    rows = read_results(results)
    broken = rows[1]
    broken.status = "infrastructure_error"
    broken.scored_success = False
    broken.error_message = "openai model x failed 6 times in a row"
    rewrite_results(results, rows)
    outcome = run_eval(_config(built_city, built_suite, tmp_path, run_id="infra", resume=True))
    assert outcome.ran == 1
    after = read_results(results)
    assert sorted(r.task_id for r in after) == sorted(r.task_id for r in rows)
    rerun = next(r for r in after if r.task_id == broken.task_id)
    assert rerun.status == "answered"
    assert rerun.scored_success


def test_a_garbage_row_is_reported_not_counted_and_its_task_runs_again(
    built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    first = run_eval(_config(built_city, built_suite, tmp_path, run_id="garbage"))
    results = first.run_dir / "results.csv"
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
    victim = lines[2].split(",")[0]
    lines[2] = f"{victim},this row,was,damaged\r\n"  # line 3: a task's row torn apart
    lines.insert(2, "%%% garbage %%%\r\n")
    results.write_text("".join(lines), encoding="utf-8")
    with pytest.warns(MalformedResultsWarning, match=r"line 3 is not an episode row"):
        counted = read_results(results)
    assert len(counted) == 2
    outcome = run_eval(_config(built_city, built_suite, tmp_path, run_id="garbage", resume=True))
    assert outcome.ran == 1
    assert any(f"{results}: line 3 is not an episode row" in w for w in outcome.warnings)
    assert any(f"{results}: line 4 is not an episode row" in w for w in outcome.warnings)
    final = read_results_file(results)
    assert final.rejected == []
    assert sorted(r.task_id for r in final.results) == sorted(r.task_id for r in first.results)
    kept = (first.run_dir / "results.rejected.csv").read_text(encoding="utf-8")
    assert "%%% garbage %%%" in kept
    assert "this row,was,damaged" in kept


def test_read_results_file_names_each_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    good = EpisodeResult("t1", "Localization", "Easy", "answered")
    rewrite_results(path, [good, EpisodeResult("t2", "Localization", "Easy", "answered")])
    header, first, second = path.read_text(encoding="utf-8").splitlines()
    assert ",answered," in second
    damaged = second.replace(",answered,", ",nope,")
    ended = first.replace(",ANSWER,", ",STEP_LIMIT,")  # status and stop_reason disagree
    path.write_text(
        "\r\n".join([header, ended, damaged, "t3,only,three", second]) + "\r\n", encoding="utf-8"
    )
    read = read_results_file(path)
    assert [r.task_id for r in read.results] == ["t2"]
    assert [(r.line, r.reason) for r in read.rejected] == [
        (2, "status 'STEP_LIMIT' does not match stop_reason 'answered'"),
        (3, "unknown stop_reason 'nope'"),
        (4, f"3 fields, the header has {len(RESULT_COLUMNS)}"),
    ]


def test_lock_file_does_not_count_as_a_run(tmp_path: Path) -> None:
    with run_lock(tmp_path / "r"):
        pass
    assert [p.name for p in (tmp_path / "r").iterdir()] == [LOCK_NAME]
