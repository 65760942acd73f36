"""No observation gives an answer away (issue 16): for every family, what an unprivileged agent
sees in an eval episode — observations, the task's prompt and images, feedback, asset file
names — carries nothing of the hidden truth; and a "map-matching" agent that only compares the
location map with the grid map does no better than a random guess on Localization."""

from __future__ import annotations

import dataclasses
import random
import re
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from city360.agents.base import AgentDecision
from city360.eval import episode
from city360.eval.episode import EpisodeWorker
from city360.eval.specs import WorkerSpec, task_seed
from city360.eval.stopping import StopConfig
from city360.simulator.actions import Action, ActionCommand, Magnitude
from city360.tasks.schema import Family
from city360.tasks.suite import load_suite

AGENT_KEYS = {"view", "map", "branch_mask", "step", "feedback"}
"""Every observation key an unprivileged agent may get (contracts: simulator)."""

WALK = [
    ActionCommand(Action.W, Magnitude.LARGE),
    ActionCommand(Action.D, Magnitude.MEDIUM),
    ActionCommand(Action.LEFT),
    ActionCommand(Action.W, Magnitude.SMALL),
    ActionCommand(Action.S),
]


class WatchingAgent:
    """Walks a few steps, answers, and keeps everything it was shown."""

    name = "watcher"
    privileged: ClassVar[bool] = False

    def __init__(self) -> None:
        self.told: list[Any] = []
        self.seen: list[dict[str, Any]] = []
        self._plan: list[ActionCommand] = []

    def reset(self, task: Any) -> None:
        self.told.append(task)
        self._plan = [*WALK, ActionCommand(Action.ANSWER, answer="x:1 y:1")]

    def act(self, observation: dict[str, Any]) -> AgentDecision:
        self.seen.append(observation)
        return AgentDecision(self._plan.pop(0))


def _worker(city: Path, suite: Path, run_dir: Path, protocol: str, agent: Any) -> EpisodeWorker:
    spec = WorkerSpec(
        city_dir=str(city),
        suite_dir=str(suite),
        run_dir=str(run_dir),
        agent={"kind": "watcher"},
        env_options={"map": True, "renderer": "cpu", "prefetch": False},
        stop=dataclasses.asdict(StopConfig()),
        protocol=protocol,
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(episode, "build_agent", lambda *_a, **_k: agent)
        return EpisodeWorker(spec)


@pytest.fixture(scope="module", params=["default", "reference"])
def watched(request, built_city: Path, built_suite: Path, tmp_path_factory):
    """Every task of the suite played by the watching agent under one protocol."""
    agent = WatchingAgent()
    run_dir = tmp_path_factory.mktemp(f"watched-{request.param}")
    suite = load_suite(built_suite)
    seen: dict[str, tuple[Any, list[dict[str, Any]]]] = {}
    with _worker(built_city, built_suite, run_dir, request.param, agent) as worker:
        for task in suite.tasks:
            start = len(agent.seen)
            worker.run(task.id, task_seed(0, task.id))
            seen[task.id] = (agent.told[-1], agent.seen[start:])
    return suite, seen


def _secrets(task: Any, graph_segments: set[str]) -> list[str]:
    """Texts that would give the task's answer (or the agent's exact place) away."""
    truth = task.truth
    texts = [task.start.segment, *graph_segments]
    goal = getattr(truth, "goal", None)
    if goal is not None:
        texts += [f"{goal.x_m:.1f}", f"{goal.lat:.5f}", f"{goal.lon:.5f}"]
        texts += [str(s) for s in getattr(truth, "route", [])]
    if task.family == Family.LOCALIZATION:
        i, j = truth.cell
        texts += [f"x:{i} y:{j}", f"x:{i - 1} y:{j - 1}", f"{truth.x_m:.1f}"]
    if task.family == Family.RELATIONAL:
        texts.append(task.expected_answer())
    if task.family == Family.LANDMARK_IMAGE:
        texts.append(truth.landmark_name)
    return [t for t in texts if t]


@pytest.mark.parametrize("family", list(Family))
def test_an_unprivileged_agent_sees_nothing_that_gives_the_answer_away(
    watched, family: Family, built_city: Path
) -> None:
    from city360.streets import StreetGraph

    suite, seen = watched
    segments = set(StreetGraph.open(built_city).segments)
    tasks = [t for t in suite.tasks if t.family == family]
    assert tasks
    for task in tasks:
        told, observations = seen[task.id]
        assert observations, task.id
        for obs in observations:
            assert set(obs) <= AGENT_KEYS, (task.id, set(obs) - AGENT_KEYS)
            # Localization: a location map drawn like the grid map would give the cell away
            assert ("map" in obs) == (family != Family.LOCALIZATION), task.id
        said = [told.prompt, told.answer_format, *(str(o["feedback"]) for o in observations)]
        for secret in _secrets(task, segments):
            for text in said:
                if family == Family.LOCALIZATION and secret in told.answer_format:
                    continue  # the fixed example cell of the answer format, the same for all
                assert secret not in text, (task.id, secret, text)
        for image in told.reference_images:
            name = Path(image).name
            assert re.fullmatch(r"(grid_map|[a-z]+-\d{3})(-reference|-default)?\.png", name), name
            for secret in _secrets(task, set()):
                assert secret not in name


@pytest.mark.parametrize("family", list(Family))
def test_what_a_task_tells_does_not_depend_on_its_truth(built_suite: Path, family: str) -> None:
    from city360.tasks.schema import PromptRules

    tasks = [t for t in load_suite(built_suite).tasks if t.family == family]
    first, other = tasks[0], next(t for t in tasks[1:] if t.truth != tasks[0].truth)
    swapped = first.model_copy(update={"truth": other.truth})
    for rules in (PromptRules(), PromptRules(grid_origin=0, state_step_limit=True)):
        assert swapped.agent_view(rules=rules) == first.agent_view(rules=rules)


# --- the map-matching agent --------------------------------------------------------------------


class MapMatchingAgent:
    """Answers Localization by finding its location map inside the task's grid map (template
    matching at the maps' known scales) — no look at the street at all. Without a location map
    it can only guess a cell at random."""

    name = "map-matching"
    privileged: ClassVar[bool] = False

    def __init__(self, city_dir: Path, *, seed: int = 0, metres_per_px: float = 0.5) -> None:
        from city360.maps.citymap import CityMap

        self.city_map = CityMap.open(city_dir)
        self.metres_per_px = metres_per_px
        self.rng = random.Random(seed)
        self.matched = 0
        self.guessed = 0
        self._task: Any = None

    def reset(self, task: Any) -> None:
        self._task = task

    def cell_from_map(self, location_map: np.ndarray, n: int) -> tuple[int, int]:
        import cv2

        grid_image, transform = self.city_map.grid_map_with_transform(n=n)
        scale = self.metres_per_px / transform.metres_per_px
        size = max(8, round(location_map.shape[0] * scale))
        template = cv2.resize(location_map, (size, size), interpolation=cv2.INTER_AREA)
        half = size // 4
        centre = template[half : size - half, half : size - half]  # the trail and arrow vary
        gray = cv2.cvtColor(grid_image, cv2.COLOR_RGB2GRAY)
        match = cv2.matchTemplate(gray, cv2.cvtColor(centre, cv2.COLOR_RGB2GRAY), cv2.TM_CCOEFF)
        _, _, _, (left, top) = cv2.minMaxLoc(match)
        col, row = left + centre.shape[1] / 2, top + centre.shape[0] / 2
        xs, ys = transform.px_to_xy(np.array([col]), np.array([row]))
        return self.city_map.grid.with_n(n).cell_of(float(xs[0]), float(ys[0]), clip=True)

    def answer(self, observation: dict[str, Any], n: int, origin: int) -> str:
        if "map" in observation:
            self.matched += 1
            i, j = self.cell_from_map(observation["map"], n)
        else:
            self.guessed += 1
            i, j = self.rng.randint(1, n), self.rng.randint(1, n)
        return f"x:{i - 1 + origin} y:{j - 1 + origin}"

    def act(self, observation: dict[str, Any]) -> AgentDecision:
        origin = 0 if "counted from 0" in self._task.prompt or "x:0 to" in self._task.prompt else 1
        n = int(re.search(r"(\d+) by \1 grid", self._task.prompt).group(1))  # type: ignore[union-attr]
        text = self.answer(observation, n, origin)
        return AgentDecision(ActionCommand(Action.ANSWER, answer=text))


def test_map_matching_would_read_the_cell_off_a_location_map(
    built_city: Path, built_suite: Path
) -> None:
    """The leak was real: given the location map (outside any protocol), matching it against
    the grid map finds the cell without looking at the street."""
    import city360

    agent = MapMatchingAgent(built_city)
    tasks = [t for t in load_suite(built_suite).tasks if t.family == Family.LOCALIZATION]
    right = 0
    with city360.make(built_city, renderer="cpu", map=True, prefetch=False) as env:
        for task in tasks:
            obs, _ = env.reset(options={"task": task})
            assert "map" in obs
            right += agent.cell_from_map(obs["map"], task.told.grid_size) == tuple(task.truth.cell)
    assert right == len(tasks)


@pytest.mark.parametrize("protocol", ["default", "reference"])
def test_map_matching_scores_no_better_than_random_on_localization(
    built_city: Path, built_suite: Path, tmp_path: Path, protocol: str
) -> None:
    agent = MapMatchingAgent(built_city, seed=7)
    tasks = [t for t in load_suite(built_suite).tasks if t.family == Family.LOCALIZATION]
    with _worker(built_city, built_suite, tmp_path, protocol, agent) as worker:
        rows = [worker.run(task.id, task_seed(0, task.id)) for task in tasks]
    assert (agent.matched, agent.guessed) == (0, len(tasks))  # never had a map to match
    # the same seeded guesses, made without any observation, score exactly the same
    guesser = random.Random(7)
    n = tasks[0].told.grid_size
    guesses = [(guesser.randint(1, n), guesser.randint(1, n)) for _ in tasks]
    random_right = sum(g == tuple(t.truth.cell) for g, t in zip(guesses, tasks, strict=True))
    assert sum(r.scored_success for r in rows) == random_right
    assert all(r.status == "answered" for r in rows)
