"""Filming patterns (city360/synth/patterns.py): one-way Euler trails and wandering walks."""

from __future__ import annotations

import itertools
from collections import Counter

import networkx as nx
import numpy as np
import pytest

from city360.errors import ConfigError
from city360.synth.patterns import plan_routes
from city360.synth.routes import plan_coverage_routes
from tests.synth.test_routes import grid_graph


def street(arc: tuple[int, int, int]) -> tuple[int, int, int]:
    u, v, key = arc
    return (min(u, v), max(u, v), key)


def test_coverage_is_the_planner_of_before() -> None:
    graph = grid_graph()
    planned = plan_routes(graph, pattern="coverage", seed=4)
    before = plan_coverage_routes(graph)
    assert [r.arcs for r in planned] == [r.arcs for r in before]


def test_one_way_films_every_street_once_in_the_fewest_trails() -> None:
    graph = grid_graph(cols=3, rows=3)
    routes = plan_routes(graph, pattern="one-way", max_video_m=10_000.0)
    walked = Counter(street(a) for r in routes for a in r.arcs)
    assert set(walked) == {street((u, v, k)) for u, v, k in graph.edges(keys=True)}
    assert set(walked.values()) == {1}
    odd = sum(1 for _, degree in graph.degree() if degree % 2)
    assert len(routes) == odd // 2  # 2k odd junctions: k trails, and no fewer
    for route in routes:  # each trail is a walk: one street ends where the next begins
        for (_, v, _), (u, _, _) in zip(route.arcs, route.arcs[1:], strict=False):
            assert v == u


def test_one_way_cuts_long_trails_into_videos() -> None:
    routes = plan_routes(grid_graph(cols=4, rows=4), pattern="one-way", max_video_m=150.0)
    assert max(r.length_m for r in routes) <= 150.0 + 50.0  # at most one street over
    assert len({street(a) for r in routes for a in r.arcs}) == sum(len(r.arcs) for r in routes)


def test_wander_is_seeded_and_films_whole_streets() -> None:
    graph = grid_graph(cols=4, rows=4)
    first = plan_routes(graph, pattern="wander", seed=3, max_video_m=300.0)
    again = plan_routes(graph, pattern="wander", seed=3, max_video_m=300.0)
    other = plan_routes(graph, pattern="wander", seed=4, max_video_m=300.0)
    assert [r.polyline_xy.tobytes() for r in first] == [r.polyline_xy.tobytes() for r in again]
    assert [r.polyline_xy.tobytes() for r in first] != [r.polyline_xy.tobytes() for r in other]
    walked = Counter(street(a) for r in first for a in r.arcs)
    assert set(walked) == {street((u, v, k)) for u, v, k in graph.edges(keys=True)}
    assert max(walked.values()) >= 2  # streets revisited
    # each video after the first starts where an earlier one passed: the walks overlap
    for earlier, later in itertools.pairwise(first):
        assert later.junction_sequence[0] in earlier.junction_sequence


def test_wander_turns_back_mid_street_and_crosses_itself() -> None:
    graph = grid_graph(cols=4, rows=4)
    nodes = {(round(d["x_m"], 6), round(d["y_m"], 6)) for _, d in graph.nodes(data=True)}
    routes = plan_routes(graph, pattern="wander", seed=1, max_video_m=400.0)
    turn_backs = crossing = 0
    for route in routes:
        steps = np.diff(route.polyline_xy, axis=0)
        lengths = np.hypot(*steps.T)
        steps, points = steps[lengths > 0], route.polyline_xy[1:][lengths > 0]
        unit = steps / np.hypot(*steps.T)[:, None]
        reverse = np.flatnonzero(np.sum(unit[1:] * unit[:-1], axis=1) < -0.99)
        for k in reverse:  # a U-turn away from any node: turned back mid-street
            apex = (round(points[k, 0], 6), round(points[k, 1], 6))
            turn_backs += apex not in nodes
        sequence = route.junction_sequence
        crossing += len(set(sequence)) < len(sequence)  # passes a junction twice
    assert turn_backs >= 1
    assert crossing >= 1


def test_wander_gets_out_of_dead_ends_and_films_spurs() -> None:
    graph = grid_graph()  # a dead-end stub on the west side of every row
    routes = plan_routes(graph, pattern="wander", seed=0)
    stubs = {street((u, v, k)) for u, v, k in graph.edges(keys=True) if max(u, v) >= 100}
    walked = {street(a) for r in routes for a in r.arcs}
    assert stubs <= walked


def test_unknown_pattern_names_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown filming pattern 'one_way'; expected one of "
                       r"coverage, one-way, wander\. Did you mean 'one-way'\?"):  # fmt: skip
        plan_routes(grid_graph(), pattern="one_way")


def test_one_way_on_a_graph_without_odd_junctions_is_one_loop() -> None:
    graph = nx.MultiGraph()
    corners = [(0.0, 0.0), (50.0, 0.0), (50.0, 50.0), (0.0, 50.0)]
    for n, (x, y) in enumerate(corners):
        graph.add_node(n, x_m=x, y_m=y)
    for n in range(4):
        a, b = corners[n], corners[(n + 1) % 4]
        graph.add_edge(n, (n + 1) % 4, length_m=50.0, polyline_xy=[a, b])
    routes = plan_routes(graph, pattern="one-way")
    assert len(routes) == 1
    assert len(routes[0].arcs) == 4
    assert routes[0].junction_sequence[0] == routes[0].junction_sequence[-1]
