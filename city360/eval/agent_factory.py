"""Build the agent a run asks for, in each worker, from a plain :class:`AgentSpec`.

Agents are looked up in :mod:`city360.agents.registry`; this module registers the built-in
kinds: ``lmm`` talks to a model through a provider (keys from the environment); ``random``,
``oracle``, ``map`` and ``signs`` are the baselines of ``city360.agents``. A kind holding ``:``
(``mypkg.mod:MyAgent``) is a user's own class, imported in the worker. ``preflight_agent``
runs in the parent before any episode so that a wrong provider, model, key, endpoint, import
path or option fails at once, not after fifty failed steps.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from city360.agents.registry import (
    AgentKind,
    build_agent_from_path,
    get_agent_kind,
    is_agent_path,
    preflight_agent_path,
    register_agent,
)
from city360.errors import ConfigError

if TYPE_CHECKING:
    from city360.agents.base import Agent
    from city360.eval.specs import AgentSpec

__all__ = ["AGENT_KINDS", "agent_prompt_hash", "build_agent", "preflight_agent"]

AGENT_KINDS = ("lmm", "random", "oracle", "map", "signs")
"""The built-in kinds (the registry may hold more)."""
_PROVIDER_OPTIONS = ("timeout_s", "api_version")


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
        **{k: v for k, v in spec.options.items() if k in _PROVIDER_OPTIONS},
    )


def _agent_options(spec: AgentSpec) -> dict[str, Any]:
    return {k: v for k, v in spec.options.items() if k not in _PROVIDER_OPTIONS}


def _preflight_lmm(spec: AgentSpec, city_dir: Path) -> None:
    from city360.agents.lmm import LMMConfig

    try:
        LMMConfig(**_agent_options(spec))
    except TypeError as exc:
        msg = f"bad lmm agent option: {exc}"
        raise ConfigError(msg) from None
    _make_provider(spec, preflight=True).close()


def _lmm_prompt_hash(spec: AgentSpec, env_config: Any) -> str | None:
    from city360.agents.prompts import ControllerUnits, prompt_hash

    reader = str(spec.options.get("reply_reader", "tolerant"))
    return prompt_hash(ControllerUnits.from_env_config(env_config), reply_reader=reader)


def _build_lmm(spec: AgentSpec, city_dir: Path, env_config: Any, seed: int) -> Agent:
    from city360.agents.lmm import LMMAgent, LMMConfig
    from city360.agents.prompts import ControllerUnits

    config = LMMConfig(
        units=ControllerUnits.from_env_config(env_config),
        use_map=bool(env_config.map),
        **_agent_options(spec),
    )
    if config.views > 1 and not env_config.multiview:
        msg = f"the lmm agent's views={config.views} needs the env's multiview: use --views"
        raise ConfigError(msg)
    return LMMAgent(_make_provider(spec, preflight=False), config=config, seed=seed)


def _build_random(spec: AgentSpec, city_dir: Path, env_config: Any, seed: int) -> Agent:
    from city360.agents.random_agent import RandomAgent

    return RandomAgent(seed=seed, **_agent_options(spec))


def _build_oracle(spec: AgentSpec, city_dir: Path, env_config: Any, seed: int) -> Agent:
    from city360.agents.oracle import OracleAgent

    move_m = tuple(float(m) for m in env_config.move_m)
    return OracleAgent(city_dir, move_m=move_m, **_agent_options(spec))


def _build_map(spec: AgentSpec, city_dir: Path, env_config: Any, seed: int) -> Agent:
    from city360.agents.map_reader import MapReaderAgent

    return MapReaderAgent(**_agent_options(spec))


def _build_signs(spec: AgentSpec, city_dir: Path, env_config: Any, seed: int) -> Agent:
    from city360.agents.sign_reader import SignReaderAgent

    return SignReaderAgent(**_agent_options(spec))


def _preflight_signs(spec: AgentSpec, city_dir: Path) -> None:
    # building it checks its options and that its OCR backend is installed (a second)
    from city360.agents.sign_reader import SignReaderAgent

    try:
        SignReaderAgent(**_agent_options(spec))
    except TypeError as exc:
        msg = f"bad signs agent option: {exc}"
        raise ConfigError(msg) from None


for _kind in (
    AgentKind(
        "lmm",
        _build_lmm,
        preflight=_preflight_lmm,
        prompt_hash=_lmm_prompt_hash,
        description="a language-and-vision model through a provider",
    ),
    AgentKind("random", _build_random, description="random moves, rare answers"),
    AgentKind("oracle", _build_oracle, description="privileged shortest path and answer"),
    AgentKind("map", _build_map, description="reads the location map"),
    AgentKind(
        "signs", _build_signs, preflight=_preflight_signs, description="reads shop signs (OCR)"
    ),
):
    register_agent(_kind)


def preflight_agent(spec: AgentSpec, *, city_dir: Path) -> None:
    """Fail now if the agent cannot work: unknown kind, provider, model, missing key,
    unreachable endpoint, options the agent does not take, an import path that does not
    import or a class that is not an agent."""
    if is_agent_path(spec.kind):
        preflight_agent_path(spec.kind, spec.options)
        return
    kind = get_agent_kind(spec.kind)
    if kind.preflight is not None:
        kind.preflight(spec, city_dir)


def agent_prompt_hash(spec: AgentSpec, env_config: Any) -> str | None:
    """Fingerprint of the agent's own prompts (the LMM's) with the run's controller units."""
    if is_agent_path(spec.kind):
        return None
    kind = get_agent_kind(spec.kind)
    return None if kind.prompt_hash is None else kind.prompt_hash(spec, env_config)


def build_agent(spec: AgentSpec, *, city_dir: Path, env_config: Any, seed: int = 0) -> Agent:
    """The agent for one worker; ``env_config`` is the simulator's ``EnvConfig`` (its step
    sizes go into the oracle's plans and the LMM's system prompt). ``spec.options`` are passed
    to the agent's constructor (for ``lmm``: fields of ``LMMConfig``; for an import path: the
    class's keyword arguments)."""
    if is_agent_path(spec.kind):
        agent: Agent = build_agent_from_path(spec.kind, spec.options)
        return agent
    built: Agent = get_agent_kind(spec.kind).build(spec, city_dir, env_config, seed)
    return built
