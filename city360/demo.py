"""``city360 demo`` (and ``make demo``): the main job, end to end, on the embedded demo city.

1. synthesize the demo city from the packaged OSM crop of Helsinki centre (cached);
2. ingest its videos with their GPS tracks into trajectories (cached);
3. build the pose graph with the OSM street network (cached);
4. draw its maps;
5. generate the 175-task suite (25 per family) and verify it (cached);
6. evaluate a baseline agent on it and write the HTML report.

The built city is cached under the user cache dir (``$CITY360_CACHE_DIR`` overrides), keyed by
the city360 version and the demo's inputs, so a second ``make demo`` goes straight to step 6.
Each step is a ``city360`` command a user can run alone; the commands are printed as they run.
"""

from __future__ import annotations

import hashlib
import shlex
import time
from pathlib import Path
from typing import Annotated

import typer

from city360.progress import console

__all__ = ["demo_city_dir", "register"]

DEMO_PER_FAMILY = 25


def demo_city_dir() -> Path:
    """Where the demo city is cached: depends on the package version, the demo extract and the
    demo's filming options (so a change of resolution never reuses an old city)."""
    from city360 import __version__
    from city360.settings import cache_dir
    from city360.synth.pipeline import DEMO_FPS, DEMO_SPEED_MPS, DEMO_WIDTH, demo_city_source

    digest = hashlib.sha256(demo_city_source().read_bytes())
    digest.update(__version__.encode())
    digest.update(f"{DEMO_WIDTH}/{DEMO_FPS}/{DEMO_SPEED_MPS}".encode())
    return cache_dir() / f"demo-helsinki-{digest.hexdigest()[:12]}"


def _run(*args: str) -> None:
    """Run one ``city360`` command in this process, echoing it like a shell would."""
    from city360.cli import app

    console.print(f"[bold cyan]$ city360 {shlex.join(args)}[/]")
    app(list(args), standalone_mode=False)


def demo_command(
    agent: Annotated[
        str, typer.Option("--agent", help="Baseline to evaluate: oracle, random, map or signs.")
    ] = "oracle",
    output_root: Annotated[Path, typer.Option(help="Where the run folder goes.")] = Path("outputs"),
    workers: Annotated[int, typer.Option(help="Episodes in parallel.")] = 2,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Rebuild the cached demo city from scratch.")
    ] = False,
) -> None:
    """Synthesize, ingest and build the demo city, generate its tasks, evaluate a baseline."""
    import shutil

    from city360.city import CityDir

    started = time.perf_counter()
    root = demo_city_dir()
    city = CityDir(root)
    if rebuild and root.exists():
        shutil.rmtree(root)
    console.print(f"demo city: {root}")
    if not (city.videos_dir.is_dir() and city.exists()):
        _run("synth", "--demo", "--out", str(root), "--force")
    from city360.video_store.ingest import trajectory_id_for

    ingested = set(city.trajectory_ids())
    missing = [
        v for v in sorted(city.videos_dir.glob("*.mp4")) if trajectory_id_for(v) not in ingested
    ]
    if missing:
        gps = [a for v in missing for a in ("--gps", str(v.with_suffix(".gpx")))]
        _run("ingest", *(str(v) for v in missing), *gps, "--out", str(root))
        city.graph_path.unlink(missing_ok=True)
    if not city.graph_path.is_file():
        _run("build", str(root), "--osm", str(city.map_dir / "extract.osm"))
    _run("info", str(root))
    output_root.mkdir(parents=True, exist_ok=True)
    _run("map", str(root), "--out", str(output_root / "demo-map.png"), "--grid", "5")
    suite = city.tasks_dir / "demo"
    if not (suite / "suite.json").is_file():
        _run(
            "tasks",
            "generate",
            str(root),
            "--out",
            str(suite),
            "--per-family",
            str(DEMO_PER_FAMILY),
            "--seed",
            "0",
        )
        _run("tasks", "check", str(suite), "--city", str(root))
    run_id = f"demo-{agent}-{time.strftime('%Y%m%d-%H%M%S')}"
    _run(
        "eval",
        str(root),
        "--suite",
        str(suite),
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
        f"[bold green]demo done[/] in {time.perf_counter() - started:.0f} s: open "
        f"{output_root / run_id / 'report' / 'index.html'}"
    )


def register(app: typer.Typer) -> None:
    app.command("demo")(demo_command)
