"""A city360 vector env as a stable-baselines3 ``VecEnv`` (needs ``city360[train]``).

stable-baselines3 has its own vector API: same-step autoreset (the step that ends an episode
returns the *next* episode's first observation, the last one in
``infos[i]["terminal_observation"]``), a list of per-env info dicts, and masks read through
``env_method("action_masks")`` (sb3-contrib's ``MaskablePPO``). city360's
:func:`~city360.make_vec` follows Gymnasium's (next-step autoreset), so this adapter resets the
sub-envs that just ended at once with ``reset(options={"reset_mask": ended})`` and keeps every
other sub-env's episode going. Actions are indices into
:data:`city360.train.nav_actions.NAV_ACTIONS`; observations are
:func:`~city360.train.nav_actions.policy_observation`'s.

``infos[i]["episode"]`` (``r`` return, ``l`` length, ``t`` seconds) is filled as
``stable_baselines3.common.monitor.Monitor`` would, so the library logs episode returns.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from city360.errors import DependencyMissingError
from city360.train.nav_actions import (
    NAV_ACTIONS,
    env_actions,
    legal_actions,
    policy_observation,
    policy_observation_space,
)

try:
    from stable_baselines3.common.vec_env import VecEnv
except ImportError as exc:  # pragma: no cover - depends on the install
    msg = "stable-baselines3 is needed for training: pip install 'city360[train]'"
    raise DependencyMissingError(msg) from exc

__all__ = ["Sb3CityVecEnv"]


class Sb3CityVecEnv(VecEnv):
    """``vec`` (a :func:`city360.make_vec` env made with ``goal=True, text=False``, and
    ``layout="chw"`` when ``view``) for stable-baselines3 (see the module docstring)."""

    def __init__(self, vec: Any, *, view: bool = False) -> None:
        self.vec = vec
        self.view = view
        view_space = vec.single_observation_space["view"] if view else None
        super().__init__(
            vec.num_envs,
            policy_observation_space(None if view_space is None else view_space.shape),
            spaces.Discrete(len(NAV_ACTIONS)),
        )
        self._actions: npt.NDArray[np.int64] = np.zeros(vec.num_envs, np.int64)
        self._legal = np.ones((vec.num_envs, len(NAV_ACTIONS)), np.bool_)
        self._returns = np.zeros(vec.num_envs, np.float64)
        self._lengths = np.zeros(vec.num_envs, np.int64)
        self._started = time.monotonic()

    def _observe(self, obs: dict[str, Any]) -> dict[str, npt.NDArray[Any]]:
        self._legal = legal_actions(obs["action_mask"])
        return policy_observation(obs, view=self.view)

    def reset(self) -> dict[str, npt.NDArray[Any]]:
        seeds: Sequence[int | None] | None = None
        if any(seed is not None for seed in self._seeds):
            seeds = list(self._seeds)
        obs, _ = self.vec.reset(seed=seeds, options=self._options[0] or None)
        self._reset_seeds()
        self._returns[:] = 0.0
        self._lengths[:] = 0
        return self._observe(obs)

    def step_async(self, actions: npt.NDArray[Any]) -> None:
        self._actions = np.asarray(actions, np.int64).reshape(self.num_envs)

    def step_wait(
        self,
    ) -> tuple[
        dict[str, npt.NDArray[Any]],
        npt.NDArray[np.float32],
        npt.NDArray[np.bool_],
        list[dict[str, Any]],
    ]:
        obs, rewards, terminated, truncated, _ = self.vec.step(env_actions(self._actions))
        dones = np.logical_or(terminated, truncated)
        self._returns += rewards
        self._lengths += 1
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        observed = self._observe(obs)
        if dones.any():
            for i in np.flatnonzero(dones):
                infos[i]["terminal_observation"] = {k: v[i] for k, v in observed.items()}
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
                infos[i]["episode"] = {
                    "r": float(self._returns[i]),
                    "l": int(self._lengths[i]),
                    "t": round(time.monotonic() - self._started, 6),
                }
            self._returns[dones] = 0.0
            self._lengths[dones] = 0
            obs, _ = self.vec.reset(options={"reset_mask": dones})
            observed = self._observe(obs)
        return observed, rewards.astype(np.float32), dones, infos

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """(num_envs, len(NAV_ACTIONS)) bool: the legal policy actions now."""
        return self._legal.copy()

    def close(self) -> None:
        self.vec.close()

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks"

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        if attr_name == "render_mode":
            return [None for _ in self._get_indices(indices)]
        msg = f"{type(self).__name__} has no per-env attribute {attr_name!r}"
        raise AttributeError(msg)

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        msg = f"{type(self).__name__} cannot set per-env attribute {attr_name!r}"
        raise AttributeError(msg)

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        if method_name != "action_masks":
            msg = f"{type(self).__name__} has no per-env method {method_name!r}"
            raise AttributeError(msg)
        return [self._legal[i].copy() for i in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: type[Any], indices: Any = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]
