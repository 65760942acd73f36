"""Evaluation protocols: one value naming every rule a score depends on (DESIGN.md "Tasks and
results": "A protocol names the scoring, stop rules and what each family may see").

``default`` keeps city360's choices; ``reference`` reproduces the 360CityArena benchmark
(GitHub 360MM-Team/360CityArena) as its code does it:

- scoring: ``python/src/cityarena/tasks/validators.py`` (strict ``<`` distance thresholds, its
  grid and count readers, 0-based grid cells, ``is_correct`` of a count = exact equality);
- stop rules and step counting: ``python/src/cityarena/runner/agent_server.py``
  (``early_stopping``, ``_handle_request``: only successful decisions are steps, an unusable
  reply does nothing; straight-line distance for away-from-goal);
- map visibility: ``python/tests/test_paper_alignment.py`` (Localization gets no location map);
- generation limits: ``python/src/cityarena/runner/key_action_generator.py`` (8192 output
  tokens by default);
- what the prompts tell the agent: ``python/src/cityarena/tasks/prompt_templates.py`` (the
  step limit in the localization prompt, 0-based grid indices, "the goal is not far").

Every difference is listed in the README table "default vs reference"
(:func:`protocol_differences` prints it from these values, so the table and the code agree).
Protocols are a registry: :func:`register_protocol`, :func:`get_protocol`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Literal

from city360.errors import ConfigError, did_you_mean
from city360.eval.metrics import ScoringRules
from city360.eval.stopping import STOP_RULES, StopConfig
from city360.tasks.schema import PromptRules

__all__ = [
    "DEFAULT_PROTOCOL",
    "PROTOCOL_NAMES",
    "REFERENCE_PROTOCOL",
    "PromptRules",
    "Protocol",
    "all_protocols",
    "get_protocol",
    "protocol_differences",
    "register_protocol",
]

AwayMeasure = Literal["street", "straight"]


@dataclass(frozen=True, slots=True)
class Protocol:
    """Every rule of one protocol. Units: tokens for ``max_output_tokens``."""

    name: str
    description: str
    scoring: ScoringRules
    stop_rules: str
    """A key of :data:`city360.eval.stopping.STOP_RULES`."""
    away_measure: AwayMeasure
    """How the away-from-goal rule measures distance: along the streets or the straight line."""
    max_output_tokens: int
    """The LMM agent's reply budget per step unless ``--agent-option max_output_tokens=N``."""
    reply_reader: str
    """How the LMM agent reads a reply unless ``--agent-option reply_reader=NAME``: a key of
    :data:`city360.agents.parsing.REPLY_READERS`."""
    prompts: PromptRules
    hidden_map_families: frozenset[str] = frozenset()
    """Families whose episodes get no location map (``obs["map"]`` absent) beyond those whose
    ``FamilySpec.location_map`` is False (Localization, in every protocol)."""
    judge_required: bool = False
    """True when RelationalSpatial needs an LLM judge to be comparable (the reference refuses
    to run without one; city360 then scores offline and labels the rows)."""
    judge_prompt: str = "city360"
    """What the LLM judge is told: a key of :data:`city360.eval.judge.JUDGE_PROMPTS`."""
    notes: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.stop_rules not in STOP_RULES:
            msg = (
                f"protocol {self.name!r}: unknown stop rules {self.stop_rules!r}; expected one "
                f"of {', '.join(STOP_RULES)}"
            )
            raise ConfigError(msg)
        if self.prompts.grid_origin != self.scoring.grid_origin:
            msg = (
                f"protocol {self.name!r}: the grid map numbers cells from "
                f"{self.prompts.grid_origin} but answers are read from {self.scoring.grid_origin}"
            )
            raise ConfigError(msg)
        from city360.eval.judge import get_judge_prompt

        get_judge_prompt(self.judge_prompt)
        if self.max_output_tokens < 16:
            msg = f"`max_output_tokens` must be >= 16, got {self.max_output_tokens}"
            raise ConfigError(msg)

    @property
    def fallback(self) -> str:
        """What an unusable decision does under these stop rules: the S fallback (a counted
        step) or nothing at all."""
        return "S" if STOP_RULES[self.stop_rules](StopConfig()).counts_invalid else "nothing"

    def shows_map(self, family: str) -> bool:
        """Whether an episode of ``family`` gets the location map."""
        from city360.tasks.families import get_family

        return get_family(str(family)).location_map and str(family) not in self.hidden_map_families

    def as_metadata(self) -> dict[str, object]:
        """The protocol as run_metadata.json records it."""
        return {
            "name": self.name,
            "scoring": {
                "strict_threshold": self.scoring.strict_threshold,
                "grid_parser": self.scoring.grid_parser,
                "grid_origin": self.scoring.grid_origin,
                "count_parser": self.scoring.count_parser,
                "count_correct_exact": self.scoring.count_correct_exact,
                "text_answers_only": self.scoring.text_answers_only,
            },
            "stop_rules": self.stop_rules,
            "away_measure": self.away_measure,
            "fallback": self.fallback,
            "max_output_tokens": self.max_output_tokens,
            "reply_reader": self.reply_reader,
            "prompts": {f.name: getattr(self.prompts, f.name) for f in fields(self.prompts)},
            "hidden_map_families": sorted(self.hidden_map_families) or "none beyond Localization",
            "judge_required": self.judge_required,
            "judge_prompt": self.judge_prompt,
        }


_PROTOCOLS: dict[str, Protocol] = {}


def register_protocol(protocol: Protocol, *, replace: bool = False) -> Protocol:
    """Register ``protocol`` under its name; an existing name needs ``replace=True``."""
    if protocol.name in _PROTOCOLS and not replace:
        msg = f"protocol {protocol.name!r} is already registered; pass replace=True to replace it"
        raise ConfigError(msg)
    _PROTOCOLS[protocol.name] = protocol
    return protocol


def get_protocol(name: str | Protocol) -> Protocol:
    """The protocol registered as ``name`` (a :class:`Protocol` is returned as it is)."""
    if isinstance(name, Protocol):
        return name
    try:
        return _PROTOCOLS[str(name)]
    except KeyError:
        known = list(_PROTOCOLS)
        msg = (
            f"unknown protocol {name!r}; expected one of {', '.join(known)}."
            f"{did_you_mean(str(name), known)}"
        )
        raise ConfigError(msg) from None


def all_protocols() -> list[Protocol]:
    return list(_PROTOCOLS.values())


DEFAULT_PROTOCOL = register_protocol(
    Protocol(
        name="default",
        description="city360's rules: inclusive thresholds, tolerant readers, street distance",
        scoring=ScoringRules(),
        stop_rules="city360",
        away_measure="street",
        max_output_tokens=1024,
        reply_reader="tolerant",
        prompts=PromptRules(),
    )
)

REFERENCE_PROTOCOL = register_protocol(
    Protocol(
        name="reference",
        description="360CityArena's validators, stop rules, step counting and limits",
        scoring=ScoringRules(
            strict_threshold=True,
            grid_parser="reference",
            grid_origin=0,
            count_parser="reference",
            count_correct_exact=True,
            text_answers_only=True,
        ),
        stop_rules="reference",
        away_measure="straight",
        max_output_tokens=8192,
        reply_reader="reference",
        prompts=PromptRules(grid_origin=0, state_step_limit=True, goal_is_near=True),
        judge_required=True,
        judge_prompt="reference",
    )
)

PROTOCOL_NAMES = tuple(_PROTOCOLS)
"""The built-in protocol names."""


def protocol_differences(a: Protocol, b: Protocol) -> list[tuple[str, str, str]]:
    """``(rule, a's value, b's value)`` for every rule where two protocols differ."""
    left, right = a.as_metadata(), b.as_metadata()
    rows: list[tuple[str, str, str]] = []

    def walk(prefix: str, x: object, y: object) -> None:
        if isinstance(x, dict) and isinstance(y, dict):
            for key in x:
                walk(f"{prefix}.{key}" if prefix else str(key), x[key], y.get(key))
        elif x != y:
            rows.append((prefix, str(x), str(y)))

    walk("", {k: v for k, v in left.items() if k != "name"}, right)
    return rows
