"""User-changeable settings with their defaults stated once."""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_cache_dir

__all__ = ["cache_dir"]


def cache_dir() -> Path:
    """Where city360 caches built artefacts (the demo city, ...).

    ``$CITY360_CACHE_DIR`` when set, else the platform's user cache dir (``~/.cache/city360``).
    """
    override = os.environ.get("CITY360_CACHE_DIR")
    return Path(override) if override else Path(user_cache_dir("city360"))
