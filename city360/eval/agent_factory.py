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
    from city360.eval.specs import AgentSpec

__all__ = ["AGENT_KINDS", "agent_prompt_hash", "build_agent", "preflight_agent"]

AGENT_KINDS = ("lmm", "random", "oracle", "map", "signs")
_PROVIDER_OPTIONS = ("timeout_s", "api_version")


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
        **{k: v for k, v in spec.options.items() if k in _PROVIDER_OPTIONS},
    )


def preflight_agent(spec: AgentSpec, *, city_dir: Path) -> None:
    """Fail now if the agent cannot work: unknown kind, provider, model, missing key,
    unreachable endpoint, options the agent does not take."""
    kind = _check_kind(spec.kind)
    if kind == "lmm":
        from city360.agents.lmm import LMMConfig

        options = {k: v for k, v in spec.options.items() if k not in _PROVIDER_OPTIONS}
        try:
            LMMConfig(**options)
        except TypeError as exc:
            msg = f"bad lmm agent option: {exc}"
            raise ConfigError(msg) from None
        _make_provider(spec, preflight=True).close()


def agent_prompt_hash(spec: AgentSpec, env_config: Any) -> str | None:
    """Fingerprint of the LMM agent's own prompts with the run's controller units."""
    if _check_kind(spec.kind) != "lmm":
        return None
    from city360.agents.prompts import ControllerUnits, prompt_hash

    return prompt_hash(ControllerUnits.from_env_config(env_config))


def build_agent(spec: AgentSpec, *, city_dir: Path, env_config: Any, seed: int = 0) -> Agent:
    """The agent for one worker; ``env_config`` is the simulator's ``EnvConfig`` (its step
    sizes go into the oracle's plans and the LMM's system prompt). ``spec.options`` are passed
    to the agent's constructor (for ``lmm``: fields of ``LMMConfig``)."""
    kind = _check_kind(spec.kind)
    options = {k: v for k, v in spec.options.items() if k not in _PROVIDER_OPTIONS}
    move_m = tuple(float(m) for m in env_config.move_m)
    if kind == "lmm":
        from city360.agents.lmm import LMMAgent, LMMConfig
        from city360.agents.prompts import ControllerUnits

        config = LMMConfig(
            units=ControllerUnits.from_env_config(env_config),
            use_map=bool(env_config.map),
            **options,
        )
        return LMMAgent(_make_provider(spec, preflight=False), config=config, seed=seed)
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
