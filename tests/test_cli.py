"""The assembled ``city360`` command: every stage's commands, and exit codes a shell can trust."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def _city360(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "city360.cli", *args], capture_output=True, text=True, check=False
    )


def test_help_lists_every_stage() -> None:
    result = _city360("--help")
    assert result.returncode == 0
    for command in (
        "synth",
        "ingest",
        "build",
        "info",
        "map",
        "walk",
        "tasks",
        "eval",
        "report",
        "view",
        "demo",
        "bench",
    ):
        assert command in result.stdout, command


def test_city360_error_exits_1_with_a_clear_message(tmp_path: Path) -> None:
    result = _city360("report", str(tmp_path / "no-run"))
    assert result.returncode == 1
    assert "results.csv not found; is this a run folder" in result.stderr
    assert "Traceback" not in result.stderr


def test_typer_exit_codes_reach_the_shell(tmp_path: Path) -> None:
    result = _city360(
        "eval", str(tmp_path), "--suite", str(tmp_path), "--resume", "a", "--run-id", "b"
    )
    assert result.returncode == 2
    assert "disagree" in result.stderr


def test_usage_error_exits_2() -> None:
    result = _city360("eval", "--no-such-option")
    assert result.returncode == 2
