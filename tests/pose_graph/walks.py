"""Synthetic pose-only cities for pose_graph tests: a street graph, routes walking it, noisy poses.

Until ``city360 synth`` provides rendered cities these stand in for them: a hand-made street
graph (a jittered grid with T-junctions, a dead-end spur, a diagonal and a curved street), routes
that walk every street (both ways, or at least one way), poses every metre along them with a
lateral offset like a pedestrian keeping right and ~1.4 m of correlated GPS-like noise, written
as trajectories with :class:`city360.city.CityDir` plus ``groundtruth/scene.json``.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import networkx as nx
import numpy as np
import numpy.typing as npt
from scipy.ndimage import gaussian_filter1d

from city360._atomic import atomic_dir
from city360.city import CityDir, CityManifest, TrajectoryMeta, TrajectoryPoses
from city360.geo import LocalProjection
from city360.pose_graph.osm_match import OsmStreets, streets_from_graph
from city360.pose_graph.tracks import Track, make_track
from city360.synth.groundtruth import Junction, SceneTruth, StreetEdge

ORIGIN = (35.7356, 139.6522)  # Nerima, Tokyo

FloatArray = npt.NDArray[np.float64]


def grid_streets(
    *, columns: int = 5, rows: int = 4, block_m: float = 90.0, jitter_m: float = 10.0, seed: int = 0
) -> nx.Graph:
    """A jittered grid street graph with a few irregularities; node attrs x_m, y_m; edge attr
    ``polyline`` (K, 2) from min(u, v) to max(u, v)."""
    rng = np.random.default_rng(seed)
    graph = nx.Graph()
    for c in range(columns):
        for r in range(rows):
            jitter = rng.uniform(-jitter_m, jitter_m, 2)
            graph.add_node(
                r * columns + c, x_m=c * block_m + jitter[0], y_m=r * block_m + jitter[1]
            )
    for c in range(columns):
        for r in range(rows):
            n = r * columns + c
            if c + 1 < columns:
                graph.add_edge(n, n + 1)
            if r + 1 < rows:
                graph.add_edge(n, n + columns)
    big = columns >= 4 and rows >= 3
    if big:
        # T-junctions: drop two inner edges; a diagonal through one block; a dead-end spur.
        graph.remove_edge(columns + 1, columns + 2)
        graph.remove_edge(2 * columns + 3, 3 * columns + 3 if rows > 3 else 2 * columns + 4)
        graph.add_edge(columns + 3, 2 * columns + 4)
        spur = max(graph.nodes) + 1
        x0, y0 = graph.nodes[columns - 1]["x_m"], graph.nodes[columns - 1]["y_m"]
        graph.add_node(spur, x_m=x0 + 0.7 * block_m, y_m=y0 - 0.2 * block_m)
        graph.add_edge(columns - 1, spur)
    for u, v in graph.edges:
        a, b = sorted((u, v))
        pa = np.array([graph.nodes[a]["x_m"], graph.nodes[a]["y_m"]])
        pb = np.array([graph.nodes[b]["x_m"], graph.nodes[b]["y_m"]])
        t = np.linspace(0.0, 1.0, 21)[:, None]
        line = pa + t * (pb - pa)
        if big and (a, b) == (0, 1):  # one gently curved street
            normal = np.array([-(pb - pa)[1], (pb - pa)[0]]) / np.linalg.norm(pb - pa)
            line = line + 12.0 * np.sin(np.pi * t) * normal
        graph.edges[u, v]["polyline"] = line
    assert nx.is_connected(graph)
    return graph


def _oriented(graph: nx.Graph, u: int, v: int) -> FloatArray:
    line: FloatArray = graph.edges[u, v]["polyline"]
    return line if u < v else line[::-1]


def routes_both_ways(graph: nx.Graph, *, edges_per_route: int = 7) -> list[list[int]]:
    """Node sequences that together walk every street once in each direction."""
    directed = nx.DiGraph()
    for u, v in graph.edges:
        directed.add_edge(u, v)
        directed.add_edge(v, u)
    circuit = [u for u, _ in nx.eulerian_circuit(directed, source=min(graph.nodes))]
    circuit.append(circuit[0])
    return _chunk(circuit, edges_per_route)


def routes_one_way(graph: nx.Graph, *, edges_per_route: int = 7) -> list[list[int]]:
    """Node sequences that walk every street at least once, most of them in one direction only."""
    multi = nx.eulerize(graph)
    circuit = [u for u, _ in nx.eulerian_circuit(multi, source=min(graph.nodes))]
    circuit.append(circuit[0])
    return _chunk(circuit, edges_per_route)


def _chunk(circuit: list[int], size: int) -> list[list[int]]:
    return [circuit[i : i + size + 1] for i in range(0, len(circuit) - 1, size)]


def walk_route(
    graph: nx.Graph,
    route: list[int],
    rng: np.random.Generator,
    *,
    spacing_m: float = 1.0,
    noise_sigma_m: float = 1.0,
    correlation_m: float = 10.0,
    keep_right_m: float = 1.0,
) -> tuple[FloatArray, FloatArray]:
    """(noisy poses, true path) every ``spacing_m`` along ``route``: corners rounded by a few
    metres, ``keep_right_m`` to the right of the centreline, per-axis noise of std
    ``noise_sigma_m`` correlated over ``correlation_m``."""
    parts = [_oriented(graph, u, v) for u, v in itertools.pairwise(route)]
    centre = np.concatenate([parts[0], *[p[1:] for p in parts[1:]]])
    steps = np.hypot(*np.diff(centre, axis=0).T)
    arc = np.concatenate([[0.0], np.cumsum(steps)])
    marks = np.arange(0.0, arc[-1], spacing_m)
    path = np.column_stack(
        [np.interp(marks, arc, centre[:, 0]), np.interp(marks, arc, centre[:, 1])]
    )
    path = gaussian_filter1d(path, sigma=2.5 / spacing_m, axis=0, mode="nearest")
    direction = np.gradient(path, axis=0)
    direction /= np.maximum(np.hypot(*direction.T), 1e-9)[:, None]
    right = np.column_stack([direction[:, 1], -direction[:, 0]])
    path = path + keep_right_m * right
    noise = gaussian_filter1d(rng.normal(size=path.shape), sigma=correlation_m / spacing_m, axis=0)
    noise *= noise_sigma_m / noise.std(axis=0)
    return path + noise, path


def _poses(xy: FloatArray, projection: LocalProjection, spacing_m: float) -> TrajectoryPoses:
    lat, lon = projection.to_latlon(xy[:, 0], xy[:, 1])
    d = np.gradient(xy, axis=0)
    heading = np.mod(np.degrees(np.arctan2(d[:, 0], d[:, 1])), 360.0)
    n = len(xy)
    return TrajectoryPoses(
        x_m=xy[:, 0].copy(),
        y_m=xy[:, 1].copy(),
        lat=np.asarray(lat),
        lon=np.asarray(lon),
        heading_deg=heading,
        t_s=(np.arange(n) * spacing_m / 1.3).astype(np.float64),
        source_pts=np.arange(n, dtype=np.int64),
    )


def scene_truth(graph: nx.Graph, projection: LocalProjection) -> SceneTruth:
    junctions = []
    for n, data in sorted(graph.nodes(data=True)):
        lat, lon = projection.to_latlon(data["x_m"], data["y_m"])
        junctions.append(
            Junction(
                id=n,
                x_m=data["x_m"],
                y_m=data["y_m"],
                lat=float(lat),
                lon=float(lon),
                degree=graph.degree[n],
            )
        )
    streets = []
    for u, v in sorted(tuple(sorted(e)) for e in graph.edges):
        line = _oriented(graph, u, v)
        streets.append(
            StreetEdge(
                u=u,
                v=v,
                length_m=float(np.hypot(*np.diff(line, axis=0).T).sum()),
                polyline_xy=[(float(x), float(y)) for x, y in line],
            )
        )
    return SceneTruth(seed=0, junctions=junctions, streets=streets, pois=[], objects=[], videos=[])


def write_city(
    root: Path,
    graph: nx.Graph,
    routes: list[list[int]],
    *,
    seed: int = 0,
    spacing_m: float = 1.0,
    noise_sigma_m: float = 1.0,
    origin: tuple[float, float] = ORIGIN,
) -> CityDir:
    """Write a pose-only city (no frames.mp4) walking ``routes`` over ``graph``."""
    rng = np.random.default_rng(seed)
    projection = LocalProjection(*origin)
    city = CityDir(root)
    xs = [d["x_m"] for _, d in graph.nodes(data=True)]
    ys = [d["y_m"] for _, d in graph.nodes(data=True)]
    south, west = projection.to_latlon(min(xs) - 100, min(ys) - 100)
    north, east = projection.to_latlon(max(xs) + 100, max(ys) + 100)
    city.write_manifest(
        CityManifest(
            name="walks",
            crs=projection.proj4,
            origin_lat=origin[0],
            origin_lon=origin[1],
            bbox=(float(south), float(west), float(north), float(east)),
            synthetic=True,
        )
    )
    for k, route in enumerate(routes):
        noisy, _ = walk_route(graph, route, rng, spacing_m=spacing_m, noise_sigma_m=noise_sigma_m)
        write_trajectory(city, f"walk{k:03d}", noisy, projection, spacing_m=spacing_m)
    city.groundtruth_dir.mkdir(parents=True, exist_ok=True)
    scene_truth(graph, projection).save(city.groundtruth_dir / "scene.json")
    return city


def write_trajectory(
    city: CityDir,
    trajectory_id: str,
    xy: FloatArray,
    projection: LocalProjection,
    *,
    spacing_m: float = 1.0,
) -> None:
    poses = _poses(xy, projection, spacing_m)
    meta = TrajectoryMeta(
        id=trajectory_id,
        source_video=f"{trajectory_id}.mp4",
        source_sha256="0" * 64,
        gps_source="synthetic",
        width=2048,
        height=1024,
        frame_count=len(poses),
        spacing_m=spacing_m,
        length_m=float(np.hypot(*np.diff(xy, axis=0).T).sum()),
        camera_yaw_offset_deg=0.0,
        clock_offset_s=0.0,
    )
    with atomic_dir(city.trajectory_dir(trajectory_id)) as folder:
        CityDir.write_trajectory_files(folder, meta, poses)


def write_island(city: CityDir, projection: LocalProjection) -> None:
    """Film a second, separate 2 x 2 grid (60 m blocks) 460 m east and 100 m north of the
    origin into ``city``, walked both ways as trajectories ``island0``, ``island1``, ...:
    a city whose graph falls into two pieces."""
    island = grid_streets(columns=2, rows=2, block_m=60.0, jitter_m=0.0)
    for n in island.nodes:
        island.nodes[n]["x_m"] += 460.0
        island.nodes[n]["y_m"] += 100.0
    for u, v in island.edges:
        island.edges[u, v]["polyline"] = island.edges[u, v]["polyline"] + [460.0, 100.0]
    rng = np.random.default_rng(5)
    for k, route in enumerate(routes_both_ways(island, edges_per_route=4)):
        write_trajectory(city, f"island{k}", walk_route(island, route, rng)[0], projection)


def bearing(dx: float, dy: float) -> float:
    return math.degrees(math.atan2(dx, dy)) % 360.0


def write_osm(graph: nx.Graph, path: Path, *, origin: tuple[float, float] = ORIGIN) -> Path:
    """An OSM XML extract of ``graph``: one residential way per street, polyline vertices as
    nodes, plus a few streets beyond the filmed area so the extract is larger than the city."""
    projection = LocalProjection(*origin)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<osm version="0.6" generator="tests">']
    node_ids: dict[int, int] = {}
    next_id = 1

    def node(x: float, y: float) -> int:
        nonlocal next_id
        lat, lon = projection.to_latlon(x, y)
        lines.append(
            f'  <node id="{next_id}" version="1" lat="{float(lat):.9f}" lon="{float(lon):.9f}"/>'
        )
        next_id += 1
        return next_id - 1

    for n, data in sorted(graph.nodes(data=True)):
        node_ids[n] = node(data["x_m"], data["y_m"])
    ways = []
    for u, v in sorted(tuple(sorted(e)) for e in graph.edges):
        line = _oriented(graph, u, v)
        inner = [node(x, y) for x, y in line[1:-1:4]]
        ways.append([node_ids[u], *inner, node_ids[v]])
    for k, refs in enumerate(ways):
        lines.append(f'  <way id="{k + 1}" version="1">')
        lines += [f'    <nd ref="{r}"/>' for r in refs]
        lines.append('    <tag k="highway" v="residential"/>')
        lines.append("  </way>")
    lines.append("</osm>")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def trajectories_from_gps(city: CityDir, *, spacing_m: float = 1.0) -> list[str]:
    """Turn a synthesized city's GPX tracks into pose-only trajectories, the way ingest would
    without video (:func:`city360.video_store.gps_only.trajectories_from_gpx`)."""
    from city360.video_store.gps_only import trajectories_from_gpx

    return trajectories_from_gpx(city, spacing_m=spacing_m)


def street_graph_from_osm(streets: nx.MultiGraph) -> nx.Graph:
    """A walkable street graph (the walker's format) from ``OsmData.streets``: parallel ways and
    self-loops dropped (a camera cannot tell two ways along one line apart)."""
    graph = nx.Graph()
    for node, data in streets.nodes(data=True):
        graph.add_node(node, x_m=float(data["x_m"]), y_m=float(data["y_m"]))
    for u, v, data in streets.edges(data=True):
        if u == v or graph.has_edge(u, v):
            continue
        line = np.asarray(data["polyline_xy"], dtype=np.float64)
        start = np.array([graph.nodes[u]["x_m"], graph.nodes[u]["y_m"]])
        if np.hypot(*(line[0] - start)) > np.hypot(*(line[-1] - start)):
            line = line[::-1]  # now runs u -> v
        graph.add_edge(u, v, polyline=line if u < v else line[::-1])
    graph.remove_nodes_from([n for n in list(graph.nodes) if graph.degree[n] == 0])
    largest = max(nx.connected_components(graph), key=len)
    return graph.subgraph(largest).copy()


def osm_streets(nodes: dict[int, tuple[float, float]], edges: list[tuple[int, int]]) -> OsmStreets:
    """A straight-street OSM network (metres) for map-matching tests: node id -> (x, y)."""
    graph = nx.MultiGraph()
    for n, (x, y) in nodes.items():
        graph.add_node(n, x_m=x, y_m=y)
    for u, v in edges:
        graph.add_edge(u, v, polyline_xy=[nodes[u], nodes[v]])
    return streets_from_graph(graph, source="test")


def noisy_walk(points: list[tuple[float, float]], name: str, *, noise_m: float) -> Track:
    """A track walking the polyline ``points`` one pose a metre, with white noise of
    ``noise_m`` (seeded by ``name``)."""
    rng = np.random.default_rng(sum(map(ord, name)))
    parts = []
    for a, b in itertools.pairwise(points):
        a_xy, b_xy = np.asarray(a, float), np.asarray(b, float)
        n = int(np.hypot(*(b_xy - a_xy)))
        parts.append(a_xy + np.linspace(0.0, 1.0, n, endpoint=False)[:, None] * (b_xy - a_xy))
    xy = np.concatenate([*parts, np.asarray(points[-1:], float)])
    xy = xy + rng.normal(0.0, noise_m, xy.shape)
    return make_track(name, xy, spacing_m=1.0, frame_count=len(xy))


def polyline_track(points: list[tuple[float, float]], name: str) -> Track:
    """A pose-only track walking ``points`` (metres) at 1 m spacing with 0.5 m noise, seeded by
    ``name``."""
    return noisy_walk(points, name, noise_m=0.5)
