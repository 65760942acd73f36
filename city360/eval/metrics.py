"""Scoring of one episode's answer (DESIGN.md "Tasks and results").

Each metric is a small object with a ``name``, what it depends on, and a ``score(...)`` that
returns a value in [0, 1]. Only an episode that ends with ANSWER is scored; the runner enforces
that, not the metrics.
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from city360.errors import ConfigError, did_you_mean

__all__ = [
    "COUNT_THRESHOLDS",
    "FUZZY_OFFLINE_THRESHOLD",
    "METRIC_NAMES",
    "Judge",
    "MetricResult",
    "coordinate_match",
    "count_mean_relative_accuracy",
    "exact_match_grid",
    "fuzzy_match",
    "normalise_text",
    "parse_count",
    "parse_grid_cell",
]

COUNT_THRESHOLDS: tuple[float, ...] = tuple(round(0.50 + 0.05 * k, 2) for k in range(10))
"""θ = 0.50, 0.55, ..., 0.95 for the count metric's mean relative accuracy."""

FUZZY_OFFLINE_THRESHOLD = 0.8
"""Similarity at or above which the offline fuzzy fallback calls two names the same."""

METRIC_NAMES = ("exact_match", "coordinate_match", "count_mra", "fuzzy_match")


@dataclass(frozen=True, slots=True)
class MetricResult:
    """A metric's verdict: ``score`` in [0, 1], ``correct`` when it counts as a success,
    ``method`` names how it was computed (e.g. ``"offline-similarity"`` for the fuzzy fallback)."""

    metric: str
    score: float
    correct: bool
    method: str = ""


_GRID_RE = re.compile(r"x\s*[:=]\s*(\d+)\s*[, ]*\s*y\s*[:=]\s*(\d+)", re.IGNORECASE)


def parse_grid_cell(answer: str) -> tuple[int, int] | None:
    """``"x:2 y:3"`` (case, spacing, ``=`` and commas tolerated) -> ``(2, 3)``; else None."""
    match = _GRID_RE.search(answer or "")
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2))


def exact_match_grid(answer: str, expected: tuple[int, int]) -> MetricResult:
    """Localization: the answered grid cell equals the expected one."""
    cell = parse_grid_cell(answer)
    correct = cell is not None and cell == tuple(expected)
    return MetricResult("exact_match", 1.0 if correct else 0.0, correct)


def coordinate_match(distance_to_goal_m: float, threshold_m: float) -> MetricResult:
    """Navigation families: the agent answered within ``threshold_m`` metres of the goal."""
    if threshold_m <= 0:
        msg = f"`threshold_m` must be > 0, got {threshold_m}"
        raise ConfigError(msg)
    correct = math.isfinite(distance_to_goal_m) and distance_to_goal_m <= threshold_m
    return MetricResult("coordinate_match", 1.0 if correct else 0.0, correct)


_NUMBER_WORDS = {
    "zero": 0,
    "none": 0,
    "no": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
_NUMBER_RE = re.compile(r"-?\d+(?:\.\d+)?")


def parse_count(answer: str) -> float | None:
    """The first number in an answer (digits or an English word up to twelve); else None."""
    text = (answer or "").strip().lower()
    match = _NUMBER_RE.search(text)
    if match is not None:
        return float(match.group(0))
    for word in re.findall(r"[a-z]+", text):
        if word in _NUMBER_WORDS:
            return float(_NUMBER_WORDS[word])
    return None


def count_mean_relative_accuracy(
    answer: str, expected: int, *, thresholds: Sequence[float] = COUNT_THRESHOLDS
) -> MetricResult:
    """Object count: mean over θ of 1[|ŷ - y| / y < 1 - θ] (strict), so a perfect count scores 1
    and an answer 10 % off scores 0.8 (it passes θ ≤ 0.85). A true count of 0 needs an exact 0.
    ``correct`` means the answer passes every threshold (within 5 % of the truth).
    """
    value = parse_count(answer)
    if value is None:
        return MetricResult("count_mra", 0.0, False)
    if expected == 0:
        score = 1.0 if value == 0 else 0.0
    else:
        relative_error = abs(value - expected) / abs(expected)
        hits = [relative_error < 1.0 - theta for theta in thresholds]
        score = sum(hits) / len(hits)
    return MetricResult("count_mra", score, score == 1.0)


def normalise_text(text: str) -> str:
    """NFKC, case-folded, punctuation and repeated whitespace removed: for name comparison."""
    folded = unicodedata.normalize("NFKC", text or "").casefold()
    kept = "".join(ch if ch.isalnum() or ch.isspace() else " " for ch in folded)
    return " ".join(kept.split())


class Judge(Protocol):
    """An LLM judge: returns True when ``answer`` names the same thing as ``expected``."""

    name: str

    def __call__(self, question: str, answer: str, expected: str) -> bool: ...


def fuzzy_match(
    answer: str,
    expected: str,
    *,
    question: str = "",
    judge: Judge | Callable[[str, str, str], bool] | None = None,
    aliases: Sequence[str] = (),
) -> MetricResult:
    """Relational reasoning: is the answered name the expected one?

    With a ``judge`` (an LLM through any provider) its verdict decides and ``method`` is the
    judge's name. Without one, the offline fallback compares normalised strings: containment of
    the whole expected name or a similarity >= :data:`FUZZY_OFFLINE_THRESHOLD`; ``method`` is
    ``"offline-similarity"`` so results say which was used.
    """
    if judge is not None:
        correct = bool(judge(question, answer, expected))
        return MetricResult(
            "fuzzy_match", 1.0 if correct else 0.0, correct, getattr(judge, "name", "llm-judge")
        )
    said = normalise_text(answer)
    best = 0.0
    for candidate in (expected, *aliases):
        target = normalise_text(candidate)
        if not target or not said:
            continue
        if target == said or (len(target) >= 4 and target in said):
            best = 1.0
            break
        best = max(best, difflib.SequenceMatcher(None, said, target).ratio())
    correct = best >= FUZZY_OFFLINE_THRESHOLD
    return MetricResult("fuzzy_match", 1.0 if correct else 0.0, correct, "offline-similarity")


def check_metric_name(name: str) -> str:
    """Validate a metric name from a task file."""
    if name not in METRIC_NAMES:
        msg = (
            f"unknown metric {name!r}; expected one of {', '.join(METRIC_NAMES)}."
            f"{did_you_mean(name, METRIC_NAMES)}"
        )
        raise ConfigError(msg)
    return name
