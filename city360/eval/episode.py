"""One episode: reset the environment on a task, let the agent act until it answers or a stop
condition fires, score the answer, and log every step.

The agent sees only the observation (plus the simulator's privileged ``info`` for agents that
declare ``privileged = True``: the oracle). The evaluator reads the exact pose from ``info``,
which is why environments here are made with ``privileged_info=True``.
"""

from __future__ import annotations

import inspect
import math
import time
from pathlib import Path
from typing import Any

from city360.agents.base import AgentDecision
from city360.errors import City360Error, ProviderUnavailableError
from city360.eval.agent_factory import build_agent
from city360.eval.distance import StreetDistance
from city360.eval.executors import WorkerSpec
from city360.eval.metrics import score_answer
from city360.eval.results import EpisodeResult, StepLogWriter
from city360.eval.stopping import StopConfig, StopMonitor, StopReason
from city360.simulator.actions import Action
from city360.tasks.families import get_family

__all__ = ["EpisodeWorker", "score_answer"]


class EpisodeWorker:
    """Holds one environment and one agent; runs episodes one after another.

    Built once per worker (process, Ray actor, or the main process for ``--workers 1``).
    """

    def __init__(self, spec: WorkerSpec) -> None:
        import city360
        from city360.eval.runner import AgentSpec
        from city360.streets import StreetGraph
        from city360.tasks.suite import load_suite

        self.spec = spec
        self.run_dir = Path(spec.run_dir)
        self.suite_dir = Path(spec.suite_dir)
        self.suite = load_suite(self.suite_dir)
        self.env = city360.make(spec.city_dir, privileged_info=True, **spec.env_options)
        self.walk = StreetGraph.open(spec.city_dir)
        self.agent_spec = AgentSpec(**spec.agent)
        self.agent = build_agent(
            self.agent_spec, city_dir=Path(spec.city_dir), env_config=self.env.config
        )
        self.stop_base = StopConfig(**spec.stop)
        self._reset_takes_seed = "seed" in inspect.signature(self.agent.reset).parameters
        # A user's own agent (--agent mypkg.mod:MyAgent) may leave out the protocol's optional
        # ``privileged`` flag; it then sees only what an agent may see.
        self._privileged = bool(getattr(self.agent, "privileged", False))

    def close(self) -> None:
        closer = getattr(self.agent, "close", None)
        if callable(closer):
            closer()
        self.env.close()

    def __enter__(self) -> EpisodeWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------------
    def _oracle_path(self, task: Any, goal: Any) -> tuple[list[list[float]], float | None]:
        """The oracle's path (metres) and its length, for SPL and the report."""
        from city360.tasks.walk import oracle_walk

        if goal is None:
            return [], None
        result = oracle_walk(
            self.walk,
            (task.start.segment, task.start.offset_m),
            (goal.x_m, goal.y_m),
            goal.threshold_m,
            step_limit=task.step_limit,
            move_m=tuple(self.env.config.move_m),
        )
        if not result.reachable or result.final is None:
            return [], None
        return _walked_polyline(self.walk, result.segments, task.start.offset_m, result.final), (
            result.path_m
        )

    def run(self, task_id: str, seed: int) -> EpisodeResult:
        task = self.suite.task(task_id)
        family = str(task.family)
        goal = getattr(task.truth, "goal", None)
        started = time.perf_counter()
        result = EpisodeResult(
            task_id=task.id,
            task_type=family,
            difficulty=task.difficulty.value,
            status="running",
            evaluation_metric=str(task.metric.name),
            expected=task.expected_answer(),
            agent=self.agent_spec.kind,
            model=self.agent_spec.model or "",
            provider=self.agent_spec.provider or "",
            seed=seed,
        )
        stop = StopConfig(
            step_limit=task.step_limit,
            stagnation_steps=self.stop_base.stagnation_steps,
            away_steps=self.stop_base.away_steps,
            away_from_goal=get_family(family).away_from_goal,
            step_timeout_s=self.stop_base.step_timeout_s,
        )
        frames_dir = self.run_dir / "episodes" / task.id
        with StepLogWriter(self.run_dir / "episodes" / f"{task.id}.jsonl") as log:
            try:
                self._loop(task, goal, seed, stop, log, frames_dir, result)
            except ProviderUnavailableError as exc:
                result.status = StopReason.INFRASTRUCTURE_ERROR.value
                result.error_message = str(exc)[:500]
            except City360Error as exc:
                result.status = StopReason.AGENT_ERROR.value
                result.error_message = str(exc)[:500]
        result.elapsed_seconds = time.perf_counter() - started
        usage = getattr(self.agent, "usage", None)
        if usage is not None:
            result.input_tokens = int(usage.input_tokens)
            result.output_tokens = int(usage.output_tokens)
            result.requests = int(usage.requests)
            result.retries = int(usage.retries)
            result.parse_errors = int(usage.parse_errors)
            result.invalid_actions = int(usage.invalid_actions)
            result.api_errors = int(usage.failed_requests)
        return result

    def _loop(
        self,
        task: Any,
        goal: Any,
        seed: int,
        stop: StopConfig,
        log: StepLogWriter,
        frames_dir: Path,
        result: EpisodeResult,
    ) -> None:
        obs, info = self.env.reset(seed=seed, options={"task": task})
        told = task if self._privileged else task.agent_view(suite_root=str(self.suite_dir))
        if self._reset_takes_seed:
            # Seeded per episode, so results do not depend on which worker ran what before.
            self.agent.reset(told, seed=seed)  # type: ignore[call-arg]
        else:
            self.agent.reset(told)
        oracle_xy, shortest_m = self._oracle_path(task, goal)
        result.shortest_path_m = shortest_m
        result.oracle_success = bool(oracle_xy) if goal is not None else None

        def distance(pose: dict[str, float]) -> float | None:
            if goal is None:
                return None
            return math.hypot(pose["x_m"] - goal.x_m, pose["y_m"] - goal.y_m)

        pose = info["pose"]
        log.write(
            {
                "type": "episode",
                "task_id": task.id,
                "family": str(task.family),
                "difficulty": task.difficulty.value,
                "goal_xy": [goal.x_m, goal.y_m] if goal is not None else None,
                "oracle_path_xy": oracle_xy,
                "start": pose,
            }
        )
        log.write({"step": 0, **_pose_fields(pose), "distance_to_goal_m": distance(pose)})
        self._save_frame(frames_dir, 0, obs)
        street = StreetDistance(self.walk, (goal.x_m, goal.y_m)) if goal is not None else None

        def street_distance(info: dict[str, Any]) -> float | None:
            return None if street is None else street(info["segment"], info["offset_m"])

        monitor = StopMonitor(stop)
        monitor.start(pose["x_m"], pose["y_m"], street_distance(info))
        while True:
            agent_obs = {**obs, "info": info} if self._privileged else obs
            asked = time.perf_counter()
            decision: AgentDecision = self.agent.act(agent_obs)
            think_s = time.perf_counter() - asked
            obs, _reward, _terminated, truncated, info = self.env.step(decision.command)
            pose = info["pose"]
            result.steps = int(obs["step"])
            result.path_length_m += float(info.get("moved_m", 0.0))
            dist = distance(pose)
            log.write(
                {
                    "step": result.steps,
                    "action": decision.action.value,
                    "magnitude": None if decision.magnitude is None else decision.magnitude.value,
                    "answer": decision.answer,
                    "thought": decision.thought,
                    "memory": decision.memory,
                    "valid": decision.valid,
                    "feedback": obs["feedback"],
                    "think_s": round(think_s, 4),
                    **_pose_fields(pose),
                    "distance_to_goal_m": dist,
                }
            )
            self._save_frame(frames_dir, result.steps, obs)
            self._record_pose(result, pose, dist)
            if decision.action is Action.ANSWER:
                result.status = StopReason.ANSWERED.value
                result.completed_by_answer = True
                result.user_answer = decision.answer or ""
                verdict = score_answer(task, result.user_answer, dist)
                result.evaluation_score = verdict.score
                result.evaluation_method = verdict.method
                result.is_correct = verdict.correct
                result.scored_success = verdict.correct
                if goal is not None and shortest_m is not None and verdict.correct:
                    result.spl = shortest_m / max(result.path_length_m, shortest_m, 1e-9)
                elif goal is not None:
                    result.spl = 0.0
                return
            if think_s > stop.step_timeout_s:
                result.status = StopReason.STEP_TIMEOUT.value
                return
            reason = monitor.update(
                decision.action.value, pose["x_m"], pose["y_m"], street_distance(info)
            )
            if reason is None and truncated:
                reason = StopReason.STEP_LIMIT
            if reason is not None:
                result.status = reason.value
                if goal is not None:
                    result.spl = 0.0
                return

    @staticmethod
    def _record_pose(result: EpisodeResult, pose: dict[str, float], dist: float | None) -> None:
        result.final_x_m = pose["x_m"]
        result.final_y_m = pose["y_m"]
        result.final_lat = pose["lat"]
        result.final_lon = pose["lon"]
        result.final_heading_deg = pose["heading_deg"]
        result.distance_to_goal_m = dist

    def _save_frame(self, frames_dir: Path, step: int, obs: dict[str, Any]) -> None:
        if not self.spec.save_frames:
            return
        import cv2

        frames_dir.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(frames_dir / f"{step:04d}.jpg"), obs["view"][:, :, ::-1])


def _pose_fields(pose: dict[str, float]) -> dict[str, float]:
    keys = ("x_m", "y_m", "lat", "lon", "heading_deg", "view_bearing_deg", "yaw_deg", "pitch_deg")
    return {k: round(float(pose[k]), 6) for k in keys if k in pose}


def _walked_polyline(
    walk: Any, segments: Any, start_offset_m: float, final: tuple[str, float]
) -> list[list[float]]:
    """The positions (metres) of a walk over ``segments``: from ``start_offset_m`` on the
    first to the final offset on the last, following each segment's polyline."""
    points: list[list[float]] = []
    for k, segment_id in enumerate(segments):
        seg = walk.segment(segment_id)
        lo = start_offset_m if k == 0 else 0.0
        hi = final[1] if k == len(segments) - 1 else seg.length_m
        inner = [(x, y) for (x, y), arc in zip(seg.xy, seg.cum_m, strict=True) if lo < arc < hi]
        points.extend([list(seg.position(lo)), *map(list, inner), list(seg.position(hi))])
    return [[round(float(x), 3), round(float(y), 3)] for x, y in points]
