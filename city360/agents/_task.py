"""Read what an agent is told from a task, whichever shape the task object has.

The agents need two things: the prompt text and the reference images. ``city360.tasks`` models
provide them; small stand-ins (tests, Python users) may too. Accepted:
- prompt: a ``prompt_text`` attribute or property, or a ``prompt()`` / ``render_prompt()``
  method, or a ``prompt`` string;
- reference images: ``reference_images`` as ``(caption, image)`` pairs, bare RGB arrays or
  image file paths (read with OpenCV), or a ``load_reference_images()`` method returning any
  of those.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from city360.errors import TaskError
from city360.types import Image

__all__ = ["task_id", "task_prompt", "task_reference_images", "task_step_limit"]


def task_id(task: Any) -> str:
    return str(getattr(task, "id", None) or getattr(task, "task_id", None) or "task")


def task_prompt(task: Any) -> str:
    """The text the agent is told."""
    if task is None:
        return ""
    if isinstance(task, str):
        return task
    for name in ("prompt_text", "render_prompt", "prompt"):
        value = getattr(task, name, None)
        if callable(value):
            value = value()
        if isinstance(value, str):
            return value
    msg = f"task {task_id(task)!r} has no prompt text (expected `prompt_text` or `prompt()`)"
    raise TaskError(msg)


def _load_image(value: Any, caption: str, task: Any) -> Image:
    if isinstance(value, str | Path):
        import cv2

        bgr = cv2.imread(str(value), cv2.IMREAD_COLOR)
        if bgr is None:
            msg = (
                f"task {task_id(task)!r}: reference image {caption!r} cannot be read from "
                f"{value}; check that the suite's assets are present"
            )
            raise TaskError(msg)
        return np.ascontiguousarray(bgr[:, :, ::-1])
    array = np.asarray(value)
    if array.dtype != np.uint8 or array.ndim != 3 or array.shape[2] != 3:
        msg = (
            f"task {task_id(task)!r}: reference image {caption!r} must be RGB uint8 (H, W, 3), "
            f"got {array.dtype} {array.shape}"
        )
        raise TaskError(msg)
    return array


_CAPTIONS = {
    "mapnavigation": "route map (BLUE start, RED goal)",
    "localization": "grid map",
    "landmarksearchimage": "picture of the place to find",
}


def _default_caption(task: Any, index: int) -> str:
    family = str(getattr(task, "family", "") or "")
    family = family.replace(" ", "").replace("_", "").lower()
    caption = _CAPTIONS.get(family)
    if caption is None:
        return f"reference image {index + 1}"
    return caption if index == 0 else f"{caption} ({index + 1})"


def task_reference_images(task: Any) -> list[tuple[str, Image]]:
    """``(caption, RGB image)`` for every reference image of the task, in order."""
    if task is None or isinstance(task, str):
        return []
    loader = getattr(task, "load_reference_images", None)
    raw: Any = loader() if callable(loader) else getattr(task, "reference_images", None)
    if raw is None:
        return []
    if isinstance(raw, dict):
        raw = list(raw.items())
    images: list[tuple[str, Image]] = []
    for index, item in enumerate(_as_list(raw)):
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            caption, value = item
        else:
            caption, value = _default_caption(task, index), item
        images.append((caption, _load_image(value, caption, task)))
    return images


def _as_list(raw: Any) -> list[Any]:
    if isinstance(raw, np.ndarray):
        return [raw]
    if isinstance(raw, Iterable):
        return list(raw)
    return [raw]


def task_step_limit(task: Any) -> int | None:
    value = getattr(task, "step_limit", None) or getattr(task, "max_steps", None)
    return int(value) if value else None
