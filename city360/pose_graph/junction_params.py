"""Tuning of junction and dead-end detection from trajectories alone
(:mod:`city360.pose_graph.junctions`, :mod:`city360.pose_graph.track_turns`,
:mod:`city360.pose_graph.dead_ends`): one frozen dataclass, every field in metres or degrees,
each with the round and the twins that set its default."""

from __future__ import annotations

from dataclasses import dataclass, field

from city360.pose_graph.corner_meets import CornerParams
from city360.pose_graph.pass_partings import PartingParams

__all__ = ["JunctionParams"]


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
    """With ``split_close_m``: after refine's first move, the merge of junctions within ``merge_m``
    never joins two parts of piles parted at a peak under ``split_peaks_m`` from another
    (:func:`~city360.pose_graph.junction_merges.merge_parts_held`), as the merge of the votes'
    junctions never joins two parts of one pile. Such parts are born 7-9 m apart; refine moves them
    towards each other (each up to ``split_part_shift_m``) and they were merged back into one (fresh
    Bulevardi wander 2: parts (144.2, 132.7) and (152.7, 133.3) merged at (149.7, 133.1)). On with
    ``split_close_m`` (measured together, see there); held for every part of every parted pile it
    moved 13 of 159 rows, 1 worse (held-out old town wander 6 street F1 0.972 -> 0.959) and 3 both
    ways. False: merged as any junctions."""
    split_every_part_apart_m: float | None = 5.0
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
    same worse; 0 (every pair): 11 better, 2 worse, 3 mixed. On at 5 m since round
    thirty-seven (branch pair37), with the guards ``split_held_part_streets`` and
    ``split_held_shared_ends``: on the 120 kept and 75 earlier held-out twins without OSM 2
    rows better (Helsinki wander 0 R 0.951 -> 0.959, F1 0.929 -> 0.940; held-out Bulevardi
    wander 7, the Erottaja knot, R 0.929 -> 1.000, F1 0.893 -> 0.983), none worse in P, R
    or F1 (old town wander 7 turns 0.972 -> 0.944). Without the guards 8 better, 4 worse,
    1 mixed. With OSM it does not act (no parting). None: only parts of piles parted at
    close tops are held apart."""
    split_held_part_streets: bool = True
    """With ``split_every_part_apart_m``: right after the cut that follows the post-refine
    merge, a pair the floor alone held apart (the two within ``merge_m``) of which one
    junction ends with fewer than three streets is put back as one junction at their mean,
    as the merge without the floor would have made it, and the tracks are cut again. Such a
    part branches nowhere of its own: later steps drop it as a pass-through or write it as
    a link node and its true junction is lost (fresh Helsinki seed 3: (-455.9, -285.9)
    and (315.1, 746.8), each left with the link to its twin and one more street). On
    (round thirty-seven, branch pair37): with the floor alone against the floor and this
    guard, on the 195 twins only turns move (three rows back to main's). False: the held
    pairs stay as the merge left them."""
    split_held_shared_ends: bool = True
    """With ``split_every_part_apart_m``: as ``split_held_part_streets``, a pair the floor
    alone held apart is put back as one junction when both have a street to one same third
    node: one street's passes ended at both parts (held-out old town wander 6 and 10: the
    street from (-96.2, 121.4) into the knot ends at (-35.5, 82.8) and at (-33.1, 89.2)).
    On (round thirty-seven, branch pair37): with ``split_held_part_streets``, the floor's 4
    worse rows and its mixed row come back to main's, and 6 of its 8 gains with them (a
    third node 8-25 m from both parts, a real triangle, is shared as often as a street
    ended at both: Kaisaniemi one-way 2 (-27.2, -115.2), 15 m); 2 gains stay. False: such
    pairs stay."""
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
    turn_pile_share: float | None = None
    """Without OSM, a U-turn's (or peek's) apex that lies within its clearance of a junction
    still ends a dead end when this share or more of the crossing votes within
    ``turn_pile_radius_m`` of that junction are cast by a pair with one sample on the apex's
    own pass (its track, within ``turn_pile_reach_m`` of travel of the apex): the pile is the
    turn-back's own, its legs crossing a path beside it, not a junction the walker came
    through (:func:`~city360.pose_graph.dead_ends.own_pile_shares`). Kaisaniemi's spur
    (-103.5, -131.2) ends 4.0 m south of the park path and its mirror stub's end
    (-87.0, -125.9) 4.4 m north of it: the votes pile 2-5 m from the apexes and every
    vote there is the turning pass's. None: off. Off (round thirty-seven, branch pile37): a
    single walker's turn-back casts every vote of many true junctions too (the one pass that
    takes a side street and back), and a dead end kept there cuts a stub off a street."""
    turn_pile_reach_m: float = 15.0
    """With ``turn_pile_share``: metres of travel either side of the apex that are its pass."""
    turn_pile_radius_m: float = 3.0
    """With ``turn_pile_share``: metres around the junction whose votes are its pile's."""
    turn_pile_cross_deg: float | None = 20.0
    """With ``turn_pile_share``: only apexes whose way in (the walker's last
    ``turn_pile_came_m`` of travel) crosses the pile's other passes (the median of their
    samples' headings) at this many degrees or more are asked. A walker who came along a
    street past its junction and turned back (Kaisaniemi one-way 2 at (-55.1, -94.5), 4.3 m
    from the pile of the junction (-54.2, -93.4)) walked along the other passes, 5-14
    degrees off them; at the spur's end the way in meets the path at 20-48 degrees. None:
    not checked."""
    turn_pile_came_m: float = 6.0
    """With ``turn_pile_cross_deg``: metres of travel before the apex that are the way in."""
    turn_pile_min_m: float = 2.5
    """With ``turn_pile_share``: only apexes this many metres or more from the junction are
    asked (a walker turning back at the junction itself casts its votes too)."""
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
