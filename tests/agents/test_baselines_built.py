"""Baselines on a city built by the real pipeline (synth -> ingest -> build -> tasks generate),
walked in the real simulator with its real frames and location map."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from city360.agents.map_reader import MapReaderAgent
from city360.agents.oracle import OracleAgent
from city360.agents.random_agent import RandomAgent
from tests.agents.episodes import run_episode

pytestmark = pytest.mark.slow


class _AgentView:
    """Hands an agent the task as agents see it (prompt, reference image files), while the
    episode loop scores against the full task."""

    def __init__(self, agent: Any, suite_dir: Path) -> None:
        self.agent = agent
        self.suite_dir = suite_dir
        self.privileged = False

    def reset(self, task: Any, seed: int | None = None) -> None:
        view = task.agent_view(suite_root=str(self.suite_dir))
        try:
            self.agent.reset(view, seed=seed)
        except TypeError:
            self.agent.reset(view)

    def act(self, observation: Any) -> Any:
        return self.agent.act(observation)


@pytest.fixture(scope="module")
def built(built_city: Path, built_suite: Path) -> Any:
    import city360
    from city360.tasks.suite import load_suite

    suite = load_suite(built_suite)
    env = city360.make(
        built_city,
        privileged_info=True,
        renderer="cpu",
        view_width=160,
        view_height=120,
        prefetch=False,
    )
    yield built_city, built_suite, list(suite), env
    env.close()


def _navigation(tasks: list[Any]) -> list[Any]:
    return [t for t in tasks if getattr(t.truth, "goal", None) is not None]


def test_oracle_solves_every_task_of_the_built_suite(built: Any) -> None:
    city, _, tasks, env = built
    oracle = OracleAgent(city, move_m=env.config.move_m)
    for task in tasks:
        episode = run_episode(env, oracle, task)
        assert episode.success, (task.id, episode)


def test_random_does_not_solve_navigation(built: Any) -> None:
    _, suite_dir, tasks, env = built
    results = [
        run_episode(env, _AgentView(RandomAgent(), suite_dir), task, seed=k)
        for k, task in enumerate(_navigation(tasks))
    ]
    assert sum(r.success for r in results) <= len(results) // 4


def test_map_reader_beats_random_on_map_navigation(built: Any) -> None:
    _, suite_dir, tasks, env = built
    map_tasks = [t for t in tasks if t.family.value == "MapNavigation"]
    assert map_tasks
    reader = [run_episode(env, _AgentView(MapReaderAgent(), suite_dir), t) for t in map_tasks]
    rand = [
        run_episode(env, _AgentView(RandomAgent(), suite_dir), t, seed=k)
        for k, t in enumerate(map_tasks)
    ]
    assert sum(e.success for e in reader) > sum(e.success for e in rand)
