"""Prompts: each family's template and answer format live on its task model (in its module
under :mod:`city360.tasks.families`); this module renders them and fingerprints them all.

:data:`PROMPT_VERSION` changes whenever a built-in template does, so runs can record which
wording they used (see :func:`prompt_hash`, which covers every registered family).
"""

from __future__ import annotations

import hashlib
import json

from city360.tasks.families import all_families, get_family
from city360.tasks.schema import TaskBase

__all__ = ["PROMPT_VERSION", "answer_format", "prompt_hash", "render_prompt"]

PROMPT_VERSION = 2
"""2: the localization template numbers its grid from ``{first}`` to ``{last}`` (protocols)."""


def answer_format(family: str) -> str:
    """The exact answer form the agent is told for ``family``."""
    return get_family(family).answer_format


def render_prompt(task: TaskBase) -> str:
    """The task's prompt, with the answer format appended on its own line."""
    return task.render_prompt()


def prompt_hash() -> str:
    """SHA-256 of every registered template and answer format (runs record it beside the suite
    hash). With only the built-in families registered it is the hash of round one."""
    specs = all_families()
    payload = json.dumps(
        {
            "version": PROMPT_VERSION,
            "templates": {spec.name: spec.template for spec in specs},
            "formats": {spec.name: spec.answer_format for spec in specs},
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
