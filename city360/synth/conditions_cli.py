"""``city360 condition add|list``: visual conditions (dusk, night, rain, fog) of a synth city."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from city360.progress import console

__all__ = ["register"]

condition_app = typer.Typer(
    help="Visual conditions of a synthetic city: the same routes filmed at dusk, at night, in "
    "rain or fog, so the same tasks run under each (`city360 eval --condition NAME`).",
    no_args_is_help=True,
)


@condition_app.command("add")
def add_command(
    city: Annotated[
        Path,
        typer.Argument(
            help="A built synthetic city (synth + ingest + build), or a packaged city's name."
        ),
    ],
    name: Annotated[str, typer.Argument(help="Condition: dusk, night, rain or fog.")],
    replace: Annotated[
        bool, typer.Option("--replace", help="Film the condition again if it exists.")
    ] = False,
) -> None:
    """Film NAME as a variant of CITY: same routes, camera poses and frame times, new frames."""
    from city360.cities import resolve_city
    from city360.city import CityDir
    from city360.synth.variants import add_condition

    city = resolve_city(str(city))
    started = time.perf_counter()
    folder = add_condition(city, name, replace=replace)
    meta = CityDir(city).read_condition(name)
    console.print(
        f"[bold green]condition[/] {name}: {sum(meta.frame_counts.values())} frames over "
        f"{len(meta.frame_counts)} trajectories in {time.perf_counter() - started:.1f} s -> "
        f"{folder}",
        highlight=False,
    )


@condition_app.command("list")
def list_command(
    city: Annotated[Path, typer.Argument(help="A city directory or a packaged city's name.")],
) -> None:
    """List the conditions CITY has (day = its own frames) and those that can be added."""
    from city360.cities import resolve_city
    from city360.city import CityDir
    from city360.synth.looks import condition_names

    have = CityDir(resolve_city(str(city))).condition_names()
    console.print("has: " + ", ".join(have), highlight=False)
    missing = [n for n in condition_names() if n not in have]
    if missing:
        console.print("can add: " + ", ".join(missing), highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``city360 condition`` to the main CLI."""
    app.add_typer(condition_app, name="condition")
