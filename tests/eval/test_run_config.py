"""``city360 eval --config run.toml`` and ``--rerun RUN_DIR``: runs that can be repeated."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from city360.cli import app
from city360.errors import ConfigError
from city360.eval.run_config import load_run_file


def _eval(*args: str) -> str:
    result = CliRunner().invoke(app, ["eval", *args])
    if result.exit_code != 0:
        detail = result.output + (repr(result.exception) if result.exception else "")
        pytest.fail(f"city360 eval {' '.join(args)} exited {result.exit_code}:\n{detail}")
    return result.stdout


def _flat(output: str) -> str:
    """Rich's panels without their borders and line breaks, for matching whole sentences."""
    return " ".join(output.translate(str.maketrans("", "", "│╭╮╰╯─")).split())


def _scores(run_dir: Path) -> dict[str, tuple[str, str]]:
    with (run_dir / "results.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    return {row["task_id"]: (row["evaluation_score"], row["status"]) for row in rows}


def test_a_run_file_gives_every_flag_and_the_command_line_wins(
    built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    run_file = tmp_path / "run.toml"
    run_file.write_text(
        f'city = "{built_city}"\nsuite = "{built_suite}"\nagent = "oracle"\n'
        f'output-root = "{tmp_path / "runs"}"\nrun_id = "from-file"\ntasks = "VLN"\n'
        "seed = 3\nreport = false\n",
        encoding="utf-8",
    )
    out = _eval("--config", str(run_file), "--run-id", "from-flag", "--json")
    payload = json.loads(out)
    assert Path(payload["run_dir"]).name == "from-flag"
    assert set(payload["families"]) == {"VLN"}
    metadata = json.loads((tmp_path / "runs" / "from-flag" / "run_metadata.json").read_text())
    assert metadata["seed"] == 3
    assert metadata["config"]["select"] == "VLN"


def test_an_unknown_key_in_a_run_file_says_the_closest_option(tmp_path: Path) -> None:
    run_file = tmp_path / "run.toml"
    run_file.write_text('agnet = "oracle"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown key 'agnet'") as info:
        load_run_file(run_file, ["agent", "seed", "city_dir"])
    assert str(info.value).endswith("Did you mean 'agent'?")


def test_rerun_of_a_finished_oracle_run_gives_identical_scores(
    built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    _eval(str(built_city), "--suite", str(built_suite), "--agent", "oracle", "--seed", "5",
          "--output-root", str(runs), "--run-id", "first", "--no-report")  # fmt: skip
    out = _eval("--rerun", str(runs / "first"), "--run-id", "again", "--no-report", "--json")
    payload = json.loads(out)
    assert Path(payload["run_dir"]) == runs / "again"
    assert payload["ran"] == len(_scores(runs / "first")) > 0
    first = json.loads((runs / "first" / "run_metadata.json").read_text())
    again = json.loads((runs / "again" / "run_metadata.json").read_text())
    assert again["task_seeds"] == first["task_seeds"]
    assert again["suite_hash"] == first["suite_hash"]
    assert _scores(runs / "again") == _scores(runs / "first")


def test_rerun_refuses_a_changed_suite(built_city: Path, built_suite: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _eval(str(built_city), "--suite", str(built_suite), "--tasks", "VLN",
          "--output-root", str(runs), "--run-id", "first", "--no-report")  # fmt: skip
    path = runs / "first" / "run_metadata.json"
    metadata = json.loads(path.read_text())
    metadata["suite_hash"] = "0" * 64
    path.write_text(json.dumps(metadata))
    result = CliRunner().invoke(app, ["eval", "--rerun", str(runs / "first")])
    assert isinstance(result.exception, ConfigError)
    assert "its suite hash was 000000000000" in str(result.exception)


def test_rerun_refuses_another_city360_version(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "run_metadata.json").write_text(
        json.dumps({"run_id": "run", "versions": {"city360": "0.0.1"}, "code": {}})
    )
    result = CliRunner().invoke(app, ["eval", "--rerun", str(run)])
    assert isinstance(result.exception, ConfigError)
    assert "was made with city360 0.0.1" in str(result.exception)


def test_eval_help_says_city_and_suite_can_come_from_a_run_file_or_a_rerun() -> None:
    result = CliRunner().invoke(app, ["eval", "--help"], terminal_width=100)
    assert result.exit_code == 0
    assert "eval [OPTIONS] [CITY_DIR]" in result.output
    assert "[required]" not in result.output
    assert _flat(result.output).count("Required unless --config or --rerun gives it.") == 2


def test_eval_without_a_city_names_the_three_ways_to_give_one() -> None:
    result = CliRunner().invoke(app, ["eval", "--suite", "main"], terminal_width=200)
    assert result.exit_code == 2
    assert (
        "Missing argument 'CITY_DIR': give it on the command line, as `city = ...` in a "
        "--config run file, or repeat a recorded run with --rerun RUN_DIR." in _flat(result.output)
    )


def test_eval_without_a_suite_names_the_three_ways_to_give_one(built_city: Path) -> None:
    result = CliRunner().invoke(app, ["eval", str(built_city)], terminal_width=200)
    assert result.exit_code == 2
    assert "Missing option '--suite': give it on the command line, as `suite = ...`" in (
        _flat(result.output)
    )


def test_a_run_file_can_name_the_city_and_suite_alone(
    built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    run_file = tmp_path / "run.toml"
    run_file.write_text(f'city = "{built_city}"\nsuite = "{built_suite}"\n', encoding="utf-8")
    out = _eval("--config", str(run_file), "--tasks", "VLN", "--no-report", "--json",
                "--output-root", str(tmp_path / "runs"), "--run-id", "from-file")  # fmt: skip
    assert Path(json.loads(out)["run_dir"]) == tmp_path / "runs" / "from-file"
