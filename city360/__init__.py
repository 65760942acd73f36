"""city360: turn GPS-tagged 360° video into a navigable city for embodied AI agents.

``import city360`` is light: heavy dependencies (moderngl, av, osmnx, ray, fastapi) load on
first use.
"""

from __future__ import annotations

from importlib import metadata as _metadata
from typing import TYPE_CHECKING, Any

from city360.errors import City360Error

try:  # the one place the version is written is pyproject.toml
    __version__ = _metadata.version("city360")
except _metadata.PackageNotFoundError:  # pragma: no cover - a bare source tree on sys.path
    __version__ = "0+unknown"

__all__ = ["City360Error", "__version__", "make"]

if TYPE_CHECKING:
    from city360.simulator.env import CityEnv


def make(city: Any, **config: Any) -> CityEnv:
    """Open a city as an environment (a ``simulator.env.CityEnv``).

    ``city`` is a built city directory or the name of a packaged city (``"demo"``; see
    ``city360 cities``), which is built on first use and cached. Keywords are ``EnvConfig``
    fields (``view_width``, ``fov_deg``, ``map``, ...).
    """
    from city360.cities import resolve_city
    from city360.simulator.env import make as _make

    return _make(resolve_city(city), **config)
