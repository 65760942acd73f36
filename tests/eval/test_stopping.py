from __future__ import annotations

import pytest

from city360.errors import ConfigError
from city360.eval.stopping import StopConfig, StopMonitor, StopReason


def test_step_limit() -> None:
    monitor = StopMonitor(StopConfig(step_limit=3))
    monitor.start(0, 0)
    assert monitor.update("W", 1, 0) is None
    assert monitor.update("D", 1, 0) is None
    assert monitor.update("W", 2, 0) is StopReason.STEP_LIMIT


def test_stagnation_needs_identical_actions_without_moving() -> None:
    monitor = StopMonitor(StopConfig(stagnation_steps=3))
    monitor.start(0, 0)
    assert monitor.update("D", 0, 0) is None
    assert monitor.update("D", 0, 0) is None
    assert monitor.update("A", 0, 0) is None  # a different action resets the streak
    assert monitor.update("A", 0, 0) is None
    assert monitor.update("A", 0, 0) is StopReason.STAGNATION
    moving = StopMonitor(StopConfig(stagnation_steps=2))
    moving.start(0, 0)
    assert moving.update("W", 1, 0) is None
    assert moving.update("W", 2, 0) is None  # identical but moving: fine


def test_away_from_goal_only_when_enabled_and_counts_consecutive_moves() -> None:
    monitor = StopMonitor(StopConfig(away_steps=2, away_from_goal=True))
    monitor.start(0, 0, distance_to_goal_m=10)
    assert monitor.update("W", 1, 0, distance_to_goal_m=11) is None
    assert monitor.update("W", 2, 0, distance_to_goal_m=9) is None  # closer: resets
    assert monitor.update("W", 3, 0, distance_to_goal_m=10) is None
    assert monitor.update("D", 3, 0, distance_to_goal_m=10) is None  # turning is not a move
    assert monitor.update("W", 4, 0, distance_to_goal_m=12) is StopReason.AWAY_FROM_GOAL
    disabled = StopMonitor(StopConfig(away_steps=1))
    disabled.start(0, 0, distance_to_goal_m=1)
    assert disabled.update("W", 5, 0, distance_to_goal_m=6) is None


def test_bad_config() -> None:
    with pytest.raises(ConfigError, match="`step_limit` must be >= 1, got 0"):
        StopConfig(step_limit=0)
