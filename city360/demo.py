"""``city360 demo`` (and ``make demo``): the main job, end to end, on a packaged city.

1. build the packaged city (``demo`` by default; see :mod:`city360.cities`) on first use:
   synthesize it from its packaged OSM crop, ingest its videos with their GPS tracks, build the
   pose graph with the OSM street network, generate its 25-per-family suite and verify it
   (every step cached);
2. describe it and draw its maps;
3. evaluate a baseline agent on its suite and write the HTML report.

Each step is a ``city360`` command a user can run alone; the commands are printed as they run.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from city360.progress import console

__all__ = ["demo_city_dir", "register"]


def demo_city_dir() -> Path:
    """Where the demo city is cached (:func:`city360.cities.city_cache_dir` of ``demo``)."""
    from city360.cities import city_cache_dir

    return city_cache_dir("demo")


def demo_command(
    agent: Annotated[
        str, typer.Option("--agent", help="Baseline to evaluate: oracle, random, map or signs.")
    ] = "oracle",
    city_name: Annotated[
        str, typer.Option("--city", help="Packaged city to build and evaluate on.")
    ] = "demo",
    output_root: Annotated[Path, typer.Option(help="Where the run folder goes.")] = Path("outputs"),
    workers: Annotated[int, typer.Option(help="Episodes in parallel.")] = 2,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Rebuild the cached city from scratch.")
    ] = False,
) -> None:
    """Build a packaged city (the demo by default), generate its tasks, evaluate a baseline."""
    from city360.cities import SUITE_NAME, city_cache_dir, ensure_city, get_city, run_command

    started = time.perf_counter()
    packaged = get_city(city_name)
    console.print(f"{packaged.name} city: {city_cache_dir(packaged)}")
    root = ensure_city(packaged, rebuild=rebuild)
    run_command("info", str(root))
    output_root.mkdir(parents=True, exist_ok=True)
    run_command(
        "map", str(root), "--out", str(output_root / f"{packaged.name}-map.png"), "--grid", "5"
    )
    run_id = f"{packaged.name}-{agent}-{time.strftime('%Y%m%d-%H%M%S')}"
    run_command(
        "eval",
        str(root),
        "--suite",
        str(root / "tasks" / SUITE_NAME),
        "--agent",
        agent,
        "--workers",
        str(workers),
        "--output-root",
        str(output_root),
        "--run-id",
        run_id,
    )
    console.print(
        f"[bold green]{packaged.name} done[/] in {time.perf_counter() - started:.0f} s: open "
        f"{output_root / run_id / 'report' / 'index.html'}"
    )


def register(app: typer.Typer) -> None:
    app.command("demo")(demo_command)
