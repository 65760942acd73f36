"""Dead ends on mapped streets: where videos end, turn back or walk into a spur, placed by the
map matching (used by the build with OSM).

Pose-only dead ends (:func:`city360.pose_graph.dead_ends.find_dead_ends`) are judged by
straight-line distances, which the GPS error of a smoothed track end (up to 6-8 m to the side
of its street) is as large as. With the walk matched to OSM streets
(:mod:`city360.pose_graph.map_match`) the distance that matters is *along* the street:

- **Belongs to a junction.** A video end, start or turn-back whose matched position lies
  within ``clearance_m`` along its street from a junction's OSM node belongs to that junction,
  however far to the side the smoothed pose stands, when the track comes within the cut
  radius of the junction close by (so that its cut there stands for the end). (A wander
  video that ended at a crossing was smoothed to a point 5 m along the street and 6.4 m
  beside it, 8.1 m from the node: its dead end cut a pass of that street 8 m from the
  junction and split the street there.)
- **Spurs.** A track that walks from a junction's node into one OSM street and back (one run of
  poses matched to that street, entering and leaving at the same end, :class:`Spur`) walked a
  spur, and its apex is a dead end even when it is nearer the junction than ``clearance_m``:
  smoothing cuts the U-turn at the end of a 9-12 m stub to 6-7 m, and the pose-only rule gave
  that apex to the junction, which then had no third arm. A U-turn at a street's far node
  that the matching gave to the streets beyond it is part of the out-and-back (the apex is
  then a dead end unless a junction stands at that node). Out-and-backs reaching less than
  :data:`SPUR_MIN_M` are not spurs (a step off the corner, GPS wander), and neither is a walk
  along a street to the junction at its other end and back (that junction's cut stands for
  the apex).
- **One dead end per street end.** Dead-end candidates within ``merge_m`` are one dead end
  when they lie on one street or on streets meeting where no junction is (a video ending
  where the next starts); on two streets that leave one junction (two stubs 6 m apart) or do
  not meet at all (two parallel streets a crop cuts 7.5 m apart) they are two. Candidates on
  short streets inside one place (two 6 m stubs either side of a T, 8.4 m apart) are one
  however far apart.

A dead end on a mapped street is where another video starts, stops or turns back in the middle
of that street: every pass of the street must be cut there (else the street is split into two
that end at different nodes and the dead end becomes a three-way "junction"). The cut filter
knows from the matching which frames walk the street, so the build lets those frames be cut
within the full junction cut radius (:func:`dead_end_pass_radius`), not only the pose-only
4 m.

Positions are metres in the city CRS; distances along a street are metres from one of its
end nodes, measured on its OSM polyline.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from city360.pose_graph.dead_ends import DeadEndEvent, group_dead_ends
from city360.pose_graph.osm_match import SHORT_STREET_M, OsmStreets, node_groups
from city360.pose_graph.segments import CutFilter, Segment
from city360.pose_graph.tracks import Track

__all__ = [
    "PLACE_NODES",
    "SPUR_MIN_M",
    "MatchedCuts",
    "Spur",
    "along_street_m",
    "along_street_passes",
    "dead_end_pass_radius",
    "find_spurs",
    "place_dead_ends",
    "spurs_into_stubs",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

SPUR_MIN_M = 5.0
"""Shortest out-and-back along one street (metres from the node it leaves) that is a spur.
Smoothing cuts the U-turn at the end of a stub by 3-5 m (a 9.3 m stub reached 6.8 m, 10.9 m
reached 6.7 m, 11.9 m reached 7.1 m in the Helsinki and old-town twins), and streets under
8 m are no streets to the scorer; the same floor as the pose-only ``spur_min_m``."""

STUB_SPUR_MIN_M = 4.0
"""The same floor for an out-and-back into a mapped dead-end street (its far end node has no
other street) no longer than :data:`STUB_MAX_M`: the walker cannot have gone on, so a U-turn
there is its end. Smoothing left the tip of an 8.4 m Helsinki stub 4.4-4.9 m from its node
(two wander rows), and :data:`SPUR_MIN_M` lost that junction's third arm; into a longer
street a tip at 4.8 m was a walker turning back after 6 m (no street to the scorer)."""
ROOTED_STUB_SPUR_MIN_M = 3.0
"""The floor for an out-and-back into such a stub, matched to streets through its root just
before and just after (:func:`_stub_root`), that went in and came back out there
(:func:`_went_in_and_back`): smoothing cut a phone walker's U-turn at the tip of Kamppi's
8.4 m stub to 3.5-3.6 m (unseen window, coverage and wander seed 40), and the junction lost
its third arm. Under :data:`STUB_SPUR_MIN_M` the run's own poses must also enter and leave at
the root (a walk whose way back the matching gave to the street beside stays no spur)."""
STUB_MAX_M = 12.0
"""Longest mapped dead-end street :data:`STUB_SPUR_MIN_M` applies to, metres."""
PLACE_NODES = True
"""A junction stands for every OSM node of the place (``osm_match.node_groups``: nodes joined
by streets under ``SHORT_STREET_M``) of a node of three or more streets within ``merge_m`` of
it, not only for the nodes within ``merge_m``: the cut filter's gate
(``osm_match.PLACE_GATE``) lets the junction cut the streets of every node of that place, so
a spur into a street from such a node farther than ``merge_m`` out must get its dead end, or
its way out and back is cut at the junction twice and becomes a street from the junction to
itself. Kaisaniemi wander+stops 2 with OSM: walk_007 turns back 25 m into the 71.5 m path
173248856-1514631272 from 1514631272 (-32.1, -127.5), a node of the theatre lanes' knot 9.6 m
from the junction standing for it (-23.9, -132.5); a loop street 49-62 m long, which the
scorer credited as the knot's 11.2 m lane (issue 17, round thirty-three, branch kosm33; the
other half of loop30's disagreement). False: the nodes within ``merge_m`` only."""


@dataclass(frozen=True, slots=True)
class Spur:
    """Track ``track`` walks from OSM node ``node`` into street ``edge`` and back: frames
    ``first``..``last`` are matched to the street, ``apex`` is the frame farthest along it,
    ``reach_m`` metres from the node."""

    track: int
    edge: int
    node: int
    first: int
    apex: int
    last: int
    reach_m: float


def along_street_m(osm: OsmStreets, track: Track, matched: IntArray) -> FloatArray:
    """Per pose, metres along its matched street from the street's first end node
    (``osm.edge_nodes[e, 0]``); NaN where the pose is off the mapped streets."""
    import shapely

    along = np.full(len(track), np.nan)
    rows = np.flatnonzero(matched >= 0)
    if rows.size == 0:
        return along
    lines = np.asarray(shapely.linestrings(osm.samples_xy, indices=osm.sample_edge))
    edges = matched[rows]
    points = shapely.points(track.xy[rows, 0], track.xy[rows, 1])
    s = shapely.line_locate_point(lines[edges], points)
    # the samples run from one end node to the other; which one is not promised
    first_sample = np.searchsorted(osm.sample_edge, edges)
    start = osm.samples_xy[first_sample]
    from_u = np.hypot(*(start - osm.node_xy[osm.edge_nodes[edges, 0]]).T)
    from_v = np.hypot(*(start - osm.node_xy[osm.edge_nodes[edges, 1]]).T)
    along[rows] = np.where(from_u <= from_v, s, osm.edge_length_m[edges] - s)
    return along


def find_spurs(osm: OsmStreets, tracks: Sequence[Track], matches: Sequence[IntArray]) -> list[Spur]:
    """Every out-and-back of a track along one OSM street reaching :data:`SPUR_MIN_M` from
    the node it leaves: a run of poses matched to one street, not at the track's start or end
    unless the street is a mapped stub (a video that starts at a junction and steps 7 m into a
    9.3 m stub and back: Helsinki, unseen window), whose first and last poses lie nearer the
    same end node and within half the reach of it; or, into a mapped stub, a run between
    streets through its root whatever its end poses (:func:`_stub_root`), reaching
    :data:`STUB_SPUR_MIN_M`, or :data:`ROOTED_STUB_SPUR_MIN_M` when it went in and came back
    out at the root (:func:`_went_in_and_back`). A run that turned
    back at the street's far node (its U-turn matched to streets beyond, :func:`_turns_at_nodes`)
    came in by the near one and reached the far one: its end poses are judged against the
    street's length."""
    spurs: list[Spur] = []
    degree = osm.node_degree
    for t, (track, as_matched) in enumerate(zip(tracks, matches, strict=True)):
        if len(track) < 3:
            continue
        matched, turn_node = _turns_at_nodes(osm, track, as_matched)
        along = along_street_m(osm, track, matched)
        change = np.flatnonzero(np.diff(matched) != 0) + 1
        starts = np.concatenate([[0], change])
        stops = np.concatenate([change, [len(track)]]) - 1
        for first, last in zip(starts, stops, strict=True):
            edge = int(matched[first])
            if edge < 0 or last - first < 2:
                continue
            length = float(osm.edge_length_m[edge])
            s = along[first : last + 1]
            root = stub_root = _stub_root(osm, edge, matched, first, last)
            turned = turn_node[first : last + 1]
            turned = turned[turned >= 0]
            if turned.size:  # turned back at one end node, so it came in by the other
                root = int(osm.edge_nodes[edge, 0] == turned[0])
            end = root if root is not None else 0 if s[0] <= length - s[0] else 1
            if root is None and (s[-1] <= length - s[-1]) != (end == 0):
                continue  # walked the street through, end to end
            from_node = s if end == 0 else length - s
            reach = float(from_node.max())
            stub = length <= STUB_MAX_M and degree[osm.edge_nodes[edge, 1 - end]] == 1
            if (first == 0 or last == len(track) - 1) and not stub:
                continue  # a video's end: only a stub, where nobody goes on, says it came back
            floor = STUB_SPUR_MIN_M if stub else SPUR_MIN_M
            if stub_root is not None and _went_in_and_back(from_node):
                floor = ROOTED_STUB_SPUR_MIN_M
            # a run that turned back at the far node reached it, however the smoothing cut
            # its corners (Kaivokatu, seed 8: into the 9.2 m street at 4.1 m, apex at 7.0 m)
            span = length if turned.size else reach
            if reach < floor or (
                (root is None or turned.size) and max(from_node[0], from_node[-1]) > 0.5 * span
            ):
                continue
            spurs.append(
                Spur(
                    track=t,
                    edge=edge,
                    node=int(osm.edge_nodes[edge, end]),
                    first=int(first),
                    apex=int(first + np.argmax(from_node)),
                    last=int(last),
                    reach_m=reach,
                )
            )
    return spurs


def spurs_into_stubs(
    osm: OsmStreets,
    tracks: Sequence[Track],
    matches: Sequence[IntArray],
    spurs: Sequence[Spur],
    *,
    near_m: float,
) -> tuple[list[IntArray], list[Spur]]:
    """``matches`` and ``spurs`` with each spur along a street that goes on read as a walk
    into a mapped dead-end stub from the same node, when every pose of its out-and-back lies
    within ``near_m`` metres of the stub and it reached no farther than the stub is long: the
    walker went into the way that ends there rather than turning back a few metres along a
    path that goes on. The matching cannot tell them apart when GPS error is as large as the
    gap between the two ways, and prefers the street it came along (Kaisaniemi, coverage
    seed 1 with OSM: a walker went to the tip of the 11.6 m stub 173248856-... at
    (-103.5, -131.2), which runs 4 m beside the main path; the smoothed out-and-back reached
    6.3 m, 0.2-2.2 m from the path and 0.8-3.0 m from the stub, and was matched to the path,
    so the stub had no filmed arm and the junction was lost). The spur's frames are matched
    to the stub and its reach is measured along it."""
    import shapely

    ends = osm.edge_nodes
    degree = osm.node_degree
    stub = (osm.edge_length_m <= STUB_MAX_M) & (
        (degree[ends[:, 0]] == 1) != (degree[ends[:, 1]] == 1)
    )
    lines = np.asarray(shapely.linestrings(osm.samples_xy, indices=osm.sample_edge))
    new_matches = [np.array(m, copy=True) for m in matches]
    new_spurs: list[Spur] = []
    for spur in spurs:
        goes_on = not stub[spur.edge]
        at_node = np.flatnonzero(stub & (ends == spur.node).any(axis=1))
        root = ends[at_node, 0] == spur.node
        # the stub's root is the spur's node, its tip the node of one street
        at_node = at_node[degree[np.where(root, ends[at_node, 1], ends[at_node, 0])] == 1]
        xy = tracks[spur.track].xy[spur.first : spur.last + 1]
        points = shapely.points(xy[:, 0], xy[:, 1])
        into = [
            int(e)
            for e in at_node
            if e != spur.edge
            and spur.reach_m <= float(osm.edge_length_m[e])
            and float(shapely.distance(lines[e], points).max()) <= near_m
        ]
        if not goes_on or not into:
            new_spurs.append(spur)
            continue
        edge = min(into, key=lambda e: float(shapely.distance(lines[e], points).mean()))
        new_matches[spur.track][spur.first : spur.last + 1] = edge
        along = along_street_m(osm, tracks[spur.track], new_matches[spur.track])
        run = along[spur.first : spur.last + 1]
        from_node = run if ends[edge, 0] == spur.node else osm.edge_length_m[edge] - run
        new_spurs.append(
            Spur(
                track=spur.track,
                edge=edge,
                node=spur.node,
                first=spur.first,
                apex=int(spur.first + np.argmax(from_node)),
                last=spur.last,
                reach_m=float(from_node.max()),
            )
        )
    return new_matches, new_spurs


def _went_in_and_back(from_node: FloatArray) -> bool:
    """Whether a run of poses ``from_node`` metres along its street from the node it entered
    by (one value a pose) walked into the street and back out as its poses say, not only as
    :func:`_stub_root` reads it: its first and last poses lie within half its reach of the
    node."""
    reach = float(from_node.max())
    return reach > 0.0 and max(from_node[0], from_node[-1]) <= 0.5 * reach


def _turns_at_nodes(osm: OsmStreets, track: Track, matched: IntArray) -> tuple[IntArray, IntArray]:
    """``matched`` with each turn-back at a street's end node read as the street's, and per
    pose the OSM node it turned back at (-1 elsewhere). A turn-back at a node is a run of poses
    matched to other streets leaving the node, each less than :data:`SPUR_MIN_M` along its
    street from it, between a run matched to the street that walks toward the node and one
    that walks away from it. The matching clamps the poses of a U-turn at a node onto
    whichever street leaves it beyond (the HMM clamps projections to street ends), and a
    walk that short into a street is no spur of its own. Read as matched,
    the way to the node and the way back were two walks along the street end to end, so no
    spur was found: a walker turning back where two unfilmed streets leave the end of a
    9.2 m street lost both that dead end and the junction at the street's other end
    (Helsinki, Kaivokatu, wander seeds 0, 2 and 8 with OSM)."""
    change = np.flatnonzero(np.diff(matched) != 0) + 1
    starts = np.concatenate([[0], change])
    stops = np.concatenate([change, [len(matched)]])
    edges = matched[starts]
    bridged = matched.copy()
    turn_node = np.full(len(matched), -1, dtype=np.int64)
    along = along_street_m(osm, track, matched)
    for k in range(1, len(starts) - 1):
        edge = int(edges[k - 1])
        back = np.flatnonzero(edges[k + 1 :] == edge)
        if edge < 0 or back.size == 0:
            continue
        after = k + 1 + int(back[0])  # the run walking the street back
        others = edges[k:after]
        if (others < 0).any():
            continue
        lo, hi = int(starts[k - 1]), int(stops[after])  # the way in, the turn, the way back
        between = slice(int(starts[k]), int(stops[after - 1]))
        for node in osm.edge_nodes[edge]:
            if not all(node in osm.edge_nodes[int(e)] for e in others):
                continue
            # metres along each pose's street from ``node``, over the poses from lo to hi
            runs, runs_along = matched[lo:hi], along[lo:hi]
            from_node = np.where(
                osm.edge_nodes[runs, 0] == node, runs_along, osm.edge_length_m[runs] - runs_along
            )
            way_in = from_node[: int(starts[k]) - lo]
            way_back = from_node[int(starts[after]) - lo :]
            turn = from_node[between.start - lo : between.stop - lo]
            # toward the node and away from it again, not a U-turn short of it matched to a
            # street leaving it (into a 9.7 m stub and back from 5 m, the turn matched to a
            # second stub from the stub's root: Helsinki, wander seed 0)
            comes_back = way_in[-1] < way_in[0] and way_back[0] < way_back[-1]
            if comes_back and (turn < SPUR_MIN_M).all():
                bridged[between] = edge
                turn_node[between] = node
                break
    return bridged, turn_node


def _stub_root(osm: OsmStreets, edge: int, matched: IntArray, first: int, last: int) -> int | None:
    """Which end (0 or 1) of ``edge`` a run of poses ``first``..``last`` matched to it came in
    by and went out by, when the street says so whatever the poses do: ``edge`` is a mapped
    dead-end stub (at most :data:`STUB_MAX_M`, its far node has no other street) and the
    track is matched to a street through its root node just before the run and just after.
    Nobody leaves a stub by its tip, so the walk went in and came back out at the root, even
    when the matching gave the way in, or the way back, to the street the track came along or
    left by (the HMM clamps a pose beyond a street's end onto that end): a walker 7.4 m into
    an 8.4 m stub was matched to the stub only on the way in and left it, as matched, 5.6 m
    from its root (Kamppi, unseen window); else None."""
    if first == 0 or last == len(matched) - 1:
        return None
    if float(osm.edge_length_m[edge]) > STUB_MAX_M:
        return None
    ends = osm.edge_nodes[edge]
    degree = osm.node_degree
    if (degree[ends[0]] == 1) == (degree[ends[1]] == 1):
        return None
    root = 0 if degree[ends[1]] == 1 else 1
    before, after = int(matched[first - 1]), int(matched[last + 1])
    if before < 0 or after < 0:
        return None
    node = ends[root]
    if node in osm.edge_nodes[before] and node in osm.edge_nodes[after]:
        return root
    return None


def _off_the_junctions_streets(
    osm: OsmStreets,
    xy: FloatArray,
    edge: int,
    junctions_xy: FloatArray,
    clearance_m: float,
    reach_m: float,
) -> bool:
    """Whether a video end at ``xy`` (m), matched to street ``edge``, lies within
    ``clearance_m`` of junctions (so the pose-only rule gave it to them and made no dead end)
    none of which can cut it: each stands for OSM nodes (within ``reach_m``; those where three
    or more streets meet, when there are such) and ``edge`` ends at none of them, so the cut
    filter (:func:`~city360.pose_graph.osm_match.matched_cut_filter`) lets no frame of that
    street be cut there. Such an end is a dead end of its own street, else the piece of video
    from it to the next cut has no node to start from and is lost (Kamppi, unseen window,
    one-way seed 7: a video starting 6 m from a junction, on the street beyond a 10 m link
    from it, lost its first 207 m)."""
    if not len(junctions_xy):
        return False
    close = np.flatnonzero(np.hypot(*(junctions_xy - xy).T) <= clearance_m)
    if close.size == 0:
        return False
    degree = osm.node_degree
    tree = cKDTree(osm.node_xy)
    for k in close:
        nodes = tree.query_ball_point(junctions_xy[k], reach_m)
        if not nodes:
            return False  # a junction OSM lacks takes any frame
        branching = [n for n in nodes if degree[n] >= 3] or nodes
        if np.isin(osm.edge_nodes[edge], branching).any():
            return False
    return True


def _junction_nodes(
    osm: OsmStreets, junctions_xy: FloatArray, reach_m: float
) -> npt.NDArray[np.bool_]:
    """Which OSM nodes a junction stands for: those within ``reach_m`` of one."""
    marked = np.zeros(len(osm.node_xy), dtype=bool)
    if len(junctions_xy):
        for nodes in cKDTree(osm.node_xy).query_ball_point(junctions_xy, reach_m):
            marked[nodes] = True
    return marked


def _place_nodes(osm: OsmStreets, marked: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """``marked`` (a flag per OSM node) and every node of the place (:func:`node_groups`) of
    a marked node of three or more streets."""
    place = node_groups(osm)
    return marked | np.isin(place, place[marked & (osm.node_degree >= 3)])


def place_dead_ends(
    osm: OsmStreets,
    tracks: Sequence[Track],
    matches: Sequence[IntArray],
    spurs: Sequence[Spur],
    junctions_xy: FloatArray,
    events: Sequence[Sequence[DeadEndEvent]],
    *,
    clearance_m: float,
    merge_m: float,
    cut_radius_m: float,
) -> tuple[FloatArray, list[list[DeadEndEvent]]]:
    """Dead-end nodes (D, 2) and the frames ending at each, from the pose-only dead ends
    ``events`` (grouped as :func:`~city360.pose_graph.dead_ends.find_dead_ends` gives them) and
    the ``spurs``, following the rules of the module docstring (``clearance_m``: along-street
    distance within which an end belongs to a junction, when the track comes within
    ``cut_radius_m`` of that junction close by, so that it is cut there; ``merge_m``:
    candidates of one street end closer than this are one)."""
    junctions_xy = np.asarray(junctions_xy, dtype=np.float64).reshape(-1, 2)
    at_junction = _junction_nodes(osm, junctions_xy, merge_m)
    ends = osm.edge_nodes
    junction_tree = cKDTree(junctions_xy) if len(junctions_xy) else None

    def at_far_junction(spur: Spur) -> bool:
        """The spur walked its street to the junction at the other end and back."""
        far = ends[spur.edge, 1] if ends[spur.edge, 0] == spur.node else ends[spur.edge, 0]
        short = float(osm.edge_length_m[spur.edge]) - spur.reach_m <= clearance_m
        return bool(at_junction[far] and short) and _cut_nearby(
            tracks[spur.track],
            spur.apex,
            junction_tree,
            reach_m=cut_radius_m,
            arc_m=clearance_m + cut_radius_m,
        )

    degree = osm.node_degree
    stub = (
        (osm.edge_length_m <= STUB_MAX_M)
        & (osm.edge_length_m >= SHORT_STREET_M)
        & ((degree[ends[:, 0]] == 1) != (degree[ends[:, 1]] == 1))
    )

    def at_stub_tip(edge: int, from_end: FloatArray) -> npt.NDArray[np.bool_]:
        """Per end of ``edge``: whether a candidate ``from_end`` metres from each end lies at
        the tip of a mapped dead-end stub (:data:`STUB_MAX_M`) rather than at that end, its
        root: nearer the tip, and :data:`STUB_SPUR_MIN_M` along. The walker cannot have gone
        on, so a video ending there ends the stub (a video ending at the tip of a 9.3 m stub
        was smoothed to 7.5-8 m along it, inside the junction's clearance: Helsinki, unseen
        window, the junction lost its third arm)."""
        if not stub[edge]:
            return np.zeros(2, dtype=bool)
        root = 0 if degree[ends[edge, 1]] == 1 else 1
        tip = (from_end[root] > from_end[1 - root]) & (from_end[root] >= STUB_SPUR_MIN_M)
        return np.array([tip if end == root else False for end in (0, 1)])

    spurs_root = _place_nodes(osm, at_junction) if PLACE_NODES else at_junction
    spur_events = [
        (s, DeadEndEvent(s.track, s.apex, *map(float, tracks[s.track].xy[s.apex])))
        for s in spurs
        if spurs_root[s.node] and not at_far_junction(s)
    ]
    kept: list[DeadEndEvent] = []
    along_cache: dict[int, FloatArray] = {}
    for event in (e for group in events for e in group):
        edge = int(matches[event.track][event.frame])
        if edge >= 0:
            if event.track not in along_cache:
                along_cache[event.track] = along_street_m(
                    osm, tracks[event.track], matches[event.track]
                )
            s = float(along_cache[event.track][event.frame])
            from_end = np.array([s, osm.edge_length_m[edge] - s])
            near = (
                at_junction[ends[edge]] & (from_end <= clearance_m) & ~at_stub_tip(edge, from_end)
            )
            if near.any() and _cut_nearby(
                tracks[event.track],
                event.frame,
                junction_tree,
                reach_m=cut_radius_m,
                arc_m=clearance_m + cut_radius_m,
            ):
                continue  # ends at the junction, whatever the GPS says to the side
        kept.append(event)
    # a video ending at a stub's tip within the pose-only clearance of the junction (as the
    # crow flies) has no event yet, nor one ending on a street that junction cannot cut
    listed = {(e.track, e.frame) for group in events for e in group}
    listed |= {(e.track, e.frame) for e in kept}
    for t, track in enumerate(tracks):
        for f in sorted({0, len(track) - 1}):
            edge = int(matches[t][f])
            if (t, f) in listed or edge < 0:
                continue
            if _off_the_junctions_streets(
                osm, track.xy[f], edge, junctions_xy, clearance_m, merge_m
            ):
                kept.append(DeadEndEvent(t, f, *map(float, track.xy[f])))
                continue
            if not stub[edge]:
                continue
            if t not in along_cache:
                along_cache[t] = along_street_m(osm, track, matches[t])
            s = float(along_cache[t][f])
            tip = at_stub_tip(edge, np.array([s, osm.edge_length_m[edge] - s]))
            if (tip & at_junction[ends[edge]]).any():
                kept.append(DeadEndEvent(t, f, *map(float, track.xy[f])))
    # a spur's own U-turn, where the pose-only rule found it, is its apex
    apex_arc = [(s.track, float(tracks[s.track].arc_m[s.apex])) for s, _ in spur_events]
    kept = [
        e
        for e in kept
        if not any(
            t == e.track and abs(float(tracks[t].arc_m[e.frame]) - arc) < merge_m
            for t, arc in apex_arc
        )
    ]
    kept = [
        e
        for e in kept
        if not _turns_in_place(osm, at_junction, tracks[e.track], matches[e.track], e.frame)
    ]
    kept += [event for _, event in spur_events]
    if not kept:
        return np.zeros((0, 2)), []
    edge_of = np.array([matches[e.track][e.frame] for e in kept], dtype=np.int64)
    points = np.array([[e.x_m, e.y_m] for e in kept])
    pairs = _close_pairs(osm, points, edge_of, merge_m)
    if pairs.size:
        pairs = pairs[_one_street_end(osm, at_junction, edge_of[pairs[:, 0]], edge_of[pairs[:, 1]])]
    pairs = np.concatenate([pairs.reshape(-1, 2), _same_place(osm, edge_of)])
    return group_dead_ends(kept, points, pairs)


def _inner_streets(osm: OsmStreets) -> tuple[IntArray, npt.NDArray[np.bool_]]:
    """The place label of each node (:func:`~city360.pose_graph.osm_match.node_groups`) and
    which streets lie inside one place (shorter than ``SHORT_STREET_M``, both ends in it)."""
    from city360.pose_graph.osm_match import node_groups

    group = node_groups(osm)
    return group, group[osm.edge_nodes[:, 0]] == group[osm.edge_nodes[:, 1]]


def _close_pairs(
    osm: OsmStreets, points: FloatArray, edge_of: IntArray, merge_m: float
) -> IntArray:
    """Pairs (P, 2) of dead-end candidates within ``merge_m`` of each other, a candidate on a
    street inside one place standing anywhere in that place: a street under 8 m is part of
    its place to a camera and to the scorer, so a video that starts at the tip of a 6.3 m stub
    and one that ends at the stub's root, 9.7 m apart as smoothed (one-way trails, Nerima),
    end the same street at the same place."""
    group, inner = _inner_streets(osm)
    xy, owner = [points], [np.arange(len(points))]
    for i in np.flatnonzero((edge_of >= 0) & inner[np.maximum(edge_of, 0)]):
        members = np.flatnonzero(group == group[osm.edge_nodes[edge_of[i], 0]])
        xy.append(osm.node_xy[members])
        owner.append(np.full(len(members), i))
    who = np.concatenate(owner)
    found = cKDTree(np.concatenate(xy)).query_pairs(merge_m, output_type="ndarray")
    pairs = np.sort(who[found.reshape(-1, 2)], axis=1)
    return np.unique(pairs[pairs[:, 0] != pairs[:, 1]], axis=0).reshape(-1, 2)


def _turns_in_place(
    osm: OsmStreets,
    at_junction: npt.NDArray[np.bool_],
    track: Track,
    matched: IntArray,
    frame: int,
) -> bool:
    """Whether ``track``'s turn-back at ``frame`` is a turn at a place no junction stands for:
    the frame is matched to a street inside the place (a stub under 8 m) and the track comes
    to the place along one street and leaves it along another, each within twice
    ``SHORT_STREET_M`` of travel of the frame (up the stub and back). Camera GPS at a stop on a
    corner ran 6 m up a 5.8 m stub and back before the walk turned the corner (Nerima, wander
    with stops): as a dead end it cut the corner's passes and, with a turn-back along the next
    street, made a three-way "junction" of a bend."""
    if frame in (0, len(matched) - 1) or matched[frame] < 0:
        return False
    group, inner = _inner_streets(osm)
    edge = int(matched[frame])
    place = group[osm.edge_nodes[edge, 0]]
    if not inner[edge] or at_junction[group == place].any():
        return False

    def street_beyond(frames: IntArray) -> int:
        for f in frames:
            e = int(matched[f])
            if e >= 0 and not (inner[e] and group[osm.edge_nodes[e, 0]] == place):
                return e if (group[osm.edge_nodes[e]] == place).any() else -1
        return -1

    lo, hi = np.searchsorted(
        track.arc_m,
        [track.arc_m[frame] - 2 * SHORT_STREET_M, track.arc_m[frame] + 2 * SHORT_STREET_M],
    )
    before = street_beyond(np.arange(frame - 1, lo - 1, -1))
    after = street_beyond(np.arange(frame + 1, min(hi, len(matched))))
    return before >= 0 and after >= 0 and before != after


def _same_place(osm: OsmStreets, edge_of: IntArray) -> IntArray:
    """Pairs (P, 2) of candidates on streets inside one place (OSM streets shorter than
    ``SHORT_STREET_M`` joining nodes of one place), however far apart: the U-turns into two
    stubs of 6 m either side of a T are one end of the filmed street to a camera (old-town
    twin: 8.4 m apart, one street end in the truth)."""
    from city360.pose_graph.osm_match import node_groups

    group = node_groups(osm)
    on = edge_of >= 0
    ends = group[osm.edge_nodes[np.maximum(edge_of, 0)]]
    place = np.where(on & (ends[:, 0] == ends[:, 1]), ends[:, 0], -1)
    pairs = [
        (int(i), int(j))
        for label in np.unique(place[place >= 0])
        for i, j in itertools.pairwise(np.flatnonzero(place == label))
    ]
    return np.asarray(pairs, dtype=np.int64).reshape(-1, 2)


def _cut_nearby(
    track: Track, frame: int, junctions: cKDTree | None, *, reach_m: float, arc_m: float
) -> bool:
    """Whether ``track`` comes within ``reach_m`` of a junction within ``arc_m`` of travel of
    ``frame``: a video end that the junction's cut stands for. (An end smoothed 12 m to the
    side of its street, 6 m along it from a junction it never comes within 8 m of, is no
    such end: dropping it lost the street it ended.)"""
    if junctions is None:
        return False
    arc = track.arc_m
    lo, hi = np.searchsorted(arc, [arc[frame] - arc_m, arc[frame] + arc_m])
    dist, _ = junctions.query(track.xy[lo : max(hi, lo + 1)], distance_upper_bound=reach_m)
    return bool(np.isfinite(dist).any())


def _one_street_end(
    osm: OsmStreets, at_junction: npt.NDArray[np.bool_], a: IntArray, b: IntArray
) -> npt.NDArray[np.bool_]:
    """Whether dead-end candidates on streets ``a`` and ``b`` (-1: off the mapped streets) may
    be one dead end: the same street, or streets that meet at a place (OSM nodes joined by
    streets under ``SHORT_STREET_M``, as for junction candidates) no junction stands for (a
    video that ends where the next starts, at a corner whose other streets nobody filmed, ends
    on one street and starts on the other), or either off the map. Ends of two streets leaving
    one junction, and of two streets that do not meet (parallel streets a crop cuts 12 m
    apart: one node fused them into one street), stay apart however close."""
    from city360.pose_graph.osm_match import node_groups

    group = node_groups(osm)
    junction_place = np.zeros(int(group.max()) + 1, dtype=bool)
    junction_place[group[at_junction]] = True
    ga, gb = group[osm.edge_nodes[np.maximum(a, 0)]], group[osm.edge_nodes[np.maximum(b, 0)]]
    shared = (ga[:, :, None] == gb[:, None, :]) & ~junction_place[ga][:, :, None]
    return (a < 0) | (b < 0) | (a == b) | shared.any(axis=(1, 2))


def dead_end_pass_radius(
    matches: Sequence[IntArray],
    dead_ends: Sequence[Sequence[DeadEndEvent]],
    *,
    mapped_m: float,
    unmapped_m: float,
) -> FloatArray:
    """Per dead end, how close a pass must come to be cut there: ``mapped_m`` when every video
    ending there walks a mapped street (the cut filter then admits only frames walking that
    street or its continuation), else the pose-only ``unmapped_m``."""
    radius = np.full(len(dead_ends), unmapped_m)
    for k, group in enumerate(dead_ends):
        if group and all(matches[e.track][e.frame] >= 0 for e in group):
            radius[k] = mapped_m
    return radius


def along_street_passes(
    osm: OsmStreets,
    tracks: Sequence[Track],
    matches: Sequence[IntArray],
    dead_ends: Sequence[Sequence[DeadEndEvent]],
    *,
    own_m: float,
) -> dict[int, list[tuple[int, int]]]:
    """Per track, ``(frame, dead end index)`` where it walks past a dead end in the middle of
    a mapped street: the dead end's frames all walk one OSM street, and the track, walking
    that street, crosses the dead end's place along it (the median of its frames' positions
    along the street), however far to the side: the cut radius measures the smoothed pose's
    distance, and two passes of one street may run 8 m apart (Helsinki wander+stops seed 1: a
    walker pacing a 150 m street turned back 59 m and 47 m from its junction; the pass 8.5 m
    beside the first turn-back was not cut there, so it and the passes that were made two
    streets between the turn-backs, and the second a three-way node). Crossings within
    ``own_m`` of travel of one of the dead end's own frames are that visit, not a pass."""
    passes: dict[int, list[tuple[int, int]]] = {}
    along: dict[int, FloatArray] = {}

    def along_of(t: int) -> FloatArray:
        if t not in along:
            along[t] = along_street_m(osm, tracks[t], matches[t])
        return along[t]

    for k, group in enumerate(dead_ends):
        edges = {int(matches[e.track][e.frame]) for e in group}
        if len(edges) != 1 or min(edges) < 0:
            continue  # unmapped, or where streets meet: the cut radius decides
        edge = edges.pop()
        place = float(np.median([along_of(e.track)[e.frame] for e in group]))
        for t, matched in enumerate(matches):
            on = matched == edge
            if not on[:-1].any():
                continue
            offset = along_of(t) - place
            crossing = np.flatnonzero(on[:-1] & on[1:] & (offset[:-1] * offset[1:] <= 0))
            arc = tracks[t].arc_m
            own = [float(arc[e.frame]) for e in group if e.track == t]
            for i in crossing:
                frame = int(i if abs(offset[i]) <= abs(offset[i + 1]) else i + 1)
                if any(abs(float(arc[frame]) - a) < own_m for a in own):
                    continue
                passes.setdefault(t, []).append((frame, k))
    return passes


@dataclass(frozen=True, slots=True)
class MatchedCuts:
    """The map matching as every cut of a build with OSM uses it: ``matches`` per track
    (:func:`~city360.pose_graph.osm_match.match_tracks`), ``spurs`` (:func:`find_spurs`), and
    the build's radii (metres): ``clearance_m`` and ``merge_m`` for :func:`place_dead_ends`,
    ``cut_radius_m`` for passes of mapped dead ends and ``unmapped_pass_m`` for the others;
    ``through_place``: :func:`~city360.pose_graph.osm_match.through_junction_passes` reads a
    junction's place (its ``by_place``)."""

    osm: OsmStreets
    tracks: Sequence[Track]
    matches: Sequence[IntArray]
    spurs: Sequence[Spur]
    clearance_m: float
    merge_m: float
    cut_radius_m: float
    unmapped_pass_m: float
    through_place: bool = False

    def dead_ends(
        self, junctions_xy: FloatArray, events: Sequence[Sequence[DeadEndEvent]]
    ) -> tuple[FloatArray, list[list[DeadEndEvent]], FloatArray, CutFilter]:
        """From the pose-only dead ends ``events``: the dead-end nodes, their frames, how
        close a pass must come to each to be cut there, and the cut filter
        (:func:`~city360.pose_graph.osm_match.matched_cut_filter`) for ``junctions_xy`` and
        these dead ends."""
        from city360.pose_graph.osm_match import matched_cut_filter

        dead_xy, placed = place_dead_ends(
            self.osm,
            self.tracks,
            self.matches,
            self.spurs,
            junctions_xy,
            events,
            clearance_m=self.clearance_m,
            merge_m=self.merge_m,
            cut_radius_m=self.cut_radius_m,
        )
        radius = dead_end_pass_radius(
            self.matches, placed, mapped_m=self.cut_radius_m, unmapped_m=self.unmapped_pass_m
        )
        may_cut = matched_cut_filter(
            self.osm, self.matches, junctions_xy, placed, reach_m=self.merge_m
        )
        return dead_xy, placed, radius, may_cut

    def passes(
        self, dead_ends: Sequence[Sequence[DeadEndEvent]]
    ) -> dict[int, list[tuple[int, int]]]:
        """Where each track walks past a mapped dead end along its street
        (:func:`along_street_passes`), for :func:`~city360.pose_graph.segments.cut_tracks`."""
        return along_street_passes(
            self.osm, self.tracks, self.matches, dead_ends, own_m=self.merge_m
        )

    def junction_passes(
        self,
        junctions_xy: FloatArray,
        *,
        pass_m: float,
        dead_ends: Sequence[Sequence[DeadEndEvent]] = (),
    ) -> dict[int, list[tuple[int, int]]]:
        """Where each track is matched through a junction it passes beyond the cut radius,
        within ``pass_m`` (:func:`~city360.pose_graph.osm_match.through_junction_passes`;
        ``dead_ends`` as :meth:`dead_ends` placed them)."""
        from city360.pose_graph.osm_match import through_junction_passes

        return through_junction_passes(
            self.osm,
            self.tracks,
            self.matches,
            junctions_xy,
            reach_m=self.merge_m,
            cut_radius_m=self.cut_radius_m,
            pass_m=pass_m,
            by_place=self.through_place,
            dead_ends=dead_ends,
        )

    def _top_street(self, segment: Segment) -> tuple[int, int, int]:
        """(street, its frames, all frames) for the OSM street more of ``segment``'s frames
        walk than any other (ties: the lowest id); street -1 when no frame is matched."""
        matched = self.matches[segment.track][segment.first_frame : segment.last_frame + 1]
        values, counts = np.unique(matched[matched >= 0], return_counts=True)
        if values.size == 0:
            return -1, 0, int(matched.size)
        best = int(np.argmax(counts))
        return int(values[best]), int(counts[best]), int(matched.size)

    def mapped_street(self, segment: Segment) -> int:
        """The OSM street most of ``segment``'s frames walk (more than half of them), else -1
        (for :func:`~city360.pose_graph.segments.group_streets`)."""
        street, walked, frames = self._top_street(segment)
        return street if 2 * walked > frames else -1

    def most_walked_street(self, segment: Segment) -> int:
        """The OSM street more of ``segment``'s frames walk than any other (ties: the lowest
        id), else -1 (no frame matched). A pass round a bend of two short ways walks
        neither for more than half its frames (:meth:`mapped_street` says -1): the Erottaja
        knot's bend, 9 of 20 frames on one way, 5 on the other
        (:attr:`~city360.pose_graph.segments.SegmentParams.part_mapped_meet_m`)."""
        return self._top_street(segment)[0]

    def mapped_gap_m(self, first: Segment, second: Segment, *, share: float | None = None) -> float:
        """How far apart the mapped streets of two segments run (metres, OSM geometry): the
        largest distance from the stretch of either's mapped street (:meth:`mapped_street`)
        that its matched poses walk to the other's whole mapped street. A small block's
        straight side and its side round the corner part 16 m (fresh Bulevardi's Erottaja
        knot); a footway and the cycleway beside it, or a way drawn twice, stay 4-7 m apart
        (fresh Kaisaniemi). For :attr:`~city360.pose_graph.segments.SegmentParams.
        mapped_apart_m`.

        ``share``: each segment's mapped streets are also every OSM street at least this share
        of its frames walk (:attr:`~city360.pose_graph.segments.SegmentParams.
        mapped_gap_share`): two passes of one line that OSM cuts in two at a node no pass
        turns at are each matched to both of its ways, and their top streets differ by a few
        frames."""
        pair = (first, second)
        streets = [self._mapped_streets(seg, share) for seg in pair]
        stretches = [
            _joined([self._walked_stretch(seg, street) for street in walked])
            for seg, walked in zip(pair, streets, strict=True)
        ]
        lines = [_joined([self._street_line(street) for street in walked]) for walked in streets]
        gap = 0.0
        for stretch, other in ((stretches[0], lines[1]), (stretches[1], lines[0])):
            if len(stretch) and len(other):
                gap = max(gap, float(cKDTree(other).query(stretch)[0].max()))
        return gap

    def _mapped_streets(self, segment: Segment, share: float | None) -> list[int]:
        """``segment``'s mapped street (:meth:`mapped_street`; none when it is -1) and, with
        ``share``, every other OSM street at least that share of its frames walk."""
        street = self.mapped_street(segment)
        walked = [street] if street >= 0 else []
        if share is None:
            return walked
        matched = self.matches[segment.track][segment.first_frame : segment.last_frame + 1]
        values, counts = np.unique(matched[matched >= 0], return_counts=True)
        return walked + [
            int(value)
            for value, count in zip(values, counts, strict=True)
            if value != street and count >= share * matched.size
        ]

    def _street_line(self, street: int) -> FloatArray:
        """The samples of mapped street ``street`` (in order along it); empty for -1."""
        if street < 0:
            return np.empty((0, 2))
        return np.asarray(self.osm.samples_xy[self.osm.sample_edge == street])

    def _walked_stretch(self, segment: Segment, street: int | None = None) -> FloatArray:
        """The samples of ``segment``'s mapped street (or of ``street``) between the nearest
        ones to the first and last of its poses matched to it (a street may run on far beyond
        the segment)."""
        if street is None:
            street = self.mapped_street(segment)
        line = self._street_line(street)
        frames = slice(segment.first_frame, segment.last_frame + 1)
        poses = self.tracks[segment.track].xy[frames][self.matches[segment.track][frames] == street]
        if not len(line) or not len(poses):
            return line
        nearest = cKDTree(line).query(poses)[1]
        return line[int(nearest.min()) : int(nearest.max()) + 1]


def _joined(lines: Sequence[FloatArray]) -> FloatArray:
    """``lines`` ((N, 2) each) as one (M, 2) array of points; (0, 2) when there are none."""
    return np.concatenate([np.empty((0, 2)), *lines]).reshape(-1, 2)
