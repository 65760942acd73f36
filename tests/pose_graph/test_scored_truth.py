"""``city360 score`` scores a twin filmed along a route against the streets it filmed, as the
accuracy suite does (:mod:`city360.pose_graph.scored_truth`; issue 17, newuser).

Before, ``city360 score`` of a ``synth --route`` twin scored its build against every street of
the window: the kept Hamburg real-walk twin read junction P / R / street F1 0 / 0 / 0 where its
suite row reads 1 / 1 / 1, and a Nerima route walked through 18 of 68 junctions read recall
0.02.
"""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import numpy as np
from typer.testing import CliRunner

from city360.city import CityDir, SourceFile
from city360.cli import app
from city360.geo import LocalProjection
from city360.pose_graph.build import build_city
from city360.pose_graph.scored_truth import films_everything, truth_to_score
from city360.synth.groundtruth import SceneTruth, VideoTruth, write_true_poses
from tests.pose_graph.walks import ORIGIN, walk_route, write_city

# a plus-shaped crossing at o filmed north-south and east; the streets beyond n and w (a
# second crossing at n and a street west of o) are in the window but never filmed
POSITIONS = {
    "s": (0, -80), "o": (0, 0), "n": (0, 80), "e": (80, 0), "w": (-80, 0),
    "nn": (0, 160), "ne": (80, 80), "nw": (-80, 80),
}  # fmt: skip
STREETS = ["so", "on", "oe", "ow", "n-nn", "n-ne", "n-nw"]
ROUTES = (["s", "o", "n"], ["n", "o", "e"], ["e", "o", "s"])


def _graph() -> tuple[nx.Graph, dict[str, int]]:
    ids = {name: k for k, name in enumerate(POSITIONS)}
    graph = nx.Graph()
    for name, (x, y) in POSITIONS.items():
        graph.add_node(ids[name], x_m=float(x), y_m=float(y))
    for street in STREETS:
        u, v = street.split("-") if "-" in street else tuple(street)
        polyline = np.array([POSITIONS[u], POSITIONS[v]], float)
        if ids[u] > ids[v]:
            u, v, polyline = v, u, polyline[::-1]
        graph.add_edge(ids[u], ids[v], polyline=polyline)
    return graph, ids


def _route_twin(root: Path) -> CityDir:
    """A pose-only twin of the window filmed along ROUTES, with its true path and a route
    source in ``city.json``, as ``synth --route`` writes them."""
    graph, ids = _graph()
    routes = [[ids[n] for n in route] for route in ROUTES]
    city = write_city(root, graph, routes, seed=3)
    projection = LocalProjection(*ORIGIN)
    rng = np.random.default_rng(4)
    videos = []
    for k, route in enumerate(routes):
        _, true = walk_route(graph, route, rng)
        lat, lon = projection.to_latlon(true[:, 0], true[:, 1])
        n = true.shape[0]
        table = np.column_stack(
            [np.arange(n), np.arange(n) / 1.4, true, lat, lon, np.zeros(n)]
        ).astype(np.float64)
        name = f"walk{k:03d}"
        write_true_poses(city.groundtruth_dir / "poses" / f"{name}.csv", table)
        videos.append(
            VideoTruth(
                name=name, junction_sequence=route, fps=1.0, frame_count=n, width=64,
                height=32, clock_offset_s=0.0, gps_noise_sigma_m=1.0,
                creation_time_utc="2026-01-01T00:00:00Z",
            )
        )  # fmt: skip
    truth_path = city.groundtruth_dir / "scene.json"
    truth = SceneTruth.load(truth_path)
    truth.model_copy(update={"videos": videos}).save(truth_path)
    manifest = city.read_manifest()
    route = SourceFile(kind="route", path="walk.gpx", sha256="0" * 64)
    city.write_manifest(manifest.model_copy(update={"sources": [route]}))
    return city


def test_a_route_twin_is_scored_against_the_streets_it_filmed(tmp_path: Path) -> None:
    city = _route_twin(tmp_path / "twin")
    build_city(city, require_frames=False)
    truth, filmed_only = truth_to_score(city.root)
    assert filmed_only
    assert len(truth.streets) == 3  # s-o, o-n and o-e; o-w and those beyond n are not filmed
    result = CliRunner().invoke(app, ["score", str(city.root), "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert figures["junction_recall"] == 1.0
    assert figures["street_recall"] >= 0.75
    assert figures["graph"]["truth"] == "the 3 streets filmed"


def test_a_twin_filmed_street_by_street_is_scored_against_every_street(tmp_path: Path) -> None:
    city = _route_twin(tmp_path / "twin")
    manifest = city.read_manifest()
    city.write_manifest(manifest.model_copy(update={"sources": []}))
    truth, filmed_only = truth_to_score(city.root)
    assert not filmed_only
    assert len(truth.streets) == len(STREETS)


def test_films_everything_follows_the_pattern_and_the_route() -> None:
    assert films_everything(pattern="coverage", route=False)
    assert films_everything(pattern="one-way", route=False)
    assert not films_everything(pattern="wander", route=False)
    assert not films_everything(pattern="coverage", route=True)
