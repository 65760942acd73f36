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

    from city360.city import CityDir
    from tests.pose_graph.walks import write_island

    city_path = walk_city("both")
    city = CityDir(city_path)
    projection = city.read_manifest().projection
    write_island(city, projection)
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


def test_score_lists_each_street_once_to_a_tenth_of_a_metre(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two true streets join 1 and 2 (both missed), two built streets join 0 and 1 (as one
    street built once per pass; both extra): each prints once with its count, end points to
    0.1 m."""
    import networkx as nx

    from city360.pose_graph import graph as graph_module
    from city360.pose_graph.graph import PoseGraph
    from city360.synth.groundtruth import Junction, SceneTruth, StreetEdge

    spots = {
        1: (0.123456, 0.0),
        2: (100.987654, 0.333333),
        3: (50.55555, 80.11111),
        4: (50.5, 150.0),
    }
    junctions = [
        Junction(id=n, x_m=x, y_m=y, lat=0.0, lon=0.0, degree=3) for n, (x, y) in spots.items()
    ]

    def street(u: int, v: int, bend_m: float = 0.0) -> StreetEdge:
        (ux, uy), (vx, vy) = spots[u], spots[v]
        middle = ((ux + vx) / 2, (uy + vy) / 2 + bend_m)
        return StreetEdge(u=u, v=v, length_m=1.0, polyline_xy=[(ux, uy), middle, (vx, vy)])

    streets = [street(1, 2), street(1, 2, bend_m=-40.0), street(1, 3), street(2, 3), street(3, 4)]
    city = tmp_path / "city"
    (city / "groundtruth").mkdir(parents=True)
    SceneTruth(seed=0, junctions=junctions, streets=streets, pois=[], objects=[], videos=[]).save(
        city / "groundtruth" / "scene.json"
    )
    (city / "graph.json").write_text("{}")
    built = nx.MultiDiGraph()
    built.add_node(0, kind="junction", x_m=500.04, y_m=-200.06)
    built.add_node(1, kind="junction", x_m=612.349, y_m=-180.0)
    built.add_node(2, kind="end", x_m=500.0, y_m=-300.0)
    built.add_node(3, kind="end", x_m=700.0, y_m=-180.0)
    for key, u, v, street_id in (("a", 0, 1, 0), ("b", 0, 1, 1), ("c", 0, 2, 2), ("d", 1, 3, 3)):
        built.add_edge(
            u, v, key=key, trajectory="walk", first_frame=0, last_frame=1, reverse=False,
            length_m=100.0, start_heading_deg=90.0, end_heading_deg=90.0,
            heading_profile_deg=[90.0], twin=None, street=street_id, primary=True, transitions=[],
        )  # fmt: skip
    monkeypatch.setattr(graph_module, "load_graph", lambda *_a, **_k: PoseGraph(built))

    result = CliRunner().invoke(app, ["score", str(city)], terminal_width=200)

    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith(("missing", "extra"))]
    assert lines == [
        "missing: true street 1-2 at (0.1, 0.0)-(101.0, 0.3) ×2",
        "missing: true street 1-3 at (0.1, 0.0)-(50.6, 80.1)",
        "missing: true street 2-3 at (101.0, 0.3)-(50.6, 80.1)",
        "missing: true street 3-4 at (50.6, 80.1)-(50.5, 150.0)",
        "extra:   built street 0-1 at (500.0, -200.1)-(612.3, -180.0) ×2",
        "extra:   built street 0-2 at (500.0, -200.1)-(500.0, -300.0)",
        "extra:   built street 1-3 at (612.3, -180.0)-(700.0, -180.0)",
    ]
    # the junctions too (osmfresh22 classed every miss with a script of its own)
    junction_lines = [
        line
        for line in result.output.splitlines()
        if line.startswith(("junction missed", "junction extra"))
    ]
    assert junction_lines == [
        "junction missed: true junction at (0.1, 0.0)",
        "junction missed: true junction at (101.0, 0.3)",
        "junction missed: true junction at (50.6, 80.1)",
        "junction extra:  built junction at (500.0, -200.1), 446.5 m from the nearest true "
        "junction",
        "junction extra:  built junction at (612.3, -180.0), 542.2 m from the nearest true "
        "junction",
    ]
    as_json = json.loads(CliRunner().invoke(app, ["score", str(city), "--json"]).stdout)
    assert len(as_json["missed_junctions"]) == 3
    assert as_json["extra_junctions"][0].startswith("built junction at (500.0, -200.1)")


def _printed_score(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **lists: list[str]
) -> tuple[list[str], dict[str, object]]:
    """``city360 score`` of a city whose score is 1.0 everywhere with ``lists`` (Score's list
    fields): the lines of its text output and its ``--json`` output."""
    from city360.pose_graph import score as score_module
    from city360.pose_graph.score import Score
    from city360.synth.groundtruth import SceneTruth

    city = tmp_path / "city"
    (city / "groundtruth").mkdir(parents=True)
    SceneTruth(seed=0, junctions=[], streets=[], pois=[], objects=[], videos=[]).save(
        city / "groundtruth" / "scene.json"
    )
    (city / "graph.json").write_text("{}")
    result = Score(1.0, 1.0, 1.0, 1.0, 1.0, 0, 0, true_junctions=1, **lists)  # type: ignore[arg-type]
    monkeypatch.setattr(score_module, "score_city", lambda *_a, **_k: result)
    text = CliRunner().invoke(app, ["score", str(city)], terminal_width=200)
    assert text.exit_code == 0, text.output
    as_json = CliRunner().invoke(app, ["score", str(city), "--json"], terminal_width=200)
    return text.output.splitlines(), json.loads(as_json.stdout)


def test_score_names_the_built_stubs_it_read_as_a_true_stub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A built stub read as a true stub the truth contracted is no extra street: the text and
    the JSON output name it, so a user sees why it did not count."""
    stub = "built street 2-3 at (0.5, 30.5) (6.0, 30.5), 5.5 m"
    lines, as_json = _printed_score(tmp_path, monkeypatch, contracted_stubs=[stub])

    assert f"read as a true stub under 8 m: {stub}" in lines
    assert as_json["contracted_stubs"] == [stub]


def test_osm_network_without_osm_is_refused(
    walk_city: Callable[[str], Path], walk_templates: dict[str, Path]
) -> None:
    """``build CITY --osm-network walk`` without ``--osm`` built without any OSM, without a
    word: a city built with ``--osm`` lost its matching on the rebuild (issue 17, newuser3)."""
    city = walk_city("one")
    runner = CliRunner()
    alone = runner.invoke(app, ["build", str(city), "--osm-network", "walk", "--pose-only"])
    assert alone.exit_code != 0
    assert str(alone.exception) == (
        "--osm-network walk chooses which ways of the OSM extract the walk is matched against, "
        "so it needs --osm FILE: pass the extract of the city's area (.osm, .osm.bz2 or .osm.pbf)"
    )
    assert not (city / "graph.json").exists()
    osm = str(walk_templates["osm"])
    built = runner.invoke(app, ["build", str(city), "--osm", osm, "--pose-only"])
    assert built.exit_code == 0, built.output
    kept = city / "map" / "extract.osm"
    again = runner.invoke(app, ["build", str(city), "--osm-network", "all", "--pose-only"])
    assert str(again.exception).endswith(f"this city keeps its crop of the last one: --osm {kept}")
    # a plain rebuild (after adding a walk) builds without OSM, and now says how to keep it
    plain = runner.invoke(app, ["build", str(city), "--pose-only"])
    assert plain.exit_code == 0, plain.output
    assert (
        f"note: built without OSM; the city keeps the crop of an earlier extract: "
        f"`city360 build {city} --osm {kept}` matches the walks against it"
    ) in " ".join(plain.output.split())


def test_score_names_the_crossings_it_read_where_the_map_has_no_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A built junction read as a crossing the map draws without a node: the text and the
    JSON output name the place, so a user sees why the truth has a junction there."""
    crossing = "true streets crossing at (36.9, -173.2), no node in the map"
    lines, as_json = _printed_score(tmp_path, monkeypatch, read_crossings=[crossing])

    assert f"read as a crossing: {crossing}" in lines
    assert as_json["read_crossings"] == [crossing]


def test_score_names_the_side_by_side_streets_it_read_as_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two true streets out of a bend closer than a camera parts them, read as one street up
    to the junction the build made where they part: the text and the JSON name the place."""
    pair = (
        "true streets side by side from (88.4, 163.3) for 18.0 m (at most 4.0 m apart), "
        "parting at (70.6, 161.6)"
    )
    lines, as_json = _printed_score(tmp_path, monkeypatch, read_side_by_side=[pair])

    assert f"read as one street: {pair}" in lines
    assert as_json["read_side_by_side"] == [pair]


def test_score_names_the_dead_end_it_read_as_a_tee(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A true dead end a few metres short of a street, read as a T where the build made one:
    the text and the JSON name the place."""
    end = "true dead end at (114.5, -87.7) 5.2 m short of a street, read as a T at (118.9, -85.0)"
    lines, as_json = _printed_score(tmp_path, monkeypatch, read_short_ends=[end])

    assert f"read as a T: {end}" in lines
    assert as_json["read_short_ends"] == [end]


def test_osm_squares_is_passed_to_the_build_and_recorded(
    walk_city: Callable[[str], Path], walk_templates: dict[str, Path]
) -> None:
    """``build --osm X --no-osm-squares`` matches the walk against the map without walkable
    squares, as ``build_city(osm_squares=False)`` does for a twin synthesized without them;
    there was no flag, so a twin rebuilt by hand read them (issue 17, round thirty-three).
    The city records the choice, and without ``--osm`` the flag is refused like
    ``--osm-network``."""
    from city360.city import CityDir

    city = walk_city("one")
    runner = CliRunner()
    alone = runner.invoke(app, ["build", str(city), "--no-osm-squares", "--pose-only"])
    assert alone.exit_code != 0
    assert str(alone.exception).startswith(
        "--no-osm-squares chooses which ways of the OSM extract the walk is matched against, "
        "so it needs --osm FILE"
    )
    osm = str(walk_templates["osm"])
    for flag, recorded in (("--no-osm-squares", False), ("--osm-squares", True)):
        built = runner.invoke(app, ["build", str(city), "--osm", osm, flag, "--pose-only"])
        assert built.exit_code == 0, built.output
        assert CityDir(city).read_manifest().build["pose_graph"]["osm_squares"] is recorded
    plain = runner.invoke(app, ["build", str(city), "--osm", osm, "--pose-only"])
    assert plain.exit_code == 0, plain.output
    assert CityDir(city).read_manifest().build["pose_graph"]["osm_squares"] is None
    info = runner.invoke(app, ["info", str(city), "--pose-only"])
    assert info.exit_code == 0, info.output
