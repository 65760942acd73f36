"""A shallow fork's branch cut at a junction a few metres on: leave its passes uncut there (no OSM).

Where a street forks at a shallow angle 10-25 m before a true T on the fork's straight branch
(Helsinki (423, -416) and the T (437, -415)), the diverging branch runs 5-8 m beside the T:
its passes come within the cut radius
(:attr:`~city360.pose_graph.segments.SegmentParams.cut_radius_m`) and are cut there. The T
then has four streets (the fork's branch being one) and the node at the fork (a video's end,
a walk's stop, an end-tee) only two, so the fork is no junction, and
:mod:`city360.pose_graph.fused_forks` cannot move the T (it has more than three streets and
is a real junction).

:func:`stolen_branches` finds those places in a cut of the tracks: a node ``L`` with two
streets, one of them a short street (the stem, at most ``max_stem_m``) to a junction ``J``
with four or more streets; a street ``B`` of ``J`` all of whose passes come from or go to the
stem, leaving ``J`` within ``max_branch_deg`` of the stem's direction ``L`` -> ``J``; another
street of ``J`` leaving on the other side of the stem's direction within ``max_branch_deg``
(the fork's other branch), one of the two within ``straight_deg`` (a Y seen from its stem, as
in :mod:`~city360.pose_graph.fused_forks`); ``B`` 's passes parting from the stem's line at
``L`` by at least ``min_part_deg`` (they pass ``J`` beside it, not through it); and some pass
of the stem that does not go into ``B`` (so ``J`` keeps the stem). Those passes of ``B`` are
then left uncut at ``J`` (:class:`UncutPasses`, a cut filter for
:func:`~city360.pose_graph.segments.cut_tracks`): the branch starts at ``L``, which gets
three streets, and ``J`` keeps three or more. ``BuildParams.stolen_branch_params = None``
turns the rule off.

All positions are metres in the city CRS (x east, y north), headings degrees clockwise from
north.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from city360.geo import angle_diff_deg, bearing_deg
from city360.pose_graph.fused_forks import CutNodes, cut_nodes, leaving_heading, short_stems
from city360.pose_graph.segments import CutFilter, Segment, Street
from city360.pose_graph.tracks import Track

__all__ = ["StolenBranchParams", "UncutPass", "UncutPasses", "stolen_branches"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class StolenBranchParams:
    """Tuning of :func:`stolen_branches` (metres and degrees)."""

    max_stem_m: float = 28.0
    """The node at the fork ``L`` is at most this far from the junction ``J`` (Helsinki
    (423, -416) to the built T: 9-14 m)."""
    max_branch_deg: float = 55.0
    """The branch and the fork's other branch leave ``J`` within this of the stem's direction
    (a Y; a T's or a crossing's arms leave at 70-110 degrees)."""
    straight_deg: float = 28.0
    """One of the two leaves ``J`` within this of the stem's direction (see
    :attr:`~city360.pose_graph.fused_forks.FusedForkParams.straight_deg`)."""
    min_part_deg: float = 15.0
    """The branch's passes part from the stem's line at ``L`` by at least this: they pass
    ``J`` at least ``|LJ| sin(min_part_deg)`` beside it (Helsinki (423, -416): 17-22 degrees).
    A street that runs on through ``J`` (0-5 degrees), or past a T a few metres off its line
    far down from a stop (11-13 degrees), is left cut."""
    branch_far_m: float = 12.0
    """A street's direction is the chord from ``J`` to this far along each pass on it."""
    same_node_m: float = 0.01
    """An :class:`UncutPass` names its junction by position: the junction within this of it."""


@dataclass(frozen=True, slots=True)
class UncutPass:
    """Frames ``first_frame``..``last_frame`` of track ``track`` are not cut at the junction
    at ``x_m``, ``y_m``."""

    track: int
    first_frame: int
    last_frame: int
    x_m: float
    y_m: float


@dataclass(frozen=True, slots=True)
class UncutPasses:
    """The passes :func:`stolen_branches` leaves uncut, and the forks that were dead ends and
    become junctions (``added``, (K, 2))."""

    passes: tuple[UncutPass, ...]
    added: FloatArray

    def __bool__(self) -> bool:
        return bool(self.passes)

    def merged(self, other: UncutPasses) -> UncutPasses:
        """These passes and ``other`` 's, ``other`` 's forks as added."""
        return UncutPasses((*self.passes, *other.passes), other.added)

    def cut_filter(self, junctions_xy: FloatArray, *, same_node_m: float = 0.01) -> CutFilter:
        """A :data:`~city360.pose_graph.segments.CutFilter` for a cut at ``junctions_xy``
        (node ids as in :func:`~city360.pose_graph.segments.cut_tracks`): False for a frame of
        an uncut pass at its junction. A junction that has moved or gone is no longer held."""
        junctions_xy = np.asarray(junctions_xy, dtype=np.float64).reshape(-1, 2)
        held: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
        for uncut in self.passes:
            if not len(junctions_xy):
                break
            gap = np.hypot(junctions_xy[:, 0] - uncut.x_m, junctions_xy[:, 1] - uncut.y_m)
            node = int(np.argmin(gap))
            if gap[node] <= same_node_m:
                held[uncut.track].append((uncut.first_frame, uncut.last_frame, node))

        def may_cut(track: int, frames: IntArray, nodes: IntArray) -> BoolArray:
            allowed = np.ones(len(frames), dtype=bool)
            for first, last, node in held.get(track, ()):
                allowed &= ~((frames >= first) & (frames <= last) & (nodes == node))
            return allowed

        return may_cut


def stolen_branches(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    dead_ends_xy: FloatArray,
    segments: Sequence[Segment],
    streets: Sequence[Street],
    params: StolenBranchParams | None = None,
) -> UncutPasses:
    """The passes of a shallow fork's branch that were cut at a junction down the fork.

    ``segments`` and ``streets`` are the build's cut of ``tracks`` at ``junctions_xy`` and
    ``dead_ends_xy`` (node indices below ``len(junctions_xy)`` are junctions, the rest dead
    ends, in order). Each junction and each fork is used at most once.
    """
    params = params or StolenBranchParams()
    cut = cut_nodes(junctions_xy, dead_ends_xy, segments, streets)
    found: list[UncutPass] = []
    added: list[FloatArray] = []
    used: set[int] = set()
    for fork, stem, split in short_stems(cut, used, params.max_stem_m):
        if len(cut.streets_at[split]) < 4:
            continue
        stolen = _stolen_branch(tracks, segments, stem, split, cut, params)
        if not stolen:
            continue
        for seg_in, seg_out in stolen:
            first = min(segments[seg_in].first_frame, segments[seg_out].first_frame)
            last = max(segments[seg_in].last_frame, segments[seg_out].last_frame)
            x_m, y_m = (float(v) for v in cut.nodes_xy[split])
            found.append(UncutPass(segments[seg_in].track, first, last, x_m, y_m))
        used.update((fork, split))
        if fork >= cut.n_junctions:
            added.append(cut.nodes_xy[fork])
    return UncutPasses(tuple(found), np.asarray(added, dtype=np.float64).reshape(-1, 2))


def _street_heading(
    tracks: Sequence[Track],
    segments: Sequence[Segment],
    street: Street,
    split: int,
    nodes_xy: FloatArray,
    far_m: float,
) -> float:
    """The median leaving heading (deg) of ``street`` 's passes at ``split``, as a turn from
    north; a street whose two ends are both ``split`` (a loop) gives NaN."""
    headings = [
        leaving_heading(tracks[segments[i].track], segments[i], nodes_xy[split], split, far_m)
        for i in (*street.forward, *street.backward)
    ]
    if street.a == street.b or not headings:
        return float("nan")
    # a circular median: the heading with the least summed difference to the others
    costs = [sum(abs(angle_diff_deg(h, o)) for o in headings) for h in headings]
    return headings[int(np.argmin(costs))]


def _stolen_branch(
    tracks: Sequence[Track],
    segments: Sequence[Segment],
    stem: Street,
    split: int,
    cut: CutNodes,
    params: StolenBranchParams,
) -> list[tuple[int, int]]:
    """(stem segment, branch segment) of each pass of the stolen branch through ``split``, or
    an empty list where ``split`` has none (see :func:`stolen_branches`)."""
    nodes_xy, at_split = cut.nodes_xy, cut.streets_at[split]
    street_of, goes_on = cut.street_of, cut.goes_on
    fork = stem.b if stem.a == split else stem.a
    step = nodes_xy[split] - nodes_xy[fork]
    stem_heading = bearing_deg(float(step[0]), float(step[1]))
    turn = {
        street.id: angle_diff_deg(
            _street_heading(tracks, segments, street, split, nodes_xy, params.branch_far_m),
            stem_heading,
        )
        for street in at_split
        if street.id != stem.id
    }
    into: dict[int, list[tuple[int, int]]] = defaultdict(list)
    stem_elsewhere = False
    for i in (*stem.forward, *stem.backward):
        on = goes_on.get((i, split))
        if on is None or street_of[on] == stem.id:
            stem_elsewhere = True
            continue
        into[street_of[on]].append((i, on))
    for street in at_split:
        if street.id == stem.id or street.id not in into or street.a == street.b:
            continue
        branch_turn = turn[street.id]
        if not abs(branch_turn) <= params.max_branch_deg:
            continue
        # every pass of the branch at the junction comes from or goes to the stem
        ends_at_split = [
            i
            for i in (*street.forward, *street.backward)
            if split in (segments[i].u, segments[i].v)
        ]
        if len(ends_at_split) != len(into[street.id]):
            continue
        keeps_stem = stem_elsewhere or len(into) > 1
        if not keeps_stem or len(at_split) - 1 < 3:
            continue
        others = [
            t
            for sid, t in turn.items()
            if sid != street.id and abs(t) <= params.max_branch_deg and t * branch_turn < 0
        ]
        if not any(min(abs(branch_turn), abs(t)) <= params.straight_deg for t in others):
            continue
        if _part_deg(tracks, segments, into[street.id], nodes_xy[fork], nodes_xy[split]) >= (
            params.min_part_deg
        ):
            return into[street.id]
    return []


def _part_deg(
    tracks: Sequence[Track],
    segments: Sequence[Segment],
    passes: Sequence[tuple[int, int]],
    fork_xy: FloatArray,
    split_xy: FloatArray,
) -> float:
    """The median angle (deg) at the fork between the stem's line (fork -> split) and the
    nearest approach to ``split`` of each pass (stem segment, branch segment)."""
    stem_m = float(np.hypot(*(split_xy - fork_xy)))
    angles = []
    for seg_in, seg_out in passes:
        first = min(segments[seg_in].first_frame, segments[seg_out].first_frame)
        last = max(segments[seg_in].last_frame, segments[seg_out].last_frame)
        xy = tracks[segments[seg_in].track].xy[first : last + 1]
        beside_m = float(np.hypot(xy[:, 0] - split_xy[0], xy[:, 1] - split_xy[1]).min())
        angles.append(float(np.degrees(np.arcsin(min(1.0, beside_m / max(stem_m, 1e-6))))))
    return float(np.median(angles))
