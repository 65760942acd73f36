"""Two true streets out of one bend that run side by side closer than a camera can part them:
the scorer's reading of them as one street up to where they part (``city360 score``; the
reading is applied only where the build made it, see :mod:`city360.pose_graph.score`).

OSM draws some places as two lines 1-3 m apart: a carriageway pair joined at the end where the
window cut the street on (Kamppi's Asema-aukio / Kaivokatu, 16 m), the last metres of a hairpin
V (Kamppi (73, 142), 5 m). No GPS parts them (its own error is about 2 m), so a build that
walks up one line and back down the other makes one street to a dead end and a junction where
the lines part. Here that place is found in the truth: a bend (a node with two streets) whose
two streets stay within :data:`SIDE_BY_SIDE_M` of each other for at least
:data:`SIDE_BY_SIDE_MIN_M` from it. All positions are metres in the city CRS.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "SIDE_BY_SIDE_M",
    "SIDE_BY_SIDE_MIN_M",
    "STUBS_CONTRACTED",
    "Parting",
    "partings",
    "split_at_parting",
]

SIDE_BY_SIDE_M = 4.0
"""Two lines closer than this, metres, are one line to the scorer: twice the GPS's own error
(about 2 m), so two walks of them overlap. Streets 6-8 m apart stay two."""
SIDE_BY_SIDE_MIN_M = 6.0
"""The lines must stay that close for at least this far from the bend, metres: straight arms
do so only when they meet at under 39 degrees (a plain 90-degree bend's arms part 2.8 m out).
On the 50 kept twins' truths every other bend parts within 5 m."""
STUBS_CONTRACTED = True
"""Whether a junction whose third street is only a stub the scorer contracts (shorter than
its ``stub_m``, to a dead end) is read as the bend its two other streets make
(:func:`partings`): Helsinki's Arkadiankatu (-482.0, -53.5), two ways 1.4 m apart for 8 m from
a junction whose third street is a 7 m stub to the window's edge. The scorer contracts the
stub, so the junction is a bend to it, but without this the parting was looked for only at
nodes the map draws with two streets. False: only those (before round thirty-two)."""
_STEP_M = 0.25

Street = tuple[int, int, np.ndarray]
"""A true street: (u, v, polyline (N, 2), metres)."""


@dataclass(frozen=True, slots=True)
class Parting:
    """Where the two streets out of the bend ``node`` part: ``arc_m`` along each from the
    bend (metres), at ``point`` (metres, the midpoint of the two lines' points there);
    ``gap_m`` the widest gap between them before it (metres)."""

    node: int
    point: tuple[float, float]
    arc_m: float
    gap_m: float


def _arc(line: np.ndarray) -> np.ndarray:
    return np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(line, axis=0).T))])


def _sample(line: np.ndarray, step_m: float) -> tuple[np.ndarray, np.ndarray]:
    """Points every ``step_m`` along ``line`` from its start, and their arcs, metres."""
    arc = _arc(line)
    marks = np.arange(0.0, arc[-1] + 1e-9, step_m)
    return marks, np.column_stack(
        [np.interp(marks, arc, line[:, 0]), np.interp(marks, arc, line[:, 1])]
    )


def _run(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """How far from their shared start the lines ``a`` and ``b`` stay within
    :data:`SIDE_BY_SIDE_M` of each other (metres; each point's gap is to the other line's
    part no farther along than its own arc plus twice the limit, so a line coming back later
    does not count), and the widest gap up to there."""
    arc_a, pa = _sample(a, _STEP_M)
    arc_b, pb = _sample(b, _STEP_M)
    gaps = np.hypot(pa[:, None, 0] - pb[None, :, 0], pa[:, None, 1] - pb[None, :, 1])
    reach = 2.0 * SIDE_BY_SIDE_M
    from_a = np.where(arc_b[None, :] <= arc_a[:, None] + reach, gaps, np.inf).min(axis=1)
    from_b = np.where(arc_a[:, None] <= arc_b[None, :] + reach, gaps, np.inf).min(axis=0)
    n = min(len(arc_a), len(arc_b))
    gap = np.maximum(from_a[:n], from_b[:n])
    apart = np.flatnonzero(gap > SIDE_BY_SIDE_M)
    last = int(apart[0]) - 1 if len(apart) else n - 1
    return float(arc_a[max(last, 0)]), float(gap[: last + 1].max(initial=0.0))


def _from(street: Street, node: int) -> np.ndarray:
    u, _, line = street
    return line if u == node else line[::-1]


def _ends_at(streets: Sequence[Street], stub_m: float | None) -> dict[int, list[int]]:
    """Per node, the indices of the streets that end there, without a stub the reading
    contracts into it: with ``stub_m`` (metres), a street shorter than that from the node to
    a dead end (a node no other street ends at) when :data:`STUBS_CONTRACTED`."""
    at: dict[int, list[int]] = {}
    for i, (u, v, _) in enumerate(streets):
        at.setdefault(u, []).append(i)
        at.setdefault(v, []).append(i)
    if stub_m is None or not STUBS_CONTRACTED:
        return at
    for i, (u, v, line) in enumerate(streets):
        if u == v or float(_arc(line)[-1]) >= stub_m:
            continue
        for end, other in ((u, v), (v, u)):
            if len(at[end]) == 1 and len(at[other]) > 2:
                at[other] = [j for j in at[other] if j != i]
    return at


def partings(streets: Sequence[Street], stub_m: float | None = None) -> list[Parting]:
    """Every bend of ``streets`` (a node two streets end at, not the same street twice; with
    ``stub_m``, metres, a junction that a stub shorter than that to a dead end is all that
    makes one, see :func:`_ends_at`) whose two streets run within :data:`SIDE_BY_SIDE_M` for
    at least :data:`SIDE_BY_SIDE_MIN_M` and then part (both go on beyond the parting by more
    than one step)."""
    found = []
    for node, ids in _ends_at(streets, stub_m).items():
        if len(ids) != 2 or ids[0] == ids[1]:
            continue
        a, b = (_from(streets[i], node) for i in ids)
        arc, gap = _run(a, b)
        if arc < SIDE_BY_SIDE_MIN_M or arc >= min(_arc(a)[-1], _arc(b)[-1]) - _STEP_M:
            continue
        ends = [_at_arc(line, arc) for line in (a, b)]
        point = (float((ends[0][0] + ends[1][0]) / 2), float((ends[0][1] + ends[1][1]) / 2))
        found.append(Parting(node, point, arc, gap))
    return found


def _at_arc(line: np.ndarray, arc_m: float) -> np.ndarray:
    arc = _arc(line)
    return np.array([np.interp(arc_m, arc, line[:, 0]), np.interp(arc_m, arc, line[:, 1])])


def split_at_parting(
    streets: list[Street], parting: Parting, new_node: int, stub_m: float | None = None
) -> list[Street]:
    """``streets`` read with ``parting``: its bend's two streets become one street from the
    bend to ``new_node`` at the parting point (along the first of them, moved to end there)
    and each of their rests from ``new_node`` on (a stub shorter than ``stub_m`` to a dead end
    stays at the bend, see :func:`partings`). Unchanged when the bend no longer has exactly
    two streets."""
    ids = _ends_at(streets, stub_m).get(parting.node, [])
    if len(ids) != 2 or any(streets[i][0] == streets[i][1] for i in ids):
        return streets
    point = np.asarray(parting.point, dtype=np.float64)
    pieces = []
    for i in ids:
        u, v, _ = streets[i]
        line = _from(streets[i], parting.node)
        arc = _arc(line)
        inner = line[(arc > parting.arc_m) & (arc < arc[-1])]
        far = v if u == parting.node else u
        pieces.append((new_node, far, np.vstack([point, inner, line[-1:]])))
    first = _from(streets[ids[0]], parting.node)
    shared = (parting.node, new_node, np.vstack([first[_arc(first) < parting.arc_m], point]))
    return [*(s for i, s in enumerate(streets) if i not in ids), shared, *pieces]
