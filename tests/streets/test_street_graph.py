"""The one graph model: the graph.json reader, the length rule, the cache, hand-made graphs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pytest

from city360.city import CityDir, CityManifest, TrajectoryMeta, TrajectoryPoses
from city360.errors import CityFormatError, ConfigError, InputFileError, TaskError
from city360.geo import LocalProjection
from city360.pose_graph import PoseGraph, load_graph
from city360.simulator.world import World
from city360.streets import StreetGraph, Transition, read_graph_file, scaled_offsets
from city360.tasks.walk import oracle_walk

ORIGIN = (60.17, 24.94)
POSES_M = 20.0
"""The trajectory's poses run 20 m north; the graph says the street is 25 m long."""
LENGTH_M = 25.0


def _write_city(root: Path) -> Path:
    """A city with one 20 m trajectory filmed north, walked both ways as 25 m segments."""
    projection = LocalProjection(*ORIGIN)
    city = CityDir(root)
    root.mkdir(parents=True)
    city.write_manifest(
        CityManifest(
            name="line", crs=projection.proj4, origin_lat=ORIGIN[0], origin_lon=ORIGIN[1],
            bbox=(60.16, 24.93, 60.18, 24.95),
        )
    )  # fmt: skip
    n = 21
    y = np.linspace(0.0, POSES_M, n) ** 1.2 / POSES_M**0.2  # uneven spacing, 0..20 m
    x = np.zeros(n)
    lat, lon = projection.to_latlon(x, y)
    poses = TrajectoryPoses(
        x_m=x, y_m=y, lat=lat, lon=lon, heading_deg=np.zeros(n),
        t_s=np.arange(n, dtype=np.float64), source_pts=np.arange(n, dtype=np.int64),
    )  # fmt: skip
    meta = TrajectoryMeta(
        id="ns", source_video="ns.mp4", source_sha256="0" * 64, gps_source="handmade",
        width=64, height=32, frame_count=n, spacing_m=1.0, length_m=POSES_M,
        camera_yaw_offset_deg=10.0, clock_offset_s=0.0,
    )  # fmt: skip
    folder = city.trajectory_dir("ns")
    folder.mkdir(parents=True)
    CityDir.write_trajectory_files(folder, meta, poses)
    nodes = []
    for node, (nx_, ny_) in {0: (0.0, 0.0), 1: (0.0, POSES_M)}.items():
        nlat, nlon = projection.to_latlon(nx_, ny_)
        nodes.append(
            {"id": node, "kind": "dead_end", "x_m": nx_, "y_m": ny_, "lat": float(nlat),
             "lon": float(nlon), "degree": 1}
        )  # fmt: skip
    edges = []
    for seg, (u, v, reverse, twin) in {
        "up": (0, 1, False, "down"),
        "down": (1, 0, True, "up"),
    }.items():
        edges.append(
            {"source": u, "target": v, "key": seg, "id": seg, "trajectory": "ns",
             "first_frame": 0, "last_frame": n - 1, "reverse": reverse, "length_m": LENGTH_M,
             "start_heading_deg": 180.0 if reverse else 0.0,
             "end_heading_deg": 180.0 if reverse else 0.0,
             "heading_profile_deg": [180.0 if reverse else 0.0] * 5, "twin": twin,
             "street": 0, "primary": not reverse,
             "transitions": [{"edge": twin, "turn_deg": 180.0, "label": "UP", "uturn": True}]}
        )  # fmt: skip
    data = {
        "directed": True,
        "multigraph": True,
        "graph": {"crs": projection.proj4, "schema_version": 1, "build": {}},
        "nodes": nodes,
        "edges": edges,
    }
    city.graph_path.write_text(json.dumps(data), encoding="utf-8")
    return root


@pytest.fixture
def line_city(tmp_path: Path) -> Path:
    return _write_city(tmp_path / "line")


def _edit(city: Path, change: Any) -> None:
    path = city / "graph.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_schema_version_mismatch_says_how_to_fix(line_city: Path) -> None:
    _edit(line_city, lambda d: d["graph"].update(schema_version=7))
    with pytest.raises(
        CityFormatError,
        match=r"graph\.json: field 'graph\.schema_version': 7 is not supported \(this city360 "
        r"reads 1\); rebuild the graph with `city360 build .*line`",
    ):
        StreetGraph.from_city(line_city)
    with pytest.raises(CityFormatError, match=r"'graph\.schema_version': 7 is not supported"):
        load_graph(line_city, require_frames=False)


def test_missing_schema_version_is_an_error_in_a_file(line_city: Path) -> None:
    _edit(line_city, lambda d: d["graph"].pop("schema_version"))
    with pytest.raises(CityFormatError, match=r"'graph\.schema_version': missing is not"):
        read_graph_file(line_city / "graph.json")


def test_missing_field_is_named(line_city: Path) -> None:
    _edit(line_city, lambda d: d["nodes"][1].pop("x_m"))
    with pytest.raises(
        CityFormatError, match=r"graph\.json: field 'nodes\.1\.x_m': Field required"
    ) as caught:
        StreetGraph.from_city(line_city)
    assert "rebuild the graph with `city360 build" in str(caught.value)


def test_missing_trajectory_field_is_named(line_city: Path) -> None:
    _edit(line_city, lambda d: d["edges"][0].pop("trajectory"))
    with pytest.raises(
        CityFormatError, match=r"edge 'up': field 'edges\.0\.trajectory' is missing"
    ):
        StreetGraph.from_city(line_city)
    with pytest.raises(CityFormatError, match=r"field 'edges\.0\.trajectory' is missing"):
        load_graph(line_city, require_frames=False)


def test_unknown_transition_target(line_city: Path) -> None:
    _edit(line_city, lambda d: d["edges"][1]["transitions"][0].update(edge="nowhere"))
    with pytest.raises(
        CityFormatError, match=r"graph\.json: edge 'down': transitions\[0\] names unknown edge"
    ):
        StreetGraph.from_city(line_city)


def test_bad_label_and_missing_file(line_city: Path, tmp_path: Path) -> None:
    _edit(line_city, lambda d: d["edges"][1]["transitions"][0].update(label="BACK"))
    with pytest.raises(CityFormatError, match=r"field 'edges\.1\.transitions\.0\.label'"):
        StreetGraph.open(line_city)
    (line_city / "graph.json").unlink()
    with pytest.raises(InputFileError, match=r"graph\.json not found; build the pose graph first"):
        StreetGraph.open(line_city)


def test_offsets_are_scaled_to_length_m_once_for_simulator_and_walker(line_city: Path) -> None:
    graph = StreetGraph.open(line_city)
    with World(line_city) as world:
        sim = world.segment("up")
    walk = graph.segment("up")
    assert sim is walk  # one object: the simulator's world and the walker share the graph
    poses = CityDir(line_city).read_poses("ns")
    steps = np.hypot(np.diff(poses.x_m), np.diff(poses.y_m))
    expected = np.concatenate([[0.0], np.cumsum(steps)]) * (LENGTH_M / steps.sum())
    np.testing.assert_allclose(walk.cum_m, expected)
    assert walk.cum_m[-1] == LENGTH_M == walk.walk_m
    for k in (0, 5, 13, 20):
        offset = float(walk.cum_m[k])
        assert walk.index_at(offset) == k  # the simulator's frame at that offset
        assert walk.position(offset) == pytest.approx((poses.x_m[k], poses.y_m[k]))
        assert walk.frames[k] == k
    down = graph.segment("down")
    assert list(down.frames[:3]) == [20, 19, 18]
    assert down.travel_deg[0] == pytest.approx(180.0)
    assert down.camera_deg[0] == pytest.approx(10.0)  # filmed heading + camera yaw offset
    np.testing.assert_allclose(down.cum_m, scaled_offsets(down.xy, LENGTH_M))
    assert graph.position("down", LENGTH_M) == pytest.approx((0.0, 0.0))


def test_cache_returns_one_object_until_graph_json_changes(line_city: Path) -> None:
    first = StreetGraph.open(line_city)
    assert StreetGraph.open(line_city) is first
    assert StreetGraph.open(str(line_city) + "/") is first
    _edit(line_city, lambda d: d["edges"][0].update(length_m=30.0))
    second = StreetGraph.open(line_city)
    assert second is not first
    assert second.segment("up").length_m == 30.0
    stat = (line_city / "graph.json").stat()
    os.utime(line_city / "graph.json", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert StreetGraph.open(line_city) is not second


def test_pose_graph_reads_the_same_file(line_city: Path) -> None:
    pose_graph = load_graph(line_city, require_frames=False)
    graph = StreetGraph.open(line_city)
    assert pose_graph.edge("up").transitions == graph.segment("up").transitions
    assert isinstance(graph.segment("up").transitions[0], Transition)
    assert PoseGraph.from_node_link(pose_graph.to_node_link()) == pose_graph


def test_unknown_segment_is_both_a_config_and_a_task_error(line_city: Path) -> None:
    graph = StreetGraph.open(line_city)
    for kind in (ConfigError, TaskError):
        with pytest.raises(kind, match=r"segment 'uq' is not in the pose graph\. Did you mean"):
            graph.segment("uq")


def _square() -> nx.MultiDiGraph:
    """Four 50 m streets round a block, both ways, with UP/RIGHT choices at each corner."""
    graph = nx.MultiDiGraph()
    corners = [(0.0, 0.0), (0.0, 50.0), (50.0, 50.0), (50.0, 0.0)]
    for node, (x, y) in enumerate(corners):
        graph.add_node(node, x_m=x, y_m=y, kind="junction")
    for k in range(4):
        u, v = k, (k + 1) % 4
        nxt = f"cw{(k + 1) % 4}"
        graph.add_edge(
            u, v, key=f"cw{k}", id=f"cw{k}", length_m=50.0, twin=f"ccw{k}",
            transitions=[{"edge": nxt, "turn_deg": 90.0, "label": "RIGHT"}],
        )  # fmt: skip
        graph.add_edge(
            v, u, key=f"ccw{k}", id=f"ccw{k}", length_m=50.0, twin=f"cw{k}",
            transitions=[{"edge": f"ccw{(k - 1) % 4}", "turn_deg": -90.0, "label": "LEFT"}],
        )  # fmt: skip
    return graph


def test_from_networkx_runs_straight_and_walks() -> None:
    graph = StreetGraph.from_networkx(_square())
    seg = graph.segment("cw0")
    assert seg.position(25.0) == pytest.approx((0.0, 25.0))
    assert seg.heading(10.0) == pytest.approx(0.0)
    assert list(seg.frames) == [-1, -1]
    assert graph.out_segments(0) == ["cw0", "ccw3"]
    assert graph.locate(49.0, 20.0)[:2] == pytest.approx(("cw2", 30.0))  # type: ignore[arg-type]
    assert graph.shortest_route("cw0", "cw2") == ["cw0", "cw1", "cw2"]
    assert graph.forward("cw0", 45.0, 10.0) == ("cw0", 50.0, 5.0)  # stops at a junction
    result = oracle_walk(graph, ("cw0", 0.0), (50.0, 40.0), 2.0, step_limit=30)
    assert result.reachable
    assert result.segments == ("cw0", "cw1", "cw2")


def test_from_networkx_is_validated_by_the_same_schema() -> None:
    broken = _square()
    broken.edges[0, 1, "cw0"]["transitions"] = [{"edge": "x", "turn_deg": 0.0, "label": "UP"}]
    with pytest.raises(CityFormatError, match=r"edge 'cw0': transitions\[0\] names unknown edge"):
        StreetGraph.from_networkx(broken)
    broken = _square()
    broken.graph["schema_version"] = 2
    with pytest.raises(CityFormatError, match=r"schema_version': 2 is not supported"):
        StreetGraph.from_networkx(broken)
