"""Reproducible runs: ``city360 eval --config run.toml`` and ``city360 eval --rerun RUN_DIR``.

A run file holds any of eval's flags under their option names (``run-id`` or ``run_id``;
``city`` and ``suite`` for the positional city and ``--suite``); flags given on the command line
win. A rerun rebuilds the command from a finished run's ``run_metadata.json`` and refuses, with
the reason, when the code (commit, city360 version), the suite (content hash) or the per-task
seeds it would use differ from the recorded ones.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from city360.errors import ConfigError, InputFileError, did_you_mean

__all__ = ["check_rerun", "load_run_file", "rerun_defaults"]

_ALIASES = {"city": "city_dir", "agent_options": "agent_option"}


def load_run_file(path: Path, allowed: Iterable[str]) -> dict[str, Any]:
    """The eval options in the TOML file ``path``, keyed by parameter name; unknown keys raise
    naming the closest option."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        msg = f"run file {path} not found"
        raise InputFileError(msg) from None
    except tomllib.TOMLDecodeError as exc:
        msg = f"run file {path} is not valid TOML: {exc}"
        raise ConfigError(msg) from None
    names = set(allowed) - {"config", "rerun"}
    options: dict[str, Any] = {}
    for key, value in data.items():
        name = _ALIASES.get(key.replace("-", "_"), key.replace("-", "_"))
        if name not in names:
            shown = sorted(n.replace("_", "-") for n in names)
            msg = (
                f"unknown key {key!r} in run file {path}; expected eval options such as "
                f"{', '.join(shown)}.{did_you_mean(key.replace('_', '-'), shown)}"
            )
            raise ConfigError(msg)
        if name == "agent_option" and isinstance(value, Mapping):
            value = [f"{k}={json.dumps(v)}" for k, v in value.items()]
        options[name] = value
    return options


def rerun_defaults(run_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(options, metadata)``: eval options that repeat the run in ``run_dir``, and its
    recorded metadata (for :func:`check_rerun` after the suite is loaded)."""
    path = run_dir / "run_metadata.json"
    try:
        metadata: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        msg = f"{path} not found; is {run_dir} a run folder written by `city360 eval`?"
        raise InputFileError(msg) from None
    _check_code(metadata, path)
    config = metadata.get("config") or {}
    agent = metadata.get("agent") or {}
    if any(v == "***" for v in (agent.get("options") or {}).values()):
        msg = f"cannot rerun {run_dir}: a secret agent option was not recorded; pass it again"
        raise ConfigError(msg)
    judge = metadata.get("judge") or {}
    import time

    options: dict[str, Any] = {
        "output_root": str(run_dir.parent),
        "run_id": f"{metadata.get('run_id', run_dir.name)}-rerun-{time.strftime('%Y%m%d-%H%M%S')}",
        "city_dir": metadata["city_dir"],
        "suite": metadata["suite_dir"],
        "agent": agent.get("kind", "oracle"),
        "agent_option": [f"{k}={json.dumps(v)}" for k, v in (agent.get("options") or {}).items()],
        "provider": agent.get("provider"),
        "model": agent.get("model"),
        "base_url": agent.get("base_url"),
        "tasks": config.get("select"),
        "no_map": not config.get("use_map", True),
        "workers": config.get("workers", 1),
        "executor": config.get("executor", "local"),
        "seed": metadata.get("seed", 0),
        "save_frames": config.get("save_frames", False),
        "protocol": (metadata.get("protocol") or {}).get("name", "default"),
        "condition": metadata.get("condition", "day"),
        "judge_provider": judge.get("provider"),
        "judge_model": judge.get("model"),
        "judge_base_url": judge.get("base_url"),
    }
    return options, metadata


def _check_code(metadata: Mapping[str, Any], path: Path) -> None:
    from city360 import __version__
    from city360.eval.metadata import code_version

    then = metadata.get("code") or {}
    now = code_version()
    recorded = (metadata.get("versions") or {}).get("city360")
    if recorded and recorded != __version__:
        msg = (
            f"cannot rerun: {path} was made with city360 {recorded}, this is {__version__}; "
            f"install city360=={recorded}"
        )
        raise ConfigError(msg)
    if then.get("commit") and now.get("commit") and then["commit"] != now["commit"]:
        msg = (
            f"cannot rerun: {path} was made at commit {then['commit'][:12]}, the code is now at "
            f"{now['commit'][:12]}; check out {then['commit'][:12]} first"
        )
        raise ConfigError(msg)


def check_rerun(metadata: Mapping[str, Any], *, suite_hash: str, seeds: Mapping[str, int]) -> None:
    """Raise when the suite or the per-task seeds differ from the recorded run's."""
    if metadata.get("suite_hash") != suite_hash:
        msg = (
            f"cannot rerun {metadata.get('run_id')!r}: its suite hash was "
            f"{str(metadata.get('suite_hash'))[:12]}, the suite at {metadata.get('suite_dir')} "
            f"now hashes to {suite_hash[:12]} (the tasks changed)"
        )
        raise ConfigError(msg)
    recorded = metadata.get("task_seeds") or {}
    changed = sorted(t for t, s in seeds.items() if t in recorded and recorded[t] != s)
    if changed:
        msg = f"cannot rerun: the seeds of {', '.join(changed)} differ from the recorded run's"
        raise ConfigError(msg)
