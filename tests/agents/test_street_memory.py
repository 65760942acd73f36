"""The sign reader's street memory: dead reckoning from the arrow and the feedback, visit
counts, and the least-walked branch at a junction."""

from __future__ import annotations

import numpy as np
import pytest

from city360.agents.street_memory import StreetMemory, walked_metres
from city360.errors import ConfigError
from city360.maps.draw import draw_arrow
from city360.simulator.actions import Action


def _observation(view_bearing_deg: float, feedback: str = "") -> dict[str, object]:
    image = np.full((96, 96, 3), 235, np.uint8)
    draw_arrow(image, 48, 48, view_bearing_deg)
    return {"map": image, "feedback": feedback}


def test_walked_metres_sums_the_feedback() -> None:
    assert walked_metres("Walked 10.0 m. You reached a junction") == 10.0
    assert walked_metres("Walked 2.5 m; walked 3 m") == 5.5
    assert walked_metres("Dead end: W does not move") == 0.0
    assert walked_metres("") == 0.0


def test_travel_bearing_is_the_arrow_minus_the_view_yaw() -> None:
    memory = StreetMemory()
    memory.update(_observation(90.0), view_yaw_deg=90.0, at_junction=False)
    assert memory.travel_bearing_deg is not None
    assert abs((memory.travel_bearing_deg + 180) % 360 - 180) < 6  # looking right, walking north
    memory.update(_observation(90.0, "Walked 10.0 m"), view_yaw_deg=90.0, at_junction=False)
    x, y = memory.position_m
    assert abs(x) < 1.5
    assert 8.5 < y < 10.5


def test_the_branch_back_down_a_walked_street_is_not_taken() -> None:
    memory = StreetMemory()
    memory.update(_observation(0.0), view_yaw_deg=0.0, at_junction=False)
    for _ in range(4):  # 40 m north
        memory.update(_observation(0.0, "Walked 10.0 m"), view_yaw_deg=0.0, at_junction=False)
    memory.update(_observation(180.0), view_yaw_deg=0.0, at_junction=True)  # facing south now
    assert memory.visits_toward(180.0) > 0
    assert memory.visits_toward(90.0) == 0
    offered = (Action.LEFT, Action.UP, Action.RIGHT)  # east, back south, west
    for seed in range(8):
        choice = memory.least_walked(offered, np.random.default_rng(seed))
        assert choice in (Action.LEFT, Action.RIGHT)
    chosen = {memory.least_walked(offered, np.random.default_rng(s)) for s in range(16)}
    assert chosen == {Action.LEFT, Action.RIGHT}  # ties are broken at random, both ways


def test_without_a_heading_any_branch_may_be_taken() -> None:
    memory = StreetMemory()
    chosen = {
        memory.least_walked((Action.LEFT, Action.RIGHT), np.random.default_rng(s))
        for s in range(16)
    }
    assert chosen == {Action.LEFT, Action.RIGHT}
    with pytest.raises(ConfigError, match="at least one offered branch"):
        memory.least_walked((), np.random.default_rng(0))


def test_bad_options_are_refused() -> None:
    with pytest.raises(ConfigError, match="cell_m"):
        StreetMemory(cell_m=0.0)
    with pytest.raises(ConfigError, match="look_ahead_m"):
        StreetMemory(look_ahead_m=())
