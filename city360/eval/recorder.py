"""One episode, recorded the same way whoever plays it: an agent in an eval worker or a person
in the viewer's Play mode (DESIGN.md "One home for each shared thing").

The recorder is push-driven: :meth:`EpisodeRecorder.start` resets the environment on the task
(its start pose), then the driver pushes one action per :meth:`EpisodeRecorder.step` — the eval
worker in a loop over its agent's decisions, the viewer once per HTTP request — until the
returned :class:`StepOutcome` says the episode is over. The recorder owns everything that
decides how an episode counts:

- which actions are steps: every action the environment applies, including one that is not a
  valid command, which does :data:`FALLBACK_ACTION` instead and is logged ``valid: false``;
- the stop rules (:class:`~city360.eval.stopping.StopMonitor`: step limit, stagnation, and for
  map navigation moving away from the goal, measured along the streets by
  :class:`~city360.eval.distance.StreetDistance`), plus the agent's step timeout;
- ANSWER handling and scoring (:func:`~city360.eval.metrics.score_answer`), SPL;
- the step log ``episodes/<task_id>.jsonl`` and the results row
  (:class:`~city360.eval.results.EpisodeResult`), which the driver's owner appends to
  ``results.csv``.

Distances in the log and the row, and the one the answer is scored with, are straight-line
metres from the exact pose to the goal; the away-from-goal rule walks the streets unless the
protocol measures the straight line (``reference``).

The run's protocol (:mod:`city360.eval.protocols`) decides the rest: which stop rules run and
what they count (:data:`~city360.eval.stopping.STOP_RULES`), whether an unusable decision does
the S fallback or nothing, whether the episode shows the location map, and how answers are
read (its :class:`~city360.eval.metrics.ScoringRules` and the LLM judge).
"""

from __future__ import annotations

import datetime as dt
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from city360.errors import ConfigError, UnknownActionError
from city360.eval.distance import StreetDistance
from city360.eval.metrics import (
    Judge,
    ScoringContext,
    coordinate_match,
    expected_answer,
    score_answer,
)
from city360.eval.oracle_path import oracle_path, spl_reference_m
from city360.eval.protocols import DEFAULT_PROTOCOL, Protocol
from city360.eval.results import EpisodeResult, StepLogWriter
from city360.eval.stopping import StopConfig, StopReason, make_stop_monitor
from city360.simulator.actions import (
    Action,
    ActionCommand,
    Magnitude,
    parse_action,
    parse_magnitude,
)
from city360.tasks.families import get_family

if TYPE_CHECKING:
    from city360.simulator.env import CityEnv
    from city360.streets import StreetGraph

__all__ = [
    "FALLBACK_ACTION",
    "EpisodeRecorder",
    "StepOutcome",
    "episode_stop_config",
]

FALLBACK_ACTION = Action.S
"""What an action that is not a valid command does instead. S re-aligns the view with the
direction of travel: it neither moves nor ends the episode (the LMM agent's default fallback)."""

_POSE_KEYS = ("x_m", "y_m", "lat", "lon", "heading_deg", "view_bearing_deg", "yaw_deg", "pitch_deg")
_NOT_MEASURED = frozenset({StopReason.AGENT_ERROR, StopReason.INFRASTRUCTURE_ERROR})
"""Endings that say nothing about the agent's path: their SPL stays empty, not 0."""


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """What one step did: the observation to show next, the simulator's privileged ``info``,
    the step count so far, whether the command was valid, and why the episode stopped (None
    while it goes on)."""

    observation: dict[str, Any]
    info: dict[str, Any]
    steps: int
    valid: bool
    stop: StopReason | None

    @property
    def done(self) -> bool:
        return self.stop is not None


def episode_stop_config(task: Any, base: StopConfig) -> StopConfig:
    """The stop thresholds of one episode: the task's step limit, the run's other thresholds,
    and the away-from-goal rule where the task's family asks for it
    (``FamilySpec.away_from_goal``)."""
    return StopConfig(
        step_limit=task.step_limit,
        stagnation_steps=base.stagnation_steps,
        away_steps=base.away_steps,
        away_from_goal=get_family(task.family).away_from_goal,
        step_timeout_s=base.step_timeout_s,
        position_epsilon_m=base.position_epsilon_m,
        request_cap_factor=base.request_cap_factor,
    )


def _reference_expected(task: Any, goal: Any, protocol: Protocol) -> str:
    """The expected answer as the reference's results write it: ``x:<x> y:<y>`` (metres, two
    decimals) for a goal, else the answer in the protocol's form."""
    if goal is not None:
        return f"x:{goal.x_m:.2f} y:{goal.y_m:.2f}"
    return expected_answer(task, protocol.scoring)


def _map_id(task: Any) -> str:
    """The task's map reference (the route map's file stem), if it uses one."""
    route_map = getattr(task.told, "route_map", None)
    return Path(route_map).stem if isinstance(route_map, str) else ""


def _landmark(task: Any) -> str:
    """The landmark a task is about, if any (for people reading results; never an agent)."""
    for holder, name in (
        (task.told, "landmark"),
        (task.truth, "landmark_name"),
        (task.truth, "anchor_name"),
    ):
        value = getattr(holder, name, None)
        if isinstance(value, str) and value:
            return value
    return ""


def _pose_fields(pose: Mapping[str, float]) -> dict[str, float]:
    return {k: round(float(pose[k]), 6) for k in _POSE_KEYS if k in pose}


def _command(
    action: str | Action, magnitude: str | Magnitude | None, answer: str | None
) -> tuple[ActionCommand, str]:
    """The command to apply and, when the input was not a valid command, why (then the
    command is :data:`FALLBACK_ACTION`). An ANSWER ignores a magnitude; other actions ignore
    an answer text."""
    try:
        parsed = parse_action(action)
        if parsed is Action.ANSWER:
            return ActionCommand(parsed, answer=answer), ""
        return ActionCommand(parsed, parse_magnitude(magnitude)), ""
    except UnknownActionError as exc:
        return ActionCommand(FALLBACK_ACTION), str(exc)


class EpisodeRecorder:
    """Records one episode of ``task`` in ``env``; see the module docstring.

    ``graph`` is the city's walkable graph (the oracle path, street distances); ``stop`` the
    run's thresholds (:func:`episode_stop_config` applies the task's); ``log_path`` the step
    log to write; ``agent``, ``model``, ``provider``, ``seed`` and ``extra`` go into the row.
    ``frames_dir``, when given, receives every view as ``NNNN.jpg``. ``timed=False`` drops the
    step timeout (a person reading the map is not hurried like a model). ``protocol`` names
    the rules (default: city360's); ``judge`` scores RelationalSpatial answers (None: the
    offline fallback, labelled ``offline-similarity`` in the row).
    """

    def __init__(
        self,
        env: CityEnv,
        task: Any,
        *,
        graph: StreetGraph,
        stop: StopConfig,
        log_path: Path,
        agent: str,
        model: str = "",
        provider: str = "",
        seed: int,
        extra: Mapping[str, Any] | None = None,
        frames_dir: Path | None = None,
        timed: bool = True,
        protocol: Protocol = DEFAULT_PROTOCOL,
        judge: Judge | None = None,
    ) -> None:
        self.env = env
        self.task = task
        self.graph = graph
        self.stop_config = episode_stop_config(task, stop)
        self.log_path = log_path
        self.frames_dir = frames_dir
        self.timed = timed
        self.seed = seed
        self.protocol = protocol
        self.judge = judge
        self.goal = getattr(task.truth, "goal", None)
        self.result = result = EpisodeResult(
            task_id=task.id,
            task_type=str(task.family),
            difficulty=task.difficulty.value,
            status="running",
            evaluation_metric=str(task.metric.name),
            expected=task.expected_answer(),
            agent=agent,
            model=model,
            provider=provider,
            seed=seed,
            extra=dict(extra or {}),
            protocol=protocol.name,
            # fakes in tests may carry no config: their views are the city's own frames
            condition=str(getattr(getattr(env, "config", None), "condition", "day")),
            threshold_m=None if self.goal is None else float(task.metric.threshold_m),
            reference_expected=_reference_expected(task, self.goal, protocol),
            map_id=_map_id(task),
            landmark=_landmark(task),
            judge_provider=getattr(judge, "provider_name", "") if judge is not None else "",
            judge_model=getattr(judge, "model", "") if judge is not None else "",
        )
        result.expected = expected_answer(task, protocol.scoring)
        self._monitor = make_stop_monitor(protocol.stop_rules, self.stop_config)
        track = get_family(task.family).progress
        self._progress = None if track is None else track(task)
        self._street: StreetDistance | None = None
        self._last: tuple[dict[str, Any], dict[str, Any]] | None = None
        self._log: StepLogWriter | None = None
        self._started = 0.0
        self.stop_reason: StopReason | None = None

    def __repr__(self) -> str:
        return f"EpisodeRecorder(task={self.task.id!r}, steps={self.result.steps})"

    @property
    def started(self) -> bool:
        return self._log is not None

    @property
    def done(self) -> bool:
        return self.stop_reason is not None

    # ------------------------------------------------------------------------------------
    def start(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Reset the environment on the task's start pose, open the step log and write its
        header; returns the first ``(observation, info)``."""
        if self.started:
            msg = f"the episode of task {self.task.id!r} has already started"
            raise ConfigError(msg)
        task, goal, result = self.task, self.goal, self.result
        self._started = time.perf_counter()
        self._log = StepLogWriter(self.log_path)
        shows_map = self.protocol.shows_map(str(task.family))
        obs, info = self.env.reset(seed=self.seed, options={"task": task, "map": shows_map})
        oracle = oracle_path(self.graph, task, move_m=self.env.config.move_m)
        result.shortest_path_m = spl_reference_m(
            self.graph, task, oracle_m=oracle.length_m, oracle_segments=oracle.segments
        )
        result.oracle_success = bool(oracle.xy) if goal is not None else None
        street = self.protocol.away_measure == "street"
        if goal is not None and self.stop_config.away_from_goal and street:
            self._street = StreetDistance(
                self.graph, (goal.x_m, goal.y_m), threshold_m=float(goal.threshold_m)
            )
        pose = info["pose"]
        self._log.write(
            {
                "type": "episode",
                "task_id": task.id,
                "family": str(task.family),
                "difficulty": task.difficulty.value,
                "goal_xy": [goal.x_m, goal.y_m] if goal is not None else None,
                "oracle_path_xy": oracle.xy,
                "start": pose,
                "agent": result.agent,
            }
        )
        distance = self._distance(pose)
        self._log.write({"step": 0, **_pose_fields(pose), "distance_to_goal_m": distance})
        self._save_frame(0, obs)
        self._record_pose(pose, distance)
        result.final_segment = str(info.get("segment", ""))
        self._monitor.start(pose["x_m"], pose["y_m"], self._away_distance(info, distance))
        self._last = (obs, info)
        return obs, info

    def step(
        self,
        action: str | Action,
        magnitude: str | Magnitude | None = None,
        answer: str | None = None,
        *,
        valid: bool = True,
        answer_type: str = "string",
        thought: str = "",
        memory: str = "",
        think_s: float = 0.0,
    ) -> StepOutcome:
        """Apply one action and account for it.

        ``valid=False`` says the driver already replaced an unusable decision by a fallback
        (the LMM agent does); an ``action`` or ``magnitude`` that does not parse is replaced
        here by :data:`FALLBACK_ACTION`. Either way the step counts and is logged invalid.
        ``think_s`` is how long the player took to decide (the step timeout, when timed).
        ``answer_type`` is the JSON type the agent gave an ANSWER's text as (``"string"``
        unless an LMM wrote a number, null, ...; see ``ScoringRules.text_answers_only``).
        """
        if not self.started:
            msg = f"start() the episode of task {self.task.id!r} before its first step"
            raise ConfigError(msg)
        if self.done:
            msg = f"the episode of task {self.task.id!r} is over; pick another task"
            raise ConfigError(msg)
        command, problem = _command(action, magnitude, answer)
        valid = valid and not problem
        result = self.result
        result.act_requests += 1
        if not valid:
            result.invalid_actions += 1
        assert self._last is not None
        last_obs, last_info = self._last
        here = last_info["pose"]
        reason = self._monitor.before(
            command.action.value if valid else None,
            here["x_m"],
            here["y_m"],
            self._away_distance(last_info, self._distance(here)),
        )
        applies = reason is None and (valid or self._monitor.counts_invalid)
        if applies:
            obs, _reward, _terminated, truncated, info = self.env.step(command)
        else:  # stopped before it was applied, or an unusable decision that does nothing
            obs, info, truncated = dict(last_obs), dict(last_info, moved_m=0.0), False
            if reason is None:
                obs["feedback"] = "Nothing happened."
        if problem:
            done = FALLBACK_ACTION.value if applies else "nothing"
            note = f"{problem} Did {done} instead. "
            obs = {**obs, "feedback": note + str(obs["feedback"])}
        pose = info["pose"]
        result.steps = self._steps()
        result.path_length_m += float(info.get("moved_m", 0.0))
        result.final_action = command.action.value if valid else ""
        distance = self._distance(pose)
        self._write(
            {
                "step": result.steps,
                "action": command.action.value,
                "magnitude": None if command.magnitude is None else command.magnitude.value,
                "answer": command.answer,
                "thought": thought,
                "memory": memory,
                "valid": valid,
                "applied": applies,
                "feedback": obs["feedback"],
                "think_s": round(think_s, 4),
                **_pose_fields(pose),
                "distance_to_goal_m": distance,
            }
        )
        self._save_frame(result.steps, obs)
        self._record_pose(pose, distance)
        result.final_segment = str(info.get("segment", ""))
        self._last = (obs, info)
        if reason is None and applies:
            reason = self._account(
                command,
                pose,
                info,
                distance,
                truncated=truncated,
                think_s=think_s,
                answer_type=answer_type,
            )
        elif reason is None and self.timed and think_s > self.stop_config.step_timeout_s:
            reason = StopReason.STEP_TIMEOUT
        if reason is not None:
            self.end(reason)
        return StepOutcome(obs, info, result.steps, valid, reason)

    def _steps(self) -> int:
        """Steps as the protocol counts them: every decision (city360), or only the usable
        ones (the reference)."""
        if self._monitor.counts_invalid:
            return self.result.act_requests
        return self._monitor.steps

    def _account(
        self,
        command: ActionCommand,
        pose: Mapping[str, float],
        info: Mapping[str, Any],
        distance: float | None,
        *,
        truncated: bool,
        think_s: float,
        answer_type: str = "string",
    ) -> StopReason | None:
        """Score an ANSWER, or apply the stop rules; the reason to stop, or None."""
        if command.action is Action.ANSWER:
            self._score(command.answer or "", distance, answer_type)
            return StopReason.ANSWERED
        if self.timed and think_s > self.stop_config.step_timeout_s:
            return StopReason.STEP_TIMEOUT
        reason = self._monitor.after(
            command.action.value, pose["x_m"], pose["y_m"], self._away_distance(info, distance)
        )
        if reason is None and truncated:
            reason = StopReason.STEP_LIMIT
        return reason

    def _score(self, answer: str, distance: float | None, answer_type: str = "string") -> None:
        result = self.result
        result.completed_by_answer = True
        result.user_answer = answer
        progress = {} if self._progress is None else self._progress.values()
        context = ScoringContext(self.protocol.scoring, self.judge, progress, answer_type)
        verdict = score_answer(self.task, answer, distance, context)
        result.evaluation_score = verdict.score
        result.evaluation_method = verdict.method
        result.message = verdict.message
        if self.judge is not None and verdict.method == getattr(self.judge, "name", None):
            result.judge = str(getattr(self.judge, "label", verdict.method))
        result.is_correct = verdict.correct
        result.scored_success = verdict.correct
        shortest = result.shortest_path_m
        if self.goal is not None and shortest is not None and verdict.correct:
            walked = result.path_length_m
            # a path summed step by step may differ from L in the last bits of a float
            result.spl = 1.0 if walked <= shortest + 1e-6 else shortest / walked

    def end(self, reason: StopReason, message: str = "") -> EpisodeResult:
        """End the episode for ``reason`` (the recorder does for ANSWER and the stop rules;
        drivers do for errors and interruptions); close the log; return the finished row.
        Ending an episode that is over changes nothing."""
        result = self.result
        if self.done:
            return result
        self.stop_reason = reason
        result.status = reason.value
        if message:
            result.error_message = message[:500]
        if reason is not StopReason.ANSWERED:
            result.stop_reason_detail = self._stop_detail(reason)
            self._final_position_check(reason)
        if self.goal is not None and result.spl is None and reason not in _NOT_MEASURED:
            result.spl = 0.0
        if self._progress is not None:
            result.extra.update(self._progress.values())
        result.elapsed_seconds = time.perf_counter() - self._started if self._started else 0.0
        result.timestamp = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        if self.frames_dir is not None:
            result.artifact_dir = f"{self.frames_dir.parent.name}/{self.frames_dir.name}"
        self.close()
        return result

    def close(self) -> None:
        """Close the step log (safe twice); :meth:`end` does it."""
        if self._log is not None:
            self._log.close()

    # ------------------------------------------------------------------------------------
    def _write(self, record: Mapping[str, Any]) -> None:
        if self._log is not None:
            self._log.write(record)

    def _distance(self, pose: Mapping[str, float]) -> float | None:
        if self.goal is None:
            return None
        return math.hypot(pose["x_m"] - self.goal.x_m, pose["y_m"] - self.goal.y_m)

    def _away_distance(self, info: Mapping[str, Any], straight: float | None) -> float | None:
        """The distance the away-from-goal rule watches (metres): along the streets, or the
        straight line, as the protocol says; None where the rule does not apply."""
        if not self.stop_config.away_from_goal or self.goal is None:
            return None
        if self._street is None:
            return straight
        return self._street(info["segment"], info["offset_m"])

    def _stop_detail(self, reason: StopReason) -> str:
        """A machine-readable note on why the episode stopped (results' stop_reason_detail)."""
        config = self.stop_config
        details = {
            StopReason.STEP_LIMIT: f"step_limit={config.step_limit}",
            StopReason.STAGNATION: f"stagnation={config.stagnation_steps}",
            StopReason.AWAY_FROM_GOAL: f"away_from_goal={config.away_steps}",
            StopReason.STEP_TIMEOUT: f"step_timeout_s={config.step_timeout_s:g}",
        }
        detail = details.get(reason, reason.value)
        if (
            reason is StopReason.STEP_LIMIT
            and self.result.act_requests > self.result.steps
            and (self.result.act_requests >= config.request_cap_factor * config.step_limit)
        ):
            detail = f"act_requests={self.result.act_requests} (city360 request cap)"
        return detail

    def _final_position_check(self, reason: StopReason) -> None:
        """Without ANSWER a navigation episode scores 0, but ``is_correct`` reports whether the
        final position was within the goal's radius (the reference does the same)."""
        result = self.result
        if self.goal is None or reason in _NOT_MEASURED or result.distance_to_goal_m is None:
            return
        verdict = coordinate_match(
            result.distance_to_goal_m,
            float(self.task.metric.threshold_m),
            strict=self.protocol.scoring.strict_threshold,
        )
        result.is_correct = verdict.correct
        result.message = f"{reason.value}: final-position check without ANSWER. {verdict.message}"

    def _record_pose(self, pose: Mapping[str, float], distance: float | None) -> None:
        result = self.result
        if self._progress is not None:
            self._progress.update(pose["x_m"], pose["y_m"])
        result.final_x_m, result.final_y_m = pose["x_m"], pose["y_m"]
        result.final_lat, result.final_lon = pose["lat"], pose["lon"]
        result.final_heading_deg = pose["heading_deg"]
        result.distance_to_goal_m = distance

    def _save_frame(self, step: int, obs: Mapping[str, Any]) -> None:
        if self.frames_dir is None:
            return
        import cv2

        self.frames_dir.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(self.frames_dir / f"{step:04d}.jpg"), obs["view"][:, :, ::-1])
