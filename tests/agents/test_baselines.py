"""Random and oracle baselines, on the city built by the real pipeline (synth -> ingest ->
build -> tasks generate) in the real simulator."""

from __future__ import annotations

import numpy as np
import pytest

from city360.agents.oracle import OracleAgent
from city360.agents.random_agent import RandomAgent
from city360.errors import ConfigError, ResetNeededError, TaskError
from city360.simulator.actions import Action
from tests.agents.conftest import AgentView, BuiltWorld
from tests.agents.episodes import run_episode


def test_random_agent_is_seeded_and_uses_offered_branches() -> None:
    obs = {"branch_mask": np.array([1, 0, 0], np.int8), "step": 0, "feedback": ""}
    a, b = RandomAgent(seed=7), RandomAgent(seed=7)
    seq_a = [a.act(obs).command for _ in range(200)]
    seq_b = [b.act(obs).command for _ in range(200)]
    assert seq_a == seq_b
    assert seq_a != [RandomAgent(seed=8).act(obs).command for _ in range(200)]
    actions = {c.action for c in seq_a}
    assert Action.LEFT in actions
    assert not actions & {Action.UP, Action.RIGHT}
    assert Action.ANSWER in actions
    with pytest.raises(ConfigError, match=r"`answer_probability` must be in \[0, 1\], got 2"):
        RandomAgent(answer_probability=2)


@pytest.mark.slow
def test_oracle_solves_every_task(built_world: BuiltWorld) -> None:
    world = built_world
    oracle = OracleAgent(world.city, move_m=world.env.config.move_m)
    assert len(world.navigation()) >= 8
    for task in world.tasks:
        episode = run_episode(world.env, oracle, task)
        assert episode.success, (task.id, episode)
        if getattr(task.truth, "goal", None) is None:
            assert episode.steps == 1  # answers the hidden truth at once


@pytest.mark.slow
def test_random_agent_does_not_solve_navigation(built_world: BuiltWorld) -> None:
    world = built_world
    results = [
        run_episode(world.env, AgentView(RandomAgent(), world.suite_dir), task, seed=k)
        for k, task in enumerate(world.navigation())
    ]
    assert sum(r.success for r in results) <= len(results) // 4
    assert any(r.answered for r in results)


@pytest.mark.slow
def test_oracle_needs_the_full_task(built_world: BuiltWorld) -> None:
    oracle = OracleAgent(built_world.city)
    with pytest.raises(ResetNeededError, match="before reset"):
        oracle.act({})
    task = built_world.navigation()[0]
    with pytest.raises(TaskError, match="needs the full task with its hidden truth"):
        oracle.reset(task.agent_view())


@pytest.mark.slow
def test_oracle_replans_when_pushed_off_its_plan(built_world: BuiltWorld) -> None:
    world = built_world
    env = world.env
    task = world.family("MapNavigation")[0]
    oracle = OracleAgent(world.city, move_m=env.config.move_m)
    obs, info = env.reset(options={"task": task})
    oracle.reset(task)
    obs, _, _, _, info = env.step("D", "LARGE")  # a detour the plan did not expect ...
    obs, _, _, _, info = env.step("W", "SMALL")  # ... and a move
    for _ in range(task.step_limit - 2):
        decision = oracle.act({**obs, "info": info})
        obs, _, terminated, truncated, info = env.step(decision.command)
        if terminated or truncated:
            break
    assert decision.action is Action.ANSWER
    assert oracle.replans >= 1
    goal = task.truth.goal
    x, y = info["pose"]["x_m"], info["pose"]["y_m"]
    assert ((x - goal.x_m) ** 2 + (y - goal.y_m) ** 2) ** 0.5 <= goal.threshold_m


@pytest.mark.slow
def test_oracle_turns_round_when_the_goal_is_behind(built_world: BuiltWorld) -> None:
    """Start each map task on the twin of its start street (same place, facing the other
    way): the oracle's best plan then often begins by turning round, and it still arrives."""
    world = built_world
    oracle = OracleAgent(world.city, move_m=world.env.config.move_m)
    turned = 0
    for task in world.family("MapNavigation"):
        start = task.start
        twin = oracle.graph.segment(start.segment).twin
        if twin is None:
            continue
        x, y = oracle.graph.position(start.segment, start.offset_m)
        offset, _ = oracle.graph.segment(twin).project(x, y)
        flipped = task.model_copy(
            update={"start": start.model_copy(update={"segment": twin, "offset_m": offset})}
        )
        oracle.reset(flipped)
        turned += oracle._plan[:2] == [("D", "LARGE"), ("D", "LARGE")]
        episode = run_episode(world.env, oracle, flipped)
        assert episode.success, (task.id, episode)
    assert turned >= 1
