"""``run_metadata.json``: what a run needs to be traced and reproduced.

Code commit and dirty flag, suite hash, prompt hash, agent/model/provider, the whole config,
seeds, package versions, start/end times and status. Never API keys: the config is scrubbed of
anything that looks like a secret before it is written.
"""

from __future__ import annotations

import datetime as dt
import platform
import re
import subprocess
from collections.abc import Mapping
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

from city360.scrub import scrub_text

__all__ = ["code_version", "now_utc", "package_versions", "scrub_secrets"]

_TRACKED_PACKAGES = (
    "city360",
    "numpy",
    "av",
    "moderngl",
    "opencv-python-headless",
    "networkx",
    "gymnasium",
    "pydantic",
    "osmnx",
    "openai",
    "anthropic",
    "google-genai",
    "ray",
)
_SECRET_KEY = re.compile(r"(api[_-]?key|token|secret|password|authorization)", re.IGNORECASE)


def now_utc() -> str:
    """The current UTC time, ISO 8601 with seconds."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def code_version() -> dict[str, Any]:
    """The git commit of the city360 source in use and whether it had uncommitted changes."""
    source = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(source), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": bool(status.strip())}


def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in _TRACKED_PACKAGES:
        try:
            versions[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def scrub_secrets(value: Any) -> Any:
    """A copy of ``value`` with secret-looking keys and values replaced by ``"***"``."""
    if isinstance(value, Mapping):
        return {
            k: "***" if _SECRET_KEY.search(str(k)) and v else scrub_secrets(v)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [scrub_secrets(v) for v in value]
    if isinstance(value, str):
        return scrub_text(value)
    return value
