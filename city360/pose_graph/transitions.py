"""Branch choices at the end of each edge, with turn angles and LEFT / UP / RIGHT labels.

Policy (also in docs/contracts.md):

* The choices on arriving at a node along edge ``e`` are the *street directions* leaving the node,
  one per street and direction, except going back along ``e``'s own street. Among the edges
  filming a street direction the one continuing ``e``'s video (same trajectory, next frames, same
  playback direction) is offered when there is one, so a trajectory that runs straight through
  continues on the same video; otherwise the street direction's primary edge.
* ``turn_deg`` is the signed smallest rotation from ``e``'s end heading to the choice's start
  heading, in (-180, 180], positive to the right (clockwise).
* Natural labels: ``|turn| <= 30°`` is UP, ``turn < -30°`` LEFT, ``turn > 30°`` RIGHT. When two
  choices share a natural label (two lefts, a fork), labels are re-assigned so that each of LEFT,
  UP, RIGHT is used at most once: choices sorted from leftmost to rightmost are matched in order
  to the slots LEFT (ideal -90°), UP (0°), RIGHT (+90°), maximising the number of labelled choices
  and then minimising the summed distance to the ideal angles; a choice may only take LEFT when
  ``turn < -15°``, RIGHT when ``turn > 15°`` and UP when ``|turn| <= 60°``. Choices left over (more
  than three, or no admissible slot) keep their natural label with ``rank`` 1, 2, ... (rank 0 is
  the choice a LEFT/UP/RIGHT action takes; higher ranks are further from that label's ideal).
* U-turns are offered only where nothing else is (dead ends and the open end of the filmed
  network): the opposite direction of the same street, labelled UP with ``turn_deg`` 180 and
  ``uturn`` true.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from city360.geo import angle_diff_deg
from city360.streets.values import LABELS, Label, Transition

__all__ = [
    "LABELS",
    "UP_HALF_ANGLE_DEG",
    "Choice",
    "Transition",
    "assign_labels",
    "natural_label",
    "transitions_for",
]

UP_HALF_ANGLE_DEG = 30.0
"""Turns within this many degrees of straight on are naturally UP."""
_IDEAL = {"LEFT": -90.0, "UP": 0.0, "RIGHT": 90.0}
_SIDE_MIN_DEG = 15.0
_UP_MAX_DEG = 60.0


@dataclass(frozen=True, slots=True)
class Choice:
    """A candidate outgoing edge: its id and start heading (deg, clockwise from north)."""

    edge: str
    start_heading_deg: float


def natural_label(turn_deg: float) -> Label:
    if abs(turn_deg) <= UP_HALF_ANGLE_DEG:
        return "UP"
    return "LEFT" if turn_deg < 0 else "RIGHT"


def _admissible(turn_deg: float, label: str) -> bool:
    if label == "LEFT":
        return turn_deg < -_SIDE_MIN_DEG
    if label == "RIGHT":
        return turn_deg > _SIDE_MIN_DEG
    return abs(turn_deg) <= _UP_MAX_DEG


def assign_labels(turns_deg: Sequence[float]) -> list[tuple[Label, int]]:
    """(label, rank) for each turn angle, by the policy in the module docstring."""
    natural = [natural_label(t) for t in turns_deg]
    if len(set(natural)) == len(natural):
        return [(label, 0) for label in natural]
    order = sorted(range(len(turns_deg)), key=lambda i: turns_deg[i])
    best: tuple[int, float, dict[int, Label]] = (0, 0.0, {})
    for size in range(min(3, len(order)), 0, -1):
        for subset in itertools.combinations(order, size):
            for slots in itertools.combinations(LABELS, size):
                if not all(
                    _admissible(turns_deg[i], s) for i, s in zip(subset, slots, strict=True)
                ):
                    continue
                cost = sum(
                    abs(turns_deg[i] - _IDEAL[s]) for i, s in zip(subset, slots, strict=True)
                )
                if size > best[0] or (size == best[0] and cost < best[1]):
                    best = (size, cost, dict(zip(subset, slots, strict=True)))
        if best[0]:
            break
    result: list[tuple[Label, int]] = [("UP", 0)] * len(turns_deg)
    for i, label in best[2].items():
        result[i] = (label, 0)
    leftovers = [i for i in range(len(turns_deg)) if i not in best[2]]
    leftovers.sort(key=lambda i: abs(turns_deg[i] - _IDEAL[natural[i]]))
    used: dict[str, int] = {}
    for i in leftovers:
        used[natural[i]] = used.get(natural[i], 0) + 1
        result[i] = (natural[i], used[natural[i]])
    return result


def transitions_for(
    end_heading_deg: float, choices: Sequence[Choice], *, uturn: Choice | None = None
) -> list[Transition]:
    """Transitions from an edge ending with travel heading ``end_heading_deg``.

    ``choices`` are the admissible street directions (see the module docstring); when there are
    none, ``uturn`` (the opposite direction of the arriving street) is offered as a U-turn.
    """
    if not choices:
        if uturn is None:
            return []
        return [Transition(uturn.edge, 180.0, "UP", 0, uturn=True)]
    turns = [angle_diff_deg(c.start_heading_deg, end_heading_deg) for c in choices]
    labels = assign_labels(turns)
    out = [
        Transition(c.edge, t, label, rank)
        for c, t, (label, rank) in zip(choices, turns, labels, strict=True)
    ]
    out.sort(key=lambda tr: (tr.rank, LABELS.index(tr.label), tr.turn_deg))
    return out
