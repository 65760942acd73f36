"""The learning curve's CSV and PNG."""

from __future__ import annotations

from pathlib import Path

from city360.train.curve import COLUMNS, CurvePoint, plot_curve, read_curve, write_curve

POINTS = [
    CurvePoint(0, 3.04, "random", 250, 2, 0.008, 0.19),
    CurvePoint(8, 10.0, "ppo", 25, 0, 0.0, 1.01),
    CurvePoint(20000, 288.9, "ppo", 25, 7, 0.28, 3.3125),
]


def test_csv_round_trip_and_header(tmp_path: Path) -> None:
    path = write_curve(POINTS, tmp_path / "curve.csv")
    lines = path.read_text().splitlines()
    assert lines[0] == ",".join(COLUMNS)
    assert lines[0] == "steps,wall_s,policy,episodes,successes,success_rate,mean_return"
    assert lines[3] == "20000,288.9,ppo,25,7,0.2800,3.3125"
    back = read_curve(path)
    assert [p.steps for p in back] == [0, 8, 20000]
    assert back[0].wall_s == 3.0  # one decimal in the file
    assert back[2] == POINTS[2]


def test_plot_writes_a_png(tmp_path: Path) -> None:
    path = plot_curve(POINTS, tmp_path / "curve.png", title="smoke")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert 1_000 < path.stat().st_size < 150_000
