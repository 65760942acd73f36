"""Observation options for learning, applied by the Gymnasium env (and so the vector env).

``CityEnv`` observations are what an LMM agent sees: an RGB (H, W, 3) view, the location map
``obs["map"]`` (its own key already, ``map=True``), the offered branches and a feedback text.
A learner often wants something else, chosen here:

- ``layout="chw"``: images channel-first (C, H, W), as PyTorch convolutions take them (the
  default ``"hwc"`` keeps (H, W, C)); applies to ``view``, ``map`` and ``views``;
- ``grayscale=True``: one luma channel (BT.601, OpenCV's RGB -> GRAY), (H, W, 1) or (1, H, W);
- ``view_yaws_deg=(-90, 0, 90)``: several views per step, each at the current view's yaw plus
  the offset (degrees, + right), stacked on a leading axis: ``view`` (K, H, W, C) or
  (K, C, H, W). Extra views show the branch arrows but not the route-guidance ribbon;
- ``text=False``: no ``feedback`` key (a ``Text`` space most RL libraries cannot batch);
- ``goal=True``: a ``goal`` key, float32[3] = (right_m, forward_m, told): where the episode's
  goal lies from the agent, in metres along the view direction (forward) and 90 degrees to its
  right, straight line, with ``told`` 1.0. Only a family that *tells* its agent the goal
  (``FamilySpec.goal_told``: Map navigation, whose map shows the RED goal beside the BLUE
  start, while ``obs["map"]`` shows where the agent is) gets it; every other episode (goal to
  be found, or no task) reads (0, 0, 0), so the key never gives an answer away. It is what
  reading the two maps gives, in numbers a small policy can use (docs/design-notes.md
  "Goal observation for learning").
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Literal

import cv2
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from city360.errors import ConfigError

__all__ = [
    "GOAL_KEY",
    "GOAL_LIMIT_M",
    "OBS_OPTION_NAMES",
    "ObsOptions",
    "goal_vector",
    "obs_options",
]

_IMAGE_KEYS = ("view", "map", "views")
GOAL_KEY = "goal"
GOAL_LIMIT_M = 100_000.0
"""Bound of the ``goal`` key's metres (a city spans far less; Gymnasium wants finite boxes)."""


@dataclass(frozen=True, slots=True)
class ObsOptions:
    """How the Gymnasium env shapes its image observations (see the module docstring)."""

    layout: Literal["hwc", "chw"] = "hwc"
    """``hwc``: (H, W, C); ``chw``: (C, H, W)."""
    grayscale: bool = False
    """One luma channel instead of RGB."""
    view_yaws_deg: tuple[float, ...] | None = None
    """Several views per step at these yaw offsets from the current view (degrees)."""
    text: bool = True
    """Keep the ``feedback`` text key."""
    goal: bool = False
    """Add the ``goal`` key: the told goal relative to the agent (metres)."""

    def __post_init__(self) -> None:
        if self.layout not in ("hwc", "chw"):
            msg = f"`layout` must be 'hwc' or 'chw', got {self.layout!r}"
            raise ConfigError(msg)
        yaws = self.view_yaws_deg
        if yaws is not None and (
            not 1 <= len(yaws) <= 16 or not all(math.isfinite(float(y)) for y in yaws)
        ):
            msg = f"`view_yaws_deg` must be 1 to 16 finite angles in degrees, got {yaws!r}"
            raise ConfigError(msg)

    @property
    def is_default(self) -> bool:
        return self == ObsOptions()

    def image(self, image: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
        """One (..., H, W, 3) RGB image (or stack) in this layout and colour."""
        if self.grayscale:
            flat = image.reshape(-1, *image.shape[-3:])
            gray = np.stack([cv2.cvtColor(im, cv2.COLOR_RGB2GRAY) for im in flat])
            image = gray.reshape(*image.shape[:-1], 1)
        if self.layout == "chw":
            image = np.ascontiguousarray(np.moveaxis(image, -1, -3))
        return image

    def space(self, space: spaces.Box, *, stack: int | None = None) -> spaces.Box:
        """The Box of an (H, W, 3) image space after this layout, colour and stacking."""
        *lead, h, w, c = space.shape
        c = 1 if self.grayscale else c
        shape = (*lead, c, h, w) if self.layout == "chw" else (*lead, h, w, c)
        if stack is not None:
            shape = (stack, *shape)
        return spaces.Box(0, 255, shape, np.uint8)

    def observation_space(self, space: spaces.Dict) -> spaces.Dict:
        """The env's observation space under these options."""
        out: dict[str, spaces.Space[Any]] = {}
        for key, sub in space.spaces.items():
            if key == "feedback" and not self.text:
                continue
            if key in _IMAGE_KEYS and isinstance(sub, spaces.Box):
                stack = len(self.view_yaws_deg) if key == "view" and self.view_yaws_deg else None
                out[key] = self.space(sub, stack=stack)
            else:
                out[key] = sub
        if self.goal:
            low = np.array([-GOAL_LIMIT_M, -GOAL_LIMIT_M, 0.0], np.float32)
            out[GOAL_KEY] = spaces.Box(low, -low + np.array([0, 0, 1], np.float32), (3,))
        return spaces.Dict(out)


def goal_vector(
    goal_xy: tuple[float, float] | None, agent_xy: tuple[float, float], view_bearing_deg: float
) -> npt.NDArray[np.float32]:
    """``(right_m, forward_m, told)`` of the goal at ``goal_xy`` (city metres, x east, y north)
    seen from ``agent_xy`` looking along ``view_bearing_deg`` (clockwise from north); zeros when
    ``goal_xy`` is None (no told goal)."""
    if goal_xy is None:
        return np.zeros(3, np.float32)
    dx, dy = goal_xy[0] - agent_xy[0], goal_xy[1] - agent_xy[1]
    bearing = math.radians(view_bearing_deg)
    forward = dx * math.sin(bearing) + dy * math.cos(bearing)
    right = dx * math.cos(bearing) - dy * math.sin(bearing)
    right, forward = (min(max(v, -GOAL_LIMIT_M), GOAL_LIMIT_M) for v in (right, forward))
    return np.array([right, forward, 1.0], np.float32)


OBS_OPTION_NAMES = tuple(f.name for f in dataclasses.fields(ObsOptions))


def obs_options(options: dict[str, Any]) -> ObsOptions:
    """An :class:`ObsOptions` from the keys of ``options`` that name its fields (popped)."""
    values = {key: options.pop(key) for key in OBS_OPTION_NAMES if key in options}
    if "view_yaws_deg" in values and values["view_yaws_deg"] is not None:
        values["view_yaws_deg"] = tuple(float(y) for y in values["view_yaws_deg"])
    return ObsOptions(**values)
