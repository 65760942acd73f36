"""Run a task suite with an agent: ``run_eval(EvalConfig(...))`` or ``city360 eval``.

A run lives in ``<output_root>/<run_id>/``: ``results.csv`` (a row per finished episode,
fsynced as it finishes), ``run_metadata.json`` (status ``running`` → ``complete`` /
``interrupted`` / ``failed``), ``episodes/<task_id>.jsonl`` step logs and, with
``save_frames``, ``episodes/<task_id>/NNNN.jpg``. ``resume=True`` with an existing ``run_id``
runs only the tasks without a row that stands, so a run killed at any moment (even SIGKILL)
loses nothing and keeps at most one row per task. One process writes a run folder at a time
(``runlock``); a resume refuses another agent, model, provider, suite or protocol unless told
``resume_anyway``, re-runs episodes that ended in an infrastructure error or an interruption,
and sets malformed results lines aside with their line numbers.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import datetime as dt
import re
import shutil
from pathlib import Path
from typing import Any

from city360._lifetime import signals_interrupt
from city360.city import BASE_CONDITION, CityDir
from city360.errors import (
    CityFormatError,
    ConfigError,
    InputFileError,
    OutputError,
    ProviderAuthError,
)
from city360.eval.executors import EXECUTORS, run_jobs
from city360.eval.metadata import code_version, now_utc, package_versions, scrub_secrets
from city360.eval.protocols import Protocol, get_protocol
from city360.eval.results import (
    RERUN_STATUSES,
    RESULT_COLUMNS,
    EpisodeResult,
    ResultsWriter,
    finished_task_ids,
    read_results_file,
    rewrite_results,
    write_run_metadata,
)
from city360.eval.runlock import LOCK_NAME, run_lock
from city360.eval.specs import AgentSpec, EvalConfig, Job, RunOutcome, WorkerSpec, task_seed
from city360.eval.summary import summarize
from city360.scrub import scrub_text

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
    """The LMM agent's reply budget and reply reader are the protocol's unless the user set
    them (``--agent-option max_output_tokens=N``, ``--agent-option reply_reader=NAME``)."""
    if agent.kind.strip().lower() != "lmm":
        return agent
    rules = {"max_output_tokens": protocol.max_output_tokens, "reply_reader": protocol.reply_reader}
    options = {**rules, **agent.options}
    if options == agent.options:
        return agent
    return dataclasses.replace(agent, options=options)


def _new_run_id(agent: AgentSpec) -> str:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    label = agent.kind if not agent.model else f"{agent.kind}-{agent.model}"
    return re.sub(r"[^A-Za-z0-9_.\-]", "-", f"{stamp}-{label}")


def _claim_new_run_dir(output_root: Path, run_id: str) -> tuple[str, Path]:
    """Create the folder of a run whose id was generated (``run_id``, else ``run_id-2``,
    ``-3``, ...): two runs started in the same second, in one process or two, never share
    a folder. Raises :class:`OutputError` when the folder cannot be made."""
    for attempt in range(1, 1000):
        candidate = run_id if attempt == 1 else f"{run_id}-{attempt}"
        run_dir = (output_root / candidate).resolve()
        try:
            run_dir.mkdir(parents=True, exist_ok=False)
        except FileExistsError:
            continue
        except OSError as exc:
            from city360._atomic import write_failure

            raise OutputError(write_failure(run_dir, exc)) from None
        return candidate, run_dir
    msg = f"{output_root}: 999 run folders named {run_id}-*; pass --run-id or another --output-root"
    raise OutputError(msg)


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
    if isinstance(config.seed, bool) or not isinstance(config.seed, int) or config.seed < 0:
        msg = f"`seed` must be a whole number >= 0, got {config.seed!r}"
        raise ConfigError(msg)
    if config.resume and not config.run_id:
        msg = "resume needs the run id of the run to continue (--resume RUN_ID)"
        raise ConfigError(msg)
    if not (Path(config.city_dir) / "city.json").is_file():
        msg = f"{config.city_dir} is not a city directory (no city.json)"
        raise InputFileError(msg)
    CityDir(config.city_dir).check_condition(config.condition)  # names the ones it has


IDENTITY_KEYS = (
    "run_id",
    "city_dir",
    "suite_dir",
    "suite_name",
    "suite_hash",
    "graph_sha256",
    "prompt_hash",
    "agent_prompt_hash",
    "agent",
    "protocol",
    "condition",
    "seed",
    "code",
    "versions",
    "started",
)
"""Fields of run_metadata.json that say what a run *is*; a resume never rewrites them (what
the resume ran with goes into ``resumes``)."""

_AGENT_IDENTITY = ("kind", "path", "provider", "model")


def _identity_differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What differs between a run's recorded identity and a resume's, one phrase each."""
    found: list[str] = []
    old_agent, new_agent = old.get("agent") or {}, new.get("agent") or {}
    for key in _AGENT_IDENTITY:
        if old_agent.get(key) != new_agent.get(key):
            found.append(f"agent {key} {old_agent.get(key)!r} → {new_agent.get(key)!r}")
    if old.get("suite_hash") != new.get("suite_hash"):
        found.append(
            f"suite hash {str(old.get('suite_hash'))[:12]} → {str(new.get('suite_hash'))[:12]} "
            "(the suite changed since the run started)"
        )
    old_graph = old.get("graph_sha256")  # runs before round thirteen did not record it
    if old_graph is not None and old_graph != new.get("graph_sha256"):
        found.append(
            f"city graph.json sha256 {str(old_graph)[:12]} → {str(new.get('graph_sha256'))[:12]} "
            "(the city was rebuilt since the run started)"
        )
    old_protocol, new_protocol = _name_of(old.get("protocol")), _name_of(new.get("protocol"))
    if old_protocol != new_protocol:
        found.append(f"protocol {old_protocol!r} → {new_protocol!r}")
    old_condition = old.get("condition", BASE_CONDITION)  # runs before conditions: day
    if old_condition != new.get("condition", BASE_CONDITION):
        found.append(f"condition {old_condition!r} → {new.get('condition')!r}")
    old_judge, new_judge = _name_of(old.get("judge"), "label"), _name_of(new.get("judge"), "label")
    if old_judge != new_judge:
        found.append(f"judge {old_judge!r} → {new_judge!r}")
    return found


def _name_of(value: Any, key: str = "name") -> Any:
    """A recorded protocol or judge by its name (runs before protocols recorded only it, or
    nothing: a run without a record ran the default protocol)."""
    if isinstance(value, dict):
        return value.get(key)
    if value is None and key == "name":
        return "default"
    return value


def _graph_sha256(city_dir: Path) -> str:
    """SHA-256 of the city's graph.json, after reading it once: a missing, truncated or
    wrongly shaped graph.json stops the run here, before anything is written (it failed in
    every worker, leaving a run folder marked ``failed`` that the same --run-id then refused)."""
    from city360.city import CityDir, file_sha256
    from city360.streets import read_graph_file

    city = CityDir(city_dir)
    read_graph_file(city.graph_path, city_root=city.root)  # names the file and the fix
    return file_sha256(city.graph_path)


def _read_metadata(path: Path) -> dict[str, Any]:
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        msg = f"{path} cannot be read ({exc}); the run cannot be resumed, start a new one"
        raise CityFormatError(msg) from None
    if not isinstance(data, dict):
        msg = f"{path} is not a JSON object; the run cannot be resumed, start a new one"
        raise CityFormatError(msg)
    return data


def _previous_results(run_dir: Path, warnings: list[str]) -> list[EpisodeResult]:
    """The rows of an interrupted run that stand, after repairing results.csv.

    Malformed lines are reported (with their line numbers) and moved to
    ``results.rejected.csv``; rows that ended in an infrastructure error or an interruption,
    and later duplicates of a task's row, are dropped, so the task runs again and keeps at
    most one row.
    """
    path = run_dir / "results.csv"
    if not path.is_file():
        return []
    read = read_results_file(path)
    warnings.extend(read.warnings())
    kept: list[EpisodeResult] = []
    seen: set[str] = set()
    for result in read.results:
        if result.task_id in seen:
            warnings.append(f"{path}: a second row for task {result.task_id!r}; kept the first")
            continue
        if result.status in RERUN_STATUSES:
            continue
        seen.add(result.task_id)
        kept.append(result)
    if read.rejected:
        with open(run_dir / "results.rejected.csv", "a", encoding="utf-8") as sidecar:
            for row in read.rejected:
                sidecar.write(f"# line {row.line}: {row.reason}\n{row.raw}\n")
    with open(path, encoding="utf-8", newline="") as handle:
        header = next(csv.reader(handle), [])
    # a file written before a column was added (e.g. `condition`) is rewritten in today's
    # columns, so rows appended by this resume line up with the header
    if len(kept) != len(read.results) or read.rejected or tuple(header) != RESULT_COLUMNS:
        rewrite_results(path, kept)
    return kept


def _check_suite_city(suite: Any, suite_dir: Path, city_dir: Path) -> None:
    """Refuse a suite made for another city: each of its episodes ended as an agent error
    ("segment ... is not in the pose graph"), and the run reported 0 for all of them."""
    from city360.city import CityDir

    name = CityDir(city_dir).read_manifest().name
    if suite.city != name:
        msg = (
            f"suite {suite.name!r} ({suite_dir}) is for city {suite.city!r}, but {city_dir} is "
            f"{name!r}; pass the suite of this city (`city360 tasks generate {city_dir} --out "
            "SUITE`) or the city the suite was made for"
        )
        raise ConfigError(msg)


def run_eval(config: EvalConfig) -> RunOutcome:
    """Run (or resume) the suite; return where the run is and how it went.

    Raises before any episode runs when the city, suite, agent or provider cannot work (the
    agent's preflight checks provider, model, key and endpoint), when another process writes
    the run folder (:class:`~city360.errors.RunLockedError`), or when a resume would mix in
    another agent, model, suite or protocol. Ctrl-C and SIGTERM stop after marking the run
    ``interrupted``; every finished episode is already on disk. A provider refusing the key
    mid-run (:class:`~city360.errors.ProviderAuthError`) stops the run as ``failed``.
    """
    _validate(config)
    if config.run_id is None:
        run_id, run_dir = _claim_new_run_dir(Path(config.output_root), _new_run_id(config.agent))
        created = True
    else:
        run_id, run_dir = config.run_id, (Path(config.output_root) / config.run_id).resolve()
        created = not run_dir.exists()
    metadata_path = run_dir / "run_metadata.json"
    if config.resume and not metadata_path.is_file():
        msg = f"cannot resume {run_id!r}: {metadata_path} not found"
        raise InputFileError(msg)
    try:
        with run_lock(run_dir):
            return _run_locked(config, run_id, run_dir)
    except BaseException:
        if created and run_dir.is_dir() and {p.name for p in run_dir.iterdir()} <= {LOCK_NAME}:
            shutil.rmtree(run_dir, ignore_errors=True)  # nothing ran: leave nothing behind
        raise


def _run_locked(config: EvalConfig, run_id: str, run_dir: Path) -> RunOutcome:
    from city360.agents.registry import agent_metadata
    from city360.eval.agent_factory import agent_prompt_hash, preflight_agent
    from city360.simulator.config import EnvConfig
    from city360.tasks.prompts import prompt_hash
    from city360.tasks.suite import load_suite

    protocol = get_protocol(config.protocol)
    agent = _with_protocol_limits(config.agent, protocol)
    config = dataclasses.replace(config, agent=agent)
    city_dir = Path(config.city_dir).resolve()
    suite_dir = Path(config.suite_dir).resolve()
    suite = load_suite(suite_dir)
    _check_suite_city(suite, suite_dir, city_dir)
    tasks = suite.select(config.select) if config.select else list(suite.tasks)
    suite_hash = suite.content_hash()
    metadata_path = run_dir / "run_metadata.json"
    warnings: list[str] = []
    env_options = {
        **default_env_options(config.agent, use_map=config.use_map),
        **dict(config.env_options),
        "condition": config.condition,
    }
    graph_sha256 = _graph_sha256(city_dir)
    identity: dict[str, Any] = {
        "suite_hash": suite_hash,
        "graph_sha256": graph_sha256,
        "condition": config.condition,
        "agent": scrub_secrets(agent_metadata(config.agent)),
        "protocol": protocol.as_metadata(),
        "judge": None
        if config.judge is None
        else scrub_secrets({**dataclasses.asdict(config.judge), "label": config.judge.label}),
    }
    old: dict[str, Any] | None = None
    previous: list[EpisodeResult] = []
    differences: list[str] = []
    if config.resume:
        old = _read_metadata(metadata_path)
        differences = _identity_differences(old, identity)
        if differences and not config.resume_anyway:
            msg = (
                f"cannot resume {run_id!r}: it was started with another setup "
                f"({'; '.join(differences)}). Start a new run, or pass --resume-anyway to "
                "continue it regardless (the run keeps its recorded identity)"
            )
            raise ConfigError(msg)
        warnings.extend(f"resumed anyway: {d}" for d in differences)
        previous = _previous_results(run_dir, warnings)
    elif any(p.name != LOCK_NAME for p in run_dir.iterdir()):
        msg = f"run folder {run_dir} already exists; use --resume {run_id} or another --run-id"
        raise ConfigError(msg)
    made_for = suite.created.get("graph_sha256")
    if made_for and made_for != graph_sha256:
        warnings.append(
            f"{suite_dir} was generated for another build of {city_dir / 'graph.json'} "
            f"(sha256 {str(made_for)[:12]} -> {graph_sha256[:12]}): tasks on streets this build "
            f"cut differently end as agent errors; check it with `city360 tasks check "
            f"{suite_dir} --city {city_dir}` or generate it again"
        )

    preflight_agent(config.agent, city_dir=city_dir)
    if config.judge is not None:
        from city360.eval.judge import make_judge

        make_judge(config.judge, preflight=True).close()

    done = finished_task_ids(previous)
    jobs: list[Job] = [(t.id, task_seed(config.seed, t.id)) for t in tasks if t.id not in done]
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
        suite_hash=suite_hash,
        graph_sha256=graph_sha256,
    )
    metadata: dict[str, Any] = {
        "run_id": run_id,
        "status": "running",
        "city_dir": str(city_dir),
        "suite_dir": str(suite_dir),
        "suite_name": suite.name,
        **identity,
        "prompt_hash": prompt_hash(),
        "agent_prompt_hash": agent_prompt_hash(config.agent, EnvConfig.from_kwargs(**env_options)),
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
        "message": None,
        "resumed_at": [],
        "resumes": [],
    }
    if old is not None:
        resumed = {
            "at": now_utc(),
            "agent": metadata["agent"],
            "code": metadata["code"],
            "differences": differences,
        }
        metadata.update({k: old[k] for k in IDENTITY_KEYS if k in old})
        metadata["task_seeds"] = {**old.get("task_seeds", {}), **metadata["task_seeds"]}
        metadata["resumed_at"] = [*old.get("resumed_at", []), resumed["at"]]
        metadata["resumes"] = [*old.get("resumes", []), resumed]
    write_run_metadata(metadata_path, metadata)

    results = list(previous)
    status = "failed"
    from city360.progress import make_progress

    try:
        with (
            signals_interrupt(),
            ResultsWriter(run_dir / "results.csv") as writer,
            make_progress() as progress,
        ):
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
    except KeyboardInterrupt as exc:
        status = "interrupted"
        why = str(exc) or "SIGINT"
        metadata["message"] = (
            f"interrupted by {why}; {len(results)} finished episode(s) are saved; continue "
            f"with --resume {run_id}"
        )
        raise
    except ProviderAuthError as exc:
        metadata["message"] = scrub_text(
            f"stopped: {exc}. Finished episodes are saved; the episode in progress will run "
            f"again with --resume {run_id} once the key is fixed"
        )
        raise ProviderAuthError(metadata["message"]) from None
    except BaseException as exc:
        metadata["message"] = scrub_text(f"{type(exc).__name__}: {exc}")
        raise
    finally:
        metadata["status"] = status
        metadata["ended"] = now_utc()
        metadata["episodes_finished"] = len(results)
        with contextlib.suppress(OutputError):  # the disk may be what failed
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
        warnings=warnings,
    )
