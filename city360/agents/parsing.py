"""Turn a model's reply into a decision, tolerating how models actually write.

Accepted: a bare JSON object; one wrapped in code fences or in prose; keys in any case and a few
synonyms (``reasoning`` for ``thought``, ``reflection`` for ``memory``); single quotes, Python
literals and trailing commas (via :mod:`ast`); actions in any case, with the magnitude glued on
(``"w medium"``) and a couple of plain-English names (``forward``, ``straight``). Anything else
is reported, never raised: :class:`ParsedReply` says whether it was a parse error (no usable
JSON) or an invalid action (JSON, but no valid action), with a message to show the model.

That is the ``"tolerant"`` reader. :func:`parse_reply_reference` (``"reference"``, the
reference protocol's, :data:`REPLY_READERS`) reads a reply as 360CityArena's action generator
does (``python/src/cityarena/runner/key_action_generator.py``, ``extract_json_from_content``
and ``validate_action``): the JSON object inside a ```` ```json ```` fence, else the whole
reply, nothing else; ``action`` exactly one of the ten upper-case names. A magnitude it cannot
read is no error there (the move or turn takes its default size), so here it is None.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from city360.errors import UnknownActionError
from city360.simulator.actions import (
    MOVE_ACTIONS,
    ROTATE_ACTIONS,
    Action,
    ActionCommand,
    Magnitude,
    parse_action,
    parse_magnitude,
)

__all__ = [
    "REPLY_READERS",
    "ParsedReply",
    "ReplyStatus",
    "extract_json_object",
    "parse_reply",
    "parse_reply_reference",
]

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")

_KEY_SYNONYMS = {
    "thought": "thought",
    "thoughts": "thought",
    "thinking": "thought",
    "reasoning": "thought",
    "action": "action",
    "act": "action",
    "magnitude": "magnitude",
    "amount": "magnitude",
    "size": "magnitude",
    "memory": "memory",
    "reflection": "memory",
    "answer": "answer",
    "final_answer": "answer",
}
_ACTION_SYNONYMS = {
    "FORWARD": Action.W,
    "MOVE_FORWARD": Action.W,
    "MOVE FORWARD": Action.W,
    "STRAIGHT": Action.UP,
    "GO_STRAIGHT": Action.UP,
    "GO STRAIGHT": Action.UP,
}
_NO_MAGNITUDE = {"", "NONE", "NULL", "DEFAULT", "N/A", "-"}


class ReplyStatus(StrEnum):
    OK = "ok"
    PARSE_ERROR = "parse_error"
    INVALID_ACTION = "invalid_action"


@dataclass(frozen=True, slots=True)
class ParsedReply:
    """What a reply said. ``command`` is None unless ``status`` is OK; ``problem`` explains
    what was wrong, in words meant for the model's next prompt."""

    status: ReplyStatus
    command: ActionCommand | None = None
    thought: str = ""
    memory: str | None = None
    problem: str = ""
    answer_type: str = "string"
    """The JSON type of the reply's ``answer`` (``"string"``, ``"number"``, ``"boolean"``,
    ``"null"``, ``"array"``, ``"object"``); ``"string"`` when the key is absent. The answer
    text is the value as text either way; the protocol decides whether a non-string answer
    can score (:attr:`city360.eval.metrics.ScoringRules.text_answers_only`)."""


def _loads(candidate: str) -> Any:
    try:
        return json.loads(candidate)
    except json.JSONDecodeError:
        pass
    fixed = _TRAILING_COMMA.sub(r"\1", candidate)
    try:
        return json.loads(fixed)
    except json.JSONDecodeError:
        pass
    python_like = re.sub(r"\btrue\b", "True", fixed)
    python_like = re.sub(r"\bfalse\b", "False", python_like)
    python_like = re.sub(r"\bnull\b", "None", python_like)
    try:
        return ast.literal_eval(python_like)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _balanced_objects(text: str) -> list[str]:
    """Every top-level ``{...}`` span, braces counted outside string literals."""
    spans: list[str] = []
    depth = 0
    start = -1
    quote = ""
    escaped = False
    for i, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
            continue
        if char in "\"'" and depth > 0:
            quote = char
        elif char == "{":
            if depth == 0:
                start = i
            depth += 1
        elif char == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
    return spans


def extract_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (fenced, bare, or inside prose), or None."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    candidates.append(text)
    for candidate in candidates:
        candidate = candidate.strip()
        whole = _loads(candidate)
        if isinstance(whole, dict):
            return whole
        for span in _balanced_objects(candidate):
            value = _loads(span)
            if isinstance(value, dict):
                return value
    return None


def _normalise_keys(obj: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in obj.items():
        name = _KEY_SYNONYMS.get(str(key).strip().lower())
        if name is not None and name not in out:
            out[name] = value
    return out


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _json_type(value: Any) -> str:
    """The JSON type name of a parsed value (Python literals map to their JSON kin)."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, dict):
        return "object"
    return "array"


def _split_action(raw: str) -> tuple[str, str | None]:
    """``"W MEDIUM"``, ``"W(medium)"``, ``"w, small"`` -> (``"W"``, ``"MEDIUM"``)."""
    cleaned = re.sub(r"[(),:]", " ", raw).strip().upper()
    if cleaned in _ACTION_SYNONYMS:
        return cleaned, None
    parts = cleaned.split()
    if len(parts) == 2 and parts[1] in {m.value for m in Magnitude}:
        return parts[0], parts[1]
    return cleaned, None


def parse_reply(text: str) -> ParsedReply:
    """Parse one model reply; never raises on malformed input."""
    obj = extract_json_object(text or "")
    if obj is None:
        snippet = (text or "").strip().replace("\n", " ")[:120]
        return ParsedReply(
            status=ReplyStatus.PARSE_ERROR,
            problem=(
                "your last reply was not a JSON object; reply with exactly one JSON object "
                f"with the keys thought, action, magnitude, memory, answer (it began: {snippet!r})"
            ),
        )
    fields = _normalise_keys(obj)
    thought = _text(fields.get("thought"))
    memory = _text(fields["memory"]) if "memory" in fields else None
    raw_action = _text(fields.get("action"))
    if not raw_action:
        return ParsedReply(
            status=ReplyStatus.INVALID_ACTION,
            thought=thought,
            memory=memory,
            problem="your last reply had no `action`; every reply must name one action",
        )
    name, glued_magnitude = _split_action(raw_action)
    try:
        action = _ACTION_SYNONYMS.get(name) or parse_action(name)
    except UnknownActionError as exc:
        return ParsedReply(
            status=ReplyStatus.INVALID_ACTION, thought=thought, memory=memory, problem=str(exc)
        )
    raw_magnitude = glued_magnitude or _text(fields.get("magnitude"))
    magnitude: Magnitude | None = None
    takes_magnitude = action in MOVE_ACTIONS or (
        action in ROTATE_ACTIONS and action is not Action.S
    )
    if takes_magnitude and raw_magnitude.strip().upper() not in _NO_MAGNITUDE:
        try:
            magnitude = parse_magnitude(raw_magnitude)
        except UnknownActionError as exc:
            return ParsedReply(
                status=ReplyStatus.INVALID_ACTION,
                thought=thought,
                memory=memory,
                problem=str(exc),
            )
    return _command_reply(fields, action, magnitude, thought, memory)


def _command_reply(
    fields: Mapping[str, Any],
    action: Action,
    magnitude: Magnitude | None,
    thought: str,
    memory: str | None,
) -> ParsedReply:
    """The usable reply both readers end with: the command, and for ANSWER its text and the
    JSON type the model gave it (the reference scores only text answers)."""
    answer = _text(fields.get("answer")) if action is Action.ANSWER else None
    answer_type = _json_type(fields["answer"]) if "answer" in fields else "string"
    return ParsedReply(
        status=ReplyStatus.OK,
        command=ActionCommand(action=action, magnitude=magnitude, answer=answer),
        thought=thought,
        memory=memory,
        answer_type=answer_type if action is Action.ANSWER else "string",
    )


_JSON_FENCE = re.compile(r"```json\s*(.*?)```", re.IGNORECASE | re.DOTALL)
_REFERENCE_ACTIONS = frozenset(action.value for action in Action)
_REFERENCE_SIZES = {"S": Magnitude.SMALL, "M": Magnitude.MEDIUM, "L": Magnitude.LARGE}
_REFERENCE_SIZES["BIG"] = Magnitude.LARGE
"""Short size names the reference also reads (its ``_size_to_seconds``)."""


def parse_reply_reference(text: str) -> ParsedReply:
    """Read one reply as the reference protocol does (see the module docstring): prose around
    the JSON, a plain ```` ``` ```` fence, single quotes, ``"w"`` or ``"forward"`` make the
    reply unusable (a parse error or an invalid action), as they do in 360CityArena."""
    text = text or ""
    fenced = _JSON_FENCE.search(text)
    candidate = fenced.group(1).strip() if fenced else text
    try:
        obj = json.loads(candidate)
    except json.JSONDecodeError:
        obj = None
    if not isinstance(obj, dict):
        snippet = text.strip().replace("\n", " ")[:120]
        return ParsedReply(
            status=ReplyStatus.PARSE_ERROR,
            problem=(
                "your last reply was not one JSON object (nothing before or after it); "
                f"it began: {snippet!r}"
            ),
        )
    thought = _text(obj.get("thought"))
    memory = _text(obj["memory"]) if "memory" in obj else None
    raw_action = obj.get("action", "")
    if not isinstance(raw_action, str) or raw_action not in _REFERENCE_ACTIONS:
        return ParsedReply(
            status=ReplyStatus.INVALID_ACTION,
            thought=thought,
            memory=memory,
            problem=(
                f"invalid action {raw_action!r}; `action` must be exactly one of "
                f"{', '.join(a.value for a in Action)}"
            ),
        )
    action = Action(raw_action)
    magnitude: Magnitude | None = None
    if action in MOVE_ACTIONS or (action in ROTATE_ACTIONS and action is not Action.S):
        size = _text(obj.get("magnitude")).upper()
        try:
            magnitude = _REFERENCE_SIZES.get(size) or parse_magnitude(size or None)
        except UnknownActionError:
            magnitude = None
    return _command_reply(obj, action, magnitude, thought, memory)


REPLY_READERS: Mapping[str, Callable[[str], ParsedReply]] = {
    "tolerant": parse_reply,
    "reference": parse_reply_reference,
}
"""Reply readers by name (``LMMConfig.reply_reader``, set by the run's protocol)."""
