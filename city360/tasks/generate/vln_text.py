"""Turn-by-turn directions written from a route on the pose graph.

The walk starts with "Go straight."; each junction where more than one branch is offered is an
*intersection*. Going straight through intersections is folded into the ordinal of the next
turn ("Turn right at the second intersection"); a junction with a single way on is a bend
("Follow the street as it bends left."). A named place within ``corner_radius_m`` of a turn's
junction is named there, and the last line says where to stop and on which side the goal is:

    1. Go straight.
    2. Turn right at the first intersection, where Kahvila Aalto is on the corner.
    3. Go straight through 1 intersection.
    4. Stop in front of Kirja Nurkka on your left.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from city360.errors import TaskError
from city360.streets import StreetGraph

__all__ = ["Landmark", "directions", "ordinal", "side_of"]

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


@dataclass(frozen=True, slots=True)
class Landmark:
    """A named place (metres, city CRS)."""

    id: str
    name: str
    x_m: float
    y_m: float


def ordinal(n: int) -> str:
    """1 -> "first" ... 8 -> "eighth", then "9th", "10th", ..."""
    if 1 <= n <= len(_ORDINALS):
        return _ORDINALS[n - 1]
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def side_of(heading_deg: float, dx_m: float, dy_m: float) -> Literal["left", "right"]:
    """Which side of a walker heading ``heading_deg`` the vector (dx_m, dy_m) points to."""
    hx, hy = math.sin(math.radians(heading_deg)), math.cos(math.radians(heading_deg))
    cross = hx * dy_m - hy * dx_m  # > 0: the vector is counter-clockwise of travel, i.e. left
    return "left" if cross > 0 else "right"


def _transition_label(graph: StreetGraph, from_seg: str, to_seg: str) -> str:
    for tr in graph.segment(from_seg).choices:
        if tr.edge == to_seg:
            return tr.label
    msg = f"segment {to_seg!r} is not a branch offered at the end of {from_seg!r}"
    raise TaskError(msg)


def _corner(
    graph: StreetGraph, node: int, landmarks: Sequence[Landmark], radius_m: float, used: set[str]
) -> Landmark | None:
    nx_, ny_ = graph.node_xy[node]
    best: tuple[float, Landmark] | None = None
    for mark in landmarks:
        if mark.id in used:
            continue
        d = math.hypot(mark.x_m - nx_, mark.y_m - ny_)
        if d <= radius_m and (best is None or d < best[0]):
            best = (d, mark)
    return None if best is None else best[1]


def directions(
    graph: StreetGraph,
    route: Sequence[str],
    goal: Landmark,
    goal_side: Literal["left", "right"],
    *,
    landmarks: Sequence[Landmark] = (),
    corner_radius_m: float = 20.0,
) -> list[str]:
    """Numbered directions for walking ``route`` (consecutive segment ids) to ``goal``."""
    if not route:
        msg = "a route needs at least one segment"
        raise TaskError(msg)
    lines = ["Go straight."]
    used = {goal.id}
    passed = 0  # intersections crossed straight on since the last instruction
    for here, there in itertools.pairwise(route):
        label = _transition_label(graph, here, there)
        node = graph.segment(here).v
        if not graph.segment(here).is_intersection:
            if label != "UP":
                lines.append(f"Follow the street as it bends {label.lower()}.")
            continue
        if label == "UP":
            passed += 1
            continue
        where = "next" if passed == 0 and len(lines) > 1 else ordinal(passed + 1)
        text = f"Turn {label.lower()} at the {where} intersection"
        corner = _corner(graph, node, landmarks, corner_radius_m, used)
        if corner is not None:
            used.add(corner.id)
            text += f", where {corner.name} is on the corner"
        lines.append(text + ".")
        passed = 0
    if passed:
        plural = "intersection" if passed == 1 else "intersections"
        through = f"Go straight through {passed} {plural}."
        if lines == ["Go straight."]:
            lines = [through]
        else:
            lines.append(through)
    lines.append(f"Stop in front of {goal.name} on your {goal_side}.")
    return [f"{k}. {line}" for k, line in enumerate(lines, start=1)]
