"""Map matching: the OSM street each pose of a trajectory walks, decided for the whole sequence.

A hidden-Markov model over OSM streets (the idea of Newson & Krumm 2009, "Hidden Markov map
matching through noise and sparseness"), solved exactly by Viterbi per trajectory. States at a
pose are the OSM streets within :data:`CANDIDATE_RADIUS_M` (found with a shapely ``STRtree``
``dwithin`` query, at most :data:`MAX_CANDIDATES`, nearest first) plus one *off-network* state
(a lane or square OSM does not map). Costs are negative log-likelihoods:

- emission: ``0.5 (d / POSITION_SIGMA_M)^2`` for distance ``d`` to the street, plus
  ``0.5 (a / HEADING_SIGMA_DEG)^2`` (capped at :data:`HEADING_COST_CAP`) for the axial angle
  ``a`` between the travel heading and the street there (a street can be walked either way; the
  cap lets a pose mid-turn at a corner match either street); the off-network state costs
  :data:`OFF_NETWORK_COST` (a street ~12 m away);
- transition: 0 along the same street; :data:`TURN_COST` onto a street sharing an end node, plus
  ``0.5 (max(0, r - TURN_REACH_M) / POSITION_SIGMA_M)^2`` for the pose's distance ``r`` to that
  node (a walker turns at the node, not halfway along the block); :data:`JUMP_COST` onto any
  other street; :data:`OFF_NETWORK_SWITCH_COST` into or out of the off-network state.

Per pose the nearest street can flicker between a street and a lane 8-12 m beside it, or
between the arms of a junction where the track cuts the corner; the sequence cannot, because
every switch must be paid for and is only cheap at a shared node. Poses are ~1 m apart, so
the gap between consecutive poses is not modelled (Newson & Krumm's route-length term matters
for sparse fixes). No maintained Python HMM map matcher fits: leuvenmapmatching (last release
2022) is pure Python per state and slow at city scale, and works on its own graph type; this
is ~100 lines of numpy on the arrays the build already holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from city360.pose_graph.tracks import Track

if TYPE_CHECKING:
    from city360.pose_graph.osm_match import OsmStreets

__all__ = [
    "CANDIDATE_RADIUS_M",
    "HEADING_SIGMA_DEG",
    "JUMP_COST",
    "MAX_CANDIDATES",
    "OFF_NETWORK_COST",
    "POSITION_SIGMA_M",
    "TURN_ALONG",
    "TURN_COST",
    "candidate_share",
    "viterbi_match",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

CANDIDATE_RADIUS_M = 15.0
"""Streets farther than this from a pose are not candidates for it."""
MAX_CANDIDATES = 8
"""Nearest candidate streets kept per pose."""
POSITION_SIGMA_M = 4.0
"""Standard deviation of a smoothed pose about its street's centre line (GPS error plus the
walker's offset from the centre line), metres."""
HEADING_SIGMA_DEG = 20.0
"""Standard deviation of the travel heading about the street's direction, degrees."""
HEADING_COST_CAP = 4.5
OFF_NETWORK_COST = 9.0
"""Emission cost of the off-network state: a pose is off the mapped streets when the nearest
street is more than ~12 m away (``0.5 * (12 / 4)^2 = 4.5``, times two for margin)."""
TURN_COST = 2.0
TURN_REACH_M = 8.0
JUMP_COST = 20.0
TURN_ALONG = True
"""A turn from one street onto another at their shared node also costs
``0.5 (max(0, s - TURN_REACH_M) / POSITION_SIGMA_M)^2`` for the route ``s`` between the two
poses through the node (metres along the first street from the previous pose's point on it to
the node, and along the second from the node to this pose's point): the route-length term of
Newson & Krumm, for a turn only. Without it a pose could switch to a street at a node 8 m
away at the point where that street, having looped round, passes 20 m along from the node
(Kaisaniemi, walk network: a square's outline passing 0.8 m from a junction it has no node
at, round thirty-one, branch kais31). Measured with OSM on 44 kept twins (the suite's
tokyo, Oakland, old town and Helsinki twins, Kaisaniemi and Bulevardi seeds 0-1; design notes,
round thirty-one): with :data:`~city360.pose_graph.osm_match.THROUGH_FILMED` 3 rows better
(this one: Kaisaniemi wander 1, R 0.968 -> 1.000; the suite's Helsinki wander+stops 1, P
0.984 -> 1.000), none worse in junction P, R or street F1.
False: the pose's straight-line distance to the node only."""
OFF_NETWORK_SWITCH_COST = 6.0
PLACE_TURNS = True
"""A move from one street onto another that leaves the other end of a street under
:data:`~city360.pose_graph.osm_match.SHORT_STREET_M` (8 m) within :data:`BESIDE_DEG` of the
first's heading from its end (two paths side by side, joined by a short link) costs as a turn
at a shared node, the link's straight length (metres) added to the route of
:data:`TURN_ALONG`, rather than :data:`JUMP_COST`; the first pose on the new street is then
given to the link (:func:`_walk_the_links`). Without it a walk that crosses a 5 m link
between two paths that run 3-4 m apart must pay two turns and a pose on the link (walked
across, so at a capped heading cost) and stays on the wrong path (Kaisaniemi one-way 5 and
7, walk network: a walk up a path 1.3 m off it, held on the path 3.7 m beside it; round
thirty-five, branch osmb35). Any two streets at a link's ends (no heading test) cost a row
of the held-out old town (wander 8, P 1.000 -> 0.900: walks cutting a knot's corners).
Landed off by the lead (round thirty-five): with the heading test, 2 of 166 kept rows
better with OSM (Kaisaniemi one-way 5 and 7 to target), none worse, but on its fresh input
(Kaisaniemi seed 8) wander 8's street F1 0.974 -> 0.966 (an extra street at the theatre knot
of ten nodes joined by 5-7 m lanes). On with :data:`PLACE_LINK_MAX_SHORT` (round
thirty-five, branch osmc35): with OSM, 129 rows (the 28 suite twins, the 36 fresh, the
held-out old town seeds 5-10, the held-out windows seeds 5-7, Kaisaniemi seed 8) 2 better
(one-way 5 and 7), none worse, wander 8 back to 0.974.
False: only streets sharing an end node turn into each other."""
BESIDE_DEG = 30.0
"""Largest angle between two streets' headings away from a short link's two ends (each over its
first 5 m) for :data:`PLACE_TURNS` to join them, degrees."""
PLACE_LINK_MAX_SHORT = 2
"""Most streets under :data:`~city360.pose_graph.osm_match.SHORT_STREET_M` (the link itself
included) at either end node of a short link for :data:`PLACE_TURNS` to move across it: a link
between two paths, not a lane of a knot of short lanes, where the walk already has a lane to
turn along and a move across would skip it (Kaisaniemi seed 8 wander, the theatre knot of ten
nodes joined by 5-7 m lanes: walk_003 stepped onto a long street for one pose at a lane's end
and moved across the lane beside it, an extra built street; round thirty-five, branch osmc35).
0: no limit."""


def viterbi_match(osm: OsmStreets, tracks: Sequence[Track]) -> list[IntArray]:
    """Per track, the OSM street index (into ``osm.edge_nodes``) each pose walks, -1 where it
    is off the mapped network: the most likely sequence under the model of the module
    docstring."""
    import shapely

    lines = _lines(osm)
    tree = shapely.STRtree(lines)
    return [_viterbi(osm, track, _candidates(osm, lines, tree, track)) for track in tracks]


def candidate_share(osm: OsmStreets, tracks: Sequence[Track]) -> float:
    """Share of all poses with a street within :data:`CANDIDATE_RADIUS_M`: no more than
    :func:`viterbi_match` can match (it matches a pose only to one of those streets), found
    with one tree query and no Viterbi (:func:`city360.pose_graph.osm_match.
    load_matching_streets` skips a network this bound already rules out)."""
    import shapely

    total = sum(len(t) for t in tracks)
    if total == 0:
        return 0.0
    tree = shapely.STRtree(_lines(osm))
    near = 0
    for track in tracks:
        points = shapely.points(track.xy[:, 0], track.xy[:, 1])
        pose, _ = tree.query(points, predicate="dwithin", distance=CANDIDATE_RADIUS_M)
        near += int(np.unique(pose).size)
    return near / total


def _lines(osm: OsmStreets) -> npt.NDArray[np.object_]:
    """The streets as shapely LineStrings, from their samples (which run along each street in
    order, at least two per street)."""
    import shapely

    return np.asarray(shapely.linestrings(osm.samples_xy, indices=osm.sample_edge))


def _candidates(
    osm: OsmStreets, lines: npt.NDArray[np.object_], tree: object, track: Track
) -> tuple[IntArray, FloatArray, FloatArray, FloatArray]:
    """Per pose, up to ``MAX_CANDIDATES`` streets (-1 padding), nearest first, their distance
    (m), the axial angle (deg, 0..90) between the travel heading and the street at the
    nearest point, and (n, MAX_CANDIDATES, 2) how far along the street that point lies from
    its first and its second end node (``osm.edge_nodes``), metres."""
    import shapely

    points = shapely.points(track.xy[:, 0], track.xy[:, 1])
    pose, edge = tree.query(  # type: ignore[attr-defined]
        points, predicate="dwithin", distance=CANDIDATE_RADIUS_M
    )
    n = len(track)
    out_edge = np.full((n, MAX_CANDIDATES), -1, dtype=np.int64)
    out_dist = np.full((n, MAX_CANDIDATES), np.inf)
    out_angle = np.zeros((n, MAX_CANDIDATES))
    out_along = np.zeros((n, MAX_CANDIDATES, 2))
    if pose.size == 0:
        return out_edge, out_dist, out_angle, out_along
    dist = shapely.distance(points[pose], lines[edge])
    along = shapely.line_locate_point(lines[edge], points[pose])
    ahead = shapely.get_coordinates(shapely.line_interpolate_point(lines[edge], along + 1.0))
    behind = shapely.get_coordinates(shapely.line_interpolate_point(lines[edge], along - 1.0))
    street_dir = np.degrees(np.arctan2(ahead[:, 0] - behind[:, 0], ahead[:, 1] - behind[:, 1]))
    angle = np.abs(np.mod(street_dir - track.heading_deg[pose] + 90.0, 180.0) - 90.0)
    # the samples run from one end node to the other; which one is not promised
    start = osm.samples_xy[np.searchsorted(osm.sample_edge, edge)]
    from_u = np.hypot(*(start - osm.node_xy[osm.edge_nodes[edge, 0]]).T)
    from_v = np.hypot(*(start - osm.node_xy[osm.edge_nodes[edge, 1]]).T)
    rest = shapely.length(lines[edge]) - along
    along_ends = np.where(
        (from_u <= from_v)[:, None], np.column_stack([along, rest]), np.column_stack([rest, along])
    )
    order = np.lexsort((dist, pose))
    pose, edge, dist, angle = pose[order], edge[order], dist[order], angle[order]
    along_ends = along_ends[order]
    rank = np.arange(len(pose)) - np.searchsorted(pose, pose, side="left")
    keep = rank < MAX_CANDIDATES
    out_edge[pose[keep], rank[keep]] = edge[keep]
    out_dist[pose[keep], rank[keep]] = dist[keep]
    out_angle[pose[keep], rank[keep]] = angle[keep]
    out_along[pose[keep], rank[keep]] = along_ends[keep]
    return out_edge, out_dist, out_angle, out_along


def _viterbi(
    osm: OsmStreets, track: Track, candidates: tuple[IntArray, FloatArray, FloatArray, FloatArray]
) -> IntArray:
    edge, dist, angle, along = candidates
    # the off-network state is never turned into at a node
    along = np.concatenate([along, np.zeros((len(edge), 1, 2))], axis=1)
    n = len(track)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    # state K (the last column) is off-network
    heading_cost = np.minimum(0.5 * (angle / HEADING_SIGMA_DEG) ** 2, HEADING_COST_CAP)
    emission = np.where(edge >= 0, 0.5 * (dist / POSITION_SIGMA_M) ** 2 + heading_cost, np.inf)
    emission = np.column_stack([emission, np.full(n, OFF_NETWORK_COST)])
    states = np.column_stack([edge, np.full(n, -1, dtype=np.int64)])
    ends = osm.edge_nodes
    links = _short_links(osm)
    heading = _end_headings(osm) if links.size else np.zeros((len(ends), 2))
    cost = emission[0].copy()
    back = np.zeros((n, states.shape[1]), dtype=np.int64)
    for i in range(1, n):
        prev, cur = states[i - 1], states[i]
        transition = _transition_costs(
            prev,
            cur,
            ends,
            osm.node_xy,
            track.xy[i],
            along[i - 1],
            along[i],
            links=links,
            heading=heading,
        )
        total = cost[:, None] + transition
        back[i] = np.argmin(total, axis=0)
        cost = total[back[i], np.arange(len(cur))] + emission[i]
    path = np.empty(n, dtype=np.int64)
    path[-1] = int(np.argmin(cost))
    for i in range(n - 1, 0, -1):
        path[i - 1] = back[i, path[i]]
    matched = states[np.arange(n), path]
    if links.size:
        _walk_the_links(osm, matched)
    return matched


def _walk_the_links(osm: OsmStreets, matched: IntArray) -> None:
    """Where the path moves between two streets with no shared end node (joined by a short
    street, :data:`PLACE_TURNS`), give the first pose on the new street to that short street,
    in place: the steps that read turns from the matched streets (junction candidates, the
    through passes, dead ends) then see the walk turn at the nodes it passes, as if its
    poses had been matched to the short street on the way."""

    ends = osm.edge_nodes
    by_pair = {frozenset(map(int, ends[e])): int(e) for e in _link_streets(osm)}
    for i in np.flatnonzero(
        (matched[1:] != matched[:-1]) & (matched[1:] >= 0) & (matched[:-1] >= 0)
    ):
        before, after = ends[matched[i]], ends[matched[i + 1]]
        if np.isin(before, after).any():
            continue
        link = next(
            (
                by_pair[pair]
                for a in before
                for b in after
                if (pair := frozenset((int(a), int(b)))) in by_pair
            ),
            -1,
        )
        if link >= 0:
            matched[i + 1] = link


def _link_streets(osm: OsmStreets) -> IntArray:
    """Indices of the streets under :data:`~city360.pose_graph.osm_match.SHORT_STREET_M` that
    :data:`PLACE_TURNS` moves across: at neither end node more than
    :data:`PLACE_LINK_MAX_SHORT` such streets."""
    from city360.pose_graph.osm_match import SHORT_STREET_M

    short = np.flatnonzero(osm.edge_length_m < SHORT_STREET_M)
    if PLACE_LINK_MAX_SHORT <= 0:
        return short
    per_node = np.bincount(osm.edge_nodes[short].ravel(), minlength=len(osm.node_xy))
    return short[per_node[osm.edge_nodes[short]].max(axis=1) <= PLACE_LINK_MAX_SHORT]


def _short_links(osm: OsmStreets) -> IntArray:
    """Sorted keys ``u * n + v`` (both ways) of the node pairs joined by one street under
    :data:`~city360.pose_graph.osm_match.SHORT_STREET_M` (:data:`PLACE_TURNS`; empty when
    off)."""

    if not PLACE_TURNS:
        return np.zeros(0, dtype=np.int64)
    n = len(osm.node_xy)
    u, v = osm.edge_nodes[_link_streets(osm)].T
    return np.unique(np.concatenate([u * n + v, v * n + u]).astype(np.int64))


def _end_headings(osm: OsmStreets) -> FloatArray:
    """(n streets, 2) heading (degrees clockwise from north) of each street away from its first
    and its second end node (``osm.edge_nodes``), over its first 5 m."""
    out = np.zeros((len(osm.edge_nodes), 2))
    starts = np.searchsorted(osm.sample_edge, np.arange(len(osm.edge_nodes)))
    stops = np.searchsorted(osm.sample_edge, np.arange(len(osm.edge_nodes)), side="right")
    for e, (lo, hi) in enumerate(zip(starts, stops, strict=True)):
        samples = osm.samples_xy[lo:hi]
        for k, node in enumerate(osm.edge_nodes[e]):
            near_first = np.hypot(*(samples[0] - osm.node_xy[node])) <= np.hypot(
                *(samples[-1] - osm.node_xy[node])
            )
            pts = samples if near_first else samples[::-1]
            along = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(pts, axis=0).T))])
            far = pts[min(int(np.searchsorted(along, 5.0)), len(pts) - 1)] - pts[0]
            out[e, k] = np.degrees(np.arctan2(far[0], far[1]))
    return out


def _transition_costs(
    prev: IntArray,
    cur: IntArray,
    ends: IntArray,
    node_xy: FloatArray,
    pose_xy: FloatArray,
    prev_along: FloatArray,
    cur_along: FloatArray,
    *,
    links: IntArray | None = None,
    heading: FloatArray | None = None,
) -> FloatArray:
    """(len(prev), len(cur)) costs of moving from each previous state to each current one;
    ``prev_along``, ``cur_along``: (len, 2) metres along each state's street from its first
    and second end node (:func:`_candidates`); ``links``: the node pairs joined by a short street
    (:func:`_short_links`; None: none) and ``heading`` (:func:`_end_headings`): streets at a
    link's two ends heading the same way turn into each other (:data:`PLACE_TURNS`)."""
    prev_on, cur_on = prev >= 0, cur >= 0
    pu, pv = ends[np.where(prev_on, prev, 0)].T
    cu, cv = ends[np.where(cur_on, cur, 0)].T
    best = np.full((len(prev), len(cur)), np.inf)
    for i, a in enumerate((pu, pv)):
        reach = np.hypot(*(node_xy[a] - pose_xy).T)
        turn_at_a = (
            TURN_COST + 0.5 * (np.maximum(reach - TURN_REACH_M, 0.0) / POSITION_SIGMA_M) ** 2
        )
        for j, b in enumerate((cu, cv)):
            shared = a[:, None] == b[None, :]
            link = np.zeros((len(prev), len(cur)))
            if links is not None and heading is not None and links.size:
                key = a[:, None] * len(node_xy) + b[None, :]
                apart_deg = np.abs(
                    np.mod(
                        heading[np.where(prev_on, prev, 0), i][:, None]
                        - heading[np.where(cur_on, cur, 0), j][None, :]
                        + 180.0,
                        360.0,
                    )
                    - 180.0
                )
                joined = np.isin(key, links) & (apart_deg < BESIDE_DEG)
                shared = shared | joined
                gap = np.hypot(*(node_xy[a][:, None] - node_xy[b][None, :]).transpose(2, 0, 1))
                link = np.where(joined, gap, 0.0)
            turn = turn_at_a[:, None] + np.zeros(len(cur))
            if TURN_ALONG:  # both poses near the node along their streets, not only in a line
                route = prev_along[:, i, None] + link + cur_along[None, :, j]
                off = np.maximum(route - TURN_REACH_M, 0.0)
                turn = turn + 0.5 * (off / POSITION_SIGMA_M) ** 2
            best = np.where(shared, np.minimum(best, turn), best)
    costs = np.where(np.isfinite(best), best, JUMP_COST)
    costs = np.minimum(costs, JUMP_COST)
    costs[prev[:, None] == cur[None, :]] = 0.0
    both_on = prev_on[:, None] & cur_on[None, :]
    costs = np.where(both_on, costs, OFF_NETWORK_SWITCH_COST)
    costs[~prev_on[:, None] & ~cur_on[None, :]] = 0.0
    return costs
