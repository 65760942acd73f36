"""Many agents in one city: ``city360.make_vec(city, num_envs=N, ...)``, Gymnasium's vector API.

``vectorization_mode="sync"`` (the default) is :class:`CityVectorEnv`: N sub-envs stepped in
this process over *one* :class:`~city360.simulator.world.World` — one set of frame stores and
one byte-bounded decoded-frame cache (``frame_cache_mb``, for all N together) — and one
renderer, so a frame that any agent decoded is there for every other agent, and N agents cost
one city's memory, not N. Sub-envs do not prefetch by default (``prefetch=False``): N agents
asking one store for their next frames would only replace each other's requests.

``vectorization_mode="sharded"`` (:mod:`city360.simulator.sharded_vector_env`) splits the N
agents over ``num_workers`` processes (default: the cores this process may use), each a
:class:`CityVectorEnv` of its share: the mode for more than one core.

``vectorization_mode="async"`` is :class:`gymnasium.vector.AsyncVectorEnv` over N single
:class:`~city360.simulator.gym_env.CityGymEnv` processes (``spawn``ed), one per agent; each
process opens its own world (N worlds, N caches), so it suits few agents.

Both follow Gymnasium's vector conventions exactly: ``metadata["autoreset_mode"]`` is
``AutoresetMode.NEXT_STEP`` (the step after a sub-env terminated or truncated resets it and
returns its first observation with reward 0 and both flags false; the action given for it is
ignored); observations are batched by :func:`gymnasium.vector.utils.batch_space` (``view``
(N, H, W, 3), ``action_mask`` (N, 10), ``feedback`` a tuple of N strings); ``infos`` are dicts
of arrays with a boolean ``_key`` mask per key; ``reset(seed=s)`` seeds sub-env i with
``s + i``. So the same seed gives the same trajectories in either mode, and in N plain envs
reset with ``s + i`` (tested), in any mode.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate

from city360.errors import ConfigError
from city360.simulator.config import EnvConfig
from city360.simulator.env import CityEnv
from city360.simulator.gym_env import CityGymEnv, reward_config
from city360.simulator.learning_obs import obs_options
from city360.simulator.renderer import make_renderer
from city360.simulator.rewards import RewardConfig
from city360.simulator.world import FrameSourceFactory, World, default_frame_source

__all__ = ["VECTORIZATION_MODES", "CityVectorEnv", "make_vec", "sub_env_seeds"]

VECTORIZATION_MODES = ("sync", "sharded", "async")
MAX_ENVS = 4096


def _check_num_envs(num_envs: int) -> int:
    if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer):
        msg = f"`num_envs` must be an integer in 1..{MAX_ENVS}, got {num_envs!r}"
        raise ConfigError(msg)
    if not 1 <= int(num_envs) <= MAX_ENVS:
        msg = f"`num_envs` must be in 1..{MAX_ENVS}, got {num_envs}"
        raise ConfigError(msg)
    return int(num_envs)


def make_vec(
    city_dir: str | os.PathLike[str],
    num_envs: int = 8,
    *,
    vectorization_mode: Literal["sync", "sharded", "async"] = "sync",
    reward: str | RewardConfig = "sparse",
    tasks: Sequence[Any] | Any | None = None,
    num_workers: int | None = None,
    **config: Any,
) -> VectorEnv[Any, Any, Any]:
    """``num_envs`` agents in the city in ``city_dir`` (see the module docstring); keywords are
    :class:`EnvConfig` fields and the reward options of :mod:`city360.simulator.gym_env`.
    ``num_workers`` is the number of processes of the sharded mode (default: the cores this
    process may use); the other modes refuse it."""
    num_envs = _check_num_envs(num_envs)
    if num_workers is not None and vectorization_mode != "sharded":
        msg = (
            f"`num_workers` is an option of vectorization_mode='sharded', not "
            f"{vectorization_mode!r}"
        )
        raise ConfigError(msg)
    if vectorization_mode == "sync":
        return CityVectorEnv(city_dir, num_envs, reward=reward, tasks=tasks, **config)
    if vectorization_mode == "sharded":
        from city360.simulator.sharded_vector_env import ShardedVectorEnv

        workers = num_workers if num_workers is not None else len(os.sched_getaffinity(0))
        return ShardedVectorEnv(
            city_dir, num_envs, num_workers=workers, reward=reward, tasks=tasks, **config
        )
    if vectorization_mode == "async":
        config.setdefault("prefetch", False)  # the same frames as the sync mode decodes
        checked = dict(config)  # fail here, not in N child processes
        reward_config(reward, checked)
        obs_options(checked)
        EnvConfig.from_kwargs(**checked)
        make_one = functools.partial(CityGymEnv, city_dir, reward=reward, tasks=tasks, **config)
        # no shared memory: Gymnasium's shared-memory path mangles Text spaces (``feedback``)
        return AsyncVectorEnv([make_one] * num_envs, context="spawn", shared_memory=False)
    msg = (
        f"`vectorization_mode` must be one of {', '.join(VECTORIZATION_MODES)}, "
        f"got {vectorization_mode!r}"
    )
    raise ConfigError(msg)


def sub_env_seeds(seed: int | Sequence[int | None] | None, num_envs: int) -> list[int | None]:
    """One seed per sub-env: an int ``seed`` gives sub-env i ``seed + i``, a sequence its own
    (exactly ``num_envs`` of them), None none."""
    if seed is None:
        return [None] * num_envs
    if isinstance(seed, int | np.integer):
        return [int(seed) + i for i in range(num_envs)]
    seeds = list(seed)
    if len(seeds) != num_envs:
        msg = f"`seed` needs {num_envs} values (one per sub-env), got {len(seeds)}"
        raise ConfigError(msg)
    return seeds


class CityVectorEnv(VectorEnv[dict[str, Any], dict[str, Any], Any]):
    """``num_envs`` :class:`CityGymEnv` sub-envs over one shared world and renderer, stepped in
    this process (see the module docstring). A context manager; ``close()`` is safe twice."""

    metadata = {  # noqa: RUF012 - gymnasium API
        "autoreset_mode": AutoresetMode.NEXT_STEP,
        "render_modes": ["rgb_array"],
    }

    def __init__(
        self,
        city_dir: str | os.PathLike[str],
        num_envs: int,
        *,
        reward: str | RewardConfig = "sparse",
        tasks: Sequence[Any] | Any | None = None,
        frame_source: FrameSourceFactory | None = None,
        **config: Any,
    ) -> None:
        self.num_envs = _check_num_envs(num_envs)
        rewards = reward_config(reward, config)
        looks = obs_options(config)
        config.setdefault("prefetch", False)
        self.config = EnvConfig.from_kwargs(**config)
        self.world = World(
            Path(city_dir),
            cache_bytes=int(self.config.frame_cache_mb * 1024 * 1024),
            frame_source=frame_source
            or functools.partial(default_frame_source, threads=self.config.decode_threads),
            condition=self.config.condition,
        )
        self.envs: list[CityGymEnv] = []
        try:
            self.renderer = make_renderer(self.config.renderer)
            for _ in range(self.num_envs):
                city_env = CityEnv(city_dir, self.config, renderer=self.renderer, world=self.world)
                self.envs.append(
                    CityGymEnv(
                        city_dir,
                        reward=rewards,
                        tasks=tasks,
                        city_env=city_env,
                        **dataclasses.asdict(looks),
                    )
                )
        except BaseException:
            self._close_all()
            raise
        first = self.envs[0]
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._observations: Any = create_empty_array(
            self.single_observation_space, n=self.num_envs, fn=np.zeros
        )
        self._env_obs: list[Any] = [None] * self.num_envs
        self._rewards = np.zeros(self.num_envs, np.float64)
        self._terminations = np.zeros(self.num_envs, np.bool_)
        self._truncations = np.zeros(self.num_envs, np.bool_)
        self._autoreset = np.zeros(self.num_envs, np.bool_)
        self._closed = False

    def __repr__(self) -> str:
        return f"CityVectorEnv({str(self.world.city.root)!r}, num_envs={self.num_envs})"

    def __enter__(self) -> CityVectorEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def autoreset_mode(self) -> AutoresetMode:
        return AutoresetMode.NEXT_STEP

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Reset every sub-env; an int ``seed`` seeds sub-env i with ``seed + i``, a sequence
        gives each its own. ``options`` go to every sub-env (Gymnasium's convention), except
        ``options["reset_mask"]`` (bool[num_envs], as in ``gymnasium.vector.SyncVectorEnv``):
        reset only the sub-envs where it is True, keep the others' episodes going (a learner
        with same-step autoreset resets the sub-envs that just ended this way)."""
        mask = None
        if options is not None and "reset_mask" in options:
            options = dict(options)
            mask = self._check_reset_mask(options.pop("reset_mask"))
        seeds = sub_env_seeds(seed, self.num_envs)
        if seed is not None:
            self._np_random, self._np_random_seed = np.random.default_rng(seeds[0]), seeds[0]
        if mask is None:
            mask = np.ones(self.num_envs, np.bool_)
        infos: dict[str, Any] = {}
        for i, (env, env_seed) in enumerate(zip(self.envs, seeds, strict=True)):
            if mask[i]:
                self._env_obs[i], info = env.reset(seed=env_seed, options=options)
                infos = self._add_info(infos, info, i)
        self._rewards[mask] = 0.0
        self._terminations[mask] = False
        self._truncations[mask] = False
        self._autoreset[mask] = False
        return self._batch(), infos

    def _check_reset_mask(self, mask: Any) -> npt.NDArray[np.bool_]:
        """``options["reset_mask"]``: a bool array of shape (num_envs,) with a True in it."""
        if (
            not isinstance(mask, np.ndarray)
            or mask.dtype != np.bool_
            or mask.shape != (self.num_envs,)
        ):
            shown = mask if not isinstance(mask, np.ndarray) else f"{mask.dtype}{mask.shape}"
            msg = (
                f"`options['reset_mask']` must be a numpy bool array of shape "
                f"({self.num_envs},), got {shown!r}"
            )
            raise ConfigError(msg)
        if not mask.any():
            msg = "`options['reset_mask']` must have at least one True (a sub-env to reset)"
            raise ConfigError(msg)
        return mask

    def step(
        self, actions: Any
    ) -> tuple[
        dict[str, Any],
        npt.NDArray[np.float64],
        npt.NDArray[np.bool_],
        npt.NDArray[np.bool_],
        dict[str, Any],
    ]:
        """Step every sub-env with its action (``actions`` batched as ``action_space``);
        sub-envs that ended on the previous step are reset instead (next-step autoreset)."""
        infos: dict[str, Any] = {}
        for i, action in enumerate(iterate(self.action_space, actions)):
            env = self.envs[i]
            if self._autoreset[i]:
                self._env_obs[i], info = env.reset()
                self._rewards[i] = 0.0
                self._terminations[i] = False
                self._truncations[i] = False
            else:
                (
                    self._env_obs[i],
                    self._rewards[i],
                    self._terminations[i],
                    self._truncations[i],
                    info,
                ) = env.step(action)
            infos = self._add_info(infos, info, i)
        self._autoreset = np.logical_or(self._terminations, self._truncations)
        return (
            self._batch(),
            np.copy(self._rewards),
            np.copy(self._terminations),
            np.copy(self._truncations),
            infos,
        )

    def _batch(self) -> dict[str, Any]:
        self._observations = concatenate(
            self.single_observation_space, self._env_obs, self._observations
        )
        return _copy(self.single_observation_space, self._observations)

    def render(self) -> tuple[Any, ...] | None:
        """Every sub-env's current view (``render_mode="rgb_array"``)."""
        return tuple(env.city_env.render() for env in self.envs)

    def close_extras(self, **kwargs: Any) -> None:
        self._close_all()

    def _close_all(self) -> None:
        if getattr(self, "_closed", False):
            return
        self._closed = True
        for env in self.envs:
            env.close()
        renderer = getattr(self, "renderer", None)
        if renderer is not None:
            renderer.close()
        self.world.close()


def _copy(space: spaces.Space[Any], batched: Any) -> Any:
    """A copy of the batched observation, so the caller may keep it past the next step."""
    if isinstance(space, spaces.Dict):
        return {key: _copy(sub, batched[key]) for key, sub in space.spaces.items()}
    if isinstance(batched, np.ndarray):
        return batched.copy()
    return batched
