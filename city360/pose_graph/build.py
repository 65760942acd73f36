"""Build a pose graph from a city's trajectories (and optionally an OSM extract).

Steps: junctions from crossings of passes (:mod:`.junctions`), plus OSM intersections the video
passes through when an extract is given (:mod:`.osm_match`); dead ends (placed along the matched
streets with an extract, :mod:`.osm_dead_ends`); cutting every trajectory
into segments and grouping them into streets (:mod:`.segments`); removing nodes that are no
branch point and cutting again; one edge per filmed segment, plus a ``reverse`` edge for each
street direction nobody filmed; transitions at every node (:mod:`.transitions`).
:func:`build_from_tracks` is the pure, vectorised core (no disk); :func:`build_city` reads the
city, builds, validates and writes ``graph.json`` atomically and records stats in ``city.json``.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import networkx as nx
import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from city360._atomic import atomic_write_json, folder_lock
from city360.city import OSM_EXTRACT, CityDir
from city360.errors import GraphBuildError
from city360.geo import LocalProjection, angle_diff_deg, bearing_deg, wrap_deg
from city360.pose_graph.apart import ApartParams, apart_junctions
from city360.pose_graph.apart_ends import apart_end_passes
from city360.pose_graph.beside_ends import BesideEndParams, beside_end_filter
from city360.pose_graph.clarify import ClarifyParams, clarify_tracks
from city360.pose_graph.corner_cuts import CornerCutParams, corner_cuts
from city360.pose_graph.dead_ends import find_dead_ends
from city360.pose_graph.dwell import DwellParams, hold_still_spans
from city360.pose_graph.end_tees import EndTeeParams, end_tees
from city360.pose_graph.fork_apex import fork_apexes
from city360.pose_graph.fused_forks import (
    FusedForkParams,
    forks_at_video_ends,
    fused_forks,
    video_ends,
)
from city360.pose_graph.graph import (
    GRAPH_SCHEMA_VERSION,
    NODE_TOLERANCE_M,
    PoseGraph,
    validate_graph,
)
from city360.pose_graph.junction_merges import merge_close, merge_parts_held
from city360.pose_graph.junction_params import JunctionParams
from city360.pose_graph.junctions import find_junction_parts
from city360.pose_graph.knot_forks import KnotForkParams, knot_forks, part_knot_forks
from city360.pose_graph.lone_arms import LoneArmParams, LoneArms, lone_arm_junctions
from city360.pose_graph.node_fit import fit_nodes
from city360.pose_graph.parted_trunks import PartedTrunkParams, parted_trunks
from city360.pose_graph.refine import (
    RefineParams,
    refine_junctions,
    split_junctions,
    split_side_by_side,
)
from city360.pose_graph.segments import (
    HEADING_FAR_M,
    HEADING_NEAR_M,
    CutFilter,
    Segment,
    SegmentParams,
    Street,
    cut_tracks,
    dissolve_pass_through,
    group_streets,
    part_two_lines,
    turned_forks,
)
from city360.pose_graph.stolen_branches import StolenBranchParams, UncutPasses, stolen_branches
from city360.pose_graph.stub_ends import StubEndParams, stub_ends
from city360.pose_graph.track_turns import TurnFindings, find_turns, side_step_feet
from city360.pose_graph.tracks import Track, load_tracks

if TYPE_CHECKING:
    from city360.pose_graph.osm_dead_ends import MatchedCuts
    from city360.pose_graph.osm_match import OsmStreets
from city360.pose_graph.transitions import Choice, transitions_for

__all__ = ["BuildParams", "build_city", "build_from_tracks"]

logger = logging.getLogger(__name__)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class BuildParams:
    """All build parameters; recorded in ``graph.json`` and ``city.json``."""

    junctions: JunctionParams = field(default_factory=JunctionParams)
    segments: SegmentParams = field(default_factory=SegmentParams)
    heading_near_m: float = HEADING_NEAR_M
    """End headings are measured on the chord from this far from the node ..."""
    heading_far_m: float = HEADING_FAR_M
    """... to this far (both capped by a share of the edge length): turns happen at the node."""
    heading_corner_deg: float | None = None
    """End headings stop at a corner: the chord's far end is pulled in to the first point,
    ``CORNER_LEAD_M`` (5 m) or more past the chord's near end, where both the travel
    direction over the next 2 m and the chord from there to the far end turn more than this
    many degrees from the chord's first ``CORNER_LEAD_M``. A street that bends round a
    corner 10-20 m from a junction (fresh Bulevardi's Erottaja knot: 10 m north then 13 m
    back down) otherwise leaves the junction at a heading 40-50 degrees off its first leg.
    None: the chord always runs to ``heading_far_m`` (before round twenty-nine). Off: at
    60 degrees, without OSM, turns are better in 33 of the 129 cached twins and worse in 10
    (P, R and F1 never move; the worst: Helsinki SE coverage with stops, unseen seed 6,
    0.931 -> 0.906, the old town's wander seed 30 0.963 -> 0.934); on fresh Bulevardi 7 of
    12 better, 3 worse (design notes, round twenty-nine)."""
    link_through_m: float | None = 10.0
    """A street shorter than this (median pass, metres) between two junctions (the only street
    joining them), with a street arriving at one end and one leaving the other end that run within
    ``LINK_THROUGH_AGREE_DEG`` of each other and within ``link_through_deg`` of the short
    street's own end headings, takes their mean heading as both its end headings: it is the
    middle of one street straight through a staggered pair. Its own passes are a few metres
    of poses, and walkers jogging from one side street to the other cut it on a slant (old
    town wander 39 without OSM: a 7.1 m link built at 30-32 deg where the street runs at
    4 deg, so straight on read LEFT); the arms beyond it are long and measured well.
    Unlike a chord between the two nodes (branch lead29), it does not trust the nodes'
    positions. Without OSM only (not measured with the map). None: every street from its own
    passes. On: without OSM, on 179 cached twins
    (suite and unseen, fused27's, the fresh windows, old town 39) turns are better in 12 and
    worse in none (P, R, F1 cannot move; old town one-way+stops 1 0.919 -> 0.956, wander 39
    0.911 -> 0.944); old town seed 40 (fresh) all equal. 12 m: Kaisaniemi coverage 0 worse
    (design notes, round thirty, branch links30)."""
    link_through_deg: float = 40.0
    """Widest difference, degrees, between a short street's own end heading and the street
    through it (``link_through_m``); a link that turns further is a bend of its own."""
    heading_corner_osm_deg: float | None = None
    """With OSM, :attr:`heading_corner_deg` at this many degrees instead (the rule's trades
    were measured without OSM). With :attr:`SegmentParams.mapped_apart` and
    :attr:`SegmentParams.part_at_junctions_osm` the Erottaja knot's arms are four streets at
    each junction, but the bend's heading at A is measured across its corner 10 m out and
    the street round the other corner leaves B 47 degrees off its first leg. None: with OSM
    as without (before round thirty). Off (round thirty, knotturns30, at 60 with both those
    switches, with OSM against main's build): fresh Bulevardi 12 of 16 rows better (four
    score every turn right), 2 worse in turns (wander seed 0 with and without stops, the
    knot not parted there); on 32 other twins 16 better, 14 equal, 2 worse in turns (walks
    with stops: Kaisaniemi wander seed 1 0.877 -> 0.855, unseen Kamppi wander camera 5
    0.941 -> 0.882); P, R and F1 never worse."""
    profile_step_m: float = 5.0
    """Spacing of ``heading_profile_deg`` samples along an edge."""
    osm_snap_m: float = 12.0
    """A pose-derived junction this close to an OSM junction takes the OSM position."""
    spur_into_stub_m: float | None = 3.5
    """With OSM, a spur (an out-and-back from a mapped node) along a street that goes on,
    every pose of which lies within this many metres of a mapped dead-end stub leaving the
    same node, and that reached no farther than the stub is long, is read as a walk into
    the stub (:func:`~city360.pose_graph.osm_dead_ends.spurs_into_stubs`). None: as matched.
    On (issue 17, round thirty-four, branch kosm34): with OSM, on the 120 kept twins and the
    30 held-out old town twins (seeds 5-9) one row better (Kaisaniemi coverage seed 1: R
    0.968 -> 1.000, F1 0.939 -> 0.974), none worse in P, R, F1 or turns."""
    through_place_passes: bool = True
    """With OSM, a walk the map matching turns at an outer node of a knot (a place of nodes
    joined by streets under 8 m, ``osm_match.node_groups``) is cut at the junction standing
    for the knot when it passes it farther than the cut radius, as at the knot's own node,
    unless another video's end cuts it there (:func:`~city360.pose_graph.osm_match.
    through_junction_passes`, ``by_place``). False: only a turn at a node within
    ``JunctionParams.merge_m`` of a junction. On (issue 17, round thirty-five, branch
    osm35): with OSM, on the 120 kept twins, the 30 held-out old town twins (seeds 5-9) and
    the 8 held-out seed-5 windows, 7 rows better (Kaisaniemi wander 5 and wander+stops 5 P
    0.969 -> 1.000, to target; one-way 2 F1 0.947 -> 0.974, to target; one-way 0 and 5 and
    wander+stops 1 F1 up, coverage 2 turns up), none worse in P, R, F1 or turns."""
    refine: bool = True
    """Without OSM, move junctions to where their arms' centre lines meet
    (:mod:`city360.pose_graph.refine`)."""
    refine_params: RefineParams = field(default_factory=RefineParams)
    clarify: bool = True
    """Without OSM, pull the passes of each street onto one centre line before anything is
    sought (:mod:`city360.pose_graph.clarify`)."""
    clarify_params: ClarifyParams = field(default_factory=ClarifyParams)
    hold_still: bool = True
    """Without OSM, hold the poses of each span where the camera stood still at one place
    before anything is sought (:mod:`city360.pose_graph.dwell`)."""
    dwell_params: DwellParams = field(default_factory=DwellParams)
    apart_params: ApartParams | None = field(default_factory=ApartParams)
    """Without OSM, drop junctions whose passes keep to two streets side by side that never
    meet (:mod:`city360.pose_graph.apart`); None leaves them."""
    end_tee_params: EndTeeParams | None = field(default_factory=EndTeeParams)
    """Without OSM, a video that ends beside another street's pass, its street running into
    that pass, ends at a T-junction there (:mod:`city360.pose_graph.end_tees`); None leaves
    it a dead end."""
    corner_cut_params: CornerCutParams | None = field(default_factory=CornerCutParams)
    """Without OSM, a triangle of three junctions that is one T whose turning passes cut both
    its corners becomes that T (:mod:`city360.pose_graph.corner_cuts`); None leaves it."""
    knot_fork_params: KnotForkParams | None = field(default_factory=KnotForkParams)
    """Without OSM, a node of two streets one of which forks into a knot of junctions the
    build fused (its passes end at one node in two groups, three passes or more each, whose
    ends lie 4 m or more apart) is kept where it would be dissolved, and that street is made
    two, so the node is a junction of three (:mod:`city360.pose_graph.knot_forks`). None:
    the node is dissolved or a link, as before. On (round thirty-seven, branch old37):
    without OSM on the 120 kept twins every row equal field by field; on the 75 earlier
    held-out twins 2 rows better (old town wander+stops 5 R 0.905 -> 0.952, F1 0.870 ->
    0.901; wander+stops 10 P 0.947 -> 0.950, R 0.900 -> 0.950, F1 0.824 -> 0.857, turns
    1.000 -> 0.960), none worse in P, R or F1. With OSM it never runs."""
    fork_params: FusedForkParams | None = field(default_factory=FusedForkParams)
    """Without OSM, a junction built where a shallow fork's branches part, 10-28 m past a
    node at the fork itself, moves to that node (:mod:`city360.pose_graph.fused_forks`);
    None leaves it."""
    stolen_branch_params: StolenBranchParams | None = field(default_factory=StolenBranchParams)
    """Without OSM, the passes of a shallow fork's branch cut at a junction a few metres down
    the fork are left uncut there, so the branch starts at the node at the fork
    (:mod:`city360.pose_graph.stolen_branches`); None leaves them cut."""
    trunk_params: PartedTrunkParams | None = field(default_factory=PartedTrunkParams)
    """Without OSM, two streets that leave a walker's turning point (or a video's end) on one
    line and part at a turn 10 m or more from it meet a junction there, which the votes
    missed (:mod:`city360.pose_graph.parted_trunks`); None leaves them two streets. On
    (round thirty-three, the lead): on 120 kept twins without OSM 1 row better (fresh
    Kaisaniemi wander 2, P 0.857 -> 0.889), none worse; on the held-out old town wander
    seed 5, where it was traced, P / R / F1 0.952 / 0.952 / 0.889 -> 1.000 / 1.000 /
    0.972."""
    lone_arm_params: LoneArmParams | None = field(default_factory=LoneArmParams)
    """Without OSM, a junction one of whose streets no pass leaves it by (its walkers turn
    back or its videos end there, twice or more, a U-turn counting twice) while that street's
    ways out stay within 6 m of the passes through the junction for 20 m, is dropped, and
    those passes are held uncut at the dead end left there: a dead-end street ending beside
    another (:mod:`city360.pose_graph.lone_arms`). None: kept. On (round thirty-five,
    kamp35): on 120 kept twins, the 30 held-out old town rows (seeds 5-9) and the 8 seed-5
    windows without OSM, 2 rows better (Kamppi coverage with stops 6 P 0.929 -> 1.000, F1
    0.852 -> 0.906; Kamppi wander 9 P 0.923 -> 1.000, F1 0.808 -> 0.863: the extra between
    the streets near (-155, -10) gone), none worse, 156 equal; Kamppi seed 10 (7 rows)
    equal. The 6 m has little room: 7 m takes two true forks (fresh Bulevardi coverage 1,
    R 1.000 -> 0.933; fresh Kaisaniemi coverage 0), the Kamppi streets reach 5.6 m.
    ``LoneArmParams.single_end_off_m`` (3 m, on: round thirty-six, dead36) reads a street
    met by one video's end too when it runs 3-7 m beside the through pass from 10 m on:
    Kamppi one-way 13 and one-way with stops 13 P 0.933 -> 1.000, F1 0.946 -> 1.000; the 120
    kept twins and 61 held-out twins equal."""
    beside_end_params: BesideEndParams | None = field(default_factory=BesideEndParams)
    """Without OSM, a pass is not cut at a walker's U-turn that it runs beside, parallel and
    4 m or more off its line, 12 m or more from every junction: a path that ends beside
    another, not a turn-back on the street the pass walks (:mod:`city360.pose_graph.
    beside_ends`); None cuts every pass within ``SegmentParams.dead_end_pass_m``. On (round
    thirty-four, kais34): on 120 kept twins and the 24 held-out old town twins without OSM,
    2 rows better (Helsinki wander 0 P 0.967 -> 0.975, F1 0.919 -> 0.929: an extra 55 m
    from any true junction gone; fresh Kaisaniemi wander 2 F1 0.714 -> 0.726), none worse,
    142 equal; fresh Kaisaniemi seeds 3-4 (8 rows) equal. It does not mend the Kaisaniemi
    path end it was traced at (design notes, round thirty-four, kais34)."""
    stub_end_params: StubEndParams | None = field(default_factory=StubEndParams)
    """Without OSM, a video that starts or ends 5-8 m up a short stub it alone walks, and
    turns out of it at a junction, ends at a dead end of its own (the stub is a street)
    rather than at the junction (:mod:`city360.pose_graph.stub_ends`); None leaves it the
    junction's (before round nineteen)."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class _EdgeSpec:
    id: str
    u: int
    v: int
    track: int
    first_frame: int
    last_frame: int
    reverse: bool
    street: int
    forward: bool  # runs street.a -> street.b
    primary: bool


def _chord_heading(track: Track, from_arc: float, to_arc: float) -> float:
    d = track.point_at(to_arc) - track.point_at(from_arc)
    return bearing_deg(float(d[0]), float(d[1]))


CORNER_LEAD_M = 5.0
"""Metres of the chord measured before :attr:`BuildParams.heading_corner_deg` looks for a
corner: 3 m turned Kamppi's camera-GPS wander with stops (unseen seed 5) from turns 0.941
to 0.863, 3 m chords of jitter read as corners."""


def _before_corner(
    track: Track, node_arc: float, near: float, far: float, sign: float, corner_deg: float
) -> float:
    """The chord's far distance from the node (at ``node_arc`` metres of ``track``; ``sign``
    +1 going on from it, -1 coming to it), pulled in to the first corner between
    ``near`` + :data:`CORNER_LEAD_M` and ``far`` (:attr:`BuildParams.heading_corner_deg`)."""
    lead = near + CORNER_LEAD_M
    if far <= lead:
        return far
    first = _chord_heading(track, node_arc + sign * near, node_arc + sign * lead)
    for at in np.arange(lead, far - 2.0 + 1e-9, 1.0):
        step = _chord_heading(track, node_arc + sign * float(at), node_arc + sign * float(at + 2.0))
        rest = _chord_heading(track, node_arc + sign * float(at), node_arc + sign * far)
        if min(abs(angle_diff_deg(step, first)), abs(angle_diff_deg(rest, first))) > corner_deg:
            return float(at)
    return far


def _geometry(
    track: Track, seg: Segment, params: BuildParams, *, corner_deg: float | None
) -> tuple[float, float, float, list[float]]:
    """(length_m, start heading, end heading, heading profile) of a segment played forward;
    ``corner_deg``: :attr:`BuildParams.heading_corner_deg` as this build applies it."""
    s0, s1 = float(track.arc_m[seg.first_frame]), float(track.arc_m[seg.last_frame])
    length = max(s1 - s0, 1e-3)
    near = min(params.heading_near_m, 0.2 * length)
    far = min(params.heading_far_m, 0.6 * length)
    far_start = far if corner_deg is None else _before_corner(track, s0, near, far, 1.0, corner_deg)
    far_end = far if corner_deg is None else _before_corner(track, s1, near, far, -1.0, corner_deg)
    start = _chord_heading(track, s0 + near, s0 + far_start)
    end = _chord_heading(track, s1 - far_end, s1 - near)
    marks = np.arange(s0, s1 + 1e-9, params.profile_step_m)
    frames = np.clip(np.searchsorted(track.arc_m, marks), seg.first_frame, seg.last_frame)
    profile = [round(float(h), 1) for h in track.heading_deg[frames]]
    return length, start, end, profile


def _choose_primary(
    segments: Sequence[Segment], members: Sequence[int], tracks: Sequence[Track]
) -> int:
    """The segment whose length is closest to the median of the street direction's lengths
    (a typical pass, not one that cut a corner or wandered), ties by id order."""
    lengths = np.array(
        [
            tracks[segments[i].track].arc_m[segments[i].last_frame]
            - tracks[segments[i].track].arc_m[segments[i].first_frame]
            for i in members
        ]
    )
    median = float(np.median(lengths))
    return members[int(np.argmin(np.abs(lengths - median)))]


def _circular_mean(angles_deg: Sequence[float]) -> float:
    rad = np.radians(np.asarray(angles_deg, dtype=np.float64))
    return wrap_deg(float(np.degrees(np.arctan2(np.sin(rad).sum(), np.cos(rad).sum()))))


def _segment_id(track: Track, first: int, last: int) -> str:
    return f"{track.id}:{first}-{last}"


def _edges(
    tracks: Sequence[Track], segments: Sequence[Segment], streets: Sequence[Street]
) -> list[_EdgeSpec]:
    specs: list[_EdgeSpec] = []
    for street in streets:
        directions = (
            (True, street.forward, street.backward),
            (False, street.backward, street.forward),
        )
        for forward, members, opposite in directions:
            if members:
                primary = _choose_primary(segments, members, tracks)
                for i in members:
                    seg = segments[i]
                    track = tracks[seg.track]
                    specs.append(
                        _EdgeSpec(
                            _segment_id(track, seg.first_frame, seg.last_frame),
                            seg.u,
                            seg.v,
                            seg.track,
                            seg.first_frame,
                            seg.last_frame,
                            reverse=False,
                            street=street.id,
                            forward=forward,
                            primary=i == primary,
                        )
                    )
            else:  # nobody filmed this direction: play the other direction backwards
                seg = segments[_choose_primary(segments, opposite, tracks)]
                track = tracks[seg.track]
                specs.append(
                    _EdgeSpec(
                        _segment_id(track, seg.last_frame, seg.first_frame),
                        seg.v,
                        seg.u,
                        seg.track,
                        seg.first_frame,
                        seg.last_frame,
                        reverse=True,
                        street=street.id,
                        forward=forward,
                        primary=True,
                    )
                )
    return specs


def _closest_pair(tracks: Sequence[Track]) -> tuple[str, str, float, FloatArray] | None:
    """The two tracks (of the first ten) that come nearest each other: their ids, the gap
    (metres) and the midpoint there; None for fewer than two."""
    best: tuple[str, str, float, FloatArray] | None = None
    for a, b in itertools.combinations(tracks[:10], 2):
        gap, nearest = cKDTree(b.xy).query(a.xy)
        i = int(np.argmin(gap))
        if best is None or gap[i] < best[2]:
            best = (a.id, b.id, float(gap[i]), (a.xy[i] + b.xy[int(nearest[i])]) / 2)
    return best


def _check_meeting(tracks: Sequence[Track], segments: Sequence[Segment], *, with_osm: bool) -> None:
    """Raise when several trajectories share no node at all: nothing connects them (saying
    where two of them come close, when they do: then it is the build's doing, not theirs)."""
    if len(tracks) < 2:
        return
    nodes_of: dict[int, set[int]] = defaultdict(set)
    for seg in segments:
        nodes_of[seg.track].update((seg.u, seg.v))
    meet = nx.Graph()
    meet.add_nodes_from(range(len(tracks)))
    owners: dict[int, list[int]] = defaultdict(list)
    for t, nodes in nodes_of.items():
        for n in nodes:
            owners[n].append(t)
    for ts in owners.values():
        nx.add_path(meet, ts)
    if meet.number_of_edges() > 0:
        return
    close = _closest_pair(tracks)
    if close is not None and close[2] <= _NODE_REACH_M:
        first, second, gap_m, (x, y) = close
        where = (
            "with an OSM extract a junction is placed at the OSM node, and one of them passes "
            "it farther than the build reaches (check that walk's GPS, or build without --osm)"
            if with_osm
            else "their crossing is too shallow or too short to be found"
        )
        meet_how = "cross" if gap_m < 1.0 else f"pass within {gap_m:.1f} m of each other"
        msg = (
            f"the {len(tracks)} trajectories share no junction, though {first} and {second} "
            f"{meet_how} near x={x:.0f}, y={y:.0f}: {where}"
        )
        raise GraphBuildError(msg)
    lines = []
    for track in tracks[:10]:
        centre = track.xy.mean(axis=0)
        lines.append(
            f"{track.id} ({track.length_m:.0f} m around x={centre[0]:.0f}, y={centre[1]:.0f})"
        )
    msg = (
        f"the {len(tracks)} trajectories never meet: no two of them cross, touch or share a "
        "street, so no junction joins them. Film connecting streets, or build each area as its "
        "own city. Trajectories: " + "; ".join(lines)
    )
    raise GraphBuildError(msg)


@dataclass(frozen=True, slots=True)
class CutContext:
    """One build's fixed inputs to its cuts (:meth:`cut`): the tracks, the params, the OSM
    cuts (``matched``, with OSM), the passes kept uncut (``uncut``, from
    :func:`~city360.pose_graph.stolen_branches.stolen_branches` on) and the lone arms
    (``lone``, from :func:`~city360.pose_graph.lone_arms.lone_arm_junctions` on), and what
    the dead ends are found from in the tracks alone (``turns``,
    :func:`~city360.pose_graph.track_turns.find_turns`): a build cuts its tracks eight to
    fifteen times, each time at other junctions, and finds those once."""

    tracks: Sequence[Track]
    params: BuildParams
    turns: TurnFindings
    matched: MatchedCuts | None = None
    uncut: UncutPasses | None = None
    lone: LoneArms | None = None

    def cut(
        self, junctions_xy: FloatArray
    ) -> tuple[FloatArray, FloatArray, list[Segment], list[Street], list[int]]:
        """The tracks cut at ``junctions_xy`` (J, 2) and the dead ends found with them: dead
        ends (D, 2), junctions (J, 2), segments, streets, and each segment's street."""
        end_clearance = None
        if self.matched is None and self.params.stub_end_params is not None:
            end_clearance = stub_ends(self.tracks, junctions_xy, self.params.stub_end_params)
        dead_xy, events = find_dead_ends(
            self.tracks,
            junctions_xy,
            self.params.junctions,
            short_spurs=self.matched is None,
            end_clearance=end_clearance,
            turns=self.turns,
        )
        dead_end_pass_m: FloatArray | None = None
        may_cut: CutFilter | None = None
        if self.uncut and self.params.stolen_branch_params is not None:
            may_cut = self.uncut.cut_filter(
                junctions_xy, same_node_m=self.params.stolen_branch_params.same_node_m
            )
        if self.lone is not None and self.lone.passes and len(dead_xy):
            held = self.lone.cut_filter(len(np.asarray(junctions_xy).reshape(-1, 2)))
            may_cut = held if may_cut is None else _both(may_cut, held)
        if self.matched is None and self.params.beside_end_params is not None and len(dead_xy):
            beside = beside_end_filter(
                self.tracks, junctions_xy, dead_xy, events, self.params.beside_end_params
            )
            may_cut = beside if may_cut is None else _both(may_cut, beside)
        passes = through = None
        if self.matched is not None:  # dead ends placed along the matched streets (osm_dead_ends)
            dead_xy, events, dead_end_pass_m, may_cut = self.matched.dead_ends(junctions_xy, events)
            passes = self.matched.passes(events)
            through = self.matched.junction_passes(
                junctions_xy, pass_m=_NODE_REACH_M, dead_ends=events
            )
        segments = cut_tracks(
            self.tracks,
            junctions_xy,
            events,
            self.params.segments,
            dead_end_xy=dead_xy,
            dead_end_pass_m=dead_end_pass_m,
            may_cut=may_cut,
            dead_end_passes=passes,
            junction_passes=through,
        )
        streets, street_of = group_streets(
            self.tracks,
            segments,
            self.params.segments,
            mapped_street=self.matched.mapped_street if self.matched is not None else None,
            mapped_gap=(
                partial(self.matched.mapped_gap_m, share=self.params.segments.mapped_gap_share)
                if self.matched is not None
                else None
            ),
        )
        return dead_xy, np.asarray(junctions_xy), segments, streets, street_of


def _cut(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    params: BuildParams,
    matched: MatchedCuts | None = None,
    uncut: UncutPasses | None = None,
    *,
    lone: LoneArms | None = None,
) -> tuple[FloatArray, FloatArray, list[Segment], list[Street], list[int]]:
    """One cut outside a build (:meth:`CutContext.cut`), finding the tracks' turns for it."""
    turns = find_turns(tracks, params.junctions)
    return CutContext(tracks, params, turns, matched, uncut, lone).cut(junctions_xy)


def _both(first: CutFilter, second: CutFilter) -> CutFilter:
    """A cut filter allowing what both allow."""

    def may_cut(track: int, frames: IntArray, nodes: IntArray) -> npt.NDArray[np.bool_]:
        return first(track, frames, nodes) & second(track, frames, nodes)

    return may_cut


def build_from_tracks(
    tracks: Sequence[Track],
    projection: LocalProjection,
    *,
    params: BuildParams | None = None,
    osm: OsmStreets | None = None,
    osm_matches: Sequence[IntArray] | None = None,
    build_info: dict[str, Any] | None = None,
) -> PoseGraph:
    """Build the pose graph of ``tracks`` (pure: reads and writes nothing).

    With ``osm`` (the city's OSM street network) OSM intersections the video passes through
    become junctions, and pose-derived junctions are reconciled with them
    (:func:`city360.pose_graph.osm_match.reconcile_junctions`). ``osm_matches``: the tracks
    already map-matched to ``osm`` (:func:`~city360.pose_graph.osm_match.match_tracks`), else
    they are matched here.
    """
    params = params or BuildParams()
    if not tracks:
        msg = "no trajectories to build a graph from"
        raise GraphBuildError(msg)
    stored_xy = [track.xy for track in tracks]  # the poses graph.json is checked against
    if osm is None and params.hold_still:
        tracks = hold_still_spans(tracks, params.dwell_params)
    measured = tracks  # apart_junctions' gaps before clarifying (ApartParams.measured_from_m)
    if osm is None and params.clarify:
        tracks = clarify_tracks(tracks, params.clarify_params)
    turns = find_turns(tracks, params.junctions)  # spurs' roots and every cut's dead ends
    junctions_xy, _support, parted, close_born = find_junction_parts(
        tracks, params.junctions, without_osm=osm is None, turns=turns
    )
    if osm is None:
        # a side step's junction where the side street leaves the walker's line
        junctions_xy = side_step_feet(tracks, junctions_xy, params.junctions, turns=turns)
    parts_xy = junctions_xy.reshape(-1, 2)[parted]
    close_xy = junctions_xy.reshape(-1, 2)[close_born]  # parted at tops under split_peaks_m
    matched: MatchedCuts | None = None
    if osm is not None:
        from city360.pose_graph.osm_dead_ends import MatchedCuts, find_spurs, spurs_into_stubs
        from city360.pose_graph.osm_match import match_tracks, reconcile_junctions

        matches = list(osm_matches) if osm_matches is not None else match_tracks(osm, tracks)
        spurs = find_spurs(osm, tracks, matches)
        if params.spur_into_stub_m is not None:
            matches, spurs = spurs_into_stubs(
                osm, tracks, matches, spurs, near_m=params.spur_into_stub_m
            )
        junctions_xy = reconcile_junctions(
            junctions_xy, osm, tracks, snap_m=params.osm_snap_m, matches=matches, spurs=spurs
        )
        # OSM draws some crossings as two nodes a few metres apart; video cannot tell them apart
        junctions_xy, _ = merge_close(
            junctions_xy, np.ones(len(junctions_xy), dtype=np.int64), params.junctions.merge_m
        )
        matched = MatchedCuts(
            osm,
            tracks,
            matches,
            spurs,
            clearance_m=params.junctions.junction_clearance_m,
            merge_m=params.junctions.merge_m,
            cut_radius_m=params.segments.cut_radius_m,
            unmapped_pass_m=params.segments.dead_end_pass_m,
            through_place=params.through_place_passes,
        )
    cuts = CutContext(tracks, params, turns, matched)
    dead_xy, junctions_xy, segments, streets, _ = cuts.cut(junctions_xy)
    if osm is None and params.refine:
        # where the arms' centre lines meet, not where the passes' votes piled up
        moved, branching = refine_junctions(
            tracks, junctions_xy, segments, streets, params.refine_params
        )
        shift_m = params.junctions.split_part_shift_m
        if params.junctions.split_peaks_m is not None and shift_m is not None:
            moved = _parts_shifted(junctions_xy, moved, parts_xy, shift_m)
        if params.junctions.split_peaks_m is not None and params.junctions.split_held_apart:
            moved = _held_apart(junctions_xy, moved, params.junctions.merge_m)
        if params.junctions.split_peaks_m is not None and params.junctions.split_parts_apart:
            is_part = _is_part(junctions_xy, close_xy)
            floor_m = params.junctions.split_every_part_apart_m
            other = _is_part(junctions_xy, parts_xy) & ~is_part if floor_m is not None else None
            junctions_xy, floor_held = merge_parts_held(
                moved[branching],
                is_part[branching],
                params.junctions.merge_m,
                other_parts=other[branching] if other is not None else None,
                other_floor_m=floor_m or 0.0,
            )
        else:
            floor_held = np.zeros((0, 2), dtype=np.int64)
            junctions_xy, _ = merge_close(
                moved[branching],
                np.ones(int(branching.sum()), dtype=np.int64),
                params.junctions.merge_m,
            )
        dead_xy, junctions_xy, segments, streets, _ = cuts.cut(junctions_xy)
        rejoin = _held_pairs_to_rejoin(junctions_xy, streets, floor_held, params.junctions)
        if rejoin.any():
            joined = _rejoin_pairs(junctions_xy, floor_held[rejoin])
            dead_xy, junctions_xy, segments, streets, _ = cuts.cut(joined)
        split = split_junctions(tracks, junctions_xy, segments, streets, params.refine_params)
        if len(split) != len(junctions_xy):
            dead_xy, junctions_xy, segments, streets, _ = cuts.cut(split)
        halves, origin = split_side_by_side(
            tracks, junctions_xy, segments, streets, params.refine_params
        )
        if len(halves) != len(junctions_xy):
            kept = _whole_splits(cuts, junctions_xy, halves, origin)
            if len(kept) != len(junctions_xy):
                dead_xy, junctions_xy, segments, streets, _ = cuts.cut(kept)
        # moving and merging gives junctions new arms: check once more that each branches
        _, branching = refine_junctions(
            tracks, junctions_xy, segments, streets, params.refine_params, dead_xy=dead_xy
        )
        if not branching.all():
            dead_xy, junctions_xy, segments, streets, _ = cuts.cut(junctions_xy[branching])
    dissolved = dissolve_pass_through(segments, streets, range(len(junctions_xy)))
    if osm is None and dissolved and params.knot_fork_params is not None:
        # a fork into a fused knot: kept here, its street parted with the final streets
        dissolved -= set(knot_forks(tracks, segments, streets, dissolved, params.knot_fork_params))
    if osm is None and dissolved and params.segments.apart_m is not None:
        # a fork whose branches are grouped as one street here, walked up one and down the
        # other: dissolved, no node of two streets would be left for part_two_lines to part
        dissolved -= turned_forks(tracks, segments, streets, dissolved, params.segments)
    apexes: dict[int, FloatArray] = {}
    if osm is None and params.segments.fork_apex_m is not None:
        # a fork whose branches meet again at one junction: kept, at the apex of its branches
        apexes = fork_apexes(tracks, junctions_xy, segments, streets, dissolved, params.segments)
        dissolved -= set(apexes)
    if dissolved or apexes:
        keep = np.array([i not in dissolved for i in range(len(junctions_xy))])
        placed = junctions_xy.reshape(-1, 2).copy()
        for node, apex in apexes.items():
            placed[node] = apex
        dead_xy, junctions_xy, segments, streets, _ = cuts.cut(placed[keep])
    crossed_xy = np.zeros((0, 2))  # the crossed_lines drops left for after the fused forks
    if osm is None and params.apart_params is not None:
        apart = apart_junctions(
            tracks, junctions_xy, segments, streets, params.apart_params, measured=measured
        )
        if params.apart_params.crossed_lines and params.apart_params.crossed_last:
            parted = apart_junctions(
                tracks,
                junctions_xy,
                segments,
                streets,
                replace(params.apart_params, crossed_lines=False),
                measured=measured,
            )
            crossed_xy = junctions_xy.reshape(-1, 2)[apart & ~parted]
            apart = parted
        held_m = params.apart_params.dead_end_held_m
        if apart.any() and held_m is not None:
            # a video's end that cut a pass beside it: the two ran to the junction dropped
            held = apart_end_passes(tracks, segments, streets, apart, held_m=held_m)
            if held:
                cuts = replace(cuts, lone=LoneArms(np.zeros(0, dtype=bool), held))
        if apart.any():
            dead_xy, junctions_xy, segments, streets, _ = cuts.cut(junctions_xy[~apart])
    lone: LoneArms | None = None
    if osm is None and params.lone_arm_params is not None:
        lone = lone_arm_junctions(tracks, junctions_xy, segments, streets, params.lone_arm_params)
        if cuts.lone is not None:
            lone = replace(lone, passes=(*cuts.lone.passes, *lone.passes))
        cuts = replace(cuts, lone=lone)
        if lone.passes:
            dead_xy, junctions_xy, segments, streets, _ = cuts.cut(junctions_xy[~lone.dropped])
    if osm is None and params.corner_cut_params is not None:
        merged = corner_cuts(tracks, junctions_xy, segments, streets, params.corner_cut_params)
        if len(merged) != len(junctions_xy):
            dead_xy, junctions_xy, segments, streets, _ = cuts.cut(merged)
    if osm is None and params.end_tee_params is not None:
        tees = end_tees(tracks, junctions_xy, segments, streets, params.end_tee_params)
        if len(tees):
            dead_xy, junctions_xy, segments, streets, _ = cuts.cut(
                np.concatenate([junctions_xy.reshape(-1, 2), tees])
            )
    uncut: UncutPasses | None = None
    if osm is None and params.stolen_branch_params is not None:
        uncut = stolen_branches(
            tracks, junctions_xy, dead_xy, segments, streets, params.stolen_branch_params
        )
        cuts = replace(cuts, uncut=uncut)
        if uncut:
            junctions_xy = np.concatenate([junctions_xy.reshape(-1, 2), uncut.added])
            dead_xy, junctions_xy, segments, streets, _ = cuts.cut(junctions_xy)
    forks_xy = np.zeros((0, 2))  # fused_forks' junctions, whose branches leave them together
    if osm is None and params.fork_params is not None:
        forks = fused_forks(tracks, junctions_xy, dead_xy, segments, streets, params.fork_params)
        forks_xy = forks.added
        if forks.changes:
            dead_xy, junctions_xy, segments, streets, _ = cuts.cut(
                np.concatenate([junctions_xy.reshape(-1, 2)[forks.keep], forks.added])
            )
    if osm is None and params.fork_params is not None and params.fork_params.video_ends:
        dead_xy, junctions_xy, segments, streets = _forks_at_video_ends(
            cuts, (dead_xy, junctions_xy, segments, streets), params.fork_params
        )
    if osm is None and params.trunk_params is not None:
        partings = parted_trunks(
            tracks, junctions_xy, dead_xy, segments, streets, params.trunk_params, forks_xy=forks_xy
        )
        if len(partings):
            dead_xy, junctions_xy, segments, streets, _ = cuts.cut(
                np.concatenate([junctions_xy.reshape(-1, 2), partings])
            )
    if len(crossed_xy):
        # positions pass through the steps unchanged, so a junction still there is matched exactly
        at_crossed = (junctions_xy.reshape(-1, 2)[:, None] == crossed_xy[None]).all(axis=2)
        last = ~at_crossed.any(axis=1)
        if not last.all():
            dead_xy, junctions_xy, segments, streets, _ = cuts.cut(
                junctions_xy.reshape(-1, 2)[last]
            )
    if not segments:
        msg = (
            f"no segments: the {len(tracks)} trajectories pass no junction and reach no dead end "
            "(are they shorter than a few metres?)"
        )
        raise GraphBuildError(msg)
    if osm is None and params.segments.apart_m is not None:
        # a straight and a bent street between the same two nodes: the node where they meet
        # a third street is a junction, not a bend (with OSM the map says which street is which)
        streets = part_two_lines(tracks, segments, streets, params.segments)
    elif params.segments.apart_m is not None and params.segments.part_at_junctions_osm:
        # the map cannot part a short link from a bend a few metres off it; their headings can
        streets = part_two_lines(
            tracks,
            segments,
            streets,
            params.segments,
            junctions_only=True,
            mapped_street=matched.most_walked_street if matched is not None else None,
        )
    if osm is None and params.knot_fork_params is not None:
        streets = part_knot_forks(
            tracks, segments, streets, range(len(junctions_xy)), params.knot_fork_params
        )
    _check_meeting(tracks, segments, with_osm=osm is not None)
    specs = _edges(tracks, segments, streets)
    nodes_xy = np.concatenate([junctions_xy.reshape(-1, 2), dead_xy.reshape(-1, 2)])
    nodes_xy = fit_nodes(nodes_xy, _ends_of_nodes(specs, stored_xy), _NODE_REACH_M)
    corner_deg = params.heading_corner_deg
    if osm is not None and params.heading_corner_osm_deg is not None:
        corner_deg = params.heading_corner_osm_deg
    return _assemble(
        tracks,
        projection,
        nodes_xy,
        streets,
        specs,
        params,
        build_info,
        corner_deg=corner_deg,
        without_osm=osm is None,
    )


def _forks_at_video_ends(
    cuts: CutContext,
    cut: tuple[FloatArray, FloatArray, list[Segment], list[Street]],
    fork_params: FusedForkParams,
) -> tuple[FloatArray, FloatArray, list[Segment], list[Street]]:
    """The cut with each shallow fork's junction moved to a video's end at the fork
    (:func:`~city360.pose_graph.fused_forks.forks_at_video_ends`), or the cut given when
    there is none (``cut`` and the result alike: dead ends, junctions, segments, streets, in
    :meth:`CutContext.cut`'s order): the ends are tried as junctions in one more cut."""
    tracks, params = cuts.tracks, cuts.params
    dead_xy, junctions_xy, segments, streets = cut
    junctions_xy = junctions_xy.reshape(-1, 2)
    ends = video_ends(tracks, junctions_xy, params.junctions.junction_clearance_m, fork_params)
    if not len(ends):
        return dead_xy, junctions_xy, segments, streets
    trial_xy = np.concatenate([junctions_xy, ends])
    trial_dead, trial_xy, trial_segments, trial_streets, _ = cuts.cut(trial_xy)
    forks = forks_at_video_ends(
        tracks,
        trial_xy,
        len(junctions_xy),
        trial_dead,
        trial_segments,
        trial_streets,
        fork_params,
    )
    if not forks.changes:
        return dead_xy, junctions_xy, segments, streets
    dead_xy, junctions_xy, segments, streets, _ = cuts.cut(
        np.concatenate([junctions_xy[forks.keep], forks.added])
    )
    return dead_xy, junctions_xy, segments, streets


def _parts_shifted(
    before: FloatArray, moved: FloatArray, parts_xy: FloatArray, shift_m: float
) -> FloatArray:
    """``moved`` (J, 2), with each junction of ``before`` that stands at one of ``parts_xy``
    (parts of parted vote piles, matched exactly: positions pass through the first cut
    unchanged) moved at most ``shift_m`` metres towards where it was moved (see
    :attr:`~city360.pose_graph.junction_params.JunctionParams.split_part_shift_m`)."""
    before = before.reshape(-1, 2)
    if not len(parts_xy) or not len(before):
        return moved
    is_part = _is_part(before, parts_xy)
    step = moved - before
    size = np.hypot(step[:, 0], step[:, 1])
    scale = np.where(is_part & (size > shift_m), shift_m / np.maximum(size, 1e-9), 1.0)
    return before + step * scale[:, None]


def _is_part(junctions_xy: FloatArray, parts_xy: FloatArray) -> npt.NDArray[np.bool_]:
    """Per junction (J,): whether it stands at one of ``parts_xy`` (parts of parted vote
    piles, matched exactly: positions pass through the first cut unchanged)."""
    junctions_xy = junctions_xy.reshape(-1, 2)
    if not len(parts_xy) or not len(junctions_xy):
        return np.zeros(len(junctions_xy), dtype=bool)
    return np.asarray((junctions_xy[:, None] == parts_xy[None]).all(axis=2).any(axis=1))


def _held_pairs_to_rejoin(
    junctions_xy: FloatArray, streets: Sequence[Street], pairs: IntArray, params: JunctionParams
) -> npt.NDArray[np.bool_]:
    """Per pair of ``pairs`` (P, 2, indices into ``junctions_xy``: the pairs only the floor
    of the post-refine merge held apart), whether to put it back as one junction: one of
    the two ends fewer than three streets (``params.split_held_part_streets``), or both
    have a street to one same third node (``params.split_held_shared_ends``)."""
    junctions_xy = junctions_xy.reshape(-1, 2)
    ends: dict[int, set[int]] = {node: set() for node in range(len(junctions_xy))}
    arms = np.zeros(len(junctions_xy), dtype=np.int64)
    for street in streets:
        for node, other in ((street.a, street.b), (street.b, street.a)):
            if node < len(junctions_xy):
                ends[node].add(other)
        for node in {street.a, street.b}:
            if node < len(junctions_xy):
                arms[node] += 1
    rejoin = np.zeros(len(pairs), dtype=bool)
    for k, (a, b) in enumerate(pairs):
        thin = params.split_held_part_streets and min(arms[a], arms[b]) < 3
        shared = params.split_held_shared_ends and bool((ends[a] & ends[b]) - {a, b})
        rejoin[k] = thin or shared
    return rejoin


def _rejoin_pairs(junctions_xy: FloatArray, pairs: IntArray) -> FloatArray:
    """``junctions_xy`` (J, 2) with each pair of ``pairs`` (P, 2, indices) put back as one
    junction at their mean, after the others; a junction in two pairs joins the first."""
    junctions_xy = junctions_xy.reshape(-1, 2)
    keep = np.ones(len(junctions_xy), dtype=bool)
    joined: list[FloatArray] = []
    for a, b in pairs:
        if keep[a] and keep[b]:
            keep[[a, b]] = False
            joined.append((junctions_xy[a] + junctions_xy[b]) / 2.0)
    return np.concatenate([junctions_xy[keep], np.asarray(joined).reshape(-1, 2)])


def _held_apart(before: FloatArray, moved: FloatArray, merge_m: float) -> FloatArray:
    """``moved`` (J, 2), with both junctions of each pair that stood ``merge_m`` or more apart
    in ``before`` and were moved within ``merge_m`` of each other put back where they were
    (see :attr:`~city360.pose_graph.junction_params.JunctionParams.split_held_apart`)."""
    held = moved.copy()
    if len(moved) < 2:
        return held
    for i, j in cKDTree(moved).query_pairs(merge_m, output_type="ndarray"):
        if np.hypot(*(before[i] - before[j])) > merge_m:
            held[[i, j]] = before[[i, j]]
    return held


def _whole_splits(
    cuts: CutContext, junctions_xy: FloatArray, halves: FloatArray, origin: IntArray
) -> FloatArray:
    """``halves`` (junction positions, m, each with the index into ``junctions_xy`` of the
    junction it was split from), with that junction put back wherever its two halves are not
    both junctions once the tracks are cut at them (a half with fewer than three streets,
    that branches nowhere, or that every pass runs straight through, would be dropped later
    and leave the other half where one junction was)."""
    tracks, params = cuts.tracks, cuts.params
    _, _, segments, streets, _ = cuts.cut(halves)
    _, branching = refine_junctions(tracks, halves, segments, streets, params.refine_params)
    dissolved = dissolve_pass_through(segments, streets, range(len(halves)))
    arms = np.zeros(len(halves), dtype=np.int64)
    for street in streets:
        for node in {street.a, street.b}:
            if node < len(halves):
                arms[node] += 1
    kept_apart = np.array([i not in dissolved for i in range(len(halves))], dtype=bool)
    whole = branching & kept_apart & (arms >= 3)
    kept: list[FloatArray] = []
    for node in np.unique(origin):
        members = np.flatnonzero(origin == node)
        if len(members) == 1 or whole[members].all():
            kept.extend(halves[members])
        else:
            kept.append(junctions_xy[node])
    return np.asarray(kept, dtype=np.float64).reshape(-1, 2)


_NODE_REACH_M = NODE_TOLERANCE_M - 0.01
"""Nodes are moved to reach every edge end cut at them within this (m): the validator's
tolerance, less a centimetre for the millimetre rounding of ``graph.json``."""


def _ends_of_nodes(
    specs: Sequence[_EdgeSpec], stored_xy: Sequence[FloatArray]
) -> dict[int, list[FloatArray]]:
    """The stored positions (m) of the first and last pose of every edge, by the node the
    edge starts or ends at (the index into the junctions then dead ends)."""
    ends: dict[int, list[FloatArray]] = defaultdict(list)
    for spec in specs:
        start, end = (
            (spec.last_frame, spec.first_frame)
            if spec.reverse
            else (spec.first_frame, spec.last_frame)
        )
        ends[spec.u].append(stored_xy[spec.track][start])
        ends[spec.v].append(stored_xy[spec.track][end])
    return ends


LINK_THROUGH_AGREE_DEG = 20.0
"""Widest difference, degrees, between the street arriving at a short link's one end and the
street leaving its other end for the two to be read as one street through the link
(:attr:`BuildParams.link_through_m`)."""


def _through_short_links(
    specs: Sequence[_EdgeSpec],
    geometry: dict[str, tuple[float, float, float, list[float]]],
    out_of_a: dict[int, float],
    into_b: dict[int, float],
    params: BuildParams,
) -> None:
    """Give each short street that is the middle of one street straight through a staggered
    pair that street's heading at both ends, in place (:attr:`BuildParams.link_through_m`).
    ``out_of_a`` / ``into_b``: each street's heading leaving its node ``a`` and arriving at
    its node ``b``, degrees clockwise from north."""
    if params.link_through_m is None:
        return
    ends: dict[int, tuple[int, int]] = {}
    lengths: dict[int, list[float]] = defaultdict(list)
    for spec in specs:
        ends[spec.street] = (spec.u, spec.v) if spec.forward else (spec.v, spec.u)
        lengths[spec.street].append(geometry[spec.id][0])
    arriving: dict[int, list[tuple[int, float]]] = defaultdict(list)
    leaving: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for street, (a, b) in ends.items():
        if a == b or street not in out_of_a:
            continue
        leaving[a].append((street, out_of_a[street]))
        arriving[a].append((street, wrap_deg(out_of_a[street] + 180.0)))
        arriving[b].append((street, into_b[street]))
        leaving[b].append((street, wrap_deg(into_b[street] + 180.0)))
    joining: dict[frozenset[int], int] = defaultdict(int)
    degree: dict[int, int] = defaultdict(int)
    for a, b in ends.values():
        joining[frozenset((a, b))] += 1
        degree[a] += 1
        degree[b] += 1
    through: dict[int, float] = {}
    for street, (a, b) in ends.items():
        if a == b or street not in out_of_a or np.median(lengths[street]) >= params.link_through_m:
            continue
        if joining[frozenset((a, b))] > 1 or min(degree[a], degree[b]) < 3:
            # two streets join the pair (a knot of its own), or one end only breaks a street
            continue
        best: tuple[float, float] | None = None
        for other_in, h_in in arriving[a]:
            for other_out, h_out in leaving[b]:
                if street in (other_in, other_out) or other_in == other_out:
                    continue
                gaps = (
                    abs(angle_diff_deg(h_out, h_in)),
                    abs(angle_diff_deg(out_of_a[street], h_in)),
                    abs(angle_diff_deg(into_b[street], h_out)),
                )
                if gaps[0] > LINK_THROUGH_AGREE_DEG or max(gaps[1:]) > params.link_through_deg:
                    continue
                if best is None or sum(gaps) < best[0]:
                    best = (sum(gaps), _circular_mean([h_in, h_out]))
        if best is not None:
            through[street] = best[1]
    for street, heading in through.items():
        out_of_a[street] = heading
        into_b[street] = heading


def _assemble(
    tracks: Sequence[Track],
    projection: LocalProjection,
    all_xy: FloatArray,
    streets: Sequence[Street],
    specs: Sequence[_EdgeSpec],
    params: BuildParams,
    build_info: dict[str, Any] | None,
    *,
    corner_deg: float | None,
    without_osm: bool = True,
) -> PoseGraph:
    """The graph of ``specs``; ``all_xy`` (N, 2): the junctions then the dead ends (m);
    ``corner_deg``: see :func:`_geometry`; ``without_osm``: built without a map
    (``link_through_m`` applies only then)."""
    degree: dict[int, int] = defaultdict(int)
    for street in streets:
        degree[street.a] += 1
        degree[street.b] += 1
    used = sorted(degree)
    renumber = {old: new for new, old in enumerate(used)}
    graph = nx.MultiDiGraph(
        crs=projection.proj4,
        schema_version=GRAPH_SCHEMA_VERSION,
        build={"params": params.to_json(), **(build_info or {})},
    )
    lat, lon = projection.to_latlon(all_xy[used, 0], all_xy[used, 1])
    for k, old in enumerate(used):
        kind = "junction" if degree[old] >= 3 else "link" if degree[old] == 2 else "dead_end"
        graph.add_node(
            renumber[old],
            kind=kind,
            x_m=round(float(all_xy[old, 0]), 3),
            y_m=round(float(all_xy[old, 1]), 3),
            lat=round(float(np.atleast_1d(lat)[k]), 9),
            lon=round(float(np.atleast_1d(lon)[k]), 9),
            degree=degree[old],
        )
    geometry: dict[str, tuple[float, float, float, list[float]]] = {}
    for spec in specs:
        track = tracks[spec.track]
        seg = Segment(spec.track, spec.u, spec.v, spec.first_frame, spec.last_frame)
        length, start, end, profile = _geometry(track, seg, params, corner_deg=corner_deg)
        if spec.reverse:
            start, end = wrap_deg(end + 180.0), wrap_deg(start + 180.0)
            profile = [round(wrap_deg(h + 180.0), 1) for h in reversed(profile)]
        geometry[spec.id] = (length, start, end, profile)
    # End headings of a street from all its passes, both directions: the mean of several noisy
    # chords is what turn angles should be measured against.
    leave_a: dict[int, list[float]] = defaultdict(list)
    arrive_b: dict[int, list[float]] = defaultdict(list)
    for spec in specs:
        if spec.reverse:
            continue
        _, start, end, _ = geometry[spec.id]
        if spec.forward:
            leave_a[spec.street].append(start)
            arrive_b[spec.street].append(end)
        else:
            leave_a[spec.street].append(end + 180.0)
            arrive_b[spec.street].append(start + 180.0)
    out_of_a = {street: _circular_mean(h) for street, h in leave_a.items()}
    into_b = {street: _circular_mean(h) for street, h in arrive_b.items()}
    if without_osm:
        _through_short_links(specs, geometry, out_of_a, into_b, params)
    for spec in specs:
        length, _, _, profile = geometry[spec.id]
        out_a = out_of_a[spec.street]
        in_b = into_b[spec.street]
        if spec.forward:
            geometry[spec.id] = (length, out_a, in_b, profile)
        else:
            geometry[spec.id] = (length, wrap_deg(in_b + 180.0), wrap_deg(out_a + 180.0), profile)
    primary_of: dict[tuple[int, bool], str] = {
        (s.street, s.forward): s.id for s in specs if s.primary
    }
    # which edge continues the same video from where an edge ends (same playback direction)
    continues: dict[tuple[int, int, bool], list[_EdgeSpec]] = defaultdict(list)
    for s in specs:
        start_frame = s.last_frame if s.reverse else s.first_frame
        continues[(s.track, start_frame, s.reverse)].append(s)
    leaving: dict[int, list[tuple[int, bool]]] = defaultdict(list)
    for s in specs:
        if s.primary:
            leaving[s.u].append((s.street, s.forward))
    for spec in specs:
        length, start, end, profile = geometry[spec.id]
        end_frame = spec.first_frame if spec.reverse else spec.last_frame
        same_video = {
            (c.street, c.forward): c.id
            for c in continues.get((spec.track, end_frame, spec.reverse), [])
        }
        choices = []
        for key in leaving[spec.v]:
            street_id, forward = key
            if street_id == spec.street and forward != spec.forward:
                continue  # back along the street we came on: a U-turn
            target = same_video.get(key, primary_of[key])
            choices.append(Choice(target, geometry[target][1]))
        twin_id = primary_of.get((spec.street, not spec.forward))
        uturn = Choice(twin_id, geometry[twin_id][1]) if twin_id else None
        transitions = transitions_for(end, choices, uturn=uturn)
        graph.add_edge(
            renumber[spec.u],
            renumber[spec.v],
            key=spec.id,
            id=spec.id,
            trajectory=tracks[spec.track].id,
            first_frame=spec.first_frame,
            last_frame=spec.last_frame,
            reverse=spec.reverse,
            length_m=round(length, 3),
            start_heading_deg=round(start, 2) % 360.0,
            end_heading_deg=round(end, 2) % 360.0,
            heading_profile_deg=profile,
            twin=twin_id,
            street=spec.street,
            primary=spec.primary,
            transitions=[t.to_json() for t in transitions],
        )
    return PoseGraph(graph)


def build_city(
    city_dir: str | Path | CityDir,
    *,
    osm_path: str | Path | None = None,
    osm_network: str = "auto",
    osm_squares: bool | None = None,
    require_frames: bool = True,
    params: BuildParams | None = None,
    on_step: Callable[[str], None] | None = None,
) -> PoseGraph:
    """Build, validate and write ``graph.json`` for a city; record stats in ``city.json``.

    ``osm_network``: which OSM ways the walk is matched against (``"auto"``: the network it
    is on, see :func:`~city360.pose_graph.osm_match.load_matching_streets`; or a name of
    ``city360.maps.NETWORK_HIGHWAYS``). ``osm_squares``: whether those ways include the
    outlines of walkable squares and the ways across them (``city360.maps.osm.load_osm``;
    None: as the network says, which is what a real walk wants; False for a twin whose scene
    was synthesized without them). ``on_step(name)`` is called as each step starts (for
    progress display).
    """
    from city360.pose_graph.provenance import trajectory_digests
    from city360.pose_graph.stats import graph_stats

    step = on_step or (lambda _name: None)
    city = city_dir if isinstance(city_dir, CityDir) else CityDir(city_dir)
    params = params or BuildParams()
    started = time.perf_counter()
    step("reading trajectories")
    manifest, tracks = load_tracks(city, require_frames=require_frames)
    projection = manifest.projection
    info: dict[str, Any] = {
        "trajectories": [t.id for t in tracks],
        "inputs": trajectory_digests(city, [t.id for t in tracks]),
        "osm": None,
    }
    osm = None
    osm_matches = None
    with ExitStack() as keep:
        if osm_path is not None:
            from city360.maps.city_extract import city_extract
            from city360.pose_graph.osm_match import load_matching_streets

            step("cropping the OSM extract to the city")
            crop = keep.enter_context(city_extract(city, osm_path))
            step("reading the OSM extract")
            osm, network, shares, osm_matches = load_matching_streets(
                crop, projection, tracks, network=osm_network, squares=osm_squares
            )
            info["osm"] = OSM_EXTRACT
            info["osm_network"] = network
            info["osm_matched_share"] = {k: round(v, 3) for k, v in shares.items()}
        step("finding junctions, cutting segments")
        pose_graph = build_from_tracks(
            tracks,
            projection,
            params=params,
            osm=osm,
            osm_matches=osm_matches,
            build_info=info,
        )
        step("validating the graph")
        validate_graph(
            pose_graph, city, require_frames=require_frames, tracks={t.id: t for t in tracks}
        )
    elapsed = time.perf_counter() - started
    step("statistics")
    # Everything that can fail or take long happens before the first write: a build killed
    # or failing in its statistics left a new graph.json beside a city.json describing the
    # old one (its parameters, OSM source and stats).
    stats = graph_stats(pose_graph, osm=osm, tracks=tracks)
    step("writing graph.json and city.json")
    # two builds of one city: each writes its pair whole; an ingest meanwhile keeps its part
    with folder_lock(city.graph_path), city.manifest_lock():
        manifest = city.read_manifest()
        manifest.stats["pose_graph"] = stats
        manifest.build["pose_graph"] = {
            "params": params.to_json(),
            "osm": OSM_EXTRACT if osm_path else None,
            "osm_original": str(Path(osm_path).resolve()) if osm_path else None,
            "osm_network": info.get("osm_network"),
            "osm_squares": osm_squares if osm_path else None,
            "require_frames": require_frames,
            "seconds": round(elapsed, 3),
            "graph": city.graph_path.name,
        }
        atomic_write_json(city.graph_path, pose_graph.to_node_link())
        city.write_manifest(manifest)
    logger.info("built %s in %.2f s", pose_graph, elapsed)
    return pose_graph
