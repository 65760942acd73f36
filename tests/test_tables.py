"""Tables readable at 80 columns; --json for scripts."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from city360.cli import app
from city360.tables import records_table

ROWS = [
    {
        "family": "LandmarkSearchImage",
        "difficulty": "Medium",
        "n": 3,
        **{f"feature_number_{i}": 12.5 + i for i in range(12)},
    },
    {"family": "VLN", "difficulty": "Easy", "n": 1, "feature_number_3": 4.0},
]
KEYS = ["family", "difficulty", "n", *(f"feature_number_{i}" for i in range(12))]


def _render(width: int) -> str:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(records_table(ROWS, KEYS, title="t", key_columns=3, console=console))
    return console.export_text()


def test_a_wide_table_stacks_its_values_at_80_columns() -> None:
    text = _render(80)
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "feature number 11 23.5" in text  # a name and its value on one line, not folded
    assert "LandmarkSearchImage" in text


def test_a_wide_terminal_keeps_one_column_per_feature() -> None:
    text = _render(400)
    header = next(line for line in text.splitlines() if "family" in line)
    assert "feature number 11" in header


def test_tasks_generate_fits_80_columns(built_city: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["tasks", "generate", str(built_city), "--out", str(tmp_path / "s"), "--per-family", "1"],
        env={"COLUMNS": "80"},
    )
    assert result.exit_code == 0, result.output
    table = [line for line in result.output.splitlines() if line.startswith(("│", "┃", "┏"))]
    assert table
    assert all(len(line) <= 80 for line in table)
    # no number folded into one character per line
    assert not any(line.strip("│ ").replace("│", "").strip() in {".", "0"} for line in table)


def test_tasks_show_json(built_suite: Path) -> None:
    result = CliRunner().invoke(app, ["tasks", "show", str(built_suite), "--json", "--truth"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["tasks"]
    first = payload["tasks"][0]
    assert {"id", "family", "difficulty", "prompt", "reference_images", "expected"} <= set(first)
