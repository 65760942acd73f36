"""The oracle: walks the shortest controller path to the goal with privileged ground truth.

It is the upper bound of every navigation score and the proof that a task is solvable in the
simulator (not only on the graph). It reads the task's hidden goal and plans with
:func:`city360.tasks.walk.oracle_walk` (fewest W/LEFT/UP/RIGHT steps over the pose graph, with
the controller's step sizes) twice: from where it stands, and from the street's twin after
turning round (two D LARGE; facing backwards, W walks the opposite direction); the shorter
wins, so a start facing away from the goal does not send it round the block. Each step it
compares the simulator's privileged state (``observation["info"]["segment"]`` /
``["offset_m"]``, present because the oracle declares ``privileged = True``) with where its
plan expected to be; any difference re-plans from the true state. At the goal, or at once for
families without one (localization, counting, relations), it answers with the task's expected
answer. A task with ordered ``truth.waypoints`` (Errand) is walked one waypoint after the
other: when the plan to one is done, it plans to the next from where it stands.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from city360.agents.base import AgentDecision, Observation
from city360.errors import ResetNeededError, TaskError
from city360.simulator.actions import Action, ActionCommand, Magnitude, parse_action

if TYPE_CHECKING:
    from city360.streets import StreetGraph

__all__ = ["OracleAgent"]

_OFFSET_TOLERANCE_M = 0.5
_Walk = tuple[list[tuple[str, str | None]], list[tuple[str, float]]]
"""A plan: the moves and the (segment, offset_m) the controller reaches after each."""


class OracleAgent:
    """Shortest-path walker over the pose graph of ``city_dir``.

    ``move_m`` are the simulator's W step sizes (SMALL, MEDIUM, LARGE, metres);
    ``goal_margin`` shrinks the success radius the plan aims for (0.5 aims for half the
    task's threshold) so that small differences between graph and simulator geometry do not
    cost the episode; if the goal cannot be reached within the margin the full radius is used.
    """

    privileged: ClassVar[bool] = True

    def __init__(
        self,
        city_dir: str | Path | None = None,
        *,
        graph: StreetGraph | None = None,
        move_m: Sequence[float] = (2.0, 5.0, 10.0),
        goal_margin: float = 0.5,
    ) -> None:
        if graph is None:
            if city_dir is None:
                msg = "OracleAgent needs city_dir or graph"
                raise TaskError(msg)
            from city360.streets import StreetGraph

            graph = StreetGraph.open(city_dir)
        self.graph = graph
        self.name = "oracle"
        self.move_m = tuple(float(m) for m in move_m)
        self.goal_margin = goal_margin
        self.replans = 0
        self._task: Any = None
        self._goal: tuple[float, float, float] | None = None
        self._pending: list[tuple[float, float, float]] = []
        self._answer = ""
        self._plan: list[tuple[str, str | None]] = []
        self._plan_states: list[tuple[str, float]] = []
        self._expected: tuple[str, float] | None = None
        self._step_limit = 50

    def __repr__(self) -> str:
        return f"OracleAgent({self.graph!r})"

    def reset(self, task: Any) -> None:
        """Read the task's hidden truth and plan from its start pose."""
        truth = getattr(task, "truth", None)
        if truth is None:
            msg = (
                f"task {getattr(task, 'id', '?')!r}: the oracle needs the full task with its "
                "hidden truth, not the agent's view of it"
            )
            raise TaskError(msg)
        self._task = task
        expected = getattr(task, "expected_answer", None)
        self._answer = str(expected() if callable(expected) else "")
        goal = getattr(truth, "goal", None)
        stops = [stop.goal for stop in getattr(truth, "waypoints", None) or ()] or [goal]
        goals = [(g.x_m, g.y_m, g.threshold_m) for g in stops if g is not None]
        self._goal = goals[0] if goals else None
        self._pending = goals[1:]
        self._step_limit = int(getattr(task, "step_limit", 50) or 50)
        self.replans = 0
        self._plan = []
        self._plan_states = []
        self._expected = None
        if self._goal is not None:
            start = task.start
            self._replan(
                (str(start.segment), float(start.offset_m)),
                steps_used=0,
                yaw_deg=float(getattr(start, "yaw_deg", 0.0) or 0.0),
            )
            self.replans = 0

    def _walk(
        self, state: tuple[str, float], budget: int
    ) -> tuple[list[tuple[str, str | None]], list[tuple[str, float]]] | None:
        """Fewest moves from ``state`` to the goal (aiming inside the margin first) and the
        (segment, offset_m) the controller reaches after each."""
        from city360.tasks.walk import oracle_walk

        assert self._goal is not None  # only called for tasks with a goal
        gx, gy, threshold = self._goal
        if budget < 1:
            return None
        for radius in (threshold * self.goal_margin, threshold):
            result = oracle_walk(
                self.graph, state, (gx, gy), radius, step_limit=budget, move_m=self.move_m
            )
            if result.reachable:
                return list(result.actions), list(result.states)
        return None

    def _replan(self, state: tuple[str, float], *, steps_used: int, yaw_deg: float = 0.0) -> None:
        """Plan from ``state`` both ways: on along the street, or turned around onto its twin
        (the simulator walks the twin when the view faces backwards, ``|yaw| > 90``); the
        shorter wins. Looking back first costs an S; turning round costs two D LARGE."""
        budget = max(1, self._step_limit - steps_used - 1)  # keep a step for ANSWER
        options: list[tuple[int, list[tuple[str, str | None]], _Walk]] = []
        facing_back = abs(yaw_deg) > 90.0
        prefix: list[tuple[str, str | None]] = [("S", None)] if facing_back else []
        walk = self._walk(state, budget - len(prefix))
        if walk is not None:
            options.append((len(prefix) + len(walk[0]), prefix, walk))
        # the twin at the offset where the controller's W facing backwards walks on
        turned = self.graph.turned_round(*state)
        if turned is not None:
            prefix = [] if facing_back else [("D", "LARGE"), ("D", "LARGE")]
            walk = self._walk(turned, budget - len(prefix))
            if walk is not None:
                options.append((len(prefix) + len(walk[0]), prefix, walk))
        self.replans += 1
        self._plan, self._plan_states = [], []
        if options:
            _, prefix, (moves, states) = min(options, key=lambda option: option[0])
            self._plan = prefix + moves
            self._plan_states = [state] * len(prefix) + states
        self._expected = state

    def act(self, observation: Observation) -> AgentDecision:
        if self._task is None:
            msg = "OracleAgent.act() called before reset(task); call reset(task) first"
            raise ResetNeededError(msg)
        info = observation.get("info") or {}
        if self._goal is not None and "segment" in info and "offset_m" in info:
            actual = (str(info["segment"]), float(info["offset_m"]))
            expected = self._expected
            if (
                expected is None
                or actual[0] != expected[0]
                or abs(actual[1] - expected[1]) > _OFFSET_TOLERANCE_M
            ):
                pose = info.get("pose") or {}
                self._replan(
                    actual,
                    steps_used=int(observation.get("step", 0)),
                    yaw_deg=float(pose.get("yaw_deg", 0.0)),
                )
        while not self._plan and self._pending:
            # at a waypoint: on to the next, from the simulator's state when it is shown,
            # else from where the plan says the last move led
            self._goal = self._pending.pop(0)
            here = self._expected
            pose = info.get("pose") or {}
            if "segment" in info and "offset_m" in info:
                here = (str(info["segment"]), float(info["offset_m"]))
            if here is None:
                break
            self._replan(
                here,
                steps_used=int(observation.get("step", 0)),
                yaw_deg=float(pose.get("yaw_deg", 0.0)),
            )
        if not self._plan:
            command = ActionCommand(Action.ANSWER, answer=self._answer)
            return AgentDecision(command=command, thought="at the goal (privileged truth)")
        action, magnitude = self._plan.pop(0)
        self._expected = self._plan_states.pop(0) if self._plan_states else None
        command = ActionCommand(parse_action(action), Magnitude(magnitude) if magnitude else None)
        return AgentDecision(
            command=command, thought=f"shortest path: {len(self._plan)} moves left"
        )
