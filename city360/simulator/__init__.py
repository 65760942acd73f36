"""city360.simulator: a built city as an environment, ``env.step("W", "MEDIUM")``.

``city360.make(city_dir, **config)`` opens a :class:`CityEnv`; :class:`EnvConfig` lists every
option; ``city360.simulator.gym_env`` registers the Gymnasium id ``city360/City-v0``. Heavy
modules (moderngl, OpenCV, the frame store) load on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from city360.simulator.actions import (
    Action,
    ActionCommand,
    Magnitude,
    parse_action,
    parse_magnitude,
)

__all__ = [
    "Action",
    "ActionCommand",
    "CityEnv",
    "CityGymEnv",
    "EnvConfig",
    "Magnitude",
    "make",
    "parse_action",
    "parse_magnitude",
]

_LAZY = {
    "CityEnv": "city360.simulator.env",
    "make": "city360.simulator.env",
    "EnvConfig": "city360.simulator.config",
    "CityGymEnv": "city360.simulator.gym_env",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        msg = f"module 'city360.simulator' has no attribute {name!r}"
        raise AttributeError(msg)
    return getattr(importlib.import_module(module), name)
