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

__all__ = ["bench_command", "register"]


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


def register(app: typer.Typer) -> None:
    app.command("bench")(bench_command)
