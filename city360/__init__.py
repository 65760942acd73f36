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

__all__ = ["City360Error", "__version__", "make", "make_vec"]

if TYPE_CHECKING:
    from gymnasium.vector import VectorEnv

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


def make_vec(city: Any, num_envs: int = 8, **options: Any) -> VectorEnv[Any, Any, Any]:
    """``num_envs`` agents in ``city`` (a built city directory or a packaged city's name, as
    for :func:`make`) as one Gymnasium vector env sharing one frame cache
    (``city360.simulator.vector_env.make_vec``; ``vectorization_mode="sharded"`` spreads the
    agents over ``num_workers`` processes, ``"async"`` runs one process per agent)."""
    from city360.cities import resolve_city
    from city360.simulator.vector_env import make_vec as _make_vec

    return _make_vec(resolve_city(city), num_envs, **options)
