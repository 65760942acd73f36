"""One walk that crosses itself and turns back at the end of short spurs (issue 17, item f)."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np

from city360.geo import LocalProjection
from city360.pose_graph.build import build_city, build_from_tracks
from tests.pose_graph.walks import write_city

# a walk north through o, round a block, across its own start at o, out west; a 12 m spur
# east at d, walked in and out again (shorter than one voting pass)
POSITIONS = {
    "a": (0, -60), "o": (0, 0), "b": (0, 60), "c": (60, 60), "d": (60, 30), "s": (72, 30),
    "e": (60, 0), "f": (-60, 0),
}  # fmt: skip
STREETS = ["ao", "ob", "bc", "cd", "ds", "de", "eo", "of"]
ROUTE = "aobcdsdeof"


def _graph() -> nx.Graph:
    ids = {name: k for k, name in enumerate(POSITIONS)}
    graph = nx.Graph()
    for name, (x, y) in POSITIONS.items():
        graph.add_node(ids[name], x_m=float(x), y_m=float(y))
    for u, v in STREETS:
        a, b = sorted((ids[u], ids[v]), key=lambda n: n)
        names = {ids[u]: u, ids[v]: v}
        graph.add_edge(a, b, polyline=np.array([POSITIONS[names[a]], POSITIONS[names[b]]], float))
    return graph


def test_self_crossing_and_short_spur_give_junctions(tmp_path: Path) -> None:
    ids = {name: k for k, name in enumerate(POSITIONS)}
    city = write_city(tmp_path / "city", _graph(), [[ids[n] for n in ROUTE]], seed=1)
    pose_graph = build_city(city, require_frames=False)
    nodes = pose_graph.graph.nodes(data=True)
    junctions = np.array([[d["x_m"], d["y_m"]] for _, d in nodes if d["kind"] == "junction"])
    dead_ends = np.array([[d["x_m"], d["y_m"]] for _, d in nodes if d["kind"] == "dead_end"])
    for name in ("o", "d"):  # the self-crossing and the spur's root
        assert np.hypot(*(junctions - POSITIONS[name]).T).min() < 5.0, name
    assert len(junctions) == 2
    for name in ("a", "s", "f"):
        assert np.hypot(*(dead_ends - POSITIONS[name]).T).min() < 5.0, name


def test_score_command(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from city360.cli import app

    ids = {name: k for k, name in enumerate(POSITIONS)}
    city = write_city(tmp_path / "city", _graph(), [[ids[n] for n in ROUTE]], seed=1)
    build_city(city, require_frames=False)
    result = CliRunner().invoke(app, ["score", str(city.root), "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert figures["junction_precision"] == 1.0
    assert figures["junction_recall"] == 1.0
    assert 0.0 <= figures["street_f1"] <= 1.0


def test_score_needs_ground_truth(tmp_path: Path) -> None:
    import pytest

    from city360.errors import CityFormatError
    from city360.pose_graph.score import score_city

    ids = {name: k for k, name in enumerate(POSITIONS)}
    city = write_city(tmp_path / "city", _graph(), [[ids[n] for n in ROUTE]], seed=1)
    (city.groundtruth_dir / "scene.json").unlink()
    with pytest.raises(CityFormatError, match="only cities made by `city360 synth`"):
        score_city(city.root)


def test_a_spur_walked_7_m_in_keeps_its_junction_and_dead_end() -> None:
    # a stub off a street: the walker cuts the corners in and out and turns back 7 m from the
    # street (within the 8 m a track end needs from a junction), then walks on the other way;
    # the stub is a street, its root a junction
    from tests.pose_graph.walks import polyline_track as walk

    tracks = [
        walk([(-60, 0), (60, 0)], "east"),
        walk([(60, 1), (-60, 1)], "west"),
        walk([(-60, -1), (-3, -1), (0, -7), (3, -1), (60, -1)], "into the stub"),
    ]
    graph = build_from_tracks(tracks, LocalProjection(35.7356, 139.6522)).graph
    nodes = [(d["kind"], d["x_m"], d["y_m"]) for _, d in graph.nodes(data=True)]
    junctions = [(x, y) for kind, x, y in nodes if kind == "junction"]
    assert len(junctions) == 1
    assert np.hypot(*junctions[0]) < 4.0
    assert any(kind == "dead_end" and np.hypot(x, y + 7.0) < 3.0 for kind, x, y in nodes)
