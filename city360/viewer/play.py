"""Human play: a task run by a person with exactly an agent's observation and action set.

The player sees what :class:`~city360.eval.episode.EpisodeWorker` gives an agent — the view,
the location map when enabled, the offered branches, the feedback and the step count, never the
pose or the ground truth — and ends with ANSWER. The episode is scored with
:func:`city360.eval.episode.score_answer`, stopped by the same rules
(:class:`city360.eval.stopping.StopMonitor`: step limit, stagnation, moving away from a map
navigation goal), and written in the eval run format: a row in ``results.csv`` (agent
``human``), ``episodes/<task_id>.jsonl`` step logs and ``run_metadata.json``, so
``city360 report`` reads a human run like any other.
"""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from city360.errors import ConfigError
from city360.eval.episode import score_answer
from city360.eval.results import (
    EpisodeResult,
    ResultsWriter,
    StepLogWriter,
    read_results,
    write_run_metadata,
)
from city360.eval.stopping import StopConfig, StopMonitor, StopReason
from city360.simulator.actions import Action, parse_action, parse_magnitude
from city360.tasks.families import get_family

if TYPE_CHECKING:
    from city360.simulator.env import CityEnv
    from city360.streets import StreetGraph
    from city360.tasks.schema import TaskBase
    from city360.tasks.suite import Suite

__all__ = ["HumanEpisode", "HumanRun"]

AGENT_NAME = "human"
_POSE_KEYS = ("x_m", "y_m", "lat", "lon", "heading_deg", "view_bearing_deg", "yaw_deg", "pitch_deg")


def _pose_fields(pose: dict[str, float]) -> dict[str, float]:
    return {k: round(float(pose[k]), 6) for k in _POSE_KEYS if k in pose}


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
        with self._lock:
            self.run_dir.mkdir(parents=True, exist_ok=True)
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


class HumanEpisode:
    """One task played by a person; drive it with :meth:`start` then :meth:`step`.

    ``observation()`` is what the page may show: view, map (if the run uses it), branches,
    feedback, step count and step limit. ``result`` is filled in when the episode ends.
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
        self.env = env
        self.task = task
        self.suite = suite
        self.run = run
        self.graph = graph
        self.seed = seed
        self.goal = getattr(task.truth, "goal", None)
        self.done = False
        self.result = EpisodeResult(
            task_id=task.id,
            task_type=str(task.family),
            difficulty=task.difficulty.value,
            status="running",
            evaluation_metric=str(task.metric.name),
            expected=task.expected_answer(),
            agent=AGENT_NAME,
            model=run.player,
            seed=seed,
            extra={"suite_hash": suite.content_hash()[:16], "viewer": True},
        )
        self._stop = StopConfig(
            step_limit=task.step_limit,
            stagnation_steps=run.stop.stagnation_steps,
            away_steps=run.stop.away_steps,
            away_from_goal=get_family(task.family).away_from_goal,
        )
        self._monitor = StopMonitor(self._stop)
        self._log: StepLogWriter | None = None
        self._obs: dict[str, Any] = {}
        self._shown_at = 0.0
        self._started = 0.0

    def _distance(self, pose: dict[str, float]) -> float | None:
        if self.goal is None:
            return None
        return math.hypot(pose["x_m"] - self.goal.x_m, pose["y_m"] - self.goal.y_m)

    def _oracle_path(self) -> tuple[list[list[float]], float | None]:
        from city360.tasks.walk import oracle_walk, route_points

        task, goal = self.task, self.goal
        if goal is None:
            return [], None
        result = oracle_walk(
            self.graph,
            (task.start.segment, task.start.offset_m),
            (goal.x_m, goal.y_m),
            goal.threshold_m,
            step_limit=task.step_limit,
            move_m=tuple(self.env.config.move_m),
        )
        if not result.reachable or result.final is None:
            return [], None
        points = [list(p) for p in route_points(self.graph, result.segments)]
        start_xy = self.graph.position(task.start.segment, task.start.offset_m)
        end_xy = self.graph.position(*result.final)
        return [list(start_xy), *points[1:-1], list(end_xy)], result.path_m

    def start(self) -> dict[str, Any]:
        """Reset the environment on the task and open the step log; the first observation."""
        task = self.task
        self.run.begin(self.suite)
        self.run.active.add(task.id)
        obs, info = self.env.reset(seed=self.seed, options={"task": task})
        oracle_xy, shortest_m = self._oracle_path()
        self.result.shortest_path_m = shortest_m
        self.result.oracle_success = bool(oracle_xy) if self.goal is not None else None
        pose = info["pose"]
        self._log = StepLogWriter(self.run.run_dir / "episodes" / f"{task.id}.jsonl")
        self._log.write(
            {
                "type": "episode",
                "task_id": task.id,
                "family": str(task.family),
                "difficulty": task.difficulty.value,
                "goal_xy": None if self.goal is None else [self.goal.x_m, self.goal.y_m],
                "oracle_path_xy": oracle_xy,
                "start": pose,
                "agent": AGENT_NAME,
            }
        )
        self._log.write(
            {"step": 0, **_pose_fields(pose), "distance_to_goal_m": self._distance(pose)}
        )
        self._monitor.start(pose["x_m"], pose["y_m"], self._distance(pose))
        self._record_pose(pose)
        self._obs = obs
        self._started = self._shown_at = time.perf_counter()
        return obs

    def _record_pose(self, pose: dict[str, float]) -> None:
        result = self.result
        result.final_x_m, result.final_y_m = pose["x_m"], pose["y_m"]
        result.final_lat, result.final_lon = pose["lat"], pose["lon"]
        result.final_heading_deg = pose["heading_deg"]
        result.distance_to_goal_m = self._distance(pose)

    @property
    def observation(self) -> dict[str, Any]:
        return self._obs

    def step(self, action: str, magnitude: str | None, answer: str | None) -> dict[str, Any]:
        """Apply the player's action (the env checks names and raises on unknown ones)."""
        if self.done:
            msg = f"the episode of task {self.task.id!r} is over; pick another task"
            raise ConfigError(msg)
        parsed = parse_action(action)
        parsed_magnitude = None if parsed is Action.ANSWER else parse_magnitude(magnitude)
        think_s = time.perf_counter() - self._shown_at
        if parsed is Action.ANSWER:
            obs, _, _, truncated, info = self.env.step(Action.ANSWER, answer=answer or "")
        else:
            obs, _, _, truncated, info = self.env.step(parsed, parsed_magnitude)
        result = self.result
        pose = info["pose"]
        result.steps = int(obs["step"])
        result.path_length_m += float(info.get("moved_m", 0.0))
        dist = self._distance(pose)
        assert self._log is not None
        self._log.write(
            {
                "step": result.steps,
                "action": parsed.value,
                "magnitude": None if parsed_magnitude is None else parsed_magnitude.value,
                "answer": answer if parsed is Action.ANSWER else None,
                "thought": "",
                "memory": "",
                "valid": True,
                "feedback": obs["feedback"],
                "think_s": round(think_s, 4),
                **_pose_fields(pose),
                "distance_to_goal_m": dist,
            }
        )
        self._record_pose(pose)
        self._obs = obs
        self._shown_at = time.perf_counter()
        if parsed is Action.ANSWER:
            result.status = StopReason.ANSWERED.value
            result.completed_by_answer = True
            result.user_answer = answer or ""
            verdict = score_answer(self.task, result.user_answer, dist)
            result.evaluation_score = verdict.score
            result.evaluation_method = verdict.method
            result.is_correct = verdict.correct
            result.scored_success = verdict.correct
            shortest = result.shortest_path_m
            if self.goal is not None and shortest is not None and verdict.correct:
                result.spl = shortest / max(result.path_length_m, shortest, 1e-9)
            elif self.goal is not None:
                result.spl = 0.0
            self._finish()
            return obs
        reason = self._monitor.update(parsed.value, pose["x_m"], pose["y_m"], dist)
        if reason is None and truncated:
            reason = StopReason.STEP_LIMIT
        if reason is not None:
            result.status = reason.value
            if self.goal is not None:
                result.spl = 0.0
            self._finish()
        return obs

    def abandon(self) -> None:
        """The player left the task unfinished (another task, or the session closed)."""
        if not self.done and self._log is not None:
            self.result.status = StopReason.INTERRUPTED.value
            if self.goal is not None:
                self.result.spl = 0.0
            self._finish()

    def _finish(self) -> None:
        self.done = True
        self.result.elapsed_seconds = time.perf_counter() - self._started
        if self._log is not None:
            self._log.close()
        self.run.record(self.result, self.suite)
        self.run.active.discard(self.task.id)

    def close(self) -> None:
        self.abandon()
        if self._log is not None:
            self._log.close()

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
