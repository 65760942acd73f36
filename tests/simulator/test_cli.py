"""``city360 walk``: a scripted walk saves each step's pictures and prints the feedback."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from city360.cli import app
from city360.errors import UnknownActionError
from city360.simulator.cli import parse_script


def test_parse_script() -> None:
    assert parse_script("W medium; D;\nLEFT ;; ANSWER x:2 y:3") == [
        ("W", "medium"),
        ("D", None),
        ("LEFT", None),
        ("ANSWER", "x:2 y:3"),
    ]


def test_walk_saves_views_and_prints_feedback(plus_city: Path, tmp_path: Path) -> None:
    out = tmp_path / "walk"
    result = CliRunner().invoke(
        app,
        [
            "walk", str(plus_city), "--segment", "ns_a", "--offset-m", "25", "--renderer", "cpu",
            "--width", "64", "--height", "48", "--no-map", "--multiview", "--out", str(out),
            "--actions", "W LARGE; LEFT; W SMALL; ANSWER here",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "renderer: cpu" in result.output
    assert "You reached a junction" in result.output
    assert "branches: LEFT, UP, RIGHT" in result.output
    assert "Answer recorded: 'here'" in result.output
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(
        [f"step{i:03d}_view.png" for i in range(5)] + [f"step{i:03d}_views.png" for i in range(5)]
    )


def test_walk_reports_bad_actions(plus_city: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["walk", str(plus_city), "--renderer", "cpu", "--no-map", "--width", "32", "--height",
         "24", "--out", str(tmp_path), "--actions", "JUMP"],
    )  # fmt: skip
    assert isinstance(result.exception, UnknownActionError)
    assert "unknown action 'JUMP'" in str(result.exception)
