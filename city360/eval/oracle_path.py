"""The oracle's walk from a task's start to its goal (the report draws it; it says whether a
task is solvable), and the reference length SPL compares an agent's path with.

SPL = success × L / max(P, L), P the metres the agent walked and L
:func:`spl_reference_m`: for a family that instructs its route
(``FamilySpec.instructed_route``: VLN's ``truth.route``, the directions it is told) the length
of that route from the start to the goal's nearest point on
its last segment, or the oracle's walk where that walk follows the told route and is longer
(the controller's steps can end a few centimetres past the goal's street point and still be
the fewest steps to the goal); for every other task the oracle's walk: the fewest controller
steps to the goal (aiming for half its radius, as the oracle agent does; turning round first
when that takes fewer steps), in metres (:func:`oracle_path`;
where the oracle cannot reach the goal, the shortest walk in metres, :func:`shortest_walk_m`).
The controller walks in steps of 2 / 5 / 10 m, so a walk that is shortest in steps can be a
little longer in metres than the shortest one; measuring against the controller's best walk
keeps an agent that walks it at SPL 1. An agent that walks no more than that scores 1.0; the
oracle does on every task it solves (an instructed route is never shorter than the shortest
walk, and where the oracle walks the told route L is at least its walk).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

from city360.streets import StreetGraph

__all__ = ["OraclePath", "oracle_path", "route_length_m", "shortest_walk_m", "spl_reference_m"]


TURN_ROUND_SLACK_M = 0.5
"""Metres a tour's SPL yardstick allows per leg that turns round: the leg starts where the
graph projects the pose onto the twin, the simulator's own mapping differs by centimetres
(5-10 cm seen), and the oracle agent walking the tour must score 1. 0.5 m is the oracle
agent's own tolerance before it re-plans."""

ORACLE_GOAL_MARGIN = 0.5
"""The share of the success radius the oracle aims for first (``OracleAgent.goal_margin``)."""


class OraclePath(NamedTuple):
    """The oracle's walk on a task (:func:`oracle_path`)."""

    xy: list[list[float]]
    """Positions (metres, city CRS) along the walk; empty when the goal is out of reach."""
    length_m: float | None
    """Metres walked, plus :data:`TURN_ROUND_SLACK_M` per leg that turns round; None when
    the goal is out of reach or the task has none."""
    segments: tuple[str, ...] = ()
    """Segments the walk passes, in order (the start's first)."""


def oracle_path(
    graph: StreetGraph, task: Any, *, move_m: Sequence[float], margin: float = ORACLE_GOAL_MARGIN
) -> OraclePath:
    """The positions (metres, city CRS) of the oracle's walk on ``task``, its length in
    metres and the segments it passes: the fewest controller steps to ``margin`` times the
    goal's radius, else to the radius, going on from the start or first turning round onto the
    street's twin, whichever takes fewer steps (as the oracle agent plans); for ordered
    ``truth.waypoints`` (Errand) through each in turn. An empty :class:`OraclePath` when the
    task has no goal or the oracle cannot reach it within the task's step limit with the step
    sizes ``move_m`` (SMALL, MEDIUM, LARGE)."""
    from city360.tasks.tour import oracle_tour

    goal = getattr(task.truth, "goal", None)
    if goal is None:
        return OraclePath([], None)
    stops = [s.goal for s in getattr(task.truth, "waypoints", None) or ()] or [goal]
    tour = oracle_tour(
        graph,
        (task.start.segment, task.start.offset_m),
        [(stop.x_m, stop.y_m) for stop in stops],
        float(stops[-1].threshold_m),
        step_limit=task.step_limit,
        move_m=tuple(move_m),
        margin=margin,
    )
    if not tour.reachable:
        return OraclePath([], None)
    polyline: list[list[float]] = []
    for begin, walk in tour.legs:
        if walk.final is not None:
            polyline.extend(_walked_polyline(graph, walk.segments, begin[1], walk.final))
    return OraclePath(polyline, tour.path_m + TURN_ROUND_SLACK_M * tour.turns, tour.segments)


def _walked_polyline(
    graph: StreetGraph, segments: Sequence[str], start_offset_m: float, final: tuple[str, float]
) -> list[list[float]]:
    """The positions (metres) of a walk over ``segments``: from ``start_offset_m`` on the
    first to the final offset on the last, following each segment's polyline."""
    points: list[list[float]] = []
    for k, segment_id in enumerate(segments):
        seg = graph.segment(segment_id)
        lo = start_offset_m if k == 0 else 0.0
        hi = final[1] if k == len(segments) - 1 else seg.length_m
        inner = [(x, y) for (x, y), arc in zip(seg.xy, seg.cum_m, strict=True) if lo < arc < hi]
        points.extend([list(seg.position(lo)), *map(list, inner), list(seg.position(hi))])
    return [[round(float(x), 3), round(float(y), 3)] for x, y in points]


def route_length_m(
    graph: StreetGraph,
    route: Sequence[str],
    start_offset_m: float,
    goal_xy: tuple[float, float],
    *,
    end_offset_m: float | None = None,
) -> float | None:
    """Metres along ``route`` (segment ids in order) from ``start_offset_m`` on its first
    segment to ``end_offset_m`` on its last (default: the point nearest to ``goal_xy``);
    None when a one-segment route would have to walk backwards."""
    end = graph.segment(route[-1]).project(*goal_xy)[0] if end_offset_m is None else end_offset_m
    if len(route) == 1:
        return end - start_offset_m if end >= start_offset_m - 1e-6 else None
    first = graph.segment(route[0])
    middle = sum(graph.segment(segment_id).length_m for segment_id in route[1:-1])
    return max(first.length_m - start_offset_m, 0.0) + middle + end


def _both_ways(graph: StreetGraph, segment_id: str, offset_m: float) -> list[tuple[str, float]]:
    """A position and the same place on the twin segment (the street walked the other way)."""
    places = [(segment_id, offset_m)]
    twin = graph.segment(segment_id).twin
    if twin is not None and twin in graph.segments:
        x, y = graph.position(segment_id, offset_m)
        places.append((twin, graph.segment(twin).project(x, y)[0]))
    return places


def shortest_walk_m(
    graph: StreetGraph, start: tuple[str, float], goal_xy: tuple[float, float]
) -> float:
    """Metres of the shortest walk over the offered transitions from ``start`` (or the same
    place facing the other way) to the goal's nearest street point (either direction)."""
    from city360.errors import TaskError

    goal_segment, goal_offset, _ = graph.locate(*goal_xy)
    best = math.inf
    for begin in _both_ways(graph, *start):
        for end in _both_ways(graph, goal_segment, goal_offset):
            try:
                route = graph.shortest_route(begin[0], end[0])
            except TaskError:
                continue
            length = route_length_m(graph, route, begin[1], goal_xy, end_offset_m=end[1])
            if length is None and begin[0] == end[0]:  # behind: once round the network
                continue
            if length is not None:
                best = min(best, length)
    return best


def spl_reference_m(
    graph: StreetGraph,
    task: Any,
    *,
    oracle_m: float | None = None,
    oracle_segments: Sequence[str] = (),
) -> float | None:
    """L of SPL in metres (see the module docstring); None for a task without a goal.
    ``oracle_m`` is the oracle's walk (:func:`oracle_path`), the yardstick of tasks without an
    instructed route; None falls back to the shortest walk in metres. ``oracle_segments`` are
    the segments that walk passes: where they are the instructed route, L is at least
    ``oracle_m``."""
    goal = getattr(task.truth, "goal", None)
    if goal is None:
        return None
    from city360.tasks.families import get_family

    instructed = get_family(str(task.family)).instructed_route
    route = list(getattr(task.truth, "route", None) or []) if instructed else []
    start = (task.start.segment, task.start.offset_m)
    if route and route[0] == start[0]:
        length = route_length_m(graph, route, start[1], (goal.x_m, goal.y_m))
        if length is not None:
            on_route = oracle_m is not None and tuple(oracle_segments) == tuple(route)
            return max(length, oracle_m) if on_route and oracle_m is not None else length
    if oracle_m is not None:
        return oracle_m
    walk = shortest_walk_m(graph, start, (goal.x_m, goal.y_m))
    return walk if math.isfinite(walk) else None
