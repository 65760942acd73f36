"""The sign-reading agent: OCR of rendered signs, fuzzy matching, and its scan-and-walk loop."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest

from city360.agents.ocr import SignText, read_signs
from city360.agents.ocr_backends import OCR_BACKENDS
from city360.agents.random_agent import RandomAgent
from city360.agents.sign_reader import (
    SignReaderAgent,
    landmark_from_prompt,
    landmark_from_reference,
    read_text,
    text_match,
)
from city360.simulator.actions import Action, ActionCommand, Magnitude
from tests.agents.ocr_available import backend_or_skip

pytestmark = pytest.mark.ocr

SHOPS = {
    20.0: ("right", "Kahvila Aalto"),
    40.0: ("left", "Leipomo Sola"),
    60.0: ("right", "Kukka Puoti"),
}


def _sign(text: str | None, *, light_on_dark: bool = False) -> np.ndarray:
    """A 640x480 view of a grey facade with a row of windows and, when ``text`` is given, a
    signboard: dark letters on a light board, or light letters on a dark one."""
    view = np.full((480, 640, 3), 120, np.uint8)
    for x in range(20, 640, 120):
        cv2.rectangle(view, (x, 60), (x + 90, 150), (60, 70, 90), -1)
    if text:
        board, ink = (
            ((40, 60, 30), (240, 230, 120)) if light_on_dark else ((250, 250, 240), (20, 20, 20))
        )
        cv2.rectangle(view, (150, 200), (490, 250), board, -1)
        cv2.putText(view, text, (165, 236), cv2.FONT_HERSHEY_SIMPLEX, 1.0, ink, 2, cv2.LINE_AA)
    return view


class SignStreet:
    """A straight 80 m street with shop signs on either side at fixed positions; the view shows
    a sign when the agent looks at its side within 3 m of it."""

    def __init__(self) -> None:
        self.position_m = 0.0
        self.yaw = 0
        self.steps = 0

    def _obs(self, feedback: str = "") -> dict[str, Any]:
        side = {0: "ahead", 90: "right", 180: "behind", 270: "left"}.get(self.yaw % 360)
        text = None
        for at, (where, name) in SHOPS.items():
            if where == side and abs(self.position_m - at) <= 3.0:
                text = name
        return {
            "view": _sign(text),
            "branch_mask": np.zeros(3, np.int8),
            "step": self.steps,
            "feedback": feedback,
        }

    def reset(self) -> dict[str, Any]:
        self.__init__()  # type: ignore[misc]
        return self._obs()

    def step(self, command: ActionCommand) -> tuple[dict[str, Any], bool]:
        self.steps += 1
        if command.action is Action.ANSWER:
            return self._obs(), True
        if command.action is Action.W:
            step = {Magnitude.SMALL: 2.0, Magnitude.MEDIUM: 5.0, Magnitude.LARGE: 10.0, None: 5.0}
            self.position_m = min(80.0, self.position_m + step[command.magnitude])
        elif command.action in (Action.A, Action.D):
            turn = {Magnitude.SMALL: 30, Magnitude.MEDIUM: 60, Magnitude.LARGE: 90, None: 24}
            sign = 1 if command.action is Action.D else -1
            self.yaw += sign * turn[command.magnitude]
        elif command.action is Action.S:
            self.yaw = 0
        return self._obs(), False


def _episode(agent: Any, target: str, seed: int) -> tuple[bool, float]:
    class Task:
        prompt_text = (
            f"Find {target} in this city. Walk through the streets until you stand in front of it."
        )
        family = "LandmarkSearchText"

    env = SignStreet()
    obs = env.reset()
    agent.reset(Task(), seed=seed)
    for _ in range(50):
        decision = agent.act(obs)
        obs, done = env.step(decision.command)
        if done:
            at = next(k for k, (_, name) in SHOPS.items() if name == target)
            return True, abs(env.position_m - at)
    return False, float("inf")


def test_prompt_name_and_fuzzy_match() -> None:
    assert landmark_from_prompt("Find Kahvila Aalto in this city. Walk ...") == "Kahvila Aalto"
    assert text_match("Kahvila Aalto", "OPEN\nKahvi1a Aalto\n") > 0.85
    assert text_match("Kahvila Aalto", "Leipomo Sola") < 0.5
    assert text_match("", "x") == 0.0


def test_ocr_reads_a_rendered_sign_of_either_polarity() -> None:
    assert text_match("Leipomo Sola", read_text(_sign("Leipomo Sola"))) > 0.8
    assert text_match("Kukka Puoti", read_text(_sign("Kukka Puoti", light_on_dark=True))) > 0.8
    assert text_match("Leipomo Sola", read_text(_sign(None))) < 0.5


def test_read_signs_says_where_each_sign_is() -> None:
    signs = read_signs(_sign("Kahvila Aalto"))
    best = max(signs, key=lambda s: text_match("Kahvila Aalto", s.text))
    assert text_match("Kahvila Aalto", best.text) > 0.8
    x, y, w, h = best.box
    assert x >= 140
    assert x + w <= 500
    assert y >= 190
    assert y + h <= 260
    assert 250 < best.centre_x < 390


@pytest.mark.parametrize("ocr", list(OCR_BACKENDS))
def test_the_name_of_a_search_by_image_is_read_off_the_reference_picture(ocr: str) -> None:
    picture = _sign("Leipomo Sola")
    backend = backend_or_skip(ocr)
    assert text_match("Leipomo Sola", landmark_from_reference(picture, ocr=backend)) > 0.8

    class ImageTask:
        prompt_text = "Find the place in the picture. Walk there and answer."
        family = "LandmarkSearchImage"
        reference_images = (("picture of the place to find", picture),)

    agent = SignReaderAgent(seed=0, ocr=ocr)
    agent.reset(ImageTask())
    assert text_match("Leipomo Sola", agent.landmark) > 0.8


@pytest.mark.parametrize("ocr", list(OCR_BACKENDS))
def test_sign_reader_finds_the_named_shop_and_beats_random(ocr: str) -> None:
    backend_or_skip(ocr)
    target = "Kahvila Aalto"
    found, error_m = _episode(SignReaderAgent(seed=0, ocr=ocr), target, seed=0)
    assert found
    assert error_m <= 3.0
    random_hits = 0
    for seed in range(3):
        answered, err = _episode(RandomAgent(seed=seed), target, seed=seed)
        random_hits += answered and err <= 3.0
    assert random_hits == 0


class ReadsScandinavian:
    """An OCR backend that reads the same sign everywhere: a near match for "Toscanini"."""

    name = "fixed"

    def read_signs(self, image: np.ndarray) -> list[SignText]:
        return [SignText("Scandinavian Logistic", (10, 10, 100, 20))]

    def check(self) -> None:
        return None


def test_a_near_match_earns_one_closer_look_not_a_creep() -> None:
    class Task:
        prompt_text = "Find Toscanini in this city."
        family = "LandmarkSearchText"

    agent = SignReaderAgent(seed=0, ocr="tesseract")  # its OCR is replaced below
    agent.ocr = ReadsScandinavian()
    agent.reset(Task(), seed=0)
    assert agent.near_threshold <= text_match("Toscanini", "Scandinavian") < agent.match_threshold
    walks = []
    obs = {"view": _sign(None), "branch_mask": np.zeros(3, np.int8), "step": 0, "feedback": ""}
    for step in range(24):
        command = agent.act({**obs, "step": step}).command
        assert command.action is not Action.ANSWER
        if command.action is Action.W:
            walks.append(command.magnitude)
    assert walks[:4] == [Magnitude.SMALL, Magnitude.LARGE, Magnitude.SMALL, Magnitude.LARGE]
