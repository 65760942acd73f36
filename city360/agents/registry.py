"""The registry of agent kinds, and loading users' own agents by import path.

A run names its agent by a registered kind (``lmm``, ``random``, ``oracle``, ``map``,
``signs``: registered by :mod:`city360.eval.agent_factory`) or by the import path of any class
that follows the :class:`~city360.agents.base.Agent` protocol: ``mypkg.mod:MyAgent``. A path
travels to workers as that string (picklable for process and Ray workers) and is imported
there; ``--agent-option KEY=VALUE`` become the class's keyword arguments.
"""

from __future__ import annotations

import importlib
import inspect
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from city360.errors import ConfigError, did_you_mean
from city360.plugins import load_plugins

__all__ = [
    "AgentKind",
    "agent_metadata",
    "all_agent_kinds",
    "build_agent_from_path",
    "check_agent_class",
    "get_agent_kind",
    "is_agent_path",
    "load_agent_class",
    "parse_agent_options",
    "preflight_agent_path",
    "register_agent",
    "unregister_agent",
]

Builder = Callable[[Any, Path, Any, int], Any]
"""``(spec, city_dir, env_config, seed) -> Agent``; ``spec`` is the run's ``AgentSpec``."""


@dataclass(frozen=True, slots=True)
class AgentKind:
    """A named agent: how a worker builds it and, optionally, how the parent checks it before
    any episode (``preflight(spec, city_dir)``) and fingerprints its prompts
    (``prompt_hash(spec, env_config)``)."""

    name: str
    build: Builder
    preflight: Callable[[Any, Path], None] | None = None
    prompt_hash: Callable[[Any, Any], str | None] | None = None
    description: str = ""


_KINDS: dict[str, AgentKind] = {}


def register_agent(kind: AgentKind, *, replace: bool = False) -> AgentKind:
    """Register ``kind`` under its (lower-case) name; an existing name needs ``replace=True``."""
    name = kind.name.strip().lower()
    if name in _KINDS and not replace and _KINDS[name] != kind:
        msg = f"agent {name!r} is already registered; pass replace=True to replace it"
        raise ConfigError(msg)
    if ":" in name:
        msg = f"agent name {name!r} may not hold ':' (that marks an import path)"
        raise ConfigError(msg)
    _KINDS[name] = kind
    return kind


def unregister_agent(name: str) -> None:
    _KINDS.pop(name.strip().lower(), None)


def all_agent_kinds() -> list[AgentKind]:
    load_plugins()
    return list(_KINDS.values())


def is_agent_path(kind: str) -> bool:
    """True for ``package.module:ClassName`` (a user's own agent), False for a kind name."""
    return ":" in kind


def get_agent_kind(kind: str) -> AgentKind:
    """The registered kind; unknown names raise :class:`ConfigError` with the known ones. A
    name not registered yet loads the plugins (:mod:`city360.plugins`) first."""
    name = kind.strip().lower()
    if name not in _KINDS:
        load_plugins()
    try:
        return _KINDS[name]
    except KeyError:
        known = list(_KINDS)
        msg = (
            f"unknown agent {kind!r}; expected one of {', '.join(known)}, or the import path "
            f"of your own agent class, e.g. mypkg.mod:MyAgent.{did_you_mean(name, known)}"
        )
        raise ConfigError(msg) from None


def load_agent_class(path: str) -> type:
    """Import ``package.module:ClassName`` and check it follows the Agent protocol."""
    module_name, _, attr = path.partition(":")
    module_name, attr = module_name.strip(), attr.strip()
    if not module_name or not attr:
        msg = f"agent path {path!r} must look like 'package.module:ClassName'"
        raise ConfigError(msg)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        msg = (
            f"cannot import the module of agent {path!r}: {exc}. Install the package that "
            f"holds {module_name!r} in this environment (e.g. `pip install -e .` in your "
            "project) or put its folder on PYTHONPATH"
        )
        raise ConfigError(msg) from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            names = [n for n in dir(obj) if not n.startswith("_")]
            msg = (
                f"agent {path!r}: module {module_name!r} has no attribute {attr!r}."
                f"{did_you_mean(part, names)}"
            )
            raise ConfigError(msg)
        obj = getattr(obj, part)
    return check_agent_class(obj, path=path)


def check_agent_class(obj: Any, *, path: str) -> type:
    """``obj`` if it is a class with callable ``reset`` and ``act``, else :class:`ConfigError`."""
    if not inspect.isclass(obj):
        msg = (
            f"agent {path!r} is a {type(obj).__name__}, not a class; point --agent at a class "
            "with reset(task) and act(observation) (see city360/agents/base.py)"
        )
        raise ConfigError(msg)
    missing = [name for name in ("reset", "act") if not callable(getattr(obj, name, None))]
    if missing:
        msg = (
            f"agent {path!r} does not follow the Agent protocol: it has no "
            f"{' or '.join(missing)}(); an agent needs reset(task) and act(observation) "
            "returning an AgentDecision (see city360/agents/base.py)"
        )
        raise ConfigError(msg)
    return obj


def _check_options(cls: type, options: Mapping[str, Any], *, path: str) -> None:
    try:
        inspect.signature(cls).bind(**options)
    except TypeError as exc:
        raise _option_error(cls, options, path=path, reason=str(exc)) from None
    except ValueError:  # no signature (a builtin): let the constructor decide
        return


def _option_error(cls: type, options: Mapping[str, Any], *, path: str, reason: str) -> ConfigError:
    try:
        signature = inspect.signature(cls)
        bare = [
            p.replace(annotation=inspect.Parameter.empty) for p in signature.parameters.values()
        ]
        takes = str(inspect.Signature(bare))
    except (TypeError, ValueError):
        takes = "(?)"
    given = ", ".join(sorted(options)) or "none"
    msg = (
        f"agent {path!r} rejected its options ({given}): {reason}. Its constructor takes "
        f"{takes}; pass them as --agent-option KEY=VALUE"
    )
    return ConfigError(msg)


def preflight_agent_path(path: str, options: Mapping[str, Any]) -> None:
    """Fail in the parent before any episode: the import, the protocol, the options."""
    _check_options(load_agent_class(path), options, path=path)


def build_agent_from_path(path: str, options: Mapping[str, Any]) -> Any:
    """Import ``path`` (in the worker) and build the agent with ``options`` as keywords."""
    cls = load_agent_class(path)
    _check_options(cls, options, path=path)
    try:
        return cls(**options)
    except TypeError as exc:
        raise _option_error(cls, options, path=path, reason=str(exc)) from None


def parse_agent_options(items: Iterable[str]) -> dict[str, Any]:
    """``["k=v", ...]`` -> ``{"k": v}``; each value parsed as JSON when it is (``3``, ``true``,
    ``[1, 2]``, ``"x"``), else kept as the text after ``=``."""
    options: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            msg = f"--agent-option {item!r} must look like KEY=VALUE (e.g. temperature=0.2)"
            raise ConfigError(msg)
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


_SECRET_PARTS = ("key", "token", "secret", "password", "authorization")


def agent_metadata(spec: Any) -> dict[str, Any]:
    """What run_metadata.json records of the agent: kind, import path (for a user's own
    agent), provider, model, endpoint and options, with secret-looking options as ``"***"``."""
    options = {
        key: "***" if any(part in str(key).lower() for part in _SECRET_PARTS) else value
        for key, value in dict(spec.options).items()
    }
    return {
        "kind": spec.kind,
        "path": spec.kind if is_agent_path(spec.kind) else None,
        "provider": spec.provider,
        "model": spec.model,
        "base_url": spec.base_url,
        "options": options,
    }
