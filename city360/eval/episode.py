"""Episodes run by an agent: an :class:`EpisodeWorker` holds one environment and one agent and
feeds the agent's decisions to an :class:`~city360.eval.recorder.EpisodeRecorder`, which owns
the stop rules, step counting, scoring, step log and results row (the viewer's Play mode drives
the same recorder for a person).

The agent sees only the observation (plus the simulator's privileged ``info`` for agents that
declare ``privileged = True``: the oracle). The evaluator reads the exact pose from ``info``,
which is why environments here are made with ``privileged_info=True``.
"""

from __future__ import annotations

import inspect
import os
import time
from pathlib import Path
from typing import Any

from city360.errors import (
    City360Error,
    CityFormatError,
    InputFileError,
    InputsChangedError,
    OutputError,
    ProviderAuthError,
    ProviderUnavailableError,
    RenderError,
)
from city360.eval.agent_factory import build_agent
from city360.eval.metrics import expected_answer, score_answer
from city360.eval.protocols import Protocol, get_protocol
from city360.eval.recorder import EpisodeRecorder
from city360.eval.results import EpisodeResult
from city360.eval.specs import AgentSpec, JudgeSpec, WorkerSpec
from city360.eval.stopping import StopConfig, StopReason

__all__ = ["INFRASTRUCTURE_ERRORS", "EpisodeWorker", "score_answer"]

INFRASTRUCTURE_ERRORS: tuple[type[City360Error], ...] = (
    ProviderUnavailableError,
    CityFormatError,
    InputFileError,
    OutputError,
    RenderError,
)
"""Errors that end an episode as ``infrastructure_error`` (not the agent's; a resume runs the
episode again): a provider down after every retry, a broken city (a truncated frames.mp4), a
disk that cannot be written, a renderer that failed."""
# ``score_answer`` lives in city360.eval.metrics; it is re-exported here for old imports.


class ProtocolTask:
    """A privileged agent's view of a task under a protocol: the task itself, except that
    ``expected_answer()`` is written as the protocol reads answers (a grid cell numbered from 0
    under the reference), so the oracle answers what the metric expects."""

    def __init__(self, task: Any, protocol: Protocol) -> None:
        self._task = task
        self._protocol = protocol

    def __getattr__(self, name: str) -> Any:
        return getattr(self._task, name)

    def expected_answer(self) -> str:
        return expected_answer(self._task, self._protocol.scoring)


def _changed_inputs(spec: WorkerSpec, suite_hash: str) -> str | None:
    """Why this worker's suite or graph is not the one its run recorded, or None.

    The parent reads the suite (and hashes graph.json) when the run starts; each worker reads
    them again when it starts, maybe seconds or (Ray, a resume) hours later. A suite saved by
    the viewer or regenerated meanwhile, or a city rebuilt meanwhile, would otherwise run under
    the recorded hash: a run that says one suite and city and ran another.
    """
    from city360.city import CityDir, file_sha256

    if spec.suite_hash is not None and suite_hash != spec.suite_hash:
        return (
            f"{Path(spec.suite_dir) / 'suite.json'} changed while the run was starting "
            f"(suite hash {spec.suite_hash[:12]} -> {suite_hash[:12]}); stop editing the suite "
            "during a run and start a new run"
        )
    graph_path = CityDir(spec.city_dir).graph_path
    if spec.graph_sha256 is not None and file_sha256(graph_path) != spec.graph_sha256:
        return (
            f"{graph_path} changed while the run was starting (the city was rebuilt: sha256 "
            f"{spec.graph_sha256[:12]} -> {file_sha256(graph_path)[:12]}); let the build "
            "finish, then start a new run"
        )
    return None


class EpisodeWorker:
    """Holds one environment and one agent; runs episodes one after another.

    Built once per worker (process, Ray actor, or the main process for ``--workers 1``).
    """

    def __init__(self, spec: WorkerSpec) -> None:
        import city360
        from city360.tasks.suite import load_suite

        self.spec = spec
        self.run_dir = Path(spec.run_dir)
        self.suite_dir = Path(spec.suite_dir)
        self.suite = load_suite(self.suite_dir)
        self.env = city360.make(spec.city_dir, privileged_info=True, **spec.env_options)
        self.walk = self.env.world.graph  # one parse of graph.json per worker
        self.agent_spec = AgentSpec(**spec.agent)
        self.agent = build_agent(
            self.agent_spec, city_dir=Path(spec.city_dir), env_config=self.env.config
        )
        self.stop_base = StopConfig(**spec.stop)
        self.protocol = get_protocol(spec.protocol)
        self._changed = _changed_inputs(spec, self.suite.content_hash())
        self._images: dict[tuple[Any, ...], dict[str, str]] = {}
        self.judge = None
        if spec.judge is not None:
            from city360.eval.judge import make_judge

            self.judge = make_judge(JudgeSpec(**spec.judge), prompt=self.protocol.judge_prompt)
        self._reset_takes_seed = "seed" in inspect.signature(self.agent.reset).parameters
        # A user's own agent (--agent mypkg.mod:MyAgent) may leave out the protocol's optional
        # ``privileged`` flag; it then sees only what an agent may see.
        self._privileged = bool(getattr(self.agent, "privileged", False))

    def close(self) -> None:
        closer = getattr(self.agent, "close", None)
        if callable(closer):
            closer()
        if self.judge is not None:
            self.judge.close()
        self.env.close()

    def __enter__(self) -> EpisodeWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------------
    def recorder(self, task: Any, seed: int) -> EpisodeRecorder:
        """The recorder of one episode of ``task`` in this worker's environment."""
        episodes = self.run_dir / "episodes"
        return EpisodeRecorder(
            self.env,
            task,
            graph=self.walk,
            stop=self.stop_base,
            log_path=episodes / f"{task.id}.jsonl",
            agent=self.agent_spec.kind,
            model=self.agent_spec.model or "",
            provider=self.agent_spec.provider or "",
            seed=seed,
            frames_dir=episodes / task.id if self.spec.save_frames else None,
            protocol=self.protocol,
            judge=self.judge,
        )

    def agent_view(self, task: Any) -> Any:
        """What an unprivileged agent is told, under the run's protocol: its prompt rules and
        the pictures it draws differently (a grid map numbered from 0 under the reference),
        rendered once per worker into ``<run>/assets/``."""
        from city360.tasks.families import get_family

        rules = self.protocol.prompts
        make_images = get_family(str(task.family)).protocol_images
        images: dict[str, str] = {}
        if make_images is not None:
            images = self._protocol_images(task, make_images)
        return task.agent_view(suite_root=str(self.suite_dir), rules=rules, images=images)

    def _protocol_images(self, task: Any, make_images: Any) -> dict[str, str]:
        import cv2

        from city360.maps.citymap import CityMap

        rules = self.protocol.prompts
        key = (str(task.family), tuple(sorted(task.told.model_dump().items())))
        if key not in self._images:
            drawn = make_images(task, rules, CityMap.open(self.spec.city_dir))
            paths: dict[str, str] = {}
            folder = self.run_dir / "assets"
            folder.mkdir(parents=True, exist_ok=True)
            for name, image in drawn.items():
                stem = Path(str(getattr(task.told, name))).stem
                path = folder / f"{stem}-{self.protocol.name}.png"
                staged = folder / f".{path.stem}.{os.getpid()}.png"  # workers may race
                cv2.imwrite(str(staged), image[:, :, ::-1])
                os.replace(staged, path)
                paths[name] = str(path)
            self._images[key] = paths
        return self._images[key]

    def run(self, task_id: str, seed: int) -> EpisodeResult:
        if self._changed is not None:
            raise InputsChangedError(self._changed)
        task = self.suite.task(task_id)
        recorder = self.recorder(task, seed)
        try:
            self._loop(task, seed, recorder)
        except ProviderAuthError as exc:
            # Not the model's doing, and every later episode would fail the same way: the
            # episode gets no row (a resume runs it again) and the run stops.
            recorder.end(StopReason.INFRASTRUCTURE_ERROR, str(exc))
            raise
        except INFRASTRUCTURE_ERRORS as exc:
            recorder.end(StopReason.INFRASTRUCTURE_ERROR, str(exc))
        except City360Error as exc:
            recorder.end(StopReason.AGENT_ERROR, str(exc))
        finally:
            recorder.close()
        result = recorder.result
        usage = getattr(self.agent, "usage", None)
        if usage is not None:  # an agent that counts its own usage knows it best
            result.input_tokens = int(usage.input_tokens)
            result.output_tokens = int(usage.output_tokens)
            result.requests = int(usage.requests)
            result.retries = int(usage.retries)
            result.parse_errors = int(usage.parse_errors)
            result.invalid_actions = int(usage.invalid_actions)
            result.api_errors = int(usage.failed_requests)
            result.llm_latency_s = float(getattr(usage, "latency_s", 0.0))
            result.last_finish_reason = str(getattr(usage, "last_finish_reason", ""))
            result.last_response_model = str(getattr(usage, "last_response_model", ""))
        result.run_id = self.run_dir.name
        config = getattr(self.agent, "config", None)
        if config is not None and hasattr(config, "max_output_tokens"):
            result.max_tokens = int(config.max_output_tokens)
            temperature = getattr(config, "temperature", None)
            result.temperature = None if temperature is None else float(temperature)
        return result

    def _loop(self, task: Any, seed: int, recorder: EpisodeRecorder) -> None:
        obs, info = recorder.start()
        told = ProtocolTask(task, self.protocol) if self._privileged else self.agent_view(task)
        if self._reset_takes_seed:
            # Seeded per episode, so results do not depend on which worker ran what before.
            self.agent.reset(told, seed=seed)  # type: ignore[call-arg]
        else:
            self.agent.reset(told)
        while not recorder.done:
            asked = time.perf_counter()
            decision = self.agent.act({**obs, "info": info} if self._privileged else obs)
            outcome = recorder.step(
                decision.action,
                decision.magnitude,
                decision.answer,
                valid=decision.valid,
                answer_type=str(getattr(decision, "answer_type", "string")),
                thought=decision.thought,
                memory=decision.memory,
                think_s=time.perf_counter() - asked,
            )
            obs, info = outcome.observation, outcome.info
