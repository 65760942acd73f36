"""The words the LMM agent is given: system prompt, reflection prompt, per-step prompt.

Written for this project (not copied from any benchmark). The system prompt explains the
controller, the red branch arrows, the reply format and the answer formats; the reflection
prompt asks the model to rewrite its memory each step; the step prompt carries the task, the
memory, the recent steps and the current situation. :func:`prompt_hash` fingerprints all of it
(with the controller units filled in) so a run records exactly which words were used.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from city360.agents.memory import StepRecord
from city360.simulator.actions import Action

__all__ = [
    "PROMPT_VERSION",
    "REFLECTION_PROMPT",
    "ControllerUnits",
    "prompt_hash",
    "render_step_prompt",
    "render_system_prompt",
]

PROMPT_VERSION = "1"


@dataclass(frozen=True, slots=True)
class ControllerUnits:
    """The controller's step sizes as the simulator is configured (DESIGN.md defaults)."""

    walk_m: tuple[float, float, float] = (2.0, 5.0, 10.0)
    turn_deg: tuple[float, float, float] = (30.0, 60.0, 90.0)
    default_turn_deg: float = 24.0
    default_walk_m: float = 5.0

    @classmethod
    def from_env_config(cls, config: Any) -> ControllerUnits:
        """The units of a simulator ``EnvConfig`` (``move_m``, ``turn_deg`` and defaults)."""
        return cls(
            walk_m=tuple(float(v) for v in config.move_m),  # type: ignore[arg-type]
            turn_deg=tuple(float(v) for v in config.turn_deg),  # type: ignore[arg-type]
            default_turn_deg=float(config.turn_default_deg),
            default_walk_m=float(config.move_default_m),
        )


_SYSTEM_TEMPLATE = """\
You are walking through a real city, seen through a 360-degree street camera. Each step you \
get a picture of what is in front of you{map_clause}, and you choose one action. You cannot \
leave the streets that were filmed: you move along a street and, at an intersection, pick one \
of the ways offered.

Actions
- W: walk forward along the street. magnitude SMALL = {w0} m, MEDIUM = {w1} m, LARGE = {w2} m \
(no magnitude = {wd} m). Walking stops at the next intersection; there W does nothing and you \
must pick a way.
- LEFT / UP / RIGHT: at an intersection, take the way to the left, straight on (UP) or to the \
right. The ways you can take are drawn as RED ARROWS on the ground in your view, and the step \
text lists them. Choosing a way that is not offered does nothing.
- A / D: turn your head left / right without moving. magnitude SMALL = {t0}°, MEDIUM = {t1}°, \
LARGE = {t2}° (no magnitude = {td}°). Use it to look around, e.g. to read shop signs beside you.
- Q / E: look up / down by the same angles.
- S: look straight ahead again, along the direction you are walking.
- ANSWER: end the task and give your answer in "answer". You get one answer; nothing after it \
counts.

Answers
- Localization: the grid cell of the task's map where you are, written exactly as \
"x:i y:j" (for example "x:2 y:4").
- Finding a place, following a map or following directions: walk until you are standing at \
the goal, then choose ANSWER (the answer text may name the place). Only your position counts, \
so stop close to it.
- Counting: the number only, in digits (for example "7").
- Questions about places: the name of the place, as written on its sign.

Reply format
Reply with one JSON object and nothing else:
{reply_format}

{reflection}"""

REPLY_FORMATS = {
    "tolerant": """\
{"thought": "what you see and why you act", "action": "one of W, LEFT, UP, RIGHT, A, D, Q, E, \
S, ANSWER", "magnitude": "SMALL, MEDIUM, LARGE or null", "memory": "your rewritten memory", \
"answer": "your answer when action is ANSWER, else null"}""",
    "reference": """\
{"thought": "what you see and why you act", "action": "exactly one of W, LEFT, UP, RIGHT, A, \
D, Q, E, S, ANSWER", "magnitude": "SMALL, MEDIUM, LARGE or empty", "memory": "your rewritten \
memory", "answer": "your answer when action is ANSWER, else empty"}
Every value is a JSON string ("" when empty), a number too ("7"). Write nothing before or \
after the object.""",
}
"""The reply format the system prompt asks for, by reply reader
(:data:`city360.agents.parsing.REPLY_READERS`): the reference's reader throws away a reply with
text around its JSON and scores an answer that is not a string 0, so its format says so, as
the reference's own prompt does ("only respond with the JSON object"; every example's answer is
a string)."""

REFLECTION_PROMPT = """\
Memory
You keep a memory that you rewrite every step in the "memory" field; you get it back at the \
next step, and it is the only long-term memory you have. Keep it short and useful: the goal \
in your own words, where you believe you are and which way you face, landmarks and signs you \
have passed, turns you have taken, what did not work, and your plan for the next steps. Replace \
what is no longer true."""

_STEP_TEMPLATE = """\
TASK
{task}

YOUR MEMORY
{memory}

RECENT STEPS
{history}

NOW (step {step}{limit})
{situation}

Choose your next action. Reply with one JSON object."""


def render_system_prompt(
    units: ControllerUnits, *, with_map: bool, reply_reader: str = "tolerant"
) -> str:
    """The system prompt with the controller's units filled in, asking for the reply format
    of ``reply_reader`` (a key of :data:`REPLY_FORMATS`)."""
    map_clause = (
        " and a small map centred on you, with a red arrow for your position and heading"
        if with_map
        else ""
    )
    return _SYSTEM_TEMPLATE.format(
        map_clause=map_clause,
        w0=f"{units.walk_m[0]:g}",
        w1=f"{units.walk_m[1]:g}",
        w2=f"{units.walk_m[2]:g}",
        wd=f"{units.default_walk_m:g}",
        t0=f"{units.turn_deg[0]:g}",
        t1=f"{units.turn_deg[1]:g}",
        t2=f"{units.turn_deg[2]:g}",
        td=f"{units.default_turn_deg:g}",
        reply_format=REPLY_FORMATS[reply_reader],
        reflection=REFLECTION_PROMPT,
    )


def render_step_prompt(
    *,
    task: str,
    memory: str,
    history: Sequence[StepRecord],
    step: int,
    step_limit: int | None,
    feedback: str,
    branches: Sequence[Action],
    problem: str,
    image_captions: Sequence[str],
) -> str:
    """The user message of one step (the images follow it, in ``image_captions`` order)."""
    situation: list[str] = []
    if feedback:
        situation.append(f"Feedback from your last action: {feedback}")
    if problem:
        situation.append(f"Problem with your last reply: {problem}")
    if branches:
        names = ", ".join(b.value for b in branches)
        situation.append(f"You are at an intersection. Ways offered (red arrows): {names}.")
    else:
        situation.append("No intersection here: LEFT / UP / RIGHT are not offered.")
    if image_captions:
        situation.append("Images, in order: " + "; ".join(image_captions) + ".")
    return _STEP_TEMPLATE.format(
        task=task.strip() or "(no task text)",
        memory=memory.strip() or "(empty: this is your first step)",
        history="\n".join(r.describe() for r in history) or "(none yet)",
        step=step,
        limit=f" of at most {step_limit}" if step_limit else "",
        situation="\n".join(situation),
    )


def prompt_hash(units: ControllerUnits | None = None, *, reply_reader: str = "tolerant") -> str:
    """A stable 16-hex-digit fingerprint of every prompt text (with units filled in, asking
    for ``reply_reader``'s reply format)."""
    units = units or ControllerUnits()
    digest = hashlib.sha256()
    for part in (
        PROMPT_VERSION,
        render_system_prompt(units, with_map=True, reply_reader=reply_reader),
        render_system_prompt(units, with_map=False, reply_reader=reply_reader),
        _STEP_TEMPLATE,
    ):
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()[:16]
