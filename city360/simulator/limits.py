"""What the simulator accepts at its API boundary: sizes, seeds, pose numbers, start places.

Checked where a value comes in (``EnvConfig``, ``env.reset``), so that a bad value is a
:class:`~city360.errors.ConfigError` naming it rather than a ``MemoryError``, a NaN pose or a
start silently snapped to a street kilometres away.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from city360.errors import ConfigError

__all__ = [
    "MAX_MAP_SIZE",
    "MAX_SEED",
    "MAX_START_GAP_M",
    "MAX_VIEW_SIDE",
    "check_seed",
    "check_side",
    "finite_number",
]

MAX_VIEW_SIDE = 4096
"""Largest view width or height in pixels (a 4096x4096 RGB view is 48 MB; the equirect frames
it samples are rarely wider than 3840 px, so more shows nothing new)."""
MAX_MAP_SIZE = 2048
"""Largest location-map side and multi-view face side in pixels."""
MAX_SEED = 2**63 - 1
"""Seeds are integers in 0..MAX_SEED (what ``numpy.random.default_rng`` takes)."""
MAX_START_GAP_M = 50.0
"""A start given as lat/lon (or x_m/y_m) may lie this far from the nearest filmed street;
further away it is refused instead of snapped (the city is probably not where the point is)."""


def check_side(name: str, value: Any, *, low: int, high: int) -> int:
    """``value`` as an int pixel size in ``low..high``, or ConfigError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        msg = f"`{name}` must be a whole number of pixels in {low}..{high}, got {value!r}"
        raise ConfigError(msg)
    if not low <= int(value) <= high:
        msg = f"`{name}` must be in {low}..{high} pixels, got {value}"
        raise ConfigError(msg)
    return int(value)


def check_seed(seed: Any) -> int | None:
    """A seed is None or an integer in 0..MAX_SEED (not a bool, float or string)."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        msg = f"`seed` must be a whole number in 0..{MAX_SEED} or None, got {seed!r}"
        raise ConfigError(msg)
    if not 0 <= int(seed) <= MAX_SEED:
        msg = f"`seed` must be in 0..{MAX_SEED}, got {seed}"
        raise ConfigError(msg)
    return int(seed)


def finite_number(name: str, value: Any) -> float:
    """``value`` as a finite float, or ConfigError naming the option ``name``."""
    if isinstance(value, bool):
        msg = f"reset option {name!r} must be a finite number, got {value!r}"
        raise ConfigError(msg)
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        msg = f"reset option {name!r} must be a finite number, got {value!r}"
        raise ConfigError(msg) from None
    if not math.isfinite(number):
        msg = f"reset option {name!r} must be a finite number, got {value!r}"
        raise ConfigError(msg)
    return number
