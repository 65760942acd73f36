"""Two streets that leave a node together and part far from it: the junction where they part
(no OSM).

Where the votes miss a junction ``J`` (a knot of close junctions whose pile was parted into
fewer parts than it has junctions, :mod:`city360.pose_graph.vote_passes`), the passes
through ``J`` run on to the next junctions. Seen from a node ``N`` up the street into ``J``
(a walker's U-turn, a video's end or another junction), the passes that turn at ``J`` and
those that go straight on are then two streets out of ``N``, to two different nodes, that
run side by side on one line from ``N`` to ``J`` and part there. ``N`` becomes a junction it
is not (its third street is the shared way), and ``J`` is missed. Tokyo old town wander
seed 5 without OSM: a walker turns back at (7.4, 71.1), 28 m east of the true T at
(-19.5, 86.5), whose passes run on to the knot's two parts 11 and 15 m beyond it.

:func:`parted_trunks` finds such pairs in a cut of the tracks: two streets at one node, to
two other nodes, whose passes keep within ``together_m`` of each other for at least
``min_trunk_m`` from the node and then part at ``parting_deg`` or more, the parting point
``clear_m`` or more from every node of the cut; by default only at a dead end of the cut
(``dead_ends_only``: a walker's turn, stop or a video's end), never at a junction
:mod:`~city360.pose_graph.fused_forks` put at a fork. It returns the parting points; the
build adds them as junctions and cuts again. A shallow fork's branches (10-40 degrees, 1-6 m apart
for their first 10-25 m: :mod:`city360.pose_graph.fused_forks`) part too slowly to be taken.

All positions are metres in the city CRS (x east, y north), headings degrees clockwise from
north.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from city360.geo import angle_diff_deg, bearing_deg
from city360.pose_graph.segments import Segment, Street
from city360.pose_graph.tracks import Track

__all__ = ["PartedTrunkParams", "parted_trunks"]

FloatArray = npt.NDArray[np.float64]

_STEP_M = 1.0
"""Sampling step along a pass, metres."""


@dataclass(frozen=True, slots=True)
class PartedTrunkParams:
    """Tuning of :func:`parted_trunks` (metres and degrees)."""

    together_m: float = 3.5
    """Two streets' passes run on one line while each pose of one is this close to a pass of
    the other (a phone's passes of one street lie 1-3 m apart)."""
    leave_m: float = 1.0
    """Where a pass starts to leave the other street's passes, the last of the shared way
    (the passes of one street lie within 0.5 m of each other after
    :mod:`city360.pose_graph.clarify`): the fork is put there, not where they are
    ``together_m`` apart, 3-7 m past it."""
    min_trunk_m: float = 10.0
    """They leave the node together for at least this far (median over their passes); nearer
    partings are the node's own arms."""
    apart_m: float = 5.0
    """A pass has parted where it stays farther than ``together_m`` from the other street for
    this many metres on (a single wide pose is noise)."""
    parting_deg: float = 45.0
    """The two streets' chords from the parting point ``branch_m`` on differ by at least this:
    a turn off a way, not a shallow fork drifting apart."""
    branch_m: float = 10.0
    """See :attr:`parting_deg`."""
    clear_m: float = 8.0
    """The parting point lies at least this far from every node of the cut (a junction there
    already, or one the cut merges it into)."""
    dead_ends_only: bool = True
    """Only at a node the build made for a walker's turn, stop or a video's end (a dead end
    of the cut), which is no junction of its own. At a junction, two streets leaving it
    together are a shallow fork whose branches bend apart further on (Helsinki (-229,
    -130), (340, 278): :mod:`city360.pose_graph.fused_forks` put the junction at the
    fork): 5 Helsinki rows worse without OSM when every node was taken."""


def parted_trunks(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    dead_ends_xy: FloatArray,
    segments: Sequence[Segment],
    streets: Sequence[Street],
    params: PartedTrunkParams | None = None,
    *,
    forks_xy: FloatArray | None = None,
) -> FloatArray:
    """(K, 2) the points where two streets that leave one node together part, each
    ``params.clear_m`` from every node and from the others (see the module docstring).

    ``segments`` and ``streets`` are the build's cut of ``tracks`` at ``junctions_xy`` and
    ``dead_ends_xy`` (node indices below ``len(junctions_xy)`` are junctions, the rest dead
    ends, in order).
    """
    params = params or PartedTrunkParams()
    nodes_xy = np.concatenate(
        [np.asarray(junctions_xy).reshape(-1, 2), np.asarray(dead_ends_xy).reshape(-1, 2)]
    )
    at_node: dict[int, list[Street]] = defaultdict(list)
    for street in streets:
        if street.a != street.b:
            at_node[street.a].append(street)
            at_node[street.b].append(street)
    found: list[FloatArray] = []
    n_junctions = len(np.asarray(junctions_xy).reshape(-1, 2))
    forks = np.zeros((0, 2)) if forks_xy is None else np.asarray(forks_xy).reshape(-1, 2)
    for node in sorted(at_node):
        if len(at_node[node]) < 3:
            continue
        if node < n_junctions and (
            params.dead_ends_only or (forks == nodes_xy[node]).all(axis=1).any()
        ):
            continue
        passes = {
            street.id: _passes_from(node, street, tracks, segments) for street in at_node[node]
        }
        for one, other in itertools.combinations(at_node[node], 2):
            if _far_end(one, node) == _far_end(other, node):
                continue
            point = _parting(passes[one.id], passes[other.id], params)
            if point is None:
                continue
            taken = np.concatenate([nodes_xy, np.asarray(found).reshape(-1, 2)])
            if float(np.hypot(*(taken - point).T).min()) >= params.clear_m:
                found.append(point)
    return np.asarray(found, dtype=np.float64).reshape(-1, 2)


def _far_end(street: Street, node: int) -> int:
    return street.b if street.a == node else street.a


def _passes_from(
    node: int, street: Street, tracks: Sequence[Track], segments: Sequence[Segment]
) -> list[FloatArray]:
    """Each pass of ``street`` as points ``_STEP_M`` apart, from ``node`` outward."""
    out = []
    for index in (*street.forward, *street.backward):
        segment = segments[index]
        track = tracks[segment.track]
        if segment.last_frame <= segment.first_frame:
            continue
        marks = np.arange(
            track.arc_m[segment.first_frame], track.arc_m[segment.last_frame], _STEP_M
        )
        out.append(track.point_at(marks if segment.u == node else marks[::-1]))
    return out


def _parting(
    one: list[FloatArray], other: list[FloatArray], params: PartedTrunkParams
) -> FloatArray | None:
    """Where the passes ``one`` and ``other`` (from one node outward) part (the median of
    each pass's parting point), if that is at least ``min_trunk_m`` in a straight line from
    where they start and they part at ``parting_deg`` or more."""
    if not one or not other:
        return None
    partings = [
        *(_parted_at(line, other, params) for line in one),
        *(_parted_at(line, one, params) for line in other),
    ]
    points = np.array([p for p in partings if p is not None]).reshape(-1, 2)
    if len(points) * 2 <= len(partings):
        return None  # most passes never part from the other street: no parting seen
    point = np.median(points, axis=0)
    if float(np.hypot(*(point - np.median([line[0] for line in (*one, *other)], axis=0)))) < (
        params.min_trunk_m
    ):
        return None
    headings = [_branch_heading(passes, point, params.branch_m) for passes in (one, other)]
    if headings[0] is None or headings[1] is None:
        return None
    if abs(angle_diff_deg(headings[0], headings[1])) < params.parting_deg:
        return None
    return np.asarray(point, dtype=np.float64)


def _parted_at(
    line: FloatArray, others: list[FloatArray], params: PartedTrunkParams
) -> FloatArray | None:
    """The point of ``line`` (points ``_STEP_M`` of travel apart) where it starts to leave
    the passes ``others`` (``leave_m``) for good (farther than ``together_m`` for
    ``apart_m`` on), None if it never does."""
    near = cKDTree(np.concatenate(others)).query(line)[0]
    far = near > params.together_m
    run = max(1, round(params.apart_m / _STEP_M))
    for k in range(len(far) - run + 1):
        if far[k : k + run].all():
            while k > 0 and near[k - 1] > params.leave_m:
                k -= 1  # back to where it starts to leave: the fork, not a few metres past it
            return np.asarray(line[k], dtype=np.float64)
    return None


def _branch_heading(passes: list[FloatArray], point: FloatArray, reach_m: float) -> float | None:
    """Median heading of the chords from each pass's nearest point to ``point`` to
    ``reach_m`` further on (or its end, if that is at least half as far); None when no pass
    runs that far past it."""
    headings = []
    for line in passes:
        k = int(np.argmin(np.hypot(*(line - point).T)))
        far = min(k + round(reach_m / _STEP_M), len(line) - 1)
        if (far - k) * _STEP_M >= reach_m / 2:
            headings.append(bearing_deg(*(line[far] - line[k])))
    if not headings:
        return None
    turned = [angle_diff_deg(h, headings[0]) for h in headings]
    return float((headings[0] + np.median(turned)) % 360.0)
