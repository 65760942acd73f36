"""Visual conditions of a synthetic city: day, dusk, night, rain and fog as shader settings.

A :class:`Look` is everything the scene shaders take besides geometry: the sky gradient, the
ambient and sun light, the aerial-perspective haze (distance fog), how bright the shop signs
glow, lit windows and street lamps at night, wet ground and falling rain. The renderer
(``city360.synth.render.EquirectRenderer(..., look=...)``) sets them as uniforms and draws
rain streaks as world-space geometry, so a condition changes the 3D render itself, never a
2D filter on finished views. ``day`` is the look every city had before conditions existed;
its values are the shaders' former constants, so day frames are byte-identical to them.

Looks are registered by name (:data:`CONDITIONS`, :func:`get_look`, :func:`register_look`).
Everything here is deterministic: lamp positions follow from the streets, rain from the
scene seed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from city360.errors import ConfigError, did_you_mean

if TYPE_CHECKING:
    from city360.synth._streets import Street

__all__ = [
    "CONDITIONS",
    "DEFAULT_CONDITION",
    "MAX_LAMPS",
    "Look",
    "condition_names",
    "get_look",
    "lamp_positions",
    "register_look",
    "sun_for_look",
]

RGB = tuple[float, float, float]

DEFAULT_CONDITION = "day"
"""The condition a city is filmed in unless told otherwise (its base frames)."""
MAX_LAMPS = 12
"""Street lamps lighting one view: the nearest to the camera (a shader uniform array)."""
LAMP_SPACING_M = 24.0
"""Distance between street lamps along a street, metres (alternating sides)."""


@dataclass(frozen=True, slots=True)
class Look:
    """Shader settings of one visual condition. Colours are linear RGB in [0, 1].

    ``sky_zenith`` / ``sky_horizon`` / ``ground_far``: the sky gradient and the distant bare
    terrain below the horizon. ``fog_color`` is what distant geometry fades to over
    ``haze_m`` metres (``1 - exp(-distance / haze_m)`` of it at that distance). ``ambient`` +
    ``sun_gain`` x (normal . sun) is the light on a surface; ``sun_elevation_deg`` (None: the
    scene's seeded sun) moves the sun, keeping its azimuth; ``sun_glow`` scales the glare
    around the sun and ``sun_disc`` draws its disc. ``sign_gain`` multiplies the signboards'
    own colours (they are lit from within). ``window_glow`` is how bright lit windows shine
    (0: glass shows its tint only); ``window_lit_share`` the fraction of windows lit.
    ``lamp_gain`` / ``lamp_range_m`` / ``lamp_color``: street lamps (0: off); light falls
    off as 1 / (1 + (d / range)^2). ``wet`` (0..1) darkens ground and mirrors the sky in it
    at grazing angles; ``rain_drops`` streaks fall around the camera (0: dry).
    """

    name: str
    sky_zenith: RGB = (0.30, 0.50, 0.82)
    sky_horizon: RGB = (0.80, 0.86, 0.93)
    ground_far: RGB = (0.40, 0.39, 0.36)
    fog_color: RGB = (0.80, 0.86, 0.93)
    haze_m: float = 900.0
    ambient: float = 0.62
    sun_gain: float = 0.38
    sun_elevation_deg: float | None = None
    sun_color: RGB = (1.0, 0.92, 0.75)
    sun_glow: float = 1.0
    sun_disc: bool = True
    sign_gain: float = 1.0
    window_glow: float = 0.0
    window_lit_share: float = 0.0
    lamp_gain: float = 0.0
    lamp_range_m: float = 9.0
    lamp_color: RGB = (1.0, 0.80, 0.52)
    wet: float = 0.0
    rain_drops: int = 0

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("_", "").replace("-", "").isalnum():
            msg = f"look name must be letters, digits, '-' or '_', got {self.name!r}"
            raise ConfigError(msg)
        if not self.haze_m > 0:
            msg = f"look {self.name!r}: `haze_m` must be > 0, got {self.haze_m}"
            raise ConfigError(msg)
        for field_name in ("wet", "window_lit_share"):
            value = getattr(self, field_name)
            if not 0.0 <= value <= 1.0:
                msg = f"look {self.name!r}: `{field_name}` must be in [0, 1], got {value}"
                raise ConfigError(msg)
        if self.rain_drops < 0:
            msg = f"look {self.name!r}: `rain_drops` must be >= 0, got {self.rain_drops}"
            raise ConfigError(msg)
        if self.lamp_range_m <= 0:
            msg = f"look {self.name!r}: `lamp_range_m` must be > 0, got {self.lamp_range_m}"
            raise ConfigError(msg)


_DAY = Look("day")
CONDITIONS: dict[str, Look] = {
    "day": _DAY,
    # the sun a few degrees up in the west-ish seeded azimuth: warm horizon, long shadows' light
    "dusk": replace(
        _DAY,
        name="dusk",
        sky_zenith=(0.16, 0.20, 0.42),
        sky_horizon=(0.93, 0.58, 0.36),
        ground_far=(0.30, 0.24, 0.22),
        fog_color=(0.70, 0.50, 0.40),
        haze_m=650.0,
        ambient=0.40,
        sun_gain=0.32,
        sun_elevation_deg=4.0,
        sun_color=(1.0, 0.55, 0.25),
        sign_gain=0.95,
        window_glow=0.55,
        window_lit_share=0.25,
        lamp_gain=0.35,
    ),
    # a dark sky with some city glow at the horizon; lamps, lit windows and glowing signs
    "night": replace(
        _DAY,
        name="night",
        sky_zenith=(0.010, 0.015, 0.045),
        sky_horizon=(0.07, 0.07, 0.11),
        ground_far=(0.03, 0.03, 0.035),
        fog_color=(0.05, 0.05, 0.08),
        haze_m=500.0,
        ambient=0.09,
        sun_gain=0.03,
        sun_glow=0.0,
        sun_disc=False,
        sign_gain=0.85,
        window_glow=0.85,
        window_lit_share=0.35,
        lamp_gain=1.0,
    ),
    # overcast: a flat grey sky, low contrast with distance, wet dark ground, falling rain
    "rain": replace(
        _DAY,
        name="rain",
        sky_zenith=(0.42, 0.45, 0.49),
        sky_horizon=(0.58, 0.61, 0.64),
        ground_far=(0.30, 0.31, 0.32),
        fog_color=(0.56, 0.59, 0.62),
        haze_m=220.0,
        ambient=0.52,
        sun_gain=0.06,
        sun_glow=0.0,
        sun_disc=False,
        sign_gain=0.88,
        window_glow=0.20,
        window_lit_share=0.15,
        wet=0.8,
        rain_drops=2500,
    ),
    # dense fog: everything fades to grey within a few tens of metres
    "fog": replace(
        _DAY,
        name="fog",
        sky_zenith=(0.74, 0.76, 0.78),
        sky_horizon=(0.78, 0.80, 0.81),
        ground_far=(0.76, 0.78, 0.79),
        fog_color=(0.78, 0.80, 0.81),
        haze_m=45.0,
        ambient=0.70,
        sun_gain=0.10,
        sun_glow=0.0,
        sun_disc=False,
    ),
}
"""The built-in conditions by name. ``day`` is the default look."""


def condition_names() -> list[str]:
    """Names of the registered conditions, ``day`` first."""
    return sorted(CONDITIONS, key=lambda n: (n != DEFAULT_CONDITION, n))


def get_look(name: str) -> Look:
    """The :class:`Look` named ``name``; an unknown name raises with the known ones."""
    look = CONDITIONS.get(name)
    if look is None:
        known = condition_names()
        msg = (
            f"unknown condition {name!r}; expected one of {', '.join(known)}."
            f"{did_you_mean(name, known)}"
        )
        raise ConfigError(msg)
    return look


def register_look(look: Look, *, replace_existing: bool = False) -> None:
    """Add a condition to :data:`CONDITIONS` (``day`` itself cannot be replaced)."""
    if look.name == DEFAULT_CONDITION or (look.name in CONDITIONS and not replace_existing):
        msg = f"condition {look.name!r} is already registered; pass replace_existing=True"
        raise ConfigError(msg)
    CONDITIONS[look.name] = look


def sun_for_look(look: Look, scene_sun: Sequence[float]) -> tuple[float, float, float]:
    """The unit vector towards the sun under ``look``: the scene's seeded sun, or the same
    azimuth at ``look.sun_elevation_deg``."""
    if look.sun_elevation_deg is None:
        return (float(scene_sun[0]), float(scene_sun[1]), float(scene_sun[2]))
    azimuth = math.atan2(float(scene_sun[0]), float(scene_sun[1]))
    elevation = math.radians(look.sun_elevation_deg)
    return (
        math.cos(elevation) * math.sin(azimuth),
        math.cos(elevation) * math.cos(azimuth),
        math.sin(elevation),
    )


def lamp_positions(streets: Sequence[Street], *, height_m: float = 5.5) -> npt.NDArray[np.float64]:
    """Street lamp light positions (N, 3): x_m, y_m east/north in the city CRS and the lamp's
    height in metres, every :data:`LAMP_SPACING_M` along each street, alternating sides at
    the kerb. Deterministic (no randomness: lamps follow the streets)."""
    rows: list[tuple[float, float, float]] = []
    for street in streets:
        count = int(street.length_m // LAMP_SPACING_M)
        for k in range(count):
            at = (k + 0.5) * street.length_m / count
            side = 1 if k % 2 == 0 else -1
            x, y = street.offset_point(at, side * (street.road_half_m + 0.4))
            rows.append((float(x), float(y), height_m))
    return np.asarray(rows, np.float64).reshape(-1, 3)
