"""What agents read from a task: prompt and reference images, whatever the task's shape."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import pytest

from city360.agents._task import task_prompt, task_reference_images, task_step_limit
from city360.agents.prompts import ControllerUnits
from city360.errors import TaskError


@dataclass
class _Told:
    prompt: str
    reference_images: list[str]
    family: str = "MapNavigation"
    step_limit: int = 30
    id: str = "t1"


def test_paths_are_read_as_rgb_with_family_captions(tmp_path: Path) -> None:
    image = np.zeros((6, 8, 3), np.uint8)
    image[:, :, 0] = 255  # red in RGB
    path = tmp_path / "route.png"
    cv2.imwrite(str(path), image[:, :, ::-1])
    task = _Told(prompt="Go to the RED marker.", reference_images=[str(path), str(path)])
    assert task_prompt(task) == "Go to the RED marker."
    assert task_step_limit(task) == 30
    (cap1, img1), (cap2, _) = task_reference_images(task)
    assert cap1 == "route map (BLUE start, RED goal)"
    assert cap2 == "route map (BLUE start, RED goal) (2)"
    assert img1.shape == (6, 8, 3)
    assert img1[0, 0].tolist() == [255, 0, 0]


def test_missing_or_bad_images_and_prompts_raise(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match=r"task 't1': reference image .* cannot be read from"):
        task_reference_images(_Told(prompt="p", reference_images=[str(tmp_path / "nope.png")]))

    class Arrays:
        prompt_text = "p"
        reference_images = (("grey", np.zeros((4, 4), np.uint8)),)

    with pytest.raises(TaskError, match="reference image 'grey' must be RGB uint8"):
        task_reference_images(Arrays())

    class Silent:
        id = "x9"

    with pytest.raises(TaskError, match="task 'x9' has no prompt text"):
        task_prompt(Silent())
    assert task_reference_images(None) == []


def test_controller_units_follow_the_env_config() -> None:
    from city360.simulator.config import EnvConfig

    units = ControllerUnits.from_env_config(
        EnvConfig(move_m=(1.0, 3.0, 6.0), turn_default_deg=15.0)
    )
    assert units.walk_m == (1.0, 3.0, 6.0)
    assert units.default_turn_deg == 15.0
