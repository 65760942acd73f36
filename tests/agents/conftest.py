"""Fixtures of the agents tests: the city built by the real pipeline (``built_city``,
``built_suite`` from tests/fixtures/built.py) opened in the simulator with privileged info, as
the eval runner does, so baselines are tested on what users get."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


@dataclass
class BuiltWorld:
    city: Path
    suite_dir: Path
    tasks: list[Any]
    env: Any

    def navigation(self) -> list[Any]:
        return [t for t in self.tasks if getattr(t.truth, "goal", None) is not None]

    def family(self, name: str) -> list[Any]:
        return [t for t in self.tasks if t.family.value == name]


@pytest.fixture(scope="session")
def built_world(built_city: Path, built_suite: Path) -> Iterator[BuiltWorld]:
    import city360
    from city360.tasks.suite import load_suite

    env = city360.make(
        built_city,
        privileged_info=True,
        renderer="cpu",
        view_width=160,
        view_height=120,
        prefetch=False,
    )
    try:
        yield BuiltWorld(built_city, built_suite, list(load_suite(built_suite)), env)
    finally:
        env.close()


class AgentView:
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
