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
from city360.pose_graph.score import score
from city360.pose_graph.scored_truth import filmed_truth, films_everything, truth_to_score
from city360.synth.groundtruth import SceneTruth, VideoTruth, write_true_poses
from tests.pose_graph.walks import ORIGIN, scene_truth, walk_route, write_city

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


def _route_twin(
    root: Path, routes_by_name: tuple[list[str], ...] = ROUTES, tips: dict[str, str] | None = None
) -> CityDir:
    """A pose-only twin of the window filmed along ``routes_by_name``, with its true path and
    a route source in ``city.json``, as ``synth --route`` writes them. ``tips`` names points
    the routes may walk to that are not junctions of the window (name -> "x,y"): a walk turns
    back there, mid-street, and the truth does not have them."""
    graph, ids = _graph()
    truth_graph = graph.copy()
    for name, xy in (tips or {}).items():
        x, y = (float(c) for c in xy.split(","))
        ids[name] = len(ids)
        graph.add_node(ids[name], x_m=x, y_m=y)
        base = min(
            ids,
            key=lambda n: np.hypot(
                POSITIONS.get(n, (1e9, 0))[0] - x, POSITIONS.get(n, (1e9, 0))[1] - y
            ),
        )
        graph.add_edge(ids[base], ids[name], polyline=np.array([POSITIONS[base], (x, y)], float))
    routes = [[ids[n] for n in route] for route in routes_by_name]
    city = write_city(root, graph, routes, seed=3)
    scene_truth(truth_graph, LocalProjection(*ORIGIN)).save(city.groundtruth_dir / "scene.json")
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


# o-w walked 30 m from o and back, mid-walk: the filmed part is a dead-end street at o
SPUR = (["s", "o", "t", "o", "n"],)


def test_a_street_walked_part_way_and_back_is_a_dead_end_in_the_truth(tmp_path: Path) -> None:
    city = _route_twin(tmp_path / "twin", SPUR, tips={"t": "-30,0"})
    truth, _ = truth_to_score(city.root)
    lengths = sorted(round(s.length_m) for s in truth.streets)
    assert len(truth.streets) == 3, lengths  # s-o, o-n, and o-w up to the turn
    spur = next(s for s in truth.streets if s.length_m < 60)
    end = next(j for j in truth.junctions if j.id in (spur.u, spur.v) and j.degree == 1)
    assert abs(end.x_m + 30) < 4
    assert abs(end.y_m) < 1
    projection = LocalProjection(*ORIGIN)
    lat, lon = projection.to_latlon(end.x_m, end.y_m)
    assert abs(lat - end.lat) < 1e-6
    assert abs(lon - end.lon) < 1e-6
    build_city(city, require_frames=False)
    result = CliRunner().invoke(app, ["score", str(city.root), "--json"])
    figures = json.loads(result.output)
    # before: o-w left out, so o was a bend and the built junction there a false one
    assert figures["junction_precision"] == 1.0
    assert figures["junction_recall"] == 1.0


def _plus_truth() -> SceneTruth:
    graph, _ = _graph()
    return scene_truth(graph, LocalProjection(*ORIGIN))


def _path(*points: tuple[float, float]) -> np.ndarray:
    """A path through ``points`` with a point every metre."""
    corners = np.array(points, float)
    steps = np.hypot(*np.diff(corners, axis=0).T)
    arc = np.concatenate([[0.0], np.cumsum(steps)])
    marks = np.arange(0.0, arc[-1] + 0.5, 1.0)
    return np.column_stack(
        [np.interp(marks, arc, corners[:, 0]), np.interp(marks, arc, corners[:, 1])]
    )


def _kept(
    truth: SceneTruth, *paths: np.ndarray
) -> list[tuple[float, tuple[float, float], tuple[float, float]]]:
    """(length, first point, last point), rounded, of each street the filmed truth keeps."""
    return sorted(
        (round(s.length_m), tuple(np.round(s.polyline_xy[0])), tuple(np.round(s.polyline_xy[-1])))
        for s in filmed_truth(truth, list(paths)).streets
    )


def test_a_path_crossing_a_junction_films_none_of_its_side_streets() -> None:
    truth = _plus_truth()
    kept = _kept(truth, _path((0, -80), (0, 80)))  # straight through o, no turn
    assert [k[0] for k in kept] == [80, 80]  # s-o and o-n; o-e and o-w untouched


def test_a_video_that_stops_part_way_up_a_street_films_it_to_there() -> None:
    truth = _plus_truth()
    kept = _kept(truth, _path((0, -80), (0, 0), (45, 0)))
    assert len(kept) == 2
    assert kept[0][0] == 45
    assert kept[1][0] == 80


def test_a_video_that_starts_part_way_down_a_street_films_it_from_there() -> None:
    truth = _plus_truth()
    kept = _kept(truth, _path((-50, 0), (0, 0), (0, 80)))
    assert [k[0] for k in kept] == [50, 80]


def test_a_turn_back_close_to_the_junction_is_not_a_street() -> None:
    truth = _plus_truth()
    kept = _kept(truth, _path((0, -80), (0, 0), (-8, 0), (0, 0), (0, 80)))
    assert [k[0] for k in kept] == [80, 80]


def test_a_street_entered_from_both_ends_keeps_both_filmed_parts() -> None:
    truth = _plus_truth()
    one = _path((0, -80), (0, 0), (-25, 0), (0, 0), (0, 80))
    other = _path((-80, 80), (-80, 0), (-80, 0))  # truth has no street there: not filmed
    kept = _kept(truth, one, other)
    assert [k[0] for k in kept] == [25, 80, 80]


def test_a_path_along_a_shallow_fork_does_not_film_its_other_branch() -> None:
    # two streets leave o at 15 degrees from each other; the walk takes one to its end
    graph = nx.Graph()
    far = 100.0
    for k, (x, y) in enumerate(
        [
            (0.0, -80.0),
            (0.0, 0.0),
            (0.0, far),
            (far * np.sin(np.radians(15)), far * np.cos(np.radians(15))),
        ]
    ):
        graph.add_node(k, x_m=x, y_m=y)
    for u, v in ((0, 1), (1, 2), (1, 3)):
        polyline = np.array([[graph.nodes[n]["x_m"], graph.nodes[n]["y_m"]] for n in (u, v)])
        graph.add_edge(u, v, polyline=polyline)
    truth = scene_truth(graph, LocalProjection(*ORIGIN))
    kept = _kept(truth, _path((0, -80), (0, 0), (0, far)))
    assert [k[0] for k in kept] == [80, 100]


def test_clipping_keeps_the_truth_scoreable_by_the_scorer(tmp_path: Path) -> None:
    city = _route_twin(tmp_path / "twin", SPUR, tips={"t": "-30,0"})
    build_city(city, require_frames=False)
    truth, _ = truth_to_score(city.root)
    from city360.pose_graph.graph import load_graph

    result = score(load_graph(city, require_frames=False), truth)
    assert result.true_junctions == 1
