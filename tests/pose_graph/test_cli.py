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


def test_a_warning_shows_once_without_source_lines(
    walk_city: Callable[[str], Path], tmp_path: Path
) -> None:
    """`city360 build` of a graph in two pieces printed the warning twice: once logged, once by
    Python's warning format with the file, line and code of city360 (`graph.py:240:
    DisconnectedGraphWarning: ...` and `validate_graph(pose_graph, city, ...)`)."""
    import os
    import subprocess
    import sys

    import numpy as np

    from city360.city import CityDir
    from tests.pose_graph.walks import grid_streets, routes_both_ways, walk_route, write_trajectory

    city_path = walk_city("both")
    city = CityDir(city_path)
    projection = city.read_manifest().projection
    island = grid_streets(columns=2, rows=2, block_m=60.0, jitter_m=0.0)
    for n in island.nodes:
        island.nodes[n]["x_m"] += 460.0
        island.nodes[n]["y_m"] += 100.0
    for u, v in island.edges:
        island.edges[u, v]["polyline"] = island.edges[u, v]["polyline"] + [460.0, 100.0]
    rng = np.random.default_rng(5)
    for k, route in enumerate(routes_both_ways(island, edges_per_route=4)):
        write_trajectory(city, f"island{k}", walk_route(island, route, rng)[0], projection)
    env = {**os.environ, "CITY360_NO_PROGRESS": "1", "COLUMNS": "200"}
    run = subprocess.run(
        [sys.executable, "-m", "city360.cli", "build", str(city_path), "--pose-only"],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("2 disconnected pieces") == 1, run.stderr
    assert "warning: " in run.stderr
    assert ".py:" not in run.stderr
    assert "validate_graph(" not in run.stderr
