"""``city360 tasks generate`` and ``city360 tasks check``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["register"]

tasks_app = typer.Typer(
    help="Task suites: generate them for a city, check them against it, show them.",
    no_args_is_help=True,
)


@tasks_app.command("generate")
def generate_command(
    city_dir: Annotated[Path, typer.Argument(help="city directory (built: graph.json)")],
    out: Annotated[Path, typer.Option("--out", help="suite folder to write")],
    per_family: Annotated[int, typer.Option(help="tasks per family")] = 25,
    seed: Annotated[int, typer.Option(help="random seed")] = 0,
    grid: Annotated[int, typer.Option(help="N of the N x N localization grid")] = 5,
    family: Annotated[
        list[str] | None, typer.Option("--family", help="only these families (repeatable)")
    ] = None,
    overwrite: Annotated[bool, typer.Option(help="replace an existing suite folder")] = False,
    difficulty: Annotated[
        str,
        typer.Option(help="difficulty profile: default, or reference (360CityArena's means)"),
    ] = "default",
) -> None:
    """Generate a task suite for CITY_DIR and print its statistics."""
    from city360.cities import resolve_city
    from city360.progress import console, make_progress
    from city360.tables import records_table
    from city360.tasks.difficulty import difficulty_statistics
    from city360.tasks.families import all_families, get_family
    from city360.tasks.generate.run import generate_suite
    from city360.tasks.suite import save_suite

    city_dir = resolve_city(str(city_dir))

    families = [get_family(name).name for name in family] if family else None
    total = len(families) if families else len(all_families())
    with make_progress() as progress:
        bar = progress.add_task("generating tasks", total=total)
        suite, report = generate_suite(
            city_dir,
            per_family=per_family,
            seed=seed,
            grid_n=grid,
            families=families,
            on_family=lambda _family: progress.advance(bar),
            difficulty=difficulty,
        )
        progress.update(bar, completed=total)
    save_suite(suite, out, overwrite=overwrite)
    rows = difficulty_statistics(suite.tasks)
    keys = [
        "family",
        "difficulty",
        "n",
        *sorted({k for row in rows for k in row} - {"family", "difficulty", "n"}),
    ]
    table = records_table(
        rows,
        keys,
        title=f"{suite.name}: {len(suite)} tasks (feature means)",
        key_columns=3,
        console=console,
    )
    console.print(table)
    for note in report.notes:
        console.print(f"note: {note}")
    for fam, reasons in sorted(report.rejected.items()):
        listed = ", ".join(f"{why}: {n}" for why, n in sorted(reasons.items()))
        console.print(f"rejected candidates, {fam}: {listed}")
    typer.echo(f"wrote {out} ({len(suite)} tasks, hash {suite.content_hash()})")


@tasks_app.command("check")
def check_command(
    suite_dir: Annotated[Path, typer.Argument(help="suite folder (suite.json + assets/)")],
    city: Annotated[Path, typer.Option("--city", help="the city directory the suite is for")],
    replay: Annotated[
        bool,
        typer.Option(
            "--replay/--no-replay",
            help="also play the oracle on every navigation task in the simulator under the "
            "eval's stop rules (--no-replay: the street-graph checks only)",
        ),
    ] = True,
    protocol: Annotated[
        str, typer.Option("--protocol", help="the protocol whose stop rules the replay uses")
    ] = "default",
) -> None:
    """Check every task of SUITE_DIR against its city; exit 1 if any fails."""
    from city360.cities import resolve_city, resolve_suite
    from city360.progress import console, make_progress
    from city360.tasks.generate.run import check_suite
    from city360.tasks.suite import load_suite

    city = resolve_city(str(city))
    suite_dir = resolve_suite(suite_dir, city)  # `main` is CITY/tasks/main, as in eval

    suite = load_suite(suite_dir)
    with make_progress() as progress:
        bar = progress.add_task("checking tasks", total=len(suite))
        report = check_suite(suite, city, on_task=lambda _task: progress.advance(bar))
    if replay:
        # the eval's oracle in the real simulator: the graph proof is necessary, not enough
        from city360.eval.oracle_replay import replay_oracle
        from city360.tasks.families import get_family

        failed = set(report.failing_ids())
        playable = [
            task
            for task in suite.tasks
            if task.id not in failed and get_family(task.family).navigation
        ]
        with make_progress() as progress:
            bar = progress.add_task("replaying the oracle", total=len(playable))
            report.issues.extend(
                replay_oracle(
                    playable,
                    city,
                    protocol=protocol,
                    on_task=lambda _task: progress.advance(bar),
                )
            )
    for note in report.skipped:
        console.print(f"not checked: {note}")
    for issue in report.issues:
        console.print(f"[red]FAIL[/] {issue}", highlight=False)
    steps = list(report.oracle_steps.values())
    if steps:
        console.print(
            f"oracle: {len(steps)} navigation tasks solved in {min(steps)}..{max(steps)} steps "
            f"(mean {sum(steps) / len(steps):.1f})"
        )
    if report.issues:
        failing = report.failing_ids()
        typer.echo(f"{len(failing)} of {report.checked} tasks fail: {', '.join(failing)}")
        raise typer.Exit(1)
    typer.echo(f"all {report.checked} tasks pass (suite hash {suite.content_hash()})")


@tasks_app.command("show")
def show_command(
    suite_dir: Annotated[Path, typer.Argument(help="suite folder (suite.json + assets/)")],
    select: Annotated[
        str | None, typer.Argument(help="task ids or family names, comma-separated")
    ] = None,
    truth: Annotated[bool, typer.Option(help="also print the hidden answer")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the tasks as JSON")] = False,
    city: Annotated[
        Path | None,
        typer.Option(
            "--city",
            help="a city directory or packaged city name: SUITE_DIR may then name one of its "
            "suites (`main` is CITY/tasks/main), as in eval",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Print what an agent is told for each task (and, with --truth, the expected answer)."""
    import json

    from city360.tasks.suite import load_suite

    if city is not None:
        from city360.cities import resolve_city, resolve_suite

        suite_dir = resolve_suite(suite_dir, resolve_city(str(city)))
    suite = load_suite(suite_dir)
    tasks = suite.select(select) if select else list(suite.tasks)
    if as_json:
        records = []
        for task in tasks:
            view = task.agent_view(suite_root=str(Path(suite_dir).resolve()))
            record: dict[str, object] = {
                "id": task.id,
                "family": str(task.family),
                "difficulty": task.difficulty.value,
                "prompt": view.prompt,
                "reference_images": [str(image) for image in view.reference_images],
            }
            if truth:
                record["expected"] = task.expected_answer()
            records.append(record)
        payload = {"suite": suite.name, "hash": suite.content_hash(), "tasks": records}
        typer.echo(json.dumps(payload, indent=2, default=str))
        return
    for task in tasks:
        view = task.agent_view(suite_root=str(Path(suite_dir).resolve()))
        typer.echo(f"== {task.id} ({task.family}, {task.difficulty.value})")
        typer.echo(view.prompt)
        for image in view.reference_images:
            typer.echo(f"[image] {image}")
        if truth:
            typer.echo(f"[expected] {task.expected_answer()}")
    typer.echo(f"{len(tasks)} of {len(suite)} tasks; suite hash {suite.content_hash()}")


def register(app: typer.Typer) -> None:
    app.add_typer(tasks_app, name="tasks")
