"""A T-junction whose turning passes cut both its corners: one junction, not a triangle (no OSM).

Junctions are found where passes cross or part (:mod:`city360.pose_graph.junctions`). At a
T where walkers coming down the side street turn both ways into the through street and cut
the corners (old town, Nerima: a pass turning left leaves the side street 10-12 m before the
T and joins the through street 5 m to one side, a pass turning right as far to the other),
the passes part 10-12 m up the side street and join the through street twice, once either
side of the T. The build makes a triangle of three junctions 9-14 m apart, each with one
street out of the triangle, and two of the three are false (old town coverage seed 1 at
(42, -68), (38, -80) and (47, -80) around the true T (43, -80)).

:func:`corner_cuts` finds such triangles: three junctions, each joined to the other two by a
street no longer than ``max_side_m`` and with exactly one street out of the triangle (its
outer arm); two of them (the base) whose outer arms leave opposite ways along the side
between them (the through street runs straight through both), and the third (the apex)
whose outer arm leaves away from the base and crosses it at ``min_cross_deg`` or more (the
side street). The three are replaced by one junction where the apex's arm line meets the
base's line. A triangle of three streets whose corners' outer arms radiate outwards (a
traffic island, the old town's knot) has no base pair and is left alone.

All positions are metres in the city CRS (x east, y north), directions unit vectors.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import numpy.typing as npt

from city360.geo import principal_axis
from city360.pose_graph.segments import Segment, Street
from city360.pose_graph.tracks import Track

__all__ = ["CornerCutParams", "corner_cuts"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class CornerCutParams:
    """Tuning of :func:`corner_cuts` (metres and degrees)."""

    max_side_m: float = 15.0
    """Each side of the triangle is at most this long: passes cut a corner by 5-12 m."""
    near_m: float = 3.0
    """An outer arm's poses start this far from its junction (inside it, walkers turn)."""
    far_m: float = 18.0
    """An outer arm's poses end where the arm first leaves this distance from its junction."""
    min_poses: int = 6
    """An outer arm needs this many poses between ``near_m`` and ``far_m`` for a line."""
    base_deg: float = 25.0
    """The base corners' outer arms leave within this of opposite ways, each along the side
    between them (axial): one street runs straight through both."""
    min_cross_deg: float = 35.0
    """The apex's outer arm crosses the base's line at least this steeply (axial)."""


@dataclass(frozen=True, slots=True)
class _Arm:
    """An outer arm: the mean of its poses and its unit axis, directed away from its node."""

    centre: FloatArray
    away: FloatArray


def _outer_arm(
    tracks: Sequence[Track],
    segments: Sequence[Segment],
    street: Street,
    node: int,
    node_xy: FloatArray,
    params: CornerCutParams,
) -> _Arm | None:
    """The arm of ``street`` at ``node`` from its poses ``near_m`` .. ``far_m`` out, or None
    when it has fewer than ``min_poses`` there."""
    parts = []
    for i in (*street.forward, *street.backward):
        seg = segments[i]
        frames = np.arange(seg.first_frame, seg.last_frame + 1)
        if seg.v == node and seg.u != node:
            frames = frames[::-1]
        elif seg.u != node:
            continue
        dist = np.hypot(*(tracks[seg.track].xy[frames] - node_xy).T)
        beyond = np.flatnonzero(dist > params.far_m)
        stop = int(beyond[0]) if beyond.size else len(frames)
        keep = frames[:stop][dist[:stop] >= params.near_m]
        parts.append(tracks[seg.track].xy[keep])
    points = np.concatenate(parts) if parts else np.zeros((0, 2))
    if len(points) < params.min_poses:
        return None
    return _Arm(*principal_axis(points, away_from=node_xy))


def _axial_deg(a: FloatArray, b: FloatArray) -> float:
    """Angle between the lines along unit vectors ``a`` and ``b``, 0-90 degrees."""
    return float(np.degrees(np.arccos(min(1.0, abs(float(a @ b))))))


def _meet(
    centre_a: FloatArray, axis_a: FloatArray, centre_b: FloatArray, axis_b: FloatArray
) -> FloatArray:
    """Where the line through ``centre_a`` along ``axis_a`` meets the one through ``centre_b``
    along ``axis_b`` (not parallel)."""
    lhs = np.column_stack([axis_a, -axis_b])
    t = np.linalg.solve(lhs, centre_b - centre_a)
    return np.asarray(centre_a + t[0] * axis_a, dtype=np.float64)


def _tee(
    corners: tuple[int, int, int],
    arms: dict[int, _Arm],
    junctions_xy: FloatArray,
    params: CornerCutParams,
) -> FloatArray | None:
    """The T a corner-cut triangle stands for, or None when ``corners`` are no such triangle."""
    found = []
    for p, q in combinations(corners, 2):
        (apex,) = set(corners) - {p, q}
        side = junctions_xy[q] - junctions_xy[p]
        side /= np.hypot(*side)
        base_p, base_q, top = arms[p], arms[q], arms[apex]
        opposite = float(base_p.away @ base_q.away) <= -np.cos(np.radians(params.base_deg))
        along = all(_axial_deg(arm.away, side) <= params.base_deg for arm in (base_p, base_q))
        # the base corners' arms point away from each other, not into the triangle
        outwards = float(base_p.away @ side) < 0.0 < float(base_q.away @ side)
        if opposite and along and outwards:
            found.append((p, q, apex, top))
    if len(found) != 1:
        return None
    p, q, apex, top = found[0]
    base_axis = arms[q].away - arms[p].away
    base_axis /= np.hypot(*base_axis)
    if _axial_deg(top.away, base_axis) < params.min_cross_deg:
        return None
    middle = 0.5 * (junctions_xy[p] + junctions_xy[q])
    if float(top.away @ (junctions_xy[apex] - middle)) <= 0.0:
        return None  # the apex's arm runs back across the base: no side street
    base_centre = 0.5 * (arms[p].centre + arms[q].centre)
    tee = _meet(base_centre, base_axis, top.centre, top.away)
    if max(float(np.hypot(*(tee - junctions_xy[k]))) for k in (p, q, apex)) > params.max_side_m:
        return None
    return tee


def corner_cuts(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    segments: Sequence[Segment],
    streets: Sequence[Street],
    params: CornerCutParams | None = None,
) -> FloatArray:
    """Junction positions (J', 2): every corner-cut triangle of ``junctions_xy`` (see the
    module docstring) replaced by its one T, every other junction kept. Node ids are those
    of :func:`city360.pose_graph.segments.cut_tracks` (``0 .. J-1`` are the junctions)."""
    params = params or CornerCutParams()
    junctions_xy = np.asarray(junctions_xy, dtype=np.float64).reshape(-1, 2)
    count = len(junctions_xy)
    at: dict[int, list[Street]] = defaultdict(list)
    looped: set[int] = set()
    for street in streets:
        if street.a == street.b:
            looped.add(street.a)
            continue
        for node in (street.a, street.b):
            at[node].append(street)
    corners = [n for n in range(count) if len(at[n]) == 3 and n not in looped]
    at_corner = set(corners)
    joined: dict[tuple[int, int], Street] = {}
    doubled: set[tuple[int, int]] = set()
    for n in corners:
        for street in at[n]:
            other = street.b if street.a == n else street.a
            if other >= count:  # a dead end
                continue
            side = float(np.hypot(*(junctions_xy[other] - junctions_xy[n])))
            if side <= params.max_side_m:
                pair = (min(n, other), max(n, other))
                if pair in joined and joined[pair].id != street.id:
                    doubled.add(pair)  # two streets between two corners: a loop, no side
                joined[pair] = street
    neighbours: dict[int, set[int]] = defaultdict(set)
    for a, b in joined:
        if a in at_corner and b in at_corner and (a, b) not in doubled:
            neighbours[a].add(b)
            neighbours[b].add(a)
    triangles = sorted(
        (a, b, c)
        for a in neighbours
        for b in neighbours[a]
        if b > a
        for c in neighbours[a] & neighbours[b]
        if c > b
    )
    used: set[int] = set()
    tees: list[FloatArray] = []
    for triangle in triangles:
        pairs = list(combinations(triangle, 2))
        if used & set(triangle):
            continue
        inner = {joined[pair].id for pair in pairs}
        arms: dict[int, _Arm] = {}
        for n in triangle:
            outer = [s for s in at[n] if s.id not in inner]
            arm = (
                _outer_arm(tracks, segments, outer[0], n, junctions_xy[n], params)
                if len(outer) == 1
                else None
            )
            if arm is not None:
                arms[n] = arm
        if len(arms) != 3:
            continue
        tee = _tee(triangle, arms, junctions_xy, params)
        if tee is not None:
            used.update(triangle)
            tees.append(tee)
    if not tees:
        return junctions_xy
    kept = junctions_xy[[n for n in range(count) if n not in used]]
    return np.concatenate([kept, np.asarray(tees, dtype=np.float64)]).reshape(-1, 2)
