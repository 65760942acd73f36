"""Run a task suite with an agent: ``run_eval(EvalConfig(...))`` or ``city360 eval``.

A run lives in ``<output_root>/<run_id>/``: ``results.csv`` (a row per finished episode,
fsynced as it finishes), ``run_metadata.json`` (status ``running`` → ``complete`` /
``interrupted`` / ``failed``), ``episodes/<task_id>.jsonl`` step logs and, with
``save_frames``, ``episodes/<task_id>/NNNN.jpg``. ``resume=True`` with an existing ``run_id``
runs only the tasks without a row, so a run killed at any moment (even SIGKILL) loses nothing
and runs nothing twice.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from pathlib import Path
from typing import Any

from city360.errors import ConfigError, InputFileError
from city360.eval.executors import EXECUTORS, run_jobs
from city360.eval.metadata import code_version, now_utc, package_versions, scrub_secrets
from city360.eval.protocols import Protocol, get_protocol
from city360.eval.results import (
    EpisodeResult,
    ResultsWriter,
    finished_task_ids,
    read_results,
    write_run_metadata,
)
from city360.eval.specs import AgentSpec, EvalConfig, Job, RunOutcome, WorkerSpec, task_seed
from city360.eval.summary import summarize

__all__ = [
    "PREFETCHING_AGENTS",
    "AgentSpec",
    "EvalConfig",
    "RunOutcome",
    "default_env_options",
    "run_eval",
    "task_seed",
]

# AgentSpec, EvalConfig, RunOutcome and task_seed live in city360.eval.specs (a leaf module
# every part of eval may import); they are re-exported here, where users look for them.

_RUN_ID_RE = re.compile(r"^[A-Za-z0-9_.\-]+$")

PREFETCHING_AGENTS = ("lmm",)
"""Agents whose environments prefetch by default. The env's prefetch decodes, in the
background, every frame the next move could show, so that it is ready when the agent has
decided; that pays while an agent waits on a model. The baselines decide at once, so for them
it only decodes frames the next step will not show: an oracle episode on the benchmark city
took 245 ms of CPU with it and 75 ms without, and its worker processes competed for the
cores."""


def default_env_options(agent: AgentSpec, *, use_map: bool = True) -> dict[str, Any]:
    """The environment options of a run before ``EvalConfig.env_options``: the map switch and
    ``prefetch`` only for :data:`PREFETCHING_AGENTS`."""
    kind = agent.kind.strip().lower()
    return {"map": use_map, "prefetch": kind in PREFETCHING_AGENTS}


def _with_protocol_limits(agent: AgentSpec, protocol: Protocol) -> AgentSpec:
    """The LMM agent's reply budget is the protocol's unless the user set one
    (``--agent-option max_output_tokens=N``)."""
    if agent.kind.strip().lower() != "lmm" or "max_output_tokens" in agent.options:
        return agent
    options = {**agent.options, "max_output_tokens": protocol.max_output_tokens}
    return dataclasses.replace(agent, options=options)


def _new_run_id(agent: AgentSpec) -> str:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    label = agent.kind if not agent.model else f"{agent.kind}-{agent.model}"
    return re.sub(r"[^A-Za-z0-9_.\-]", "-", f"{stamp}-{label}")


def _validate(config: EvalConfig) -> None:
    if config.executor not in EXECUTORS:
        msg = f"unknown executor {config.executor!r}; expected one of {', '.join(EXECUTORS)}"
        raise ConfigError(msg)
    if config.workers < 1:
        msg = f"`workers` must be >= 1, got {config.workers}"
        raise ConfigError(msg)
    if config.run_id is not None and not _RUN_ID_RE.match(config.run_id):
        msg = f"run id {config.run_id!r} may only hold letters, digits, '.', '_' and '-'"
        raise ConfigError(msg)
    if config.resume and not config.run_id:
        msg = "resume needs the run id of the run to continue (--resume RUN_ID)"
        raise ConfigError(msg)
    if not (Path(config.city_dir) / "city.json").is_file():
        msg = f"{config.city_dir} is not a city directory (no city.json)"
        raise InputFileError(msg)


def run_eval(config: EvalConfig) -> RunOutcome:
    """Run (or resume) the suite; return where the run is and how it went.

    Raises before any episode runs when the city, suite, agent or provider cannot work (the
    agent's preflight checks provider, model, key and endpoint). Ctrl-C stops after marking
    the run ``interrupted``; every finished episode is already on disk.
    """
    from city360.agents.registry import agent_metadata
    from city360.eval.agent_factory import agent_prompt_hash, preflight_agent
    from city360.simulator.config import EnvConfig
    from city360.tasks.prompts import prompt_hash
    from city360.tasks.suite import load_suite

    _validate(config)
    protocol = get_protocol(config.protocol)
    agent = _with_protocol_limits(config.agent, protocol)
    config = dataclasses.replace(config, agent=agent)
    city_dir = Path(config.city_dir).resolve()
    suite_dir = Path(config.suite_dir).resolve()
    suite = load_suite(suite_dir)
    tasks = suite.select(config.select) if config.select else list(suite.tasks)
    suite_hash = suite.content_hash()

    run_id = config.run_id or _new_run_id(config.agent)
    run_dir = (Path(config.output_root) / run_id).resolve()
    previous: list[EpisodeResult] = []
    metadata_path = run_dir / "run_metadata.json"
    if config.resume:
        if not metadata_path.is_file():
            msg = f"cannot resume {run_id!r}: {metadata_path} not found"
            raise InputFileError(msg)
        import json

        old = json.loads(metadata_path.read_text(encoding="utf-8"))
        if old.get("suite_hash") != suite_hash:
            msg = (
                f"cannot resume {run_id!r}: the suite changed since the run started "
                f"(hash {str(old.get('suite_hash'))[:12]} → {suite_hash[:12]}); start a new run"
            )
            raise ConfigError(msg)
        if (run_dir / "results.csv").is_file():
            previous = read_results(run_dir / "results.csv")
    elif run_dir.exists() and any(run_dir.iterdir()):
        msg = f"run folder {run_dir} already exists; use --resume {run_id} or another --run-id"
        raise ConfigError(msg)

    preflight_agent(config.agent, city_dir=city_dir)
    if config.judge is not None:
        from city360.eval.judge import make_judge

        make_judge(config.judge, preflight=True).close()

    done = finished_task_ids(previous)
    jobs: list[Job] = [(t.id, task_seed(config.seed, t.id)) for t in tasks if t.id not in done]
    env_options = {
        **default_env_options(config.agent, use_map=config.use_map),
        **dict(config.env_options),
    }
    spec = WorkerSpec(
        city_dir=str(city_dir),
        suite_dir=str(suite_dir),
        run_dir=str(run_dir),
        agent=dataclasses.asdict(config.agent),
        env_options=env_options,
        stop=dataclasses.asdict(config.stop),
        save_frames=config.save_frames,
        protocol=protocol.name,
        judge=None if config.judge is None else dataclasses.asdict(config.judge),
    )
    metadata: dict[str, Any] = {
        "run_id": run_id,
        "status": "running",
        "city_dir": str(city_dir),
        "suite_dir": str(suite_dir),
        "suite_name": suite.name,
        "suite_hash": suite_hash,
        "prompt_hash": prompt_hash(),
        "agent_prompt_hash": agent_prompt_hash(config.agent, EnvConfig.from_kwargs(**env_options)),
        "agent": scrub_secrets(agent_metadata(config.agent)),
        "protocol": protocol.as_metadata(),
        "judge": None
        if config.judge is None
        else scrub_secrets({**dataclasses.asdict(config.judge), "label": config.judge.label}),
        "config": scrub_secrets(
            {
                "select": config.select,
                "use_map": config.use_map,
                "workers": config.workers,
                "executor": config.executor,
                "ray_address": config.ray_address,
                "save_frames": config.save_frames,
                "stop": dataclasses.asdict(config.stop),
                "env_options": env_options,
            }
        ),
        "seed": config.seed,
        "task_seeds": {job[0]: job[1] for job in jobs},
        "tasks_total": len(tasks),
        "code": code_version(),
        "versions": package_versions(),
        "started": now_utc(),
        "ended": None,
        "resumed_at": [],
    }
    if config.resume and metadata_path.is_file():
        import json

        old = json.loads(metadata_path.read_text(encoding="utf-8"))
        metadata["started"] = old.get("started", metadata["started"])
        metadata["task_seeds"] = {**old.get("task_seeds", {}), **metadata["task_seeds"]}
        metadata["resumed_at"] = [*old.get("resumed_at", []), now_utc()]
    run_dir.mkdir(parents=True, exist_ok=True)
    write_run_metadata(metadata_path, metadata)

    results = list(previous)
    status = "failed"
    from city360.progress import make_progress

    try:
        with ResultsWriter(run_dir / "results.csv") as writer, make_progress() as progress:
            bar = progress.add_task(f"episodes ({config.agent.kind})", total=len(jobs))
            for result in run_jobs(
                spec,
                jobs,
                workers=config.workers,
                executor=config.executor,
                ray_address=config.ray_address,
            ):
                writer.append(result)
                results.append(result)
                progress.advance(bar)
        status = "complete"
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    finally:
        metadata["status"] = status
        metadata["ended"] = now_utc()
        metadata["episodes_finished"] = len(results)
        write_run_metadata(metadata_path, metadata)
    order = {t.id: k for k, t in enumerate(tasks)}
    results.sort(key=lambda r: order.get(r.task_id, len(order)))
    return RunOutcome(
        run_dir=run_dir,
        status=status,
        results=results,
        summary=summarize(results),
        ran=len(jobs),
        skipped=len(done),
    )
