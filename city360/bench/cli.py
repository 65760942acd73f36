"""``city360 bench``: the performance harness (issue 11), figures and targets in one run.

The measurements live in :mod:`city360.bench` (one module per figure group, installed with the
wheel); this module only wires them to the command line.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from city360.progress import console

__all__ = ["bench_command", "bench_ocr_command", "register"]


def bench_command(
    quick: Annotated[
        bool,
        typer.Option("--quick", help="Small cities, few repetitions (< 2 min; smoke test)."),
    ] = False,
    out: Annotated[Path, typer.Option(help="Where to write the JSON figures.")] = Path(
        "bench.json"
    ),
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Rebuild the cached benchmark cities.")
    ] = False,
    seed: Annotated[int, typer.Option(help="Seed for positions, frames and headings.")] = 0,
) -> None:
    """Measure step latency, ingest, build, maps, throughput and memory against the targets.

    Builds (once, cached under the city360 cache dir) a synthetic city filmed at 3840x1920, a
    30 fps clip and a large pose-only city, measures everything for a 640x480 view at 90°,
    prints a table and writes every figure, the targets and the machine to ``--out``.
    """
    from rich.console import Console

    from city360.bench.report import render_table
    from city360.bench.run import run_benchmarks, write_result

    result = run_benchmarks(quick=quick, rebuild=rebuild, seed=seed)
    path = write_result(result, out)

    # a pipe or log gets a wide table instead of rich's 80-column default
    Console(width=None if sys.stdout.isatty() else 132).print(render_table(result))
    load = result["machine"]["load_average_1_5_15"]
    console.print(
        f"load average at start {load}, cpus {result['machine']['cpu_count']}; "
        f"figures written to {path}"
    )


def bench_ocr_command(
    city: Annotated[str, typer.Argument(help="A synthetic city directory or packaged name.")],
    suite: Annotated[str, typer.Option(help="Its task suite (folder or name).")] = "main",
    backend: Annotated[
        list[str] | None,
        typer.Option("--backend", help="OCR backend to measure (repeat; default: all)."),
    ] = None,
    family: Annotated[
        list[str] | None,
        typer.Option("--family", help="Whose landmarks to look at (default LandmarkSearchText)."),
    ] = None,
    threshold: Annotated[
        float, typer.Option(help="Name match that counts as read (the sign reader's).")
    ] = 0.75,
    out: Annotated[Path | None, typer.Option(help="Also write the figures as JSON here.")] = None,
) -> None:
    """Compare OCR backends on the views of a city's landmark signs the sign reader sees.

    Views 640x480 at 90° square on to each landmark's sign from 3 m before, at, 3 m and 6 m
    past its task's goal pose; per backend the views read, false reads (another landmark's
    name read far from its sign) and CPU seconds per view. Set OMP_THREAD_LIMIT=1 for a
    one-core tesseract figure.
    """
    import json

    from rich.table import Table

    from city360.agents.ocr_backends import OCR_BACKENDS, make_ocr_backend
    from city360.bench.ocr import FAMILIES, compare_backends, sign_views
    from city360.cities import resolve_city, resolve_suite

    backends = [make_ocr_backend(name) for name in (backend or list(OCR_BACKENDS))]
    city_dir = resolve_city(city)
    views = sign_views(city_dir, resolve_suite(suite, city_dir), families=tuple(family or FAMILIES))
    scores = compare_backends(backends, views, threshold=threshold)
    table = Table(title=f"OCR on {len(views)} sign views of {city_dir.name}")
    for column in ("backend", "read", "false reads", "CPU s / view", "wall s / view"):
        table.add_column(column, justify="left" if column == "backend" else "right")
    for score in scores:
        table.add_row(
            score.backend,
            f"{score.read} / {score.views}",
            str(score.false_reads),
            f"{score.cpu_s_per_view:.2f}",
            f"{score.wall_s_per_view:.2f}",
        )
    console.print(table)
    if out is not None:
        payload = {"city": str(city_dir), "scores": [s.as_dict() for s in scores]}
        out.write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")
        console.print(f"figures written to {out}")


def register(app: typer.Typer) -> None:
    app.command("bench")(bench_command)
    app.command("bench-ocr")(bench_ocr_command)
