"""``city360 eval`` and ``city360 report``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from city360.progress import console

__all__ = ["register"]


def _load_config(
    ctx: typer.Context, _param: typer.CallbackParam, value: Path | None
) -> Path | None:
    """``--config``: the run file's options become this command's defaults (flags win)."""
    if value is not None:
        from city360.eval.run_config import load_run_file

        names = [p.name for p in ctx.command.params if p.name]
        ctx.default_map = {**(ctx.default_map or {}), **load_run_file(value, names)}
    return value


def _load_rerun(ctx: typer.Context, _param: typer.CallbackParam, value: Path | None) -> Path | None:
    """``--rerun``: the recorded run's options become this command's defaults."""
    if value is not None:
        from city360.eval.run_config import rerun_defaults

        options, metadata = rerun_defaults(value)
        ctx.default_map = {**(ctx.default_map or {}), **options}
        ctx.meta["city360.rerun"] = metadata
    return value


_SUPPLIED = "Required unless --config or --rerun gives it."


def _required(value: Path | None, what: str, key: str, ctx: typer.Context) -> Path:
    """``CITY_DIR`` and ``--suite`` may come from the command line, a run file or a recorded
    run; without any of the three the usage error says all three ways."""
    if value is None:
        msg = (
            f"Missing {what}: give it on the command line, as `{key} = ...` in a --config run "
            "file, or repeat a recorded run with --rerun RUN_DIR."
        )
        ctx.fail(msg)
    return value


def eval_command(
    ctx: typer.Context,
    city_dir: Annotated[
        Path | None,
        typer.Argument(
            metavar="CITY_DIR",
            help=f"A built city (city.json + graph.json), or a packaged city's name. {_SUPPLIED}",
            show_default=False,
        ),
    ] = None,
    suite: Annotated[
        Path | None,
        typer.Option(
            "--suite",
            help=f"Task suite folder (suite.json), or a suite name in CITY_DIR/tasks. {_SUPPLIED}",
            show_default=False,
        ),
    ] = None,
    agent: Annotated[
        str,
        typer.Option(
            "--agent",
            help="lmm, random, oracle, map or signs, or your own class: mypkg.mod:MyAgent.",
        ),
    ] = "oracle",
    agent_option: Annotated[
        list[str] | None,
        typer.Option(
            "--agent-option",
            help="KEY=VALUE keyword for the agent's constructor (repeatable; JSON values).",
        ),
    ] = None,
    provider: Annotated[
        str | None,
        typer.Option(help="lmm provider: openai, anthropic, gemini, vllm, ollama, azure, ..."),
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model name for the lmm agent.")] = None,
    base_url: Annotated[
        str | None, typer.Option(help="Endpoint of an OpenAI-compatible server.")
    ] = None,
    tasks: Annotated[
        str | None,
        typer.Option("--tasks", help="Comma-separated task ids or family names (default: all)."),
    ] = None,
    no_map: Annotated[
        bool, typer.Option("--no-map", help="Hide the location map (ablation).")
    ] = False,
    views: Annotated[
        int,
        typer.Option(
            "--views",
            help="Images per step (ablation): 1 the current view; N>1 adds N-1 labelled "
            "multi-view faces (right, back, left, up, down) for the lmm agent.",
        ),
    ] = 1,
    route_guidance: Annotated[
        bool,
        typer.Option(
            "--route-guidance", help="Draw the route to the goal on the ground (ablation)."
        ),
    ] = False,
    condition: Annotated[
        str,
        typer.Option(
            "--condition",
            help="Visual condition of the views: day (the city's own frames) or a variant "
            "the city has (dusk, night, rain, fog; `city360 condition add CITY NAME`).",
        ),
    ] = "day",
    workers: Annotated[int, typer.Option(help="Episodes in parallel.")] = 1,
    executor: Annotated[str, typer.Option(help="local or ray.")] = "local",
    ray_address: Annotated[
        str | None, typer.Option(help="Address of a running Ray cluster (default: start one).")
    ] = None,
    run_id: Annotated[str | None, typer.Option(help="Name of the run folder.")] = None,
    output_root: Annotated[Path, typer.Option(help="Where run folders go.")] = Path("outputs"),
    resume: Annotated[
        str | None, typer.Option("--resume", help="Continue the run with this id.")
    ] = None,
    resume_anyway: Annotated[
        bool,
        typer.Option(
            "--resume-anyway",
            help="With --resume: continue even if agent, model, suite or protocol differ.",
        ),
    ] = False,
    seed: Annotated[int, typer.Option(help="Run seed (per-episode seeds derive from it).")] = 0,
    save_frames: Annotated[
        bool, typer.Option("--save-frames", help="Keep each step's view for replays.")
    ] = False,
    report: Annotated[
        bool, typer.Option("--report/--no-report", help="Write the HTML report at the end.")
    ] = True,
    protocol: Annotated[
        str,
        typer.Option(
            "--protocol",
            help="default (city360's rules) or reference (360CityArena's, exactly).",
        ),
    ] = "default",
    judge_provider: Annotated[
        str | None,
        typer.Option(help="LLM judge of RelationalSpatial answers: openai, anthropic, ..."),
    ] = None,
    judge_model: Annotated[str | None, typer.Option(help="Model of the LLM judge.")] = None,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Also print the summary as JSON on stdout (for scripts)."),
    ] = False,
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="TOML file of eval options (any flag, by name; `city`, `suite`); flags win.",
            is_eager=True,
            callback=_load_config,
            show_default=False,
        ),
    ] = None,
    rerun: Annotated[
        Path | None,
        typer.Option(
            "--rerun",
            help="Run again what RUN_DIR ran (its run_metadata.json), into a new run folder; "
            "refuses if code version, suite hash or seeds differ.",
            is_eager=True,
            callback=_load_rerun,
            show_default=False,
        ),
    ] = None,
    judge_base_url: Annotated[
        str | None,
        typer.Option(
            help="Endpoint of the judge (default: --base-url, unless --provider differs)."
        ),
    ] = None,
) -> None:
    """Run an agent on a task suite; write results.csv, run_metadata.json and step logs."""
    from city360.agents.registry import parse_agent_options
    from city360.cities import resolve_city, resolve_suite
    from city360.errors import ConfigError
    from city360.eval.ablations import Ablations
    from city360.eval.protocols import get_protocol
    from city360.eval.report import write_report
    from city360.eval.runner import AgentSpec, EvalConfig, run_eval
    from city360.eval.specs import JudgeSpec
    from city360.eval.summary import print_summary

    city_dir = resolve_city(str(_required(city_dir, "argument 'CITY_DIR'", "city", ctx)))
    suite = resolve_suite(str(_required(suite, "option '--suite'", "suite", ctx)), city_dir)
    if rerun is not None:
        _check_rerun(ctx.meta["city360.rerun"], suite=suite, select=tasks, seed=seed)

    if resume and run_id and resume != run_id:
        console.print(f"[red]error:[/] --resume {resume} and --run-id {run_id} disagree")
        raise typer.Exit(2)
    get_protocol(protocol)  # an unknown name fails before anything starts
    judge = None
    if judge_provider or judge_model:
        if not (judge_provider and judge_model):
            console.print("[red]error:[/] --judge-provider and --judge-model go together")
            raise typer.Exit(2)
        # --base-url serves the judge too when the agent has no provider of its own or the same
        shares_url = provider is None or provider == judge_provider
        url = judge_base_url or (base_url if shares_url else None)
        judge = JudgeSpec(provider=judge_provider, model=judge_model, base_url=url)
    try:
        ablations = Ablations(use_map=not no_map, views=views, route_guidance=route_guidance)
    except ConfigError as exc:
        console.print(f"[red]error:[/] {exc}", highlight=False)
        raise typer.Exit(2) from None
    config = EvalConfig(
        city_dir=city_dir,
        suite_dir=suite,
        agent=AgentSpec(
            kind=agent,
            provider=provider,
            model=model,
            base_url=base_url,
            options={
                **ablations.agent_options(agent),
                **parse_agent_options(agent_option or []),
            },
        ),
        select=tasks,
        use_map=ablations.use_map,
        env_options=ablations.env_options(),
        workers=workers,
        executor=executor,  # type: ignore[arg-type]
        ray_address=ray_address,
        run_id=resume or run_id,
        output_root=output_root,
        resume=resume is not None,
        resume_anyway=resume_anyway,
        seed=seed,
        save_frames=save_frames,
        protocol=protocol,
        condition=condition,
        judge=judge,
    )
    try:
        outcome = run_eval(config)
    except KeyboardInterrupt as exc:
        why = f" by {exc}" if str(exc) else ""
        console.print(
            f"[yellow]interrupted{why}[/]: finished episodes are saved; continue with "
            f"--resume {resume or run_id or '<run id printed above>'}",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(143 if str(exc) == "SIGTERM" else 130) from None
    for warning in outcome.warnings:
        console.print(f"[yellow]warning:[/] {warning}", highlight=False, soft_wrap=True)
    under = "" if condition == "day" else f" ({condition})"
    print_summary(outcome.summary, title=f"{agent} on {suite.name}{under}")
    console.print(
        f"ran {outcome.ran} episode(s), {outcome.skipped} already done → {outcome.run_dir}"
    )
    if report:
        page = write_report(outcome.run_dir, city_dir=city_dir)
        console.print(f"report: {page}")
    if as_json:
        import json

        from city360.eval.summary import summary_as_json

        payload = {
            "run_dir": str(outcome.run_dir),
            "status": outcome.status,
            "ran": outcome.ran,
            "skipped": outcome.skipped,
            **summary_as_json(outcome.summary),
        }
        typer.echo(json.dumps(payload, indent=2))


def _check_rerun(
    metadata: dict[str, object], *, suite: Path, select: str | None, seed: int
) -> None:
    from city360.eval.run_config import check_rerun
    from city360.eval.specs import task_seed
    from city360.tasks.suite import load_suite

    loaded = load_suite(suite)
    chosen = loaded.select(select) if select else list(loaded.tasks)
    check_rerun(
        metadata,
        suite_hash=loaded.content_hash(),
        seeds={t.id: task_seed(seed, t.id) for t in chosen},
    )


def report_command(
    run_dirs: Annotated[
        list[Path], typer.Argument(help="Run folders written by `city360 eval` (one or more).")
    ],
    city: Annotated[
        Path | None, typer.Option("--city", help="City folder (default: from the run).")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Folder of the comparison page of several runs (default: ./compare)."
        ),
    ] = None,
) -> None:
    """One run: write RUN/report/index.html (scores, stop reasons, trajectories, replays).
    Several: one page comparing them per family and difficulty, side by side."""
    from city360.eval.compare import write_comparison
    from city360.eval.report import write_report

    if len(run_dirs) == 1:
        page = write_report(run_dirs[0], city_dir=city)
    else:
        page = write_comparison(run_dirs, out or Path("compare"))
    console.print(f"report: {page}")


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
    app.command("report")(report_command)
