"""The movement rules the controller applies and the task oracle plans with, defined once.

The simulator's controller (:mod:`city360.simulator.controller`) and the street graph the task
oracle walks (:class:`city360.streets.StreetGraph`, whose moves
:func:`~city360.tasks.walk.oracle_walk` searches to prove tasks solvable) must move
identically, or a task solvable on the graph is not solvable in the simulator. Both read these
rules:

- :func:`offered`: which transitions LEFT/UP/RIGHT can take at a segment's end (one per label,
  the lowest ``rank``);
- :func:`passthrough`: where W goes on without stopping (a node that is not a junction with
  exactly one way on that is not a U-turn);
- :func:`branch_yaw_deg`: the view yaw after a crossing, from the graph's ``turn_deg`` (the
  turn measured on the streets 6-30 m from the node), never from the headings of the frames at
  the segments' very ends: a walker filmed turning at a junction has its camera mid-turn
  there, and carrying that over would leave the view looking sideways or backwards on a
  straight continuation, which makes W walk the opposite direction;
- :data:`END_EPS_M`: an offset this close to a segment's length is its end.

Pure functions of small protocols, so this module imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar

from city360.geo import angle_diff_deg

__all__ = [
    "BRANCH_LABELS",
    "END_EPS_M",
    "TransitionLike",
    "branch_yaw_deg",
    "offered",
    "passthrough",
]

END_EPS_M = 1e-6
"""An offset within this many metres of a segment's length counts as its end."""

BRANCH_LABELS = ("LEFT", "UP", "RIGHT")
_CANONICAL_TURN_DEG = {"LEFT": -90.0, "UP": 0.0, "RIGHT": 90.0}


class TransitionLike(Protocol):
    """What the rules read of a transition (:class:`city360.streets.Transition` fits)."""

    @property
    def edge(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def turn_deg(self) -> float: ...
    @property
    def rank(self) -> int: ...
    @property
    def uturn(self) -> bool: ...


T = TypeVar("T", bound=TransitionLike)


def offered(transitions: Iterable[T]) -> tuple[T, ...]:
    """The transitions LEFT/UP/RIGHT take, in that label order: per label the lowest ``rank``,
    then (for graphs without ranks) the one closest to the label's canonical turn (-90/0/+90).
    Labels other than LEFT/UP/RIGHT raise ``ValueError``."""
    best: dict[str, T] = {}
    for transition in transitions:
        if transition.label not in _CANONICAL_TURN_DEG:
            msg = f"transition label must be LEFT, UP or RIGHT, got {transition.label!r}"
            raise ValueError(msg)
        canonical = _CANONICAL_TURN_DEG[transition.label]
        current = best.get(transition.label)
        if current is None or (transition.rank, abs(transition.turn_deg - canonical)) < (
            current.rank,
            abs(current.turn_deg - canonical),
        ):
            best[transition.label] = transition
    return tuple(best[label] for label in BRANCH_LABELS if label in best)


def passthrough(node_kind: str, offered_transitions: tuple[T, ...]) -> T | None:
    """The transition W continues onto without stopping at a segment's end node of kind
    ``node_kind``: only at a node that is not a junction (a bend, or a cut where videos change)
    offering exactly one way on that is not a U-turn; None where W stops."""
    if node_kind == "junction" or len(offered_transitions) != 1:
        return None
    transition = offered_transitions[0]
    return None if transition.uturn else transition


def branch_yaw_deg(yaw_deg: float, transition: TransitionLike, *, turn_view: bool) -> float:
    """View yaw (degrees relative to travel, in (-180, 180]) after taking ``transition``.

    With ``turn_view`` the view turns with the body (yaw kept); otherwise it keeps its absolute
    direction, so the yaw changes by minus the graph's ``turn_deg``. An agent looking ahead
    (yaw 0) that goes straight on (|turn| <= 60 for UP) therefore still looks ahead enough for
    W to walk forwards.
    """
    return angle_diff_deg(yaw_deg if turn_view else yaw_deg - float(transition.turn_deg), 0.0) + 0.0
