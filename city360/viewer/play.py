"""Human play: a task run by a person with exactly an agent's observation and action set.

The player sees what :class:`~city360.eval.episode.EpisodeWorker` gives an agent — the view,
the location map when enabled, the offered branches, the feedback and the step count, never the
pose or the ground truth — and ends with ANSWER. The episode is recorded by the recorder the
eval workers use (:class:`city360.eval.recorder.EpisodeRecorder`): the same step counting,
stop rules (step limit, stagnation, moving away from a map navigation goal along the streets),
scoring and results row; only the step timeout is off. It is written in the eval run format:
a row in ``results.csv`` (agent ``human``), ``episodes/<task_id>.jsonl`` step logs and
``run_metadata.json``, so ``city360 report`` reads a human run like any other.
"""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from city360.errors import ConfigError
from city360.eval.recorder import EpisodeRecorder
from city360.eval.results import EpisodeResult, ResultsWriter, read_results, write_run_metadata
from city360.eval.stopping import StopConfig, StopReason

if TYPE_CHECKING:
    from city360.simulator.env import CityEnv
    from city360.streets import StreetGraph
    from city360.tasks.schema import TaskBase
    from city360.tasks.suite import Suite

__all__ = ["HumanEpisode", "HumanRun"]

AGENT_NAME = "human"


class HumanRun:
    """One run folder of human episodes: ``<output_root>/<run_id>/``.

    A task is played at most once per run (its row is the human baseline for it); a folder that
    already holds results is continued, like ``city360 eval --resume``.
    """

    def __init__(
        self,
        run_dir: Path,
        *,
        city_dir: Path,
        suite_dir: Path,
        use_map: bool,
        player: str,
        stop: StopConfig | None = None,
    ) -> None:
        self.run_dir = run_dir
        self.city_dir = city_dir
        self.suite_dir = suite_dir
        self.use_map = use_map
        self.player = player
        self.stop = stop or StopConfig()
        self._lock = threading.Lock()
        self._run_lock: contextlib.ExitStack | None = None
        """The run folder's write lock (:func:`city360.eval.runlock.run_lock`), held from the
        first episode until :meth:`close`, so an eval or another viewer cannot append to the
        same results.csv meanwhile."""
        self._writer: ResultsWriter | None = None
        self._metadata: dict[str, Any] | None = None
        results = run_dir / "results.csv"
        self.played: dict[str, EpisodeResult] = (
            {r.task_id: r for r in read_results(results)} if results.is_file() else {}
        )
        self.active: set[str] = set()
        """Tasks being played right now (in some browser session)."""

    def __repr__(self) -> str:
        return f"HumanRun({str(self.run_dir)!r}, episodes={len(self.played)})"

    def _write_metadata(self, suite: Suite, status: str) -> None:
        from city360.eval.metadata import code_version, now_utc, package_versions
        from city360.tasks.prompts import prompt_hash

        if self._metadata is None:
            path = self.run_dir / "run_metadata.json"
            started = now_utc()
            if path.is_file():
                import json

                started = json.loads(path.read_text(encoding="utf-8")).get("started", started)
            self._metadata = {
                "run_id": self.run_dir.name,
                "city_dir": str(self.city_dir),
                "suite_dir": str(self.suite_dir),
                "agent": {"kind": AGENT_NAME, "model": self.player or None},
                "config": {
                    "use_map": self.use_map,
                    "stop": {
                        "step_limit": "per task",
                        "stagnation_steps": self.stop.stagnation_steps,
                        "away_steps": self.stop.away_steps,
                        "away_from_goal": "MapNavigation only",
                    },
                    "env_options": {"map": self.use_map},
                    "viewer": True,
                },
                "seed": 0,
                "code": code_version(),
                "versions": package_versions(),
                "started": started,
            }
        self._metadata.update(
            status=status,
            suite_name=suite.name,
            suite_hash=suite.content_hash(),
            prompt_hash=prompt_hash(),
            tasks_total=len(suite.tasks),
            episodes_finished=len(self.played),
            ended=now_utc(),
        )
        write_run_metadata(self.run_dir / "run_metadata.json", self._metadata)

    def begin(self, suite: Suite) -> None:
        """Create the run folder and its metadata before the first step is logged."""
        from city360.eval.runlock import run_lock

        with self._lock:
            if self._run_lock is None:
                held = contextlib.ExitStack()
                held.enter_context(run_lock(self.run_dir))  # RunLockedError: someone writes
                self._run_lock = held
            self._write_metadata(suite, "running")

    def record(self, result: EpisodeResult, suite: Suite) -> None:
        """Append the episode's row (fsynced) and refresh the metadata."""
        with self._lock:
            if self._writer is None:
                self._writer = ResultsWriter(self.run_dir / "results.csv")
            self._writer.append(result)
            self.played[result.task_id] = result
            self._write_metadata(suite, "running")

    def close(self) -> None:
        with self._lock:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
            if self._run_lock is not None:
                self._run_lock.close()
                self._run_lock = None


class HumanEpisode:
    """One task played by a person; drive it with :meth:`start` then :meth:`step`.

    A thin adapter over :class:`~city360.eval.recorder.EpisodeRecorder` (the recorder eval
    workers drive for agents), one :meth:`step` per HTTP request. ``observation`` is what the
    page may show: view, map (if the run uses it), branches, feedback, step count and step
    limit. ``result`` is filled in as the episode goes and complete when it ends; the row is
    then appended to the run's ``results.csv``.
    """

    def __init__(
        self,
        env: CityEnv,
        task: TaskBase,
        suite: Suite,
        *,
        run: HumanRun,
        graph: StreetGraph,
        seed: int,
    ) -> None:
        if task.id in run.played or task.id in run.active:
            when = "was already played" if task.id in run.played else "is being played"
            msg = (
                f"task {task.id!r} {when} in run {run.run_dir.name!r}; each task is played "
                "once per run (start the viewer with another --run-id to play it again)"
            )
            raise ConfigError(msg)
        self.task = task
        self.suite = suite
        self.run = run
        self.recorder = EpisodeRecorder(
            env,
            task,
            graph=graph,
            stop=run.stop,
            log_path=run.run_dir / "episodes" / f"{task.id}.jsonl",
            agent=AGENT_NAME,
            model=run.player,
            seed=seed,
            extra={"suite_hash": suite.content_hash()[:16], "viewer": True},
            timed=False,  # a person may take their time to read the map
        )
        self._obs: dict[str, Any] = {}
        self._shown_at = 0.0

    @property
    def result(self) -> EpisodeResult:
        return self.recorder.result

    @property
    def done(self) -> bool:
        return self.recorder.done

    @property
    def observation(self) -> dict[str, Any]:
        return self._obs

    def start(self) -> dict[str, Any]:
        """Reset the environment on the task and open the step log; the first observation."""
        self.run.begin(self.suite)
        self.run.active.add(self.task.id)
        self._obs, _info = self.recorder.start()
        self._shown_at = time.perf_counter()
        return self._obs

    def step(self, action: str, magnitude: str | None, answer: str | None) -> dict[str, Any]:
        """Apply the player's action; one that is not a valid command does the recorder's
        fallback instead (and counts, as it does for an agent)."""
        outcome = self.recorder.step(
            action, magnitude, answer, think_s=time.perf_counter() - self._shown_at
        )
        self._obs = outcome.observation
        self._shown_at = time.perf_counter()
        if outcome.done:
            self._finish()
        return self._obs

    def abandon(self) -> None:
        """The player left the task unfinished (another task, or the session closed)."""
        if not self.done and self.recorder.started:
            self.recorder.end(StopReason.INTERRUPTED)
            self._finish()

    def _finish(self) -> None:
        self.run.record(self.result, self.suite)
        self.run.active.discard(self.task.id)

    def close(self) -> None:
        self.abandon()
        self.recorder.close()

    def outcome(self) -> dict[str, Any]:
        """What the page shows when the episode ends: how it ended and the score, not the
        expected answer (a player may still have other tasks of this city to play)."""
        r = self.result
        return {
            "status": r.status,
            "score": r.evaluation_score,
            "correct": r.is_correct,
            "metric": r.evaluation_metric,
            "steps": r.steps,
            "answer": r.user_answer,
        }
