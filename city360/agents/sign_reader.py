"""A sign-reading agent for landmark search: walk the streets looking at the shop fronts, read
the signs with OCR (:mod:`city360.agents.ocr`), and answer in front of the named one.

What it is told: the landmark's name, from the task prompt ("Find NAME in this city") or a
``landmark`` attribute; for a search by image, the name is read off the reference picture (the
sign nearest the picture's centre, where the task's camera looked).

How it walks, in the view frame of the controller (yaw 0 = the direction of travel, positive to
the right): signs face the street, so they read best square on, at yaw +90 or -90, and barely
at an angle. At every stop it reads the side it is looking at, turns 180 degrees (two LARGE
turns) and reads the other side, then walks on (``W`` LARGE, 10 m) still looking sideways;
W walks along the street whatever the yaw within 90 degrees, so the first side of the next stop
costs no turn. Three steps per 10 m of street, both sides read.

The signs are read by an OCR backend: ``ocr=`` names one of
:data:`~city360.agents.ocr_backends.OCR_BACKENDS` (default
:data:`~city360.agents.ocr_backends.DEFAULT_OCR`; ``--agent-option ocr=tesseract`` from the
command line). A sign whose text matches the landmark (``difflib`` ratio over the best window
of words, at least ``match_threshold``) ends the episode with ANSWER; one that nearly matches
(at least ``near_threshold``: read at an angle or cut by the view's edge) makes the next walk a
SMALL step, for a square-on look; one closer look only: when it still does not read, the walk
after it is LARGE again, since a near match is as often a few letters shared with another sign
("Scandinavian" is 0.67 like "Toscanini"), which would keep it creeping on in 2 m steps.

At a junction (the observation offers branches) it takes the branch whose way ahead it has
walked least (:class:`~city360.agents.street_memory.StreetMemory`,
dead-reckoned from the location map's arrow and the feedback's metres; a seeded random one
among ties, and always a random one with ``memory=False`` or without a location map); at a
dead end the U-turn offered there. It uses only the view, the location map, the branch mask and
the feedback text: nothing privileged.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from typing import Any, ClassVar

import numpy as np

from city360.agents._task import task_prompt, task_reference_images
from city360.agents.base import AgentDecision, Observation, offered_branches
from city360.agents.ocr import SignText, read_text
from city360.agents.ocr_backends import DEFAULT_OCR, OcrBackend, make_ocr_backend
from city360.agents.street_memory import StreetMemory
from city360.errors import ResetNeededError
from city360.simulator.actions import Action, ActionCommand, Magnitude
from city360.types import Image

__all__ = [
    "SignReaderAgent",
    "landmark_from_prompt",
    "landmark_from_reference",
    "read_text",
    "text_match",
]

_PROMPT_NAME = re.compile(r"Find (.+?) in this city", re.IGNORECASE | re.DOTALL)
_SIDE_YAW = 90
"""Yaw (degrees) of a side view: square on to the shop fronts. LARGE turns are 90 degrees."""


def landmark_from_prompt(prompt: str) -> str:
    """The landmark name in a landmark-search prompt, or the first quoted phrase, or ""."""
    match = _PROMPT_NAME.search(prompt)
    if match:
        return match.group(1).strip().strip("\"'“”")
    quoted = re.search(r"[\"“']([^\"”']{2,})[\"”']", prompt)
    return quoted.group(1).strip() if quoted else ""


def landmark_from_reference(
    image: Image, *, lang: str = "eng", ocr: OcrBackend | None = None
) -> str:
    """The text of the sign nearest the centre of a reference picture, or "" when none reads;
    read by ``ocr`` (default: the :data:`DEFAULT_OCR` backend, with ``lang`` for tesseract)."""
    backend = ocr if ocr is not None else make_ocr_backend(DEFAULT_OCR, lang=lang, check=False)
    signs = backend.read_signs(image)
    if not signs:
        return ""
    centre = image.shape[1] / 2
    nearest = min(signs, key=lambda s: abs(s.centre_x - centre))
    return nearest.text


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return " ".join(re.findall(r"\w+", text))


def text_match(target: str, text: str) -> float:
    """Similarity in [0, 1] of ``target`` to the best window of words in ``text``."""
    want = _normalise(target)
    words = _normalise(text).split()
    if not want or not words:
        return 0.0
    size = len(want.split())
    best = 0.0
    for width in {max(1, size - 1), size, size + 1}:
        for start in range(max(1, len(words) - width + 1)):
            window = " ".join(words[start : start + width])
            best = max(best, difflib.SequenceMatcher(None, want, window).ratio())
    return best


class SignReaderAgent:
    """See the module docstring."""

    privileged: ClassVar[bool] = False

    def __init__(
        self,
        *,
        seed: int | None = None,
        match_threshold: float = 0.75,
        near_threshold: float = 0.5,
        lang: str = "eng",
        memory: bool = True,
        ocr: str = DEFAULT_OCR,
    ) -> None:
        self.name = "signs"
        self.ocr = make_ocr_backend(ocr, lang=lang)
        """What reads the signs (checked installed now, not at the first view)."""
        self.memory = StreetMemory() if memory else None
        """The streets walked so far (None: junction branches at random)."""
        self.seed = seed
        self.match_threshold = match_threshold
        self.near_threshold = near_threshold
        self.lang = lang
        self.landmark = ""
        self._rng = np.random.default_rng(seed)
        self._active = False
        self._yaw = 0
        self._sides_read: set[int] = set()
        self._turning: Action | None = None
        self._near = False
        self._looked_closer = False
        self.readings: list[tuple[int, str, float]] = []
        """Every side read: (yaw, text read, best match score), for reports and debugging."""

    def __repr__(self) -> str:
        return (
            f"SignReaderAgent(landmark={self.landmark!r}, seed={self.seed}, "
            f"memory={self.memory is not None}, ocr={self.ocr.name!r})"
        )

    def reset(self, task: Any, *, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.landmark = str(getattr(task, "landmark", "") or "") or landmark_from_prompt(
            task_prompt(task)
        )
        if not self.landmark:
            for _, image in task_reference_images(task):
                self.landmark = landmark_from_reference(image, ocr=self.ocr)
                if self.landmark:
                    break
        self._active = True
        self._yaw = 0
        self._sides_read = set()
        self._turning = None
        self._near = False
        self._looked_closer = False
        self.readings = []
        if self.memory is not None:
            self.memory.reset()

    # -- reading -----------------------------------------------------------------------------
    def _score(self, signs: list[SignText]) -> float:
        if not self.landmark:
            return 0.0
        return max((text_match(self.landmark, sign.text) for sign in signs), default=0.0)

    def _read_side(self, observation: Observation) -> float:
        """Read the side the view looks at; the best match score of its signs."""
        view = observation.get("view")
        if view is None:
            return 0.0
        signs = self.ocr.read_signs(view)
        score = self._score(signs)
        text = " | ".join(sign.text for sign in signs)
        self.readings.append((self._yaw, text[:120], round(score, 3)))
        self._sides_read.add(self._yaw)
        return score

    # -- acting ------------------------------------------------------------------------------
    def _turn(self, action: Action, thought: str) -> AgentDecision:
        self._yaw += _SIDE_YAW if action is Action.D else -_SIDE_YAW
        self._yaw = (self._yaw + 180) % 360 - 180
        if abs(self._yaw) == _SIDE_YAW:
            self._turning = None
        return AgentDecision(ActionCommand(action, Magnitude.LARGE), thought=thought)

    def act(self, observation: Observation) -> AgentDecision:
        if not self._active:
            msg = "SignReaderAgent.act() called before reset(task); call reset(task) first"
            raise ResetNeededError(msg)
        if self.memory is not None:
            at_junction = bool(offered_branches(observation))
            self.memory.update(observation, float(self._yaw), at_junction=at_junction)
        if abs(self._yaw) == _SIDE_YAW and self._yaw not in self._sides_read:
            score = self._read_side(observation)
            side = "right" if self._yaw > 0 else "left"
            if score >= self.match_threshold:
                command = ActionCommand(Action.ANSWER, answer=self.landmark)
                return AgentDecision(
                    command, thought=f"{self.landmark} on the {side} ({score:.2f})"
                )
            self._near = self._near or score >= self.near_threshold
        if len(self._sides_read) < 2:
            if self._turning is None:
                # at the start look right first; from one side, turn round to the other
                self._turning = Action.A if self._yaw == _SIDE_YAW else Action.D
            thought = "look at the shops" if not self._sides_read else "look at the other side"
            return self._turn(self._turning, thought)
        return self._move_on(observation)

    def _move_on(self, observation: Observation) -> AgentDecision:
        """Both sides read here: take a branch at a junction, else walk on."""
        self._sides_read = set()
        near, self._near = self._near, False
        near, self._looked_closer = near and not self._looked_closer, False
        branches = offered_branches(observation)
        if branches:
            # the junction's shop fronts were read on arrival: the first stop is down the street
            self._sides_read = {-_SIDE_YAW, _SIDE_YAW}
            if self.memory is not None and observation.get("map") is not None:
                choice = self.memory.least_walked(branches, self._rng)
                thought = "junction: the branch I have walked least"
            else:
                choice = branches[int(self._rng.integers(len(branches)))]
                thought = "junction: take a branch"
            return AgentDecision(ActionCommand(choice), thought=thought)
        self._looked_closer = near
        magnitude = Magnitude.SMALL if near else Magnitude.LARGE
        thought = "almost read it: a closer look" if near else "walk on"
        return AgentDecision(ActionCommand(Action.W, magnitude), thought=thought)
