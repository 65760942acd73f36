"""Junctions that are two streets side by side, told by where their passes run (no OSM).

Two streets 6-8 m apart for a stretch (old towns: two lanes side by side for 100 m that then
bend away from each other) are one street to the grouping of passes
(:attr:`~city360.pose_graph.segments.SegmentParams.same_street_m`, 8 m), and where they bend
apart the crossing votes of their passes pile up: a "junction" with three ways out, the shared
stretch and the two bends. The passes themselves say it is none. A pass through a junction is a
track's segment into it and that track's next segment out of it; at a real junction passes that
leave it the same way run together along that way (the GPS error apart, 1-3 m), and walkers
who turn there link the ways. At two streets side by side no pass turns from one street to the
other, and the passes of the two streets keep the streets' distance along the stretch they seem
to share: they never meet.

:func:`apart_junctions` groups the tracks at each junction (a pass through it; a track that
starts, ends or turns back there, by its one street): two are linked when an arm of one and an
arm of the other leave the junction the same way (within ``same_way_deg``, each arm's direction
from its own poses) and run within ``together_m`` of each other along them (the median distance
of their poses ``near_m`` .. ``far_m`` out). The junction is two streets side by side when

- they fall into exactly two groups, each through it by exactly two streets (a track ending at
  the junction that runs with neither group may have come up a third street: it stays), or
  (``group_ways``) each leaving it by two ways, the shared stretch and one street of its own
  (the grouping may put a walk up one street with the other street of the pair);
- a pass of one group and a pass of another track in the other leave it the same way more than
  ``together_m`` and at most ``side_by_side_m`` apart (one track's ways out along a spur and
  back may keep its two sidewalks apart; streets farther apart are two streets leaving the
  junction at a shallow angle);
- and its streets leave it by at most three ways (a crossing walked straight through both
  ways leaves by four and stays).

Clarifying (:mod:`~city360.pose_graph.clarify`) draws the passes of two streets 4-6 m apart
toward each other too, so where it left two passes more than ``measured_from_m`` apart their
distance is also taken before it. And (``parallel_near_m``) a junction of three streets whose
two same-way streets are apart from their first metres on, every pass from the third into one
of them, is two streets side by side that the grouping took as one street on one side of it.

All positions are metres in the city CRS (x east, y north).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree
from shapely.geometry import LineString

from city360.geo import angle_diff_deg, bearing_deg
from city360.pose_graph.segments import Segment, Street, street_of_segment
from city360.pose_graph.tracks import Track

__all__ = ["ApartParams", "apart_junctions"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class ApartParams:
    """Tuning of :func:`apart_junctions` (metres and degrees)."""

    near_m: float = 3.0
    """Poses closer than this to the junction are inside it (turning), not on an arm."""
    far_m: float = 25.0
    """Poses farther than this along an arm are left out."""
    min_poses: int = 5
    """A pass needs this many poses on an arm for its distance to another to be measured;
    with fewer the two passes count as together (the junction stays)."""
    together_m: float = 4.0
    """Two passes whose poses on arms leaving the same way lie at most this far (median) from
    the other pass's poses run along one street. Passes of one street lie 0-3 m apart after
    clarifying (2.5 m dropped an old-town T whose arm one pass walked 2.6 m off); the passes of
    two streets side by side 4-8 m."""
    side_by_side_m: float = 8.0
    """Passes leaving a junction the same way that lie more than ``together_m`` and at most
    this far apart walk two streets side by side (the grouping's
    ``SegmentParams.same_street_m``)."""
    side_by_side_far_m: float | None = 10.0
    """... and up to this far apart too, for the two groups' test alone, when no pass of one
    group crosses a pass of the other (:attr:`crossing_deg`). The old town's dual
    carriageway ends in two bends 8-9 m apart ((-119.7, 1.8) and (-127.7, 3.3)), and the
    junction built between them stayed (tokyo-oldtown coverage seed 6 at (-117.3, 9.5),
    coverage+stops seed 5 at (-123.1, 2.3)). Without OSM (round thirty-three, the lead): 120
    kept twins 2 rows better (Helsinki coverage 1 P 0.969 -> 0.976, unseen Kamppi one-way 7
    P 0.867 -> 0.929), none worse; old town seeds 5-6 3 better (coverage 6 P 0.955 -> 1.000,
    coverage+stops 5 0.952 -> 1.000, coverage 5 0.875 -> 0.913). Without the crossing test,
    unseen Oakland east one-way+stops 8 loses the crossing (-163.2, -201.8) (R 1.000 ->
    0.900). None: ``side_by_side_m`` alone (before round thirty-three)."""
    crossing_deg: float = 20.0
    """See :attr:`side_by_side_far_m`: a pass of one group crosses a pass of the other with
    their chords across the junction this many degrees or more apart (:func:`_cross`): two
    streets that cross, not two side by side, whose passes never meet. 20 degrees: the votes
    see no crossing under 25 (``JunctionParams.min_angle_deg``)."""
    same_way_deg: float = 25.0
    """Arms leaving the junction within this many degrees of each other go the same way."""
    crossed_lines: bool = True
    """Also drop a junction that is a pass crossing from one of two streets side by side to
    the other (:func:`_crossed`): the pair's mid-street junctions (tokyo-oldtown coverage seed
    0 at (-94.3, 24.7), wander+stops seed 0 at (-88.2, 30.1)). Built in round twenty-four
    (branch oldtown24; ``crossed_last`` by branch crossed24) and left off: unguarded it drops
    the Y fork of ``tests/pose_graph/test_two_lines.py`` (a straight and a bent street between
    two nodes: at a Y the two branches leave one way 4-8 m apart and every pass goes straight
    through, this rule's picture), and on 104 twins without OSM it cost Helsinki
    coverage+stops seed 0 turn accuracy 0.957 -> 0.955. With ``crossed_both_ways`` (round
    twenty-five, branch crossed25) both are gone. Measured on the same 104 twins (old town
    seeds 0-2 and 30-32, Helsinki seeds 0-1, the unseen windows' rows), on against off: 4 rows
    better (Helsinki coverage 0 P 0.968 -> 0.976, wander 1 0.943 -> 0.958; old town
    wander+stops 0 0.947 -> 1.000, coverage+stops 30 0.952 -> 1.000), none worse in junction
    P, R, street F1 or turns; Helsinki seed 2 and old town seed 34 (used to shape the guard):
    2 better, none worse. So on."""
    crossed_both_ways: bool = True
    """With ``crossed_lines``, drop the junction only when two lines run on along both of its
    ways (:func:`_pair_both_ways`): a crossing between two streets side by side has the pair
    on both sides, a Y fork on one (its branches have met at the fork). Measured (round
    twenty-five, branch crossed25, 104 twins without OSM): it keeps 6 of the 24 junctions the
    rule fires at unguarded, and the Y fork of ``test_two_lines.py``. Of the 8 rows the
    unguarded rule moved, 4 gains go (Helsinki coverage+stops 0 P 0.992 -> 0.984 with its turn
    loss, coverage 1 P 0.968 -> 0.960, wander+stops 0 P 0.975 -> 0.966, old town
    one-way+stops 30 P 1.000 -> 0.952: there the pair's other line is not walked beside the
    passes on one side, which looks as a Y does) and 4 stay. On Helsinki seed 2 it keeps a
    true Y (wander+stops at (338.2, 276.8), R 0.935 unguarded, 0.943 kept). False gives the
    unguarded rule."""
    beside_m: float = 5.0
    """A line beside a way's arms counts when one track's poses run beside them this far
    along the way (:func:`_line_beside`). Measured where the unguarded rule fires (104 twins
    and 12 fresh): 0.0 m at every junction the guard keeps, 11.9 m at the one it drops by this
    test; so any value from 0.1 to 11.9 m decides the same."""
    crossed_last: bool = True
    """With ``crossed_lines``, the build drops the junctions that rule alone finds only after
    the steps that follow (corner cuts, end tees, stolen branches, fused forks), which then
    see the cut they saw without it. Dropped at once, a pass the junction cut becomes a
    street of its own beside the other line's, and those steps count one street more at
    nodes far from it: Helsinki coverage seed 0 at (-239.2, -130.1), 140 m away, keeps 4
    streets and ``fused_forks`` no longer moves it to its fork 3.5 m from the true junction
    (R 0.968 -> 0.960). Measured with ``crossed_lines`` on 56 twins: that row P 0.968 ->
    0.976 with R and turns kept, the other rows as dropped at once; so on (it acts only
    with ``crossed_lines``)."""
    measured_from_m: float | None = 2.5
    """In the two groups' test, two passes that clarifying left more than this far apart
    (m, median as ``together_m``) are as far apart as the larger of that and their distance
    before clarifying (:mod:`~city360.pose_graph.clarify` pulls the poses of passes within
    ``ClarifyParams.radius_m`` 5 m of each other and heading alike toward one line: the
    passes of two streets 4-6 m apart too, only partly). The old town's dual carriageway
    環七通り, 6.3 m apart across at its south-west end, is walked there 4.3-5.8 m apart and
    drawn to 2.8 m by clarifying (tokyo-oldtown coverage seed 8 at (-121.7, 2.2)), so the two
    halves' passes were linked into one group and the junction between their bends stayed.
    Passes of one street are drawn to 0-2 m, though measured up to 4.6 m apart (a pass's GPS
    bias): with no floor (0) four true junctions walked by two passes each were dropped
    (Helsinki wander 1 (400.2, -417.5), unseen Nerima N and SW wander+stops 5, fresh Nerima
    mid wander+stops 2: 1.8, 1.8, 0.6 and 0.5-0.6 m clarified, 4.1-4.6 m measured). Needs the
    tracks before clarifying (``measured`` of :func:`apart_junctions`). Measured (round
    thirty-four, branch knot34, without OSM) at 2.5 against None: 120 kept twins 1 row better
    (Kaisaniemi coverage 0 P 0.839 -> 0.867), none worse; held-out old town seeds 5-8 1 better
    (coverage 8 P 0.950 -> 1.000), none worse. None: the clarified poses alone."""
    dead_end_held_m: float | None = 8.0
    """When a junction is dropped, a pass that went on through a dead end on one of its
    streets, where a video on that street ends and which it leaves by another street than
    the video, is not cut at a dead end within this many metres of travel of there in the
    later cuts (:func:`~city360.pose_graph.apart_ends.apart_end_passes`): the video ran beside
    the pass, not on its street, and would part it there into a node of three streets
    (Helsinki Kamppi one-way 7 at (-163.4, -13.6), 30 m from any true junction). The pass is
    cut at the nearest pose within ``SegmentParams.dead_end_pass_m`` (4 m) that may be cut,
    so the span must reach past those: at 4 m Kamppi's pass was cut 4 frames on; 8 and 15 m
    both hold it. Measured (round thirty-seven, branch kamp37, without OSM) on 120 kept and
    75 earlier held-out twins: one-way 7 P 0.929 -> 1.000, F1 0.885 -> 0.941, the other 194
    rows equal; it acts nowhere else. Only without OSM. None: the passes are cut there as
    before."""
    hairpin_deg: float | None = 20.0
    """Also drop a junction of three streets where every pass runs through it from one street
    (the stem) into one of the other two, no pass between those two, and the stem's arms of
    the passes of one branch leave it at least this many degrees (heading of the arm's poses,
    ``near_m`` .. ``far_m`` out) from those of the other, each branch's within half of it:
    the "stem" is two streets that meet further on, grouped as one, and the junction is
    where their passes come within ``SegmentParams.same_street_m`` of each other (Helsinki
    Kamppi wander+stops camera 5 (-89.4, 199.9): Postikatu's 32 degree bend 8-9 m from
    Mannerheimintie's west carriageway, the two meeting at (-109.3, 210.0); the stem's arms
    leave at 292-293 and 315-317 degrees). A true fork's stem is one street its passes leave
    along together (and see ``hairpin_gap_m``); nor a stem that is a link under
    ``shared_link_m`` between two junctions (a knot's). Measured (round thirty-seven, branch
    kamp37, without OSM, with ``dead_end_held_m`` on) on 120 kept and 75 earlier held-out
    twins: Kamppi wander+stops camera 5 P 0.917 -> 1.000, F1 0.851 -> 0.933, the other 194
    rows equal (without the link guard also held-out Kaisaniemi one-way 6 P 0.871 -> 0.900
    and wander+stops 6's turns better; without ``hairpin_gap_m``, the angle alone, 4 better
    and 18 worse). None: not read."""
    hairpin_gap_m: float = 5.0
    """... and the two branches' stem arms begin at least this far apart (metres, median over
    pairs of their first poses, ``near_m`` out), each arm with ``min_poses`` poses: two
    streets that converge along the stem, not one that the passes leave along together
    (Kamppi 7.4 m; where the angle alone fired on the 195 twins without OSM, at fresh
    Bulevardi's, Helsinki's and Kaisaniemi's forks, 0.4-3.4 m)."""
    parallel_near_m: float | None = 7.0
    """Also drop a junction of three streets where every pass runs from one of them (the stem)
    into one of the other two, those two leave by one way and no pass turns between them,
    and every pass into one lies more than ``together_m`` (median) from every pass into the
    other already this near the junction (m, from ``near_m`` out) and at most
    ``side_by_side_far_m`` along the whole arm (:func:`_parallel_branches`): two streets side
    by side that the grouping takes as one street on the stem's side of the junction (their
    passes drawn together there by clarifying) and as two on the other; the branches of a
    fork meet at it, so they lie close near it. The old town's dual carriageway with its
    knot split by ``RefineParams.side_by_side_parted_m``: a vote junction between the two
    halves at (-103.4, 21.8) (tokyo-oldtown coverage seed 1), 70 m from any true junction,
    stayed with three streets (the halves as one street south-west of it, as two north-east,
    6.7 m apart from 3 m out). Measured with ``RefineParams.side_by_side_parted_m`` (see
    there, round thirty-four, branch knot34); alone (the knot not split) it moves none of
    the 35 old town rows (suite and held-out seeds 5-8). 7 m: the first metres' poses, 3-10 m
    out, enough for ``min_poses``. None: off."""
    shared_link_m: float | None = 12.0
    """The two groups' test leaves a junction be when a street both groups take is this short
    (m, between the junctions at its two ends): a link to another junction of a knot, not a
    stretch two streets share side by side (those run on for tens of metres before they part
    at the junction). Fresh Bulevardi's Erottaja knot walked by few passes (held-out
    coverage seed 5): the west junction (142.4, 130.0), 9.9 m from the east one, passed by
    four walks from the west street and the south-west diagonal, each on along the link to
    the east junction; the walks from each street stay apart along the link (before
    clarifying), so they fell into two groups sharing the link and the junction was dropped
    as two streets side by side (with ``measured_from_m`` None the east one, by
    ``side_by_side_far_m``). 12 m (round thirty-five, branch pair35; knots of junctions
    8-10 m apart, the link measured between the built junctions): without OSM on the 120
    kept twins and 39 held-out rows (old town seeds 5-9, the lead's seed-5 Kaisaniemi and
    Bulevardi windows) 1 row better (held-out Bulevardi coverage 5 street F1 0.815 -> 0.889,
    turns 0.895 -> 0.912; P / R equal: the east junction is then the one lost, its east arm
    never walked there), none worse, 158 equal. With OSM it does not act (the build with a
    map has no ``apart_junctions``). None: no such guard."""
    group_ways: bool = True
    """A group of passes through the junction by three streets still counts as one of the
    two when it leaves by two ways: the way the other group leaves by too (the stretch the two
    streets share, which may hold streets of both lines in one group) and one street of its own
    (:func:`_two_ways_each`). The grouping of passes into streets is by the nodes a segment
    joins, so a walk that starts at the bends up one street and crosses to the other line
    farther on is grouped with the other street (tokyo-oldtown coverage seed 0 at (-123.8,
    2.4)). Measured (round twenty-four, branch oldtown24, docs/design-notes.md) without OSM on
    old town seeds 0-2 and 30-32, Helsinki seed 0 and the Kamppi and Helsinki SE unseen
    windows (56 twins): 4 rows better (old town coverage 0 P 0.905 -> 0.950; coverage 30,
    wander 32, wander+stops 32), none worse in junction P, R, street F1 or turns. So on;
    False gives the rule before."""


@dataclass(frozen=True, slots=True)
class _Pass:
    """Track ``track`` at a junction: the poses of the arms it comes in and goes out by
    (``near_m`` .. ``far_m`` out, from the junction outwards; one arm where the track starts or
    ends there, two of one street where it turns back) and their streets."""

    streets: tuple[int, ...]
    arms: tuple[FloatArray, ...]
    track: int
    measured: tuple[FloatArray, ...]
    """The same frames' poses before clarifying (:attr:`ApartParams.measured_from_m`)."""


def _arm_frames(
    track: Track, first: int, last: int, node_xy: FloatArray, params: ApartParams
) -> npt.NDArray[np.int64]:
    """Frames ``first`` .. ``last`` (``first`` at the junction, either order) whose poses lie
    from ``near_m`` out until they first leave ``far_m``."""
    step = 1 if last >= first else -1
    frames = np.arange(first, last + step, step)
    dist = np.hypot(*(track.xy[frames] - node_xy).T)
    beyond = np.flatnonzero(dist > params.far_m)
    stop = int(beyond[0]) if beyond.size else len(frames)
    return frames[:stop][dist[:stop] >= params.near_m]


def _heading(points: FloatArray) -> float | None:
    """Direction (deg clockwise from north) an arm's poses ``points`` (from the junction
    outwards) lead away in: first to last. Not from the junction to their mean, which turns
    with the arm's offset: the arms of two streets side by side leave one way 7 m apart."""
    if len(points) < 2:
        return None
    out = points[-1] - points[0]
    return bearing_deg(float(out[0]), float(out[1]))


def _gap(a: FloatArray, b: FloatArray, params: ApartParams) -> float | None:
    """Median distance (m) between two passes' poses along one way, each pose to the other
    pass's nearest; None when either has fewer than ``min_poses``."""
    if len(a) < params.min_poses or len(b) < params.min_poses:
        return None
    gaps = np.concatenate([cKDTree(b).query(a)[0], cKDTree(a).query(b)[0]])
    return float(np.median(gaps))


def _pass_gap(a: _Pass, k: int, b: _Pass, m: int, params: ApartParams) -> float | None:
    """:func:`_gap` of arm ``k`` of pass ``a`` and arm ``m`` of pass ``b``; past
    :attr:`ApartParams.measured_from_m` the larger of it and the gap before clarifying."""
    gap = _gap(a.arms[k], b.arms[m], params)
    if gap is None or params.measured_from_m is None or gap <= params.measured_from_m:
        return gap
    measured = _gap(a.measured[k], b.measured[m], params)
    return gap if measured is None else max(gap, measured)


def _apart(a: FloatArray, b: FloatArray, params: ApartParams) -> bool:
    """Whether two passes' poses along one way keep more than ``together_m`` apart."""
    gap = _gap(a, b, params)
    return gap is not None and gap > params.together_m


def _same_way(first: float | None, second: float | None, params: ApartParams) -> bool:
    if first is None or second is None:
        return False
    return abs(angle_diff_deg(first, second)) < params.same_way_deg


def _groups(
    passes: Sequence[_Pass], headings: Sequence[Sequence[float | None]], params: ApartParams
) -> list[set[int]]:
    """Passes linked by running together along a way they share, as groups of indices
    (connected components of the links); ``headings``: each pass's arms' (:func:`_heading`)."""
    n = len(passes)
    links = np.zeros((n, n), dtype=bool)
    for i in range(n):
        for j in range(i + 1, n):
            links[i, j] = any(
                _same_way(head_i, head_j, params)
                and not _linked_apart(passes[i], k, passes[j], m, params)
                for k, head_i in enumerate(headings[i])
                for m, head_j in enumerate(headings[j])
            )
    _, labels = connected_components(csr_matrix(links), directed=False)
    groups: dict[int, set[int]] = {}
    for k, label in enumerate(labels):
        groups.setdefault(int(label), set()).add(k)
    return list(groups.values())


def _linked_apart(a: _Pass, k: int, b: _Pass, m: int, params: ApartParams) -> bool:
    """Whether arm ``k`` of pass ``a`` and arm ``m`` of pass ``b`` keep more than
    ``together_m`` apart (:func:`_pass_gap`)."""
    gap = _pass_gap(a, k, b, m, params)
    return gap is not None and gap > params.together_m


def _groups_cross(passes: Sequence[_Pass], groups: Sequence[set[int]], crossing_deg: float) -> bool:
    """Whether a pass through the junction of one group crosses one of the other at
    ``crossing_deg`` or more (:attr:`ApartParams.side_by_side_far_m`)."""
    first, second = groups
    return any(_cross(passes[i], passes[j], crossing_deg) for i in first for j in second)


def _cross(a: _Pass, b: _Pass, crossing_deg: float) -> bool:
    """Whether passes ``a`` and ``b``, each in by one arm and out by another, cross each other
    with their chords across the junction (first pose of the way in to first pose of the way
    out) at least ``crossing_deg`` apart, whichever way each runs."""
    lines = []
    for p in (a, b):
        if len(p.arms) != 2 or min(len(arm) for arm in p.arms) < 2:
            return False
        lines.append(np.concatenate([p.arms[0][::-1], p.arms[1]]))
    if not LineString(lines[0]).intersects(LineString(lines[1])):
        return False
    chords = [bearing_deg(*(p.arms[1][0] - p.arms[0][0])) for p in (a, b)]
    apart = abs(angle_diff_deg(chords[0], chords[1]))
    return min(apart, 180.0 - apart) >= crossing_deg


def _parted(
    passes: Sequence[_Pass],
    headings: Sequence[Sequence[float | None]],
    groups: Sequence[set[int]],
    params: ApartParams,
) -> bool:
    """Whether two passes of different ``groups`` walk one way and run apart along it, by more
    than ``together_m`` and at most ``side_by_side_m`` (farther apart they are two streets the
    grouping kept apart, leaving the junction at a shallow angle). A track's way out along an
    arm and its way back may keep 5-7 m apart on one street (a spur walked out on one sidewalk
    and back on the other), so those two are not compared."""
    first, second = groups
    return any(
        _run_apart(passes[i], headings[i], passes[j], headings[j], params)
        for i in first
        for j in second
    )


def _run_apart(
    a: _Pass,
    a_headings: Sequence[float | None],
    b: _Pass,
    b_headings: Sequence[float | None],
    params: ApartParams,
) -> bool:
    """Whether passes ``a`` and ``b`` of different tracks leave the junction one way and run
    more than ``together_m`` and at most ``side_by_side_m`` apart along it."""
    if a.track == b.track:
        return False
    for k, head_a in enumerate(a_headings):
        for m, head_b in enumerate(b_headings):
            if not _same_way(head_a, head_b, params):
                continue
            gap = _pass_gap(a, k, b, m, params)
            if gap is not None and params.together_m < gap <= params.side_by_side_m:
                return True
    return False


def _ways(headings: Sequence[float], params: ApartParams) -> int:
    """How many ways the arms with ``headings`` leave by (within ``same_way_deg``, chained)."""
    order = sorted(h % 360.0 for h in headings)
    if not order:
        return 0
    gaps = np.diff([*order, order[0] + 360.0])
    return max(1, int((gaps >= params.same_way_deg).sum()))


def apart_junctions(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    segments: Sequence[Segment],
    streets: Sequence[Street],
    params: ApartParams | None = None,
    *,
    measured: Sequence[Track] | None = None,
) -> npt.NDArray[np.bool_]:
    """Per junction (J,): True when it is two streets side by side (see the module docstring).

    ``segments`` are those of :func:`city360.pose_graph.segments.cut_tracks` (a track's segments
    in order, consecutive ones sharing the frame they are cut at; nodes ``0 .. J-1`` are the
    junctions), ``streets`` those of :func:`~city360.pose_graph.segments.group_streets`.
    ``measured``: ``tracks`` before clarifying (same frames), for
    :attr:`ApartParams.measured_from_m`; without them ``tracks`` stand in.
    """
    params = params or ApartParams()
    measured = tracks if measured is None else measured
    junctions_xy = np.asarray(junctions_xy, dtype=np.float64).reshape(-1, 2)
    street_of = street_of_segment(streets)
    visits: dict[int, list[_Pass]] = {}
    joined_before = False  # whether the segment before this one ends where this one starts
    for i, seg in enumerate(segments):
        follows = i + 1 < len(segments) and _continues(segments[i], segments[i + 1])
        for end, node in ((0, seg.u), (1, seg.v)):
            if node >= len(junctions_xy) or (end == 0 and joined_before):
                continue  # not a junction, or counted with the segment before
            node_xy = junctions_xy[node]
            if end == 0:
                spans = [(i, seg.first_frame, seg.last_frame)]
            else:
                spans = [(i, seg.last_frame, seg.first_frame)]
                if follows:
                    out = segments[i + 1]
                    spans.append((i + 1, out.first_frame, out.last_frame))
            arms, before = [], []
            for _, first, last in spans:
                # the arm's frames from the clarified poses, the same frames' measured poses
                frames = _arm_frames(tracks[seg.track], first, last, node_xy, params)
                arms.append(tracks[seg.track].xy[frames])
                before.append(measured[seg.track].xy[frames])
            visits.setdefault(node, []).append(
                _Pass(
                    tuple(street_of.get(k, -1) for k, _, _ in spans),
                    tuple(arms),
                    seg.track,
                    tuple(before),
                )
            )
        joined_before = follows
    street_ends = {street.id: frozenset((street.a, street.b)) for street in streets}
    apart = np.zeros(len(junctions_xy), dtype=bool)
    for node, node_visits in visits.items():
        if len(node_visits) < 2 or any(-1 in v.streets for v in node_visits):
            continue
        if params.parallel_near_m is not None and _parallel_branches(
            node_visits, params, street_ends
        ):
            apart[node] = True
            continue
        headings = [[_heading(arm) for arm in v.arms] for v in node_visits]
        stem = _hairpin_stem(node_visits, headings, params)
        if stem is not None and not (
            params.shared_link_m is not None
            and _short_link([{stem}], streets, junctions_xy, params.shared_link_m)
        ):
            apart[node] = True  # (a stem that is a short link: a knot's, as below)
            continue
        if params.crossed_lines and _crossed(
            node_visits, headings, params, tracks=tracks, node_xy=junctions_xy[node]
        ):
            apart[node] = True
            continue
        groups = _groups(node_visits, headings, params)
        streets_in = [{s for k in group for s in node_visits[k].streets} for group in groups]
        if len(groups) != 2:
            continue
        if params.shared_link_m is not None and _short_link(
            streets_in, streets, junctions_xy, params.shared_link_m
        ):
            continue
        if any(len(group) != 2 for group in streets_in) and not (
            params.group_ways and _two_ways_each(node_visits, headings, groups, params)
        ):
            continue
        if not _parted(node_visits, headings, groups, params) and not (
            params.side_by_side_far_m is not None
            and _parted(
                node_visits,
                headings,
                groups,
                replace(params, side_by_side_m=params.side_by_side_far_m),
            )
            and not _groups_cross(node_visits, groups, params.crossing_deg)
        ):
            continue
        street_heading = {
            street: head
            for v, heads in zip(node_visits, headings, strict=True)
            for street, head in zip(v.streets, heads, strict=True)
            if head is not None
        }
        apart[node] = _ways(list(street_heading.values()), params) <= 3
    return apart


def _short_link(
    streets_in: Sequence[set[int]],
    streets: Sequence[Street],
    junctions_xy: FloatArray,
    shorter_m: float,
) -> bool:
    """Whether a street both groups take (``streets_in``: each group's street ids) joins two
    junctions under ``shorter_m`` apart (:attr:`ApartParams.shared_link_m`)."""
    shared = set.intersection(*streets_in) if streets_in else set()
    for street in streets:
        if street.id not in shared or street.a == street.b:
            continue
        if max(street.a, street.b) >= len(junctions_xy):
            continue  # ends at a dead end: a stretch, not a link
        gap = junctions_xy[street.a] - junctions_xy[street.b]
        if float(np.hypot(*gap)) < shorter_m:
            return True
    return False


def _crossed(
    passes: Sequence[_Pass],
    headings: Sequence[Sequence[float | None]],
    params: ApartParams,
    *,
    tracks: Sequence[Track],
    node_xy: FloatArray,
) -> bool:
    """Whether the junction is a pass crossing from one of two streets side by side to the
    other (:attr:`ApartParams.crossed_lines`): every visit is a pass straight through (two
    arms, leaving by different ways), all arms leave by two ways, and two passes of different
    tracks leave one way more than ``together_m`` and at most ``side_by_side_m`` apart.
    With ``crossed_both_ways`` the pair also runs on along the other way
    (:func:`_pair_both_ways`)."""
    if any(len(p.arms) != 2 for p in passes):
        return False
    heads = [h for hh in headings for h in hh]
    if any(h is None for h in heads):
        return False
    if _ways([h for h in heads if h is not None], params) != 2:
        return False
    if any(_same_way(hh[0], hh[1], params) for hh in headings):
        return False  # a walker turning back, or from one line into the other: a fork
    clarified = replace(params, measured_from_m=None)  # the two groups' test's alone
    if not any(
        _run_apart(passes[i], headings[i], passes[j], headings[j], clarified)
        for i in range(len(passes))
        for j in range(i + 1, len(passes))
    ):
        return False
    return not params.crossed_both_ways or _pair_both_ways(
        passes, headings, params, tracks=tracks, node_xy=node_xy
    )


def _pair_both_ways(
    passes: Sequence[_Pass],
    headings: Sequence[Sequence[float | None]],
    params: ApartParams,
    *,
    tracks: Sequence[Track],
    node_xy: FloatArray,
) -> bool:
    """Whether two lines run on along both of the junction's two ways
    (:attr:`ApartParams.crossed_both_ways`): on each way two passes of different tracks keep
    more than ``together_m`` apart, or some track's poses run beside the passes' arms there
    (:func:`_line_beside`). A pass crossing between two streets side by side has the pair on
    both sides of it; at a Y fork the two branches run side by side on one way and have met at
    the fork, so on the other way every pass runs together along one street."""
    first = headings[0][0]
    for on_first in (True, False):
        way = [  # each pass's arms on this way: one for a pass straight through
            [
                arm
                for arm, head in zip(p.arms, hh, strict=True)
                if _same_way(head, first, params) == on_first
            ]
            for p, hh in zip(passes, headings, strict=True)
        ]
        heading = next(
            (h for hh in headings for h in hh if _same_way(h, first, params) == on_first), None
        )
        if heading is None:
            return False  # the way's arms chain round to more than same_way_deg from first
        if any(
            _apart(a, b, params)
            for i in range(len(passes))
            for j in range(i + 1, len(passes))
            if passes[i].track != passes[j].track
            for a in way[i]
            for b in way[j]
        ):
            continue
        arms = np.concatenate([arm for arms_of in way for arm in arms_of])
        if _line_beside(arms, heading, tracks, node_xy, params) < params.beside_m:
            return False
    return True


def _line_beside(
    arms: FloatArray,
    heading: float,
    tracks: Sequence[Track],
    node_xy: FloatArray,
    params: ApartParams,
) -> float:
    """How far along the way (m) one track's poses reach beside the arms ``arms`` (every
    pass's poses on the way leaving the junction at ``node_xy`` by ``heading``, deg): poses
    from ``near_m`` out along the way to where the arms end, heading along it (either
    direction, within ``same_way_deg``), more than ``together_m`` and at most
    ``side_by_side_m`` from the nearest arm pose. That is the other street of a pair, walked
    by a track that is not cut at this junction. The longest such reach of any track."""
    along_dir = np.array([np.sin(np.radians(heading)), np.cos(np.radians(heading))])
    arm_tree = cKDTree(arms)
    # beside the arms, not beyond them: a street that ends 10 m out meets others there
    reach = min(params.far_m, float(((arms - node_xy) @ along_dir).max()))
    longest = 0.0
    for track in tracks:
        along = (track.xy - node_xy) @ along_dir
        out = np.flatnonzero((along >= params.near_m) & (along <= reach))
        if len(out) < params.min_poses:
            continue
        gap = arm_tree.query(track.xy[out])[0]
        turn = np.abs((track.heading_deg[out] - heading + 90.0) % 180.0 - 90.0)
        # running along the way, either direction: not a street that meets it
        along_way = turn < params.same_way_deg
        beside = along[out][(gap > params.together_m) & (gap <= params.side_by_side_m) & along_way]
        if len(beside) >= params.min_poses:
            longest = max(longest, float(beside.max() - beside.min()))
    return longest


def _two_ways_each(
    passes: Sequence[_Pass],
    headings: Sequence[Sequence[float | None]],
    groups: Sequence[set[int]],
    params: ApartParams,
) -> bool:
    """Whether each of the two ``groups`` leaves the junction by two ways, one of them the way
    the other group leaves by too (the stretch the two streets share), and by one street on its
    other way. The shared way may hold streets of both lines in one group: a walk up one line
    that the grouping put with the other street. A second street on a group's own way is a
    third street (a track ending there may have come up it): the junction stays."""
    arms = [
        [
            (street, head)
            for k in group
            for street, head in zip(passes[k].streets, headings[k], strict=True)
            if head is not None
        ]
        for group in groups
    ]
    for mine, other in ((arms[0], arms[1]), (arms[1], arms[0])):
        if _ways([head for _, head in mine], params) != 2:
            return False
        own = {s for s, h in mine if not any(_same_way(h, o, params) for _, o in other)}
        if len(own) != 1:
            return False
    return True


def _parallel_branches(
    passes: Sequence[_Pass], params: ApartParams, street_ends: Mapping[int, frozenset[int]]
) -> bool:
    """Whether the junction is two streets side by side grouped as one on one side of it
    (:attr:`ApartParams.parallel_near_m`): every visit a pass through by two streets, three
    streets in all, one stem in every pass, and the other two (each in some pass) leaving by
    one way with every pass's arm on one more than ``together_m`` from every other track's
    arm on the other within ``parallel_near_m`` of ``near_m``, and at most
    ``side_by_side_far_m`` (or ``side_by_side_m``) apart along the arms; at least one such pair
    of two tracks (one track out by one branch and back by the other walked a loop or a fork:
    fresh Bulevardi one-way seed 0 at (151.2, 133.5)), and the two branches not between the
    same two nodes (a fork whose branches meet again, fresh Bulevardi coverage seed 1 at
    (153.5, 131.6), 7.6 m apart 3-10 m out, ``SegmentParams.fork_apex_m``)."""
    if len(passes) < 2 or any(len(p.arms) != 2 or p.streets[0] == p.streets[1] for p in passes):
        return False
    streets = {s for p in passes for s in p.streets}
    stems = [s for s in streets if all(s in p.streets for p in passes)]
    if len(streets) != 3 or len(stems) != 1:
        return False
    branch_arms: dict[int, list[tuple[int, FloatArray]]] = {}
    for p in passes:
        k = 0 if p.streets[1] == stems[0] else 1
        branch_arms.setdefault(p.streets[k], []).append((p.track, p.arms[k]))
    if len(branch_arms) != 2 or len({street_ends.get(s) for s in branch_arms}) != 2:
        return False  # two branches between the same two nodes: a fork that meets again
    first, second = branch_arms.values()
    heads = [_heading(arm) for _, arm in (*first, *second)]
    if any(h is None for h in heads) or _ways([h for h in heads if h is not None], params) != 1:
        return False
    near = replace(params, far_m=params.near_m + (params.parallel_near_m or 0.0))
    widest = params.side_by_side_far_m or params.side_by_side_m
    compared = False
    for track_a, arm_a in first:
        for track_b, arm_b in second:
            if track_a == track_b:
                continue  # a walk out one branch and back the other: a loop, or a fork
            gap = _gap(arm_a, arm_b, params)
            near_a, near_b = (_within(arm, near.far_m, params) for arm in (arm_a, arm_b))
            near_gap = _gap(near_a, near_b, near)
            if gap is None or gap > widest or near_gap is None or near_gap <= params.together_m:
                return False
            compared = True
    return compared


def _within(arm: FloatArray, reach_m: float, params: ApartParams) -> FloatArray:
    """The poses of ``arm`` (from the junction outwards) up to ``reach_m`` along it from its
    first pose, which lies ``near_m`` out."""
    along = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(arm, axis=0).T))])
    return arm[along <= reach_m - params.near_m]


def _continues(into: Segment, out: Segment) -> bool:
    """Whether ``out`` is the same track's next segment from the node ``into`` ends at."""
    return out.track == into.track and out.u == into.v and out.first_frame == into.last_frame


def _hairpin_stem(
    passes: Sequence[_Pass], headings: Sequence[Sequence[float | None]], params: ApartParams
) -> int | None:
    """The stem street when every visit is a pass from it into one of two branches, and the
    stem's arms of each branch's passes leave ``hairpin_deg`` or more from the other's, each
    branch's within half of that, beginning ``hairpin_gap_m`` or more from the other's
    (:attr:`ApartParams.hairpin_deg`); else None."""
    apart_deg = params.hairpin_deg
    if apart_deg is None:
        return None
    if any(len(p.streets) != 2 or p.streets[0] == p.streets[1] for p in passes):
        return None
    stems = set.intersection(*(set(p.streets) for p in passes))
    if len(stems) != 1 or len({s for p in passes for s in p.streets}) != 3:
        return None
    stem = stems.pop()
    by_branch: dict[int, list[float]] = {}
    firsts: dict[int, list[FloatArray]] = {}
    for visit, heads in zip(passes, headings, strict=True):
        at = visit.streets.index(stem)
        head = heads[at]
        if head is None or len(visit.arms[at]) < params.min_poses:
            return None
        by_branch.setdefault(visit.streets[1 - at], []).append(head)
        firsts.setdefault(visit.streets[1 - at], []).append(visit.arms[at][0])
    means = [_mean_bearing(np.asarray(branch)) for branch in by_branch.values()]
    for mean, branch in zip(means, by_branch.values(), strict=True):
        if max(abs(angle_diff_deg(h, mean)) for h in branch) > apart_deg / 2:
            return None
    if abs(angle_diff_deg(means[0], means[1])) < apart_deg:
        return None
    one, other = firsts.values()
    gaps = [float(np.hypot(*(a - b))) for a in one for b in other]
    return stem if float(np.median(gaps)) >= params.hairpin_gap_m else None


def _mean_bearing(bearings: FloatArray) -> float:
    """The circular mean of ``bearings`` (deg clockwise from north)."""
    rad = np.radians(bearings)
    return float(np.degrees(np.arctan2(np.sin(rad).mean(), np.cos(rad).mean())) % 360.0)
