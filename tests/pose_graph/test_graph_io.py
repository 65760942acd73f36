"""graph.json on disk: validation on load, corrupt files, pose-only cities, disconnected pieces."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from city360.city import CityDir
from city360.errors import CityFormatError, InputFileError
from city360.geo import LocalProjection
from city360.pose_graph import DisconnectedGraphWarning, PoseGraph, build_city, load_graph
from tests.pose_graph.walks import (
    write_island,
)

Built = dict[str, tuple[Path, PoseGraph]]


def _copy(built_walks: Built, tmp_path: Path, name: str = "one") -> Path:
    target = tmp_path / "city"
    shutil.copytree(built_walks[name][0], target)
    return target


def _edit(city: Path, change: Callable[[dict], None]) -> None:
    path = city / "graph.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_missing_graph_says_how_to_build(tmp_path: Path, walk_city: Callable[[str], Path]) -> None:
    city = walk_city("both")
    with pytest.raises(
        InputFileError, match=r"graph.json not found; build the pose graph first: `city360 build"
    ):
        load_graph(city, require_frames=False)


def test_corrupt_json(built_walks: Built, tmp_path: Path) -> None:
    city = _copy(built_walks, tmp_path)
    text = (city / "graph.json").read_text()
    (city / "graph.json").write_text(text[: len(text) // 2])
    with pytest.raises(CityFormatError, match=r"graph.json: not valid JSON .*rebuild it"):
        load_graph(city, require_frames=False)


def test_bad_field_is_named(built_walks: Built, tmp_path: Path) -> None:
    city = _copy(built_walks, tmp_path)
    _edit(city, lambda d: d["edges"][0].update(reverse="sideways"))
    with pytest.raises(CityFormatError, match=r"field 'edges.0.reverse'"):
        load_graph(city, require_frames=False)


def test_frames_beyond_the_trajectory_are_caught(built_walks: Built, tmp_path: Path) -> None:
    city = _copy(built_walks, tmp_path)
    _edit(city, lambda d: d["edges"][0].update(last_frame=10**6))
    with pytest.raises(CityFormatError, match=r"are not an increasing range within the \d+ frames"):
        load_graph(city, require_frames=False)


def test_edge_must_end_at_its_node(built_walks: Built, tmp_path: Path) -> None:
    city = _copy(built_walks, tmp_path)

    def shift_node(data: dict) -> None:
        data["nodes"][0]["x_m"] += 100.0

    _edit(city, shift_node)
    with pytest.raises(CityFormatError, match=r"is \d+\.\d m from node 0 \(limit 15.0 m\)"):
        load_graph(city, require_frames=False)


def test_graph_of_another_crs(built_walks: Built, tmp_path: Path) -> None:
    city = _copy(built_walks, tmp_path)
    _edit(city, lambda d: d["graph"].update(crs=LocalProjection(10.0, 10.0).proj4))
    with pytest.raises(CityFormatError, match=r"graph CRS .* is not the city's"):
        load_graph(city, require_frames=False)


def test_transition_to_a_missing_edge(built_walks: Built, tmp_path: Path) -> None:
    city = _copy(built_walks, tmp_path)

    def break_transition(data: dict) -> None:
        edge = next(e for e in data["edges"] if e["transitions"])
        edge["transitions"][0]["edge"] = "nowhere:1-2"

    _edit(city, break_transition)
    with pytest.raises(
        CityFormatError, match=r"edge '[^']+': transitions\[0\] names unknown edge 'nowhere:1-2'"
    ):
        load_graph(city, require_frames=False)


def test_discontinuous_poses_are_caught(built_walks: Built, tmp_path: Path) -> None:
    city = CityDir(_copy(built_walks, tmp_path))
    edge = next(e for e in built_walks["one"][1].edges() if e.last_frame - e.first_frame > 20)
    poses = city.read_poses(edge.trajectory)
    middle = (edge.first_frame + edge.last_frame) // 2
    poses.x_m[middle] += 50.0  # a jump inside the edge (the arrays are the parsed copy)
    (city.poses_path(edge.trajectory)).write_text(poses.to_csv())
    with pytest.raises(CityFormatError, match=r"the segment is not continuous"):
        load_graph(city, require_frames=False)


def test_pose_only_city_needs_to_say_so(built_walks: Built) -> None:
    city, _ = built_walks["both"]
    with pytest.raises(CityFormatError, match=r"has no frames.mp4 \(use require_frames=False"):
        load_graph(city)


def test_failed_build_leaves_the_old_graph(built_walks: Built, tmp_path: Path) -> None:
    city = _copy(built_walks, tmp_path)
    before = (city / "graph.json").read_bytes()
    with pytest.raises(CityFormatError, match=r"frames\.mp4 is missing"):
        build_city(city)  # frames required: nothing may be written
    assert (city / "graph.json").read_bytes() == before


def test_disconnected_pieces_are_listed(walk_city: Callable[[str], Path]) -> None:
    city_path = walk_city("both")
    city = CityDir(city_path)
    projection = city.read_manifest().projection
    write_island(city, projection)  # a second, separate grid inside the city bbox
    with pytest.warns(
        DisconnectedGraphWarning, match=r"(?s)2 disconnected pieces.*piece 2: \d+ nodes"
    ) as record:
        pose_graph = build_city(city_path, require_frames=False)
    assert "island0" in str(record[0].message)
    assert len(pose_graph.components()) == 2
    assert isinstance(projection, LocalProjection)
