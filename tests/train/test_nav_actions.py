"""The navigation policy's action set and observation."""

from __future__ import annotations

import numpy as np
import pytest

from city360.errors import ConfigError
from city360.simulator.actions import Action
from city360.train.nav_actions import (
    GOAL_SCALE_M,
    NAV_ACTIONS,
    env_actions,
    legal_actions,
    policy_observation,
    policy_observation_space,
)

ENV_ACTIONS = list(Action)


def test_env_actions_map_indices_to_the_env_action_and_magnitude() -> None:
    batch = env_actions([0, 1, 6])
    assert batch["action"].tolist() == [ENV_ACTIONS.index(a) for a in ("W", "A", "ANSWER")]
    assert batch["magnitude"].tolist() == [3, 3, 0]  # LARGE, LARGE, default
    assert batch["answer"] == ("here",) * 3


def test_env_actions_refuse_an_index_out_of_range() -> None:
    with pytest.raises(ConfigError) as caught:
        env_actions([0, 7])
    assert str(caught.value) == "policy actions must be in 0..6, got [0, 7]"


def test_legal_actions_follow_the_env_mask() -> None:
    mask = np.zeros((2, len(ENV_ACTIONS)), np.int8)
    mask[:, ENV_ACTIONS.index(Action.ANSWER)] = 1
    mask[0, ENV_ACTIONS.index(Action.W)] = 1
    mask[1, ENV_ACTIONS.index(Action.LEFT)] = 1
    legal = legal_actions(mask)
    names = [a.value for a, _ in NAV_ACTIONS]
    assert [names[i] for i in np.flatnonzero(legal[0])] == ["W", "ANSWER"]
    assert [names[i] for i in np.flatnonzero(legal[1])] == ["LEFT", "ANSWER"]


def test_policy_observation_scales_the_goal_and_fits_its_space() -> None:
    mask = np.ones((1, len(ENV_ACTIONS)), np.int8)
    obs = {
        "goal": np.array([[-25.0, 100.0, 1.0]], np.float32),
        "branch_mask": np.array([[1, 0, 1]], np.int8),
        "action_mask": mask,
        "view": np.zeros((1, 1, 84, 84), np.uint8),
    }
    out = policy_observation(obs, view=False)
    assert out["goal"].tolist() == [[-25.0 / GOAL_SCALE_M, 100.0 / GOAL_SCALE_M, 1.0]]
    assert out["branches"].tolist() == [[1.0, 0.0, 1.0]]
    assert "view" not in out
    space = policy_observation_space((1, 84, 84))
    with_view = policy_observation(obs, view=True)
    assert space.contains({key: value[0] for key, value in with_view.items()})


def test_policy_observation_needs_the_goal_key() -> None:
    with pytest.raises(ConfigError) as caught:
        policy_observation({"branch_mask": np.zeros((1, 3))}, view=False)
    assert "`goal=True`" in str(caught.value)
