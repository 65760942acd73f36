"""The reference benchmark's own validator cases, family by family: answers as real models
write them, and what 360CityArena's validators score for each (GitHub
360MM-Team/360CityArena, read at commit a6ec8ed3; the file and function each expected value
comes from is named in the test's docstring). Under ``--protocol reference`` city360 must
score exactly that; the ``default`` column is what city360's default protocol scores and
where it deliberately differs (docs/protocols.md lists every difference)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from city360.agents.parsing import parse_reply, parse_reply_reference
from city360.agents.providers.base import ChatReply, ChatRequest
from city360.eval.judge import JUDGE_SYSTEM_PROMPT, REFERENCE_JUDGE_SYSTEM_PROMPT, LLMJudge
from city360.eval.metrics import ScoringContext, score_answer
from city360.eval.protocols import DEFAULT_PROTOCOL, REFERENCE_PROTOCOL
from city360.eval.stopping import ReferenceStopMonitor, StopConfig, StopReason
from city360.simulator.actions import Action, Magnitude
from tests.eval.scoring_tasks import scoring_task

REFERENCE = ScoringContext(REFERENCE_PROTOCOL.scoring)
DEFAULT = ScoringContext(DEFAULT_PROTOCOL.scoring)


def _task(metric: str, **truth: object) -> SimpleNamespace:
    return scoring_task(metric, question="What is directly left of Agebaka?", **truth)


# --- Localization -------------------------------------------------------------------------
# The truth cell is (3, 4) counted from 1: x:2 y:3 in the reference's numbering (from 0), x:3
# y:4 in the default's. Each row: the answer in the reference's numbering and its score there,
# the same answer in the default's numbering and its score there.
GRID_CASES = [
    ("x:2 y:3", 1.0, "x:3 y:4", 1.0),
    ("X:2 Y:3", 1.0, "X:3 Y:4", 1.0),  # lower-cased first
    ("x: 2 y: 3", 1.0, "x: 3 y: 4", 1.0),
    ("x:2\ny:3", 1.0, "x:3\ny:4", 1.0),
    ("  x:2 y:3  ", 1.0, "  x:3 y:4  ", 1.0),
    ("x:02 y:03", 1.0, "x:03 y:04", 1.0),
    ("x:2 y:3. I stand by the station.", 1.0, "x:3 y:4. I stand by the station.", 1.0),
    ("**x:2 y:3**", 1.0, "**x:3 y:4**", 1.0),
    ("`x:2 y:3`", 1.0, "`x:3 y:4`", 1.0),
    ("私の位置は x:2 y:3 です。", 1.0, "私の位置は x:3 y:4 です。", 1.0),
    ("x:２ y:３", 1.0, "x:３ y:４", 1.0),  # full-width digits are \d, int() reads them
    ("x:٢ y:٣", 1.0, "x:٣ y:٤", 1.0),  # so are Arabic-Indic ones
    ("X: 2, Y: 3", 0.0, "X: 3, Y: 4", 1.0),  # a comma before y: no whitespace-only gap
    ("Grid cell: x:2, y:3", 0.0, "Grid cell: x:3, y:4", 1.0),
    ("(x:2, y:3)", 0.0, "(x:3, y:4)", 1.0),
    ("x=2,y=3", 0.0, "x=3,y=4", 1.0),
    ("X=2 Y=3", 0.0, "X=3 Y=4", 1.0),
    ("x：2 y：3", 0.0, "x：3 y：4", 1.0),  # full-width colons: the default reads after NFKC
    ("Ｘ：２ Ｙ：３", 0.0, "Ｘ：３ Ｙ：４", 1.0),  # "Ｘ".lower() is "ｘ", not "x"
    ("(2, 3)", 0.0, "(3, 4)", 0.0),  # which number is x? neither protocol guesses
    ("cell x2 y3", 0.0, "cell x3 y4", 0.0),
    ("x 2 y 3", 0.0, "x 3 y 4", 0.0),
    ("x座標2、y座標3", 0.0, "x座標3、y座標4", 0.0),
    ("x: -1 y: 3", 0.0, "x: -1 y: 4", 0.0),
    ("x:2 y:3 or x:0 y:0", 1.0, "x:3 y:4 or x:1 y:1", 0.0),  # the reference takes the first
    ("", 0.0, "", 0.0),  # ANSWER with no text
]


@pytest.mark.parametrize(("reference_answer", "reference", "default_answer", "default"), GRID_CASES)
def test_localization_answers(
    reference_answer: str, reference: float, default_answer: str, default: float
) -> None:
    """python/src/cityarena/tasks/validators.py, ``validate_task_answer`` (strips the answer)
    and ``validate_localization_grid_answer`` (lower-cases it, searches ``x``, optional
    spaces, ``:``, digits, at least one whitespace, ``y``, ``:``, digits; the first match
    counts); the numbering from 0: python/src/cityarena/tasks/prompt_templates.py
    ("integer indices of the selected grid cell")."""
    task = _task("exact_match", cell=(3, 4))
    assert score_answer(task, reference_answer, None, REFERENCE).score == reference
    assert score_answer(task, default_answer, None, DEFAULT).score == default


# --- Object count -------------------------------------------------------------------------
# (answer, truth, reference score, reference is_correct, default score)
COUNT_CASES = [
    ("7", 7, 1.0, True, 1.0),
    ("7.0", 7, 1.0, True, 1.0),  # Decimal("7.0") == 7
    ("7.", 7, 1.0, True, 1.0),
    ("+7", 7, 1.0, True, 1.0),
    (" 7\n", 7, 1.0, True, 1.0),
    ("７", 7, 1.0, True, 1.0),  # Decimal reads any script's decimal digits
    ("7e0", 7, 1.0, True, 1.0),  # the default reads "7" before the "e"
    ("seven", 7, 0.0, False, 1.0),
    ("about 7 trees", 7, 0.0, False, 1.0),
    ("7 trees", 7, 0.0, False, 1.0),
    ("**7**", 7, 0.0, False, 1.0),
    ("約7本", 7, 0.0, False, 1.0),
    ("七", 7, 0.0, False, 0.0),
    ("7-8", 7, 0.0, False, 0.0),  # a hedge: the default reads no count either
    ("7 or 8", 7, 0.0, False, 0.0),
    ("7/8", 7, 0.0, False, 0.0),
    ("6", 7, 0.8, False, 0.8),  # 1/7 off passes θ <= 0.85
    ("8", 7, 0.8, False, 0.8),
    ("0", 7, 0.0, False, 0.0),
    ("-7", 7, 0.0, False, 0.0),  # 200 % off
    ("", 7, 0.0, False, 0.0),
    ("NaN", 7, 0.0, False, 0.0),
    ("-Infinity", 7, 0.0, False, 0.0),
    ("1,000", 1000, 0.0, False, 0.0),
    ("0", 0, 1.0, True, 1.0),
    ("-0", 0, 1.0, True, 1.0),
    ("none", 0, 0.0, False, 1.0),
    ("7.0000000000000001", 7, 1.0, False, 1.0),  # was is_correct True: read through a float
    ("20.99999999999999999", 20, 1.0, False, 1.0),  # was 0.9: a float rounds it to 21
]


@pytest.mark.parametrize(("answer", "truth", "reference", "correct", "default"), COUNT_CASES)
def test_count_answers(
    answer: str, truth: int, reference: float, correct: bool, default: float
) -> None:
    """python/src/cityarena/tasks/validators.py, ``validate_counting_answer``: the stripped
    answer must be one finite ``Decimal``; MRA over θ = 0.50 ... 0.95 with a strict
    inequality, in ``Decimal`` arithmetic; a true 0 needs an exact 0; ``is_correct`` is
    ``predicted == expected`` as Decimals (its docstring: "an exact numeric match")."""
    task = _task("count_mra", count=truth)
    verdict = score_answer(task, answer, None, REFERENCE)
    assert (verdict.score, verdict.correct) == (pytest.approx(reference), correct)
    assert score_answer(task, answer, None, DEFAULT).score == pytest.approx(default)


# --- Navigation families ------------------------------------------------------------------
# (threshold m, straight-line distance m at ANSWER, answer text, reference score, default)
COORDINATE_CASES = [
    (10.0, 9.999, "", 1.0, 1.0),
    (10.0, 10.0, "", 0.0, 1.0),  # the reference's `distance < epsilon`; ours inclusive
    (10.0, 10.001, "", 0.0, 0.0),
    (20.0, 19.999, "", 1.0, 1.0),
    (20.0, 20.0, "", 0.0, 1.0),
    (20.0, 20.5, "", 0.0, 0.0),
    (10.0, 3.0, "I am not there yet", 1.0, 1.0),  # the text is never read, only the place
    (10.0, 3.0, "x:0 y:0", 1.0, 1.0),
]


@pytest.mark.parametrize(
    ("threshold", "distance", "answer", "reference", "default"), COORDINATE_CASES
)
def test_navigation_answers(
    threshold: float, distance: float, answer: str, reference: float, default: float
) -> None:
    """python/src/cityarena/tasks/validators.py, ``validate_task_answer`` (epsilon 20 for
    MapNavigation, 10 for the landmark searches and LanguageGuidedNavigation) and
    ``validate_location_answer``: the Euclidean distance from the position at ANSWER to the
    goal, ``distance < epsilon``; the answer text is not read. Both protocols score the
    straight line (the distance along the streets only feeds the default's away-from-goal
    rule), so an agent 9.5 m from the goal in a straight line but 14 m round a corner passes."""
    task = _task("coordinate_match", threshold_m=threshold)
    assert score_answer(task, answer, distance, REFERENCE).score == reference
    assert score_answer(task, answer, distance, DEFAULT).score == default


# --- Answers that are not text ------------------------------------------------------------
# (metric, truth, answer text as city360 carries it, JSON type, distance, reference, default)
TYPED_CASES: list[tuple[str, dict[str, Any], str, str, float | None, float, float]] = [
    ("count_mra", {"count": 7}, "7", "number", None, 0.0, 1.0),
    ("count_mra", {"count": 7}, "7.0", "number", None, 0.0, 1.0),
    ("count_mra", {"count": 7}, "7", "string", None, 1.0, 1.0),
    ("exact_match", {"cell": (3, 4)}, '{"x": 2, "y": 3}', "object", None, 0.0, 0.0),
    ("exact_match", {"cell": (3, 4)}, "", "null", None, 0.0, 0.0),
    ("coordinate_match", {"threshold_m": 10.0}, "", "null", 3.0, 0.0, 1.0),  # at the goal
    ("coordinate_match", {"threshold_m": 20.0}, "true", "boolean", 3.0, 0.0, 1.0),
    ("coordinate_match", {"threshold_m": 10.0}, "", "string", 3.0, 1.0, 1.0),  # no "answer"
    ("fuzzy_match", {"answer": "Agebaka"}, '["Agebaka"]', "array", None, 0.0, 1.0),
]


@pytest.mark.parametrize(
    ("metric", "truth", "answer", "answer_type", "distance", "reference", "default"),
    TYPED_CASES,
)
def test_answers_given_as_json_values(
    metric: str,
    truth: dict[str, Any],
    answer: str,
    answer_type: str,
    distance: float | None,
    reference: float,
    default: float,
) -> None:
    """python/src/cityarena/runner/key_action_generator.py, ``generate_key_action_from_base64``
    passes the reply's ``answer`` value as it parsed (``json_content.get("answer", "")``: a
    missing key is ``""``); python/src/cityarena/tasks/validators.py,
    ``validate_task_answer`` calls ``user_answer.strip()`` before it dispatches, so a number,
    null, list or object raises, and the generator records ``is_correct: False`` with no
    score, which ``agent_server._append_summary`` writes as 0 -- in every family, a
    navigation ANSWER at the goal too. A reference bug (its Counting prompt says "Output the
    answer as a number"); the default reads the value's text."""
    task = _task(metric, **dict(truth))
    ref = ScoringContext(REFERENCE_PROTOCOL.scoring, answer_type=answer_type)
    ours = ScoringContext(DEFAULT_PROTOCOL.scoring, answer_type=answer_type)
    verdict = score_answer(task, answer, distance, ref)
    assert (verdict.score, verdict.correct) == (reference, reference == 1.0)
    assert score_answer(task, answer, distance, ours).score == default


# --- Reading a reply ----------------------------------------------------------------------
# (reply, usable under the reference, usable under the default, answer, its JSON type)
REPLY_CASES: list[tuple[str, bool, bool, str | None, str]] = [
    ('{"thought": "", "action": "ANSWER", "answer": "x:2 y:3"}', True, True, "x:2 y:3", "string"),
    ('```json\n{"action": "ANSWER", "answer": "7"}\n```', True, True, "7", "string"),
    ('```JSON\n{"action": "ANSWER", "answer": "7"}```', True, True, "7", "string"),
    ('Here it is: ```json\n{"action": "ANSWER", "answer": "7"}\n```', True, True, "7", "string"),
    ('{"action": "ANSWER", "answer": 7}', True, True, "7", "number"),
    ('{"action": "ANSWER", "answer": null}', True, True, "", "null"),
    ('{"action": "ANSWER"}', True, True, "", "string"),
    ('{"action": "ANSWER", "answer": ""}', True, True, "", "string"),
    ('I will answer now. {"action": "ANSWER", "answer": "7"}', False, True, "7", "string"),
    ('```\n{"action": "ANSWER", "answer": "7"}\n```', False, True, "7", "string"),
    ("{'action': 'ANSWER', 'answer': '7'}", False, True, "7", "string"),
    ('{"action": "ANSWER", "answer": "7",}', False, True, "7", "string"),
    ('{"action": "answer", "answer": "7"}', False, True, "7", "string"),
    ('{"action": " ANSWER", "answer": "7"}', False, True, "7", "string"),
    ('{"Action": "ANSWER", "answer": "7"}', False, True, "7", "string"),
    ("", False, False, None, "string"),
    ('["ANSWER"]', False, False, None, "string"),
]


@pytest.mark.parametrize(("reply", "reference", "default", "answer", "answer_type"), REPLY_CASES)
def test_replies_are_read_as_each_protocol_reads_them(
    reply: str, reference: bool, default: bool, answer: str | None, answer_type: str
) -> None:
    """python/src/cityarena/runner/key_action_generator.py, ``extract_json_from_content``
    (the body of a ```` ```json ```` fence, case-insensitive, else the whole reply;
    ``json.loads``; the root must be an object) and ``validate_action`` (the token must be one
    of the ten upper-case names, unchanged). An unusable reply is ``success: False``:
    python/src/cityarena/runner/agent_server.py, ``_handle_request`` counts it in
    ``act_requests`` but not in ``steps``, and nothing is sent to Unity's controller."""
    for read, usable in ((parse_reply_reference, reference), (parse_reply, default)):
        parsed = read(reply)
        assert (parsed.command is not None) is usable, read.__name__
        if usable:
            assert parsed.command is not None
            assert parsed.command.action is Action.ANSWER
            assert (parsed.command.answer, parsed.answer_type) == (answer, answer_type)


@pytest.mark.parametrize(
    ("size", "magnitude"),
    [
        ("MEDIUM", Magnitude.MEDIUM),
        ("M", Magnitude.MEDIUM),
        ("BIG", Magnitude.LARGE),
        ("huge", None),
    ],
)
def test_reference_reply_sizes_never_make_a_move_unusable(
    size: str, magnitude: Magnitude | None
) -> None:
    """python/src/cityarena/runner/key_action_generator.py, ``_size_to_seconds`` and
    ``_parse_hold_seconds_from_answer``: SMALL/S, MEDIUM/M, LARGE/L/BIG; anything else takes
    the default hold time, never an error (the default protocol's reader calls it an invalid
    action and tells the model)."""
    parsed = parse_reply_reference(json.dumps({"action": "W", "magnitude": size}))
    assert parsed.command is not None
    assert (parsed.command.action, parsed.command.magnitude) == (Action.W, magnitude)


def test_the_reference_reply_format_is_asked_for() -> None:
    """python/src/cityarena/prompts/system.py asks for "only ... the JSON object" and shows
    every answer as a string ("" when there is none); under the reference protocol the LMM's
    system prompt asks for the same, since its reader and validators refuse anything else."""
    from city360.agents.prompts import ControllerUnits, prompt_hash, render_system_prompt

    strict = render_system_prompt(ControllerUnits(), with_map=True, reply_reader="reference")
    assert 'else empty"}' in strict
    assert 'Every value is a JSON string ("" when empty), a number too ("7")' in strict
    assert "else null" not in strict
    assert "else null" in render_system_prompt(ControllerUnits(), with_map=True)
    assert prompt_hash(reply_reader="reference") != prompt_hash()


# --- Step counting and stop rules ---------------------------------------------------------
# A decision: an action name, or None for an unusable reply; (x, y) where the last action left
# the agent; the straight-line distance to the goal there (MapNavigation only).
Decision = tuple[str | None, float, float, float | None]


def _play(decisions: list[Decision], **config: Any) -> tuple[ReferenceStopMonitor, list[Any]]:
    monitor = ReferenceStopMonitor(StopConfig(**config))
    reasons = [monitor.before(action, x, y, distance) for action, x, y, distance in decisions]
    return monitor, reasons


def _turns(n: int, action: str = "D") -> list[Decision]:
    return [(action, 0.0, 0.0, None)] * n


def _looks(n: int) -> list[Decision]:
    """``n`` turns, D and A by turns: never identical twice in a row."""
    return [("D" if k % 2 else "A", 0.0, 0.0, None) for k in range(n)]


STEP_CASES: list[tuple[str, list[Decision], dict[str, Any], int, int, StopReason | None]] = [
    # name, decisions, config, steps, act_requests, why the last decision stopped the episode
    (
        "ANSWER as the 50th usable decision, 10 unusable replies on the way",
        [*_looks(25), *[(None, 0.0, 0.0, None)] * 10, *_looks(24), ("ANSWER", 0, 0, None)],
        {},
        50,
        60,
        None,
    ),
    (
        "W as the 50th usable decision",
        [*_looks(49), (None, 0.0, 0.0, None), ("W", 0.0, 0.0, None)],
        {},
        50,
        51,
        StopReason.STEP_LIMIT,
    ),
    ("21 identical turns where nothing moves", _turns(21), {}, 21, 21, StopReason.STAGNATION),
    ("20 identical turns, then ANSWER", [*_turns(20), ("ANSWER", 0, 0, None)], {}, 21, 21, None),
    (
        "LEFT 21 times at a junction that offers no left branch",
        _turns(21, "LEFT"),
        {},
        21,
        21,
        StopReason.STAGNATION,
    ),
    (
        "W 21 times against a dead end",
        _turns(21, "W"),
        {},
        21,
        21,
        StopReason.STAGNATION,
    ),
    (
        "an unusable reply among 25 identical turns resets the count",
        [*_turns(15), (None, 0.0, 0.0, None), *_turns(10)],
        {},
        25,
        26,
        None,
    ),
    (
        "ANSWER right after five moves away from the goal",
        [
            *[("W", 0.0, float(k), 100.0 + k) for k in range(5)],
            ("ANSWER", 0.0, 5.0, 105.0),
        ],
        {"away_from_goal": True},
        6,
        6,
        StopReason.AWAY_FROM_GOAL,
    ),
    (
        "four moves away, a turn, then ANSWER",
        [
            *[("W", 0.0, float(k), 100.0 + k) for k in range(4)],
            ("D", 0.0, 4.0, 104.0),  # the fourth move's streak is counted here
            ("ANSWER", 0.0, 4.0, 104.0),  # the turn did not move away: the streak resets
        ],
        {"away_from_goal": True},
        6,
        6,
        None,
    ),
]


@pytest.mark.parametrize(
    ("name", "decisions", "config", "steps", "requests", "stop"),
    STEP_CASES,
    ids=[case[0] for case in STEP_CASES],
)
def test_reference_step_counting(
    name: str,
    decisions: list[Decision],
    config: dict[str, Any],
    steps: int,
    requests: int,
    stop: StopReason | None,
) -> None:
    """python/src/cityarena/runner/agent_server.py: ``_handle_request`` adds a step for each
    successful decision, ANSWER included, before ``early_stopping`` judges it on the position
    Unity sent with the request (where the previous action left the agent): the step limit
    (50 per type, ``step_limit_by_type``) stops any non-ANSWER decision once ``step_count >=
    limit``; stagnation counts decisions whose action equals the previous one while the
    position moved less than 0.05 m and stops at 20 (the 21st identical decision); the
    away-from-goal count (MapNavigation) grows when the distance grew by more than
    ``max(0.05, 0.01)`` m since the previous decision, resets otherwise, and stops at 5 -- before
    an ANSWER is scored. Its tests ``test_answer_on_step_50_is_evaluated_before_step_limit``
    and ``test_nonanswer_on_step_50_stops_at_limit`` (python/tests/test_paper_alignment.py)
    are the first two rows."""
    monitor, reasons = _play(decisions, **config)
    assert all(reason is None for reason in reasons[:-1]), name
    assert reasons[-1] is stop
    assert (monitor.steps, monitor.requests) == (steps, requests)


# --- The judge ----------------------------------------------------------------------------
class _Provider:
    """A provider that records what it is asked and replies with one verdict."""

    name = "fake"
    model = "judge-model"

    def __init__(self, verdict: str) -> None:
        self.verdict = verdict
        self.asked: list[ChatRequest] = []

    def complete(self, request: ChatRequest) -> ChatReply:
        self.asked.append(request)
        return ChatReply(self.verdict)

    def close(self) -> None:
        """Nothing to close."""


@pytest.mark.parametrize(
    ("verdict", "correct"),
    [
        ("is_correct: True", True),
        ("is_correct:true.", True),
        ("IS_CORRECT : FALSE", False),
        ("is_correct: True/False", True),  # the first verdict word is read
        ("The answer is correct.", False),  # no verdict: the reference raises, scores 0
        ("**is_correct**: True", False),
        ("is_correct: Yes", False),
    ],
)
def test_judge_verdicts(verdict: str, correct: bool) -> None:
    """python/src/cityarena/tasks/validators.py, ``validate_with_llm``: the verdict is
    ``\\bis_correct\\s*:\\s*(true|false)\\b`` searched case-insensitively in the reply; a reply
    without one raises, which ``key_action_generator.generate_key_action_from_base64``
    records as ``is_correct: False`` (score 0)."""
    judge = LLMJudge(_Provider(verdict), label="fake:judge-model", prompt="reference")  # type: ignore[arg-type]
    task = _task("fuzzy_match", answer="Agebaka")
    verdict_row = score_answer(task, "Agebaka", None, ScoringContext(REFERENCE.rules, judge))
    assert verdict_row.correct is correct


def test_the_reference_judge_is_asked_only_what_the_reference_asks() -> None:
    """python/src/cityarena/tasks/validators.py, ``validate_with_llm`` and
    ``LLM_VALIDATION_PROMPT``: the judge gets the instruction (different names of the same
    landmark count), the user and expected answers -- no question, no rule about negations or
    hedges -- and 64 tokens. The default protocol's judge also gets the question and is told
    that "Not X" and "X or Y" are wrong."""
    reference, ours = _Provider("is_correct: True"), _Provider("is_correct: True")
    task = _task("fuzzy_match", answer="Agebaka")
    for provider, prompt in ((reference, "reference"), (ours, "city360")):
        judge = LLMJudge(provider, label="fake:judge-model", prompt=prompt)  # type: ignore[arg-type]
        score_answer(task, "Agebaka or Kin no Kura", None, ScoringContext(REFERENCE.rules, judge))
    [asked] = reference.asked
    assert asked.system == REFERENCE_JUDGE_SYSTEM_PROMPT
    assert "denies" not in asked.system
    assert asked.text.startswith("User answer: Agebaka or Kin no Kura\nExpected answer: Agebaka")
    assert asked.max_output_tokens == 64
    [ours_asked] = ours.asked
    assert ours_asked.system == JUDGE_SYSTEM_PROMPT
    assert ours_asked.text.startswith("Question: What is directly left of Agebaka?")
    assert REFERENCE_PROTOCOL.judge_prompt == "reference"
    assert DEFAULT_PROTOCOL.judge_prompt == "city360"


# Without a judge the reference refuses to run RelationalSpatial; city360's offline matcher
# (the same in both protocols, rows labelled offline-similarity) reads names as below.
@pytest.mark.parametrize(
    ("expected", "answer", "score"),
    [
        ("Café Ekberg", "Café Ekberg", 1.0),
        ("Café Ekberg", "CAFÉ EKBERG!", 1.0),
        ("Café Ekberg", "cafe ekberg", 1.0),  # one letter off: similarity 0.91
        ("Café Ekberg", "The cafe is Café Ekberg.", 1.0),
        ("Akihabara Station", "akihabara station", 1.0),
        ("Akihabara Station", "秋葉原駅", 0.0),  # the same place in kanji: only a judge knows
        ("秋葉原駅", "Akihabara Station", 0.0),
        ("ＡＢＣマート", "ABCマート", 1.0),  # full-width letters: equal after NFKC
        ("Café Ekberg", "Not Café Ekberg", 0.0),
        ("Café Ekberg", "Café Ekberg or Fazer", 0.0),
        ("Café Ekberg", "", 0.0),
    ],
)
def test_offline_names(expected: str, answer: str, score: float) -> None:
    """No reference value: python/src/cityarena/runner/key_action_generator.py refuses a
    RelationalSpatialReasoning task without ``validation_model`` and ``validation_provider``.
    These rows pin city360's conservative offline reading, used in both protocols and
    labelled ``offline-similarity`` so it is never mixed with judged rows."""
    task = _task("fuzzy_match", answer=expected)
    for context in (REFERENCE, DEFAULT):
        verdict = score_answer(task, answer, None, context)
        assert (verdict.score, verdict.method) == (score, "offline-similarity")


# --- End to end: an LMM run under each protocol ---------------------------------------------
def test_an_lmm_episode_counts_and_scores_as_each_protocol_says(
    built_city: Path, built_suite: Path, tmp_path: Path, fake_llm_server
) -> None:
    """The replies of one ObjectCount episode: prose around the JSON, a lower-case action,
    then ANSWER with the right count as a JSON number. The reference
    (key_action_generator.py ``extract_json_from_content``, ``validate_action``;
    agent_server.py ``_handle_request``; validators.py ``validate_task_answer``) finds the
    first two unusable (no steps, nothing happens) and fails the number (score 0): 1 step,
    3 requests, score 0. The default applies all three: 3 steps, score 1."""
    from city360.eval.results import read_results
    from city360.eval.runner import AgentSpec, EvalConfig, run_eval
    from city360.tasks import load_suite

    task = next(t for t in load_suite(built_suite).tasks if t.family.value == "ObjectCount")
    replies = (
        'I look around first. {"thought": "", "action": "D", "magnitude": "LARGE"}',
        '{"thought": "", "action": "d", "magnitude": "LARGE"}',
        json.dumps({"thought": "", "action": "ANSWER", "answer": int(task.truth.count)}),
    )
    rows = {}
    for protocol in ("reference", "default"):
        fake_llm_server.enqueue(*replies)
        outcome = run_eval(
            EvalConfig(
                city_dir=built_city,
                suite_dir=built_suite,
                output_root=tmp_path,
                run_id=f"lmm-{protocol}",
                select=task.id,
                protocol=protocol,
                agent=AgentSpec(
                    kind="lmm",
                    provider="openai-compatible",
                    model="fake-model",
                    base_url=fake_llm_server.openai_base_url,
                ),
            )
        )
        [rows[protocol]] = read_results(outcome.run_dir / "results.csv")
    reference, default = rows["reference"], rows["default"]
    assert (reference.status, reference.steps, reference.act_requests) == ("answered", 1, 3)
    assert (reference.evaluation_score, reference.is_correct) == (0.0, False)
    assert reference.user_answer == str(int(task.truth.count))
    assert "validation error" in reference.message
    assert (default.status, default.steps, default.act_requests) == ("answered", 3, 3)
    assert (default.evaluation_score, default.scored_success) == (1.0, True)
