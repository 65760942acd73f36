"""The scorer on hand-made truths and built graphs (positions in metres, city CRS)."""

from __future__ import annotations

import networkx as nx
import pytest

from city360.pose_graph.graph import PoseGraph
from city360.pose_graph.score import score
from city360.synth.groundtruth import Junction, SceneTruth, StreetEdge

# Two T-junctions 7 m apart on a north-south street (a staggered crossing): the street between
# them is shorter than the 8 m matching tolerance, so the truth reads them as one place.
STAGGERED_NODES = {
    1: (0.0, 0.0),  # T-junction, arm to the west
    2: (0.0, 7.0),  # T-junction, arm to the east
    10: (-60.0, 0.0),
    11: (0.0, -60.0),
    12: (60.0, 7.0),
    13: (0.0, 67.0),
}
STAGGERED_STREETS = [(1, 2), (1, 10), (1, 11), (2, 12), (2, 13)]


def _truth(nodes: dict[int, tuple[float, float]], streets: list[tuple[int, int]]) -> SceneTruth:
    degree = {n: sum(n in s for s in streets) for n in nodes}
    junctions = [
        Junction(id=n, x_m=x, y_m=y, lat=0.0, lon=0.0, degree=degree[n])
        for n, (x, y) in nodes.items()
    ]
    edges = []
    for u, v in streets:
        (ux, uy), (vx, vy) = nodes[u], nodes[v]
        length = ((vx - ux) ** 2 + (vy - uy) ** 2) ** 0.5
        edges.append(StreetEdge(u=u, v=v, length_m=length, polyline_xy=[nodes[u], nodes[v]]))
    return SceneTruth(seed=0, junctions=junctions, streets=edges, pois=[], objects=[], videos=[])


def _built(nodes: dict[int, tuple[float, float]], streets: list[tuple[int, int]]) -> PoseGraph:
    """A built pose graph with one street (both directions) per pair in ``streets``."""
    graph = nx.MultiDiGraph()
    for n, (x, y) in nodes.items():
        degree = sum(n in s for s in streets)
        kind = "junction" if degree >= 3 else "dead_end"
        graph.add_node(n, kind=kind, x_m=x, y_m=y, lat=0.0, lon=0.0, degree=degree)
    for street, (u, v) in enumerate(streets):
        for a, b, reverse in ((u, v, False), (v, u, True)):
            graph.add_edge(
                a,
                b,
                key=f"s{street}{'r' if reverse else ''}",
                trajectory="walk_000",
                first_frame=0,
                last_frame=1,
                reverse=reverse,
                length_m=1.0,
                start_heading_deg=0.0,
                end_heading_deg=0.0,
                heading_profile_deg=[],
                twin=None,
                street=street,
                primary=True,
                transitions=[],
            )
    return PoseGraph(graph)


def test_a_build_that_resolves_a_staggered_pair_is_not_penalised() -> None:
    """Built junctions 1-2 m from each of the two true T-junctions 7 m apart: one place in
    the truth's reading, so no extra junction and every street found."""
    truth = _truth(STAGGERED_NODES, STAGGERED_STREETS)
    built = dict(STAGGERED_NODES)
    built[1], built[2] = (1.0, 0.5), (-0.5, 8.0)
    result = score(_built(built, STAGGERED_STREETS), truth)
    assert result.true_junctions == 1
    assert (result.junction_precision, result.junction_recall) == (1.0, 1.0)
    assert result.edge_f1 == pytest.approx(1.0)
    assert not result.extra_streets


def test_a_build_that_joins_a_staggered_pair_scores_the_same() -> None:
    """One built crossing between the two T-junctions: the truth's own reading."""
    truth = _truth(STAGGERED_NODES, STAGGERED_STREETS)
    built = {n: xy for n, xy in STAGGERED_NODES.items() if n != 2}
    built[1] = (0.0, 3.5)
    streets = [(1, 10), (1, 11), (1, 12), (1, 13)]
    result = score(_built(built, streets), truth)
    assert (result.junction_precision, result.junction_recall) == (1.0, 1.0)
    assert result.edge_f1 == pytest.approx(1.0)


def test_a_junction_built_twice_where_the_truth_has_one_is_still_an_extra() -> None:
    """Two built junctions 6 m apart at one true crossing: only a pair the truth itself
    contracted is read as one place."""
    nodes = {1: (0.0, 0.0), 10: (-60.0, 0.0), 11: (0.0, -60.0), 12: (60.0, 0.0), 13: (0.0, 60.0)}
    truth = _truth(nodes, [(1, 10), (1, 11), (1, 12), (1, 13)])
    built = {**nodes, 1: (0.0, -3.0), 2: (0.0, 3.0)}
    built[12], built[13] = (60.0, 3.0), (0.0, 60.0)
    result = score(_built(built, [(1, 2), (1, 10), (1, 11), (2, 12), (2, 13)]), truth)
    assert result.junction_recall == 1.0
    assert result.junction_precision == 0.5
    assert result.extra_streets


def test_a_built_junction_that_matches_a_true_one_is_never_read_into_a_pair() -> None:
    """A contracted pair 6 m apart and a third junction 9 m on: the built junction between
    them is nearer the pair's second half than its own true junction is far, and still
    counts for the third junction."""
    nodes = {
        1: (0.0, 0.0),
        2: (0.0, 6.0),
        3: (0.0, 15.0),
        10: (-60.0, 0.0),
        11: (0.0, -60.0),
        12: (60.0, 6.0),
        13: (-60.0, 15.0),
        14: (0.0, 75.0),
    }
    truth = _truth(nodes, [(1, 2), (1, 10), (1, 11), (2, 12), (2, 3), (3, 13), (3, 14)])
    built = {n: xy for n, xy in nodes.items() if n != 2}
    built[1], built[3] = (0.0, 0.5), (0.0, 11.0)
    result = score(_built(built, [(1, 10), (1, 11), (1, 12), (1, 3), (3, 13), (3, 14)]), truth)
    assert result.true_junctions == 2
    assert (result.junction_precision, result.junction_recall) == (1.0, 1.0)
