"""Scoring of one episode's answer (DESIGN.md "Tasks and results").

Each metric is registered by name as a :class:`MetricSpec`: what it depends on, and a
``score(task, answer, distance_to_goal_m)`` that returns a :class:`MetricResult` (a value in
[0, 1]). A task names its metric; :func:`score_answer` looks it up, so a new metric is one
:func:`register_metric` call and no edit elsewhere. This module is a leaf (stdlib only).

Only an episode that ends with ANSWER is scored; the runner enforces that, not the metrics.
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from city360.errors import ConfigError, did_you_mean
from city360.plugins import load_plugins

__all__ = [
    "COUNT_THRESHOLDS",
    "FUZZY_OFFLINE_THRESHOLD",
    "METRIC_NAMES",
    "Judge",
    "MetricResult",
    "MetricSpec",
    "ScoreFunction",
    "all_metrics",
    "check_metric_name",
    "coordinate_match",
    "count_mean_relative_accuracy",
    "exact_match_grid",
    "fuzzy_match",
    "get_metric",
    "normalise_text",
    "parse_count",
    "parse_grid_cell",
    "register_metric",
    "score_answer",
    "unregister_metric",
]

COUNT_THRESHOLDS: tuple[float, ...] = tuple(round(0.50 + 0.05 * k, 2) for k in range(10))
"""θ = 0.50, 0.55, ..., 0.95 for the count metric's mean relative accuracy."""

FUZZY_OFFLINE_THRESHOLD = 0.8
"""Similarity at or above which the offline fuzzy fallback calls two names the same."""


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


# --- the registry ---------------------------------------------------------------------------

ScoreFunction = Callable[[Any, str, float | None], MetricResult]
"""``(task, answer, distance_to_goal_m) -> MetricResult``; the distance is the street distance
from where the agent answered to the goal (None when the task has no goal)."""


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """A metric as tasks name it: ``score`` reads what it needs from the task's truth."""

    name: str
    score: ScoreFunction
    needs_threshold: bool = False
    """True when a task's ``metric.threshold_m`` (metres) is required, else it is refused."""
    depends_on: str = ""
    """What the score reads, for people (``"truth.cell"``, ``"distance to the goal"``)."""


_METRICS: dict[str, MetricSpec] = {}


def register_metric(spec: MetricSpec, *, replace: bool = False) -> MetricSpec:
    """Register ``spec`` under its name; an existing name needs ``replace=True``."""
    if spec.name in _METRICS and not replace:
        msg = f"metric {spec.name!r} is already registered; pass replace=True to replace it"
        raise ConfigError(msg)
    _METRICS[spec.name] = spec
    return spec


def unregister_metric(name: str) -> None:
    """Remove a metric (tests that register their own clean up with this)."""
    _METRICS.pop(name, None)


def get_metric(name: str) -> MetricSpec:
    """The metric registered as ``name``; unknown names raise :class:`ConfigError` with the
    known names and a close match. A name not registered yet loads the plugins
    (:mod:`city360.plugins`) before it is called unknown."""
    if str(name) not in _METRICS:
        load_plugins()
    try:
        return _METRICS[str(name)]
    except KeyError:
        known = list(_METRICS)
        msg = (
            f"unknown metric {name!r}; expected one of {', '.join(known)}."
            f"{did_you_mean(str(name), known)}"
        )
        raise ConfigError(msg) from None


def all_metrics() -> list[MetricSpec]:
    """Every registered metric, in registration order."""
    load_plugins()
    return list(_METRICS.values())


def check_metric_name(name: str) -> str:
    """Validate a metric name from a task file."""
    return get_metric(name).name


def score_answer(task: Any, answer: str, distance_to_goal_m: float | None) -> MetricResult:
    """Score an ANSWER against the task's hidden truth with the task's metric."""
    return get_metric(task.metric.name).score(task, answer, distance_to_goal_m)


def _score_coordinates(task: Any, answer: str, distance_to_goal_m: float | None) -> MetricResult:
    distance = math.inf if distance_to_goal_m is None else distance_to_goal_m
    return coordinate_match(distance, float(task.metric.threshold_m))


def _score_grid(task: Any, answer: str, distance_to_goal_m: float | None) -> MetricResult:
    return exact_match_grid(answer, tuple(task.truth.cell))


def _score_count(task: Any, answer: str, distance_to_goal_m: float | None) -> MetricResult:
    return count_mean_relative_accuracy(answer, int(task.truth.count))


def _score_name(task: Any, answer: str, distance_to_goal_m: float | None) -> MetricResult:
    expected = getattr(task.truth, "answer", None) or task.expected_answer()
    return fuzzy_match(answer, str(expected), question=getattr(task.told, "question", ""))


for _spec in (
    MetricSpec("exact_match", _score_grid, depends_on="truth.cell"),
    MetricSpec(
        "coordinate_match",
        _score_coordinates,
        needs_threshold=True,
        depends_on="street distance to the goal",
    ),
    MetricSpec("count_mra", _score_count, depends_on="truth.count"),
    MetricSpec("fuzzy_match", _score_name, depends_on="truth.answer (else expected_answer())"),
):
    register_metric(_spec)

METRIC_NAMES = tuple(_METRICS)
"""The built-in metric names (the registry may hold more)."""
