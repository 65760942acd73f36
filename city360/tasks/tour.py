"""The oracle over several goals in order (Errand): one :func:`~city360.tasks.walk.oracle_walk`
per leg, each from where the last one answered, or from the same place turned round onto the
street's twin (two ``D LARGE``; facing backwards, W walks the twin), whichever takes fewer
steps, as :class:`~city360.agents.oracle.OracleAgent` plans between waypoints.

Legs are planned one after the other (greedy), not jointly: the tour is the oracle agent's,
so an agent that walks it scores SPL 1. Frames as in :mod:`city360.tasks.walk` (metres, city
CRS; offsets along a segment in its traversal direction).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from city360.streets import StreetGraph
from city360.tasks.walk import OracleResult, oracle_walk

__all__ = ["TURN_ROUND_STEPS", "TourResult", "oracle_tour"]

TURN_ROUND_STEPS = 2
"""Steps to face the other way (two D LARGE of 90 degrees)."""


@dataclass(frozen=True, slots=True)
class TourResult:
    """The oracle's walk over every goal in order. ``legs`` are ``(start, walk)`` pairs (the
    start of each leg after any turn round); ``steps`` counts every move, the turns and the one
    final ANSWER (None when a goal is out of reach within the step limit); ``reached`` how many
    goals, in order, the walk reaches."""

    legs: tuple[tuple[tuple[str, float], OracleResult], ...]
    steps: int | None
    reached: int
    goals: int
    turns: int = 0
    """Legs that begin by turning round onto the twin."""

    @property
    def reachable(self) -> bool:
        return self.reached == self.goals and self.steps is not None

    @property
    def path_m(self) -> float:
        return sum(walk.path_m for _, walk in self.legs)

    @property
    def final(self) -> tuple[str, float] | None:
        return self.legs[-1][1].final if self.reachable and self.legs else None

    @property
    def segments(self) -> tuple[str, ...]:
        """Segments passed, in order (a segment shared by two legs once)."""
        out: list[str] = []
        for _, walk in self.legs:
            for segment in walk.segments:
                if not out or out[-1] != segment:
                    out.append(segment)
        return tuple(out)

    @property
    def actions(self) -> tuple[tuple[str, str | None], ...]:
        return tuple(action for _, walk in self.legs for action in walk.actions)

    def as_walk(self) -> OracleResult:
        """The tour as one :class:`OracleResult` (for route statistics)."""
        final = self.final
        return OracleResult(
            self.reachable,
            self.steps,
            final,
            self.legs[-1][1].distance_m if self.legs else math.inf,
            self.actions,
            self.path_m,
            self.segments,
        )


def _twin_of(graph: StreetGraph, state: tuple[str, float]) -> tuple[str, float] | None:
    return graph.turned_round(*state)  # the controller's own mapping onto the twin


def oracle_tour(
    graph: StreetGraph,
    start: tuple[str, float],
    goals: Sequence[tuple[float, float]],
    threshold_m: float,
    *,
    step_limit: int,
    move_m: Sequence[float] = (2.0, 5.0, 10.0),
    margin: float | None = None,
) -> TourResult:
    """Fewest-step legs from ``start`` through each goal of ``goals`` (metres) in order, each
    reached within ``threshold_m`` (first aiming for ``margin`` times it, when given, as the
    oracle agent does). The whole tour, with one final ANSWER, must fit ``step_limit``."""
    legs: list[tuple[tuple[str, float], OracleResult]] = []
    used = 0
    turns = 0
    state = start
    radii = [threshold_m] if margin is None else [threshold_m * margin, threshold_m]
    for goal_xy in goals:
        budget = step_limit - used
        options: list[tuple[int, tuple[str, float], OracleResult]] = []
        for begin, extra in ((state, 0), (_twin_of(graph, state), TURN_ROUND_STEPS)):
            if begin is None or budget - extra < 1:
                continue
            for radius in radii:
                walk = oracle_walk(
                    graph, begin, goal_xy, radius, step_limit=budget - extra, move_m=move_m
                )
                if walk.reachable:
                    options.append((extra + int(walk.steps or 0) - 1, begin, walk))
                    break
        if not options:
            return TourResult(tuple(legs), None, len(legs), len(goals), turns)
        moves, begin, walk = min(options, key=lambda option: option[0])
        turns += begin != state
        legs.append((begin, walk))
        used += moves
        state = walk.final or begin
    return TourResult(tuple(legs), used + 1, len(legs), len(goals), turns)
