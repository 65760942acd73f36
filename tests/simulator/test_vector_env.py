"""The vector env: Gymnasium's vector API, one shared world, identical trajectories whichever
variant runs a seed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import city360
from city360.errors import ConfigError
from city360.simulator.actions import Action
from city360.simulator.gym_env import CityGymEnv
from city360.simulator.vector_env import CityVectorEnv
from tests.simulator.test_rewards import nav_task

SMALL: dict[str, Any] = {
    "view_width": 24,
    "view_height": 16,
    "map": False,
    "renderer": "cpu",
    "max_steps": 4,
}


def legal_actions(rng: np.random.Generator, masks: np.ndarray) -> dict[str, Any]:
    """One random legal action per sub-env (ANSWER excluded, so episodes truncate)."""
    actions = []
    for mask in masks:
        legal = np.flatnonzero(mask[: len(Action) - 1])
        actions.append(int(rng.choice(legal)))
    n = len(actions)
    return {"action": np.array(actions), "magnitude": np.zeros(n, np.int64), "answer": ("",) * n}


def rollout(env: Any, steps: int, seed: int = 7) -> list[Any]:
    """Observations, rewards and flags of a seeded rollout with random legal actions."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    record: list[Any] = [obs]
    for _ in range(steps):
        obs, reward, terminated, truncated, _ = env.step(legal_actions(rng, obs["action_mask"]))
        record.append((obs, reward, terminated, truncated))
    return record


def test_make_vec_follows_the_vector_api(plus_city: Path) -> None:
    with city360.make_vec(plus_city, num_envs=3, **SMALL) as env:
        assert isinstance(env, CityVectorEnv)
        assert env.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
        obs, infos = env.reset(seed=0)
        assert env.observation_space.contains(obs)
        assert obs["view"].shape == (3, 16, 24, 3)
        assert obs["action_mask"].shape == (3, len(Action))
        assert infos["moved_m"].shape == (3,)
        assert infos["_moved_m"].all()
        rng = np.random.default_rng(0)
        for _ in range(6):
            obs, reward, terminated, truncated, infos = env.step(
                legal_actions(rng, obs["action_mask"])
            )
            assert env.observation_space.contains(obs)
            assert reward.dtype == np.float64
            assert terminated.shape == truncated.shape == (3,)
        assert infos["action_mask"].shape == (3, len(Action))
        # every sub-env walks the same world: one set of frame stores
        assert {id(e.city_env.world) for e in env.envs} == {id(env.world)}


def test_next_step_autoreset(plus_city: Path) -> None:
    with city360.make_vec(plus_city, num_envs=2, **SMALL) as env:
        obs, _ = env.reset(seed=1)
        rng = np.random.default_rng(1)
        truncated = np.zeros(2, bool)
        for _ in range(4):
            obs, _, _, truncated, _ = env.step(legal_actions(rng, obs["action_mask"]))
        assert truncated.all()  # max_steps=4
        obs, reward, terminated, truncated, _ = env.step(legal_actions(rng, obs["action_mask"]))
        assert not truncated.any()
        assert not terminated.any()
        assert (reward == 0).all()
        assert (obs["step"] == 0).all()  # the first observation of the new episodes


def test_sync_matches_gymnasium_sync_and_plain_envs(plus_city: Path) -> None:
    ours = rollout(city360.make_vec(plus_city, num_envs=3, **SMALL), 12)
    theirs_env = SyncVectorEnv(
        [lambda: CityGymEnv(plus_city, prefetch=False, **SMALL) for _ in range(3)]
    )
    theirs = rollout(theirs_env, 12)
    theirs_env.close()
    assert data_equivalence(ours, theirs, exact=True)


@pytest.mark.slow
def test_async_gives_the_same_trajectories(plus_city: Path) -> None:
    sync = city360.make_vec(plus_city, num_envs=2, tasks=[nav_task()], reward="shaped", **SMALL)
    ours = rollout(sync, 8)
    sync.close()
    spawned = city360.make_vec(
        plus_city,
        num_envs=2,
        vectorization_mode="async",
        tasks=[nav_task()],
        reward="shaped",
        **SMALL,
    )
    theirs = rollout(spawned, 8)
    spawned.close()
    assert data_equivalence(ours, theirs, exact=True)


def test_shaped_rewards_in_the_vector_env(plus_city: Path) -> None:
    with city360.make_vec(
        plus_city, num_envs=2, tasks=[nav_task()], reward="shaped", **SMALL
    ) as env:
        env.reset(seed=0)
        walk = list(Action).index(Action.W)
        actions = {"action": np.array([walk, walk]), "magnitude": np.zeros(2, int)}
        actions["answer"] = ("", "")
        _, reward, *_, infos = env.step(actions)
        assert reward == pytest.approx([0.5, 0.5])
        assert infos["reward_terms"]["progress"] == pytest.approx([0.5, 0.5])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"num_envs": 0}, "`num_envs` must be in 1..4096, got 0"),
        ({"num_envs": 2.5}, "`num_envs` must be an integer in 1..4096, got 2.5"),
        ({"vectorization_mode": "ray"}, "`vectorization_mode` must be one of sync, sharded, async"),
        ({"fov": 90}, "unknown config option 'fov'"),
    ],
)
def test_bad_vector_options_say_what_is_wrong(
    plus_city: Path, options: dict[str, Any], message: str
) -> None:
    kwargs = {"num_envs": 2, **options}
    with pytest.raises(ConfigError, match=message):
        city360.make_vec(plus_city, **kwargs, renderer="cpu", map=False)


def test_gymnasium_make_vec_over_the_registered_id(plus_city: Path) -> None:
    env = gymnasium.make_vec(
        "city360.simulator.gym_env:city360/City-v0",
        num_envs=2,
        vectorization_mode="sync",
        city_dir=plus_city,
        **SMALL,
    )
    obs, _ = env.reset(seed=0)
    assert obs["view"].shape == (2, 16, 24, 3)
    env.close()


def test_reset_mask_resets_only_the_masked_sub_envs(plus_city: Path) -> None:
    with city360.make_vec(plus_city, num_envs=2, **SMALL) as envs:
        obs, _ = envs.reset(seed=0, options={"segment": "ns_a", "offset_m": 0.0})
        n = 2
        walk = {"action": np.zeros(n, np.int64), "magnitude": np.zeros(n, np.int64)}
        obs, *_ = envs.step({**walk, "answer": ("",) * n})
        assert obs["step"].tolist() == [1, 1]
        mask = np.array([False, True])
        obs, infos = envs.reset(options={"reset_mask": mask, "segment": "ew_a"})
        assert obs["step"].tolist() == [1, 0]
        assert infos["_action_mask"].tolist() == [False, True]
        obs, *_ = envs.step({**walk, "answer": ("",) * n})
        assert obs["step"].tolist() == [2, 1]  # no autoreset pending for either


@pytest.mark.parametrize(
    ("mask", "message"),
    [
        (
            [True, False],
            "`options['reset_mask']` must be a numpy bool array of shape (2,), got [True, False]",
        ),
        (
            np.array([1, 0]),
            "`options['reset_mask']` must be a numpy bool array of shape (2,), got 'int64(2,)'",
        ),
        (
            np.zeros(2, np.bool_),
            "`options['reset_mask']` must have at least one True (a sub-env to reset)",
        ),
    ],
)
def test_bad_reset_mask_says_what_is_wrong(plus_city: Path, mask: Any, message: str) -> None:
    with city360.make_vec(plus_city, num_envs=2, **SMALL) as envs:
        envs.reset(seed=0)
        with pytest.raises(ConfigError) as caught:
            envs.reset(options={"reset_mask": mask})
        assert str(caught.value) == message


def test_sharded_gives_the_same_trajectories(plus_city: Path) -> None:
    with city360.make_vec(plus_city, num_envs=3, **SMALL) as sync:
        expected = rollout(sync, 9)
    with city360.make_vec(
        plus_city, num_envs=3, vectorization_mode="sharded", num_workers=2, **SMALL
    ) as sharded:
        assert sharded.sizes == [2, 1]
        assert sharded.observation_space == sync.observation_space
        got = rollout(sharded, 9)
        _obs, infos = sharded.reset(seed=3)
        assert infos["moved_m"].shape == (3,)
        assert infos["_moved_m"].all()
    assert data_equivalence(expected, got, exact=True)


def test_sharded_infos_keep_their_masks() -> None:
    from city360.simulator.sharded_vector_env import _join_infos, shard_sizes

    assert shard_sizes(5, 2) == [3, 2]
    assert shard_sizes(2, 4) == [1, 1]  # never an empty shard
    with pytest.raises(ConfigError, match="num_workers"):
        shard_sizes(4, 0)
    left = {"success": np.array([1.0, 0.0]), "_success": np.array([True, False])}
    right = {"moved_m": np.array([2.0]), "_moved_m": np.array([True])}
    joined = _join_infos([left, right], [2, 1])
    assert joined["success"].tolist() == [1.0, 0.0, 0.0]
    assert joined["_success"].tolist() == [True, False, False]
    assert joined["moved_m"].tolist() == [0.0, 0.0, 2.0]
    assert joined["_moved_m"].tolist() == [False, False, True]


def test_num_workers_belongs_to_the_sharded_mode(plus_city: Path) -> None:
    with pytest.raises(ConfigError, match="vectorization_mode='sharded'"):
        city360.make_vec(plus_city, num_envs=2, num_workers=2, **SMALL)


def test_reset_mask_in_the_sharded_mode(plus_city: Path) -> None:
    with city360.make_vec(
        plus_city, num_envs=3, vectorization_mode="sharded", num_workers=2, **SMALL
    ) as envs:
        obs, _ = envs.reset(seed=0, options={"segment": "ns_a", "offset_m": 0.0})
        n = 3
        walk = {"action": np.zeros(n, np.int64), "magnitude": np.zeros(n, np.int64)}
        obs, *_ = envs.step({**walk, "answer": ("",) * n})
        assert obs["step"].tolist() == [1, 1, 1]
        obs, infos = envs.reset(options={"reset_mask": np.array([False, False, True])})
        assert obs["step"].tolist() == [1, 1, 0]  # shard 0 (sub-envs 0, 1) was not asked
        assert infos["_action_mask"].tolist() == [False, False, True]
        obs, infos = envs.reset(options={"reset_mask": np.array([False, True, False])})
        assert obs["step"].tolist() == [1, 0, 0]
        with pytest.raises(ConfigError, match="at least one True"):
            envs.reset(options={"reset_mask": np.zeros(3, np.bool_)})
