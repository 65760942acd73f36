"""Tolerant reply parsing: what models actually write."""

from __future__ import annotations

import pytest

from city360.agents.parsing import ReplyStatus, extract_json_object, parse_reply
from city360.simulator.actions import Action, Magnitude


@pytest.mark.parametrize(
    ("text", "action", "magnitude"),
    [
        ('{"thought": "go", "action": "W", "magnitude": "MEDIUM"}', Action.W, Magnitude.MEDIUM),
        ('```json\n{"action": "w", "magnitude": "large"}\n```', Action.W, Magnitude.LARGE),
        ('Sure! Here it is:\n{"Action": "Left", "Magnitude": null}\nGood luck.', Action.LEFT, None),
        ("{'action': 'd', 'magnitude': 'small',}", Action.D, Magnitude.SMALL),
        ('{"ACTION": "W MEDIUM"}', Action.W, Magnitude.MEDIUM),
        ('{"action": "w(small)"}', Action.W, Magnitude.SMALL),
        ('{"action": "forward", "magnitude": "default"}', Action.W, None),
        ('{"action": "UP", "magnitude": "LARGE"}', Action.UP, None),
        ('{"reasoning": "x", "act": "s"}', Action.S, None),
        ('{"thought": "a {brace} in text", "action": "E", "magnitude": "none"}', Action.E, None),
    ],
)
def test_tolerant_forms_parse(text: str, action: Action, magnitude: Magnitude | None) -> None:
    parsed = parse_reply(text)
    assert parsed.status is ReplyStatus.OK
    assert parsed.command is not None
    assert parsed.command.action is action
    assert parsed.command.magnitude is magnitude


def test_answer_keeps_text_and_numbers_become_strings() -> None:
    parsed = parse_reply('{"thought": "7 trees", "action": "ANSWER", "answer": 7, "memory": "m"}')
    assert parsed.command is not None
    assert parsed.command.action is Action.ANSWER
    assert parsed.command.answer == "7"
    assert parsed.memory == "m"
    assert parsed.thought == "7 trees"


def test_answer_only_on_answer_action() -> None:
    parsed = parse_reply('{"action": "W", "answer": "x:1 y:2"}')
    assert parsed.command is not None
    assert parsed.command.answer is None


def test_not_json_is_a_parse_error_with_a_message() -> None:
    parsed = parse_reply("I think I should walk forward.")
    assert parsed.status is ReplyStatus.PARSE_ERROR
    assert parsed.command is None
    assert "not a JSON object" in parsed.problem
    assert "I think I should walk" in parsed.problem


def test_unknown_action_is_invalid_with_close_match() -> None:
    parsed = parse_reply('{"thought": "t", "action": "WW", "memory": "keep"}')
    assert parsed.status is ReplyStatus.INVALID_ACTION
    assert "unknown action 'WW'" in parsed.problem
    assert "Did you mean 'W'?" in parsed.problem
    assert parsed.memory == "keep"  # memory still usable


def test_missing_action_and_bad_magnitude_are_invalid() -> None:
    assert parse_reply('{"thought": "hmm"}').status is ReplyStatus.INVALID_ACTION
    bad = parse_reply('{"action": "W", "magnitude": "HUGE"}')
    assert bad.status is ReplyStatus.INVALID_ACTION
    assert "unknown magnitude 'HUGE'" in bad.problem


def test_empty_and_none_replies_do_not_raise() -> None:
    assert parse_reply("").status is ReplyStatus.PARSE_ERROR
    assert parse_reply("[1, 2]").status is ReplyStatus.PARSE_ERROR


def test_extract_prefers_fenced_object() -> None:
    text = 'Plan {not json}\n```\n{"action": "A"}\n```'
    assert extract_json_object(text) == {"action": "A"}
