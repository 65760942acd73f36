"""city360: turn GPS-tagged 360° video into a navigable city for embodied AI agents.

``import city360`` is light: heavy dependencies (moderngl, av, osmnx, ray, fastapi) load on
first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from city360.errors import City360Error

__version__ = "0.1.0"

__all__ = ["City360Error", "__version__", "make", "make_vec"]

if TYPE_CHECKING:
    from gymnasium.vector import VectorEnv

    from city360.simulator.env import CityEnv


def make(city_dir: Any, **config: Any) -> CityEnv:
    """Open the city in ``city_dir`` as an environment (a ``simulator.env.CityEnv``)."""
    from city360.simulator.env import make as _make

    return _make(city_dir, **config)


def make_vec(city_dir: Any, num_envs: int = 8, **options: Any) -> VectorEnv[Any, Any, Any]:
    """``num_envs`` agents in the city in ``city_dir`` as one Gymnasium vector env sharing one
    frame cache (``city360.simulator.vector_env.make_vec``; ``vectorization_mode="async"`` for
    one process per agent)."""
    from city360.simulator.vector_env import make_vec as _make_vec

    return _make_vec(city_dir, num_envs, **options)
