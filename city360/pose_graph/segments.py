"""Cutting trajectories into directed segments between nodes, and grouping them into streets.

Every trajectory is cut where it passes a junction (the frame of closest approach within
:attr:`SegmentParams.cut_radius_m`) and where it ends at a dead end. The pieces between
consecutive cuts are :class:`Segment` s. Pieces before the first or after the last cut that reach
no node are dropped: they lie inside a junction's radius or beyond the end of the filmed network.

Segments joining the same two nodes along the same path (mean distance between the two
polylines, resampled at equal fractions of their length, under ``same_street_m``) are one
*street*, whichever direction and trajectory filmed them; a street's segments run in one of two
directions. Nodes where exactly two streets meet and every trajectory runs straight through are
no branch points (bends, or false junctions): :func:`dissolve_pass_through` removes them.
"""

from __future__ import annotations

import functools
import itertools
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import shapely
from scipy.spatial import cKDTree

from city360.errors import ConfigError
from city360.geo import angle_diff_deg, bearing_deg
from city360.pose_graph._grazes import ungrazed
from city360.pose_graph.dead_ends import DeadEndEvent
from city360.pose_graph.tracks import Track

__all__ = [
    "HEADING_FAR_M",
    "HEADING_NEAR_M",
    "CutFilter",
    "Segment",
    "SegmentParams",
    "Street",
    "cut_tracks",
    "dissolve_pass_through",
    "group_streets",
    "part_lines_at",
    "part_two_lines",
    "segment_polyline",
    "turned_forks",
]

FloatArray = npt.NDArray[np.float64]


HEADING_NEAR_M = 6.0
"""An edge's end heading is the chord from this far from its node (metres) ...
(:attr:`city360.pose_graph.build.BuildParams.heading_near_m`'s default)"""
HEADING_FAR_M = 30.0
"""... to this far (both capped by a share of the pass: 0.2 and 0.6 of its length)."""


@dataclass(frozen=True, slots=True)
class SegmentParams:
    """Tuning of cutting and street grouping (metres)."""

    cut_radius_m: float = 8.0
    """A trajectory passes a junction when it comes this close; it is cut at its closest point.
    (10 m cut streets running 8-10 m beside a junction at it, in old towns.)"""
    rejoin_gap_m: float = 4.0
    """Leaving a junction's radius for less than this and coming back is noise, not a new pass."""
    dead_end_pass_m: float = 4.0
    """A track passing this close to a dead-end node (one it does not end at) is cut there."""
    graze_m: float | None = 7.0
    """Meant for :attr:`~city360.pose_graph.junction_params.JunctionParams.split_peaks_m` (set
    together: 7 m with the parting at 8 m and ``RefineParams.knot_ways_m`` 15 m). A pass
    that comes no closer than this (metres; it is within ``cut_radius_m``) to a junction,
    on a straight way (:attr:`graze_turn_deg`) into or out of another junction that it goes
    through (:attr:`graze_through_m`) at most :attr:`graze_reach_m` of travel on, and runs
    on past both, is not cut at the first: it only grazes it, when :attr:`graze_tracks`
    tracks graze it so. A vote pile parted into a knot's junctions 8 m apart, and a street
    into one of them that runs 7-8 m beside the other: the old town's dual carriageway from
    the south-west (tokyo-oldtown coverage with stops seed 0, its halves 6-8 m apart),
    whose eastern half passes the western part (-34.2, 81.5) 7.2-7.4 m off and goes through
    the eastern one 8 m on. Cut at both, that half ends at the western part, the later
    steps build one street of the two halves and street F1 falls 0.959 -> 0.931. With the
    parting, without OSM (branch twin32): 4 rows better (that one, F1 0.931 -> 0.973,
    turns 0.915 -> 1.000; fresh Kaisaniemi coverage 0, wander+stops 1 and 2 in P, R and
    F1), none worse in P, R or F1 on the 28 suite, 56 unseen and 36 fresh twins. Without
    the parting 119 rows equal, Kaisaniemi coverage 0 F1 0.715 -> 0.726 (turns 0.881 ->
    0.857). With OSM, on 120 kept twins, no row moves. On with the parting since round
    thirty-two (the lead). None: every junction within ``cut_radius_m`` cuts."""
    graze_reach_m: float = 10.0
    """See :attr:`graze_m`: at most this many metres of travel between the grazed junction's
    cut and the other's (the knot's 8 m). At 12 m a pass 7.2 m by a false junction
    (-65.8, 45.3), 47.6 m from any true one, between junctions 12.0 m of travel before and
    10.9 m after it, was left uncut there and the false junction kept (old town wander with
    stops 0 with the parting, P 1.000 -> 0.955)."""
    graze_through_m: float = 3.0
    """See :attr:`graze_m`: the pass goes through the other junction, this close to it
    (metres; the old town's knot: 0.1-0.8 m). Two junctions a pass runs between 5 m from
    one and 7.7 m from the other are no street into one beside the other (fresh Kaisaniemi
    wander seed 1's footpaths, two passes at (-56.5, -128.9): left uncut there, street F1
    0.571 -> 0.567 with the parting)."""
    graze_tracks: int = 2
    """See :attr:`graze_m`: at least this many tracks graze the junction so. One track's
    pass straying 7 m (its first poses, one walker's GPS drift) passes beside a junction
    that it really went through: unseen Kamppi one-way with stops 8, a video starting at a
    bend of Mannerheimintie 10 m from the junction (-71.7, 203.5) and running straight on
    past it 7.2 m off (1 lets it through: P 1.000 -> 0.929, with the parting)."""
    graze_turn_deg: float = 15.0
    """See :attr:`graze_m`: the pass runs straight by the grazed junction, turning at most
    this many degrees between its chord to (or from) the other junction's cut and its chord
    ``graze_reach_m`` of travel the other way; a pass cutting a corner of the grazed
    junction turns there and stays cut."""
    min_loop_m: float = 30.0
    """A piece from a node back to the same node shorter than this is a U-turn, not a street."""
    loop_reach_m: float = 12.0
    """... and so is one that never gets this far from the node: a walker standing or milling
    about at the end of filming draws 30 m loops of GPS jitter around one spot (the real
    Hamburg walk ends with 400 m of them within ~6 m)."""
    same_street_m: float = 8.0
    """Mean distance under which two segments between the same nodes are one street."""
    polyline_samples: int = 12
    apart_m: float | None = 4.0
    """Without OSM (:func:`part_two_lines`), two segments between the same nodes under
    ``same_street_m`` are still two streets when one of them runs farther than this from the
    other (to its nearest point, not at the same fraction of length) along at least
    ``apart_share`` of its length and ``apart_min_m`` metres: a straight street and a bent one
    between the same two junctions, 5-7 m apart in the middle (the old town's knot). Passes
    of one street mostly stray that far only for a stretch (the old town's kept twins: under
    25 % of a street's length). None: one street whenever the mean gap is under
    ``same_street_m`` (before round twenty-two). 4.0 brings the old town's coverage seed 1
    and wander seed 1 to both junction targets without OSM, and six more suite rows are
    better; two rows already short got worse (Helsinki wander seed 1, junction P 0.934 ->
    0.927; unseen Kamppi wander seed 9, 1.000 -> 0.917) until :attr:`walked_on` (round
    twenty-two, knot22b), which costs two of the six (Helsinki one-way seed 1 and one-way
    with stops seed 0 back to their recall before the rule). On by default since more rows
    reach target on the suite, the unseen windows and fresh seeds alike (design notes, round
    twenty-two)."""
    apart_share: float = 0.5
    """See ``apart_m``: the share of a segment's length that must run apart."""
    apart_min_m: float = 5.0
    """See ``apart_m``: the metres of a segment that must run apart."""
    meet_m: float = 2.5
    """See :func:`part_two_lines`: the lines parted at a node of two streets must meet there,
    their passes' ends (mean per line) this close: two dead-end streets side by side, ending
    5-7 m apart and cut at one node of the build, do not (Helsinki coverage seed 1, 3.4 m;
    the old town's knot and Helsinki's (-460, -52): 0.4-1.7 m)."""
    walked_on: bool = True
    """See :func:`part_two_lines`: each parted line must be walked on through the node where
    the lines meet (a pass of it that the same trajectory continues there into the node's
    other street or into the other line). A walker turning back there or a trajectory ending
    there is no fork: a wander pass straying 4-6 m along half a street and turning back
    (Helsinki wander seed 1), a street that stops 4-6 m short of another where the walks end
    (Kamppi's Simonkatu, unseen wander seed 9). False: the lines need only meet there
    (round twenty-two, knot22)."""
    lone_ends: bool = True
    """See :attr:`walked_on`: a parted line of a single pass whose video starts or ends at the
    node (within ``lone_end_m``, no segment of it beyond) counts as walked on there. One
    video's end says nothing about the street beyond it; two that end there, as at Kamppi's
    Simonkatu, are a street's end and stay grouped. Round twenty-four (helsinki24), without
    OSM on 37 kept twins (Helsinki seeds 0-1, old town seed 0, the 21 unseen Helsinki
    windows' twins) and the fresh Helsinki seed 33: two rows better (Helsinki one-way seed 1
    R 0.952 -> 0.960, one-way with stops seed 0 R 0.929 -> 0.937, the knot's apex where a
    video starts), none worse in junction P, R, street F1 or turns. False: knot22b's guard
    as it was (round twenty-two)."""
    lone_end_m: float = 8.0
    """See :attr:`lone_ends`: the video starts or ends at most this far (metres of travel)
    beyond where its pass is cut at the node (Helsinki one-way seed 1: 2.9 m). 8 m is
    ``JunctionParams.junction_clearance_m``: a video's end nearer a junction than that gets
    no dead end, so its last metres past the node are cut into no segment whatever their
    length. Fresh Bulevardi one-way seed 8 (168.6, 91.5): the walker comes down the fork's
    diagonal branch, goes on through the node 6.0 m into the stem and stops filming at the
    fork; at 5 m that line was not walked on, the branches stayed one street and the fork's
    node a link (R 0.733 -> 0.800 at 8 m). 5.0 until round thirty-six (fork36): on the 120
    kept twins without OSM every row equal field by field, on the 61 held-out twins of
    rounds thirty-four and thirty-five one better (Bulevardi one-way seed 6, the same fork),
    none worse."""
    ended_fork_deg: float | None = 15.0
    """See :attr:`lone_ends`: a parted line of passes of two or more videos, each of which starts
    or ends at the node (within :attr:`lone_end_m`, no segment of it beyond), also counts as
    walked on there when the other line is walked on through the node and the two lines
    leave it at mean headings at least this many degrees apart (each pass's chord
    ``HEADING_NEAR_M`` .. ``HEADING_FAR_M`` out): a fork whose videos are split where one
    branch leaves the stem. Two videos ending at one place beside a street that comes in
    parallel are a street's end (Kamppi's Simonkatu, 5-7 m beside its neighbour) and stay
    grouped; so does one video out along the line and back (fresh Kaisaniemi coverage seed
    6, (-89.2, -126.4): 10.1 degrees). Fresh Bulevardi coverage seeds 5, 7 and 9 at the
    Erottajankatu fork (168.6, 91.5): its branches grouped as one street (mean gap 7.7-8.0
    m), the diagonal two videos split at the fork, 20.5-28.1 degrees off the straight
    branch; the node was a link. None: such a line is never walked on there (before round
    thirty-seven). On at 15 since round thirty-seven (branch bul37), without OSM: the 120
    kept twins equal field by field; of the 75 held-out twins of rounds thirty-four to
    thirty-six those three better (R 0.857-0.867 -> 0.933-1.000), none worse (turns fall in
    two, at the Erottaja knot's junction found again). With OSM this guard is not used."""
    ended_fork_meet_m: float = 4.0
    """See :attr:`ended_fork_deg`: the two lines' ends (mean per line) at the node this close,
    instead of :attr:`meet_m`: where a video ends is not where its branch meets the stem, so
    the ended line's passes stop short of the node or beyond it."""
    lone_end_osm_m: float = 5.0
    """:attr:`lone_end_m` for the parting between two junctions with OSM (the only caller
    with ``junctions_only``, :attr:`part_at_junctions_osm`): 8 m was not measured with OSM
    (round thirty-six), so builds with OSM keep the 5 m they had."""
    part_at_junctions: float | None = 30.0
    """See :func:`part_two_lines`: also part a street between two nodes that are both
    junctions already (three or more streets each) when its passes make exactly two lines by
    the headings they leave both nodes at (chord 6-30 m from the node, capped at 0.6 of the
    pass; a pass joins a line whose first pass is within this many degrees at both nodes, and
    the two lines' mean headings are at least this far apart at both), each line walked on
    through both nodes (:attr:`walked_on`'s test), the lines' ends meeting at both
    (:attr:`meet_m`) and one running more than ``apart_m`` from the other somewhere.
    Parting by shape alone (``apart_share``) misses it: the smoothed poses cut the bend's
    corner, 43-45 % of it more than 4 m from the link. A straight link and a bent street
    round a corner between the same two junctions are two arms at each: grouped, the agent
    is offered one branch with headings averaged between them, and LEFT / RIGHT / UP come
    out wrong (fresh Bulevardi's Erottaja knot: a 9 m link and a 23 m bend, 52 and 84
    degrees apart at its ends). None: a street whose nodes are both junctions is never
    parted (before round twenty-nine). On at 30 degrees since round twenty-nine (turns29):
    without OSM, on the 129 cached twins no row moves; on fresh Bulevardi's 12 twins two
    rows are better (coverage seed 0 street F1 0.983 -> 1.000, turns 0.840 -> 0.893;
    one-way seed 0 F1 0.967 -> 0.984, turns 0.821 -> 0.836), none worse. With OSM the map
    says which street is which and :func:`part_two_lines` does not run."""
    part_at_junctions_osm: bool = True
    """With OSM too, part a street between two junctions into two lines by the headings its
    passes leave both nodes at (:attr:`part_at_junctions`'s rule, only that half of
    :func:`part_two_lines`: the map says which street is which elsewhere). With
    :attr:`mapped_apart` and its guard, the Erottaja knot's 9 m link and the bend round the
    other corner (map gap 8.8 m) stay one street at both junctions, its headings averaged
    between them. False: with OSM no street is parted after grouping (before round thirty).
    Off (round thirty, knotturns30, with OSM, both switches on against main's build): on
    fresh Bulevardi (16 kept twins, seeds 0-3) 5 rows better, 8 equal, and 3 with junction R
    0.857 -> 1.000 but turns 0.947 -> 0.863-0.901 (junction B recovered, its turns now scored:
    the knot's arms bend 10-17 m out and their headings are measured across the bends). It
    parts the link from the bend in 4 of the 16; it parts nothing in Kaisaniemi's 8, the 21
    unseen Helsinki twins or the suite's 3 tokyo twins. Alone, without :attr:`mapped_apart`,
    it is not measured. On since round thirty-one, with :attr:`mapped_apart` and
    :attr:`part_mapped_meet_m` (knot31 and the lead): fresh Bulevardi with OSM meets every
    target on 12 of 12 rows of seeds 0-2 (7 before); no other kept twin moves in P, R or F1
    (the suite's 28, the unseen windows' 56, Kaisaniemi's 8). Turns fall in three Bulevardi
    rows (0.947 -> 0.893-0.908), the rows where junction B is found again and its turns,
    measured across the arms' bends, are scored."""
    part_mapped_meet_m: float | None = 6.0
    """With OSM and :attr:`part_at_junctions_osm`: two lines of a street between two junctions
    that walk two different mapped streets (each pass by the way most of its frames walk,
    the two lines' ways not the same) need to part (leave ``part_at_junctions`` degrees
    apart and meet within :attr:`meet_m`) at one of its nodes only; at the other their ends
    need only come within this many metres. The map says they are two streets; the
    headings say where. One walker's pass round the Erottaja knot's bend cuts its corner
    into the next street and stops 2.5 m short of junction A, 8 degrees from the link's
    pass there (fresh Bulevardi wander seed 0 with OSM: at B 246630384 49 degrees apart,
    ends 1.2 m apart; at A 434149261 4.6 m apart; wander with stops seed 0: 2.0 and 2.7 m).
    A pass cut short of a node ends farther off: two passes 3 m and 7 m long between two
    Kaisaniemi footpath nodes 7.7 m apart at one end (wander with stops seed 1; parted,
    street F1 0.904 -> 0.897). A path walked along either of two parallel mapped ways
    leaves both nodes along one heading and stays one street. None: both nodes (round
    thirty). On at 6 m, with :attr:`part_at_junctions_osm` (on since round thirty-one):
    with it and :attr:`mapped_apart`, fresh Bulevardi wander seed 0 and wander with stops
    seed 0 (seeds 0-1, 8 twins) and one-way seed 2 are parted, better in street F1 and
    turns; no other row moves, Kaisaniemi's 8 and unseen Kamppi's 7 included (design
    notes, round thirty-one, knot31)."""
    turned_forks: bool = True
    """See :func:`turned_forks`: a node :func:`dissolve_pass_through` would remove is kept when
    one of its streets parts there (:func:`part_two_lines`) and a trajectory turns at the node
    from one of the parted lines into the other. The old town's knot C in coverage seed 2 was
    dissolved before the final streets were parted (round twenty-three, knot23). False: every
    such node is dissolved (before round twenty-three)."""
    turned_legs_apart: bool = True
    """See :func:`turned_forks`: the node is kept only when the walker's leg into it and its
    leg out of it themselves run ``apart_m`` apart (``apart_share``, ``apart_min_m``), one up
    each branch of the fork, not merely when the two legs fall into different lines of the
    parting. Which line a pass near both joins follows the order the passes are taken in,
    forward ones first, and which way is forward follows the node ids, which junctions cut
    anywhere else in the city renumber (Helsinki wander 1's (482.3, 374.8): one walker's pass
    out, its pass back and its pass out again, the first two 3.9 m apart on average and
    apart, the third 2.0-2.7 m from both; parted {back, out again} / {out} or {out, out
    again} / {back} by which of the street's nodes had the lower id, which the parting of a
    vote pile 150 m away changed; the walker turning back at the node from its pass back
    into its pass out again kept the node in the second case only). False: different lines
    suffice (before round thirty-two). On since round thirty-two (branch stub32): without
    the vote pile's parting no row moves on 108 twins without OSM (28 suite, 56 unseen, 24
    fresh Bulevardi and Kaisaniemi); with ``split_peaks_m`` 8 and ``knot_ways_m`` 15
    Helsinki wander 1 is no longer worse than without the parting (P 0.951 -> 0.959, F1
    0.900 -> 0.908) and no row moves else. The old town's knot C (coverage seed 2), where a
    walker comes up the straight street and goes back down the bent one, 9-10 m apart, is
    kept as before."""
    forked_deg: float | None = None
    """See :func:`turned_forks`: a node :func:`dissolve_pass_through` would remove is also kept
    when one of its streets parts there into two lines that leave it at headings at least
    this many degrees apart (each line's mean chord ``HEADING_NEAR_M`` .. ``HEADING_FAR_M``
    out) and whose passes differ in length (``forked_longer``), no walker turning from one
    into the other: a Y walked up the stem into one branch and down the other branch into
    the stem, its two branches grouped as one street because they meet again at one
    junction (fresh Bulevardi's Erottajankatu fork (168.6, 91.5), branches 45 and 64 m long
    to the Erottaja knot: wander and wander+stops seed 0 without OSM, 16 and 21 degrees,
    passes 33 / 46 m and 47 / 68 m). Two passes of one street splayed apart leave a node
    they are cut at a few degrees apart, or as far apart but as long. None: only
    :attr:`turned_forks`' turn keeps such a node. Off (round thirty-two, bul32: 15 degrees,
    1.25 times, on 108 kept twins without OSM): 2 rows better (Bulevardi wander+stops 0 R
    0.867 -> 0.933, F1 0.833 -> 0.918; Helsinki wander 1), 2 worse (Helsinki coverage 0 and
    tokyo coverage 2 lose P and F1: single passes of 13-14 m against 19 m, nodes 15-17 m from
    any junction) and Bulevardi wander 0 mixed (F1 up, P 1.000 -> 0.923: its node stands
    13 m up the branches). Without the length test 15 rows were worse."""
    forked_longer: float = 1.25
    """See ``forked_deg``: the longer line's median pass is at least this many times the
    shorter's."""
    fork_apex_m: float | None = 15.0
    """Without OSM (:func:`city360.pose_graph.fork_apex.fork_apexes`): a node of two streets
    whose other street is a fork's two branches meeting again at one junction (a loop from
    the node back to it, or two lines :func:`part_two_lines` parts there, the node one
    :func:`dissolve_pass_through` would remove) is kept and moved to the apex, where the
    branches' lines (``fork_apex_near_m``) cross, when
    that lies at most this many metres from the node, back down its stem. Dissolved, the
    fork is lost; kept where the votes piled, 13 m up the branches (fresh Bulevardi's
    Erottajankatu fork (168.6, 91.5), branches 45 and 64 m to the Erottaja knot), it is an
    extra and the fork still missed. None: off. On at 15 m since round thirty-three (branch
    bul33): without OSM on the 120 kept twins, 2 rows better (Bulevardi wander 0 R 0.857 ->
    0.929, F1 0.815 -> 0.893; wander+stops 0 R 0.867 -> 0.933, F1 0.833 -> 0.918), none
    worse; it moves 5 nodes, all at that fork. With OSM it never runs."""
    fork_apex_near_m: float = 3.0
    """See :attr:`fork_apex_m`: a branch's line is fitted to its passes' poses in four
    windows of metres of travel from the node (at most 0.6 of the pass), from each of
    ``fork_apex_near_m`` and ``fork_apex_near_alt_m`` to each of ``fork_apex_far_m`` and
    ``fork_apex_far_alt_m``; the apex is the median of the windows' crossings."""
    fork_apex_near_alt_m: float = 8.0
    """See :attr:`fork_apex_near_m`."""
    fork_apex_far_m: float = 20.0
    """See :attr:`fork_apex_near_m`."""
    fork_apex_far_alt_m: float = 30.0
    """See :attr:`fork_apex_near_m`."""
    fork_apex_deg: float = 10.0
    """See :attr:`fork_apex_m`: the branches' lines cross at least this many degrees apart."""
    fork_apex_max_deg: float = 45.0
    """See :attr:`fork_apex_m`: ... and at most this many (the branches of a Y; Bulevardi's
    fork 10-36 degrees in its lines' windows). Wider, the node is a T or a corner, and a
    window reaching round the next corner puts the crossing anywhere."""
    fork_apex_wide_m: float = 10.0
    """See :attr:`fork_apex_m`: the branches' first passes run this many metres apart or more
    somewhere (the largest distance from a pose of one to the other): two branches round a
    block, not two passes of one street splayed by the phone's noise."""
    fork_apex_stem_m: float = 4.0
    """See :attr:`fork_apex_m`: the apex lies within this many metres of the stem's first
    pass."""
    fork_apex_on_stem_m: float | None = 20.0
    """See :attr:`fork_apex_m`: the apex is put on the stem's line, fitted to the stem's
    passes' poses up to this many metres of travel from the node (at most 0.6 of a pass),
    at the foot of the branches' crossing on it. The branches part from the stem, so the
    fork lies on the stem's line; two noisy lines crossing 15-30 degrees apart put their
    crossing metres off it, across as well as along (fresh Bulevardi wander+stops seed 1:
    (171.8, 99.0), 3.1 m east of the stem's passes and 8.2 m from the fork (168.6, 91.5),
    an extra and a miss). None: the crossing as it is. On at 20 m since round thirty-six
    (branch bul36): without OSM on the 120 kept twins 1 row better (that one: P and R 0.900
    -> 1.000), none worse, 119 equal field by field; the rule moves the 5 apexes the rule
    :attr:`fork_apex_m` places, all at that fork, 3.1-8.2 m from it before and 3.1-7.4 m
    after. With OSM it never runs."""
    fork_apex_parted: bool = True
    """See :attr:`fork_apex_m`: also move a node of three streets, two of which join it to one
    other node (a fork's two branches, already parted, meeting again there) and the third
    going elsewhere (the stem), to the apex of those two. Where the votes piled 9-10 m up
    the branches the node already has its three streets, and nothing moved it down to the
    fork (fresh Bulevardi wander and wander+stops seed 9 at (168.6, 91.5): 10.3 and 9.1 m
    -> 5.7 and 4.9 m). Each branch must be walked on through the node (kept one-way seed 2:
    a diagonal that is one video's start or end, lost below it). False: only nodes of two streets
    (before round thirty-seven). On since round thirty-seven (branch bul37), without OSM:
    the 120 kept twins equal field by field; of the 75 held-out twins those two better (P
    0.929 -> 1.000), none worse. With OSM the apex step never runs."""
    fork_apex_parted_max_deg: float = 30.0
    """See :attr:`fork_apex_parted`: :attr:`fork_apex_max_deg` for a node of three streets,
    a shallow fork's branches (fresh Bulevardi's Erottajankatu fork: 21-28 degrees in its
    lines' windows). Two T junctions 10 m apart that the votes made one node give branches
    30-53 degrees apart that also meet again (Helsinki wander+stops seed 1 at (458.9,
    -657.7): at 45 degrees the node moved 3 m up its stem, 10.6 m from the junction)."""
    mapped_apart: bool = True
    """With OSM (``mapped_street`` of :func:`group_streets`): two segments between the same
    nodes that walk two different mapped streets are two streets even under
    ``same_street_m``. A small block whose third corner is a bend joins two junctions by two
    streets 5-8 m apart on average; grouped as one, each junction keeps two streets and
    :func:`dissolve_pass_through` removes it when every pass goes straight through (fresh
    window Helsinki Bulevardi, 60.1641,24.9352,60.1668,24.9465, coverage seed 1 with OSM: the
    Erottaja knot, R 0.857; issue 17, round twenty-nine, fresh29). Off: five Bulevardi
    rows reach target but turns fall 0.007-0.107; on the fresh Kaisaniemi footpaths
    (parallel ways, passes matched to the other one) P falls in six of eight rows, and
    two unseen Kamppi rows lose street F1 (1.000 -> 0.955); no row without OSM moves
    (design notes, round twenty-nine). Still off with :attr:`mapped_apart_m` (round
    thirty, knot30, with OSM on 46 kept twins and fresh Bulevardi seed 3): Kaisaniemi,
    Kamppi, Helsinki SE and east, two suite Helsinki and three tokyo twins equal main's;
    five Bulevardi rows reach R 1.000 and target, but turns fall in six (0.007-0.107), all
    at the knot, whose recovered junction's arms bend within 13-17 m of it. On since round
    thirty-one, with :attr:`part_at_junctions_osm` (see there for the rows)."""
    mapped_apart_m: float | None = 12.0
    """See :attr:`mapped_apart`: the two mapped streets are kept apart only where they run
    farther apart than this (metres, OSM geometry: the largest distance from the stretch of
    either that its segment walks to the other,
    :meth:`~city360.pose_graph.osm_dead_ends.MatchedCuts.mapped_gap_m`). A footway and the
    cycleway beside it, a way drawn twice, or two short ways round a square are different
    mapped streets a few metres apart, and one walker's passes along one path are matched to
    either (fresh Kaisaniemi: 5.0-7.4 m for parallel ways, up to 9.3 m for 6 m ways in a
    square; unseen Kamppi coverage seeds 5 and 6: 3.7-5.6 m). The Erottaja knot's straight
    side and its side round the corner part 16.2-16.7 m; its 9 m link and the 21 m bend
    round the other corner only 8.8 m, which no threshold can tell from the square's ways,
    so the guard keeps those two grouped. None: no guard, every pair of different mapped
    streets parts (round twenty-nine, fresh29). Measured in the design notes, round thirty
    (knot30)."""
    mapped_gap_share: float | None = 0.25
    """See :attr:`mapped_apart_m`: the mapped streets of a segment whose gap is measured are
    its mapped street and every other OSM street at least this share of its frames (0-1)
    are matched to. OSM cuts one line in two at a node whose third way no pass takes, and a
    segment through that node walks each half for about half its frames: two passes of the
    line between the same two nodes, 41 of 81 frames on one half and 41 of 79 on the other,
    had different mapped streets 19 m apart and were two streets, which made both their
    nodes three-way junctions (held-out tokyo old town wander with stops seed 7 with OSM,
    built junctions at (80.9, 115.8) and (149.0, 134.7); round thirty-three, osm33).
    None: the mapped street alone. On since round thirty-three: that row P 0.913 -> 1.000,
    F1 0.933 -> 1.000; no other kept twin's grouping changes (design notes, osm33); seed 8,
    held out until then, the same cause: P 0.947 -> 1.000, F1 0.925 -> 0.985 (the lead)."""


@dataclass(frozen=True, slots=True)
class Segment:
    """Frames ``first_frame``..``last_frame`` (inclusive, increasing) of track ``track`` (index
    into the track list) lead from node ``u`` to node ``v``."""

    track: int
    u: int
    v: int
    first_frame: int
    last_frame: int


@dataclass(frozen=True, slots=True)
class Street:
    """An undirected street between nodes ``a <= b``; ``forward`` lists the segments filmed
    a -> b and ``backward`` those filmed b -> a (indices into the segment list)."""

    id: int
    a: int
    b: int
    forward: tuple[int, ...]
    backward: tuple[int, ...]


def street_of_segment(streets: Iterable[Street]) -> dict[int, int]:
    """Per segment index, the id of the street it was grouped into (segments in no street
    are absent)."""
    return {i: street.id for street in streets for i in (*street.forward, *street.backward)}


def segment_polyline(track: Track, segment: Segment, samples: int) -> FloatArray:
    """``samples`` points at equal fractions of the segment's length, u -> v."""
    arc = track.arc_m
    marks = np.linspace(arc[segment.first_frame], arc[segment.last_frame], samples)
    seg = slice(segment.first_frame, segment.last_frame + 1)
    return np.column_stack(
        [np.interp(marks, arc[seg], track.xy[seg, 0]), np.interp(marks, arc[seg], track.xy[seg, 1])]
    )


def _passes(
    dist: FloatArray,
    node: npt.NDArray[np.int64],
    inside: npt.NDArray[np.bool_],
    gap_frames: int,
    dead_end_frames: Sequence[int],
) -> list[tuple[int, int]]:
    """(frame of closest approach, node) for each run of frames near one node. A run never
    spans a dead-end visit: going up a short dead end and back passes the junction twice."""
    cuts: list[tuple[int, int]] = []
    frames = np.flatnonzero(inside)
    if frames.size == 0:
        return cuts
    # a new run starts where the node changes, the frames are not (nearly) contiguous, or a
    # dead end was reached in between
    visits = np.searchsorted(np.sort(np.asarray(dead_end_frames, dtype=np.int64)), frames)
    breaks = (np.diff(frames) > gap_frames) | (np.diff(node[frames]) != 0) | (np.diff(visits) != 0)
    breaks = np.flatnonzero(breaks) + 1
    for run in np.split(frames, breaks):
        best = run[np.argmin(dist[run])]
        cuts.append((int(best), int(node[best])))
    return cuts


CutFilter = Callable[[int, npt.NDArray[np.int64], npt.NDArray[np.int64]], npt.NDArray[np.bool_]]
"""``(track index, frames, junction ids) -> allowed`` (see :func:`cut_tracks`)."""


def _nearest_allowed(
    tree: cKDTree,
    xy: FloatArray,
    track: int,
    k: int,
    radius: FloatArray,
    cut_radius_m: float,
    may_cut: CutFilter | None,
) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """Per frame, the distance to and id of the nearest node within its radius that the frame
    may be cut at (inf and a fill id where none)."""
    dist, node = tree.query(xy, k=k, distance_upper_bound=cut_radius_m)
    dist, node = dist.reshape(len(xy), k), node.reshape(len(xy), k)
    ok = np.isfinite(dist)
    ok[ok] = dist[ok] <= radius[node[ok]]
    if may_cut is not None:
        rows, cols = np.nonzero(ok)
        ok[rows, cols] = may_cut(track, rows.astype(np.int64), node[rows, cols].astype(np.int64))
    first = np.argmax(ok, axis=1)
    rows = np.arange(len(xy))
    hit = ok[rows, first]
    return np.where(hit, dist[rows, first], np.inf), np.where(hit, node[rows, first], 0)


def cut_tracks(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    dead_ends: Sequence[Sequence[DeadEndEvent]],
    params: SegmentParams | None = None,
    *,
    dead_end_xy: FloatArray | None = None,
    dead_end_pass_m: FloatArray | None = None,
    may_cut: CutFilter | None = None,
    dead_end_passes: Mapping[int, Sequence[tuple[int, int]]] | None = None,
    junction_passes: Mapping[int, Sequence[tuple[int, int]]] | None = None,
) -> list[Segment]:
    """Cut every track at the junctions it passes and the dead ends it reaches.

    Node ids: junctions are ``0 .. J-1`` in ``junctions_xy`` order, dead end ``k`` is ``J + k``.
    With ``dead_end_xy`` (positions of the dead ends), a track that runs past a "dead end" within
    ``dead_end_pass_m`` (per dead end; default :attr:`SegmentParams.dead_end_pass_m` for all, at
    most ``cut_radius_m``) is cut there too: such a node is where another video starts or stops
    in the middle of a street, and every video of that street must share it. With ``may_cut``
    (``may_cut(track, frames, nodes)`` -> which of those frames may be cut at those nodes, ids
    as above), a frame is only cut at a node the filter allows, the nearest allowed one within
    the radius: a street running 8 m beside a junction of another street, or past the end of
    another street, is not cut there (the filter knows from OSM which street each frame walks).
    ``dead_end_passes`` (per track, ``(frame, dead end index)``) are further passes of dead
    ends, found by other means than the radius (along a mapped street, see
    :func:`city360.pose_graph.osm_dead_ends.along_street_passes`); ``junction_passes`` (per
    track, ``(frame, junction id)``) likewise for junctions (through a mapped junction beyond
    the radius, see :func:`city360.pose_graph.osm_match.through_junction_passes`).
    """
    params = params or SegmentParams()
    n_junctions = len(junctions_xy)
    nodes_xy = np.asarray(junctions_xy, dtype=np.float64).reshape(-1, 2)
    radius = np.full(n_junctions, params.cut_radius_m)
    if dead_end_xy is not None and len(dead_end_xy):
        nodes_xy = np.concatenate([nodes_xy, np.asarray(dead_end_xy).reshape(-1, 2)])
        passing = (
            np.full(len(dead_end_xy), params.dead_end_pass_m)
            if dead_end_pass_m is None
            else np.minimum(np.asarray(dead_end_pass_m, dtype=np.float64), params.cut_radius_m)
        )
        if passing.shape != (len(dead_end_xy),):
            msg = (
                f"`dead_end_pass_m` needs one radius per dead end ({len(dead_end_xy)}), "
                f"got shape {passing.shape}"
            )
            raise ConfigError(msg)
        radius = np.concatenate([radius, passing])
    tree = cKDTree(nodes_xy) if len(nodes_xy) else None
    nearest = min(3, len(nodes_xy))
    end_cuts: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for k, events in enumerate(dead_ends):
        for event in events:
            end_cuts[event.track].append((event.frame, n_junctions + k))
    cuts_of: list[list[tuple[int, int]]] = []
    for t, track in enumerate(tracks):
        cuts = list(end_cuts.get(t, []))
        if tree is not None:
            dist, node = _nearest_allowed(
                tree, track.xy, t, nearest, radius, params.cut_radius_m, may_cut
            )
            inside = np.isfinite(dist)
            gap = max(1, round(params.rejoin_gap_m / max(track.spacing_m, 1e-6)))
            cuts += _passes(dist, node.astype(np.int64), inside, gap, [f for f, _ in cuts])
        if dead_end_passes is not None:
            cuts += [(f, n_junctions + k) for f, k in dead_end_passes.get(t, ())]
        if junction_passes is not None:
            cuts += list(junction_passes.get(t, ()))
        cuts_of.append(sorted(cuts))
    if params.graze_m is not None:
        cuts_of = ungrazed(cuts_of, tracks, nodes_xy, n_junctions, params)
    segments: list[Segment] = []
    for t, (track, cuts) in enumerate(zip(tracks, cuts_of, strict=True)):
        cleaned: list[tuple[int, int]] = []
        for frame, node_id in cuts:
            if cleaned and cleaned[-1][1] == node_id:
                span = track.arc_m[frame] - track.arc_m[cleaned[-1][0]]
                if span < params.min_loop_m:
                    continue  # back at the same node at once: one visit (a U-turn), keep the first
                if node_id < len(nodes_xy):
                    way = track.xy[cleaned[-1][0] : frame + 1] - nodes_xy[node_id]
                    if float(np.hypot(*way.T).max()) < params.loop_reach_m:
                        continue  # milling about the node (GPS jitter of a walker standing)
            if cleaned and cleaned[-1][0] == frame:
                continue
            cleaned.append((frame, node_id))
        segments.extend(
            Segment(t, u, v, f0, f1) for (f0, u), (f1, v) in itertools.pairwise(cleaned) if f1 > f0
        )
    return segments


def _distances_to(points: FloatArray, line: FloatArray) -> FloatArray:
    """Distance (m) of each of ``points`` (N, 2) to the polyline ``line`` (M, 2)."""
    return np.asarray(
        shapely.distance(shapely.points(points[:, 0], points[:, 1]), shapely.LineString(line)),
        dtype=np.float64,
    )


def _runs_apart(
    track_a: Track,
    seg_a: Segment,
    track_b: Track,
    seg_b: Segment,
    apart_m: float,
    params: SegmentParams,
) -> bool:
    """Whether either segment runs more than ``apart_m`` from the other along at least
    ``params.apart_share`` of its length and ``params.apart_min_m`` metres (poses about a
    metre apart along each)."""
    lines, lengths = [], []
    for track, seg in ((track_a, seg_a), (track_b, seg_b)):
        length = float(track.arc_m[seg.last_frame] - track.arc_m[seg.first_frame])
        lengths.append(length)
        lines.append(segment_polyline(track, seg, max(params.polyline_samples, round(length) + 1)))
    for k in (0, 1):
        share = float(np.mean(_distances_to(lines[k], lines[1 - k]) > apart_m))
        if share >= params.apart_share and share * lengths[k] >= params.apart_min_m:
            return True
    return False


def _mapped_apart(
    first: Segment,
    second: Segment,
    params: SegmentParams,
    mapped_gap: Callable[[Segment, Segment], float] | None,
) -> bool:
    """Whether two segments walking different mapped streets run far enough apart on the map
    to be two streets (:attr:`SegmentParams.mapped_apart_m`)."""
    if params.mapped_apart_m is None:
        return True
    return mapped_gap is not None and mapped_gap(first, second) > params.mapped_apart_m


def group_streets(
    tracks: Sequence[Track],
    segments: Sequence[Segment],
    params: SegmentParams | None = None,
    *,
    mapped_street: Callable[[Segment], int] | None = None,
    mapped_gap: Callable[[Segment, Segment], float] | None = None,
    keep_apart: bool = False,
) -> tuple[list[Street], list[int]]:
    """Streets and, per segment, the id of its street. With ``mapped_street`` (the mapped
    street a segment walks, -1 when none: :meth:`city360.pose_graph.osm_dead_ends.MatchedCuts.
    mapped_street`), segments between the same nodes walking the same mapped street are one
    street however far apart their smoothed poses run (two passes of one street 8-9 m apart
    made two streets and turned both their nodes into three-way "junctions"). With
    ``keep_apart`` two segments that run apart for most of their length are two streets even
    under ``same_street_m`` (:attr:`SegmentParams.apart_m`; see :func:`part_two_lines`). With
    :attr:`SegmentParams.mapped_apart`, segments walking two different mapped streets are two
    streets when those streets run more than :attr:`SegmentParams.mapped_apart_m` apart
    (``mapped_gap``, metres, of two segments: :meth:`~city360.pose_graph.osm_dead_ends.
    MatchedCuts.mapped_gap_m`; without it and with a guard set, they group by their gap)."""
    params = params or SegmentParams()
    apart_m = params.apart_m if keep_apart else None
    mapped = [mapped_street(seg) if mapped_street else -1 for seg in segments]
    by_pair: dict[tuple[int, int], list[int]] = defaultdict(list)
    for i, seg in enumerate(segments):
        by_pair[(min(seg.u, seg.v), max(seg.u, seg.v))].append(i)
    streets: list[Street] = []
    street_of = [-1] * len(segments)
    for (a, b), members in sorted(by_pair.items()):
        lines = []
        for i in members:
            seg = segments[i]
            line = segment_polyline(tracks[seg.track], seg, params.polyline_samples)
            lines.append(line if seg.u == a else line[::-1])
        groups: list[list[int]] = []
        anchors: list[FloatArray] = []
        for i, line in zip(members, lines, strict=True):
            for group, anchor in zip(groups, anchors, strict=True):
                if a != b and mapped[i] >= 0 and mapped[i] == mapped[group[0]]:
                    group.append(i)
                    break
                if (
                    params.mapped_apart
                    and a != b
                    and -1 < mapped[i] != mapped[group[0]] > -1
                    and _mapped_apart(segments[i], segments[group[0]], params, mapped_gap)
                ):
                    continue  # two mapped streets between the same nodes: a small block
                gap = float(np.mean(np.hypot(*(line - anchor).T)))
                if a == b:  # a loop may be filmed either way round
                    gap = min(gap, float(np.mean(np.hypot(*(line[::-1] - anchor).T))))
                if gap < params.same_street_m and not (
                    apart_m is not None
                    and _runs_apart(
                        tracks[segments[i].track],
                        segments[i],
                        tracks[segments[group[0]].track],
                        segments[group[0]],
                        apart_m,
                        params,
                    )
                ):
                    group.append(i)
                    break
            else:
                groups.append([i])
                anchors.append(line)
        for group, anchor in zip(groups, anchors, strict=True):
            forward: list[int] = []
            backward: list[int] = []
            for i in group:
                seg = segments[i]
                if a != b:
                    is_forward = seg.u == a
                else:
                    line = segment_polyline(tracks[seg.track], seg, params.polyline_samples)
                    is_forward = np.mean(np.hypot(*(line - anchor).T)) <= np.mean(
                        np.hypot(*(line[::-1] - anchor).T)
                    )
                (forward if is_forward else backward).append(i)
                street_of[i] = len(streets)
            streets.append(Street(len(streets), a, b, tuple(forward), tuple(backward)))
    return streets, street_of


def _two_lines(
    tracks: Sequence[Track],
    segments: Sequence[Segment],
    streets: Sequence[Street],
    params: SegmentParams,
    *,
    junctions_only: bool = False,
    mapped_street: Callable[[Segment], int] | None = None,
) -> dict[int, tuple[list[Street], list[int]]]:
    """By the id of each street :func:`part_two_lines` parts: its lines (street ids 0) and
    the nodes of the street where it parts (one or both of ``a``, ``b``). ``junctions_only``:
    only streets between two junctions (:attr:`SegmentParams.part_at_junctions`)."""
    if params.apart_m is None:
        return {}
    at_node: dict[int, list[int]] = defaultdict(list)
    for street in streets:
        at_node[street.a].append(street.id)
        at_node[street.b].append(street.id)
    # the segment a trajectory goes on into / comes from, by (track, frame) at the node
    after = {(seg.track, seg.first_frame): i for i, seg in enumerate(segments)}
    before = {(seg.track, seg.last_frame): i for i, seg in enumerate(segments)}
    parts: dict[int, list[Street]] = {}
    for street in streets:
        if (
            junctions_only
            or street.a == street.b
            or all(len(at_node[n]) != 2 for n in (street.a, street.b))
        ):
            continue
        members = [*street.forward, *street.backward]
        again, _ = group_streets(tracks, [segments[i] for i in members], params, keep_apart=True)
        if len(again) > 1:
            parts[street.id] = [
                Street(
                    0,
                    street.a,
                    street.b,
                    tuple(members[k] for k in part.forward),
                    tuple(members[k] for k in part.backward),
                )
                for part in again
            ]

    def ends_at(part: Street, node: int) -> FloatArray:
        """Mean position of the part's passes where they are cut at ``node``."""
        ends = []
        for i in (*part.forward, *part.backward):
            seg = segments[i]
            ends.append(tracks[seg.track].xy[seg.first_frame if seg.u == node else seg.last_frame])
        return np.mean(ends, axis=0)

    def lone_parted(street: Street, node: int) -> bool:
        """``node`` has two streets, this one parted and the other one line, and the parted
        lines meet there."""
        pair = at_node[node]
        if len(pair) != 2 or any(k in parts for k in pair if k != street.id):
            return False
        lines = parts[street.id]
        ends = np.array([ends_at(part, node) for part in lines])
        gap = float(np.hypot(*(ends[:, None] - ends[None]).transpose(2, 0, 1)).max())
        walked = [walked_on(part, node) if params.walked_on else True for part in lines]
        if gap <= params.meet_m and all(walked):
            return True
        return gap <= params.ended_fork_meet_m and ended_fork(lines, walked, node)

    lone_end_m = params.lone_end_osm_m if junctions_only else params.lone_end_m

    def video_end_at(i: int, node: int) -> bool:
        """Segment ``i``'s video starts or ends at ``node``: no segment of it beyond, and
        at most ``lone_end_m`` of travel."""
        seg = segments[i]
        arc = tracks[seg.track].arc_m
        if seg.v == node:
            beyond = float(arc[-1] - arc[seg.last_frame])
            lone = (seg.track, seg.last_frame) not in after
        else:
            beyond = float(arc[seg.first_frame] - arc[0])
            lone = (seg.track, seg.first_frame) not in before
        return lone and beyond <= lone_end_m

    def ended_fork(lines: Sequence[Street], walked: Sequence[bool], node: int) -> bool:
        """Two lines, one walked on through ``node``, the other's passes all videos' ends
        there, leaving it :attr:`SegmentParams.ended_fork_deg` or more apart."""
        if params.ended_fork_deg is None or len(lines) != 2 or sum(walked) != 1:
            return False
        ended = [*lines[walked.index(False)].forward, *lines[walked.index(False)].backward]
        if len({segments[i].track for i in ended}) < 2:
            return False  # one walker out and back: no sign that a street goes on
        if not all(video_end_at(i, node) for i in ended):
            return False
        headings = [leaving_deg((*line.forward, *line.backward), node) for line in lines]
        return abs(angle_diff_deg(headings[0], headings[1])) >= params.ended_fork_deg

    def walked_on(part: Street, node: int) -> bool:
        """Some pass of the part goes on through ``node`` on its trajectory into a segment
        of another street or line (not back along the part, not the trajectory's end)."""
        members = {*part.forward, *part.backward}
        if params.lone_ends and len(members) == 1 and video_end_at(next(iter(members)), node):
            return True  # no segment on, and the video ends within lone_end_m
        for i in members:
            seg = segments[i]
            key = (seg.track, seg.last_frame) if seg.v == node else (seg.track, seg.first_frame)
            nxt = (after if seg.v == node else before).get(key)
            if nxt is not None and nxt not in members:
                return True
        return False

    @functools.cache
    def leaving_vector(i: int, node: int) -> tuple[float, float]:
        return _leaving_vector(tracks[segments[i].track], segments[i], node)

    def leaving_deg(members: Iterable[int], node: int) -> float:
        """Mean heading (degrees) at which the segments ``members`` leave ``node``."""
        vectors = [leaving_vector(i, node) for i in members]
        sines = [v[0] for v in vectors]
        cosines = [v[1] for v in vectors]
        return float(np.degrees(np.arctan2(np.sum(sines), np.sum(cosines))))

    def two_mapped(groups: Sequence[Sequence[int]]) -> bool:
        """Each group's passes walk one mapped street, the groups two different ones
        (:attr:`SegmentParams.part_mapped_meet_m`)."""
        if mapped_street is None or params.part_mapped_meet_m is None:
            return False
        mapped = [{mapped_street(segments[i]) for i in group} for group in groups]
        return all(len(m) == 1 and min(m) >= 0 for m in mapped) and mapped[0] != mapped[1]

    def junction_lines(street: Street) -> list[Street]:
        """The street's passes grouped by the headings they leave both nodes at (a pass joins
        a line whose first pass leaves each node within ``part_at_junctions`` degrees of it):
        two lines, each walked on through both nodes and one running more than ``apart_m``
        from the other somewhere, or none."""
        turn = params.part_at_junctions
        nodes = (street.a, street.b)
        if turn is None or any(len(at_node[n]) < 3 for n in nodes):
            return []
        groups: list[list[int]] = []
        for i in (*street.forward, *street.backward):
            for group in groups:
                if all(
                    abs(angle_diff_deg(leaving_deg([i], n), leaving_deg([group[0]], n))) < turn
                    for n in nodes
                ):
                    group.append(i)
                    break
            else:
                groups.append([i])
        if len(groups) != 2:
            return []
        lines = [
            Street(
                0,
                street.a,
                street.b,
                tuple(i for i in group if segments[i].u == street.a),
                tuple(i for i in group if segments[i].u != street.a),
            )
            for group in groups
        ]
        if not all(walked_on(line, n) for line in lines for n in nodes):
            return []
        meet = [float(np.hypot(*(ends_at(lines[0], n) - ends_at(lines[1], n)))) for n in nodes]
        parts_at = [
            gap <= params.meet_m
            and abs(angle_diff_deg(leaving_deg(groups[0], n), leaving_deg(groups[1], n))) >= turn
            for gap, n in zip(meet, nodes, strict=True)
        ]
        # a pass cut short of a node, or two passes along one street, unless the map parts them
        one_end = not all(parts_at)
        if one_end and not (
            any(parts_at)
            and two_mapped(groups)
            and params.part_mapped_meet_m is not None
            and max(meet) <= params.part_mapped_meet_m
        ):
            return []
        first = [segments[group[0]] for group in groups]
        polylines = [
            segment_polyline(tracks[seg.track], seg, params.polyline_samples) for seg in first
        ]
        apart = max(float(_distances_to(polylines[k], polylines[1 - k]).max()) for k in (0, 1))
        return lines if params.apart_m is not None and apart > params.apart_m else []

    parted: dict[int, tuple[list[Street], list[int]]] = {}
    for street in streets:
        if street.id in parts:
            where = [n for n in dict.fromkeys((street.a, street.b)) if lone_parted(street, n)]
            if where:
                parted[street.id] = (parts[street.id], where)
        elif street.a != street.b:
            lines = junction_lines(street)
            if lines:
                parted[street.id] = (lines, [street.a, street.b])
    return parted


def part_lines_at(
    tracks: Sequence[Track],
    segments: Sequence[Segment],
    streets: Sequence[Street],
    params: SegmentParams | None = None,
) -> dict[tuple[int, int], list[Street]]:
    """By (street id, node): the lines :func:`part_two_lines` parts the street into at that
    node (a node of two streets where the lines meet, each walked on through it)."""
    parted = _two_lines(tracks, segments, streets, params or SegmentParams())
    return {
        (street_id, node): lines for street_id, (lines, where) in parted.items() for node in where
    }


def _leaving_vector(track: Track, seg: Segment, node: int) -> tuple[float, float]:
    """(sin, cos) of the heading at which ``seg`` leaves ``node``: its chord from
    ``HEADING_NEAR_M`` to ``HEADING_FAR_M`` out, as the build measures end headings."""
    s0, s1 = float(track.arc_m[seg.first_frame]), float(track.arc_m[seg.last_frame])
    length = max(s1 - s0, 1e-3)
    near, far = min(HEADING_NEAR_M, 0.2 * length), min(HEADING_FAR_M, 0.6 * length)
    if seg.u == node:
        d = track.point_at(s0 + far) - track.point_at(s0 + near)
    else:
        d = track.point_at(s1 - far) - track.point_at(s1 - near)
    rad = np.radians(bearing_deg(float(d[0]), float(d[1])))
    return float(np.sin(rad)), float(np.cos(rad))


def _forked(
    tracks: Sequence[Track],
    segments: Sequence[Segment],
    lines: Sequence[Street],
    node: int,
    forked_deg: float,
    forked_longer: float,
) -> bool:
    """Whether two ``lines`` leave ``node`` at mean headings ``forked_deg`` or more apart and
    the longer one's median pass is ``forked_longer`` times the shorter's or more."""
    if len(lines) != 2:
        return False
    headings = []
    for line in lines:
        members = (*line.forward, *line.backward)
        vectors = np.array(
            [_leaving_vector(tracks[segments[i].track], segments[i], node) for i in members]
        )
        headings.append(bearing_deg(float(vectors[:, 0].sum()), float(vectors[:, 1].sum())))
    if abs(angle_diff_deg(headings[0], headings[1])) < forked_deg:
        return False
    lengths = sorted(
        float(
            np.median(
                [
                    tracks[segments[i].track].arc_m[segments[i].last_frame]
                    - tracks[segments[i].track].arc_m[segments[i].first_frame]
                    for i in (*line.forward, *line.backward)
                ]
            )
        )
        for line in lines
    )
    return lengths[1] >= forked_longer * lengths[0]


def part_two_lines(
    tracks: Sequence[Track],
    segments: Sequence[Segment],
    streets: Sequence[Street],
    params: SegmentParams | None = None,
    *,
    junctions_only: bool = False,
    mapped_street: Callable[[Segment], int] | None = None,
) -> list[Street]:
    """``streets`` (from :func:`group_streets`) with each street whose segments run apart
    (:attr:`SegmentParams.apart_m`) made two or more, where one of its nodes has only two
    streets, the other one a single line, and the parted lines meet at that node
    (:attr:`SegmentParams.meet_m`) and are each walked on through it
    (:attr:`SegmentParams.walked_on`): two real streets between the same nodes, a straight
    one and a bent one, make that node a junction of three, where grouping them left it a
    bend. Elsewhere (both nodes already junctions) the split would only add a street beside one
    the build has; where both streets of a node part, the node is a bend of two streets
    side by side (the old town's 120 m pair). Street ids are renumbered in order.
    ``junctions_only``: only streets between two junctions are parted
    (:attr:`SegmentParams.part_at_junctions`; with OSM, :attr:`~SegmentParams.
    part_at_junctions_osm`). ``mapped_street``: the OSM street a segment walks most, -1 for
    none (:meth:`~city360.pose_graph.osm_dead_ends.MatchedCuts.most_walked_street`), for
    :attr:`SegmentParams.part_mapped_meet_m`."""
    params = params or SegmentParams()
    two_lines = _two_lines(
        tracks,
        segments,
        streets,
        params,
        junctions_only=junctions_only,
        mapped_street=mapped_street,
    )
    parted: list[Street] = []
    for street in streets:
        parted.extend(two_lines[street.id][0] if street.id in two_lines else [street])
    return [
        Street(k, street.a, street.b, street.forward, street.backward)
        for k, street in enumerate(parted)
    ]


def turned_forks(
    tracks: Sequence[Track],
    segments: Sequence[Segment],
    streets: Sequence[Street],
    nodes: Iterable[int],
    params: SegmentParams | None = None,
) -> set[int]:
    """The nodes among ``nodes`` (those :func:`dissolve_pass_through` removes: two streets,
    every trajectory going on through) where :func:`part_two_lines` parts one of the streets
    and a trajectory turns from one of its lines into another: a walker who comes up one
    branch of a fork and goes back down the other. Dissolved, such a node leaves the two
    lines one street that the final :func:`part_two_lines` cannot part, for no node of two
    streets is left at the fork (the old town's knot C, coverage seed 2). A walker turning
    back on one street keeps to one line (:attr:`SegmentParams.apart_m`), and with
    :attr:`SegmentParams.turned_legs_apart` its legs in and out must run apart however the
    street's passes were parted into lines; two lines that
    only run side by side, each walked straight through, keep no node (the wander passes
    crossing between the old town's side-by-side streets). Empty when
    :attr:`SegmentParams.turned_forks` is off or :attr:`SegmentParams.apart_m` is None."""
    params = params or SegmentParams()
    apart_m = params.apart_m
    if not params.turned_forks or apart_m is None:
        return set()
    wanted = set(nodes)
    after = {(seg.track, seg.first_frame): i for i, seg in enumerate(segments)}
    kept: set[int] = set()
    for lines, where in _two_lines(tracks, segments, streets, params).values():
        line_of = {i: k for k, line in enumerate(lines) for i in (*line.forward, *line.backward)}
        for node in wanted.intersection(where):
            for i, k in line_of.items():
                seg = segments[i]
                if seg.v != node:
                    continue
                turned = after.get((seg.track, seg.last_frame))
                if turned is None or line_of.get(turned, k) == k:
                    continue
                out = segments[turned]
                if params.turned_legs_apart and not _runs_apart(
                    tracks[seg.track], seg, tracks[out.track], out, apart_m, params
                ):
                    continue  # turned back along one street: the lines parted by order
                kept.add(node)
                break
            if (
                node not in kept
                and params.forked_deg is not None
                and _forked(tracks, segments, lines, node, params.forked_deg, params.forked_longer)
            ):
                kept.add(node)
    return kept


def dissolve_pass_through(
    segments: Sequence[Segment], streets: Sequence[Street], node_ids: Sequence[int]
) -> set[int]:
    """Nodes (among ``node_ids``) that are no branch point: exactly two streets, neither a loop,
    and every trajectory that reaches the node runs straight through it on the same video."""
    degree: dict[int, set[int]] = defaultdict(set)
    loops: set[int] = set()
    for street in streets:
        degree[street.a].add(street.id)
        degree[street.b].add(street.id)
        if street.a == street.b:
            loops.add(street.a)
    arrivals: dict[int, list[Segment]] = defaultdict(list)
    departures: dict[tuple[int, int], Segment] = {}
    starts: dict[int, list[Segment]] = defaultdict(list)
    for seg in segments:
        arrivals[seg.v].append(seg)
        starts[seg.u].append(seg)
        departures[(seg.track, seg.first_frame)] = seg
    arrival_keys = {(seg.track, seg.last_frame) for seg in segments}
    dissolved = set()
    for node in node_ids:
        if len(degree[node]) != 2 or node in loops:
            continue
        through = all((s.track, s.last_frame) in departures for s in arrivals[node])
        fed = all((s.track, s.first_frame) in arrival_keys for s in starts[node])
        if through and fed:
            dissolved.add(node)
    return dissolved
