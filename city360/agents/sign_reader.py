"""A sign-reading agent for landmark search by name: look left and right, read the shop signs
with OCR (tesseract through pytesseract), and stop in front of the one named in the task.

At each stop it turns to the right side (D LARGE), reads the view, turns to the left side
(D LARGE twice), reads again, looks ahead (S) and walks on (W LARGE). A sign whose OCR text
fuzzily matches the landmark (``difflib`` ratio over the best window of words,
``match_threshold``) on a side view ends the episode with ANSWER; one that nearly matches
(over ``near_threshold``, e.g. read from afar or at an angle) makes it walk on in small steps.
At junctions it goes straight on when it can, else takes a seeded random branch. The
landmark's name is read from the task prompt ("Find NAME in this city"), or from a
``landmark`` attribute when the task has one.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from typing import Any, ClassVar

import numpy as np

from city360.agents._task import task_prompt
from city360.agents.base import AgentDecision, Observation, offered_branches
from city360.errors import DependencyMissingError, ResetNeededError
from city360.simulator.actions import Action, ActionCommand, Magnitude
from city360.types import Image

__all__ = ["SignReaderAgent", "landmark_from_prompt", "read_text", "text_match"]

_PROMPT_NAME = re.compile(r"Find (.+?) in this city", re.IGNORECASE | re.DOTALL)


def landmark_from_prompt(prompt: str) -> str:
    """The landmark name in a landmark-search prompt, or the first quoted phrase, or ""."""
    match = _PROMPT_NAME.search(prompt)
    if match:
        return match.group(1).strip().strip("\"'“”")
    quoted = re.search(r"[\"“']([^\"”']{2,})[\"”']", prompt)
    return quoted.group(1).strip() if quoted else ""


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


def read_text(image: Image, *, lang: str = "eng") -> str:
    """OCR of an RGB view (upscaled 2x, grey) with tesseract; "" when nothing is read."""
    try:
        import pytesseract
    except ImportError as exc:  # pragma: no cover - a core dependency
        msg = "pytesseract is needed for the sign-reading agent: pip install pytesseract"
        raise DependencyMissingError(msg) from exc
    import cv2

    grey = cv2.cvtColor(np.asarray(image), cv2.COLOR_RGB2GRAY)
    grey = cv2.resize(grey, None, fx=2.0, fy=2.0, interpolation=cv2.INTER_CUBIC)
    try:
        return str(pytesseract.image_to_string(grey, lang=lang, config="--psm 3"))
    except pytesseract.TesseractNotFoundError as exc:
        msg = "tesseract is not installed: apt-get install tesseract-ocr (Debian/Ubuntu)"
        raise DependencyMissingError(msg) from exc


class SignReaderAgent:
    """See the module docstring."""

    privileged: ClassVar[bool] = False
    _SCAN = (
        ("look right", ActionCommand(Action.D, Magnitude.LARGE), "right"),
        ("look left", ActionCommand(Action.D, Magnitude.LARGE), None),
        ("look left", ActionCommand(Action.D, Magnitude.LARGE), "left"),
        ("look ahead", ActionCommand(Action.S), None),
    )

    def __init__(
        self,
        *,
        seed: int | None = None,
        match_threshold: float = 0.75,
        near_threshold: float = 0.5,
        lang: str = "eng",
    ) -> None:
        self.near_threshold = near_threshold
        self.name = "signs"
        self.seed = seed
        self.match_threshold = match_threshold
        self.lang = lang
        self.landmark = ""
        self._rng = np.random.default_rng(seed)
        self._active = False
        self._phase = 0
        self._pending_side: str | None = None
        self.readings: list[tuple[str, float]] = []

    def __repr__(self) -> str:
        return f"SignReaderAgent(landmark={self.landmark!r}, seed={self.seed})"

    def reset(self, task: Any, *, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.landmark = str(getattr(task, "landmark", "") or "") or landmark_from_prompt(
            task_prompt(task)
        )
        self._active = True
        self._phase = 0
        self._pending_side = None
        self._ahead_seen = False
        self.readings = []

    def _score(self, observation: Observation) -> float:
        view = observation.get("view")
        if view is None or not self.landmark:
            return 0.0
        text = read_text(view, lang=self.lang)
        score = text_match(self.landmark, text)
        self.readings.append((text.strip().replace("\n", " ")[:80], score))
        return score

    def act(self, observation: Observation) -> AgentDecision:
        if not self._active:
            msg = "SignReaderAgent.act() called before reset(task); call reset(task) first"
            raise ResetNeededError(msg)
        side = self._pending_side
        self._pending_side = None
        if side is not None:
            score = self._score(observation)
            if score >= self.match_threshold and side in ("right", "left"):
                command = ActionCommand(Action.ANSWER, answer=self.landmark)
                return AgentDecision(
                    command, thought=f"{self.landmark} on the {side} ({score:.2f})"
                )
            self._ahead_seen = self._ahead_seen or score >= self.near_threshold
        branches = offered_branches(observation)
        if self._phase < len(self._SCAN) and not branches:
            thought, command, reads = self._SCAN[self._phase]
            self._phase += 1
            self._pending_side = reads
            return AgentDecision(command, thought=thought)
        self._phase = 0
        near = self._ahead_seen
        self._ahead_seen = False
        if branches:
            choice = (
                Action.UP
                if Action.UP in branches
                else branches[int(self._rng.integers(len(branches)))]
            )
            return AgentDecision(ActionCommand(choice), thought="junction")
        if "dead end" in str(observation.get("feedback", "")).lower():
            return AgentDecision(ActionCommand(Action.D, Magnitude.LARGE), thought="dead end")
        magnitude = Magnitude.SMALL if near else Magnitude.LARGE
        return AgentDecision(ActionCommand(Action.W, magnitude), thought="walk on")
