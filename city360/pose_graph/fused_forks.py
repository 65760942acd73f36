"""Two streets that leave a fork at a shallow angle: the junction at the fork (no OSM).

Where one street forks into two at 10-40 degrees, the two branches run 1-6 m apart for their
first 10-25 m. A phone's passes cannot tell them apart there: they vote for no junction where
the branches leave the stem (passes along nearly one direction vote for nothing,
:mod:`city360.pose_graph.junctions`) and are grouped into one street
(:mod:`city360.pose_graph.segments`, ``same_street_m``); the junction is built 10-25 m down
the branches, where the passes finally part. What the build does keep at the fork is often
a node of some other origin, with two streets: a video's end or a walk's stop (a dead end
that passes go through), or a T put on a video's end (:mod:`city360.pose_graph.end_tees`).
Without OSM, 33 of the 72 junctions that the Helsinki suite's one-way and wander rows
miss have such a two-street node within 4 m (round seventeen, design notes part thirteen).

:func:`fused_forks` finds those places in a cut of the tracks: a node ``L`` with two
streets, one of them a short street (at most ``max_stem_m``) to a junction ``J`` with three
streets, whose passes go on through ``J`` into both of ``J``'s other streets, those two
leaving ``J`` within ``max_branch_deg`` of the stem's own direction on either side of it (the
branches of a Y seen from its stem; at a T or a crossing they leave at 70-110 degrees), one of
them within ``straight_deg`` (it runs on nearly straight, so its passes cast no votes against
the stem's: a Y whose branches both leave wider was found by the votes where it is). Every
pass at ``J`` must come from or go to the stem: a pass between the two branches would be cut
nowhere once ``J`` is gone. The fork is then at ``L``: ``J`` is dropped and ``L`` made a
junction, its stem running into both branches. The rule's limit: a true Y one of whose
branches leaves within ``straight_deg`` of its stem, with a video's end or a stop on that stem
up to ``max_stem_m`` before it, looks the same from the stop, and its junction is moved there
(``tests/pose_graph/test_fused_forks.py`` pins it), unless no video starts or ends there and
the stop or turn-back lies more than ``turn_back_stem_m`` below it;
``BuildParams.fork_params = None`` turns the rule off.

All positions are metres in the city CRS (x east, y north), headings degrees clockwise from
north.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from city360.geo import angle_diff_deg, bearing_deg, principal_axis
from city360.pose_graph.segments import Segment, Street, street_of_segment
from city360.pose_graph.tracks import Track

__all__ = ["ForkFix", "FusedForkParams", "forks_at_video_ends", "fused_forks", "video_ends"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class FusedForkParams:
    """Tuning of :func:`fused_forks` (metres and degrees)."""

    max_stem_m: float = 28.0
    """The fused part of the two branches, from the fork ``L`` to where the build put the
    junction ``J``, is at most this long (Helsinki's 11-degree fork: 23-26 m)."""
    max_branch_deg: float = 55.0
    """Each branch leaves ``J`` within this of the stem's direction ``L`` -> ``J`` (a Y; a T's
    or a crossing's arms leave at 70-110 degrees)."""
    straight_deg: float = 28.0
    """One branch leaves ``J`` within this of the stem's direction: it runs on from the stem
    nearly straight, too close to the stem's own line for its passes to vote against the
    stem's (``JunctionParams.min_angle_deg``, 25 degrees, and a few degrees of chord noise),
    which is why nothing was found at the fork. At a true Y that the votes found, both
    branches leave farther out (the old town and Nerima: 30-49 degrees)."""
    branch_far_m: float = 12.0
    """A branch's direction is the chord from ``J`` to this far along each pass on it."""
    video_ends: bool = False
    """Also take as the fork ``L`` a video's first or last pose that lies within
    ``JunctionParams.junction_clearance_m`` of another junction, so that no dead end was left
    there (:func:`forks_at_video_ends`). Off: on 104 kept twins it moves 3 Helsinki rows,
    each with junction P and R up or equal (2 misses fixed, 3 extras gone) and turn accuracy
    down 0.001-0.002 (the new junctions sit at the fork itself, where the two branches'
    first metres overlap and one of their turns is labelled wrong). Round twenty-five,
    branch fork25, design notes."""
    video_end_min_m: float = 4.0
    """... and at least this far from every junction (nearer, the video ends at that
    junction itself)."""
    apex_cross_deg: float | None = None
    """Degrees (0..90): ``J`` is kept where it is when its two branches' lines (fitted to
    each branch's poses ``apex_near_m`` .. ``apex_far_m`` from ``J``) cross at this angle
    or more and meet within ``apex_reach_m`` of ``J``: the branches part at ``J`` itself, a
    Y the votes found where it is, and ``L`` is a stop or a video's end on its stem. Down a
    fused fork's branches the lines meet back up the stem, 5-6 m or more from ``J`` (the
    7-degree fork of ``tests/pose_graph/test_fused_forks.py``, branches bending 25 m out:
    5.3-6.2 m), or cross too shallowly to say. Fresh Bulevardi wander+stops seed 2 without
    OSM: the Y at (148.5, -5.1), branches about 20 degrees either side of its stem, found
    1.7 m off, its lines meeting 1.0 m from it at 43 degrees, was moved 25 m down the stem
    to a walk's stop at (127.1, -20.7) (round thirty-two, bul32). None: no such test. Off:
    at 20 degrees it mends that row (P 0.917 -> 1.000, R 0.846 -> 0.923) but makes 8 of the
    suite's Helsinki rows without OSM worse in P and R (0.008-0.024): Helsinki's own fused
    forks, whose junctions the rule now keeps up the branches, have branch lines that
    meet 0.1-1.7 m from ``J`` at 29-90 degrees too, as the Y does (design notes, round
    thirty-two, branch bul32)."""
    apex_near_m: float = 3.0
    """See ``apex_cross_deg``: poses nearer ``J`` than this (metres) are inside it."""
    apex_reach_m: float = 3.0
    """See ``apex_cross_deg``: metres from ``J`` within which the branches' lines meet."""
    apex_far_m: float = 18.0
    """See ``apex_cross_deg``: poses farther from ``J`` than this (metres) are left out
    (``RefineParams.far_m``'s reach for an arm's line)."""
    turn_back_stem_m: float | None = 20.0
    """Metres: a fork ``L`` that is a dead end where no video starts or ends (within
    ``turn_back_end_m``), only walkers turning back or stopping, is taken only when ``J``
    lies at most this far from it. A walker who turns back at a fork turns where the
    branches part, a few metres below the junction the votes found up them; one who turns
    back on a street for no reason of the street's may do so anywhere along it. Fresh
    Bulevardi wander+stops seed 2 without OSM: two walkers turned back (pausing about 4 s,
    too short for a still span) at (127.1, -20.7), 24.7 m below the Y (148.5, -5.1), whose
    junction the votes had found 1.8 m from it; the Y was moved there (P 0.917 -> 1.000,
    R 0.846 -> 0.923 with the limit). The 120 kept twins' seven other such forks lie 6.6-17.8
    m below ``J`` (Helsinki's (-22.7, -597.2) in five rows, 6.6-16.0 m; unseen Nerima SW
    wander seed 9, 17.8 m): thin evidence, and 20 m is near the longest fused stem
    (Helsinki's 11-degree fork, 23-26 m, whose forks are videos' ends). None: no such limit.
    Round thirty-six, branch fork36, design notes."""
    turn_back_end_m: float = 8.0
    """See ``turn_back_stem_m``: a video's first or last pose this near ``L`` makes it a
    video's end, not a turn-back (``JunctionParams.dead_end_merge_m``)."""
    video_end_branch_deg: float = 70.0
    """``max_branch_deg`` for a fork at a video's end: the junction up the branches often
    sits where the bent branch turns away (Helsinki one-way 0 at (451.1, -471.9) and
    (339.5, 275.7): 58-64 degrees off the stem); a T's or a crossing's arms still leave at
    70-110. At 55 the rule fixed one miss on Helsinki seeds 0-1, at 70 two."""


@dataclass(frozen=True, slots=True)
class ForkFix:
    """What :func:`fused_forks` found: ``keep`` (one flag per junction, False for each
    junction ``J`` built where a fork's branches part) and ``added`` (K, 2), the forks that
    were dead ends and become junctions (forks that were junctions already are kept)."""

    keep: BoolArray
    added: FloatArray

    @property
    def changes(self) -> bool:
        """Whether the junctions change (a cut at the new ones is needed)."""
        return bool(len(self.added)) or not bool(self.keep.all())


def neighbours(segments: Sequence[Segment]) -> dict[tuple[int, int], int]:
    """(segment index, node) -> the segment of the same track that goes on through that node."""
    by_track: dict[int, list[int]] = defaultdict(list)
    for i, seg in enumerate(segments):
        by_track[seg.track].append(i)
    on: dict[tuple[int, int], int] = {}
    for members in by_track.values():
        members.sort(key=lambda i: segments[i].first_frame)
        for a, b in itertools.pairwise(members):
            node = segments[a].v
            if segments[b].u == node:
                on[(a, node)] = b
                on[(b, node)] = a
    return on


def leaving_heading(
    track: Track, seg: Segment, node_xy: FloatArray, node: int, far_m: float
) -> float:
    """Heading (deg) from ``node_xy`` to the pose ``far_m`` along ``seg`` away from ``node``."""
    arc = track.arc_m
    start, end = float(arc[seg.first_frame]), float(arc[seg.last_frame])
    mark = min(start + far_m, end) if seg.u == node else max(end - far_m, start)
    point = np.array([np.interp(mark, arc, track.xy[:, 0]), np.interp(mark, arc, track.xy[:, 1])])
    step = point - node_xy
    return bearing_deg(float(step[0]), float(step[1]))


@dataclass(frozen=True, slots=True)
class CutNodes:
    """A cut of the tracks seen from its nodes: ``nodes_xy`` (junctions first, then dead ends),
    ``n_junctions``, ``streets_at`` (node -> its streets), ``street_of`` (segment -> street
    id) and ``goes_on`` (:func:`neighbours`)."""

    nodes_xy: FloatArray
    n_junctions: int
    streets_at: dict[int, list[Street]]
    street_of: dict[int, int]
    goes_on: dict[tuple[int, int], int]


def cut_nodes(
    junctions_xy: FloatArray,
    dead_ends_xy: FloatArray,
    segments: Sequence[Segment],
    streets: Sequence[Street],
) -> CutNodes:
    """:class:`CutNodes` of the build's cut at ``junctions_xy`` and ``dead_ends_xy``."""
    junctions_xy = np.asarray(junctions_xy, dtype=np.float64).reshape(-1, 2)
    nodes_xy = np.concatenate([junctions_xy, np.asarray(dead_ends_xy).reshape(-1, 2)])
    streets_at: dict[int, list[Street]] = defaultdict(list)
    for street in streets:
        for node in {street.a, street.b}:
            streets_at[node].append(street)
    street_of = street_of_segment(streets)
    return CutNodes(nodes_xy, len(junctions_xy), streets_at, street_of, neighbours(segments))


def short_stems(
    cut: CutNodes, used: set[int], max_stem_m: float
) -> Iterator[tuple[int, Street, int]]:
    """``(fork, stem, split)``: each node ``fork`` with two streets, each of its streets
    ``stem`` to a junction ``split`` at most ``max_stem_m`` away, neither in ``used``. ``used``
    is read as it goes: once the caller adds a fork, that fork's other stems are skipped."""
    for fork, at_fork in sorted(cut.streets_at.items()):
        if len(at_fork) != 2:
            continue
        for stem in at_fork:
            if fork in used:
                break
            split = stem.b if stem.a == fork else stem.a
            if split == fork or split >= cut.n_junctions or split in used:
                continue
            if float(np.hypot(*(cut.nodes_xy[split] - cut.nodes_xy[fork]))) > max_stem_m:
                continue
            yield fork, stem, split


def fused_forks(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    dead_ends_xy: FloatArray,
    segments: Sequence[Segment],
    streets: Sequence[Street],
    params: FusedForkParams | None = None,
) -> ForkFix:
    """The junctions built down a shallow fork's branches, and the forks to put instead.

    ``segments`` and ``streets`` are the build's cut of ``tracks`` at ``junctions_xy`` and
    ``dead_ends_xy`` (node indices below ``len(junctions_xy)`` are junctions, the rest dead
    ends, in order). Each junction and each fork is used at most once.
    """
    params = params or FusedForkParams()
    cut = cut_nodes(junctions_xy, dead_ends_xy, segments, streets)
    keep = np.ones(cut.n_junctions, dtype=bool)
    added: list[FloatArray] = []
    used: set[int] = set()
    ends_xy = np.asarray([xy for track in tracks for xy in (track.xy[0], track.xy[-1])])
    for fork, stem, split in short_stems(cut, used, params.max_stem_m):
        if len(cut.streets_at[split]) != 3:
            continue
        if _long_turn_back(cut, fork, split, ends_xy, params):
            continue
        if _is_fused_fork(tracks, segments, stem, split, cut, params):
            keep[split] = False
            used.update((fork, split))
            if fork >= cut.n_junctions:
                added.append(cut.nodes_xy[fork])
    return ForkFix(keep, np.asarray(added, dtype=np.float64).reshape(-1, 2))


def _long_turn_back(
    cut: CutNodes, fork: int, split: int, ends_xy: FloatArray, params: FusedForkParams
) -> bool:
    """Whether ``fork`` is a dead end where only walkers turned back (no video's end, of
    ``ends_xy``, within ``turn_back_end_m``) farther than ``turn_back_stem_m`` from ``split``."""
    if params.turn_back_stem_m is None or fork < cut.n_junctions:
        return False
    fork_xy = cut.nodes_xy[fork]
    if float(np.hypot(*(cut.nodes_xy[split] - fork_xy))) <= params.turn_back_stem_m:
        return False
    return not bool((np.hypot(*(ends_xy - fork_xy).T) <= params.turn_back_end_m).any())


def video_ends(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    clearance_m: float,
    params: FusedForkParams,
) -> FloatArray:
    """(K, 2) the first and last poses of ``tracks`` between ``video_end_min_m`` and
    ``clearance_m`` from the nearest of ``junctions_xy``: ends that were left no dead end
    because a junction lies within the clearance. Ends within ``clearance_m`` of an end
    already taken are one place (the first is kept)."""
    junctions_xy = np.asarray(junctions_xy, dtype=np.float64).reshape(-1, 2)
    if not len(junctions_xy):
        return np.zeros((0, 2))
    taken: list[FloatArray] = []
    for track in tracks:
        for end in (track.xy[0], track.xy[-1]):
            nearest = float(np.hypot(*(junctions_xy - end).T).min())
            if not params.video_end_min_m <= nearest <= clearance_m:
                continue
            if any(float(np.hypot(*(end - other))) <= clearance_m for other in taken):
                continue
            taken.append(np.asarray(end, dtype=np.float64))
    return np.asarray(taken, dtype=np.float64).reshape(-1, 2)


def forks_at_video_ends(
    tracks: Sequence[Track],
    trial_xy: FloatArray,
    n_junctions: int,
    dead_ends_xy: FloatArray,
    segments: Sequence[Segment],
    streets: Sequence[Street],
    params: FusedForkParams | None = None,
) -> ForkFix:
    """The junctions built down a shallow fork's branches whose fork is a video's end.

    ``trial_xy`` is the build's ``n_junctions`` junctions followed by :func:`video_ends`,
    and ``segments`` and ``streets`` the cut of ``tracks`` at ``trial_xy`` and
    ``dead_ends_xy``. A video end ``L`` with two streets whose one street leads to a junction
    ``J`` that :func:`fused_forks` would move (the same Y test) is the fork: ``keep`` (one
    flag per junction of the build, False for ``J``) and ``added`` (the ends taken).

    Why: a video that ends at a shallow fork, within ``junction_clearance_m`` of the
    junction just down its stem, leaves no dead end at the fork, so :func:`fused_forks` finds
    no node there, and the junction stays 12-18 m up the branches where the passes part
    (Helsinki (339.5, 275.7): walk_004 ends 3.2 m from the true fork, 6.5 m from the
    junction south of it). The passes themselves cannot place the fork: there the two
    raw passes run 3 m apart, level, from 15 m below the fork to the built junction, and
    clarify pulls them onto one line (round twenty-five, design notes).
    """
    params = params or FusedForkParams()
    wide = replace(params, max_branch_deg=params.video_end_branch_deg)
    cut = cut_nodes(trial_xy, dead_ends_xy, segments, streets)
    keep = np.ones(n_junctions, dtype=bool)
    added: list[FloatArray] = []
    used: set[int] = set()
    for fork in range(n_junctions, cut.n_junctions):
        if len(cut.streets_at[fork]) != 2:
            continue
        for stem, split in _stems_from(cut, fork, params.max_stem_m):
            if split >= n_junctions or split in used or len(cut.streets_at[split]) != 3:
                continue
            if _is_fused_fork(tracks, segments, stem, split, cut, wide):
                keep[split] = False
                used.add(split)
                added.append(cut.nodes_xy[fork])
                break
    return ForkFix(keep, np.asarray(added, dtype=np.float64).reshape(-1, 2))


def _stems_from(cut: CutNodes, fork: int, max_stem_m: float) -> Iterator[tuple[Street, int]]:
    """``(stem, split)``: from ``fork`` along each of its streets, on through nodes of two
    streets (a video's end or a stop on the stem), the street ``stem`` that reaches a node
    ``split`` of three or more streets at most ``max_stem_m`` from ``fork``."""
    for first in cut.streets_at[fork]:
        node, street, seen = fork, first, {fork}
        while True:
            ahead = street.b if street.a == node else street.a
            if ahead in seen:
                break
            if float(np.hypot(*(cut.nodes_xy[ahead] - cut.nodes_xy[fork]))) > max_stem_m:
                break
            if len(cut.streets_at[ahead]) != 2:
                yield street, ahead
                break
            seen.add(ahead)
            node = ahead
            street = next(s for s in cut.streets_at[ahead] if s.id != street.id)


def _is_fused_fork(
    tracks: Sequence[Track],
    segments: Sequence[Segment],
    stem: Street,
    split: int,
    cut: CutNodes,
    params: FusedForkParams,
) -> bool:
    """Whether the passes of ``stem`` go on through ``split`` into both of its other streets,
    both leaving within ``max_branch_deg`` of the stem's direction, one on each side and one
    within ``straight_deg``, and no other pass goes through ``split`` from branch to branch."""
    nodes_xy, at_split = cut.nodes_xy, cut.streets_at[split]
    street_of, goes_on = cut.street_of, cut.goes_on
    fork = stem.b if stem.a == split else stem.a
    step = nodes_xy[split] - nodes_xy[fork]
    stem_heading = bearing_deg(float(step[0]), float(step[1]))
    branches = {street.id for street in at_split if street.id != stem.id}
    side: dict[int, list[float]] = defaultdict(list)
    for i in (*stem.forward, *stem.backward):
        on = goes_on.get((i, split))
        if on is None:
            continue
        seg = segments[on]
        heading = leaving_heading(
            tracks[seg.track], seg, nodes_xy[split], split, params.branch_far_m
        )
        side[street_of[on]].append(angle_diff_deg(heading, stem_heading))
    if set(side) != branches or len(branches) != 2:
        return False
    # a pass from one branch to the other would lose its only cut with the junction gone
    for street in at_split:
        if street.id == stem.id:
            continue
        for i in (*street.forward, *street.backward):
            on = goes_on.get((i, split))
            if on is not None and street_of[on] != stem.id:
                return False
    medians = []
    for turns in side.values():
        if any(abs(t) > params.max_branch_deg for t in turns):
            return False
        medians.append(float(np.median(turns)))
    on_both_sides = medians[0] * medians[1] < 0
    if not (on_both_sides and min(abs(m) for m in medians) <= params.straight_deg):
        return False
    if params.apex_cross_deg is None:
        return True
    lines = [
        _branch_line(tracks, segments, street, nodes_xy[split], params)
        for street in at_split
        if street.id != stem.id
    ]
    return not _meet_at_split(lines, nodes_xy[split], params)


def _branch_line(
    tracks: Sequence[Track],
    segments: Sequence[Segment],
    street: Street,
    split_xy: FloatArray,
    params: FusedForkParams,
) -> tuple[FloatArray, FloatArray] | None:
    """``(centre, direction)`` of the line through the poses of ``street``'s passes that lie
    ``apex_near_m`` .. ``apex_far_m`` from ``split_xy`` (principal axis); None for fewer
    than four such poses."""
    pieces = []
    for i in (*street.forward, *street.backward):
        seg = segments[i]
        xy = tracks[seg.track].xy[seg.first_frame : seg.last_frame + 1]
        reach = np.hypot(*(xy - split_xy).T)
        pieces.append(xy[(reach >= params.apex_near_m) & (reach <= params.apex_far_m)])
    poses = np.concatenate(pieces) if pieces else np.zeros((0, 2))
    if len(poses) < 4:
        return None
    return principal_axis(poses)


def _meet_at_split(
    lines: Sequence[tuple[FloatArray, FloatArray] | None],
    split_xy: FloatArray,
    params: FusedForkParams,
) -> bool:
    """Whether the two branch ``lines`` cross at ``apex_cross_deg`` or more and meet within
    ``apex_reach_m`` of ``split_xy``."""
    if params.apex_cross_deg is None or len(lines) != 2 or lines[0] is None or lines[1] is None:
        return False
    (ca, da), (cb, db) = lines[0], lines[1]
    cross = float(da[0] * db[1] - da[1] * db[0])
    if abs(cross) < np.sin(np.radians(params.apex_cross_deg)):
        return False
    w = cb - ca
    meet = ca + float(w[0] * db[1] - w[1] * db[0]) / cross * da
    return float(np.hypot(*(meet - split_xy))) <= params.apex_reach_m
