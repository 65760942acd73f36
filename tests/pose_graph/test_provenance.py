"""What a graph.json was built from: ``score`` and a failed ``build`` say which graph they
mean, and a graph the city's trajectories have moved past is called out of date."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from typer.testing import CliRunner

from city360.city import CityDir
from city360.cli import app
from city360.errors import CityFormatError
from city360.pose_graph.build import build_city
from city360.pose_graph.provenance import (
    StaleGraphWarning,
    read_built_graph,
    stale_reasons,
)
from tests.pose_graph.walks import write_city

# a plus-shaped crossing: four arms of 80 m, walked straight through both ways
ARMS = {"o": (0, 0), "n": (0, 80), "s": (0, -80), "e": (80, 0), "w": (-80, 0)}


def _plus() -> nx.Graph:
    ids = {name: k for k, name in enumerate(ARMS)}
    graph = nx.Graph()
    for name, (x, y) in ARMS.items():
        graph.add_node(ids[name], x_m=float(x), y_m=float(y))
    for arm in "nsew":
        graph.add_edge(ids["o"], ids[arm], polyline=np.array([ARMS["o"], ARMS[arm]], float))
    return graph


def _city(root: Path) -> CityDir:
    ids = {name: k for k, name in enumerate(ARMS)}
    routes = [[ids[n] for n in "nos"], [ids[n] for n in "woe"]]
    return write_city(root, _plus(), routes, seed=3)


def _edit_one_heading(city: CityDir, trajectory_id: str) -> None:
    """Re-write one pose's heading, the way a re-ingest with another yaw offset would."""
    path = city.poses_path(trajectory_id)
    lines = path.read_text().splitlines()
    cells = lines[2].split(",")
    column = lines[0].split(",").index("heading_deg")
    cells[column] = f"{(float(cells[column]) + 1.0) % 360.0:.4f}"
    lines[2] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")


def test_a_fresh_build_is_not_stale_and_says_what_it_read(tmp_path: Path) -> None:
    city = _city(tmp_path / "city")
    build_city(city, require_frames=False)

    built = read_built_graph(city)

    assert built is not None
    assert stale_reasons(city, built) == []
    assert set(built.digests) == set(city.trajectory_ids()) == set(built.trajectories)
    assert "from 2 trajectories, without OSM" in built.describe()


def test_trajectories_added_removed_or_changed_after_the_build_are_named(
    tmp_path: Path,
) -> None:
    city = _city(tmp_path / "city")
    build_city(city, require_frames=False)
    first, second = city.trajectory_ids()
    shutil.copytree(city.trajectory_dir(first), city.trajectory_dir("walk_new"))
    _edit_one_heading(city, second)

    built = read_built_graph(city)
    assert built is not None
    reasons = stale_reasons(city, built)

    assert reasons == [
        "trajectories ingested after this build: walk_new",
        f"trajectories changed since this build: {second}",
    ]
    shutil.rmtree(city.trajectory_dir(first))
    assert f"trajectories of this build no longer in the city: {first}" in stale_reasons(
        city, built
    )


def test_a_graph_built_before_digests_is_checked_by_its_trajectory_list(tmp_path: Path) -> None:
    city = _city(tmp_path / "city")
    build_city(city, require_frames=False)
    data = json.loads(city.graph_path.read_text())
    del data["graph"]["build"]["inputs"]
    city.graph_path.write_text(json.dumps(data))
    _edit_one_heading(city, city.trajectory_ids()[0])  # invisible without digests
    shutil.copytree(city.trajectory_dir(city.trajectory_ids()[0]), city.trajectory_dir("walk_z"))

    built = read_built_graph(city)

    assert built is not None
    assert built.digests == {}
    assert stale_reasons(city, built) == ["trajectories ingested after this build: walk_z"]


def test_score_warns_about_a_stale_graph_and_keeps_json_on_stdout(tmp_path: Path) -> None:
    city = _city(tmp_path / "city")
    build_city(city, require_frames=False)
    _edit_one_heading(city, city.trajectory_ids()[1])

    with pytest.warns(StaleGraphWarning, match="is out of date .*changed since this build"):
        result = CliRunner().invoke(app, ["score", str(city.root), "--json"])

    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["graph"]["stale"] == [
        f"trajectories changed since this build: {city.trajectory_ids()[1]}"
    ]
    assert payload["graph"]["osm"] is None
    assert payload["graph"]["trajectories"] == 2


def test_score_names_the_graph_it_scores(tmp_path: Path) -> None:
    city = _city(tmp_path / "city")
    build_city(city, require_frames=False)

    result = CliRunner().invoke(app, ["score", str(city.root)], terminal_width=300)

    assert result.exit_code == 0, result.output
    assert "scored " in result.output
    assert "(built " in result.output
    assert "from 2 trajectories, without OSM)" in result.output


def test_a_failed_build_keeps_the_previous_graph_and_says_so(tmp_path: Path) -> None:
    city = _city(tmp_path / "city")
    build_city(city, require_frames=False)
    before = city.graph_path.read_bytes()

    # without --pose-only the build wants frames.mp4, which a pose-only city has not
    result = CliRunner().invoke(app, ["build", str(city.root)], terminal_width=400)

    assert result.exit_code != 0
    assert isinstance(result.exception, CityFormatError)
    assert "frames.mp4" in str(result.exception)
    assert "note: the build failed; the previous" in result.output
    assert "from 2 trajectories, without OSM) is left as it was" in result.output
    assert city.graph_path.read_bytes() == before


def test_a_failed_first_build_has_no_previous_graph_to_name(tmp_path: Path) -> None:
    city = _city(tmp_path / "city")

    result = CliRunner().invoke(app, ["build", str(city.root)], terminal_width=400)

    assert isinstance(result.exception, CityFormatError)
    assert "previous" not in result.output
    assert not city.graph_path.exists()


def test_info_warns_about_a_stale_graph_before_it_fails_to_load(tmp_path: Path) -> None:
    city = _city(tmp_path / "city")
    build_city(city, require_frames=False)
    shutil.rmtree(city.trajectory_dir(city.trajectory_ids()[0]))
    shutil.copytree(city.trajectory_dir(city.trajectory_ids()[0]), city.trajectory_dir("walk_b"))

    with pytest.warns(StaleGraphWarning) as caught:
        result = CliRunner().invoke(app, ["info", str(city.root), "--pose-only", "--json"])

    messages = [str(w.message) for w in caught]
    assert any("trajectories ingested after this build: walk_b" in m for m in messages)
    assert any("no longer in the city" in m for m in messages)
    # the graph names a trajectory that is gone: it cannot load, and says so after the warning
    assert isinstance(result.exception, CityFormatError)
