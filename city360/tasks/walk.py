"""The task oracle: fewest controller steps over the street graph, without rendering a frame.

:func:`oracle_walk` searches the controller's own moves on a
:class:`~city360.streets.StreetGraph` — W by the SMALL/MEDIUM/LARGE step sizes, stopping at the
segment's end unless the end node is walked through, and the offered branches at a junction —
so solvability is proven without rendering a frame. The rules (which branches an action takes,
where W walks through, the end of a segment) and the segment geometry are the simulator's own:
both read :mod:`city360.streets`.

Frames of the city CRS: ``x_m`` east, ``y_m`` north, metres; headings clockwise from north.
Offsets are metres along a segment in its traversal direction, in ``[0, length_m]``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from city360.streets import OFFSET_QUANTUM_M, StreetGraph
from city360.streets.moves import END_EPS_M

__all__ = [
    "OracleResult",
    "oracle_walk",
    "route_points",
]


@dataclass(frozen=True, slots=True)
class OracleResult:
    """The oracle's verdict: ``steps`` counts moves plus the final ANSWER (None if the goal
    is not reachable), ``final`` the (segment, offset_m) where it answers, ``distance_m`` from
    there to the goal, ``actions`` the moves as ``("W", "LARGE")`` / ``("LEFT", None)``."""

    reachable: bool
    steps: int | None
    final: tuple[str, float] | None
    distance_m: float
    actions: tuple[tuple[str, str | None], ...]
    path_m: float
    segments: tuple[str, ...] = ()
    """Segments the walk passes through, in order (start segment first)."""
    states: tuple[tuple[str, float], ...] = ()
    """(segment, offset_m) after each of ``actions``, as the simulator's controller computes
    them from ``start`` (the oracle agent compares the simulator's state with these)."""


_END = -1
"""The offset key of a segment's end (offset >= length - END_EPS_M, the controller's rule)."""


def oracle_walk(
    graph: StreetGraph,
    start: tuple[str, float],
    goal_xy: tuple[float, float],
    threshold_m: float,
    *,
    step_limit: int,
    move_m: Sequence[float] = (2.0, 5.0, 10.0),
    max_states: int = 2_000_000,
) -> OracleResult:
    """Fewest controller steps from ``start`` to a pose within ``threshold_m`` of ``goal_xy``;
    among walks of that many steps, the shortest in metres.

    Breadth-first over (segment, offset) states with the controller's rules: W moves
    ``move_m[k]`` metres forward and stops at the segment's end, except where the end node is
    walked through (:meth:`StreetGraph.forward`); at the end every offered transition
    (LEFT/UP/RIGHT) enters its segment at offset 0. The final ANSWER is one more step, so a
    goal counts as reachable when ``moves + 1 <= step_limit``. Each state keeps the parent that
    reaches it in the fewest steps and, among those, the fewest metres (steps of 2 / 5 / 10 m
    give many walks of equal step count; SPL compares an agent with the shortest of them).
    """
    names = ("SMALL", "MEDIUM", "LARGE")
    gx, gy = goal_xy
    q = OFFSET_QUANTUM_M
    segments_of = graph.segments

    def key_of(seg_id: str, offset: float) -> tuple[str, int]:
        # A segment's end is a state of its own, decided by the controller's rule
        # (END_EPS_M): on the centimetre grid a spot a millimetre before the end would share
        # the end's key, and the plan would offer branches the controller does not.
        if offset >= segments_of[seg_id].length_m - END_EPS_M:
            return seg_id, _END
        return seg_id, round(offset / q)

    first = key_of(start[0], start[1])
    # offset_at keeps the exact metres of the walk that reached a key (the controller's own
    # float arithmetic from the true start), so the plan's states are the simulator's states
    offset_at: dict[tuple[str, int], float] = {first: float(start[1])}
    parent: dict[tuple[str, int], tuple[tuple[str, int], tuple[str, str | None], float] | None]
    parent = {first: None}
    walked_to: dict[tuple[str, int], float] = {first: 0.0}  # metres of the best walk there
    frontier = [first]
    depth = 0
    best_dist = math.inf
    found: tuple[str, int] | None = None
    longest_move = max(move_m)
    while frontier and depth + 1 <= step_limit:
        # States that cannot close the gap in the moves left (even walking straight at the
        # goal with LARGE steps) are dropped: this keeps unreachable searches short.
        moves_left = step_limit - 1 - depth
        alive: list[tuple[str, int]] = []
        for state in frontier:
            # the exact offset, not the centimetre key: success is scored on the true pose
            x, y = segments_of[state[0]].position(offset_at[state])
            dist = math.hypot(x - gx, y - gy)
            best_dist = min(best_dist, dist)
            if dist <= threshold_m:
                if found is None or walked_to[state] < walked_to[found]:
                    found = state
                continue
            if dist - threshold_m <= moves_left * longest_move:
                alive.append(state)
        if found is not None or len(parent) > max_states:
            break
        next_frontier: list[tuple[str, int]] = []
        this_layer: set[tuple[str, int]] = set()
        for state in alive:
            seg = segments_of[state[0]]
            offset = offset_at[state]
            moves: list[tuple[str, float, tuple[str, str | None], float]] = []
            at_end = state[1] == _END
            if not at_end or graph.onward(seg.id) is not None:
                for name, step in zip(names, move_m, strict=True):
                    to_seg, to_offset, walked = graph.forward(seg.id, offset, step)
                    moves.append((to_seg, to_offset, ("W", name), walked))
            if at_end:
                for tr in seg.choices:
                    if tr.edge in segments_of:
                        moves.append((tr.edge, 0.0, (tr.label, None), 0.0))
            for to_seg, to_offset, action, walked in moves:
                new_state = key_of(to_seg, to_offset)
                total = walked_to[state] + walked
                if new_state not in parent:
                    parent[new_state] = (state, action, walked)
                    walked_to[new_state] = total
                    offset_at[new_state] = to_offset
                    next_frontier.append(new_state)
                    this_layer.add(new_state)
                elif new_state in this_layer and total < walked_to[new_state] - 1e-9:
                    parent[new_state] = (state, action, walked)  # as few steps, fewer metres
                    walked_to[new_state] = total
                    offset_at[new_state] = to_offset
        frontier = next_frontier
        depth += 1
    if found is None:
        return OracleResult(False, None, None, best_dist, (), 0.0)
    chain: list[tuple[tuple[str, int], tuple[str, str | None], float]] = []
    cursor = found
    while (link := parent[cursor]) is not None:
        chain.append((cursor, link[1], link[2]))
        cursor = link[0]
    chain.reverse()
    actions = tuple(action for _, action, _ in chain)
    walked_m = sum(walked for _, _, walked in chain)
    # replay the moves to list every segment passed, including ones W walks through whole;
    # each move is replayed from the state the plan keeps (a same-layer parent swap may have
    # replaced a state's offset by another within the same centimetre)
    segments = [first[0]]
    seg_id, offset = first[0], offset_at[first]
    for key, action, _ in chain:
        if action[0] == "W":
            step = move_m[names.index(str(action[1]))]
            graph.forward(seg_id, offset, step, visited=segments)
        else:
            segments.append(key[0])
        seg_id, offset = key[0], offset_at[key]
    final = (found[0], offset_at[found])
    x, y = segments_of[final[0]].position(final[1])
    return OracleResult(
        True,
        len(actions) + 1,
        final,
        math.hypot(x - gx, y - gy),
        actions,
        walked_m,
        tuple(segments),
        tuple((key[0], offset_at[key]) for key, _, _ in chain),
    )


def route_points(graph: StreetGraph, route: Iterable[str]) -> list[tuple[float, float]]:
    """Polyline points of consecutive segments (for maps and directions)."""
    points: list[tuple[float, float]] = []
    for seg_id in route:
        points.extend((float(x), float(y)) for x, y in graph.segment(seg_id).xy)
    return points
