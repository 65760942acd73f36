"""The plain values of a run, shared by the orchestrators (runner, executors, CLI), the
workers and the viewer: which agent, which run, what a worker builds, how a run came out.

A leaf module: it imports values only (stop thresholds, result rows, summaries), never an
orchestrator, so every part of ``city360.eval`` (and ``city360.viewer``) may import it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from city360.eval.results import EpisodeResult
from city360.eval.stopping import StopConfig
from city360.eval.summary import RunSummary

__all__ = [
    "AgentSpec",
    "EvalConfig",
    "Job",
    "JudgeSpec",
    "RunOutcome",
    "WorkerSpec",
    "task_seed",
]

Job = tuple[str, int]
"""``(task_id, seed)``."""


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """Which agent to build in each worker. ``kind`` is one of the registered agent names
    (``lmm``, ``random``, ``oracle``, ``map``, ``signs``); provider, model and base_url only
    matter for ``lmm``. Keys are read from the environment by the provider, never stored here."""

    kind: str
    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class JudgeSpec:
    """Which model judges free-text answers: a provider of :mod:`city360.agents.providers`
    (``openai``, ``anthropic``, ``gemini``, ``vllm``, ...), its model and endpoint. Keys come
    from the environment, as for agents."""

    provider: str
    model: str
    base_url: str | None = None

    @property
    def label(self) -> str:
        """``provider:model``, as results' ``judge`` column records it."""
        return f"{self.provider}:{self.model}"


@dataclass(frozen=True, slots=True)
class EvalConfig:
    """Everything a run depends on. Paths are resolved to absolute ones at the start."""

    city_dir: Path
    suite_dir: Path
    agent: AgentSpec
    select: str | None = None
    """Comma-separated task ids or family names; None runs the whole suite."""
    use_map: bool = True
    """False is the "without location map" ablation (``--no-map``)."""
    workers: int = 1
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None
    run_id: str | None = None
    output_root: Path = Path("outputs")
    resume: bool = False
    resume_anyway: bool = False
    """Resume even when the agent, model, provider, suite or protocol differ from the run's
    (``--resume-anyway``); the run's recorded identity is kept either way."""
    seed: int = 0
    save_frames: bool = False
    stop: StopConfig = field(default_factory=StopConfig)
    env_options: Mapping[str, Any] = field(default_factory=dict)
    """:class:`~city360.simulator.config.EnvConfig` fields; they override
    :func:`~city360.eval.runner.default_env_options`."""
    protocol: str = "default"
    """The evaluation protocol (:mod:`city360.eval.protocols`): ``default`` or ``reference``."""
    condition: str = "day"
    """The visual condition whose frames the agent sees (``city360 condition list CITY``); the
    run refuses a condition the city lacks, naming those it has."""
    judge: JudgeSpec | None = None
    """The LLM judge of RelationalSpatial answers; None scores them offline (labelled)."""


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """What a worker needs to build its environment and agent. Plain, picklable values only:
    it crosses process and machine boundaries (paths must be visible to every node)."""

    city_dir: str
    suite_dir: str
    run_dir: str
    agent: dict[str, Any]
    env_options: dict[str, Any]
    stop: dict[str, Any]
    save_frames: bool = False
    protocol: str = "default"
    judge: dict[str, Any] | None = None
    suite_hash: str | None = None
    """The suite's content hash as the run recorded it; a worker that reads another suite
    refuses to run it (None: not checked)."""
    graph_sha256: str | None = None
    """SHA-256 of the city's graph.json as the run recorded it; checked like ``suite_hash``."""


@dataclass(frozen=True, slots=True)
class RunOutcome:
    run_dir: Path
    status: str
    results: list[EpisodeResult]
    summary: RunSummary
    ran: int
    skipped: int
    warnings: list[str] = field(default_factory=list)
    """What the run noticed and worked round (malformed results rows, resumed differences)."""


def task_seed(seed: int, task_id: str) -> int:
    """A per-episode seed that depends only on the run seed and the task id (stable across
    executors, worker counts and resumes)."""
    digest = hashlib.sha256(f"{seed}:{task_id}".encode()).digest()
    return int.from_bytes(digest[:4], "little")
