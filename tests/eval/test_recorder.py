"""One episode recorder: the same scripted actions through an eval worker (an agent) and through
the viewer's Play API (a person) end the same way, with the same steps, scores and rows."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from city360.agents.base import AgentDecision
from city360.errors import ConfigError, UnknownActionError
from city360.eval import episode
from city360.eval.episode import EpisodeWorker
from city360.eval.recorder import FALLBACK_ACTION, EpisodeRecorder
from city360.eval.results import EpisodeResult, read_results
from city360.eval.specs import WorkerSpec, task_seed
from city360.eval.stopping import StopConfig, StopReason
from city360.simulator.actions import ActionCommand, parse_action, parse_magnitude
from tests.viewer.conftest import LOCAL_URL, make_config, make_paths

INVALID = "WW"
"""Not an action: a person's request that names none, an agent's reply that names none."""

WALK_TO_THE_JUNCTION = "W until the junction"
"""Stands for as many W as the city's geometry takes to walk into the next junction (where W no
longer moves), then ``stagnation_steps`` more: counted on the built city, not written down, so
a change of the build's geometry does not end the script early. Its task is of a family without
the away-from-goal rule (map navigation would stop a walk that leads away first)."""

SCRIPTS: dict[str, tuple[str, list[str], str]] = {
    # case: (task, steps "ACTION[:MAGNITUDE][=ANSWER]", how it must end)
    "answer-after-a-left-turn": (
        "vln-001",
        ["W:MEDIUM", "A:SMALL", "D:SMALL", INVALID, "W:LARGE", "W:LARGE", "LEFT", "W:SMALL"]
        + ["W:LARGE"] * 4
        + ["LEFT", "W:MEDIUM", "W:LARGE", "ANSWER=here"],
        "answered",
    ),
    "answer-straight-on": (
        "lmt-001",
        [
            "W:LARGE",
            "D:MEDIUM",
            "A:MEDIUM",
            "W:LARGE",
            "UP",
            INVALID,
            "W:LARGE",
            "W:LARGE",
            "ANSWER",
        ],
        "answered",
    ),
    "answer-wrong-cell": ("loc-002", ["D:LARGE", INVALID, "UP", "ANSWER=x:0 y:0"], "answered"),
    "walking-away-from-the-goal": (
        "map-001",
        ["D:SMALL", "A:SMALL", INVALID, "A:LARGE", "A:LARGE"] + ["W"] * 5,
        "away_from_goal",
    ),
    "step-limit": (
        "cnt-001",
        ["W:SMALL", "UP", INVALID] + ["A", "D"] * 23 + ["LEFT"],
        "step_limit",
    ),
    "stagnation-at-a-junction": ("cnt-002", [INVALID, WALK_TO_THE_JUNCTION], "stagnation"),
    "stagnation-of-invalid-actions": ("rel-001", ["D"] + [INVALID] * 20, "stagnation"),
}

TIMING = ("agent", "model", "provider", "elapsed_seconds", "extra", "timestamp", "run_id")
"""Row columns that say who played, when and how fast, not how the episode went."""


def _parse(step: str) -> tuple[str, str | None, str | None]:
    command, _, answer = step.partition("=")
    action, _, magnitude = command.partition(":")
    return action, magnitude or None, answer or None


class ScriptedAgent:
    """Plays each task's script; a step that names no action becomes the fallback decision
    the LMM agent makes for a reply it cannot use."""

    name = "scripted"
    privileged: ClassVar[bool] = False

    def __init__(self, scripts: dict[str, list[str]]) -> None:
        self.scripts = scripts
        self._steps: Iterator[str] = iter(())

    def reset(self, task: Any) -> None:
        self._steps = iter(self.scripts[task.id])

    def act(self, observation: Any) -> AgentDecision:
        action, magnitude, answer = _parse(next(self._steps))
        try:
            command = ActionCommand(parse_action(action), parse_magnitude(magnitude), answer)
        except UnknownActionError:
            return AgentDecision(ActionCommand(FALLBACK_ACTION), thought="?", valid=False)
        return AgentDecision(command)


def _moves_until_still(city_dir: Path, suite_dir: Path, task_id: str, first: list[str]) -> int:
    """How many W after the ``first`` steps still move the walker on task ``task_id``'s start
    (the eval worker's seed) before it stands at a junction, where W no longer moves it."""
    import city360
    from city360.tasks.suite import load_suite

    epsilon_m = StopConfig().position_epsilon_m
    task = load_suite(suite_dir).task(task_id)
    with city360.make(city_dir, privileged_info=True, renderer="cpu", prefetch=False) as env:
        _, info = env.reset(seed=task_seed(0, task_id), options={"task": task})
        for step in first:
            action = FALLBACK_ACTION.value if step == INVALID else _parse(step)[0]
            _, _, _, _, info = env.step(action)
        moves = 0
        while moves < StopConfig().step_limit:
            before = (info["pose"]["x_m"], info["pose"]["y_m"])
            _, _, _, _, info = env.step("W")
            if math.dist(before, (info["pose"]["x_m"], info["pose"]["y_m"])) <= epsilon_m:
                assert info["at_junction"], f"W on task {task_id!r} ends at a dead end"
                return moves
            moves += 1
    msg = f"W never stops moving on task {task_id!r}; pick a task that walks into a junction"
    raise AssertionError(msg)


@pytest.fixture(scope="module")
def scripts(built_city: Path, built_suite: Path) -> dict[str, list[str]]:
    """Each case's steps on the built city, with :data:`WALK_TO_THE_JUNCTION` counted out."""
    out: dict[str, list[str]] = {}
    for case, (task_id, steps, _) in SCRIPTS.items():
        if WALK_TO_THE_JUNCTION in steps:
            first = steps[: steps.index(WALK_TO_THE_JUNCTION)]
            moves = _moves_until_still(built_city, built_suite, task_id, first)
            limit = StopConfig().step_limit - StopConfig().stagnation_steps - len(first)
            assert 0 < moves < limit, f"task {task_id!r}: {moves} W to its junction"
            steps = first + ["W"] * (moves + StopConfig().stagnation_steps)
        out[case] = steps
    return out


@pytest.fixture(scope="module")
def eval_runs(
    built_city: Path,
    built_suite: Path,
    scripts: dict[str, list[str]],
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[dict[str, EpisodeResult], Path]:
    """Every script run by an eval worker; the rows by case and the run folder."""
    run_dir = tmp_path_factory.mktemp("scripted")
    by_task = {SCRIPTS[case][0]: steps for case, steps in scripts.items()}
    spec = WorkerSpec(
        city_dir=str(built_city),
        suite_dir=str(built_suite),
        run_dir=str(run_dir),
        agent={"kind": "scripted"},
        env_options={"map": True, "renderer": "cpu", "prefetch": False},
        stop=dataclasses.asdict(StopConfig()),
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(episode, "build_agent", lambda *_a, **_k: ScriptedAgent(by_task))
        with EpisodeWorker(spec) as worker:
            rows = {
                case: worker.run(task_id, task_seed(0, task_id))
                for case, (task_id, _, _) in SCRIPTS.items()
            }
    return rows, run_dir


@pytest.fixture(scope="module")
def play_runs(
    built_city: Path,
    built_suite: Path,
    scripts: dict[str, list[str]],
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[dict[str, EpisodeResult], dict[str, list[dict[str, Any]]], Path]:
    """Every script played through the viewer's Play API; rows, responses and the run folder."""
    pytest.importorskip("fastapi", reason="fastapi is needed for the viewer's Play API")
    from fastapi.testclient import TestClient

    from city360.viewer.app import create_app

    paths = make_paths(built_city, built_suite, tmp_path_factory.mktemp("played"))
    responses: dict[str, list[dict[str, Any]]] = {}
    with TestClient(create_app(make_config(paths)), base_url=LOCAL_URL) as client:  # type: ignore[arg-type]
        for case, (task_id, _, _) in SCRIPTS.items():
            steps = scripts[case]
            headers = {"X-City360-Session": f"session-{case}"}
            started = client.post("/api/play/start", headers=headers, json={"task_id": task_id})
            assert started.status_code == 200, started.text
            responses[case] = []
            for step in steps:
                action, magnitude, answer = _parse(step)
                body = {"action": action, "magnitude": magnitude, "answer": answer}
                reply = client.post("/api/play/step", headers=headers, json=body)
                assert reply.status_code == 200, reply.text
                responses[case].append(reply.json())
    by_task = {row.task_id: row for row in read_results(paths.run_dir / "results.csv")}
    rows = {case: by_task[task_id] for case, (task_id, _, _) in SCRIPTS.items()}
    return rows, responses, paths.run_dir


def _comparable(row: EpisodeResult) -> dict[str, str]:
    return {k: v for k, v in row.to_row().items() if k not in TIMING}


def _log(run_dir: Path, task_id: str) -> list[dict[str, Any]]:
    text = (run_dir / "episodes" / f"{task_id}.jsonl").read_text(encoding="utf-8")
    records = [json.loads(line) for line in text.splitlines()]
    for record in records:
        record.pop("think_s", None)
        record.pop("agent", None)
        record.pop("thought", None)
        if record.get("valid") is False:
            record.pop("feedback")  # a person is also told why the action did not count
    return records


@pytest.mark.parametrize("case", list(SCRIPTS))
def test_eval_and_play_record_the_same_episode(
    case: str, scripts: dict[str, list[str]], eval_runs, play_runs
) -> None:
    task_id, _, ending = SCRIPTS[case]
    steps = scripts[case]
    agent_rows, agent_dir = eval_runs
    human_rows, responses, human_dir = play_runs
    agent, human = agent_rows[case], human_rows[case]
    assert (agent.status, agent.steps) == (ending, len(steps))
    assert (human.agent, agent.agent) == ("human", "scripted")
    assert _comparable(human) == _comparable(agent)
    assert human.invalid_actions == steps.count(INVALID) > 0
    assert _log(human_dir, task_id) == _log(agent_dir, task_id)
    # the page saw the episode end on the last step, not before
    assert [r["done"] for r in responses[case]] == [False] * (len(steps) - 1) + [True]
    assert responses[case][-1]["outcome"]["status"] == ending
    assert responses[case][-1]["step"] == len(steps)


def test_answers_score_and_stop_rules_hold(eval_runs) -> None:
    rows, _ = eval_runs
    assert rows["answer-after-a-left-turn"].is_correct
    assert rows["answer-after-a-left-turn"].spl is not None
    assert 0.0 < rows["answer-after-a-left-turn"].spl <= 1.0
    assert rows["answer-straight-on"].evaluation_score == 1.0
    assert rows["answer-wrong-cell"].is_correct is False
    assert rows["answer-wrong-cell"].user_answer == "x:0 y:0"
    away = rows["walking-away-from-the-goal"]
    assert (away.spl, away.scored_success, away.evaluation_score) == (0.0, False, 0.0)


def test_an_invalid_action_is_a_fallback_step_the_player_is_told_about(play_runs) -> None:
    _, responses, _ = play_runs
    invalid = responses["answer-wrong-cell"][1]
    assert invalid["step"] == 2
    assert invalid["feedback"].startswith(
        "unknown action 'WW'; expected one of W, S, A, D, Q, E, LEFT, RIGHT, UP, ANSWER. "
        "Did you mean 'W'? Did S instead. "
    )


def test_a_recorder_refuses_steps_outside_its_episode(
    built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    import city360
    from city360.streets import StreetGraph
    from city360.tasks.suite import load_suite

    task = load_suite(built_suite).task("rel-002")
    with city360.make(built_city, privileged_info=True, renderer="cpu") as env:
        recorder = EpisodeRecorder(
            env,
            task,
            graph=StreetGraph.open(built_city),
            stop=StopConfig(),
            log_path=tmp_path / "rel-002.jsonl",
            agent="test",
            seed=0,
        )
        with pytest.raises(ConfigError, match=r"start\(\) the episode of task 'rel-002' before"):
            recorder.step("W")
        recorder.start()
        assert recorder.step("ANSWER", None, "the bakery").done
        with pytest.raises(ConfigError, match="the episode of task 'rel-002' is over"):
            recorder.step("W")
        assert recorder.end(StopReason.INTERRUPTED).status == "answered"  # over: no change
