"""The stable-baselines3 adapter: same-step autoreset over city360's vector env, masks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("stable_baselines3", reason="needs stable-baselines3 (city360[train])")

import city360
from city360.train.sb3_vec import Sb3CityVecEnv
from tests.simulator.handmade import ARM_M
from tests.simulator.test_rewards import nav_task

SMALL = {"view_width": 24, "view_height": 16, "map": False, "renderer": "cpu"}


def test_an_ended_episode_resets_at_once_and_keeps_its_last_observation(
    plus_city: Path,
) -> None:
    task = nav_task(goal_xy=(0.0, ARM_M - 5.0))
    vec = city360.make_vec(
        plus_city, num_envs=2, tasks=[task], goal=True, text=False, layout="chw", **SMALL
    )
    env = Sb3CityVecEnv(vec, view=True)
    env.seed(0)
    obs = env.reset()
    assert set(obs) == {"goal", "branches", "legal", "view"}
    assert env.observation_space.contains({k: v[0] for k, v in obs.items()})
    assert env.action_masks().shape == (2, 7)
    obs, rewards, dones, infos = env.step(np.array([0, 6]))  # W LARGE; ANSWER at the start
    assert dones.tolist() == [False, True]
    assert rewards[1] == pytest.approx(1.0)
    assert infos[1]["episode"] == {"r": pytest.approx(1.0), "l": 1, "t": infos[1]["episode"]["t"]}
    assert infos[1]["TimeLimit.truncated"] is False
    terminal = infos[1]["terminal_observation"]
    assert terminal["goal"][:2] == pytest.approx(obs["goal"][1][:2])  # ANSWER did not move
    assert "terminal_observation" not in infos[0]
    obs, _, dones, _ = env.step(np.array([6, 0]))
    assert dones.tolist() == [True, False]  # sub-env 1 walks on: its reset happened already
    assert env.env_method("action_masks", indices=[1])[0].shape == (7,)
    env.close()
