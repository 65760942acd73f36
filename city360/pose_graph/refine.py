"""Junction positions where the streets' centre lines meet (builds without OSM).

Crossing votes (:mod:`city360.pose_graph.junctions`) pile up where passes of different streets
come close at an angle; at a shallow fork that is where the passes *separate*, metres past where
the streets meet, and at a busy junction the votes of different pairs of arms can form several
clusters 10-15 m around it. Once the tracks are cut, each junction knows its arms: the segments
leaving it. :func:`refine_junctions` fits a straight centre line (principal axis, numpy SVD) to
the poses of each arm between ``near_m`` and ``far_m`` from the junction, all passes of the arm
pooled, and moves the junction to the point nearest all arm lines in the least-squares sense
(``sum_i |(I - d_i d_i^T)(p - c_i)|^2``, one 2 x 2 solve). A junction whose arms are all nearly
parallel (the system is ill-conditioned) or whose solution lies more than ``max_shift_m`` away
stays where it is; one whose three or more arms all run one way, or leave it by only two
ways (:attr:`RefineParams.same_way_deg`), is dropped, and so is a street walked straight
through with the short way back of a U-turn cut at it (:attr:`RefineParams.through_stub_m`).
:func:`split_junctions` undoes what
the 8 m merge did to two junctions 8-10 m apart: it replaces a junction whose arm lines meet
at two separate places by those places (with :attr:`RefineParams.split_own_arms_m`, off,
also two places under ``split_min_m`` apart when each has an arm of its own and lines fitted
farther out part them); :func:`split_side_by_side` does the same for a
junction fused between two streets side by side (two of its arms leave it the same way on
either side of it). All positions are metres in the city CRS.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial

import numpy as np
import numpy.typing as npt

from city360.geo import principal_axis
from city360.pose_graph.grouping import linked_groups
from city360.pose_graph.segments import Segment, Street, group_streets, street_of_segment
from city360.pose_graph.tracks import Track

__all__ = ["RefineParams", "refine_junctions", "split_junctions", "split_side_by_side"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class RefineParams:
    """Tuning of :func:`refine_junctions` (metres)."""

    near_m: float = 3.0
    """Poses closer than this to the junction are inside it (turning), not on an arm."""
    far_m: float = 18.0
    """Poses farther than this along an arm are left out (streets bend; in old towns the next
    junction is 10-20 m away). 18 m against 15 and 25 m: best mean F1 on the accuracy suite's
    old-town, Tokyo and Oakland rows without OSM."""
    min_poses: int = 6
    """An arm needs this many poses between ``near_m`` and ``far_m`` for a line."""
    max_shift_m: float = 10.0
    """A junction moves at most this far."""
    min_spread: float = 0.04
    """Smallest eigenvalue of the mean projector ``mean(I - d d^T)`` for a junction to move: 0
    when every arm line is parallel, 0.5 when they cross at right angles (0.04: a fork of two
    arms ~25 degrees apart off a stem)."""
    parallel_spread: float = 0.01
    """Below this (every arm within ~6 degrees of one direction) the "junction" is no branch
    point: a divided road's two carriageways, or two parallel streets 8-15 m apart, cut at a
    spot where noisy headings voted; it is dropped."""
    same_way_deg: float = 25.0
    """Arms leaving a junction within this many degrees of each other (directed: away from
    the junction) go the same way, unless they fork (``fork_deg``). A junction with three or
    more arms, every one with a line, that go only two ways is dropped: two parallel
    streets 5-9 m apart (Helsinki's paired carriageways and tram-side streets) or two passes
    of one street not grouped, cut where GPS noise voted."""
    knot_ways_m: float | None = 15.0
    """Meant for :attr:`~city360.pose_graph.junction_params.JunctionParams.split_peaks_m` (set both,
    15 m with 8 m; both off): two arms within ``same_way_deg`` that are streets to two different
    junctions, both within this many metres, go two ways (a knot of junctions parted from one
    vote pile: old town wander+stops 0's part at (-21.3, 87.2), arms 21 degrees apart to parts
    10.6 and 14.1 m off, was dropped as a node of two ways and (-19.5, 86.5) missed). With
    ``split_peaks_m`` 8 on 28 suite twins (branch cuts31) 3 rows better, 25 equal; without
    the parting it is not measured. None: off. On with the parting since round thirty-two."""
    knot_dead_ends: bool = True
    """With ``knot_ways_m``: an arm whose street leads to a dead end counts that dead end as
    the node it leads to (the build's branching check hands the dead ends in), so an arm to a
    junction and an arm to a dead end, both within ``knot_ways_m``, go two ways. Held-out old
    town coverage 8's (-19.5, 86.5): its arms to B (224 degrees, 12.7 m) and along the street
    that bends back toward A (248 degrees, to a video's end at the bend 9.8 m off) were one
    way, and the T was dropped. False: an arm to a dead end leads nowhere, as before. On
    since round thirty-four (branch knotc34): held-out old town seeds 5-9 one row better
    (coverage 8), 30 equal; the 120 kept twins equal."""
    through_stub_m: float | None = 10.0
    """A junction of three arms, two of them with lines on one axis (leaving it within
    ``same_way_deg`` of opposite ways) and the third without a line (fewer than
    ``min_poses`` poses) a street to a dead end whose passes all stay within this many metres
    of it and each turn back there from another street, is no branch point: a street walked
    straight through, and the way back of a walker's U-turn on another street cut at it
    (Helsinki wander+stops 0's (-480.1, -303.1): lines at 69 and 231 degrees; a walker came
    11 m from the junction at (-469.2, -299.8), turned back 6.2 m from the node and was cut
    there on the way back, 6.9 m off at most). A video that starts or ends a few metres up
    a side street (Helsinki one-way+stops 0's true T at (-229.0, -398.8), 7 m) is a side
    street. Such a node skips the ways test, which needs a line on every arm. None: off.
    On at 10 m since round thirty-two (branch stub32): without the vote pile's parting no
    row moves on 108 twins without OSM (28 suite, 56 unseen, 24 fresh Bulevardi and
    Kaisaniemi); with ``split_peaks_m`` 8 and ``knot_ways_m`` 15 Helsinki wander+stops 0
    is no longer worse than without the parting (P 0.967 -> 0.975, F1 0.921 -> 0.934) and
    no row moves else. Without the turn-back test (any such stub) one-way+stops 0's true T
    above was dropped (R 0.953 -> 0.945)."""
    fork_deg: float = 12.0
    """Two arms within ``same_way_deg`` whose lines both pass within ``through_m`` of the
    junction and differ by at least this much fork there (a shallow Y): two ways, not one."""
    through_m: float = 2.5
    """See ``fork_deg``: a line this close to the junction starts at it."""
    split_angle_deg: float = 35.0
    """Two arm lines crossing at least this steeply (axial) give a meeting point for
    :func:`split_junctions` (shallower crossings put it metres off along the lines)."""
    split_link_m: float = 5.0
    """Meeting points closer than this (single link) are one place."""
    split_min_m: float = 7.0
    """A junction splits when two places, each where two or more pairs of its arm lines
    meet, lie at least this far apart: two junctions 8-10 m apart (a street across both
    carriageways of a divided road, an old-town triangle) that the 8 m merge fused."""
    side_by_side_arms: int = 5
    """A junction with this many arm lines or more, two of which leave it the same way on
    opposite sides of it, is split in two however close their meeting places lie (see
    :func:`_side_by_side`): a cross street over two streets side by side fused into one
    junction has five or six arms. With four (two T-junctions fused) the rule also split
    old-town staggered T-junctions 7 m apart, which a camera cannot tell from one crossing
    (the scorer contracts streets under 8 m): accuracy twins, old town coverage seed 0
    P 1.000 -> 0.958, wander+stops seed 0 F1 0.764 -> 0.711."""
    side_by_side_gap_m: float | None = 9.0
    """A junction with fewer arm lines than ``side_by_side_arms`` (three or more) is split
    all the same when its two same-way arms on opposite sides of it (see
    :func:`_side_by_side`), or else two arms leaving it opposite ways (:func:`_staggered`),
    run at least this far apart, measured across them: two T-junctions 9-15 m apart on one
    street, their side streets leaving it on one side or on both, which the crossing votes
    chained into one junction (walkers go straight through, so no turn tells them apart).
    Side streets closer than the scorer's 8 m are one place to it (old-town staggered
    T-junctions 6-8 m apart), so the gap stays above that: 8 m (8.5 m for opposite ways)
    lowered suite and unseen-window rows without OSM (design notes, part nine). None: off."""
    far_gap_m: float | None = 10.0
    """A junction of three or four arm lines whose two same-way arms on opposite sides of it
    run closer than ``side_by_side_gap_m`` near it is split all the same when the two are
    different streets whose centre lines ``far_m`` .. ``far_reach_m`` out lie at least this
    far apart (:meth:`_FarLines.apart`): two T-junctions 9-11 m apart whose side streets leave one
    way, side by side, and whose near arms tilt towards the fused junction (passes turning at
    either T cut the corner), so that they measure 7-9 m there (Helsinki SE (121, -36) /
    (131, -36)). A shallow fork's branches also lie apart out there but meet at the node, so
    the near gap must still be ``through_m`` on either side. None: off."""
    split_own_arms_m: float | None = 6.0
    """A junction whose arm lines meet at exactly two places, at least this far apart but
    closer than ``split_min_m``, each with an arm of its own (an arm line that meets others
    only there), is a candidate pair; it splits when lines fitted to the same arms
    ``near_m`` .. ``split_own_arms_far_m`` out also meet at two places ``split_min_m`` or
    more apart (those become the junctions). Two T-junctions 8-15 m apart on one street (a
    staggered crossing) whose side streets' lines meet the through street one place per
    side street: passes turning at either T cut its corners within 8-10 m of it, and a pass
    walked diagonally across from one side street into the other tilts a side street's line
    near the fused junction, so its places come out 6-7 m apart (old town (-68.7, -39.2) /
    (-56.7, -37.1), 12 m apart, coverage seed 0: 6.2 m with lines to 18 m, 7.2 m with lines
    to 30 m). None: off. On at 6 m since round twenty-seven (branch half27), with
    ``split_own_arms_jog_m`` and the scorer reading a place's built junctions at the true
    junctions they stand by: on 129 cached twins without OSM old town coverage 0 reaches
    target (R 0.905 -> 0.952, F1 0.833 -> 0.917), no row worse (design notes, round
    twenty-seven)."""
    split_own_arms_beside: bool = True
    """See ``split_own_arms_m``: a candidate that no pass walks across (no jog to read)
    splits all the same when an own arm of one place and an own arm of the other leave it
    within ``same_way_deg`` of each other and their lines run ``split_own_arms_jog_m`` or
    more apart across (centres, one common direction, as the jog): two streets come in
    side by side, one to each place; one crossing has no two streets leaving it the same
    way (its side streets' own arms leave opposite ways). Old town wander+stops seed 1's
    knot of three Ts, (-35.8, 82.3) / (-27.6, 79.0) 8.8 m apart, two parallel streets from
    the south-west: lines 7.7 m apart, no pass from one into the other; its places came out
    6.2 m apart once ``JunctionParams.quiet_turn_backs`` took a false junction 50 m away
    (7.4 m with it). On since round twenty-eight (branch turnback28): alone it moves none
    of 129 cached twins without OSM; with ``quiet_turn_backs`` it keeps that pair (R 1.000,
    F1 1.000, where 0.950 / 0.892 without it). False: off."""
    split_bridged: bool = True
    """See ``split_min_m``: a junction of five arm lines (``split_bridged_max_lines``) whose
    meeting places chain into one group (``split_link_m``) is split all the same when, with
    one line left out, its places lie ``split_min_m`` or more apart, and that holds for
    exactly one line: a line through neither place, crossing the others between them,
    links the two groups. A street walked to a dead end from both junctions of a pair,
    grouped as one arm: the Erottaja knot without OSM, (142.6, 132.7) / (151.3, 132.7) in
    fresh Bulevardi, 8.7 m apart, the bend round (144.0, 143.0) walked from both; in
    coverage seed 2 one line at 346 degrees through (146.1, 137.5) crosses the others at
    (147.8, 130.6), (147.4, 132.4), (146.3, 136.9) and chains the places (143.4, 131.6) and
    (152.1, 131.3) into one. The suite's Helsinki twins hold the same knot at
    (-47.6, -556.7) / (-38.3, -556.2). False: every chain is one place (before round
    thirty-two). On since round thirty-two (branch bul32): without OSM on 108 kept twins
    (the suite's 28, the unseen windows' 56, fresh Bulevardi's and Kaisaniemi's 24) 4 rows
    better in P, R and F1 (Bulevardi coverage 2 R 0.933 -> 1.000, to target; Helsinki
    coverage 1, one-way 1, wander 0 R +0.008-0.016), none worse in P, R or F1; turns fall
    in three (Bulevardi coverage 2 0.943 -> 0.858, the knot's bent arms now scored;
    Helsinki wander 0 0.975 -> 0.969; Nerima SW wander 9 1.000 -> 0.975)."""
    split_bridged_max_lines: int = 5
    """See ``split_bridged``: at most this many arm lines. Two 4-way junctions joined by a
    link have six arms, five with a bend grouped as one; a knot of footpaths round a square
    (fresh Kaisaniemi coverage seed 2 without OSM, (-26.7, -124.4), eight lines) gives a
    place 14 m from any true junction with one line left out."""
    split_own_arms_far_m: float | None = 30.0
    """See ``split_own_arms_m``: how far out the confirming lines reach, metres; None: no
    confirmation (the candidate's near places are the junctions)."""
    split_own_arms_jog_m: float | None = 5.0
    """See ``split_own_arms_m``: a candidate splits only when a pass walks from one place's
    own arm into the other's and its two legs (``near_m`` .. ``split_own_arms_far_m`` out,
    fitted with one common direction) lie at least this far apart across it, the median
    over such passes: the walker jogged along the through street from one T to the other.
    One walker's two legs carry the same GPS error, so the jog is the streets' own offset;
    the arm lines of a single crossing whose side streets each carry one pass (a one-way
    walk turning at every corner) sit a sidewalk and two GPS errors apart, 6-8 m on
    Helsinki's wide streets, and their places split it in two. On the cached twins
    (design notes, round twenty-seven, branch fused27) no single crossing where the rule
    fired has such a pass; where one has (the rule not firing), it jogs 1.2-2.1 m. Across
    true pairs 7-12 m apart passes jog 4.3-7.5 m (the old town's 7.2 m pair 5.1-6.9 m,
    old town coverage 0's Ts 7.1 m), 2.3-3.8 m at two Helsinki pairs whose split leaves a
    half 4-5 m off and 2.5 m at two more (kept one). 5 m keeps every single crossing
    whole. A candidate with no such pass stays one. None: no jog needed (round
    twenty-six's rule)."""
    split_own_arms_jogged_far_m: float | None = 6.0
    """See ``split_own_arms_m``: a candidate across which a pass jogs
    ``split_own_arms_jog_m`` or more (a walker's own offset from one T to the other, not
    two GPS errors) splits when its confirming places ``split_own_arms_far_m`` out lie at
    least this far apart, metres, instead of ``split_min_m``. Helsinki wander 0's
    (48.7, -110.6) / (41.5, -116.2), 9.1 m apart joined by a diagonal street: jog 5.2 m,
    near places 6.8 m, far places 6.1 m; one 4-way junction was built 4-6 m from both.
    None: ``split_min_m``. On at 6 m since round twenty-nine (branch rows29): on 129
    cached twins without OSM it fires on 8, each half 0.1-2.2 m from a true junction;
    Helsinki wander 0 (R 0.910 -> 0.918, F1 0.869 -> 0.880) and coverage+stops 36 (F1
    0.932 -> 0.936) better, no row worse; 38 fresh twins equal (design notes)."""
    forked_arm_deg: float | None = 40.0
    """Without OSM: an arm whose passes leave the junction along two directions at least this
    many degrees apart (each pass's mean direction ``near_m`` .. ``far_m`` out, grouped by the
    two widest apart) is two arms, a line each: a fork's two branches grouped as one street
    because they meet again at this junction (fresh Bulevardi's Erottaja knot B, its arm to
    the fork F: the diagonal and the branch round the corner, 60-70 degrees apart; pooled,
    their line runs between them and refine moves B 5.7 m off, wander+stops seed 0).
    Only for the move of :func:`refine_junctions` (the arms' ways and the other steps keep
    one line an arm). None: one line an arm. On at 40 degrees since round thirty-three
    (branch bknot33), with ``forked_arm_any`` False, ``forked_arm_tempers`` and
    ``forked_arm_from_m`` 4: without OSM on 139 twins (the 120 kept, the held-out old town
    seeds 5-7) 2 rows better in P, R and F1 (Bulevardi wander+stops 0 R 0.933 -> 1.000, F1
    0.918 -> 1.000, turns 0.992 -> 0.955; old town coverage 5 P 0.875 -> 0.913), none
    worse. Alone it was off (round thirty-three, branch bul33, at 40
    degrees, without OSM on 73 kept twins: the suite's 28, Bulevardi's and Kaisaniemi's 12
    each, the 21 unseen Helsinki twins): Bulevardi wander+stops 0 reaches every target
    (R 0.867 -> 1.000, F1 0.833 -> 1.000), but in P, R and F1 7 rows better, 4 worse and 7
    mixed, among them Bulevardi wander 0 (P 1.000 -> 0.917, R 0.857 -> 0.786), old town one-way 0
    (R 0.952 -> 0.857) and wander 0, unseen Kamppi coverage 6 (R 0.923 -> 0.846): the
    old town's knot, whose bent and straight streets between two junctions are such arms
    too, and Kaisaniemi's footpaths."""
    forked_arm_any: bool = False
    """See :attr:`forked_arm_deg`: any such arm; False: only an arm whose street's other node
    has two streets (the fork itself, its stem the other street), which leaves the old
    town's knot alone. Measured with ``forked_arm_deg`` 40 on the same 73 twins (round
    thirty-three, bul33): in P, R and F1 4 rows better (Bulevardi wander+stops 0 to 1.000 /
    1.000 / 1.000, Helsinki coverage+stops 0, old town coverage 2 and one-way+stops 0),
    2 mixed (Bulevardi wander 0: the knot's one node (152.3, 133.1) moved 6 m up to
    (150.7, 139.1) and dropped, F's node kept 13 m up, P 1.000 -> 0.917, R 0.857 -> 0.786;
    Kaisaniemi coverage 1 P up, F1 down), the others equal; False since bknot33, with
    ``forked_arm_tempers`` (which leaves Bulevardi wander 0's knot node alone)."""
    forked_arm_tempers: bool = True
    """See :attr:`forked_arm_deg`: the branches' two lines only temper a move the pooled arms
    make anyway, used where the pooled lines' crossing lies within ``max_shift_m`` (refine
    moves the junction) and the split lines' crossing lies nearer the junction than it.
    False: the split lines place the junction wherever they cross. Bulevardi wander+stops
    seed 0's B (153.8, 131.0): pooled 5.7 m off to (159.1, 128.8), split 2.7 m to
    (155.1, 133.4), 3.9 m from the true junction, kept. Bulevardi wander seed 0's knot node
    (152.3, 133.1), A and B as one: pooled 17.6 m off (beyond ``max_shift_m``, the node
    stays), split 6.2 m up to (150.7, 139.1), where it was dropped; now it stays."""
    forked_arm_from_m: float = 4.0
    """See :attr:`forked_arm_tempers`: the split lines are used only where the pooled lines
    would move the junction at least this far, metres: a move of a few metres is the arm
    lines' own scatter, and a fork's pooled line pulls its junction farther (Bulevardi
    wander+stops 0's B: 5.8 m). Chosen after seeing the rows (round thirty-three, bknot33):
    on 139 twins without OSM the first refine moves 13 junctions by the split lines, 4 of them
    pooled at 5.4-8.4 m (2 rows better, 2 equal), 9 at 2.1-3.5 m (Helsinki coverage+stops 0
    better; Kaisaniemi coverage 1 F1 0.790 -> 0.768 and held-out old town one-way+stops 7
    R 0.952 -> 0.905 worse, the rest equal or turns only). 0: any move."""
    side_by_side_parted_m: float | None = 6.0
    """Without OSM, for :func:`split_side_by_side` only: an arm whose street's passes group
    into two lines that run apart (:func:`~city360.pose_graph.segments.group_streets` with
    ``keep_apart``), leave the junction within ``side_by_side_parted_deg`` of each other and
    pass it on opposite sides at least this far apart (metres, across the two fitted lines
    at the junction) is two arm lines: a divided road's two carriageways grouped as one
    street because both their ends are junctions fused across them (the old town's 環七通り,
    8 m apart from (-127.7, 3.3) / (-119.7, 1.8) to the knot (-35.8, 82.3) / (-27.6, 79.0)),
    whose single line hides from :func:`_side_by_side` the two same-way arms it splits the
    fused knot by. None: one line an arm. Left off in round thirty-three (branch knot33): at
    6 m the held-out old town seeds 5-7 gained in 4 of 18 rows, but old town coverage 1
    (suite, at target) found the knot's (-27.6, 79.0) and kept a node 70 m down the
    carriageways, (-103.4, 21.8): P 0.952 -> 0.913. That node is two streets side by side
    grouped as one south-west of it and as two north-east of it, which
    ``ApartParams.parallel_near_m`` now drops (round thirty-four, branch knot34). On, with it
    and ``ApartParams.measured_from_m``, against main edc8e27 (without OSM): 120 kept twins 5
    rows better (old town coverage 1 P / R 0.952 / 0.952 -> 0.955 / 1.000, coverage 2 R
    0.952 -> 1.000, Helsinki coverage 1 P 0.969 -> 0.976, Kaisaniemi coverage 0 P 0.839 ->
    0.867, wander+stops 1 F1 0.765 -> 0.776 with turns 0.877 -> 0.867), none worse in P, R or
    F1; held-out old town seeds 5-8 5 better (one-way 5, one-way+stops 5, coverage 7,
    coverage 8, F1 of one-way+stops 7 with its turns 1.000 -> 0.912), none worse in P, R or
    F1."""
    side_by_side_parted_through_m: float = 0.5
    """See ``side_by_side_parted_m``: with a parted arm's two lines, the nearer of the two
    same-way lines :func:`_side_by_side` splits by may pass the junction this close (metres,
    instead of ``through_m``): the votes fuse the knot onto one carriageway as often as
    between them (old town coverage seed 7, 0.8 m off the western half and 5.3 m off the
    eastern; one-way+stops seed 7, 1.1 and 5.4 m)."""
    side_by_side_parted_deg: float = 7.0
    """See ``side_by_side_parted_m``: the two lines of a parted arm leave the junction at
    most this many degrees apart (carriageways run parallel; the old town knot's fitted
    lines: 1-4 degrees on seeds 5-7, 6.3-6.6 on seeds 9 and 10). At 10 it also split fresh
    Nerima mid coverage seed 1's (175.9, -113.4), two lines 7.2 degrees apart (P 1.000 ->
    0.960); at 25 (``same_way_deg``) fork branches grouped as one street, 14-21 degrees
    apart, in Helsinki coverage seeds 1 and 2. 5 (first chosen) missed seeds 9 and 10; 7 was
    chosen after seeing them (round thirty-three, knot33)."""
    bent_arm_near_m: float | None = None
    """Off by default; 10 m is the measured setting. For the ways test (``same_way_deg``)
    only: an arm whose line fitted to its poses ``near_m`` .. this many metres out leaves the
    junction at least ``bent_arm_deg`` off its full line (``near_m`` .. ``far_m``) goes the
    way of that nearer line. Its street bends within ``far_m``, and the full line cuts across
    the bend: fresh Bulevardi one-way seed 2's Erottaja junction (151.3, 132.7), whose east arm
    (79 degrees) turns south 17 m out, got a line at 137 degrees, within ``same_way_deg`` of
    the diagonal arm's 152, and was dropped as a node of two ways (round thirty-four,
    bknot34). At 10 m: 1 row of 120 kept twins better (that one, R 0.929 -> 1.000), none of
    the 31 held-out old town rows moved, but on fresh Bulevardi seeds 3 and 4 one row worse
    (wander 4: B found, so F is no longer a loop node and ``fused_forks`` moves it 17 m down
    the stem; P 0.909 -> 0.833) and none better, so it is off. None: off."""
    bent_arm_deg: float = 20.0
    """See ``bent_arm_near_m``: degrees between an arm's near and full lines for it to bend."""
    bent_arm_across_m: float = 0.25
    """See ``bent_arm_near_m``: the near poses' spread across their line (standard deviation,
    metres) is at most this: the arm's first metres run straight, not a blob of passes turning
    inside a vote pile (such blobs, 1.6-2.4 m across, gave lines at any heading and kept
    extras: suite Oakland coverage seed 1 (272.6, -498.2), fresh Kaisaniemi wander+stops seed 1
    (-5.2, -129.3); the Bulevardi arm: 0.02 m)."""
    split_lone_pair: bool = True
    """See ``split_own_arms_m``: a junction of four or more arm lines whose lines meet at one
    place (two pairs or more, three arms) and, apart from it, where only one pair meets, is
    read as a candidate pair of those two places, with the own-arm, jog and far-line tests
    as they stand (the far lines' places read the same way), except that a pass must walk
    across it (``split_own_arms_jog_m``, when that test is on): ``split_own_arms_beside``
    does not stand in. Two T-junctions 8-10 m apart on one street whose side streets leave
    it opposite ways (a jog: Helsinki SE (121.3, -36.4) / (131.0, -35.9), 9.7 m apart, its
    south street at the west T, a north and a south-south-east street at the east one): the
    south street's line crosses only the through street's steeply, so its place is met by
    one pair and the junction had one place. False: a place needs two pairs
    (``place_min_pairs``). On since round thirty-six (branch se36): without OSM on the 120
    kept twins 1 row better (unseen Helsinki SE coverage seed 5, R 0.947 -> 1.000, F1
    0.904 -> 0.973, to target), none worse; with the beside reading standing in for the
    jog it was 5 better, 3 worse (design notes)."""
    place_min_pairs: int = 2
    """How many pairs of arm lines must meet at a group of meeting points
    (``split_link_m``) for it to be a place of :func:`split_junctions`; a junction with
    fewer than twice this many meeting points has none."""
    far_reach_m: float = 45.0
    """See ``far_gap_m``: how far out the far centre lines reach, metres."""
    far_through_m: float | None = None
    """With ``far_gap_m``, two same-way arms may also pass the junction only this close on
    opposite sides (down to this, under ``through_m``): one side street's arm of a fused pair
    of T-junctions can tilt to 2 m from the fused junction (Helsinki SE coverage seed 5). 1.5
    brought three Helsinki SE rows to target (one unseen, two fresh) and lowered turn accuracy
    on two old-town suite rows (design notes, round twenty-three), so it is off: None."""


def _arm_points(
    track: Track, seg: Segment, node_xy: FloatArray, at_start: bool, params: RefineParams
) -> FloatArray:
    """Poses of ``seg`` from its end at the junction outwards, ``near_m`` .. ``far_m`` away,
    until the arm first leaves ``far_m``."""
    frames = np.arange(seg.first_frame, seg.last_frame + 1)
    if not at_start:
        frames = frames[::-1]
    dist = np.hypot(*(track.xy[frames] - node_xy).T)
    beyond = np.flatnonzero(dist > params.far_m)
    stop = int(beyond[0]) if beyond.size else len(frames)
    keep = frames[:stop][dist[:stop] >= params.near_m]
    return track.xy[keep]


def _ways(
    node_xy: FloatArray,
    lines: Sequence[tuple[FloatArray, FloatArray, float]],
    params: RefineParams,
    ends: Sequence[FloatArray | None] | None = None,
) -> int:
    """How many ways the arms ``lines`` (centre, unit axis, weight) leave ``node_xy`` by:
    arms within ``same_way_deg`` of each other (directed away from the node) are one way,
    unless they fork there (see :attr:`RefineParams.fork_deg`) or, with ``ends`` (per line,
    the junction its street leads to, None for a dead end), lead to two junctions of a knot
    (:attr:`RefineParams.knot_ways_m`)."""
    away, offset = [], []
    for centre, direction, _ in lines:
        out = centre - node_xy
        axis = direction if float(out @ direction) >= 0.0 else -direction
        away.append(np.degrees(np.arctan2(axis[0], axis[1])))
        offset.append(abs(float(out[0] * axis[1] - out[1] * axis[0])))
    same_way = []
    for a in range(len(lines)):
        for b in range(a + 1, len(lines)):
            diff = abs((away[a] - away[b] + 180.0) % 360.0 - 180.0)
            fork = diff >= params.fork_deg and max(offset[a], offset[b]) < params.through_m
            if diff < params.same_way_deg and not fork and not _knot(node_xy, ends, a, b, params):
                same_way.append((a, b))
    pairs = np.asarray(same_way, dtype=np.int64).reshape(-1, 2)
    return len(np.unique(linked_groups(len(lines), pairs)))


def _knot(
    node_xy: FloatArray,
    ends: Sequence[FloatArray | None] | None,
    a: int,
    b: int,
    params: RefineParams,
) -> bool:
    """Whether arms ``a`` and ``b`` lead to two different junctions both within
    :attr:`RefineParams.knot_ways_m` of ``node_xy``."""
    if params.knot_ways_m is None or ends is None:
        return False
    end_a, end_b = ends[a], ends[b]
    if end_a is None or end_b is None or np.allclose(end_a, end_b):
        return False
    reach = max(float(np.hypot(*(end_a - node_xy))), float(np.hypot(*(end_b - node_xy))))
    return reach <= params.knot_ways_m


def _arm_ends(
    junctions_xy: FloatArray,
    streets: Sequence[Street],
    poses: dict[tuple[int, int], FloatArray],
    params: RefineParams,
    dead_xy: FloatArray | None = None,
) -> dict[int, list[FloatArray | None]]:
    """Per junction, for each arm line of :func:`_arm_lines` in its order, the position of
    the node at the street's other end: a junction, or a dead end of ``dead_xy`` when given
    (None: a dead end without ``dead_xy``, or a loop back to itself)."""
    by_id = {street.id: street for street in streets}
    ends: dict[int, list[FloatArray | None]] = defaultdict(list)
    for node, street_id, _ in _lined_arms(poses, params):
        street = by_id[street_id]
        other = street.b if street.a == node else street.a
        if other < len(junctions_xy):
            ends[node].append(junctions_xy[other])
        elif dead_xy is not None:
            ends[node].append(np.asarray(dead_xy).reshape(-1, 2)[other - len(junctions_xy)])
        else:
            ends[node].append(None)
    return ends


def _unlined_arms(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    segments: Sequence[Segment],
    streets: Sequence[Street],
    poses: dict[tuple[int, int], FloatArray],
    params: RefineParams,
) -> dict[int, list[float | None]]:
    """Per junction, for each of its arms of ``poses`` (:func:`_arm_poses`) without a line
    (fewer than ``min_poses`` poses): when the street leads to a dead end where each of its
    passes turns back from (or into) a segment of its trajectory to another node, how far in
    metres its passes get from the junction; else None."""
    by_id = {street.id: street for street in streets}
    after = {(seg.track, seg.first_frame): seg for seg in segments}
    before = {(seg.track, seg.last_frame): seg for seg in segments}
    unlined: dict[int, list[float | None]] = defaultdict(list)
    for (node, street_id), points in poses.items():
        if len(points) >= params.min_poses:
            continue
        street = by_id[street_id]
        dead = street.b if street.a == node else street.a
        reach: float | None = None if dead < len(junctions_xy) else 0.0
        for i in (*street.forward, *street.backward):
            if reach is None:
                break
            seg = segments[i]
            if seg.u == dead:
                turned = before.get((seg.track, seg.first_frame))
                elsewhere = turned is not None and turned.u not in (node, dead)
            else:
                turned = after.get((seg.track, seg.last_frame))
                elsewhere = turned is not None and turned.v not in (node, dead)
            xy = tracks[seg.track].xy[seg.first_frame : seg.last_frame + 1]
            far = float(np.hypot(*(xy - junctions_xy[node]).T).max())
            reach = max(reach, far) if elsewhere else None
        unlined[node].append(reach)
    return unlined


def _through_stub(
    node_xy: FloatArray,
    lines: Sequence[tuple[FloatArray, FloatArray, float]],
    unlined: Sequence[float | None],
    params: RefineParams,
) -> bool:
    """Whether a junction whose arm lines are ``lines`` and whose arms without a line are
    ``unlined`` (:func:`_unlined_arms`) is a street walked straight through with a stub to a
    dead end beside it (:attr:`RefineParams.through_stub_m`)."""
    if params.through_stub_m is None or len(lines) != 2 or len(unlined) != 1:
        return False
    stub = unlined[0]
    if stub is None or stub > params.through_stub_m:
        return False
    away = []
    for centre, direction, _ in lines:
        axis = direction if float((centre - node_xy) @ direction) >= 0.0 else -direction
        away.append(float(np.degrees(np.arctan2(axis[0], axis[1]))))
    diff = abs((away[0] - away[1] + 180.0) % 360.0 - 180.0)
    return diff >= 180.0 - params.same_way_deg


def _arm_poses(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    segments: Sequence[Segment],
    streets: Sequence[Street],
    params: RefineParams,
) -> dict[tuple[int, int], FloatArray]:
    """Per (junction, street) the poses (N, 2) of the street's arm at the junction, every pass
    pooled (:func:`_arm_points`), junctions in the order their streets come."""
    arms: dict[tuple[int, int], list[FloatArray]] = defaultdict(list)
    for street in streets:
        if street.a == street.b:
            continue
        for i in (*street.forward, *street.backward):
            seg = segments[i]
            for node, at_start in ((seg.u, True), (seg.v, False)):
                if node < len(junctions_xy):
                    points = _arm_points(
                        tracks[seg.track], seg, junctions_xy[node], at_start, params
                    )
                    arms[(node, street.id)].append(points)
    return {key: np.concatenate(parts) for key, parts in arms.items()}


def _lined_arms(
    poses: dict[tuple[int, int], FloatArray], params: RefineParams
) -> Iterator[tuple[int, int, FloatArray]]:
    """(junction, street, poses) of each arm of ``poses`` (:func:`_arm_poses`) with
    ``min_poses`` poses or more, in its order: the arms :func:`_arm_lines` fits a line to."""
    for (node, street), points in poses.items():
        if len(points) >= params.min_poses:
            yield node, street, points


def _arm_lines(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    segments: Sequence[Segment],
    streets: Sequence[Street],
    params: RefineParams,
    poses: dict[tuple[int, int], FloatArray] | None = None,
    *,
    forked: bool = False,
    parted: bool = False,
) -> tuple[dict[int, list[tuple[FloatArray, FloatArray, float]]], dict[int, int]]:
    """Per junction: the centre lines (centre, unit axis, weight) of its arms that have
    ``min_poses`` poses, and how many arms it has. ``poses``: :func:`_arm_poses` of the same
    arguments, when the caller has them. ``forked``, ``parted``: an arm split in two as
    :func:`_forked_arms`, :func:`_parted_arms` do (when their parameter is set)."""
    if poses is None:
        poses = _arm_poses(tracks, junctions_xy, segments, streets, params)
    lines_of: dict[int, list[tuple[FloatArray, FloatArray, float]]] = defaultdict(list)
    arm_count: dict[int, int] = defaultdict(int)
    for node, _ in poses:
        arm_count[node] += 1
    lined = list(_lined_arms(poses, params))
    if forked and params.forked_arm_deg is not None:
        lined = _forked_arms(tracks, junctions_xy, segments, streets, lined, params, arm_count)
    if parted and params.side_by_side_parted_m is not None:
        lined = _parted_arms(tracks, junctions_xy, segments, streets, lined, params)
    for node, _, points in lined:
        centre, direction = principal_axis(points)
        reach = np.hypot(*(points - junctions_xy[node]).T)
        if reach.max() < params.far_m - params.near_m:
            # a stub walked in and back (a V of two legs): its axis runs from the legs'
            # centroid to the apex, which SVD of an uneven V tilts
            apex = points[reach >= reach.max() - 1.0].mean(axis=0)
            if np.hypot(*(apex - centre)) > 1.0:
                direction = (apex - centre) / np.hypot(*(apex - centre))
        lines_of[node].append((centre, direction, 1.0))
    return lines_of, arm_count


def _forked_arms(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    segments: Sequence[Segment],
    streets: Sequence[Street],
    lined: Sequence[tuple[int, int, FloatArray]],
    params: RefineParams,
    arm_count: dict[int, int],
) -> list[tuple[int, int, FloatArray]]:
    """``lined`` with each arm made two whose street's passes group into two lines that run
    apart (:func:`~city360.pose_graph.segments.group_streets` with ``keep_apart``) and leave
    the junction ``forked_arm_deg`` or more apart (``arm_count`` counts the second)."""
    assert params.forked_arm_deg is not None
    by_id = {street.id: street for street in streets}
    degree: dict[int, int] = defaultdict(int)
    for street in streets:
        degree[street.a] += 1
        degree[street.b] += 1
    apart_cos = float(np.cos(np.radians(params.forked_arm_deg)))

    def forked(node: int, street_id: int) -> list[FloatArray]:
        street = by_id[street_id]
        other = street.b if street.a == node else street.a
        if not (params.forked_arm_any or degree[other] == 2):
            return []
        parts = _two_lines(tracks, junctions_xy[node], node, segments, street, params)
        if not parts:
            return []
        units = []
        for part in parts:
            mean = (part - junctions_xy[node]).mean(axis=0)
            units.append(mean / max(float(np.hypot(*mean)), 1e-9))
        return parts if float(units[0] @ units[1]) <= apart_cos else []

    out, split = _arms_made_two(lined, forked)
    for node in split:
        arm_count[node] += 1
    return out


def _two_lines(
    tracks: Sequence[Track],
    node_xy: FloatArray,
    node: int,
    segments: Sequence[Segment],
    street: Street,
    params: RefineParams,
) -> list[FloatArray]:
    """The arm points at ``node`` of ``street``'s passes, as two lines where they group into
    two that run apart (:func:`~city360.pose_graph.segments.group_streets` with
    ``keep_apart``), each with ``min_poses`` or more; else none."""
    members = [*street.forward, *street.backward]
    if len(members) < 2 or street.a == street.b:
        return []
    again, _ = group_streets(tracks, [segments[i] for i in members], keep_apart=True)
    if len(again) != 2:
        return []
    parts = [
        np.concatenate(
            [
                _arm_points(
                    tracks[segments[members[k]].track],
                    segments[members[k]],
                    node_xy,
                    segments[members[k]].u == node,
                    params,
                )
                for k in (*line.forward, *line.backward)
            ]
        )
        for line in again
    ]
    return parts if min(len(p) for p in parts) >= params.min_poses else []


def _parted_arms(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    segments: Sequence[Segment],
    streets: Sequence[Street],
    lined: Sequence[tuple[int, int, FloatArray]],
    params: RefineParams,
) -> list[tuple[int, int, FloatArray]]:
    """``lined`` with each arm made two whose street's passes group into two lines that run
    apart, leave the junction within ``side_by_side_parted_deg`` of each other and pass it on
    opposite sides ``side_by_side_parted_m`` or more apart (see
    :attr:`RefineParams.side_by_side_parted_m`)."""
    assert params.side_by_side_parted_m is not None
    apart_m = params.side_by_side_parted_m
    by_id = {street.id: street for street in streets}

    def parted(node: int, street_id: int) -> list[FloatArray]:
        node_xy = junctions_xy[node]
        parts = _two_lines(tracks, node_xy, node, segments, by_id[street_id], params)
        if not parts:
            return []
        fitted = [principal_axis(part) for part in parts]
        _, away, side = _directions(node_xy, [(c, d, 1.0) for c, d in fitted])
        diff = abs((away[0] - away[1] + 180.0) % 360.0 - 180.0)
        apart = (
            diff <= params.side_by_side_parted_deg
            and side[0] * side[1] < 0.0
            and abs(side[0] - side[1]) >= apart_m
        )
        return parts if apart else []

    return _arms_made_two(lined, parted)[0]


def _arms_made_two(
    lined: Sequence[tuple[int, int, FloatArray]],
    split: Callable[[int, int], list[FloatArray]],
) -> tuple[list[tuple[int, int, FloatArray]], list[int]]:
    """``lined`` with each arm ``(junction, street, poses)`` replaced by one arm per part
    ``split(junction, street)`` returns (none: the arm stays whole), and the junctions of the
    arms made two, once per arm."""
    out: list[tuple[int, int, FloatArray]] = []
    split_at: list[int] = []
    for node, street_id, points in lined:
        parts = split(node, street_id)
        if parts:
            out.extend((node, street_id, part) for part in parts)
            split_at.append(node)
        else:
            out.append((node, street_id, points))
    return out, split_at


def refine_junctions(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    segments: Sequence[Segment],
    streets: Sequence[Street],
    params: RefineParams | None = None,
    *,
    dead_xy: FloatArray | None = None,
) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """Junction positions (J, 2) moved to where their arms' centre lines meet (see the module
    docstring), and which junctions are branch points at all (False: every arm runs one way,
    ``parallel_spread``). Node ids are those of
    :func:`city360.pose_graph.segments.cut_tracks` (``0 .. J-1`` are the junctions, then the
    dead ends ``dead_xy``, which :attr:`RefineParams.knot_dead_ends` reads when given)."""
    params = params or RefineParams()
    junctions_xy = np.asarray(junctions_xy, dtype=np.float64).reshape(-1, 2)
    poses = _arm_poses(tracks, junctions_xy, segments, streets, params)
    lines_of, arm_count = _arm_lines(tracks, junctions_xy, segments, streets, params, poses)
    # where a fork's two branches are one street, a line each for the move (not for the ways)
    placing_of = (
        lines_of
        if params.forked_arm_deg is None
        else _arm_lines(tracks, junctions_xy, segments, streets, params, poses, forked=True)[0]
    )
    dead = dead_xy if params.knot_dead_ends else None
    ends = (
        _arm_ends(junctions_xy, streets, poses, params, dead)
        if params.knot_ways_m is not None
        else {}
    )
    stubs = (
        None
        if params.through_stub_m is None
        else _unlined_arms(tracks, junctions_xy, segments, streets, poses, params)
    )
    bent_of = _bent_lines(junctions_xy, poses, lines_of, params)
    refined = junctions_xy.copy()
    branching = np.ones(len(junctions_xy), dtype=bool)
    for node, lines in lines_of.items():
        if len(lines) < 2:
            continue
        if len(lines) >= 3 and len(lines) == arm_count[node]:
            ways = _ways(junctions_xy[node], lines, params, ends.get(node))
            if node in bent_of:  # a bent arm's nearer line may part two ways, never join them
                ways = max(ways, _ways(junctions_xy[node], bent_of[node], params, ends.get(node)))
            branching[node] = ways >= 3
        elif stubs is not None and _through_stub(junctions_xy[node], lines, stubs[node], params):
            branching[node] = False
        lhs, rhs = _normal_equations(lines)
        spread = float(np.linalg.eigvalsh(lhs / len(lines))[0])
        if len(lines) >= 3 and spread < params.parallel_spread:
            branching[node] = False
        if spread < params.min_spread:
            continue
        if len(placing_of[node]) != len(lines):
            lhs, rhs = _forked_placing(junctions_xy[node], lhs, rhs, placing_of[node], params)
        point = np.linalg.solve(lhs, rhs)
        if np.hypot(*(point - junctions_xy[node])) <= params.max_shift_m:
            refined[node] = point
    return refined, branching


def _bent_lines(
    junctions_xy: FloatArray,
    poses: dict[tuple[int, int], FloatArray],
    lines_of: dict[int, list[tuple[FloatArray, FloatArray, float]]],
    params: RefineParams,
) -> dict[int, list[tuple[FloatArray, FloatArray, float]]]:
    """Per junction with a bent arm (:attr:`RefineParams.bent_arm_near_m`), its arm lines
    (those of :func:`_arm_lines`, in order) with each bent arm's line fitted to its nearer
    poses; junctions without one are absent."""
    near_m = params.bent_arm_near_m
    if near_m is None:
        return {}
    min_cos = np.cos(np.radians(params.bent_arm_deg))
    bent_of: dict[int, list[tuple[FloatArray, FloatArray, float]]] = {}
    at: dict[int, int] = defaultdict(int)
    for node, _, points in _lined_arms(poses, params):
        k = at[node]
        at[node] += 1
        near = points[np.hypot(*(points - junctions_xy[node]).T) <= near_m]
        if len(near) < params.min_poses:
            continue
        centre, direction = principal_axis(near)
        if abs(float(direction @ lines_of[node][k][1])) > min_cos:
            continue
        across = (near - centre) @ np.array([-direction[1], direction[0]])
        if float(np.std(across)) > params.bent_arm_across_m:
            continue
        bent = bent_of.setdefault(node, list(lines_of[node]))
        bent[k] = (centre, direction, 1.0)
    return bent_of


def _forked_placing(
    node_xy: FloatArray,
    lhs: FloatArray,
    rhs: FloatArray,
    forked_lines: Sequence[tuple[FloatArray, FloatArray, float]],
    params: RefineParams,
) -> tuple[FloatArray, FloatArray]:
    """The normal equations refine moves a junction by: those of ``forked_lines`` (its arms
    with a fork's branches a line each, :attr:`RefineParams.forked_arm_deg`) instead of the
    pooled arms' ``lhs``, ``rhs``, unless :attr:`RefineParams.forked_arm_tempers` holds them
    back."""
    forked_lhs, forked_rhs = _normal_equations(forked_lines)
    if not params.forked_arm_tempers:
        return forked_lhs, forked_rhs
    pooled_m = float(np.hypot(*(np.linalg.solve(lhs, rhs) - node_xy)))
    forked_m = float(np.hypot(*(np.linalg.solve(forked_lhs, forked_rhs) - node_xy)))
    if params.forked_arm_from_m <= pooled_m <= params.max_shift_m and forked_m < pooled_m:
        return forked_lhs, forked_rhs
    return lhs, rhs


def _places(
    node_xy: FloatArray,
    lines: Sequence[tuple[FloatArray, FloatArray, float]],
    params: RefineParams,
) -> list[FloatArray]:
    """Where pairs of ``lines`` crossing at ``split_angle_deg`` or more meet within
    ``max_shift_m`` of ``node_xy``, grouped (``split_link_m``); the median of each group met
    by at least two pairs."""
    return [place for place, _ in _places_and_arms(node_xy, lines, params)]


def _places_and_arms(
    node_xy: FloatArray,
    lines: Sequence[tuple[FloatArray, FloatArray, float]],
    params: RefineParams,
) -> list[tuple[FloatArray, set[int]]]:
    """:func:`_places`, each with the indices of the ``lines`` that meet there."""
    points = []
    pairs: list[tuple[int, int]] = []
    min_sin = np.sin(np.radians(params.split_angle_deg))
    for a in range(len(lines)):
        for b in range(a + 1, len(lines)):
            (ca, da, _), (cb, db, _) = lines[a], lines[b]
            cross = float(da[0] * db[1] - da[1] * db[0])
            if abs(cross) < min_sin:
                continue
            w = cb - ca
            t = float(w[0] * db[1] - w[1] * db[0]) / cross
            point = ca + t * da
            if np.hypot(*(point - node_xy)) <= params.max_shift_m:
                points.append(point)
                pairs.append((a, b))
    if len(points) < 2 * params.place_min_pairs:
        return []
    xy = np.asarray(points)
    near = [
        (a, b)
        for a in range(len(xy))
        for b in range(a + 1, len(xy))
        if np.hypot(*(xy[a] - xy[b])) < params.split_link_m
    ]
    labels = linked_groups(len(xy), np.asarray(near, dtype=np.int64).reshape(-1, 2))
    groups = [np.flatnonzero(labels == label) for label in range(int(labels.max()) + 1)]
    return [
        (np.median(xy[members], axis=0), {arm for k in members.tolist() for arm in pairs[k]})
        for members in groups
        if len(members) >= params.place_min_pairs
    ]


def _bridged(
    node_xy: FloatArray,
    lines: Sequence[tuple[FloatArray, FloatArray, float]],
    params: RefineParams,
) -> list[FloatArray]:
    """With five to ``split_bridged_max_lines`` ``lines``: the places (:func:`_places`) of
    the lines but one, when they lie ``split_min_m`` or more apart for exactly one line left
    out; else empty."""
    if not 5 <= len(lines) <= params.split_bridged_max_lines:
        return []
    found = []
    for left_out in range(len(lines)):
        places = _places(node_xy, [line for k, line in enumerate(lines) if k != left_out], params)
        if len(places) >= 2 and all(
            np.hypot(*(places[a] - places[b])) >= params.split_min_m
            for a in range(len(places))
            for b in range(a + 1, len(places))
        ):
            found.append(places)
    return found[0] if len(found) == 1 else []


def _own_arms(
    node_xy: FloatArray,
    lines: Sequence[tuple[FloatArray, FloatArray, float]],
    params: RefineParams,
) -> list[FloatArray]:
    """The two places of ``lines`` (:func:`_places_and_arms`) when there are exactly two,
    ``split_own_arms_m`` or more apart, and each has an arm line that meets others only
    there (see :attr:`RefineParams.split_own_arms_m`), else []. An arm line that crosses no
    other steeply enough meets nowhere and is nobody's own."""
    if params.split_own_arms_m is None:
        return []
    found = _places_and_arms(node_xy, lines, params)
    if len(found) != 2:
        return []
    (first, arms_first), (second, arms_second) = found
    if np.hypot(*(first - second)) < params.split_own_arms_m:
        return []
    if not arms_first - arms_second or not arms_second - arms_first:
        return []
    return [first, second]


_ACROSS_DEG = 135.0
"""A pass's two legs at a junction at least this far apart (directed away from it) walk
across it, on into the street beyond; nearer, it turned back into a street leaving the same
side (old town wander+stops 1's (-29.3, 81.2): legs 17 degrees apart, 0.4 m "jog")."""


def _own_arms_jog(
    tracks: Sequence[Track],
    segments: Sequence[Segment],
    street_of: dict[int, int],
    node: int,
    node_xy: FloatArray,
    own: tuple[set[int], set[int]],
    params: RefineParams,
) -> float | None:
    """The median jog, metres, of the passes that walk across junction ``node`` from a
    street of ``own[0]`` into one of ``own[1]`` or back (street ids; ``street_of``: per
    segment index its street; legs ``_ACROSS_DEG`` or more apart): how far apart across
    them a pass's two legs ``near_m`` .. ``split_own_arms_far_m`` out run (one direction
    fitted to both legs, each about its own centroid). None when no pass does (see
    :attr:`RefineParams.split_own_arms_jog_m`)."""
    reach = replace(params, far_m=params.split_own_arms_far_m or params.far_m)
    jogs = []
    for i in range(len(segments) - 1):
        into, out = segments[i], segments[i + 1]
        if into.track != out.track or into.v != node or out.u != node:
            continue
        came, went = street_of.get(i), street_of.get(i + 1)
        if not ((came in own[0] and went in own[1]) or (came in own[1] and went in own[0])):
            continue
        track = tracks[into.track]
        legs = (
            _arm_points(track, into, node_xy, False, reach),
            _arm_points(track, out, node_xy, True, reach),
        )
        if min(len(leg) for leg in legs) < params.min_poses:
            continue
        centres = [leg.mean(axis=0) for leg in legs]
        out_of = [centre - node_xy for centre in centres]
        cos_between = float(out_of[0] @ out_of[1]) / float(
            np.hypot(*out_of[0]) * np.hypot(*out_of[1]) or 1.0
        )
        if cos_between > np.cos(np.radians(_ACROSS_DEG)):
            continue  # it turned back into a street leaving the same side: no jog to read
        _, _, vt = np.linalg.svd(
            np.concatenate([leg - centre for leg, centre in zip(legs, centres, strict=True)]),
            full_matrices=False,
        )
        across = centres[1] - centres[0]
        jogs.append(abs(float(across[0] * vt[0][1] - across[1] * vt[0][0])))
    return float(np.median(jogs)) if jogs else None


def _own_arms_beside(
    node_xy: FloatArray,
    lines: Sequence[tuple[FloatArray, FloatArray, float]],
    params: RefineParams,
) -> float | None:
    """How far apart across, metres, the widest pair of arm lines runs of which one is the
    first place's own and one the second's (:func:`_places_and_arms`) and which leave the
    node within ``same_way_deg`` of each other: two streets coming in side by side, one to
    each place. Measured as the jog is (:func:`_own_arms_jog`): the lines' centres (where
    their poses are) across one common direction. None when no such pair (see
    :attr:`RefineParams.split_own_arms_beside`)."""
    (_, first), (_, second) = _places_and_arms(node_xy, lines, params)
    axes, away, _ = _directions(node_xy, lines)
    gaps = []
    for a in first - second:
        for b in second - first:
            if abs((away[a] - away[b] + 180.0) % 360.0 - 180.0) >= params.same_way_deg:
                continue
            common = axes[a] + axes[b]
            common = common / np.hypot(*common)
            across = lines[b][0] - lines[a][0]
            gaps.append(abs(float(across[0] * common[1] - across[1] * common[0])))
    return max(gaps) if gaps else None


def _own_streets(
    node_xy: FloatArray,
    lines: Sequence[tuple[FloatArray, FloatArray, float]],
    line_streets: Sequence[int],
    params: RefineParams,
) -> tuple[set[int], set[int]]:
    """The street ids (``line_streets``: per line its street) of the arms that each of the
    two places of ``lines`` (:func:`_places_and_arms`) owns: arm lines that meet others only
    there."""
    (_, first), (_, second) = _places_and_arms(node_xy, lines, params)
    return {line_streets[k] for k in first - second}, {line_streets[k] for k in second - first}


def _normal_equations(
    lines: Sequence[tuple[FloatArray, FloatArray, float]],
) -> tuple[FloatArray, FloatArray]:
    """``(lhs, rhs)`` of the least-squares point nearest all ``lines`` (centre, unit axis,
    weight): the weighted sum of each line's normal projector, and of it times its centre."""
    lhs = np.zeros((2, 2))
    rhs = np.zeros(2)
    for centre, direction, weight in lines:
        projector = np.eye(2) - np.outer(direction, direction)
        lhs += weight * projector
        rhs += weight * projector @ centre
    return lhs, rhs


def _meet(lines: Sequence[tuple[FloatArray, FloatArray, float]]) -> FloatArray:
    """The point nearest all ``lines`` (centre, unit axis, weight), least squares."""
    lhs, rhs = _normal_equations(lines)
    return np.asarray(np.linalg.solve(lhs, rhs), dtype=np.float64)


def _staggered(
    lines: Sequence[tuple[FloatArray, FloatArray, float]],
    axes: Sequence[FloatArray],
    away: Sequence[float],
    params: RefineParams,
    min_gap_m: float,
) -> tuple[float, int, int] | None:
    """(gap, a, b): the two of ``lines`` (centre, unit axis, weight; ``axes`` directed away
    from the junction, ``away`` their bearings, degrees) that leave it opposite ways
    (within ``same_way_deg`` of 180 degrees apart) along lines at least ``min_gap_m`` apart,
    measured across them, the farthest apart such pair; else None. Two T-junctions on one
    street whose side streets leave it on opposite sides, 9-15 m apart (a staggered
    crossing), fused into one junction: a true crossing's opposite arms run along one line."""
    best: tuple[float, int, int] | None = None
    for a in range(len(lines)):
        for b in range(a + 1, len(lines)):
            diff = abs((away[a] - away[b] + 180.0) % 360.0 - 180.0)
            across = lines[b][0] - lines[a][0]
            gap = abs(float(across[0] * axes[a][1] - across[1] * axes[a][0]))
            opposite_ways = diff > 180.0 - params.same_way_deg
            if opposite_ways and gap >= min_gap_m and (best is None or gap > best[0]):
                best = (gap, a, b)
    return best


def _side_by_side(
    node_xy: FloatArray,
    lines: Sequence[tuple[FloatArray, FloatArray, float]],
    params: RefineParams,
    *,
    min_gap_m: float = 0.0,
    far_apart: Callable[[int, int], bool] | None = None,
) -> list[FloatArray]:
    """Two junctions for a junction fused between two streets side by side, else [].

    Two of the arm ``lines`` (centre, unit axis, weight) that leave ``node_xy`` the same way
    (within ``same_way_deg``, directed away from it) along centre lines passing it on
    opposite sides, each at least ``through_m`` from it, are two streets side by side (a
    divided road's carriageways, two parallel lanes 8-10 m apart) whose junctions with a
    cross street the 8 m merge fused into one between them. Each gets its own junction where
    its line meets the lines crossing it at ``split_angle_deg`` or more; the two must lie
    ``split_link_m`` or more apart and within ``max_shift_m`` of the node. (The pairwise
    meeting places of :func:`_places` do not see this: the arms of a fused junction tilt
    towards it, as passes turning at either junction cut the corner within a few metres, and
    the places of the cross street with both sides and with a third arm between them chain
    into one group.) With ``min_gap_m`` the two same-way lines must also lie that far apart,
    measured across them, and if no two do, two arms leaving it opposite ways that far apart
    are split the same way (:func:`_staggered`; see :attr:`RefineParams.side_by_side_gap_m`).
    ``far_apart(a, b)`` (indices into ``lines``) may pass two same-way lines closer than
    ``min_gap_m`` (see :attr:`RefineParams.far_gap_m`); their junctions are then the points
    of the two lines nearest the node (:func:`_feet`)."""
    axes, away, side = _directions(node_xy, lines)
    best = _widest_same_way_pair(away, side, params, lambda gap: gap >= params.through_m)
    if best is not None and abs(side[best[1]] - side[best[2]]) < min_gap_m:
        if far_apart is not None and far_apart(best[1], best[2]):
            return _feet(node_xy, [lines[best[1]], lines[best[2]]])
        best = None
    if best is None and min_gap_m > 0.0:
        best = _staggered(lines, axes, away, params, min_gap_m)
    if best is None:
        return []
    min_sin = np.sin(np.radians(params.split_angle_deg))
    places = []
    for k in best[1:]:
        crossing = [
            line
            for line, axis in zip(lines, axes, strict=True)
            if abs(float(axis[0] * axes[k][1] - axis[1] * axes[k][0])) >= min_sin
        ]
        if not crossing:
            return []
        place = _meet([lines[k], *crossing])
        if np.hypot(*(place - node_xy)) > params.max_shift_m:
            return []
        places.append(place)
    if np.hypot(*(places[0] - places[1])) < params.split_link_m:
        return []
    return places


def _directions(
    node_xy: FloatArray, lines: Sequence[tuple[FloatArray, FloatArray, float]]
) -> tuple[list[FloatArray], list[float], list[float]]:
    """Per line (centre, unit axis, weight): its axis directed away from ``node_xy``, that
    axis's bearing (degrees), and on which side of the node the line passes (signed metres)."""
    away, side, axes = [], [], []
    for centre, direction, _ in lines:
        out = centre - node_xy
        axis = direction if float(out @ direction) >= 0.0 else -direction
        axes.append(axis)
        away.append(float(np.degrees(np.arctan2(axis[0], axis[1]))))
        side.append(float(out[0] * axis[1] - out[1] * axis[0]))  # signed: which side of node
    return axes, away, side


def _widest_same_way_pair(
    away: Sequence[float],
    side: Sequence[float],
    params: RefineParams,
    admits: Callable[[float], bool],
) -> tuple[float, int, int] | None:
    """(gap, a, b) of the two lines leaving within ``same_way_deg`` of each other on opposite
    sides of the node (``away``, ``side`` from :func:`_directions`) whose nearer one passes
    the node farthest, among the pairs whose gap (metres, the nearer line's) ``admits``."""
    best: tuple[float, int, int] | None = None
    for a in range(len(away)):
        for b in range(a + 1, len(away)):
            diff = abs((away[a] - away[b] + 180.0) % 360.0 - 180.0)
            gap = min(abs(side[a]), abs(side[b]))
            opposite = side[a] * side[b] < 0.0 and admits(gap)
            if diff < params.same_way_deg and opposite and (best is None or gap > best[0]):
                best = (gap, a, b)
    return best


def _far_apart_near_the_node(
    node_xy: FloatArray,
    lines: Sequence[tuple[FloatArray, FloatArray, float]],
    params: RefineParams,
    far_apart: Callable[[int, int], bool],
) -> list[FloatArray]:
    """Two junctions (:func:`_feet`) for two same-way arm ``lines`` that pass ``node_xy`` on
    opposite sides, each ``far_through_m`` to ``through_m`` from it, and lie ``far_gap_m``
    apart farther out (``far_apart``, indices into ``lines``), else [] (see
    :attr:`RefineParams.far_through_m`)."""
    if params.far_through_m is None:
        return []
    _, away, side = _directions(node_xy, lines)
    low = params.far_through_m
    best = _widest_same_way_pair(away, side, params, lambda gap: low <= gap < params.through_m)
    if best is None or not far_apart(best[1], best[2]):
        return []
    return _feet(node_xy, [lines[best[1]], lines[best[2]]])


def _feet(
    node_xy: FloatArray, lines: Sequence[tuple[FloatArray, FloatArray, float]]
) -> list[FloatArray]:
    """The point of each line (centre, unit axis, weight) nearest ``node_xy``. A junction
    fused between two T-junctions lies on their cross street, between them; where the cross
    street leaves at a slant the arms' lines tilt and meet it metres off (passes turning at
    either T cut the corner), so the foot on each side street's own line is nearer its T."""
    return [centre + float((node_xy - centre) @ axis) * axis for centre, axis, _ in lines]


class _FarLines:
    """The arms' centre lines ``far_m`` .. ``far_reach_m`` out from each junction, per street
    (see :attr:`RefineParams.far_gap_m`)."""

    def __init__(
        self,
        tracks: Sequence[Track],
        junctions_xy: FloatArray,
        segments: Sequence[Segment],
        streets: Sequence[Street],
        params: RefineParams,
        near_poses: dict[tuple[int, int], FloatArray],
    ) -> None:
        """``near_poses``: :func:`_arm_poses` with ``params``, as :func:`_arm_lines` reads it."""
        self._params = params
        self._streets_at: dict[int, list[int]] = defaultdict(list)  # in _arm_lines' order
        for (node, street), points in near_poses.items():
            if len(points) >= params.min_poses:
                self._streets_at[node].append(street)
        beyond = replace(params, near_m=params.far_m, far_m=params.far_reach_m)
        self._lines = {
            key: principal_axis(points)
            for key, points in _arm_poses(tracks, junctions_xy, segments, streets, beyond).items()
            if len(points) >= params.min_poses
        }

    def apart(self, node: int, a: int, b: int) -> bool:
        """Whether arm lines ``a`` and ``b`` of junction ``node`` (indices into its
        :func:`_arm_lines`) lie ``far_gap_m`` or more apart out there, measured across them
        (each far centre's distance from the other far line, averaged)."""
        streets_here = self._streets_at[node]
        first = self._lines.get((node, streets_here[a]))
        second = self._lines.get((node, streets_here[b]))
        if first is None or second is None or self._params.far_gap_m is None:
            return False
        (centre_a, axis_a), (centre_b, axis_b) = first, second
        offset = centre_b - centre_a
        across_a = abs(float(axis_a[0] * offset[1] - axis_a[1] * offset[0]))
        across_b = abs(float(axis_b[0] * offset[1] - axis_b[1] * offset[0]))
        return (across_a + across_b) / 2.0 >= self._params.far_gap_m


def split_junctions(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    segments: Sequence[Segment],
    streets: Sequence[Street],
    params: RefineParams | None = None,
) -> FloatArray:
    """Junction positions (J', 2): each junction whose arm lines meet at two or more places
    at least ``split_min_m`` apart (see :attr:`RefineParams.split_min_m`) replaced by those
    places, every other junction kept where it is."""
    params = params or RefineParams()
    junctions_xy = np.asarray(junctions_xy, dtype=np.float64).reshape(-1, 2)
    poses = _arm_poses(tracks, junctions_xy, segments, streets, params)
    lines_of, _ = _arm_lines(tracks, junctions_xy, segments, streets, params, poses)
    # for the jog, made at the first candidate: per junction its lines' streets, in order;
    # per segment its street
    streets_of: dict[int, list[int]] | None = None
    segment_street: dict[int, int] = {}
    far_lines_of: dict[int, list[tuple[FloatArray, FloatArray, float]]] | None = None
    out: list[FloatArray] = []
    for node, node_xy in enumerate(junctions_xy):
        places = (
            _places(node_xy, lines_of.get(node, []), params)
            if len(lines_of.get(node, [])) >= 4
            else []
        )
        apart = len(places) >= 2 and all(
            np.hypot(*(places[a] - places[b])) >= params.split_min_m
            for a in range(len(places))
            for b in range(a + 1, len(places))
        )
        if not apart and params.split_bridged and len(places) == 1:
            places = _bridged(node_xy, lines_of[node], params) or places
            apart = len(places) >= 2
        own_params = params  # how the own-arm tests read places
        if not apart and len(places) < 2 and params.split_lone_pair:
            one_pair = replace(params, place_min_pairs=1)
            found = _places_and_arms(node_xy, lines_of.get(node, []), one_pair)
            if len(found) == 2 and max(len(arms) for _, arms in found) >= 3:
                places, own_params = [place for place, _ in found], one_pair
        jogged = False  # a pass walks across from one place's own arm into the other's
        if not apart and len(places) == 2:
            places = _own_arms(node_xy, lines_of[node], own_params)
            if places and params.split_own_arms_jog_m is not None:
                if streets_of is None:
                    streets_of = defaultdict(list)
                    for at, street, _ in _lined_arms(poses, params):
                        streets_of[at].append(street)
                    segment_street = street_of_segment(streets)
                jog = _own_arms_jog(
                    tracks,
                    segments,
                    segment_street,
                    node,
                    node_xy,
                    _own_streets(node_xy, lines_of[node], streets_of[node], own_params),
                    params,
                )
                jogged = jog is not None
                if jog is None and params.split_own_arms_beside and own_params is params:
                    # no pass walks across: two streets side by side, as far apart as a jog
                    jog = _own_arms_beside(node_xy, lines_of[node], own_params)
                if jog is None or jog < params.split_own_arms_jog_m:
                    places = []
            if places and params.split_own_arms_far_m is not None:
                if far_lines_of is None:
                    reach = replace(params, far_m=params.split_own_arms_far_m)
                    far_lines_of, _ = _arm_lines(tracks, junctions_xy, segments, streets, reach)
                places = _places(node_xy, far_lines_of.get(node, []), own_params)
                places = places if len(places) == 2 else []
                far_min_m = params.split_min_m
                if jogged and params.split_own_arms_jogged_far_m is not None:
                    far_min_m = params.split_own_arms_jogged_far_m
                if places and np.hypot(*(places[0] - places[1])) < far_min_m:
                    places = []
            apart = bool(places)
        out.extend(places if apart else [node_xy])
    return np.asarray(out, dtype=np.float64).reshape(-1, 2)


def split_side_by_side(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    segments: Sequence[Segment],
    streets: Sequence[Street],
    params: RefineParams | None = None,
) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """Junction positions (J', 2), each junction with ``side_by_side_arms`` arm lines or more
    that was fused between two streets side by side (:func:`_side_by_side`), or with three
    or more whose two same-way arms, or else two opposite-way arms (:func:`_staggered`), run
    ``side_by_side_gap_m`` apart, replaced by its two junctions, and per position the index
    of the junction it came from (the caller undoes a split whose two halves are not both
    junctions once the tracks are cut at them)."""
    params = params or RefineParams()
    junctions_xy = np.asarray(junctions_xy, dtype=np.float64).reshape(-1, 2)
    near_poses = _arm_poses(tracks, junctions_xy, segments, streets, params)
    lines_of, _ = _arm_lines(tracks, junctions_xy, segments, streets, params, near_poses)
    parted_of = (
        _arm_lines(tracks, junctions_xy, segments, streets, params, near_poses, parted=True)[0]
        if params.side_by_side_parted_m is not None
        else lines_of
    )
    far = (
        _FarLines(tracks, junctions_xy, segments, streets, params, near_poses)
        if params.far_gap_m is not None
        else None
    )
    out: list[FloatArray] = []
    origin: list[int] = []
    for node, node_xy in enumerate(junctions_xy):
        lines = lines_of.get(node, [])
        chosen: list[FloatArray] = []
        parted = parted_of.get(node, [])
        if len(lines) >= params.side_by_side_arms:
            chosen = _side_by_side(node_xy, lines, params)
        else:
            if len(parted) >= params.side_by_side_arms:
                # a divided road's two carriageways grouped as one street: a line each
                near = replace(params, through_m=params.side_by_side_parted_through_m)
                chosen = _side_by_side(node_xy, parted, near)
            if not chosen and params.side_by_side_gap_m is not None and len(lines) >= 3:
                chosen = _side_by_side(
                    node_xy,
                    lines,
                    params,
                    min_gap_m=params.side_by_side_gap_m,
                    far_apart=None if far is None else partial(far.apart, node),
                )
                if not chosen and far is not None:
                    chosen = _far_apart_near_the_node(
                        node_xy, lines, params, partial(far.apart, node)
                    )
        chosen = chosen or [node_xy]
        out.extend(chosen)
        origin.extend([node] * len(chosen))
    return np.asarray(out, dtype=np.float64).reshape(-1, 2), np.asarray(origin, dtype=np.int64)
