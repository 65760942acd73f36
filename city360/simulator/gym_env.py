"""Gymnasium face of :class:`~city360.simulator.env.CityEnv`, registered as
``city360/City-v0``::

    import gymnasium
    env = gymnasium.make("city360.simulator.gym_env:city360/City-v0", city_dir="cities/x")

(the ``module:`` prefix imports this module, which registers the id; after
``import city360.simulator.gym_env`` plain ``"city360/City-v0"`` works too).

Action: ``{"action": Discrete(10), "magnitude": Discrete(4), "answer": Text}``. ``action``
indexes :class:`Action` in declaration order (W, S, A, D, Q, E, LEFT, RIGHT, UP, ANSWER);
``magnitude`` 0 is the default amount, 1..3 SMALL, MEDIUM, LARGE; ``answer`` is read for
ANSWER only. Observation: the ``CityEnv`` keys (``step`` as an int64 scalar array, ``feedback``
as printable ASCII) plus ``action_mask`` (int8[10], 1 where the action can change something:
branches only where offered, W not when it cannot move). Masked actions are accepted as no-ops.

Reward (:mod:`city360.simulator.rewards`): ``reward="sparse"`` (default) or ``"shaped"``, with
``progress_per_m``, ``step_cost`` and ``answer_scale``, or one ``RewardConfig`` as ``reward``.
``tasks`` (a sequence of tasks or a ``tasks.Suite``) gives every reset without a start in its
options a task drawn from the episode's seeded generator, so autoresetting vector envs train on
a suite; ``reset(options={"task": task})`` picks one explicitly.

Observation options for learning (:mod:`city360.simulator.learning_obs`): ``layout``
("hwc" | "chw"), ``grayscale``, ``view_yaws_deg`` (several views per step), ``text``, ``goal``
(the told goal of a Map navigation task relative to the agent, metres).
"""

from __future__ import annotations

import os
import string
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from city360.errors import ConfigError
from city360.simulator.actions import Action, Magnitude
from city360.simulator.config import EnvConfig
from city360.simulator.controller import view_bearing_deg
from city360.simulator.env import CityEnv
from city360.simulator.learning_obs import GOAL_KEY, ObsOptions, goal_vector, obs_options
from city360.simulator.observation import MULTIVIEW_FACES, build_overlay, render_view
from city360.simulator.rewards import RewardConfig, TaskReward
from city360.simulator.state import wrap180
from city360.simulator.world import FrameSourceFactory

__all__ = ["ENV_ID", "CityGymEnv", "register"]

ENV_ID = "city360/City-v0"
FEEDBACK_CHARSET = string.printable
FEEDBACK_MAX_CHARS = 2048
ANSWER_MAX_CHARS = 256
_ACTIONS = list(Action)
_MAGNITUDES: list[Magnitude | None] = [None, Magnitude.SMALL, Magnitude.MEDIUM, Magnitude.LARGE]


_REWARD_KEYS = ("progress_per_m", "step_cost", "answer_scale")
_START_OPTIONS = ("task", "segment", "lat", "lon", "x_m", "y_m")


def reward_config(reward: str | RewardConfig, options: dict[str, Any]) -> RewardConfig:
    """``reward`` (a kind or a config) plus the reward keywords popped from ``options``."""
    values = {key: options.pop(key) for key in _REWARD_KEYS if key in options}
    if isinstance(reward, RewardConfig):
        if values:
            from dataclasses import replace

            return replace(reward, **values)
        return reward
    return RewardConfig(kind=reward, **values)  # type: ignore[arg-type]


class CityGymEnv(gymnasium.Env[dict[str, Any], dict[str, Any]]):
    """A ``gymnasium.Env`` over a built city; keywords are :class:`EnvConfig` fields
    (``frame_source`` as in :class:`CityEnv`), the reward options of the module docstring and
    ``tasks``. ``city_env`` may be given instead of a new one (the vector env shares one
    world between many)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}  # noqa: RUF012 - gymnasium API

    def __init__(
        self,
        city_dir: str | os.PathLike[str],
        render_mode: str | None = None,
        *,
        frame_source: FrameSourceFactory | None = None,
        reward: str | RewardConfig = "sparse",
        tasks: Sequence[Any] | Any | None = None,
        city_env: CityEnv | None = None,
        **config: Any,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            msg = f"render_mode must be None or 'rgb_array', got {render_mode!r}"
            raise ConfigError(msg)
        self.render_mode = render_mode
        self.reward_config = reward_config(reward, config)
        self.obs_options: ObsOptions = obs_options(config)
        self.tasks: list[Any] = list(getattr(tasks, "tasks", tasks) or [])
        if city_env is not None:
            if config:
                msg = f"give EnvConfig options to the CityEnv passed in, got {sorted(config)}"
                raise ConfigError(msg)
            self.city_env = city_env
        else:
            self.city_env = CityEnv(
                city_dir, EnvConfig.from_kwargs(**config), frame_source=frame_source
            )
        self._reward = TaskReward(self.reward_config, self.city_env.world.graph)
        self._told_goal_xy: tuple[float, float] | None = None
        cfg = self.city_env.config
        limit = cfg.max_steps if cfg.max_steps is not None else np.iinfo(np.int32).max
        obs: dict[str, spaces.Space[Any]] = {
            "view": spaces.Box(0, 255, (cfg.view_height, cfg.view_width, 3), np.uint8),
        }
        if cfg.map:
            obs["map"] = spaces.Box(0, 255, (cfg.map_size, cfg.map_size, 3), np.uint8)
        if cfg.multiview:
            size = cfg.multiview_size
            obs["views"] = spaces.Box(0, 255, (len(MULTIVIEW_FACES), size, size, 3), np.uint8)
        obs["branch_mask"] = spaces.MultiBinary(3)
        obs["action_mask"] = spaces.MultiBinary(len(_ACTIONS))
        obs["step"] = spaces.Box(0, limit, (), np.int64)
        obs["feedback"] = spaces.Text(FEEDBACK_MAX_CHARS, min_length=0, charset=FEEDBACK_CHARSET)
        self.observation_space = self.obs_options.observation_space(spaces.Dict(obs))
        self.action_space = spaces.Dict(
            {
                "action": spaces.Discrete(len(_ACTIONS)),
                "magnitude": spaces.Discrete(len(_MAGNITUDES)),
                "answer": spaces.Text(ANSWER_MAX_CHARS, min_length=0, charset=FEEDBACK_CHARSET),
            }
        )

    def _convert(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        out = dict(obs)
        out["branch_mask"] = np.asarray(obs["branch_mask"], np.int8)
        out["action_mask"] = np.asarray(info["action_mask"], np.int8)
        out["step"] = np.asarray(obs["step"], np.int64)
        text = "".join(c if c in FEEDBACK_CHARSET else "?" for c in obs["feedback"])
        out["feedback"] = text[:FEEDBACK_MAX_CHARS]
        options = self.obs_options
        if options.is_default:
            return out
        if not options.text:
            del out["feedback"]
        if options.view_yaws_deg is not None:
            out["view"] = np.stack(self._views(options.view_yaws_deg))
        for key in ("view", "map", "views"):
            if key in out:
                out[key] = options.image(out[key])
        if options.goal:
            env = self.city_env
            state = env.state
            assert state is not None  # called from reset/step only
            bearing = view_bearing_deg(env.world, state)
            out[GOAL_KEY] = goal_vector(self._told_goal_xy, env.position_xy(), bearing)
        return out

    def _views(self, yaws_deg: tuple[float, ...]) -> list[Any]:
        """Views at the current view's yaw plus each offset (degrees), arrows included."""
        from dataclasses import replace

        env = self.city_env
        state = env.state
        assert state is not None  # called from reset/step only
        overlay = build_overlay(env.world, env.config, state, None)
        return [
            render_view(
                env.world,
                env.renderer,
                env.config,
                replace(state, yaw_deg=wrap180(state.yaw_deg + yaw)),
                overlay,
            )
            for yaw in yaws_deg
        ]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        options = dict(options or {})
        if self.tasks and not any(key in options for key in _START_OPTIONS):
            options["task"] = self.tasks[int(self.np_random.integers(len(self.tasks)))]
        obs, info = self.city_env.reset(seed=seed, options=options)
        state = self.city_env.state
        assert state is not None  # reset just set it
        self._reward.reset(options.get("task"), state.segment, state.offset_m)
        self._told_goal_xy = _told_goal_xy(options.get("task"))
        return self._convert(obs, info), info

    def step(
        self, action: dict[str, Any]
    ) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        index = int(action["action"])
        magnitude = _MAGNITUDES[int(action.get("magnitude", 0))]
        chosen = _ACTIONS[index]
        answer = str(action.get("answer", "")) if chosen is Action.ANSWER else None
        obs, _, terminated, truncated, info = self.city_env.step(chosen, magnitude, answer=answer)
        state = self.city_env.state
        assert state is not None  # step() raised otherwise
        x_m, y_m = self.city_env.position_xy()
        terms = self._reward.step(state.segment, state.offset_m, x_m, y_m, answer)
        info["reward_terms"] = terms.as_info()
        return self._convert(obs, info), terms.total, terminated, truncated, info

    def render(self) -> Any:
        if self.render_mode == "rgb_array":
            return self.city_env.render()
        return None

    def close(self) -> None:
        self.city_env.close()
        super().close()


def _told_goal_xy(task: Any | None) -> tuple[float, float] | None:
    """The goal (city metres) of a task whose family tells its agent the goal, else None."""
    if task is None:
        return None
    from city360.tasks.families import get_family

    goal = getattr(getattr(task, "truth", None), "goal", None)
    if goal is None or not get_family(str(task.family)).goal_told:
        return None
    return float(goal.x_m), float(goal.y_m)


def register() -> None:
    """Register :data:`ENV_ID` with Gymnasium (idempotent)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="city360.simulator.gym_env:CityGymEnv")


register()
