"""Coverage routes and GPX routes."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import gpxpy.gpx
import networkx as nx
import numpy as np
import pytest

from city360.errors import ConfigError, GpsError, InputFileError
from city360.geo import LocalProjection
from city360.synth.routes import PathSampler, plan_coverage_routes, route_from_gpx

PROJECTION = LocalProjection(45.0, 7.0)


def grid_graph(cols: int = 3, rows: int = 3, spacing_m: float = 50.0) -> nx.MultiGraph:
    """A street grid with a dead-end stub on the west side of every row."""
    graph = nx.MultiGraph()

    def add_node(node: int, x: float, y: float) -> None:
        lat, lon = PROJECTION.to_latlon(x, y)
        graph.add_node(node, x_m=x, y_m=y, lat=float(lat), lon=float(lon))

    for r in range(rows):
        for c in range(cols):
            add_node(r * cols + c, c * spacing_m, r * spacing_m)
        add_node(100 + r, -20.0, r * spacing_m)

    def add_edge(u: int, v: int) -> None:
        a = np.array([graph.nodes[u]["x_m"], graph.nodes[u]["y_m"]])
        b = np.array([graph.nodes[v]["x_m"], graph.nodes[v]["y_m"]])
        mid = (a + b) / 2
        # store the polyline from v to u on purpose: the planner must orient it itself
        polyline = [tuple(b), tuple(mid), tuple(a)]
        graph.add_edge(u, v, length_m=float(np.hypot(*(b - a))), polyline_xy=polyline)

    for r in range(rows):
        add_edge(100 + r, r * cols)
        for c in range(cols):
            node = r * cols + c
            if c + 1 < cols:
                add_edge(node, node + 1)
            if r + 1 < rows:
                add_edge(node, node + cols)
    return graph


def walked_arcs(routes: list) -> Counter[tuple[int, int]]:
    return Counter((u, v) for route in routes for u, v, _ in route.arcs)


def test_every_street_is_walked_once_in_each_direction() -> None:
    graph = grid_graph()
    routes = plan_coverage_routes(graph)
    walked = walked_arcs(routes)
    expected = Counter()
    for u, v in graph.edges():
        expected[(u, v)] += 1
        expected[(v, u)] += 1
    assert walked == expected


def test_junction_sequence_and_polyline_follow_the_arcs() -> None:
    graph = grid_graph()
    for route in plan_coverage_routes(graph):
        arcs = route.arcs
        assert route.junction_sequence == (arcs[0][0], *[v for _, v, _ in arcs])
        for (_, v, _), (u2, _, _) in itertools.pairwise(arcs):
            assert v == u2
        # the polyline starts and ends on the first and last junction and has no jumps
        first, last = route.junction_sequence[0], route.junction_sequence[-1]
        start = (graph.nodes[first]["x_m"], graph.nodes[first]["y_m"])
        end = (graph.nodes[last]["x_m"], graph.nodes[last]["y_m"])
        np.testing.assert_allclose(route.polyline_xy[0], start, atol=1e-9)
        np.testing.assert_allclose(route.polyline_xy[-1], end, atol=1e-9)
        steps = np.hypot(*np.diff(route.polyline_xy, axis=0).T)
        assert steps.max() <= 25.0 + 1e-9  # half a block: the midpoints are kept
        expected_length = sum(graph.edges[u, v, k]["length_m"] for u, v, k in arcs)
        assert route.length_m == pytest.approx(expected_length)


def test_u_turns_only_at_dead_ends() -> None:
    graph = grid_graph()
    for max_video_m in (150.0, 400.0, 10_000.0):
        for route in plan_coverage_routes(graph, max_video_m=max_video_m):
            for (u1, v1, k1), arc in zip(route.arcs[:-1], route.arcs[1:], strict=True):
                if arc == (v1, u1, k1):
                    assert graph.degree(v1) == 1, f"U-turn at junction {v1}"


def plus_graph(arm_m: float = 50.0) -> nx.MultiGraph:
    """A crossing (node 0) with four arms ending in dead ends 1 (N), 2 (E), 3 (S), 4 (W)."""
    graph = nx.MultiGraph()
    graph.add_node(0, x_m=0.0, y_m=0.0)
    for node, (dx, dy) in enumerate([(0, 1), (1, 0), (0, -1), (-1, 0)], start=1):
        graph.add_node(node, x_m=dx * arm_m, y_m=dy * arm_m)
        graph.add_edge(0, node, length_m=arm_m, polyline_xy=[(0.0, 0.0), (dx * arm_m, dy * arm_m)])
    return graph


def test_walks_go_straight_through_a_crossing() -> None:
    routes = plan_coverage_routes(plus_graph(), max_video_m=300.0)
    sequences = sorted(route.junction_sequence for route in routes)
    # two straight walks, each turning back only at its two dead ends
    assert len(routes) == 2
    for sequence in sequences:
        pairs = {
            frozenset(sequence[i : i + 3 : 2])
            for i in range(len(sequence) - 2)
            if sequence[i + 1] == 0
        }
        assert pairs <= {frozenset({1, 3}), frozenset({2, 4})}


def test_walks_join_into_one_video_when_allowed() -> None:
    routes = plan_coverage_routes(plus_graph(), max_video_m=1000.0)
    assert len(routes) == 1
    assert routes[0].length_m == pytest.approx(400.0)
    assert walked_arcs(routes) == Counter(
        {(0, n): 1 for n in range(1, 5)} | {(n, 0): 1 for n in range(1, 5)}
    )


def test_videos_are_cut_at_junctions_to_the_length_bound() -> None:
    graph = grid_graph()
    total = 2 * sum(d["length_m"] for _, _, d in graph.edges(data=True))
    routes = plan_coverage_routes(graph, max_video_m=200.0)
    assert all(r.length_m <= 200.0 + 1e-6 for r in routes)
    assert sum(r.length_m for r in routes) == pytest.approx(total)
    assert [r.name for r in routes] == [f"walk_{i:03d}" for i in range(len(routes))]
    assert len(routes) >= total / 200.0


def test_planning_is_deterministic() -> None:
    first = plan_coverage_routes(grid_graph(), max_video_m=300.0)
    second = plan_coverage_routes(grid_graph(), max_video_m=300.0)
    assert [r.arcs for r in first] == [r.arcs for r in second]


def test_bad_planning_arguments() -> None:
    with pytest.raises(ConfigError, match=r"`max_video_m` must be > 0, got 0.0"):
        plan_coverage_routes(grid_graph(), max_video_m=0.0)
    empty = nx.MultiGraph()
    empty.add_node(1, x_m=0.0, y_m=0.0)
    with pytest.raises(ConfigError, match="the street graph has no streets"):
        plan_coverage_routes(empty)


def test_path_sampler_interpolates_by_distance() -> None:
    sampler = PathSampler(np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 0.0], [10.0, 5.0]]))
    assert sampler.length_m == pytest.approx(15.0)
    np.testing.assert_allclose(
        sampler.xy_at([0.0, 4.0, 12.0, 99.0]), [[0, 0], [4, 0], [10, 2], [10, 5]]
    )


def write_gpx(path: Path, xy: list[tuple[float, float]]) -> Path:
    gpx = gpxpy.gpx.GPX()
    track = gpxpy.gpx.GPXTrack()
    segment = gpxpy.gpx.GPXTrackSegment()
    for x, y in xy:
        lat, lon = PROJECTION.to_latlon(x, y)
        segment.points.append(gpxpy.gpx.GPXTrackPoint(float(lat), float(lon)))
    track.segments.append(segment)
    gpx.tracks.append(track)
    path.write_text(gpx.to_xml(), encoding="utf-8")
    return path


def test_route_from_gpx_follows_the_track_and_lists_junctions(tmp_path: Path) -> None:
    track = write_gpx(tmp_path / "walk.gpx", [(0.0, 0.0), (100.0, 0.0), (100.0, 50.0)])
    route = route_from_gpx(track, graph=grid_graph(), projection=PROJECTION)
    assert route.name == "walk"
    assert route.length_m == pytest.approx(150.0, abs=0.01)
    assert route.junction_sequence == (0, 1, 2, 5)
    assert route.arcs == ()


@pytest.mark.parametrize(("codec", "bom"), [("utf-16-le", b"\xff\xfe"), ("latin-1", b"")])
def test_route_gpx_in_another_encoding_is_read_as_the_track_reader_reads_it(
    tmp_path: Path, codec: str, bom: bytes
) -> None:
    """``synth --route`` read its GPX as UTF-8 with replacement characters: a UTF-16 export
    could not be parsed, though ``ingest`` reads it (issue 17, newuser)."""
    plain = write_gpx(tmp_path / "plain.gpx", [(0.0, 0.0), (100.0, 0.0), (100.0, 50.0)])
    text = plain.read_text(encoding="utf-8").replace("<gpx", "<!-- Stra\u00dfe --><gpx", 1)
    declared = "UTF-16" if codec.startswith("utf-16") else "ISO-8859-1"
    text = text.replace('encoding="UTF-8"', f'encoding="{declared}"')
    track = tmp_path / "walk.gpx"
    track.write_bytes(bom + text.encode(codec))
    route = route_from_gpx(track, graph=grid_graph(), projection=PROJECTION)
    assert route.length_m == pytest.approx(150.0, abs=0.01)
    assert route.junction_sequence == (0, 1, 2, 5)


def test_route_gpx_outside_the_extract(tmp_path: Path) -> None:
    track = write_gpx(tmp_path / "far.gpx", [(0.0, 0.0), (5000.0, 0.0)])
    with pytest.raises(
        GpsError,
        match=r"route GPX .*far\.gpx: 1 of 2 points lie outside the OSM extract \(first at lat "
        r"[\d.]+, lon [\d.]+\); give a track inside the extract, or an extract / --bbox that "
        r"covers the track",
    ):
        route_from_gpx(track, graph=grid_graph(), projection=PROJECTION)


def test_route_gpx_missing_corrupt_or_empty(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match=r"route GPX .*nope\.gpx not found; pass --route"):
        route_from_gpx(tmp_path / "nope.gpx", graph=grid_graph(), projection=PROJECTION)
    broken = tmp_path / "broken.gpx"
    broken.write_text("<gpx><trk><trkseg><trkpt lat=", encoding="utf-8")
    with pytest.raises(GpsError, match=r"route GPX .*broken\.gpx cannot be parsed"):
        route_from_gpx(broken, graph=grid_graph(), projection=PROJECTION)
    empty = write_gpx(tmp_path / "empty.gpx", [])
    with pytest.raises(GpsError, match=r"route GPX .*empty\.gpx has no track or route points"):
        route_from_gpx(empty, graph=grid_graph(), projection=PROJECTION)
    single = write_gpx(tmp_path / "single.gpx", [(1.0, 1.0), (1.0, 1.0)])
    with pytest.raises(GpsError, match=r"fewer than two distinct points"):
        route_from_gpx(single, graph=grid_graph(), projection=PROJECTION)


def test_timed_gpx_route_replays_stops_speed_and_turning_back(tmp_path: Path) -> None:
    """Issue 17: ``synth --route`` used the path only; a timed track keeps its clock."""
    import datetime as dt

    from city360.synth.film import sample_route

    start = dt.datetime(2024, 5, 1, 9, 0, tzinfo=dt.UTC)
    timeline = [(0.0, 0.0), (50.0, 50.0), (50.0, 60.0), (20.0, 75.0)]  # (x m, t s)
    gpx = gpxpy.gpx.GPX()
    segment = gpxpy.gpx.GPXTrackSegment()
    for x, t in timeline:
        lat, lon = PROJECTION.to_latlon(x, 0.0)
        stamp = start + dt.timedelta(seconds=t)
        segment.points.append(gpxpy.gpx.GPXTrackPoint(float(lat), float(lon), time=stamp))
    track = gpxpy.gpx.GPXTrack()
    track.segments.append(segment)
    gpx.tracks.append(track)
    (tmp_path / "timed.gpx").write_text(gpx.to_xml(), encoding="utf-8")
    route = route_from_gpx(tmp_path / "timed.gpx", graph=grid_graph(), projection=PROJECTION)
    assert route.timing is not None
    assert route.timing.start_utc == start.timestamp()
    poses = sample_route(route, fps=10)
    assert poses.duration_s == pytest.approx(75.0)
    at = {t: round(t * 10) for t in (30.0, 55.0, 70.0)}
    assert poses.x_m[at[30.0]] == pytest.approx(30.0, abs=0.05)  # 1 m/s out
    assert poses.x_m[at[55.0]] == pytest.approx(50.0, abs=0.05)  # standing
    assert poses.x_m[at[70.0]] == pytest.approx(30.0, abs=0.05)  # 2 m/s back


def test_untimed_gpx_route_walks_at_filming_speed(tmp_path: Path) -> None:
    from city360.synth.film import sample_route

    track = write_gpx(tmp_path / "walk.gpx", [(0.0, 0.0), (100.0, 0.0)])
    route = route_from_gpx(track, graph=grid_graph(), projection=PROJECTION)
    assert route.timing is None
    assert sample_route(route, fps=10, speed_mps=2.0).duration_s == pytest.approx(50.0)
