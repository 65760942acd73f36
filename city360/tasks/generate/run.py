"""Make and check a whole suite for a city directory (what the CLI calls).

A synthetic city (``groundtruth/scene.json``) gets every registered family from its ground
truth; a real city gets the families its graph and OSM extract (:meth:`CityDir.osm_source`,
kept in the city by ``build --osm``) can carry (``FamilySpec.from_osm``); a city with neither
gets the graph-only ones (localization, map navigation).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from city360.city import CityDir, file_sha256
from city360.errors import TaskError
from city360.streets import StreetGraph
from city360.tasks.check import CheckReport, check_tasks
from city360.tasks.generate.common import GenerationContext, GenerationReport, ImageSource
from city360.tasks.schema import TaskBase
from city360.tasks.suite import Suite

__all__ = ["check_suite", "generate_suite", "suite_grid"]


def _move_m() -> tuple[float, float, float]:
    from city360.simulator.config import EnvConfig

    return EnvConfig().move_m


def suite_grid(suite: Suite, graph: StreetGraph) -> Any:
    """The suite's localization grid (its recorded area, else the graph's)."""
    from city360.maps.grid import MapGrid
    from city360.tasks.generate.images import grid_for_graph

    if suite.grid_area_m is not None:
        return MapGrid(*suite.grid_area_m, n=suite.grid_size)
    return grid_for_graph(graph, suite.grid_size)


def generate_suite(
    city_dir: str | Path,
    *,
    per_family: int = 25,
    seed: int = 0,
    grid_n: int = 5,
    families: Sequence[str] | None = None,
    name: str | None = None,
    images: ImageSource | None = None,
    step_limit: int = 50,
    on_family: Callable[[str], None] | None = None,
    difficulty: str = "default",
) -> tuple[Suite, GenerationReport]:
    """Generate a suite for ``city_dir``; returns it (not yet saved) and the report.
    ``difficulty`` names the profile of :mod:`city360.tasks.difficulty` the levels follow."""
    from city360.tasks.difficulty import get_profile
    from city360.tasks.generate.images import CityImages, grid_for_graph

    profile = get_profile(difficulty)

    started = time.perf_counter()
    city = CityDir(city_dir)
    manifest = city.read_manifest()
    graph = StreetGraph.open(city.root)
    grid = grid_for_graph(graph, grid_n)
    report = GenerationReport()
    own_images = images is None
    source = images if images is not None else CityImages(city.root, graph, grid)
    ctx = GenerationContext(
        city_name=manifest.name,
        projection=manifest.projection,
        graph=graph,
        grid=grid,
        images=source,
        rng=np.random.default_rng(seed),
        move_m=_move_m(),
        step_limit=step_limit,
        difficulty=profile,
    )
    truth_path = city.groundtruth_dir / "scene.json"
    osm_path = city.osm_source()
    try:
        tasks: list[TaskBase]
        if truth_path.is_file():
            from city360.synth.groundtruth import SceneTruth
            from city360.tasks.generate.from_truth import generate_from_truth

            kind = "groundtruth"
            tasks = generate_from_truth(
                ctx,
                SceneTruth.load(truth_path),
                per_family=per_family,
                families=families,
                report=report,
                on_family=on_family,
            )
        else:
            from city360.tasks.generate.from_osm import generate_from_osm

            pois: list[Any] = []
            if osm_path is not None:
                from city360.maps.osm import load_osm

                pois = list(load_osm(osm_path, projection=manifest.projection).pois)
                kind = "osm"
            else:
                kind = "graph"
                report.notes.append(
                    f"{city.root} has no OSM extract ({city.osm_extract_path}): no named places, "
                    "so no landmarks; build it with `city360 build CITY --osm FILE`"
                )
            tasks = generate_from_osm(
                ctx,
                pois,
                per_family=per_family,
                families=families,
                report=report,
                on_family=on_family,
                kind=kind,
            )
    finally:
        if own_images and isinstance(source, CityImages):
            source.close()
    if not tasks:
        msg = f"no task could be generated for {city.root}; see the report's notes"
        raise TaskError(msg)
    graph_hash = file_sha256(city.graph_path)
    suite = Suite(
        name=name or f"{manifest.name}-seed{seed}",
        city=manifest.name,
        tasks=tasks,
        assets=dict(ctx.assets),
        grid_size=grid_n,
        grid_area_m=(grid.x_min_m, grid.y_min_m, grid.x_max_m, grid.y_max_m),
        created={
            "generator": f"city360.tasks ({kind})",
            "seed": seed,
            "per_family": per_family,
            "step_limit": step_limit,
            "graph_sha256": graph_hash,
            "move_m": list(ctx.move_m),
        },
    )
    report.notes.append(f"generated in {time.perf_counter() - started:.1f} s")
    return suite, report


def check_suite(
    suite: Suite,
    city_dir: str | Path,
    *,
    on_task: Callable[[TaskBase], None] | None = None,
) -> CheckReport:
    """Check every task of ``suite`` against ``city_dir`` (see :mod:`city360.tasks.check`)."""
    city = CityDir(city_dir)
    manifest = city.read_manifest()
    if suite.city != manifest.name:
        msg = (
            f"suite {suite.name!r} is for city {suite.city!r}, but {city.root} is "
            f"{manifest.name!r}; pass the city the suite was generated for"
        )
        raise TaskError(msg)
    graph = StreetGraph.open(city.root)
    truth = None
    truth_path = city.groundtruth_dir / "scene.json"
    if truth_path.is_file():
        from city360.synth.groundtruth import SceneTruth

        truth = SceneTruth.load(truth_path)
    report = check_tasks(
        suite.tasks,
        graph,
        projection=manifest.projection,
        grid=suite_grid(suite, graph),
        truth=truth,
        move_m=tuple(suite.created.get("move_m") or _move_m()),
        place_names=None if truth is not None else _osm_place_names(city, manifest),
        on_task=on_task,
    )
    recorded = suite.created.get("graph_sha256")
    if recorded and recorded != file_sha256(city.graph_path):
        report.skipped.append(
            "the city's graph.json changed since the suite was generated "
            f"(sha256 {str(recorded)[:12]} -> {file_sha256(city.graph_path)[:12]})"
        )
    return report


def _osm_place_names(city: CityDir, manifest: Any) -> list[str] | None:
    """Names of the POIs of the city's OSM extract (None without one: nothing to check)."""
    source = city.osm_source()
    if source is None:
        return None
    from city360.maps.osm import load_osm

    data = load_osm(source, projection=manifest.projection)
    return [p.name for p in data.pois if p.name] or None
