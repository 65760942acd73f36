from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from city360.cli import app, main


def test_build_then_info_with_plot(
    walk_city: Callable[[str], Path], walk_templates: dict[str, Path], tmp_path: Path
) -> None:
    city = walk_city("one")
    runner = CliRunner()
    built = runner.invoke(
        app, ["build", str(city), "--osm", str(walk_templates["osm"]), "--pose-only"]
    )
    assert built.exit_code == 0, built.output
    assert (city / "graph.json").is_file()
    info = runner.invoke(
        app, ["info", str(city), "--pose-only", "--json", "--plot", str(tmp_path / "g.png")]
    )
    assert info.exit_code == 0, info.output
    stats = json.loads(info.stdout[info.stdout.index("{") : info.stdout.rindex("}") + 1])
    assert stats["connected_components"] == 1
    assert stats["junctions"] == 16
    assert stats["reverse_edges"] > 0
    assert stats["osm_coverage"] > 0.95  # the OSM file recorded at build time is reused
    assert stats["mean_branching_degree"] > 2.5
    assert stats["conditions"] == "day"
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_build_error_exits_non_zero_with_the_reason(
    walk_city: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    city = walk_city("both")
    monkeypatch.setattr("sys.argv", ["city360", "build", str(city)])
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 1
    assert "--pose-only" in capsys.readouterr().err.replace("\n", " ")
    assert not (city / "graph.json").exists()
