"""Observation options and start poses: multi-view, route guidance, tasks, lat/lon starts."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pytest

from city360.simulator.arrows import ROUTE_RGB
from tests.simulator.conftest import EnvFactory
from tests.simulator.handmade import ARM_M
from tests.simulator.test_controller import bearing_close, view_bearing_from_pixels


def test_multiview_faces_turn_with_travel(make_env: EnvFactory) -> None:
    env = make_env(multiview=True, multiview_size=32, arrows=False)
    obs, _ = env.reset(options={"segment": "ew_a", "offset_m": 5.0, "yaw_deg": 45.0})
    views = obs["views"]
    assert views.shape == (6, 32, 32, 3)
    assert views.dtype == np.uint8
    for face, offset in zip(range(4), (0.0, 90.0, 180.0, -90.0), strict=True):
        # faces are relative to travel (east), whatever the view yaw
        assert bearing_close(view_bearing_from_pixels(views[face]), 90.0 + offset)
    # straight down sees only ground, straight up only sky
    grey = views[5].astype(int)
    assert np.abs(grey[..., 0] - grey[..., 1]).max() <= 3
    assert np.abs(views[4].astype(int)[..., 0] - views[4].astype(int)[..., 2]).max() > 50


def _route_pixels(view: np.ndarray) -> int:
    return int(np.all(np.abs(view.astype(int) - ROUTE_RGB) <= 2, axis=-1).sum())


def test_route_guidance_draws_the_route_ahead(make_env: EnvFactory) -> None:
    env = make_env(route_guidance=True, arrows=False)
    obs, _ = env.reset(options={"segment": "ns_a", "offset_m": 20.0, "route": ["ns_a", "ew_b"]})
    assert _route_pixels(obs["view"]) > 20
    # the route turns east at the junction: looking there shows it, looking west does not
    obs, *_ = env.step("W", "LARGE")
    obs, *_ = env.step("A", "LARGE")
    assert _route_pixels(obs["view"]) > 20
    obs, *_ = env.step("D", "LARGE")
    obs, *_ = env.step("D", "LARGE")
    assert _route_pixels(obs["view"]) == 0
    # off the route without a goal: no ribbon, and the agent is told
    obs, *_ = env.step("LEFT")  # takes ew_b: on the route again
    assert "off the route" not in obs["feedback"]
    env.reset(options={"segment": "ew_a", "offset_m": 5.0, "route": ["ns_a", "ew_b"]})
    obs, *_ = env.step("S")
    assert _route_pixels(obs["view"]) == 0
    assert "off the route" in obs["feedback"]


def test_route_guidance_replans_to_a_goal(make_env: EnvFactory) -> None:
    env = make_env(route_guidance=True, arrows=False)
    goal = {"x_m": 20.0, "y_m": 0.0}  # on the east arm
    obs, _ = env.reset(options={"segment": "ns_a", "offset_m": 10.0, "goal": goal})
    assert _route_pixels(obs["view"]) > 20
    assert env.route == ["ns_a", "ew_b"]
    # walking away from the goal: the plan turns round onto the twin
    env.reset(options={"segment": "ns_a_r", "offset_m": 5.0, "goal": goal})
    assert env.route is not None
    assert env.route[0] == "ns_a_r"
    assert env.route[-1] == "ew_b"


@dataclass
class _Start:
    segment: str
    offset_m: float
    yaw_deg: float = 0.0


@dataclass
class _Truth:
    route: list[str] = field(default_factory=list)


@dataclass
class _Task:
    start: _Start
    step_limit: int
    truth: _Truth


def test_task_gives_start_step_limit_and_route(make_env: EnvFactory) -> None:
    env = make_env(route_guidance=True)
    task = _Task(_Start("ew_a", 4.0, yaw_deg=-30.0), 3, _Truth(route=["ew_a", "ns_b"]))
    _, info = env.reset(options={"task": task})
    assert info["segment"] == "ew_a"
    assert info["offset_m"] == 4.0
    assert info["pose"]["yaw_deg"] == -30.0
    assert info["step_limit"] == 3
    truncated = False
    for _ in range(3):
        *_, truncated, info = env.step("S")
    assert truncated
    # a dict works as well as an object
    _, info = env.reset(options={"task": {"start": {"segment": "ns_b", "offset_m": 1.0}}})
    assert info["segment"] == "ns_b"
    assert info["step_limit"] is None


def test_start_from_lat_lon_and_heading(make_env: EnvFactory) -> None:
    env = make_env()
    lat, lon = env.world.latlon(0.3, 12.2)
    _, info = env.reset(options={"lat": lat, "lon": lon, "heading_deg": 10.0})
    assert info["segment"] == "ns_a_r"  # heading north on the north arm
    assert info["pose"]["y_m"] == pytest.approx(12.0)
    assert info["pose"]["view_bearing_deg"] == pytest.approx(10.0)
    _, info = env.reset(options={"x_m": 0.0, "y_m": 12.2, "heading_deg": 185.0})
    assert info["segment"] == "ns_a"
    assert info["pose"]["yaw_deg"] == pytest.approx(5.0)
    _, info = env.reset(options={"x_m": -7.0, "y_m": 0.4})
    assert info["segment"] in {"ew_a", "ew_a_r"}
    assert info["offset_m"] == pytest.approx(ARM_M - 7.0 if info["segment"] == "ew_a" else 7.0)


def test_location_map_follows_the_agent(make_env: EnvFactory) -> None:
    size = 256
    env = make_env(map=True, map_size=size, map_scale_m_per_px=0.5)
    obs, _ = env.reset(options={"segment": "ns_a", "offset_m": 10.0})
    first = obs["map"]
    assert first.shape == (size, size, 3)
    assert first.dtype == np.uint8
    centre = (size - 1) / 2

    def arrow_points(image: np.ndarray) -> str:
        """Which way the red arrowhead centred on the agent points: its tip reaches further
        from the centre than its barbs and notch."""
        ys, xs = np.nonzero((image[..., 0] > 200) & (image[..., 1] < 60) & (image[..., 2] < 60))
        assert xs.size > 30
        assert math.hypot(xs.mean() - centre, ys.mean() - centre) < 4
        reach = {
            "north": centre - ys.min(),
            "south": ys.max() - centre,
            "east": xs.max() - centre,
            "west": centre - xs.min(),
        }
        return max(reach, key=lambda side: reach[side])

    assert arrow_points(first) == "south"  # facing travel
    # looking up and down changes nothing on the map; each observation has its own copy
    for action in ("Q", "E"):
        first[:8, :8] = 0
        obs, *_ = env.step(action, "SMALL")
        assert obs["map"] is not first
        assert arrow_points(obs["map"]) == "south"
        assert obs["map"][:8, :8].any()
        first = obs["map"]
    obs, *_ = env.step("A", "LARGE")
    assert arrow_points(obs["map"]) == "east"  # the view, not travel
    # walking moves the map under the agent
    before = obs["map"]
    obs, *_ = env.step("W", "LARGE")
    assert not np.array_equal(before, obs["map"])
