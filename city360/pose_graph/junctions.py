"""Junctions and dead ends found from trajectories alone.

A junction is where passes along different streets meet. Every pair of track samples closer
than :attr:`JunctionParams.pair_radius_m` that belongs to different passes (another trajectory,
or the same trajectory more than ``pass_separation_m`` further along) and runs at clearly
different axial headings (a street has no preferred direction, so 10° and 190° are the same
street) votes for the point where the two local direction lines intersect. That covers
crossings, near-approaches that never touch because of GPS noise, turns, and T-junctions where a
trajectory starts or ends short of another (the vote may lie up to ``extrapolate_m`` beyond the
samples). Votes are clustered DBSCAN-style (core points with enough neighbours, connected
components over core points) and each dense cluster's median becomes a junction. Passes along the
same street, in the same or opposite direction, vote for nothing: they are merged into one street
later (:mod:`city360.pose_graph.segments`).

A walk that turns back at the end of a spur (into a side street and out again) films the spur
twice but along one street, so it casts no votes where the spur leaves the street it came
from, and a spur shorter than half of ``pass_separation_m`` is one pass to the voting above. Its
root is found from the U-turn instead (:func:`spur_roots`): from the apex the way in and the way
out are followed backwards together; where they part (more than ``spur_split_m``) is the
junction the spur leaves. Without OSM, a walker who steps 5-7 m into a short stub and walks on
(a "peek") turns less than ``uturn_deg`` over ``uturn_window_m``, which reaches back past the
junction; such U-turns are also sought with the shorter ``peek_window_m`` (:func:`_peeks`).

Dead ends are where a trajectory turns back (a U-turn apex: the travel direction a few metres
before and after differs by more than ``uturn_deg``) or starts/ends away from every junction.
Candidates from several trajectories within ``dead_end_merge_m`` become one node.

All positions are metres in the city CRS; all work is vectorised over samples with
``scipy.spatial.cKDTree`` and ``scipy.sparse.csgraph``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from city360.pose_graph.corner_meets import CornerParams, corner_meets
from city360.pose_graph.pass_partings import PartingParams, pass_partings
from city360.pose_graph.tracks import Track
from city360.pose_graph.vote_passes import pair_test, part_test

__all__ = [
    "DeadEndEvent",
    "JunctionParams",
    "TrackTurns",
    "TurnFindings",
    "cluster_centres",
    "crossing_votes",
    "find_dead_ends",
    "find_junction_parts",
    "find_junctions",
    "find_turns",
    "group_dead_ends",
    "merge_close",
    "merge_found",
    "merge_parts_apart",
    "mid_street_turns",
    "side_step_feet",
    "spur_roots",
]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class JunctionParams:
    """Tuning of junction and dead-end detection (metres and degrees)."""

    sample_step_m: float = 1.0
    """Track samples used for voting are taken every this many metres of travel."""
    pair_radius_m: float = 10.0
    """Samples of two passes closer than this may vote."""
    pass_separation_m: float = 30.0
    """Two samples of one trajectory belong to different passes when this far apart along it."""
    min_angle_deg: float = 25.0
    """Smallest axial heading difference (0..90) for two passes to be different streets."""
    extrapolate_m: float = 12.0
    """A vote may lie at most this far from either sample along its direction line."""
    cluster_eps_m: float = 2.5
    """Neighbourhood radius of vote clustering."""
    cluster_min_votes: int = 6
    """Votes within ``cluster_eps_m`` that make a vote a core point."""
    min_support: int = 30
    """Votes a cluster needs to become a junction (20 let two passes of one bent street vote
    junctions into dense old towns: accuracy suite, precision 0.91 -> 0.95 on average)."""
    merge_m: float = 8.0
    """Junctions closer than this are one junction."""
    split_peaks_m: float | None = 8.0
    """Without OSM, a vote cluster with two density peaks this far apart or more, with a
    saddle between them (``split_saddle``), is two junctions (:func:`_peaks`); None: one
    junction per cluster. Two true junctions 8-16 m apart whose passes cross at both (a
    knot, staggered Ts) pile their votes into one cluster: ``cluster_min_votes`` 6 within
    ``cluster_eps_m`` joins their piles through the votes of the passes between them.
    Off (round thirty, branch pairs30): on 179 cached twins without OSM, 8 m gives 21 rows
    better, 8 worse, 19 mixed (old town wander+stops 0 R 0.857 -> 0.952, Helsinki wander 0
    R 0.918 -> 0.943; turns lost on the short links between the parts); 10 m 16 better,
    3 worse, 16 mixed; fresh old town seed 40 one row worse at both. Round thirty-one
    (branch peaks31, with ``split_crossed_m``): on 28 suite twins 5 better, 2 worse, 3
    mixed (Helsinki wander+stops 0 and 1, old town coverage+stops 0 F1 0.959 -> 0.931): the
    parts stand at true junctions; the losses come after, in segments and refine. Set it
    with :attr:`~city360.pose_graph.refine.RefineParams.knot_ways_m` 15 (branch cuts31: 3
    rows better again, old town wander+stops 0 to 1.000 / 1.000 / 0.986; 4 rows still worse
    or mixed against main). Round thirty-two (branch stub32): with
    :attr:`~city360.pose_graph.refine.RefineParams.through_stub_m` and
    :attr:`~city360.pose_graph.segments.SegmentParams.turned_legs_apart` Helsinki wander 1
    and wander+stops 0 are no longer worse: 9 suite rows better, 2 worse (Helsinki
    wander+stops 1, old town coverage+stops 0); fresh Kaisaniemi rows move both ways.
    On since round thirty-two (the lead), with ``knot_ways_m`` 15,
    :attr:`~city360.pose_graph.segments.SegmentParams.graze_m` 7 and ``split_part_shift_m``
    4, and the scorer's reading of two close ways out of a junction of a short stub: on 120
    kept twins without OSM 19 rows better in P, R or F1 (suite 10: old town wander+stops 0
    R 0.857 -> 1.000, Helsinki wander 0 R 0.926 -> 0.951; unseen 4), none worse but in the
    fresh Kaisaniemi footpath park (junctions 5-7 m apart, every row under target either way):
    4 rows worse, 2 mixed, 5 better (mean P -0.02, R +0.01, F1 +0.02). With OSM it never
    acts (120 rows equal). None: one junction per cluster."""
    split_saddle: float = 0.5
    """With ``split_peaks_m``: the lowest vote density on the line between two peaks must be
    under this fraction of the lower peak's (a valley), and each part must keep
    ``min_support`` votes."""
    split_part_votes: int = 300
    """With ``split_peaks_m``: and this many votes at least (a flank's pile, 7 m or more
    from any true junction, holds 50-250)."""
    split_share: float = 0.2
    """With ``split_peaks_m``: each part must also keep this fraction of the largest part's
    votes. A second crossing of a pair is crossed by the same passes (old town wander+stops
    seed 0: parts at true junctions hold 0.6-0.8 of their partner's votes); a flank where two
    passes run close past a crossing (a bent street, a wobble) piles 0.02-0.1 of it 10-17 m
    from any junction."""
    split_crossed_m: float | None = 3.0
    """With ``split_peaks_m``: a part other than the largest stays apart only where passes go
    different ways: the ways of the passes within this many metres of its median differ by
    ``split_ways_deg`` or more (:func:`~city360.pose_graph.vote_passes.route_spread_deg`).
    None: no such test. Two passes running close past a crossing, or round a bend, pile
    300-700 votes beside it, a part that passes the vote tests (Helsinki wander seed 1: two
    extra junctions 13 and 21 m from any junction)."""
    split_held_apart: bool = False
    """With ``split_peaks_m``: refine's first move (to where the arms' lines meet) may not
    bring two junctions that stood more than ``merge_m`` apart within ``merge_m`` of each
    other; both stay where they were. A part of a knot has arms to its partners, whose lines
    pull it towards them (old town coverage+stops 0: the part (-34.2, 81.5), 1.8 m from the
    true (-35.8, 82.3), moved 5.6 m east and merged into its partner (-26.7, 78.7)). Off:
    with ``split_peaks_m`` 8 on 28 suite twins (branch cuts31) 5 rows better, 5 worse in P,
    R or F1 (old town coverage 0 P 1.000 -> 0.909), and the row it was made for equal."""
    split_part_shift_m: float | None = 4.0
    """With ``split_peaks_m``: refine's first move (to where the arms' lines meet) takes a
    part of a parted pile at most this many metres (0: it stays at its votes' median); None:
    it moves as any junction (up to
    :attr:`~city360.pose_graph.refine.RefineParams.max_shift_m`). A part stands at a true
    junction (round thirty-one); its arms run to its partners 8-20 m away, and on a tangle
    of footpaths their lines meet elsewhere (fresh Kaisaniemi wander+stops 1: the part
    (-31.8, -82.0), 4.0 m from the true (-35.6, -82.8), moved 8.4 m north and was
    dropped). 4 m (round thirty-two, branch kpart32; acts only with ``split_peaks_m``): with
    the parting on, against it without the cap, no row worse on 12 Kaisaniemi, 28 suite, 56
    unseen and 24 fresh Bulevardi and Nerima twins; Kaisaniemi wander+stops 1, old town
    coverage+stops 0 (F1, by a later step: its part still merges) and Nerima SW
    coverage+stops 6 better; fresh Kaisaniemi seeds 3-4 one row better, one worse (wander 3
    F1), one mixed. 3 m also keeps Kaisaniemi coverage 0's parts
    (-50.3, -106.5) and (-58.2, -113.1) from merging (a 3.7 m move brings them 7.9 m apart)
    but loses wander 2's F1; 3.5 m and under 3 m lose old town wander 0's R."""
    split_leg_m: float = 8.0
    """With ``split_crossed_m``: length in metres of each pass's legs before and after its
    closest approach to a part's median."""
    split_ways_deg: float = 25.0
    """With ``split_crossed_m``: degrees (0..90) two passes' ways must differ by."""
    split_close_m: float | None = 6.5
    """With ``split_peaks_m``: two peaks of a pile this many metres apart or more, but under
    ``split_peaks_m``, part it too when the passes tell two junctions
    (:func:`~city360.pose_graph.vote_passes.pair_test`: each peak has an arm of its own,
    a pass leaving it along a street that no pass leaves the other along); the valley and vote
    tests apply as for any peak. Two true junctions 8-10 m apart pile their votes in one
    cluster whose tops stand 7 m apart (fresh Bulevardi's Erottaja knot, true (142.6,
    132.7) and (151.3, 132.7): tops 7.1 m apart in wander 2 and wander+stops 2). 6.5 m
    (round thirty-five, branch pair35), with ``split_parts_apart``: without OSM on the 120
    kept twins and 39 held-out rows 4 rows better (Kaisaniemi wander+stops 0 P 0.926 ->
    1.000; Helsinki wander 1 R 0.952 -> 0.968; held-out Bulevardi wander 5 to 1.000 /
    1.000 / 1.000; old town wander+stops 6 R 0.952 -> 1.000), none worse, 155 equal; on its
    fresh input (Bulevardi seed 6, Helsinki SE seed 10) Bulevardi wander 6 R 0.923 -> 1.000,
    none worse. Alone (parts merged back after refine) Helsinki wander+stops 0 lost street F1
    (0.934 -> 0.930). With OSM it does not act (no parting). None: peaks under
    ``split_peaks_m`` never part a pile."""
    split_close_clear_m: float = 5.0
    """With ``split_close_m``: metres a pass's leg from one peak must keep from the other to
    be an arm of that peak's own (a leg by the other is the link between them)."""
    split_close_arm_deg: float = 45.0
    """With ``split_close_m``: degrees (0..180, directed) an arm of one peak must turn from
    every arm of the other for it to be the peak's own."""
    split_parts_apart: bool = True
    """With ``split_close_m``: after refine's first move, the merge of junctions within
    ``merge_m`` never joins two parts of piles parted at a peak under ``split_peaks_m`` from
    another (:func:`merge_parts_apart`), as the merge of the votes' junctions never joins two
    parts of one pile. Such parts are born 7-9 m apart; refine moves them towards each other
    (each up to ``split_part_shift_m``) and they were merged back into one (fresh Bulevardi
    wander 2: parts (144.2, 132.7) and (152.7, 133.3) merged at (149.7, 133.1)). On with
    ``split_close_m`` (measured together, see there); held for every part of every parted
    pile it moved 13 of 159 rows, 1 worse (held-out old town wander 6 street F1 0.972 ->
    0.959) and 3 both ways. False: merged as any junctions."""
    split_every_part_apart_m: float | None = None
    """With ``split_parts_apart``: metres two parts must stand apart after refine's first
    move for that merge to hold them apart when either comes from a pile parted otherwise
    than at close tops (at peaks ``split_peaks_m`` or more apart, or by the pair test's
    parts); closer, they merge as any junctions. Such pairs 5.4-7.8 m apart stood at two
    true junctions in every case traced, pairs under 5 m mostly at one (suite Helsinki
    wander 1: (-468.8, -53.0) / (-465.1, -50.1), 4.7 m, by the one true (-463.6, -46.9)).
    Off (round thirty-six, branch hold36): at 5 m, without OSM on the 120 kept and 61
    held-out twins, 9 rows better (held-out Bulevardi wander 7 R 0.929 -> 1.000), 1 mixed
    and 2 worse (held-out old town wander 6 street F1 0.972 -> 0.959, wander 10 1.000 ->
    0.986: right pairs at a knot of three true junctions, their streets then cut to the
    wrong part); fresh Helsinki seed 3 2 rows worse, none better. 6 m: 2 fewer better, the
    same worse; 0 (every pair): 11 better, 2 worse, 3 mixed. None: only parts of piles
    parted at close tops are held apart."""
    quiet_turn_backs: bool = True
    """A U-turn mid-street casts no crossing votes (:func:`mid_street_turns`): while it
    turns, the walker's heading sweeps across the street, and its samples vote with the
    passes that walk on along the street for a junction that is none (old town wander
    seed 0 at (-104.6, 122.5), 11 m from a T). Round twenty-six (extras26) left it off:
    old town wander+stops 1 lost a true junction and Helsinki one-way 1 a turn. On since
    round twenty-eight (branch turnback28), with ``turn_back_same_street``,
    ``turn_back_alone``, the walker's own other passes counted as crossing streets, and
    :attr:`~city360.pose_graph.refine.RefineParams.split_own_arms_beside` (which keeps
    wander+stops 1's pair): on 129 cached twins without OSM old town wander 0 reaches
    target (P 0.913 -> 0.955, F1 0.868 -> 0.907, turns 0.958 -> 0.986), 128 rows equal,
    none worse; fresh seeds in the design notes."""
    turn_back_same_street: bool = True
    """With ``quiet_turn_backs``: a U-turn is mid-street only when the walker goes back along
    the street it came on (the way out, ``uturn_window_m`` after the turn, within
    ``min_angle_deg`` of the way in): one that leaves along another street turned a sharp
    corner at a junction, and its votes may be all that junction has (Helsinki one-way seed
    1, walk_023 at (426.1, -417.0), 3.5 m from a T whose third street leaves 37 degrees off
    and only it walks: muted, the T's turns came out wrong, turns 0.960 -> 0.957). Round
    twenty-eight (branch turnback28)."""
    turn_back_alone: bool = True
    """With ``quiet_turn_backs``: a U-turn is mid-street only when the walker makes no other
    U-turn within ``turn_back_reach_m`` of its apex: one turning back and forth is milling
    about at a stop, often in a dead-end street walked in to different depths (Helsinki
    wander+stops seed 5, walk_010's three turns 2-10 m apart 2-12 m short of a dead end
    at (301.2, 748.2): muted, the dead end's street was built as a loop, F1 0.906 ->
    0.901). Round twenty-eight (branch turnback28), found on a fresh seed."""
    turn_back_reach_m: float = 12.0
    """A U-turn is mid-street when another pass runs along its street this far beyond the
    apex (in the direction the walker came) ..."""
    turn_back_near_m: float = 5.0
    """... within this distance of that point."""
    turn_back_max_m: float = 20.0
    """A U-turn whose turning stretch is longer than this (metres of travel) is a walker
    milling about at a stop, not a turn (old town wander+stops seed 1: 600 m of GPS jitter
    at a T; its votes are the T's)."""
    turn_back_clear_m: float = 10.0
    """... and no pass of another track crosses its street (heading ``min_angle_deg`` or more
    off) within this distance of the apex (0: not asked)."""
    uturn_deg: float = 120.0
    """Turning more than this within ``uturn_window_m`` either side is a U-turn."""
    uturn_window_m: float = 10.0
    dead_end_merge_m: float = 8.0
    """Dead-end candidates closer than this are one dead end. Twice the smoothed GPS error, not
    more: where a crop or a filming boundary cuts two streets 10-12 m apart, a wider radius
    fused their two ends into one node and both streets into one (old-town twins)."""
    junction_clearance_m: float = 8.0
    """A dead-end candidate closer than this to a junction belongs to the junction."""
    spur_split_m: float = 8.0
    """The ways into and out of a spur part at its root when they are this far apart."""
    spur_min_m: float = 5.0
    """Shortest spur (apex to root) whose root counts as a junction."""
    corners: CornerParams | None = field(default_factory=CornerParams)
    """Two passes turning corners at one place onto different streets are a junction there
    (:func:`~city360.pose_graph.corner_meets.corner_meets`; None: off). Without OSM only:
    with OSM the map's node is the junction. On: measured on 99 twins without OSM (round
    twenty-four), junction targets 71 -> 76 rows, no junction P or R worse."""
    sidewalks_m: float = 16.0
    """Ways into and out of a U-turn that stay apart by more than the gap they keep (but
    within ``spur_split_m``) for this long before they part walked a spur's two sidewalks: its
    root is where they first part by ``spur_split_m``. Ways that leave a spur go from that gap
    to ``spur_split_m`` within a few metres. 4 and 8 m moved spur roots and dead ends of the
    dense twins without OSM (old town wander seed 0 F1 0.832 -> 0.769); 16 and 24 m none."""
    peek_window_m: float | None = 6.0
    """Without OSM, U-turns are also sought with this shorter window; one that the
    ``uturn_window_m`` search misses counts only as a spur (ways part ``spur_min_m`` or more
    from it): a walker who steps 5-7 m into a short stub and walks on turns less than
    ``uturn_deg`` over 10 m, which reach back past the junction. None: not sought. On
    (round twenty-six, hmiss26, with ``peek_root_m`` and ``peek_pace``): 148 twins without
    OSM, 10 rows better in junction R and street F1 (Helsinki wander 0 R 0.902 -> 0.910,
    wander+stops 0 R 0.943 -> 0.951), none worse in P, R, F1 or turns."""
    peek_reach_m: float = 4.5
    """... and only when its apex lies this far or more from where the ways part: a walker who
    mills about at a stop turns back 3-4 m from where the ways part, one who steps into a
    stub 4.5-6.5 m."""
    peek_pace: float | None = 2.5
    """... and only when the walker's seconds per metre from where the ways part to the apex
    and back are under this many times the video's median: one who mills about at a stop
    takes 3 times as long, one who steps into a stub 1.5-2 times; None: not checked."""
    peek_root_m: float | None = 12.0
    """... and its apex is a dead end only while a junction lies this close to where the ways
    part (the stub's junction); None: always."""
    spur_street_on_m: float | None = 12.0
    """Without OSM, a spur's apex that only the shorter ``spur_min_m`` clearance keeps (it lies
    within ``junction_clearance_m`` of a junction) is no dead end when another pass runs along
    its street (within ``turn_back_near_m``, heading within ``min_angle_deg``) at the apex and
    this many metres beyond it, in the direction the walker came, and its ways part within
    ``spur_min_m`` of that junction, ``junction_clearance_m`` to twice that from the apex
    (:func:`_turned_past`): the street goes on, and the walker came through the junction and
    turned back a few metres past it. Such an apex took the junction's
    streets (Helsinki wander seed 1, walk_060 turning at (-439.0, -40.6), 6.4 m past the
    junction at (-433.1, -42.8): the street walked on north was cut at the apex, the
    junction kept two streets and was dissolved, and the apex was built an extra junction
    10.9 m from the true (-429.0, -45.0)). None: such apexes stay dead ends. 12 m (round
    thirty-two, branch hwan32): on 120 kept twins without OSM (28 suite, 56 unseen, 36
    fresh) Helsinki wander 1 reaches target (P 0.959 -> 0.967, R 0.944 -> 0.952) and fresh
    Nerima mid wander+stops 0 loses an extra (P 0.980 -> 1.000, F1 0.976 -> 1.000); no row
    worse, the other 118 equal. With OSM it does not act (the map places dead ends)."""
    partings: PartingParams | None = field(default_factory=PartingParams)
    """Without OSM, where two passes that came along one path part onto two, a junction
    (:func:`~city360.pose_graph.pass_partings.pass_partings`, counted with ``min_support``
    as a spur's root is), when no junction the votes, spurs or corners found lies within
    :attr:`~city360.pose_graph.pass_partings.PartingParams.clear_m`. At a fork of footpaths
    whose passes curve from one path onto the other the crossing votes pile 10-16 m off or
    nowhere (fresh Kaisaniemi, true (-45.2, -121.4): three passes each take two of its
    three arms, and the pairs part within 1-4 m of it). On (round thirty-six, branch
    kais36): on the 120 kept twins without OSM 3 rows better (Kaisaniemi coverage 0, 1, 2:
    (-45.2, -121.4) and (-59.2, -109.1) found), none worse in P, R or F1, 117 equal. With
    OSM it does not act. None: off."""
    root_apart_m: float | None = None
    """Without OSM, a junction found without votes (a spur's root, a corner meet, a parting:
    ``min_support`` each) farther than this many metres from every vote pile is not merged
    into a pile within ``merge_m``: it merges only with others like it, and it and the pile
    nearest it are held apart at refine's post-move merge, as parts of close-topped piles
    are (``split_parts_apart``). A knot of two true junctions 8-10 m apart, one a shallow
    fork the crossing votes never see, leaves the fork's corner meets 1-2 m from it and
    6-8 m from the other's pile, which swallowed them (fresh Kaisaniemi, true (-59.2,
    -109.1) beside (-51.0, -106.2)). None: every candidate within ``merge_m`` merges."""
    root_apart_ways: int = 3
    """With ``root_apart_m``: a far root is kept out of the merge only where the passes
    within ``root_way_reach_m`` of it leave it in this many ways or more (directed bearings
    of their points ``root_way_leg_m`` on and back, ``root_way_deg`` apart): the arms of a
    junction, not the one street a walker turned back on past a junction (0: every far
    root)."""
    root_way_reach_m: float = 3.0
    """With ``root_apart_m``: metres a pass must come within of a far root to count."""
    root_way_leg_m: float = 10.0
    """With ``root_apart_m``: metres of travel on and back along a pass its ways are read at."""
    root_way_deg: float = 35.0
    """With ``root_apart_m``: degrees (directed) two ways must differ by to be two."""
    vote_chord_m: float | None = None
    """Without OSM, two samples on passes that run side by side cast no vote: their chords,
    from this many metres of travel before each sample to as far after it (cut short at the
    video's ends), lie within ``min_angle_deg`` of each other and ``vote_apart_m`` or more
    apart (:func:`_side_by_side`). The local heading is taken over a few metres; GPS wobble
    on two streets 7-8 m apart turns it 20-45 degrees one way and the other, and the passes
    voted a junction between the streets (unseen Kamppi coverage camera 6 at (-147.2,
    -3.7), 423 votes, 37 of the 256 nearest side by side; without them the pile is not
    moved by refine and the crossed-lines test of ``apart_junctions`` drops it). None: the
    local headings alone. Off (round thirty-three, branch kamp33): 8 m
    mends that row (P 0.923 -> 1.000, F1 0.769 -> 0.880), but on 73 kept twins without OSM
    (28 suite, 21 unseen Helsinki, 24 fresh Helsinki) 7 rows are better, 6 worse and 4
    mixed in P, R and F1: the old town's one-way 0 and one-way+stops 0 lose a junction of
    the dual carriageway's knot, whose halves run side by side 6-8 m apart, Helsinki
    one-way 1 R 0.977 -> 0.961, and the Kaisaniemi footpaths move both ways."""
    vote_apart_m: float = 4.0
    """With ``vote_chord_m``: metres one chord's midpoint must lie off the other chord's line
    for two passes to run side by side (two streets, not two passes along one street
    wobbling into each other near a junction)."""
    side_step_off_m: float | None = 4.0
    """Without OSM, a U-turn (found with ``uturn_window_m``, ``peek_window_m`` or
    ``side_step_window_m``) on a walk that goes on through (the track ``side_step_legs_m`` of
    travel before and after it lies ``side_step_chord_m`` or more apart) whose point farthest
    off the line between those two points (its tip) lies this many metres or more off it, and
    walked under ``peek_pace``, is a spur's end at that tip, needing only
    ``side_step_clear_m`` from every junction (:func:`_side_steps`). A walker who steps 4-6 m
    into a short side street leaves the through street's line; one who mills about at a stop
    turns back on it. Unseen Kamppi's 8.4 m stub at (87.2, -105.6): its tips lie 4.8-6.4 m off
    the walkers' lines and 5.3-7.9 m from the junction, but the 10 m window's apex (the
    stretch's middle) 2.5 m from it, a peek's apex 4.8 m from it once refine moved the
    junction, or the ways parting within ``spur_min_m`` (a step and out) left the stub no dead
    end, and its junction was dissolved. None: off. On (round thirty-five, branch stubb35,
    with ``side_step_line_m`` and ``side_step_foot``): without OSM on the 120 kept twins and
    61 held-out rows 7 better, 0 worse in P, R and F1; off when it landed (branch stub35:
    1 worse, 1 mixed)."""
    side_step_legs_m: float = 12.0
    """With ``side_step_off_m``: metres of travel before and after the apex to the two points
    whose line is the through street's."""
    side_step_chord_m: float = 10.0
    """With ``side_step_off_m``: least metres between those two points (the walker went on,
    not back the way they came)."""
    side_step_window_m: float = 4.0
    """With ``side_step_off_m``: metres of the shortest U-turn window searched (a 4-5 m step
    turns less than ``uturn_deg`` over 6 m)."""
    side_step_clear_m: float = 4.0
    """With ``side_step_off_m``: metres a side step's tip needs from every junction."""
    side_step_root_m: float = 10.0
    """With ``side_step_off_m``: a tip is a side step only while a junction lies this close
    (the side street's own): the Kamppi and Helsinki tips lie 4.4-7.9 m from theirs; a walker
    swinging off a park path 18.7 m from any junction (fresh Kaisaniemi coverage 1 at
    (-32.8, -55.4)) built a junction there."""
    side_step_deep_m: float = 7.0
    """With ``side_step_off_m``: a tip farther than this off the through line is no side step.
    The tips of walks turned back at a junction (a hairpin round its corner) lie 8-11 m off
    the line of their legs, 0.5-4 m from the junction; those of steps into the Kamppi and
    Helsinki 8.4 m stubs 4.8-6.4 m."""
    side_step_line_m: float | None = 3.0
    """With ``side_step_off_m``: a tip is a side step only while its nearest junction lies
    this many metres or less off the walker's line (the line between the track
    ``side_step_legs_m`` of travel before and after it): a side street leaves the through
    street at a junction on the walker's own line. Walkers turning back round a junction's
    corner (unseen Kamppi wander+stops camera 5, tips at (-56.0, -110.1) and (-4.3, 109.4))
    have their junction beside the tip, 5.0-6.1 m off their line; the stubs' junctions lie
    0.1-1.1 m off it. None: no such test."""
    side_step_foot: bool = True
    """With ``side_step_off_m``: move a side step's junction (the nearest voted junction,
    within ``side_step_root_m`` of the tip and ``side_step_line_m`` of the walker's line) to
    the foot of the tip on the walker's line before the first cut, where the side street
    leaves the through street. Unseen Kamppi coverage 5: the votes sit at (87.3, -106.3)
    and a second pile at (79.7, -110.9) where the walker comes out of the stub; the stub was
    cut to the second pile, 8.3 m from the true junction; the foot is (85.7, -106.9)."""


@dataclass(frozen=True, slots=True)
class DeadEndEvent:
    """Frame ``frame`` of trajectory ``track`` (index into the track list) ends at a dead end."""

    track: int
    frame: int
    x_m: float
    y_m: float


def _samples(
    tracks: Sequence[Track], step_m: float
) -> tuple[FloatArray, FloatArray, npt.NDArray[np.int64], FloatArray]:
    xy, heading, owner, arc = [], [], [], []
    for k, track in enumerate(tracks):
        marks = np.arange(0.0, track.length_m + 1e-9, step_m)
        idx = np.unique(np.clip(np.searchsorted(track.arc_m, marks), 0, len(track) - 1))
        xy.append(track.xy[idx])
        heading.append(track.heading_deg[idx])
        owner.append(np.full(idx.shape[0], k, dtype=np.int64))
        arc.append(track.arc_m[idx])
    return (
        np.concatenate(xy),
        np.concatenate(heading),
        np.concatenate(owner),
        np.concatenate(arc),
    )


def crossing_votes(
    tracks: Sequence[Track], params: JunctionParams, *, without_osm: bool = False
) -> FloatArray:
    """Intersection points (V, 2) of the direction lines of nearby samples on different
    streets; dense where streets meet."""
    return _cast_votes(tracks, params, without_osm=without_osm)[0]


def _chords(
    tracks: Sequence[Track],
    owner: npt.NDArray[np.int64],
    arc: FloatArray,
    reach_m: float,
) -> tuple[FloatArray, FloatArray]:
    """Each sample's chord on its own track, from ``reach_m`` of travel before it to
    ``reach_m`` after it (cut short at the track's ends): its midpoint (S, 2) and its unit
    direction (S, 2), both in metres east/north."""
    mid = np.zeros((len(arc), 2))
    way = np.zeros((len(arc), 2))
    for k, track in enumerate(tracks):
        mine = owner == k
        if not mine.any():
            continue
        ends = []
        for shift in (-reach_m, reach_m):
            at = np.clip(arc[mine] + shift, track.arc_m[0], track.arc_m[-1])
            ends.append(
                np.column_stack([np.interp(at, track.arc_m, track.xy[:, c]) for c in (0, 1)])
            )
        mid[mine] = 0.5 * (ends[0] + ends[1])
        way[mine] = ends[1] - ends[0]
    length = np.hypot(*way.T)
    way = way / np.where(length > 0, length, 1.0)[:, None]
    return mid, way


def _side_by_side(
    tracks: Sequence[Track],
    samples: tuple[FloatArray, FloatArray, npt.NDArray[np.int64], FloatArray],
    pairs: npt.NDArray[np.int64],
    params: JunctionParams,
    *,
    chord_m: float,
) -> npt.NDArray[np.bool_]:
    """Which sample ``pairs`` (P,) lie on two passes that run side by side: their chords
    (``chord_m`` of travel either way) within ``min_angle_deg`` of each other and the one's
    midpoint ``vote_apart_m`` or more off the other's line."""
    _, _, owner, arc = samples
    mid, way = _chords(tracks, owner, arc, chord_m)
    i, j = pairs[:, 0], pairs[:, 1]
    cos = np.abs(np.sum(way[i] * way[j], axis=1))
    parallel = cos >= np.cos(np.radians(params.min_angle_deg))
    gap = mid[j] - mid[i]
    off = np.abs(way[i, 0] * gap[:, 1] - way[i, 1] * gap[:, 0])
    return parallel & (off >= params.vote_apart_m)


def _cast_votes(
    tracks: Sequence[Track], params: JunctionParams, *, without_osm: bool = False
) -> tuple[FloatArray, tuple[FloatArray, FloatArray, npt.NDArray[np.int64], FloatArray]]:
    """:func:`crossing_votes` (V, 2) and the samples that cast them (:func:`_samples`)."""
    samples = _samples(tracks, params.sample_step_m)
    xy, heading, owner, arc = samples
    pairs = cKDTree(xy).query_pairs(params.pair_radius_m, output_type="ndarray")
    if pairs.size == 0:
        return np.zeros((0, 2)), samples
    i, j = pairs[:, 0], pairs[:, 1]
    other_pass = (owner[i] != owner[j]) | (np.abs(arc[i] - arc[j]) > params.pass_separation_m)
    axial = np.abs(np.mod(heading[i] - heading[j] + 90.0, 180.0) - 90.0)
    keep = other_pass & (axial >= params.min_angle_deg)
    if without_osm and params.vote_chord_m is not None:
        keep[keep] &= ~_side_by_side(
            tracks, samples, pairs[keep], params, chord_m=params.vote_chord_m
        )
    if params.quiet_turn_backs:
        keep = _loud_turns(tracks, samples, pairs, keep, params)
    return _votes(samples, pairs[keep], params), samples


def _votes(
    samples: tuple[FloatArray, FloatArray, npt.NDArray[np.int64], FloatArray],
    pairs: npt.NDArray[np.int64],
    params: JunctionParams,
) -> FloatArray:
    """Where the direction lines of each pair of ``samples`` meet (V, 2), those within
    ``extrapolate_m`` of both samples."""
    points, ok = _meets(samples, pairs, params)
    return points[ok]


def _meets(
    samples: tuple[FloatArray, FloatArray, npt.NDArray[np.int64], FloatArray],
    pairs: npt.NDArray[np.int64],
    params: JunctionParams,
) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """Where the direction lines of each pair of ``samples`` meet (P, 2), and whether that
    lies within ``extrapolate_m`` of both samples (P,)."""
    xy, heading, _, _ = samples
    i, j = pairs[:, 0], pairs[:, 1]
    hi, hj = np.radians(heading[i]), np.radians(heading[j])
    ui = np.column_stack([np.sin(hi), np.cos(hi)])
    uj = np.column_stack([np.sin(hj), np.cos(hj)])
    cross = ui[:, 0] * uj[:, 1] - ui[:, 1] * uj[:, 0]
    w = xy[j] - xy[i]
    t = (w[:, 0] * uj[:, 1] - w[:, 1] * uj[:, 0]) / cross
    s = (w[:, 0] * ui[:, 1] - w[:, 1] * ui[:, 0]) / cross
    ok = (np.abs(t) <= params.extrapolate_m) & (np.abs(s) <= params.extrapolate_m)
    points = np.asarray(xy[i] + t[:, None] * ui, dtype=np.float64).reshape(-1, 2)
    return points, ok


def mid_street_turns(
    tracks: Sequence[Track],
    samples: tuple[FloatArray, FloatArray, npt.NDArray[np.int64], FloatArray],
    params: JunctionParams,
) -> npt.NDArray[np.int64]:
    """For each of the voting ``samples`` (positions, headings, owning track, arc length, as
    :func:`crossing_votes` takes them) the U-turn mid-street it lies in (0, 1, ... in the
    order found; -1: none): a U-turn
    (:func:`_uturn_stretches`) beyond whose apex, ``turn_back_reach_m`` on in the direction
    the walker came, another pass runs along the same street (within
    ``turn_back_near_m`` of that point, heading within ``min_angle_deg`` of that direction,
    either way). A U-turn at the end of a street or of a spur has no such pass and keeps
    its votes: there the turn may be all that tells a stub from the street it leaves."""
    xy, heading, owner, arc = samples
    turning = np.full(len(xy), -1, dtype=np.int64)
    tree: cKDTree | None = None
    for k, track in enumerate(tracks):
        stretches = _uturn_stretches(track, params)
        apexes = track.xy[[(first + stop - 1) // 2 for first, stop in stretches]]
        for n, (first, stop) in enumerate(stretches):
            if track.arc_m[stop - 1] - track.arc_m[first] > params.turn_back_max_m:
                continue
            apex = (first + stop - 1) // 2
            if params.turn_back_alone and len(stretches) > 1:
                gaps = np.hypot(*(np.delete(apexes, n, axis=0) - track.xy[apex]).T)
                if gaps.min() <= params.turn_back_reach_m:
                    continue  # turning back and forth: milling about at a stop
            # the way the walker came, measured before the turn began
            came_from = track.point_at(float(track.arc_m[first]) - params.uturn_window_m)
            way = track.xy[first] - came_from
            length = float(np.hypot(*way))
            if length == 0.0:
                continue
            way /= length
            came_deg = np.degrees(np.arctan2(way[0], way[1]))
            if params.turn_back_same_street:
                # the way the walker went, measured after the turn ended: back along the
                # street it came on, or off along another (a sharp corner at a junction)
                went = track.point_at(float(track.arc_m[stop - 1]) + params.uturn_window_m)
                went = went - track.xy[stop - 1]
                if np.hypot(*went) > 0.0:
                    went_deg = np.degrees(np.arctan2(went[0], went[1]))
                    if _axial_deg(went_deg, came_deg) >= params.min_angle_deg:
                        continue
            if tree is None:
                tree = cKDTree(xy)
            # passes along the street at the apex and beyond it: the street goes on
            if not all(
                _along(
                    tree, (xy, heading, owner, arc), point, k, track.arc_m[apex], came_deg, params
                )
                for point in (track.xy[apex], track.xy[apex] + params.turn_back_reach_m * way)
            ):
                continue
            if params.turn_back_clear_m > 0:
                # another street within reach: the turn's votes may be that junction's
                close = np.asarray(
                    tree.query_ball_point(track.xy[apex], params.turn_back_clear_m), np.int64
                )
                # any other pass, the walker's own too (a route walk crosses its street
                # once, on another pass of the same video)
                other = (owner[close] != k) | (
                    np.abs(arc[close] - track.arc_m[apex]) > params.pass_separation_m
                )
                close = close[other]
                across = np.abs(np.mod(heading[close] - came_deg + 90.0, 180.0) - 90.0)
                if (across >= params.min_angle_deg).any():
                    continue
            mine = (owner == k) & (arc >= track.arc_m[first]) & (arc <= track.arc_m[stop - 1])
            turning[mine] = int(turning.max()) + 1
    return turning


def _axial_deg(a_deg: float, b_deg: float) -> float:
    """Angle between two lines of bearings ``a_deg`` and ``b_deg``, 0..90 degrees."""
    return float(abs(np.mod(a_deg - b_deg + 90.0, 180.0) - 90.0))


def _loud_turns(
    tracks: Sequence[Track],
    samples: tuple[FloatArray, FloatArray, npt.NDArray[np.int64], FloatArray],
    pairs: npt.NDArray[np.int64],
    voting: npt.NDArray[np.bool_],
    params: JunctionParams,
) -> npt.NDArray[np.bool_]:
    """Which of the sample ``pairs`` may still vote (``voting``: those that would): all but
    those of a U-turn mid-street (:func:`mid_street_turns`) whose votes (their median) lie
    farther than ``merge_m`` from every junction the other votes make. A turn next to a
    junction adds its votes to that junction's (Helsinki wander seed 2: a walker turning back
    6 m short of a T between two Ts 15 m apart; without its votes one of them was lost)."""
    turning = mid_street_turns(tracks, samples, params)
    i, j = pairs[:, 0], pairs[:, 1]
    turn = np.maximum(turning[i], turning[j])
    quiet = voting & (turn >= 0)
    if not quiet.any():
        return voting
    others = _votes(samples, pairs[voting & (turn < 0)], params)
    centres, _ = cluster_centres(
        others,
        eps_m=params.cluster_eps_m,
        min_votes=params.cluster_min_votes,
        min_support=params.min_support,
    )
    keep = voting.copy()
    for label in np.unique(turn[quiet]):
        mine = quiet & (turn == label)
        votes = _votes(samples, pairs[mine], params)
        if len(votes) and len(centres):
            where = np.median(votes, axis=0)
            if float(np.hypot(*(centres - where).T).min()) <= params.merge_m:
                continue  # beside a junction: its votes are that junction's
        keep &= ~mine
    return keep


def _along(
    tree: cKDTree,
    samples: tuple[FloatArray, FloatArray, npt.NDArray[np.int64], FloatArray],
    point: FloatArray,
    track: int,
    apex_arc_m: float,
    bearing: float,
    params: JunctionParams,
) -> bool:
    """Whether another pass than track ``track``'s around ``apex_arc_m`` runs within
    ``turn_back_near_m`` of ``point`` along ``bearing`` (within ``min_angle_deg``, either
    way)."""
    _, heading, owner, arc = samples
    near = np.asarray(tree.query_ball_point(point, params.turn_back_near_m), np.int64)
    if not near.size:
        return False
    other = (owner[near] != track) | (np.abs(arc[near] - apex_arc_m) > params.pass_separation_m)
    axial = np.abs(np.mod(heading[near] - bearing + 90.0, 180.0) - 90.0)
    return bool((other & (axial < params.min_angle_deg)).any())


def _components(n: int, pairs: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    if pairs.size == 0:
        return np.arange(n, dtype=np.int64)
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    return labels.astype(np.int64)


def _weighted_median(values: FloatArray, weights: FloatArray) -> float:
    order = np.argsort(values)
    cumulative = np.cumsum(weights[order])
    return float(values[order][np.searchsorted(cumulative, 0.5 * cumulative[-1])])


def cluster_centres(
    points: FloatArray,
    *,
    eps_m: float,
    min_votes: int,
    min_support: int,
    cell_m: float = 0.5,
    split_peaks_m: float | None = None,
    split_saddle: float = 0.5,
    split_share: float = 0.0,
    split_part_votes: int = 0,
) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """DBSCAN-like clustering of ``points``: returns cluster medians (C, 2) and sizes (C,).

    Votes pile up by the thousand at busy junctions, so they are first binned into
    ``cell_m`` cells (weight = votes in the cell). Core cells have at least ``min_votes`` votes
    within ``eps_m``; clusters are connected components of core cells; clusters with fewer than
    ``min_support`` votes in core cells are noise. Centres are per-axis weighted medians.
    With ``split_peaks_m`` a cluster is first parted at its density peaks (:func:`_peaks`).
    """
    centres, support, _, _ = _clusters(
        points,
        eps_m=eps_m,
        min_votes=min_votes,
        min_support=min_support,
        cell_m=cell_m,
        split_peaks_m=split_peaks_m,
        split_saddle=split_saddle,
        split_share=split_share,
        split_part_votes=split_part_votes,
    )
    return centres, support


def _clusters(
    points: FloatArray,
    *,
    eps_m: float,
    min_votes: int,
    min_support: int,
    cell_m: float,
    split_peaks_m: float | None,
    split_saddle: float,
    split_share: float,
    split_part_votes: int,
    part_test: Callable[[FloatArray], bool] | None = None,
    close_m: float | None = None,
    close_test: Callable[[FloatArray, FloatArray], bool] | None = None,
) -> tuple[FloatArray, npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """:func:`cluster_centres`, and for each centre the cluster it was parted from (-1: a
    whole cluster) and whether that cluster was parted at a peak under ``split_peaks_m``
    from another (``close_m``). ``part_test``: given the median of a part of a parted
    cluster, whether it may stay apart (all but the largest part are asked). ``close_m``,
    ``close_test``: peaks from ``close_m`` to ``split_peaks_m`` apart that ``close_test``
    (given the two peak cells' positions) passes part the cluster too (:func:`_peaks`)."""
    empty = (
        np.zeros((0, 2)),
        np.zeros(0, dtype=np.int64),
        np.zeros(0, dtype=np.int64),
        np.zeros(0, dtype=bool),
    )
    if len(points) == 0:
        return empty
    cell = np.floor(points / cell_m).astype(np.int64)
    cell -= cell.min(axis=0)
    key = cell[:, 0] * (int(cell[:, 1].max()) + 1) + cell[:, 1]  # 1-D keys sort far faster
    _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    weight = counts.astype(np.float64)
    centres = np.column_stack(
        [
            np.bincount(inverse, weights=points[:, 0]) / weight,
            np.bincount(inverse, weights=points[:, 1]) / weight,
        ]
    )
    pairs = cKDTree(centres).query_pairs(eps_m, output_type="ndarray")
    density = weight.copy()
    if pairs.size:
        np.add.at(density, pairs[:, 0], weight[pairs[:, 1]])
        np.add.at(density, pairs[:, 1], weight[pairs[:, 0]])
    core = density >= min_votes
    if not core.any():
        return empty
    core_pairs = pairs[core[pairs[:, 0]] & core[pairs[:, 1]]] if pairs.size else pairs
    labels = _components(len(centres), core_pairs)
    whole = labels.copy()

    def median(cells: npt.NDArray[np.int64]) -> FloatArray:
        return np.asarray(
            [
                _weighted_median(centres[cells, 0], weight[cells]),
                _weighted_median(centres[cells, 1], weight[cells]),
            ]
        )

    close_born: set[int] = set()
    if split_peaks_m is not None:
        labels, close_born = _peaks(
            centres,
            density,
            core,
            labels,
            apart_m=split_peaks_m,
            saddle=split_saddle,
            weight=weight,
            min_support=min_support,
            share=split_share,
            part_votes=split_part_votes,
            stays=None if part_test is None else lambda cells: part_test(median(cells)),
            close_m=close_m,
            close_test=close_test,
        )
    found, support, group, born = [], [], [], []
    for label in np.unique(labels[core]):
        members = core & (labels == label)
        total = float(weight[members].sum())
        if total < min_support:
            continue
        origin = int(whole[members][0])
        parted = split_peaks_m is not None and bool(
            (core & (whole == origin) & (labels != label)).any()
        )
        group.append(origin if parted else -1)
        born.append(parted and origin in close_born)
        found.append(median(np.flatnonzero(members)))
        support.append(int(total))
    if not found:
        return empty
    return (
        np.asarray(found),
        np.asarray(support, dtype=np.int64),
        np.asarray(group, dtype=np.int64),
        np.asarray(born, dtype=bool),
    )


def _peaks(
    centres: FloatArray,
    density: FloatArray,
    core: npt.NDArray[np.bool_],
    labels: npt.NDArray[np.int64],
    *,
    apart_m: float,
    saddle: float,
    weight: FloatArray,
    min_support: int,
    share: float,
    part_votes: int,
    step_m: float = 0.5,
    stays: Callable[[npt.NDArray[np.int64]], bool] | None = None,
    close_m: float | None = None,
    close_test: Callable[[FloatArray, FloatArray], bool] | None = None,
) -> tuple[npt.NDArray[np.int64], set[int]]:
    """Cluster ``labels`` of the vote cells (``centres``, ``density``: votes within the
    cluster radius, ``core``) with each cluster parted at its density peaks.

    A peak is a core cell whose density is the highest of its cluster's cells within half
    of ``apart_m`` and that lies ``apart_m`` or more from every higher peak of its cluster.
    It parts the cluster only when the density along the straight line to the nearest higher
    peak falls under ``saddle`` times its own somewhere (cells missing there count 0): two
    crossings 10 m apart pile their votes at each, with fewer between (the passes from one
    to the other), while one wide crossing's votes rise to one top however far they spread.
    Each core cell then goes to its nearest peak; a part under ``min_support`` or
    ``part_votes`` votes, or under ``share`` of the largest part's, goes back to the others;
    so does, smallest first, a part other than the largest whose cells ``stays`` rejects.

    With ``close_m`` and ``close_test`` a cell from ``close_m`` to ``apart_m`` from its
    nearest higher peak is a peak too when ``close_test`` (its position, the higher peak's)
    says the passes there make two junctions; it must be the highest cell within half of
    ``close_m`` (its partner's flank reaches nearer). Also returns the labels of the
    clusters parted with such a peak.
    """
    out = labels.copy()
    close_born: set[int] = set()
    tree = cKDTree(centres)
    reach = 0.5 * apart_m
    close = close_m is not None and close_test is not None and close_m < apart_m
    for label in np.unique(labels[core]):
        members = np.flatnonzero(core & (labels == label))
        if len(members) < 2:
            continue
        spread = centres[members] - centres[members].mean(axis=0)
        if float(np.hypot(*spread.T).max()) < 0.5 * (close_m if close and close_m else apart_m):
            continue
        order = members[np.argsort(-density[members], kind="stable")]
        member_set = np.zeros(len(centres), dtype=bool)
        member_set[members] = True
        peaks: list[int] = []
        by_close: set[int] = set()
        for cell in order:
            if density[cell] <= 0:
                break
            near = [k for k in tree.query_ball_point(centres[cell], reach) if member_set[k]]
            flank = bool(density[near].max() > density[cell])  # on a higher cell's flank
            if flank and not close:
                continue
            if not peaks:
                if not flank:
                    peaks.append(int(cell))
                continue
            gaps = np.hypot(*(centres[peaks] - centres[cell]).T)
            higher = peaks[int(np.argmin(gaps))]
            near_top = bool(gaps.min() < apart_m or flank)
            if near_top:
                if close_test is None or close_m is None or gaps.min() < close_m:
                    continue
                near = [
                    k for k in tree.query_ball_point(centres[cell], 0.5 * close_m) if member_set[k]
                ]
                if density[near].max() > density[cell]:
                    continue
                if not close_test(centres[cell], centres[higher]):
                    continue
            if _valley(centres, density, member_set, tree, cell, higher, step_m) < (
                saddle * density[cell]
            ):
                peaks.append(int(cell))
                if near_top:
                    by_close.add(int(cell))
        if len(peaks) < 2:
            continue
        while len(peaks) > 1:
            offsets = centres[members, None, :] - centres[peaks][None, :, :]
            nearest = np.argmin(np.hypot(offsets[..., 0], offsets[..., 1]), axis=1)
            votes = np.bincount(nearest, weights=weight[members], minlength=len(peaks))
            weakest = int(np.argmin(votes))
            if votes[weakest] < max(min_support, part_votes, share * votes.max()):
                peaks.pop(weakest)
                continue
            if stays is None:
                break
            largest = int(np.argmax(votes))
            lone = [
                k
                for k in np.argsort(votes, kind="stable").tolist()
                if k != largest and not stays(members[nearest == k])
            ]
            if not lone:
                break
            peaks.pop(lone[0])
        if len(peaks) < 2:
            continue
        first = int(out.max()) + 1
        out[members] = first + nearest
        if by_close & set(peaks):
            close_born.add(int(label))
    return out, close_born


def _valley(
    centres: FloatArray,
    density: FloatArray,
    member_set: npt.NDArray[np.bool_],
    tree: cKDTree,
    a: int,
    b: int,
    step_m: float,
) -> float:
    """Lowest density of the cluster's cells along the line from cell ``a`` to cell ``b``
    (the densest cell within ``step_m`` of each point on it; none there: 0)."""
    length = float(np.hypot(*(centres[b] - centres[a])))
    low = float(min(density[a], density[b]))
    for t in np.arange(step_m, length, step_m) / length:
        point = centres[a] + t * (centres[b] - centres[a])
        near = [k for k in tree.query_ball_point(point, step_m) if member_set[k]]
        low = min(low, float(density[near].max()) if near else 0.0)
    return low


def merge_close(
    points: FloatArray, weights: npt.NDArray[np.int64], radius_m: float
) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """Merge points closer than ``radius_m`` (transitively) into their weighted mean."""
    if len(points) == 0:
        return points, weights
    labels = _components(len(points), cKDTree(points).query_pairs(radius_m, output_type="ndarray"))
    return _weighted_means(points, weights, labels)


def merge_parts_apart(
    points: FloatArray,
    is_part: npt.NDArray[np.bool_],
    radius_m: float,
    *,
    other_parts: npt.NDArray[np.bool_] | None = None,
    other_floor_m: float = 0.0,
) -> FloatArray:
    """:func:`merge_close` (each point weighing one), nearest pairs first, except that two
    points flagged ``is_part`` (parts of parted vote piles) never end in one junction
    (:attr:`JunctionParams.split_parts_apart`). ``other_parts`` (parts of piles parted
    otherwise) are held apart from any part too, but only at a pair ``other_floor_m`` metres
    apart or more (:attr:`JunctionParams.split_every_part_apart_m`)."""
    if len(points) == 0:
        return points
    group = np.where(is_part, 0, -1).astype(np.int64)
    ones = np.ones(len(points), dtype=np.int64)
    centres, _, _, _ = _merge_apart(
        points, ones, group, radius_m, loose_parts=other_parts, loose_floor_m=other_floor_m
    )
    return centres


def _root(parent: npt.NDArray[np.int64], k: int) -> int:
    """The root of ``k`` in the union-find forest ``parent`` (path halving). :func:`_merge_apart`
    picks each union by its own tests, nearest pairs first, which a connected-components call
    cannot express."""
    while parent[k] != k:
        parent[k] = parent[parent[k]]
        k = int(parent[k])
    return k


def _weighted_means(
    points: FloatArray, weights: npt.NDArray[np.int64], labels: npt.NDArray[np.int64]
) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """Each label's weighted mean point (labels 0..K-1) and total weight."""
    count = int(labels.max()) + 1
    w = weights.astype(np.float64)
    total = np.bincount(labels, weights=w, minlength=count)
    mx = np.bincount(labels, weights=w * points[:, 0], minlength=count) / total
    my = np.bincount(labels, weights=w * points[:, 1], minlength=count) / total
    return np.column_stack([mx, my]), total.astype(np.int64)


def _merge_apart(
    points: FloatArray,
    weights: npt.NDArray[np.int64],
    group: npt.NDArray[np.int64],
    radius_m: float,
    close_groups: frozenset[int] = frozenset(),
    *,
    loose_parts: npt.NDArray[np.bool_] | None = None,
    loose_floor_m: float = 0.0,
) -> tuple[FloatArray, npt.NDArray[np.int64], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """:func:`merge_close`, nearest pairs first, except that two parts of one parted vote
    cluster (the same ``group``, not -1) never end in one junction: a spur root or a corner
    meet between two crossings 10 m apart joins the nearer one and no longer chains both.
    ``loose_parts`` (parts of piles parted otherwise) are held apart from any part too, at a
    pair ``loose_floor_m`` metres apart or more. Also returns, per junction, whether a part
    of ``group`` is in it, and whether a part of one of ``close_groups`` is."""
    pairs = cKDTree(points).query_pairs(radius_m, output_type="ndarray")
    parent = np.arange(len(points))
    groups: list[set[int]] = [{int(g)} if g >= 0 else set() for g in group]
    any_part = None if loose_parts is None else (group >= 0) | loose_parts

    if pairs.size:
        gaps = np.hypot(*(points[pairs[:, 0]] - points[pairs[:, 1]]).T)
        order = np.argsort(gaps, kind="stable")
        for (a, b), gap in zip(pairs[order], gaps[order], strict=True):
            ra, rb = _root(parent, int(a)), _root(parent, int(b))
            if ra == rb or groups[ra] & groups[rb]:
                continue
            if any_part is not None and any_part[ra] and any_part[rb] and gap >= loose_floor_m:
                continue
            parent[rb] = ra
            groups[ra] |= groups[rb]
            if any_part is not None:
                any_part[ra] |= any_part[rb]
    roots = [_root(parent, k) for k in range(len(points))]
    labels = np.unique(roots, return_inverse=True)[1]
    centres, support = _weighted_means(points, weights, labels.astype(np.int64))
    parted = np.zeros(len(centres), dtype=bool)
    parted[labels[np.array([bool(groups[r]) for r in roots])]] = True
    close = np.zeros(len(centres), dtype=bool)
    close[labels[np.array([bool(groups[r] & close_groups) for r in roots])]] = True
    return centres, support, parted, close


def spur_roots(
    tracks: Sequence[Track], params: JunctionParams | None = None, *, peeks: bool = False
) -> FloatArray:
    """Roots (R, 2) of out-and-back spurs: where the way into a U-turn and the way out of it,
    followed back from the apex, part by more than ``spur_split_m``.

    A walk that retraces its way to where it started (or to its end) has no root. The root is
    placed where the two ways were last within half of ``spur_split_m`` (they part at about
    twice the rate they walk away from the spur when they leave it in opposite directions).
    """
    params = params or JunctionParams()
    roots: list[tuple[float, float]] = []
    for track in tracks:
        turns = _uturn_frames(track, params)
        for apex in turns + (_peeks(track, params, turns) if peeks else []):
            parting = _parting(track, apex, params)
            if parting is None or parting[0] < params.spur_min_m:
                continue
            roots.append(parting[1])
    return np.asarray(roots, np.float64).reshape(-1, 2)


def _parting(
    track: Track, apex: int, params: JunctionParams
) -> tuple[float, tuple[float, float]] | None:
    """Where the ways into and out of the U-turn at frame ``apex``, followed back from it
    together, part: (distance from the apex along the track in metres, the point midway
    between the two ways there), or None when they never part (retraced to the track's start
    or end, or too short to tell)."""
    arc = track.arc_m
    reach = min(arc[apex] - arc[0], arc[-1] - arc[apex])
    if reach < params.spur_split_m:
        return None
    s = np.arange(0.0, reach, params.sample_step_m)
    inbound = np.column_stack([np.interp(arc[apex] - s, arc, track.xy[:, k]) for k in (0, 1)])
    outbound = np.column_stack([np.interp(arc[apex] + s, arc, track.xy[:, k]) for k in (0, 1)])
    gap = np.hypot(*(outbound - inbound).T)
    apart = np.flatnonzero(gap > params.spur_split_m)
    if apart.size == 0:
        return None  # retraced all the way: a dead end, no side street
    # together: within half of spur_split_m, or within the gap the ways keep along the spur
    # (walked out on one sidewalk and back on the other, 5-6 m apart) when that is wider
    level = max(0.5 * params.spur_split_m, float(np.median(gap[: apart[0]])))
    together = np.flatnonzero(gap[: apart[0]] <= min(level, params.spur_split_m))
    if together.size == 0:
        return None
    root = int(together[-1])
    if (apart[0] - 1 - root) * params.sample_step_m >= params.sidewalks_m:
        # the last point within that gap was far from where the ways part: they kept 5-7 m
        # apart under noise (the median is exceeded by half the samples of a spur) and part
        # where they first exceed spur_split_m
        root = int(apart[0]) - 1
    mid = 0.5 * (inbound[root] + outbound[root])
    return float(s[root]), (float(mid[0]), float(mid[1]))


def find_junctions(
    tracks: Sequence[Track], params: JunctionParams | None = None, *, without_osm: bool = False
) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """Junction positions (J, 2) in metres and their vote support (J,): see
    :func:`find_junction_parts`."""
    centres, support, _, _ = find_junction_parts(tracks, params, without_osm=without_osm)
    return centres, support


def find_junction_parts(
    tracks: Sequence[Track], params: JunctionParams | None = None, *, without_osm: bool = False
) -> tuple[FloatArray, npt.NDArray[np.int64], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Junction positions (J, 2) in metres and their vote support (J,), from poses alone:
    clusters of crossing votes and the roots of out-and-back spurs (:func:`spur_roots`, each
    counted with ``min_support``); ``without_osm`` (the build without a map) also the places
    where two passes' corners meet (``params.corners``); and for each junction whether it
    is a part of a vote pile parted at its peaks (``params.split_peaks_m``), and whether
    that pile was parted at a peak under ``split_peaks_m`` from another
    (``params.split_close_m``)."""
    params = params or JunctionParams()
    votes, samples = _cast_votes(tracks, params, without_osm=without_osm)
    split = params.split_peaks_m if without_osm else None
    test = None
    if split is not None and params.split_crossed_m is not None:
        test = part_test(tracks, samples, params, params.split_crossed_m)
    centres, support, group, born = _clusters(
        votes,
        eps_m=params.cluster_eps_m,
        min_votes=params.cluster_min_votes,
        min_support=params.min_support,
        cell_m=0.5,
        split_peaks_m=split,
        split_saddle=params.split_saddle,
        split_share=params.split_share,
        split_part_votes=params.split_part_votes,
        part_test=test,
        close_m=params.split_close_m if split is not None else None,
        close_test=(
            pair_test(tracks, samples, params)
            if split is not None and params.split_close_m is not None
            else None
        ),
    )
    roots = spur_roots(tracks, params, peeks=without_osm)
    if without_osm and params.corners is not None:
        roots = np.concatenate([roots.reshape(-1, 2), corner_meets(tracks, params.corners)])
    if without_osm and params.partings is not None:
        forks = pass_partings(tracks, params.partings)
        clear_m = params.partings.clear_m
        found = np.concatenate([centres.reshape(-1, 2), roots.reshape(-1, 2)])
        if clear_m is not None and len(forks) and len(found):
            forks = forks[cKDTree(found).query(forks)[0] >= clear_m]
        roots = np.concatenate([roots.reshape(-1, 2), forks])
    roots = roots.reshape(-1, 2)
    apart = np.zeros(len(roots), dtype=bool)
    if without_osm and params.root_apart_m is not None and len(roots) and len(centres):
        apart = cKDTree(centres.reshape(-1, 2)).query(roots)[0] > params.root_apart_m
        for k in np.flatnonzero(apart):
            apart[k] = _ways(tracks, roots[k], params) >= params.root_apart_ways
    return merge_found(centres, support, group, born, roots, params, apart=apart)


def _ways(tracks: Sequence[Track], point: FloatArray, params: JunctionParams) -> int:
    """How many ways the passes within ``root_way_reach_m`` of ``point`` leave it: the
    directed bearings from ``point`` of each pass's positions ``root_way_leg_m`` on and back
    from its nearest sample, grouped where consecutive bearings lie under ``root_way_deg``
    apart (:attr:`JunctionParams.root_apart_ways`)."""
    bearings: list[float] = []
    for track in tracks:
        gap = np.hypot(*(track.xy - point).T)
        near = np.flatnonzero(gap < params.root_way_reach_m)
        if not len(near):
            continue
        runs = np.split(
            near, np.flatnonzero(np.diff(track.arc_m[near]) > params.root_way_leg_m) + 1
        )
        for run in runs:
            arc = float(track.arc_m[run[np.argmin(gap[run])]])
            for way in (arc + params.root_way_leg_m, arc - params.root_way_leg_m):
                if 0.0 <= way <= track.length_m:
                    east, north = track.point_at(way) - point
                    bearings.append(float(np.degrees(np.arctan2(east, north)) % 360.0))
    if not bearings:
        return 0
    ordered = np.sort(bearings)
    gaps = np.diff(np.append(ordered, ordered[0] + 360.0))
    return max(int((gaps >= params.root_way_deg).sum()), 1)


def merge_found(
    centres: FloatArray,
    support: npt.NDArray[np.int64],
    group: npt.NDArray[np.int64],
    born: npt.NDArray[np.bool_],
    roots: FloatArray,
    params: JunctionParams,
    *,
    apart: npt.NDArray[np.bool_] | None = None,
) -> tuple[FloatArray, npt.NDArray[np.int64], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """The vote piles (``centres``, ``support``, ``group``, ``born`` as :func:`_clusters`
    gives them) and ``roots`` (spur roots, corner meets, partings; each weighing
    ``min_support``) merged within ``merge_m``, as :func:`find_junction_parts` returns
    them. ``apart`` (per root): roots kept out of that merge, merged only among themselves
    and flagged, with the pile nearest each, as born of a close-topped pile
    (:attr:`JunctionParams.root_apart_m`)."""
    roots = roots.reshape(-1, 2)
    if apart is None or not apart.any() or not len(centres):
        return _merge_with_roots(centres, support, group, born, roots, params)
    merged = _merge_with_roots(centres, support, group, born, roots[~apart], params)
    return _roots_held_apart(merged, roots[apart], params)


def _merge_with_roots(
    centres: FloatArray,
    support: npt.NDArray[np.int64],
    group: npt.NDArray[np.int64],
    born: npt.NDArray[np.bool_],
    roots: FloatArray,
    params: JunctionParams,
) -> tuple[FloatArray, npt.NDArray[np.int64], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """:func:`merge_found` without ``root_apart_m``: every candidate within ``merge_m``
    merges (transitively), parts of one parted pile never into one."""
    if len(roots):
        centres = np.concatenate([centres.reshape(-1, 2), roots])
        support = np.concatenate([support, np.full(len(roots), params.min_support, dtype=np.int64)])
        group = np.concatenate([group, np.full(len(roots), -1, dtype=np.int64)])
    if (group >= 0).any():
        close_groups = frozenset(int(g) for g in group[: len(born)][born])
        return _merge_apart(centres, support, group, params.merge_m, close_groups)
    centres, support = merge_close(centres, support, params.merge_m)
    return centres, support, np.zeros(len(centres), dtype=bool), np.zeros(len(centres), dtype=bool)


def _roots_held_apart(
    merged: tuple[FloatArray, npt.NDArray[np.int64], npt.NDArray[np.bool_], npt.NDArray[np.bool_]],
    far_roots: FloatArray,
    params: JunctionParams,
) -> tuple[FloatArray, npt.NDArray[np.int64], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """``merged`` (:func:`_merge_with_roots`) with ``far_roots`` (roots farther than
    ``root_apart_m`` from every vote pile) merged among themselves and added; each added
    junction within ``merge_m`` of a merged one is flagged, with the nearest such, as born
    of a close-topped pile, so that refine's post-move merge holds the two apart
    (:attr:`JunctionParams.root_apart_m`)."""
    centres, support, parted, close = merged
    ones = np.full(len(far_roots), params.min_support, dtype=np.int64)
    added, added_support = merge_close(far_roots, ones, params.merge_m)
    gap, nearest = cKDTree(centres.reshape(-1, 2)).query(added)
    beside = gap < params.merge_m
    close = close.copy()
    close[nearest[beside]] = True
    return (
        np.concatenate([centres.reshape(-1, 2), added]),
        np.concatenate([support, added_support]),
        np.concatenate([parted, np.zeros(len(added), dtype=bool)]),
        np.concatenate([close, beside]),
    )


def _uturn_stretches(track: Track, params: JunctionParams) -> list[tuple[int, int]]:
    """Frame ranges ``[first, stop)`` of U-turns: the travel direction ``uturn_window_m``
    before and after differs by more than ``uturn_deg`` on every frame of the range."""
    n = len(track)
    if n < 3 or track.length_m < 2 * params.uturn_window_m:
        return []
    arc = track.arc_m
    back = np.clip(np.searchsorted(arc, arc - params.uturn_window_m), 0, n - 1)
    ahead = np.clip(np.searchsorted(arc, arc + params.uturn_window_m), 0, n - 1)
    d_in = track.xy - track.xy[back]
    d_out = track.xy[ahead] - track.xy
    norm = np.hypot(*d_in.T) * np.hypot(*d_out.T)
    cos = np.einsum("ij,ij->i", d_in, d_out) / np.where(norm > 0, norm, 1.0)
    flag = (norm > 0) & (cos < np.cos(np.radians(params.uturn_deg)))
    if not flag.any():
        return []
    edges = np.diff(flag.astype(np.int8), prepend=0, append=0)
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return [(int(a), int(b)) for a, b in zip(starts, stops, strict=True)]


def _uturn_frames(track: Track, params: JunctionParams) -> list[int]:
    """Apex frames of U-turns (:func:`_uturn_stretches`): the middle of each stretch."""
    arc = track.arc_m
    apexes = []
    for a, b in _uturn_stretches(track, params):
        mid_arc = 0.5 * (arc[a] + arc[b - 1])
        apexes.append(int(a + np.argmin(np.abs(arc[a:b] - mid_arc))))
    return apexes


def _peeks(track: Track, params: JunctionParams, found: Sequence[int]) -> list[int]:
    """Apexes of U-turns found with ``peek_window_m`` and not with ``uturn_window_m`` (none
    within that window of one of ``found``, the track's :func:`_uturn_frames`) whose ways
    part ``spur_min_m`` or more from them, at ``peek_reach_m`` or more from the apex."""
    if params.peek_window_m is None:
        return []
    known = np.asarray(found, np.int64)
    arc = track.arc_m
    peeks = []
    for apex in _uturn_frames(track, replace(params, uturn_window_m=params.peek_window_m)):
        if known.size and np.abs(arc[known] - arc[apex]).min() < params.uturn_window_m:
            continue
        parting = _parting(track, apex, params)
        if parting is None or parting[0] < params.spur_min_m:
            continue
        if np.hypot(*(track.xy[apex] - parting[1])) < params.peek_reach_m:
            continue
        if params.peek_pace is None or _pace(track, apex, parting[0]) < params.peek_pace:
            peeks.append(apex)
    return peeks


def _side_steps(track: Track, params: JunctionParams) -> list[tuple[int, FloatArray]]:
    """Tips of U-turns (``uturn_window_m``, ``peek_window_m`` or ``side_step_window_m``)
    stepped off a walk that goes on through: the track ``side_step_legs_m`` of travel either
    side lies ``side_step_chord_m`` or more apart, the U-turn's point farthest off the line
    between those points (within ``side_step_window_m`` of travel of its apex) lies
    ``side_step_off_m`` or more off it, walked under ``peek_pace`` (see
    ``JunctionParams.side_step_off_m``). Each as (tip frame, the two points (2, 2): the
    walker's line)."""
    if params.side_step_off_m is None:
        return []
    arc = track.arc_m
    legs = params.side_step_legs_m
    apexes: set[int] = set()
    for window in (params.uturn_window_m, params.peek_window_m, params.side_step_window_m):
        if window is not None:
            apexes |= set(_uturn_frames(track, replace(params, uturn_window_m=window)))
    tips: list[tuple[int, FloatArray]] = []
    for apex in sorted(apexes):
        if arc[apex] - arc[0] < legs or arc[-1] - arc[apex] < legs:
            continue
        ends = np.asarray(
            [[np.interp(arc[apex] + s, arc, track.xy[:, k]) for k in (0, 1)] for s in (-legs, legs)]
        )
        if float(np.hypot(*(ends[1] - ends[0]))) < params.side_step_chord_m:
            continue
        lo = int(np.searchsorted(arc, arc[apex] - params.side_step_window_m))
        hi = int(np.searchsorted(arc, arc[apex] + params.side_step_window_m, side="right"))
        off = _off_line(ends, track.xy[lo:hi])
        tip = lo + int(np.argmax(off))
        if not params.side_step_off_m <= off.max() <= params.side_step_deep_m:
            continue
        if tips and arc[tip] - arc[tips[-1][0]] < params.side_step_window_m:
            continue  # the same U-turn found with another window
        if params.peek_pace is None or _pace(track, tip, 5.0) < params.peek_pace:
            tips.append((tip, ends))
    return tips


def _off_line(ends: FloatArray, xy: FloatArray) -> FloatArray:
    """Metres each point of ``xy`` (N, 2) lies off the line through ``ends`` (2, 2)."""
    chord = ends[1] - ends[0]
    rel = xy.reshape(-1, 2) - ends[0]
    return np.abs(chord[0] * rel[:, 1] - chord[1] * rel[:, 0]) / float(np.hypot(*chord))


def _foot(ends: FloatArray, xy: FloatArray) -> FloatArray:
    """The point of the line through ``ends`` (2, 2) nearest ``xy`` (2,)."""
    chord = ends[1] - ends[0]
    along = float(np.dot(xy - ends[0], chord) / np.dot(chord, chord))
    return np.asarray(ends[0] + along * chord, dtype=float)


def _step_roots(
    track: Track,
    junctions_xy: FloatArray,
    params: JunctionParams,
    side_steps: Sequence[tuple[int, FloatArray]] | None = None,
) -> list[tuple[int, int, FloatArray]]:
    """The side steps of ``track`` (``side_steps``, found by :func:`_side_steps` when None)
    whose nearest junction lies within ``side_step_root_m`` of the tip and
    ``side_step_line_m`` of the walker's line: (tip frame, that junction's index, the tip's
    foot on the walker's line)."""
    junctions_xy = junctions_xy.reshape(-1, 2)
    if not len(junctions_xy):
        return []
    roots = []
    for tip, ends in _side_steps(track, params) if side_steps is None else side_steps:
        gap = np.hypot(*(junctions_xy - track.xy[tip]).T)
        near = int(np.argmin(gap))
        if gap[near] > params.side_step_root_m:
            continue
        line_m = params.side_step_line_m
        if line_m is not None and _off_line(ends, junctions_xy[near])[0] > line_m:
            continue  # the junction beside the tip: a turn back round its corner
        roots.append((tip, near, _foot(ends, track.xy[tip])))
    return roots


def side_step_feet(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    params: JunctionParams,
    *,
    turns: TurnFindings | None = None,
) -> FloatArray:
    """``junctions_xy`` (J, 2) with each side step's junction moved to the foot of its tip
    on the walker's line (see ``JunctionParams.side_step_foot``); unchanged when
    ``side_step_off_m`` or ``side_step_foot`` is off. A junction claimed by several steps
    goes to the mean of their feet. ``turns`` (:func:`find_turns` of the same tracks and
    ``params``) holds the side steps when found already."""
    placed = np.asarray(junctions_xy, dtype=float).reshape(-1, 2).copy()
    if params.side_step_off_m is None or not params.side_step_foot or not len(placed):
        return placed
    feet: dict[int, list[FloatArray]] = defaultdict(list)
    for k, track in enumerate(tracks):
        steps = turns.turns[k].side_steps if turns is not None else None
        for _tip, near, foot in _step_roots(track, junctions_xy, params, steps):
            feet[near].append(foot)
    for near, points in feet.items():
        placed[near] = np.mean(points, axis=0)
    return placed


def _pace(track: Track, apex: int, reach_m: float) -> float:
    """Seconds per metre within ``reach_m`` of travel either side of ``apex`` over the
    video's median seconds per metre."""
    arc, t_s = track.arc_m, track.t_s
    if t_s is None:
        return 0.0  # no times: no evidence of a stop
    step = np.diff(arc)
    moving = step > 0
    if not moving.any():
        return 0.0
    median = float(np.median(np.diff(t_s)[moving] / step[moving]))
    lo = int(np.searchsorted(arc, arc[apex] - reach_m))
    hi = int(min(np.searchsorted(arc, arc[apex] + reach_m), len(arc) - 1))
    if arc[hi] <= arc[lo] or median <= 0:
        return 0.0
    return float((t_s[hi] - t_s[lo]) / (arc[hi] - arc[lo]) / median)


def _parted_near(parting: Parting | None, junctions_xy: FloatArray, params: JunctionParams) -> bool:
    """Whether a junction lies within ``peek_root_m`` of where the ways into and out of a
    U-turn part (``parting``, :func:`_parting`)."""
    if parting is None or len(junctions_xy) == 0 or params.peek_root_m is None:
        return False
    gap = np.hypot(*(np.asarray(junctions_xy).reshape(-1, 2) - parting[1]).T).min()
    return bool(gap <= params.peek_root_m)


def _steps_back(track: Track, apex: int, params: JunctionParams) -> bool:
    """Whether the U-turn at ``apex`` only stepped into a stub and back: the ways in and out
    part less than ``junction_clearance_m`` from the apex (the walker leaves along another
    street than the one they came on; the apex belongs to the place where the ways part, as a
    dead end that close to a junction belongs to the junction)."""
    parting = _parting(track, apex, params)
    return parting is not None and parting[0] < params.junction_clearance_m


Parting = tuple[float, tuple[float, float]]
"""Where the ways into and out of a U-turn part (:func:`_parting`): metres of travel from the
apex, and the point (m) midway between the two ways there."""


@dataclass(frozen=True, slots=True)
class TrackTurns:
    """What :func:`find_dead_ends` reads from one track alone, whatever the junctions: its
    U-turn apexes (frames, :func:`_uturn_frames`), its peeks (:func:`_peeks`), its side steps
    (:func:`_side_steps`: tip frame and the walker's line, (2, 2) m) and where the ways of
    each of those part (:func:`_parting`, by frame; None where they never part)."""

    uturns: tuple[int, ...]
    peeks: tuple[int, ...]
    side_steps: tuple[tuple[int, FloatArray], ...]
    partings: Mapping[int, Parting | None]


@dataclass(frozen=True, slots=True)
class TurnFindings:
    """The track-only part of :func:`find_dead_ends` for one set of tracks and params, found
    once (:func:`find_turns`) and read by every cut of a build: each track's turns, and the
    samples every ``sample_step_m`` metres (:func:`_samples`) with their k-d tree."""

    params: JunctionParams
    turns: tuple[TrackTurns, ...]
    samples: tuple[FloatArray, FloatArray, npt.NDArray[np.int64], FloatArray]
    tree: cKDTree


def find_turns(tracks: Sequence[Track], params: JunctionParams | None = None) -> TurnFindings:
    """Each track's U-turns, peeks, side steps and their partings, and the tracks' samples:
    what :func:`find_dead_ends` needs that depends on the tracks and ``params`` alone, so a
    build that cuts its tracks many times finds it once."""
    params = params or JunctionParams()
    turns = []
    for track in tracks:
        uturns = _uturn_frames(track, params)
        peeks = _peeks(track, params, uturns)
        steps = _side_steps(track, params)
        frames = {*uturns, *peeks, *(tip for tip, _ in steps)}
        partings = {f: _parting(track, f, params) for f in sorted(frames)}
        turns.append(TrackTurns(tuple(uturns), tuple(peeks), tuple(steps), partings))
    samples = _samples(tracks, params.sample_step_m) if len(tracks) else _no_samples()
    return TurnFindings(params, tuple(turns), samples, cKDTree(samples[0]))


def _no_samples() -> tuple[FloatArray, FloatArray, npt.NDArray[np.int64], FloatArray]:
    """The samples of no tracks (:func:`_samples` has none to concatenate)."""
    empty = np.zeros(0)
    return np.zeros((0, 2)), empty, np.zeros(0, dtype=np.int64), empty


def find_dead_ends(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    params: JunctionParams | None = None,
    *,
    short_spurs: bool = False,
    end_clearance: Mapping[tuple[int, int], float] | None = None,
    turns: TurnFindings | None = None,
) -> tuple[FloatArray, list[list[DeadEndEvent]]]:
    """Dead-end nodes (D, 2) and, per node, the trajectory frames that end there.

    Candidates are U-turn apexes (not those where the ways in and out part within
    ``junction_clearance_m``: a step into a stub and out along another street) and trajectory ends
    farther than ``junction_clearance_m`` from every junction; candidates within
    ``dead_end_merge_m`` of each other are one dead end.

    With ``short_spurs`` (builds without OSM) a U-turn whose ways part ``spur_min_m`` or more
    from its apex is the end of a spur and needs only ``spur_min_m`` from every junction: a
    walker turns back 5-8 m into a 9-12 m stub (GPS and the turn round off its end), and with
    the 8 m clearance the stub's end, its street and so its junction were lost (four of
    Helsinki seed 0's misses, one in the old town). With OSM the map says where stubs are.

    ``end_clearance`` (``{(track index, frame): metres}``) gives some track ends a clearance
    of their own instead of ``junction_clearance_m`` (a video that starts or ends inside a
    short stub: :func:`city360.pose_graph.stub_ends.stub_ends`).

    ``turns`` (:func:`find_turns` of the same tracks and ``params``) saves finding each
    track's U-turns, peeks and side steps again: a build cuts its tracks many times.
    """
    params = params or JunctionParams()
    end_clearance = end_clearance or {}
    if turns is None:
        turns = find_turns(tracks, params)
    elif turns.params != params or len(turns.turns) != len(tracks):
        msg = (
            f"`turns` were found for {len(turns.turns)} tracks with other params; expected "
            f"{len(tracks)} tracks with {params}"
        )
        raise ValueError(msg)
    events: list[DeadEndEvent] = []
    clearance: list[float] = []
    spur_ends: list[bool] = []
    partings: dict[tuple[int, int], tuple[float, tuple[float, float]]] = {}
    for k, (track, found) in enumerate(zip(tracks, turns.turns, strict=True)):
        spurs = set()
        kept = []
        peeks = list(found.peeks) if short_spurs else []
        if peeks and params.peek_root_m is not None:
            peeks = [f for f in peeks if _parted_near(found.partings[f], junctions_xy, params)]
        for f in [*found.uturns, *peeks]:
            parting = found.partings[f]
            if parting is not None:
                partings[(k, f)] = parting
                if short_spurs and parting[0] >= params.spur_min_m:
                    spurs.add(f)
                elif parting[0] < params.junction_clearance_m:
                    continue  # stepped into a stub and out along another street
            kept.append(f)
        frames = {0, len(track) - 1, *kept}
        steps = (
            [tip for tip, _, _ in _step_roots(track, junctions_xy, params, found.side_steps)]
            if short_spurs
            else []
        )
        for f in sorted(frames | set(steps)):
            if f not in frames:
                parting = found.partings[f]
                if parting is not None:
                    partings[(k, f)] = parting
            events.append(DeadEndEvent(k, f, float(track.xy[f, 0]), float(track.xy[f, 1])))
            spur_ends.append(f in spurs or f in steps)
            if f in steps:
                clearance.append(params.side_step_clear_m)
            elif f in spurs:
                clearance.append(params.spur_min_m)
            else:
                clearance.append(end_clearance.get((k, f), params.junction_clearance_m))
    if not events:
        return np.zeros((0, 2)), []
    pts = np.asarray([[e.x_m, e.y_m] for e in events])
    if len(junctions_xy):
        dist, nearest = cKDTree(junctions_xy).query(pts)
        keep = dist > np.asarray(clearance)
        if short_spurs and params.spur_street_on_m is not None:
            near_spur = keep & np.asarray(spur_ends) & (dist <= params.junction_clearance_m)
            on = _streets_on(tracks, events, near_spur, params, params.spur_street_on_m, turns)
            keep &= ~_turned_past(events, on, partings, junctions_xy[nearest], params)
        events = [e for e, k in zip(events, keep, strict=True) if k]
        pts = pts[keep]
    if not events:
        return np.zeros((0, 2)), []
    pairs = cKDTree(pts).query_pairs(params.dead_end_merge_m, output_type="ndarray")
    return group_dead_ends(events, pts, pairs)


def _streets_on(
    tracks: Sequence[Track],
    events: Sequence[DeadEndEvent],
    asked: npt.NDArray[np.bool_],
    params: JunctionParams,
    reach_m: float,
    turns: TurnFindings,
) -> npt.NDArray[np.bool_]:
    """Per event, whether it is ``asked`` and another pass runs along the walker's street at
    the event's frame and ``reach_m`` beyond it, in the direction the walker came
    (:func:`_along`): a turn back mid-street, not the end of a spur. The tracks' samples and
    their tree are ``turns``'."""
    on = np.zeros(len(events), dtype=bool)
    if not asked.any():
        return on
    samples, tree = turns.samples, turns.tree
    for n in np.flatnonzero(asked).tolist():
        event = events[n]
        track = tracks[event.track]
        at_arc = float(track.arc_m[event.frame])
        way = track.xy[event.frame] - track.point_at(at_arc - params.uturn_window_m)
        length = float(np.hypot(*way))
        if length == 0.0:
            continue
        way /= length
        came_deg = float(np.degrees(np.arctan2(way[0], way[1])))
        apex = track.xy[event.frame]
        on[n] = all(
            _along(tree, samples, point, event.track, at_arc, came_deg, params)
            for point in (apex, apex + reach_m * way)
        )
    return on


def _turned_past(
    events: Sequence[DeadEndEvent],
    asked: npt.NDArray[np.bool_],
    partings: Mapping[tuple[int, int], tuple[float, tuple[float, float]]],
    nearest_xy: FloatArray,
    params: JunctionParams,
) -> npt.NDArray[np.bool_]:
    """Per event, whether it is ``asked`` and its ways in and out part (``partings``, from
    :func:`_parting`, by (track, frame)) within ``spur_min_m`` of the junction nearest to it
    (``nearest_xy``, one row per event, metres), ``junction_clearance_m`` to twice
    that from it: the walker came through that junction and turned back just past it. Ways
    that part closer to the apex walked into a short stub and out (its end: Helsinki
    Bulevardi wander+stops seed 1 at (152.3, -6.6), 4.2 m from a true junction the votes
    missed). A walker who came up
    the street from farther (the ways part short of the junction, or far back) turned at the
    junction itself (Helsinki SE wander+stops camera seed 5 at (138.9, -181.4), 2.6 m from
    the true junction the votes put 8 m off) or milled about."""
    past = np.zeros(len(events), dtype=bool)
    for n in np.flatnonzero(asked).tolist():
        parting = partings.get((events[n].track, events[n].frame))
        if parting is None or not (
            params.junction_clearance_m <= parting[0] <= 2.0 * params.junction_clearance_m
        ):
            continue  # a peek into a short stub (its end), or a walk back from far
        past[n] = bool(np.hypot(*(nearest_xy[n] - parting[1])) <= params.spur_min_m)
    return past


def group_dead_ends(
    events: Sequence[DeadEndEvent], points_xy: FloatArray, pairs: npt.NDArray[np.int64]
) -> tuple[FloatArray, list[list[DeadEndEvent]]]:
    """``events`` (at ``points_xy``, metres in the city CRS, one row each) linked by ``pairs``
    (rows of two event indices) into dead ends: ``(centres, grouped)``, each dead end's mean
    point and its events, dead ends in the order of their first event. An event no pair
    names is a dead end of its own."""
    labels = _components(len(points_xy), pairs)
    count = int(labels.max()) + 1
    centres = np.asarray([points_xy[labels == c].mean(axis=0) for c in range(count)])
    grouped: list[list[DeadEndEvent]] = [[] for _ in range(count)]
    for event, label in zip(events, labels, strict=True):
        grouped[label].append(event)
    return centres, grouped
