"""The oracle played in the simulator under the eval's stop rules, for ``city360 tasks check``.

:func:`city360.tasks.check.check_tasks` proves a navigation task solvable on the street graph
(:func:`~city360.tasks.walk.oracle_walk`). That is necessary, not enough: the eval plays the
oracle agent (:class:`~city360.agents.oracle.OracleAgent`) in the real environment, through
the one episode recorder (:class:`~city360.eval.recorder.EpisodeRecorder`) and its stop rules
(step limit, stagnation, away-from-goal), and a task the graph solves can still fail there when
a rule or the graph model disagrees with the controller (docs/design-notes.md, "tasks check
replays the oracle"). :func:`replay_oracle` plays every navigation task exactly that way, with
blank frames and a small view (the oracle does not look at pixels, so nothing is decoded and a
city built from poses without video is checked too) and the step logs in a temporary folder,
and reports each task the oracle does not solve with SPL 1.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from city360.eval.protocols import get_protocol
from city360.eval.recorder import EpisodeRecorder
from city360.eval.stopping import StopConfig
from city360.tasks.check import CheckIssue
from city360.tasks.families import get_family
from city360.tasks.schema import TaskBase

__all__ = ["REPLAY_VIEW", "SPL_TOLERANCE", "replay_oracle"]

REPLAY_VIEW: dict[str, Any] = {"renderer": "cpu", "view_width": 32, "view_height": 24}
"""Environment options of the replay: a tiny view on the CPU renderer."""

_BLANK_SIZE = (16, 8)
"""(width, height) pixels of the replay's blank equirectangular frames."""


class _BlankFrames:
    """A frame source of ``count`` mid-grey frames (the simulator's ``FrameSource``)."""

    def __init__(self, count: int) -> None:
        width, height = _BLANK_SIZE
        self._count = count
        self._y: npt.NDArray[np.uint8] = np.full((height, width), 128, np.uint8)
        self._uv: npt.NDArray[np.uint8] = np.full((height // 2, width // 2), 128, np.uint8)

    @property
    def width(self) -> int:
        return _BLANK_SIZE[0]

    @property
    def height(self) -> int:
        return _BLANK_SIZE[1]

    def __len__(self) -> int:
        return self._count

    def get_yuv(
        self, index: int
    ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
        return self._y, self._uv, self._uv

    def prefetch(self, indices: Any) -> None:
        return None

    def close(self) -> None:
        return None


def _blank_frames(frame_counts: Mapping[str, int]) -> Callable[[Path, int], _BlankFrames]:
    """A frame-source factory: a trajectory's frames live in ``trajectories/<id>/``."""

    def open_frames(path: Path, cache_bytes: int) -> _BlankFrames:
        return _BlankFrames(frame_counts[path.parent.name])

    return open_frames


SPL_TOLERANCE = 1e-6
"""An oracle episode with SPL below 1 minus this is reported."""


def replay_oracle(
    tasks: Sequence[TaskBase],
    city_dir: str | Path,
    *,
    protocol: str = "default",
    stop: StopConfig | None = None,
    on_task: Callable[[TaskBase], None] | None = None,
) -> list[CheckIssue]:
    """Play the oracle on every navigation task of ``tasks`` in the city's simulator under
    ``protocol``'s stop rules (``stop``: the eval's defaults); one issue per task it does not
    solve with SPL 1 (field ``truth.goal``), naming how the episode ended."""
    from city360.agents.oracle import OracleAgent
    from city360.eval.episode import ProtocolTask
    from city360.simulator.config import EnvConfig
    from city360.simulator.env import CityEnv
    from city360.streets import StreetGraph

    rules = get_protocol(protocol)
    base = stop or StopConfig()
    issues: list[CheckIssue] = []
    navigation = [task for task in tasks if get_family(task.family).navigation]
    with (
        tempfile.TemporaryDirectory(prefix="city360-check-") as logs,
        CityEnv(
            city_dir,
            EnvConfig.from_kwargs(privileged_info=True, **REPLAY_VIEW),
            frame_source=_blank_frames(_frame_counts(StreetGraph.open(city_dir))),
        ) as env,
    ):
        graph = env.world.graph
        agent = OracleAgent(graph=graph, move_m=env.config.move_m)
        for task in navigation:
            recorder = EpisodeRecorder(
                env,
                task,
                graph=graph,
                stop=base,
                log_path=Path(logs) / f"{task.id}.jsonl",
                agent="oracle",
                seed=0,
                timed=False,
                protocol=rules,
            )
            obs, info = recorder.start()
            agent.reset(ProtocolTask(task, rules))
            while not recorder.done:
                decision = agent.act({**obs, "info": info})
                outcome = recorder.step(
                    decision.action, decision.magnitude, decision.answer, valid=decision.valid
                )
                obs, info = outcome.observation, outcome.info
            issue = _issue(task, recorder, protocol)
            if issue is not None:
                issues.append(issue)
            if on_task is not None:
                on_task(task)
    return issues


def _issue(task: TaskBase, recorder: EpisodeRecorder, protocol: str) -> CheckIssue | None:
    result = recorder.result
    spl = result.spl
    if result.scored_success and spl is not None and spl >= 1.0 - SPL_TOLERANCE:
        return None
    how = (
        f"SPL {spl:.3f} < 1"
        if result.scored_success
        else f"not solved: ended by {_reason(recorder)} after {result.steps} steps"
    )
    distance = result.distance_to_goal_m
    where = "" if distance is None else f", {distance:.1f} m from the goal"
    return CheckIssue(
        task.id,
        "truth.goal",
        f"the oracle played in the simulator under the {protocol!r} protocol's stop rules: "
        f"{how}{where}; where the street-graph check passes, the graph model and the "
        "simulator disagree (fix the product, or regenerate the task)",
    )


def _reason(recorder: EpisodeRecorder) -> str:
    reason = recorder.stop_reason
    name = "?" if reason is None else str(reason.value)
    detail = recorder.result.stop_reason_detail
    return f"{name} ({detail})" if detail else name


def _frame_counts(graph: Any) -> dict[str, int]:
    return {tid: int(meta.frame_count) for tid, meta in graph.trajectories.items()}
