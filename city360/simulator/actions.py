"""The controller's vocabulary: actions and magnitudes (see DESIGN.md "The controller").

Strings from users and models are accepted case-insensitively and turned into enums here, at the
boundary; anything else raises :class:`UnknownActionError` with the allowed values and a close
match.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from city360.errors import UnknownActionError, did_you_mean

__all__ = [
    "BRANCH_ACTIONS",
    "MOVE_ACTIONS",
    "ROTATE_ACTIONS",
    "Action",
    "ActionCommand",
    "Magnitude",
    "parse_action",
    "parse_magnitude",
]


class Action(StrEnum):
    """What an agent can do. W moves, A/D yaw, Q/E pitch, S re-aligns the view with travel,
    LEFT/RIGHT/UP take an offered branch at a junction, ANSWER ends the episode."""

    W = "W"
    S = "S"
    A = "A"
    D = "D"
    Q = "Q"
    E = "E"
    LEFT = "LEFT"
    RIGHT = "RIGHT"
    UP = "UP"
    ANSWER = "ANSWER"


class Magnitude(StrEnum):
    """How far W moves or A/D/Q/E turn; None means the controller default."""

    SMALL = "SMALL"
    MEDIUM = "MEDIUM"
    LARGE = "LARGE"


MOVE_ACTIONS = frozenset({Action.W})
ROTATE_ACTIONS = frozenset({Action.A, Action.D, Action.Q, Action.E, Action.S})
BRANCH_ACTIONS = (Action.LEFT, Action.UP, Action.RIGHT)
"""Branch actions in the fixed order used by action masks and observations."""


def parse_action(value: str | Action) -> Action:
    """``"w"``, ``" W "`` or ``Action.W`` -> ``Action.W``; anything else raises."""
    if isinstance(value, Action):
        return value
    if not isinstance(value, str):
        msg = f"action must be a string, got {type(value).__name__} {value!r}"
        raise UnknownActionError(msg)
    name = value.strip().upper()
    try:
        return Action(name)
    except ValueError:
        allowed = [a.value for a in Action]
        msg = (
            f"unknown action {value!r}; expected one of {', '.join(allowed)}."
            f"{did_you_mean(name, allowed)}"
        )
        raise UnknownActionError(msg) from None


def parse_magnitude(value: str | Magnitude | None) -> Magnitude | None:
    """``"medium"`` -> ``Magnitude.MEDIUM``; ``None`` stays ``None`` (the default amount)."""
    if value is None or isinstance(value, Magnitude):
        return value
    if not isinstance(value, str):
        msg = f"magnitude must be a string or None, got {type(value).__name__} {value!r}"
        raise UnknownActionError(msg)
    name = value.strip().upper()
    try:
        return Magnitude(name)
    except ValueError:
        allowed = [m.value for m in Magnitude]
        msg = (
            f"unknown magnitude {value!r}; expected one of {', '.join(allowed)} or none."
            f"{did_you_mean(name, allowed)}"
        )
        raise UnknownActionError(msg) from None


@dataclass(frozen=True, slots=True)
class ActionCommand:
    """One decision: an action, an optional magnitude, and the answer text for ANSWER."""

    action: Action
    magnitude: Magnitude | None = None
    answer: str | None = None
