"""Plugins: modules that register task families, metrics or agent kinds when imported.

A plugin is any importable module that calls :func:`city360.tasks.families.register_family`,
:func:`city360.eval.metrics.register_metric` or :func:`city360.agents.registry.register_agent`
at import. city360 imports, once per process and before the first lookup in any of those
registries:

- every module named in the environment variable :data:`PLUGINS_ENV` (comma-separated, e.g.
  ``CITY360_PLUGINS=mylab.families,mylab.metrics``), and
- every entry point of the group :data:`ENTRY_POINT_GROUP` of the installed packages (in a
  plugin package's ``pyproject.toml``: ``[project.entry-points."city360.plugins"]
  nearest_sign = "mylab.families"``).

Because the list lives in the environment and in the installed packages, eval's worker
processes (started with ``spawn``) and Ray workers load the same plugins as the process that
started them, so a plugin family evaluates with any number of workers.
"""

from __future__ import annotations

import importlib
import os
from importlib.metadata import entry_points

from city360.errors import ConfigError

__all__ = ["ENTRY_POINT_GROUP", "PLUGINS_ENV", "load_plugins", "plugin_modules"]

PLUGINS_ENV = "CITY360_PLUGINS"
"""Environment variable naming plugin modules, comma-separated."""
ENTRY_POINT_GROUP = "city360.plugins"
"""Entry-point group whose targets are imported as plugins."""

_loaded: list[str] = []
_started = False


def plugin_modules() -> list[str]:
    """The plugin modules named in :data:`PLUGINS_ENV`, in order, without blanks."""
    raw = os.environ.get(PLUGINS_ENV, "")
    return [name.strip() for name in raw.split(",") if name.strip()]


def load_plugins() -> list[str]:
    """Import every plugin (see the module docstring) once; the names imported so far.

    A module that cannot be imported raises :class:`ConfigError` naming it, where it was
    named, the import error and the fix.
    """
    global _started
    if _started:  # also guards a plugin that looks a registry up while it is imported
        return list(_loaded)
    _started = True
    for name in plugin_modules():
        _import(name, f"${PLUGINS_ENV}")
    for point in entry_points(group=ENTRY_POINT_GROUP):
        _import(point.value.split(":")[0], f"entry point {point.name!r} ({ENTRY_POINT_GROUP})")
    return list(_loaded)


def _import(name: str, where: str) -> None:
    if name in _loaded:
        return
    try:
        importlib.import_module(name)
    except Exception as exc:  # any error at import time: the plugin is unusable
        msg = (
            f"plugin module {name!r} named in {where} cannot be imported "
            f"({type(exc).__name__}: {exc}); install it, put its folder on PYTHONPATH, or "
            f"remove it from {where}"
        )
        raise ConfigError(msg) from exc
    _loaded.append(name)
