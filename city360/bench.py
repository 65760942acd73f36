"""``city360 bench``: the performance harness (issue 11), figures and targets in one run.

The measurements live in the repository's ``benchmarks/`` package (one module per figure
group); this module only wires them to the command line. ``benchmarks`` is not installed with
the wheel, so the command runs from a source checkout (it finds ``benchmarks/`` next to the
``city360`` package).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from city360.progress import console

__all__ = ["bench_command", "register"]


def _benchmarks() -> Any:
    """Import ``benchmarks.run``, adding the source checkout to ``sys.path`` if needed."""
    try:
        return importlib.import_module("benchmarks.run")
    except ModuleNotFoundError as exc:
        if exc.name != "benchmarks":
            raise
    checkout = Path(__file__).resolve().parent.parent
    if not (checkout / "benchmarks" / "__init__.py").is_file():
        from city360.errors import DependencyMissingError

        msg = (
            "`city360 bench` needs the benchmarks/ folder of a source checkout "
            f"(not found next to {Path(__file__).resolve().parent}); clone the repository "
            "and `pip install -e .` it"
        )
        raise DependencyMissingError(msg)
    sys.path.insert(0, str(checkout))
    return importlib.import_module("benchmarks.run")


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

    run = _benchmarks()
    result = run.run_benchmarks(quick=quick, rebuild=rebuild, seed=seed)
    path = run.write_result(result, out)
    from benchmarks.report import render_table

    # a pipe or log gets a wide table instead of rich's 80-column default
    Console(width=None if sys.stdout.isatty() else 132).print(render_table(result))
    load = result["machine"]["load_average_1_5_15"]
    console.print(
        f"load average at start {load}, cpus {result['machine']['cpu_count']}; "
        f"figures written to {path}"
    )


def register(app: typer.Typer) -> None:
    app.command("bench")(bench_command)
