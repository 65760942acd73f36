"""Crossings from one video to another where the frames at the cut look sideways, and the
agreement of the controller with the graph oracle of the tasks (``tasks.walk``) there.

Regression: on the demo city the oracle solved every task on the graph but four in the
simulator: after UP at a junction where the arriving video was filmed mid-turn, the view kept
the cut frame's sideways bearing, the yaw came out beyond 90 degrees, and W walked the twin
backwards (not moving, at the junction) instead of on along the street.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from city360.simulator.config import EnvConfig
from city360.simulator.env import CityEnv
from city360.streets import StreetGraph
from city360.tasks.walk import oracle_walk
from tests.simulator.hook import build_hook_city


@pytest.fixture(scope="module")
def turning_junction(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Junction whose arriving video's cut frame looks east (80 deg) while the street runs
    south: the straight-on branch leaves south (turn 0)."""
    return build_hook_city(tmp_path_factory.mktemp("hook-junction"), cut_heading_deg=80.0,
                           junction=True)  # fmt: skip


@pytest.fixture(scope="module")
def sharp_bend(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A link node (videos change) at a 135-degree bend."""
    return build_hook_city(tmp_path_factory.mktemp("hook-bend"), cut_heading_deg=180.0,
                           junction=False)  # fmt: skip


def _env(city: Path) -> CityEnv:
    config = EnvConfig(
        map=False, privileged_info=True, renderer="cpu", view_width=32, view_height=24
    )  # fmt: skip
    return CityEnv(city, config)


@pytest.fixture
def junction_env(turning_junction: Path) -> Iterator[CityEnv]:
    with _env(turning_junction) as env:
        yield env


@pytest.fixture
def bend_env(sharp_bend: Path) -> Iterator[CityEnv]:
    with _env(sharp_bend) as env:
        yield env


def test_up_after_a_mid_turn_cut_frame_walks_on_forwards(junction_env: CityEnv) -> None:
    junction_env.reset(options={"segment": "a1", "offset_m": 25.0})
    *_, info = junction_env.step("W", "LARGE")
    assert (info["segment"], info["offset_m"]) == ("a1", pytest.approx(30.0))
    assert info["pose"]["view_bearing_deg"] == pytest.approx(80.0)  # the cut frame's view
    *_, info = junction_env.step("UP")
    assert info["segment"] == "b1"
    assert info["pose"]["yaw_deg"] == pytest.approx(0.0)  # the graph's turn is 0
    obs, _, _, _, info = junction_env.step("W", "MEDIUM")
    assert (info["segment"], info["offset_m"]) == ("b1", pytest.approx(5.0))
    assert info["moved_m"] == pytest.approx(5.0)
    assert "W does not move" not in obs["feedback"]


def test_up_keeps_the_view_by_the_graphs_turn(junction_env: CityEnv) -> None:
    """UP keeps the absolute view as the graph measures turns: yaw changes by -turn_deg."""
    junction_env.reset(options={"segment": "c1_r", "offset_m": 30.0, "yaw_deg": 20.0})
    *_, info = junction_env.step("LEFT")  # turns the body: yaw kept
    assert (info["segment"], info["pose"]["yaw_deg"]) == ("b1", pytest.approx(20.0))
    junction_env.reset(options={"segment": "b1_r", "offset_m": 30.0, "yaw_deg": 20.0})
    *_, info = junction_env.step("UP")
    assert (info["segment"], info["pose"]["yaw_deg"]) == ("a1_r", pytest.approx(20.0))


def test_w_through_a_sharp_bend_keeps_walking_forwards(bend_env: CityEnv) -> None:
    bend_env.reset(options={"segment": "a1", "offset_m": 25.0, "yaw_deg": 10.0})
    *_, info = bend_env.step("W", "LARGE")
    assert (info["segment"], info["offset_m"]) == ("c1", pytest.approx(5.0))
    assert info["pose"]["yaw_deg"] == pytest.approx(10.0)  # the view turned with the body
    *_, info = bend_env.step("W", "LARGE")
    assert (info["segment"], info["offset_m"]) == ("c1", pytest.approx(15.0))


def _graph_state(
    graph: StreetGraph, state: tuple[str, float], action: str, magnitude: str | None
) -> tuple[str, float]:
    if action == "W":
        step = {"SMALL": 2.0, "MEDIUM": 5.0, "LARGE": 10.0}[str(magnitude)]
        segment, offset, _ = graph.forward(state[0], state[1], step)
        return segment, offset
    return next(t.edge for t in graph.segment(state[0]).choices if t.label == action), 0.0


@pytest.mark.parametrize(
    ("city", "goal"),
    [("turning_junction", (0.0, -24.0)), ("sharp_bend", (17.0, 17.0))],
)
def test_oracle_plan_moves_identically_in_the_simulator(
    city: str, goal: tuple[float, float], request: pytest.FixtureRequest
) -> None:
    """Every move of the graph oracle's plan lands the simulator where the graph says."""
    root: Path = request.getfixturevalue(city)
    graph = StreetGraph.open(root)
    result = oracle_walk(graph, ("a1", 3.0), goal, 2.0, step_limit=30)
    assert result.reachable
    assert result.segments[0] == "a1"
    assert result.segments[-1] == result.final[0]  # type: ignore[index]
    with _env(root) as env:
        env.reset(options={"segment": "a1", "offset_m": 3.0})
        expected = ("a1", 3.0)
        for action, magnitude in result.actions:
            *_, info = env.step(action, magnitude)
            expected = _graph_state(graph, expected, action, magnitude)
            assert info["segment"] == expected[0], (action, magnitude)
            assert info["offset_m"] == pytest.approx(expected[1], abs=0.02)
        x, y = info["pose"]["x_m"], info["pose"]["y_m"]
        assert ((x - goal[0]) ** 2 + (y - goal[1]) ** 2) ** 0.5 <= 2.5
