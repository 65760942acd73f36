"""Build the agent a run asks for, in each worker, from a plain :class:`AgentSpec`.

``lmm`` talks to a model through a provider (keys from the environment); ``random``,
``oracle``, ``map`` and ``signs`` are the baselines of ``city360.agents``. ``preflight_agent``
runs in the parent before any episode so that a wrong provider, model, key or endpoint fails
at once, not after fifty failed steps.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from city360.errors import ConfigError, did_you_mean

if TYPE_CHECKING:
    from city360.agents.base import Agent
    from city360.eval.runner import AgentSpec

__all__ = ["AGENT_KINDS", "build_agent", "preflight_agent"]

AGENT_KINDS = ("lmm", "random", "oracle", "map", "signs")


def _check_kind(kind: str) -> str:
    name = kind.strip().lower()
    if name not in AGENT_KINDS:
        msg = (
            f"unknown agent {kind!r}; expected one of {', '.join(AGENT_KINDS)}."
            f"{did_you_mean(name, AGENT_KINDS)}"
        )
        raise ConfigError(msg)
    return name


def _make_provider(spec: AgentSpec, *, preflight: bool) -> Any:
    from city360.agents.providers import make_provider

    if not spec.provider or not spec.model:
        msg = "the lmm agent needs --provider and --model (e.g. --provider openai --model gpt-4o)"
        raise ConfigError(msg)
    return make_provider(
        spec.provider,
        spec.model,
        base_url=spec.base_url,
        preflight=preflight,
        **{k: v for k, v in spec.options.items() if k in ("timeout_s", "api_version")},
    )


def preflight_agent(spec: AgentSpec, *, city_dir: Path) -> None:
    """Fail now if the agent cannot work: unknown kind, provider, model, missing key,
    unreachable endpoint."""
    kind = _check_kind(spec.kind)
    if kind == "lmm":
        _make_provider(spec, preflight=True).close()


def build_agent(
    spec: AgentSpec, *, city_dir: Path, move_m: tuple[float, float, float], seed: int = 0
) -> Agent:
    """The agent for one worker. ``move_m`` are the simulator's W step sizes."""
    kind = _check_kind(spec.kind)
    options = dict(spec.options)
    if kind == "lmm":
        from city360.agents.lmm import LMMAgent, LMMConfig

        return LMMAgent(_make_provider(spec, preflight=False), config=LMMConfig(), seed=seed)
    if kind == "random":
        from city360.agents.random_agent import RandomAgent

        return RandomAgent(seed=seed, **options)
    if kind == "oracle":
        from city360.agents.oracle import OracleAgent

        return OracleAgent(city_dir, move_m=move_m, **options)
    if kind == "map":
        from city360.agents.map_reader import MapReaderAgent

        return MapReaderAgent(**options)
    from city360.agents.sign_reader import SignReaderAgent

    return SignReaderAgent(**options)
