"""Pose-only walk cities for the pose_graph tests, made once per session (see walks.py)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from city360.pose_graph import PoseGraph
from tests.pose_graph.walks import (
    grid_streets,
    routes_both_ways,
    routes_one_way,
    write_city,
    write_osm,
)


@pytest.fixture(scope="session")
def walk_templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Template cities: "both" (every street filmed both ways), "one" (mostly one way), plus
    "osm", the matching OSM extract. Copy before changing them (``walk_city``)."""
    root = tmp_path_factory.mktemp("walks")
    graph = grid_streets()
    write_city(root / "both", graph, routes_both_ways(graph), seed=1)
    write_city(root / "one", graph, routes_one_way(graph), seed=2)
    write_osm(graph, root / "grid.osm")
    return {"both": root / "both", "one": root / "one", "osm": root / "grid.osm"}


@pytest.fixture
def walk_city(walk_templates: dict[str, Path], tmp_path: Path) -> Callable[[str], Path]:
    """``walk_city("both" | "one") -> path``: a private copy of a template city."""

    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(walk_templates[name], target)
        return target

    return copy


@pytest.fixture(scope="session")
def built_walks(
    walk_templates: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[Path, PoseGraph]]:
    """Built copies of the walk cities, for tests that only read: "both", "one" (pose-only)
    and "both+osm" (built with the OSM extract)."""
    from city360.pose_graph import build_city

    root = tmp_path_factory.mktemp("built-walks")
    out = {}
    for name, source, osm in (
        ("both", "both", None),
        ("one", "one", None),
        ("both+osm", "both", walk_templates["osm"]),
        ("one+osm", "one", walk_templates["osm"]),
    ):
        target = root / name.replace("+", "_")
        shutil.copytree(walk_templates[source], target)
        out[name] = (target, build_city(target, osm_path=osm, require_frames=False))
    return out
