"""Scoring of one episode's answer (DESIGN.md "Tasks and results").

Each metric is registered by name as a :class:`MetricSpec`: what it depends on, and a
``score(task, answer, distance_to_goal_m)`` that returns a :class:`MetricResult` (a value in
[0, 1]). A task names its metric; :func:`score_answer` looks it up, so a new metric is one
:func:`register_metric` call and no edit elsewhere. This module is a leaf (stdlib only).

How strictly a metric reads an answer is the run's protocol's business
(:mod:`city360.eval.protocols`): a :class:`ScoringRules` value names the threshold rule, the
grid and count parsers and the grid numbering; metrics registered with ``uses_rules=True``
receive it. The reference protocol's rules reproduce 360CityArena's validators
(``python/src/cityarena/tasks/validators.py`` of GitHub 360MM-Team/360CityArena).

Only an episode that ends with ANSWER is scored; the runner enforces that, not the metrics.
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Protocol

from city360.errors import ConfigError, did_you_mean
from city360.plugins import load_plugins

__all__ = [
    "ANSWER_TYPES",
    "COUNT_PARSERS",
    "COUNT_THRESHOLDS",
    "DEFAULT_RULES",
    "FUZZY_OFFLINE_THRESHOLD",
    "GRID_PARSERS",
    "METRIC_NAMES",
    "OFFLINE_METHOD",
    "Judge",
    "MetricResult",
    "MetricSpec",
    "ScoreFunction",
    "ScoringContext",
    "ScoringRules",
    "all_metrics",
    "check_metric_name",
    "coordinate_match",
    "count_mean_relative_accuracy",
    "errand_match",
    "exact_match_grid",
    "expected_answer",
    "fuzzy_match",
    "get_metric",
    "normalise_text",
    "parse_count",
    "parse_count_reference",
    "parse_grid_cell",
    "parse_grid_cell_reference",
    "register_metric",
    "score_answer",
    "unregister_metric",
]

ANSWER_TYPES = ("string", "number", "boolean", "null", "array", "object")
"""The JSON types an agent's answer can arrive as (:attr:`ScoringContext.answer_type`); an
agent that does not answer in JSON answers ``"string"``."""

COUNT_THRESHOLDS: tuple[float, ...] = tuple(round(0.50 + 0.05 * k, 2) for k in range(10))
"""θ = 0.50, 0.55, ..., 0.95 for the count metric's mean relative accuracy."""

FUZZY_OFFLINE_THRESHOLD = 0.8
"""Similarity at or above which the offline fuzzy fallback calls two names the same."""

OFFLINE_METHOD = "offline-similarity"
"""``MetricResult.method`` (and the results' ``evaluation_method``) of a name scored without an
LLM judge, so results and summaries can say which rows a judge did not see."""


@dataclass(frozen=True, slots=True)
class MetricResult:
    """A metric's verdict: ``score`` in [0, 1], ``correct`` when it counts as a success,
    ``method`` names how it was computed (e.g. ``"offline-similarity"`` for the fuzzy fallback),
    ``message`` says why, for people (the results' ``message`` column)."""

    metric: str
    score: float
    correct: bool
    method: str = ""
    message: str = ""


# --- grid cells -------------------------------------------------------------------------------

_GRID_RE = re.compile(r"x\s*[:=]\s*(\d+)\s*[, ]*\s*y\s*[:=]\s*(\d+)", re.IGNORECASE)
_GRID_REFERENCE_RE = re.compile(r"x\s*:\s*(\d+)\s+y\s*:\s*(\d+)")


def parse_grid_cell(answer: str) -> tuple[int, int] | None:
    """``"x:2 y:3"`` (case, spacing, ``=`` and commas tolerated) -> ``(2, 3)``; else None,
    also when the answer names two different cells (``"x:2 y:3 or x:1 y:1"``: hedging must
    not pay). Read after NFKC, so full-width letters, digits and colons (``"Ｘ：２ Ｙ：３"``, as
    models answering in Japanese write them) read as their ASCII forms."""
    text = unicodedata.normalize("NFKC", answer or "")
    cells = {(int(x), int(y)) for x, y in _GRID_RE.findall(text)}
    if len(cells) != 1:
        return None
    return cells.pop()


def parse_grid_cell_reference(answer: str) -> tuple[int, int] | None:
    """The reference's reading: lower-cased, ``x:`` digits, at least one whitespace, ``y:``
    digits, anywhere in the text (``"x:2,y:3"`` and ``"x=2 y=3"`` do not read)."""
    match = _GRID_REFERENCE_RE.search((answer or "").strip().lower())
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2))


GRID_PARSERS: Mapping[str, Callable[[str], tuple[int, int] | None]] = {
    "tolerant": parse_grid_cell,
    "reference": parse_grid_cell_reference,
}
"""Grid-cell readers by name (:attr:`ScoringRules.grid_parser`)."""


# --- counts -----------------------------------------------------------------------------------

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
_NUMBER = r"(?:\d+(?:\.\d+)?|" + "|".join(w for w in _NUMBER_WORDS if w not in ("no", "none")) + ")"
_HEDGE_RE = re.compile(
    rf"\b{_NUMBER}\s*(?:or|to|-|–|/|~)\s*{_NUMBER}\b|\bbetween\s+{_NUMBER}\s+and\s+{_NUMBER}\b"
)
"""Two counts offered as alternatives or a range (``3 or 4``, ``3-4``, ``between three and
five``): such an answer names no count, or hedging would score the lower bound."""


def parse_count(answer: str) -> Decimal | None:
    """The first number in an answer (digits of any script, or an English word up to twelve)
    as an exact :class:`~decimal.Decimal`; else None, also when the answer hedges between two
    counts (``"3 or 4"``, ``"3-4"``)."""
    text = (answer or "").strip().lower()
    if _HEDGE_RE.search(text):
        return None
    match = _NUMBER_RE.search(text)
    if match is not None:
        return Decimal(match.group(0))
    for word in re.findall(r"[a-z]+", text):
        if word in _NUMBER_WORDS:
            return Decimal(_NUMBER_WORDS[word])
    return None


def parse_count_reference(answer: str) -> Decimal | None:
    """The reference's reading: the whole answer, stripped, must be one finite decimal number
    (``"3"``, ``"3.0"``, ``"+3"``, ``"1e1"``, ``"1_0"``, any script's decimal digits as in
    ``"３"``); ``"There are three."``, ``"3 or 4"`` and ``"none"`` do not read. The value stays
    a :class:`~decimal.Decimal`, every digit kept: ``"7.0000000000000001"`` is not 7 (a float
    would round it to 7 and call it exact)."""
    try:
        value = Decimal((answer or "").strip())
    except InvalidOperation:
        return None
    if not value.is_finite():
        return None
    return value


COUNT_PARSERS: Mapping[str, Callable[[str], Decimal | float | None]] = {
    "first-number": parse_count,
    "reference": parse_count_reference,
}
"""Count readers by name (:attr:`ScoringRules.count_parser`)."""


# --- the rules a protocol sets ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScoringRules:
    """How strictly answers are read; one value per protocol (:mod:`city360.eval.protocols`).

    ``strict_threshold``: a navigation answer passes at ``distance < threshold_m`` (else
    ``<=``); ``grid_parser`` / ``count_parser``: names in :data:`GRID_PARSERS` /
    :data:`COUNT_PARSERS`; ``grid_origin``: the number of the first grid column and row on
    the grid map and in answers (1 or 0); ``count_correct_exact``: a count is "correct" only
    when equal to the truth (else when it passes every θ, i.e. within 5 %);
    ``text_answers_only``: see the field.
    """

    strict_threshold: bool = False
    grid_parser: str = "tolerant"
    grid_origin: int = 1
    count_parser: str = "first-number"
    count_correct_exact: bool = False
    text_answers_only: bool = False
    """True: an answer the agent gave as anything but text (a JSON number, null, a list)
    scores 0 in every family, navigation too, as the reference's validators do (they strip
    the answer before reading it, and fail on what is not a string); False: it is read as its
    text (``7`` as ``"7"``, null as ``""``)."""
    extra: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.grid_parser not in GRID_PARSERS:
            msg = (
                f"unknown grid parser {self.grid_parser!r}; expected one of "
                f"{', '.join(GRID_PARSERS)}"
            )
            raise ConfigError(msg)
        if self.count_parser not in COUNT_PARSERS:
            msg = (
                f"unknown count parser {self.count_parser!r}; expected one of "
                f"{', '.join(COUNT_PARSERS)}"
            )
            raise ConfigError(msg)
        if self.grid_origin not in (0, 1):
            msg = f"`grid_origin` must be 0 or 1, got {self.grid_origin}"
            raise ConfigError(msg)

    def cell_text(self, cell: Sequence[int]) -> str:
        """A 1-based ``(i, j)`` cell as this numbering writes it: ``x:i y:j``."""
        shift = self.grid_origin - 1
        return f"x:{int(cell[0]) + shift} y:{int(cell[1]) + shift}"


DEFAULT_RULES = ScoringRules()
"""The default protocol's rules (also what a caller gets without a protocol)."""


def exact_match_grid(
    answer: str, expected: tuple[int, int], *, rules: ScoringRules = DEFAULT_RULES
) -> MetricResult:
    """Localization: the answered grid cell equals the expected one. ``expected`` is 1-based
    (``LocalizationTruth.cell``); the answer is read in the rules' numbering."""
    cell = GRID_PARSERS[rules.grid_parser](answer)
    want = rules.cell_text(expected)
    if cell is None:
        return MetricResult(
            "exact_match", 0.0, False, message=f"answer {answer!r} is not of the form x:i y:j"
        )
    shift = 1 - rules.grid_origin
    correct = (cell[0] + shift, cell[1] + shift) == tuple(expected)
    said = f"x:{cell[0]} y:{cell[1]}"
    message = f"expected {want}, got {said}"
    return MetricResult("exact_match", 1.0 if correct else 0.0, correct, message=message)


def coordinate_match(
    distance_to_goal_m: float, threshold_m: float, *, strict: bool = False
) -> MetricResult:
    """Navigation families: the agent answered within ``threshold_m`` metres of the goal
    (``distance < threshold_m`` when ``strict``, as the reference; else ``<=``)."""
    if threshold_m <= 0:
        msg = f"`threshold_m` must be > 0, got {threshold_m}"
        raise ConfigError(msg)
    finite = math.isfinite(distance_to_goal_m)
    if strict:
        correct = finite and distance_to_goal_m < threshold_m
    else:
        correct = finite and distance_to_goal_m <= threshold_m
    rule = "<" if strict else "<="
    message = f"distance {distance_to_goal_m:.2f} m, threshold {rule} {threshold_m:g} m"
    return MetricResult("coordinate_match", 1.0 if correct else 0.0, correct, message=message)


def count_mean_relative_accuracy(
    answer: str,
    expected: int,
    *,
    thresholds: Sequence[float] = COUNT_THRESHOLDS,
    rules: ScoringRules = DEFAULT_RULES,
) -> MetricResult:
    """Object count: mean over θ of 1[|ŷ - y| / y < 1 - θ] (strict), so a perfect count scores 1
    and an answer 10 % off scores 0.8 (it passes θ ≤ 0.85). A true count of 0 needs an exact 0.
    Computed in decimal arithmetic, so no θ flips on a float's last bit. ``correct`` means the
    answer passes every threshold (within 5 %), or equals the truth under
    ``rules.count_correct_exact`` (the reference's ``is_correct``).
    """
    value = COUNT_PARSERS[rules.count_parser](answer)
    if value is None:
        return MetricResult("count_mra", 0.0, False, message=f"no number in {answer!r}")
    predicted = value if isinstance(value, Decimal) else Decimal(str(value))
    truth = Decimal(int(expected))
    if truth == 0:
        score = 1.0 if predicted == 0 else 0.0
    else:
        relative_error = abs(predicted - truth) / abs(truth)
        hits = [relative_error < Decimal(1) - Decimal(str(theta)) for theta in thresholds]
        score = sum(hits) / len(hits)
    correct = predicted == truth if rules.count_correct_exact else score == 1.0
    message = f"expected {expected}, got {predicted}; MRA {score:.1f}"
    return MetricResult("count_mra", score, correct, message=message)


def errand_match(
    distance_to_goal_m: float,
    threshold_m: float,
    coverage: float | None,
    *,
    strict: bool = False,
) -> MetricResult:
    """Errand: the agent answered within ``threshold_m`` metres of the last place *and* reached
    every place before it in order (checkpoint ``coverage`` 1.0; None when no recorder followed
    the episode, which cannot pass)."""
    arrived = coordinate_match(distance_to_goal_m, threshold_m, strict=strict)
    if coverage is None:
        message = f"no checkpoint coverage recorded; {arrived.message}"
        return MetricResult("errand_match", 0.0, False, message=message)
    correct = arrived.correct and coverage >= 1.0 - 1e-9
    message = f"checkpoint coverage {coverage:.2f}; {arrived.message}"
    return MetricResult("errand_match", 1.0 if correct else 0.0, correct, message=message)


def normalise_text(text: str) -> str:
    """NFKC, case-folded, punctuation and repeated whitespace removed: for name comparison."""
    folded = unicodedata.normalize("NFKC", text or "").casefold()
    kept = "".join(ch if ch.isalnum() or ch.isspace() else " " for ch in folded)
    return " ".join(kept.split())


class Judge(Protocol):
    """An LLM judge: returns True when ``answer`` names the same thing as ``expected``.
    ``name`` says which judge it is (``llm-judge:openai:gpt-4o``), recorded per row."""

    name: str

    def __call__(self, question: str, answer: str, expected: str) -> bool: ...


_NEGATIONS = frozenset(
    {"not", "no", "none", "never", "nothing", "neither", "nor", "isn", "isnt", "without"}
)
"""Words that turn a named answer into its opposite ("Not Agebaka", "it is not X")."""
_HEDGES = frozenset({"or", "maybe", "perhaps", "either", "possibly", "unsure", "unknown"})
"""Words of an answer that names more than one candidate or none for sure."""
_FILLER = frozenset(
    {
        "the", "a", "an", "it", "its", "is", "s", "store", "shop", "cafe", "restaurant",
        "building", "name", "named", "called", "of", "answer", "this", "that", "to", "left",
        "right", "i", "think", "believe", "there",
    }
)  # fmt: skip
"""Words allowed beside the expected name when the answer contains it ("The store is X")."""


def _offline_same(said: str, target: str) -> float:
    """Similarity in [0, 1] of two normalised names, conservatively: containment counts only
    when every other word of the answer is filler."""
    if target == said:
        return 1.0
    if len(target) >= 4 and f" {target} " in f" {said} ":
        rest = f" {said} ".replace(f" {target} ", " ").split()
        if all(word in _FILLER for word in rest):
            return 1.0
    return difflib.SequenceMatcher(None, said, target).ratio()


_CONTRACTED_NOT = re.compile(r"n['\u2019]t\b|\bcannot\b")


def _negates_or_hedges(answer: str, names: Sequence[str]) -> bool:
    """True when the answer has a negation or hedge word that is not part of a name itself
    ("Kin no Kura" keeps its "no")."""
    folded = unicodedata.normalize("NFKC", answer or "").casefold()
    if _CONTRACTED_NOT.search(folded):
        return True
    name_words: set[str] = set()
    for name in names:
        name_words.update(normalise_text(name).split())
    extra = set(normalise_text(answer).split()) - name_words
    return bool(extra & (_NEGATIONS | _HEDGES))


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
    judge's name. Without one, the offline fallback is conservative: an answer with a negation
    ("Not X", "it is not X") or a hedge ("X or Y") fails; otherwise the normalised names must be
    equal, the answer must be the name plus filler words ("The store is X"), or their similarity
    must reach :data:`FUZZY_OFFLINE_THRESHOLD`. ``method`` is :data:`OFFLINE_METHOD` then, so
    results and summaries say which rows no judge saw.
    """
    if judge is not None:
        correct = bool(judge(question, answer, expected))
        name = getattr(judge, "name", "llm-judge")
        verdict = "same" if correct else "not the same"
        return MetricResult(
            "fuzzy_match",
            1.0 if correct else 0.0,
            correct,
            name,
            message=f"judge says {answer!r} is {verdict} as {expected!r}",
        )
    said = normalise_text(answer)
    refused = _negates_or_hedges(answer, (expected, *aliases))
    best = 0.0
    if not refused:
        for candidate in (expected, *aliases):
            target = normalise_text(candidate)
            if target and said:
                best = max(best, _offline_same(said, target))
    correct = best >= FUZZY_OFFLINE_THRESHOLD
    if refused:
        message = f"offline: {answer!r} negates or hedges; needs an LLM judge to pass"
    else:
        message = f"offline similarity {best:.2f} to {expected!r}"
    return MetricResult(
        "fuzzy_match", 1.0 if correct else 0.0, correct, OFFLINE_METHOD, message=message
    )


# --- the registry ---------------------------------------------------------------------------

ScoreFunction = Callable[..., MetricResult]
"""``(task, answer, distance_to_goal_m) -> MetricResult``, or with ``uses_context=True``
``(task, answer, distance_to_goal_m, context: ScoringContext)``; the distance is the
straight-line distance in metres from where the agent answered to the goal (None when the task
has no goal)."""


@dataclass(frozen=True, slots=True)
class ScoringContext:
    """What a run's scoring depends on beyond the task: the protocol's :class:`ScoringRules`
    and the LLM judge (None: offline fallback)."""

    rules: ScoringRules = DEFAULT_RULES
    judge: Judge | Callable[[str, str, str], bool] | None = None
    progress: Mapping[str, float] = field(default_factory=dict)
    """What the episode reached on its way (``FamilySpec.progress``: Errand's
    ``checkpoint_coverage``), recorded by the episode recorder."""
    answer_type: str = "string"
    """The JSON type the agent gave its answer as (:data:`ANSWER_TYPES`; ``"string"`` for
    agents that answer in text), for :attr:`ScoringRules.text_answers_only`."""


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """A metric as tasks name it: ``score`` reads what it needs from the task's truth."""

    name: str
    score: ScoreFunction
    needs_threshold: bool = False
    """True when a task's ``metric.threshold_m`` (metres) is required, else it is refused."""
    depends_on: str = ""
    """What the score reads, for people (``"truth.cell"``, ``"distance to the goal"``)."""
    uses_context: bool = False
    """True when ``score`` takes a fourth argument, the run's :class:`ScoringContext`."""
    results_name: str = ""
    """The name results.csv's ``evaluation_metric`` uses (the reference benchmark's
    vocabulary); empty: :attr:`name`."""
    expected: Callable[[Any, ScoringRules], str] | None = None
    """``(task, rules) -> text``: the expected answer as an agent must give it under ``rules``
    (a grid cell in the protocol's numbering); None: ``task.expected_answer()``."""

    @property
    def reported_name(self) -> str:
        return self.results_name or self.name


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


def score_answer(
    task: Any,
    answer: str,
    distance_to_goal_m: float | None,
    context: ScoringContext | None = None,
) -> MetricResult:
    """Score an ANSWER against the task's hidden truth with the task's metric, under the
    run's ``context`` (default rules, no judge when None)."""
    spec = get_metric(task.metric.name)
    context = context or ScoringContext()
    if context.rules.text_answers_only and context.answer_type != "string":
        message = (
            f"validation error: the answer was a JSON {context.answer_type}, not text "
            f"({answer!r}); these rules read text answers only"
        )
        return MetricResult(spec.name, 0.0, False, message=message)
    if spec.uses_context:
        return spec.score(task, answer, distance_to_goal_m, context)
    return spec.score(task, answer, distance_to_goal_m)


def expected_answer(task: Any, rules: ScoringRules = DEFAULT_RULES) -> str:
    """The task's expected answer as an agent must give it under ``rules``."""
    spec = get_metric(task.metric.name)
    if spec.expected is not None:
        return spec.expected(task, rules)
    return str(task.expected_answer())


def _score_coordinates(
    task: Any, answer: str, distance_to_goal_m: float | None, context: ScoringContext
) -> MetricResult:
    distance = math.inf if distance_to_goal_m is None else distance_to_goal_m
    return coordinate_match(
        distance, float(task.metric.threshold_m), strict=context.rules.strict_threshold
    )


def _score_errand(
    task: Any, answer: str, distance_to_goal_m: float | None, context: ScoringContext
) -> MetricResult:
    distance = math.inf if distance_to_goal_m is None else distance_to_goal_m
    coverage = context.progress.get("checkpoint_coverage")
    return errand_match(
        distance,
        float(task.metric.threshold_m),
        coverage,
        strict=context.rules.strict_threshold,
    )


def _score_grid(
    task: Any, answer: str, distance_to_goal_m: float | None, context: ScoringContext
) -> MetricResult:
    return exact_match_grid(answer, tuple(task.truth.cell), rules=context.rules)


def _score_count(
    task: Any, answer: str, distance_to_goal_m: float | None, context: ScoringContext
) -> MetricResult:
    return count_mean_relative_accuracy(answer, int(task.truth.count), rules=context.rules)


def _score_name(
    task: Any, answer: str, distance_to_goal_m: float | None, context: ScoringContext
) -> MetricResult:
    expected = getattr(task.truth, "answer", None) or task.expected_answer()
    question = getattr(task.told, "question", "") or task.render_prompt()
    aliases = tuple(getattr(task.truth, "aliases", ()) or ())
    return fuzzy_match(
        answer, str(expected), question=question, judge=context.judge, aliases=aliases
    )


for _spec in (
    MetricSpec(
        "exact_match",
        _score_grid,
        depends_on="truth.cell",
        uses_context=True,
        expected=lambda task, rules: rules.cell_text(task.truth.cell),
    ),
    MetricSpec(
        "coordinate_match",
        _score_coordinates,
        needs_threshold=True,
        depends_on="straight-line distance to the goal",
        uses_context=True,
    ),
    MetricSpec(
        "count_mra",
        _score_count,
        depends_on="truth.count",
        uses_context=True,
        results_name="mean_relative_accuracy",
    ),
    MetricSpec(
        "fuzzy_match",
        _score_name,
        depends_on="truth.answer (else expected_answer()); the judge",
        uses_context=True,
    ),
    MetricSpec(
        "errand_match",
        _score_errand,
        needs_threshold=True,
        depends_on="straight-line distance to the last place; checkpoint coverage",
        uses_context=True,
    ),
):
    register_metric(_spec)

METRIC_NAMES = tuple(_METRICS)
"""The built-in metric names (the registry may hold more)."""
