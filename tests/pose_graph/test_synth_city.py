"""Cities made by ``city360 synth``: the rendered, ingested one (with OSM, through the CLI) and
a pose-only twin whose trajectories come from its GPX through video_store's cleaning."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from city360.city import CityDir
from city360.pose_graph import PoseGraph, build_city, load_graph
from city360.pose_graph.score import score
from city360.synth.groundtruth import SceneTruth
from tests.pose_graph.walks import trajectories_from_gps


def _assert_accurate(city: Path, pose_graph: PoseGraph) -> None:
    result = score(pose_graph, SceneTruth.load(city / "groundtruth" / "scene.json"))
    assert result.junction_precision >= 0.95
    assert result.junction_recall >= 0.95
    assert result.edge_f1 >= 0.95
    assert result.turns_total >= 30
    assert result.wrong_turns == []


@pytest.mark.slow
def test_rendered_synth_city_ingested_and_built_with_osm(built_city: Path) -> None:
    pose_graph = load_graph(built_city)  # frames required: this city has video
    _assert_accurate(built_city, pose_graph)
    assert len(pose_graph.components()) == 1
    stats = CityDir(built_city).read_manifest().stats["pose_graph"]
    assert stats["osm_coverage"] > 0.9


def test_pose_only_synth_city_without_osm(synth_city_poses: Path, tmp_path: Path) -> None:
    city = tmp_path / "city"
    shutil.copytree(synth_city_poses, city)
    assert trajectories_from_gps(CityDir(city))
    pose_graph = build_city(city, require_frames=False)
    _assert_accurate(city, pose_graph)
    assert len(pose_graph.components()) == 1
    assert load_graph(city, require_frames=False) == pose_graph
