"""The action set and observation of a small navigation policy (the PPO smoke test's).

The Gymnasium env's action is a ``Dict`` (action, magnitude, answer text) that RL libraries
cannot take; a navigation policy needs only seven of its moves, one fixed magnitude each, so it
picks an index into :data:`NAV_ACTIONS`: W LARGE (10 m, stops at a junction), A / D LARGE (90°
yaw: two of them turn round, and facing backwards W walks back), LEFT / RIGHT / UP (take an
offered branch) and ANSWER. Each index is legal where the env's ``action_mask`` allows its
action.

The policy sees (:func:`policy_observation`) the env's ``goal`` key scaled to
:data:`GOAL_SCALE_M` (the told goal relative to the agent, see
:mod:`city360.simulator.learning_obs`), the offered branches, the legal actions and, for a CNN
policy, the (C, H, W) uint8 view.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from city360.errors import ConfigError
from city360.simulator.actions import Action, Magnitude
from city360.simulator.learning_obs import GOAL_LIMIT_M

__all__ = [
    "GOAL_SCALE_M",
    "NAV_ACTIONS",
    "env_actions",
    "legal_actions",
    "policy_observation",
    "policy_observation_space",
]

_ENV_ACTIONS = list(Action)
_ENV_MAGNITUDES: list[Magnitude | None] = [
    None,
    Magnitude.SMALL,
    Magnitude.MEDIUM,
    Magnitude.LARGE,
]

NAV_ACTIONS: tuple[tuple[Action, Magnitude | None], ...] = (
    (Action.W, Magnitude.LARGE),
    (Action.A, Magnitude.LARGE),
    (Action.D, Magnitude.LARGE),
    (Action.LEFT, None),
    (Action.RIGHT, None),
    (Action.UP, None),
    (Action.ANSWER, None),
)
"""The policy's actions, by index: (env action, magnitude; None = the env's default)."""

GOAL_SCALE_M = 50.0
"""Metres per unit of the scaled goal vector the policy sees (Easy routes are ~70 m)."""

_ACTION_INDEX = np.array([_ENV_ACTIONS.index(a) for a, _ in NAV_ACTIONS])
_MAGNITUDE_INDEX = np.array([_ENV_MAGNITUDES.index(m) for _, m in NAV_ACTIONS])


def env_actions(indices: npt.ArrayLike) -> dict[str, Any]:
    """Batched env actions (the vector env's ``Dict`` action) for policy action indices."""
    picked = np.asarray(indices, np.int64).reshape(-1)
    if picked.size and (picked.min() < 0 or picked.max() >= len(NAV_ACTIONS)):
        msg = f"policy actions must be in 0..{len(NAV_ACTIONS) - 1}, got {picked.tolist()}"
        raise ConfigError(msg)
    return {
        "action": _ACTION_INDEX[picked],
        "magnitude": _MAGNITUDE_INDEX[picked],
        "answer": ("here",) * picked.size,
    }


def legal_actions(action_mask: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """(N, len(NAV_ACTIONS)) bool: which policy actions the env's (N, 10) ``action_mask``
    allows. ANSWER is always allowed, so every row has a legal action."""
    mask = np.asarray(action_mask).reshape(-1, len(_ENV_ACTIONS))
    return mask[:, _ACTION_INDEX].astype(np.bool_)


def policy_observation_space(view_shape: tuple[int, ...] | None) -> spaces.Dict:
    """The policy's observation space; ``view_shape`` (C, H, W) adds the view, None leaves it
    out (an MLP policy)."""
    limit = GOAL_LIMIT_M / GOAL_SCALE_M
    keys: dict[str, spaces.Space[Any]] = {
        "goal": spaces.Box(-limit, limit, (3,), np.float32),
        "branches": spaces.Box(0.0, 1.0, (3,), np.float32),
        "legal": spaces.Box(0.0, 1.0, (len(NAV_ACTIONS),), np.float32),
    }
    if view_shape is not None:
        keys["view"] = spaces.Box(0, 255, view_shape, np.uint8)
    return spaces.Dict(keys)


def policy_observation(obs: dict[str, Any], *, view: bool) -> dict[str, npt.NDArray[Any]]:
    """The policy's batched observation from the vector env's (``goal=True``,
    ``text=False``; ``layout="chw"`` when ``view``)."""
    if "goal" not in obs:
        msg = "the env must be made with `goal=True` (the told goal the policy steers by)"
        raise ConfigError(msg)
    goal = np.array(obs["goal"], np.float32).reshape(-1, 3)
    goal[:, :2] /= GOAL_SCALE_M
    out: dict[str, npt.NDArray[Any]] = {
        "goal": goal,
        "branches": np.asarray(obs["branch_mask"], np.float32).reshape(-1, 3),
        "legal": legal_actions(obs["action_mask"]).astype(np.float32),
    }
    if view:
        out["view"] = np.asarray(obs["view"], np.uint8)
    return out
