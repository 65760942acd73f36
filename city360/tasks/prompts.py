"""Prompt templates, one per family, in our own words.

Each template tells the agent what to do and the exact form of its answer. Variables come from
the task's ``told`` model (never from its ground truth). :data:`PROMPT_VERSION` changes whenever
a template does, so runs can record which wording they used (see :func:`prompt_hash`).
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

from city360.tasks.schema import Family

if TYPE_CHECKING:
    from city360.tasks.schema import TaskBase

__all__ = [
    "ANSWER_FORMATS",
    "PROMPT_VERSION",
    "TEMPLATES",
    "answer_format",
    "prompt_hash",
    "render_prompt",
]

PROMPT_VERSION = 1

ANSWER_FORMATS: dict[Family, str] = {
    Family.LOCALIZATION: "ANSWER with the grid cell as `x:i y:j`, e.g. `x:2 y:4`",
    Family.LANDMARK_TEXT: "walk there, then ANSWER (any text) while standing in front of it",
    Family.LANDMARK_IMAGE: "walk there, then ANSWER (any text) while standing in front of it",
    Family.MAP_NAVIGATION: "walk to the RED marker, then ANSWER (any text) on arrival",
    Family.VLN: "follow the directions, then ANSWER (any text) where they tell you to stop",
    Family.OBJECT_COUNT: "ANSWER with a single whole number, e.g. `3`",
    Family.RELATIONAL: "ANSWER with the name of the place, exactly as its sign shows it",
}

TEMPLATES: dict[Family, str] = {
    Family.LOCALIZATION: (
        "You have been dropped somewhere in this city and do not know where. The attached map "
        "shows the area you are in, divided into a {grid_size} by {grid_size} grid. Columns are "
        "numbered x:1 to x:{grid_size} from west (left) to east (right) and rows y:1 to "
        "y:{grid_size} from north (top) to south (bottom). Look around and walk if it helps: "
        "street layout, shop signs and other landmarks can tell you where you are. When you "
        "know which grid cell you are standing in, answer in the form x:i y:j."
    ),
    Family.LANDMARK_TEXT: (
        "Find {landmark} in this city. Walk through the streets until you stand on the street "
        "in front of it, then give the ANSWER action. Your answer is judged by where you are "
        "when you give it, not by its text."
    ),
    Family.LANDMARK_IMAGE: (
        "The attached picture was taken on a street in this city, looking at a place. Find "
        "that place: walk until you stand where the picture could have been taken, then give "
        "the ANSWER action. Your answer is judged by where you are when you give it."
    ),
    Family.MAP_NAVIGATION: (
        "The attached map shows where you start (BLUE marker) and where you must go (RED "
        "marker). Walk through the streets to the RED marker, then give the ANSWER action "
        "there. Your answer is judged by where you are when you give it."
    ),
    Family.VLN: (
        "Follow these directions from where you stand:\n{instructions}\n"
        "When you reach the end of the directions, give the ANSWER action. Your answer is "
        "judged by where you are when you give it."
    ),
    Family.OBJECT_COUNT: (
        "Count every {object_kind} you can see {stretch}. Look at both sides of the street. "
        "When you have counted them all, answer with one whole number."
    ),
    Family.RELATIONAL: (
        "{question} Walk and look around as much as you need. Answer with the name of the "
        "place, written as on its sign."
    ),
}


def answer_format(family: Family | str) -> str:
    """The exact answer form the agent is told for ``family``."""
    return ANSWER_FORMATS[Family(family)]


def render_prompt(task: TaskBase) -> str:
    """The task's prompt, with the answer format appended on its own line."""
    told = task.told.model_dump()
    if task.family is Family.VLN:
        told["instructions"] = "\n".join(told["instructions"])
    if task.family is Family.OBJECT_COUNT:
        told["object_kind"] = told["object_kind"].replace("_", " ")
    body = TEMPLATES[task.family].format(**told)
    return f"{body}\nAnswer format: {answer_format(task.family)}."


def prompt_hash() -> str:
    """SHA-256 of every template and answer format (runs record it beside the suite hash)."""
    payload = json.dumps(
        {
            "version": PROMPT_VERSION,
            "templates": {k.value: v for k, v in TEMPLATES.items()},
            "formats": {k.value: v for k, v in ANSWER_FORMATS.items()},
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
