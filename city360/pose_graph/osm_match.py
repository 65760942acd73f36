"""Trajectories matched to an OpenStreetMap street network; OSM junctions as candidates.

Matching is a hidden-Markov model over the OSM streets, solved per trajectory by Viterbi
(:mod:`city360.pose_graph.map_match`): a pose is matched from the whole sequence, so a street
and a lane 8-12 m beside it, or the arms of a junction where the track cuts the corner, do not
flicker per pose. (Round two matched each pose to the nearest street with a heading gate.)

An OSM node where at least three streets have matched poses within ``JUNCTION_REACH_M`` of it,
reaching ``ARM_M`` along each (or walked into and back from it: a spur,
:func:`city360.pose_graph.osm_dead_ends.find_spurs`), is a junction the video passes through,
and becomes a junction at its OSM position (nodes joined by streets under ``SHORT_STREET_M``
count as one; with :data:`PLACE_BY_FILMED_ARMS` placed at those filmed on the most streets).
Pose-derived junctions are then reconciled with OSM (:func:`reconcile_junctions`): near such
a candidate they give way to it; within ``MATCH_RADIUS_M`` of any OSM street they are dropped
(the matched sequence says which streets the video walks; passes that part at a shallow angle
vote where they separate, not where the streets meet, and two passes of one bent street vote a
bend); away from every OSM street (a lane OSM lacks) they stay. Cuts follow the matching too
(:func:`matched_cut_filter`), and so do dead ends (:mod:`city360.pose_graph.osm_dead_ends`);
a walk the matching turns through a junction's node is cut there even when its smoothed
poses pass farther than the cut radius (:func:`through_junction_passes`), and, with
``by_place``, a walk turned at any node of the junction's place (a knot of short lanes).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import networkx as nx
import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from city360.errors import ConfigError, OsmError, did_you_mean
from city360.geo import LocalProjection, mean_gap_m
from city360.pose_graph.dead_ends import DeadEndEvent
from city360.pose_graph.segments import CutFilter
from city360.pose_graph.tracks import Track

if TYPE_CHECKING:
    from city360.pose_graph.osm_dead_ends import Spur

__all__ = [
    "AUTO_NETWORKS",
    "DRAWN_ONCE",
    "DRAWN_TWICE_GAP_M",
    "MATCH_ANGLE_DEG",
    "MATCH_RADIUS_M",
    "MIN_COVERED_SHARE",
    "PLACE_BY_FILMED_ARMS",
    "PLACE_GATE",
    "THROUGH_FILMED",
    "OsmStreets",
    "choose_network",
    "coverage",
    "load_matching_streets",
    "load_streets",
    "match_tracks",
    "matched_cut_filter",
    "matched_share",
    "node_groups",
    "osm_junction_candidates",
    "reconcile_junctions",
    "streets_from_graph",
    "through_junction_passes",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

SAMPLE_STEP_M = 1.0
MATCH_RADIUS_M = 15.0
MATCH_ANGLE_DEG = 35.0
JUNCTION_REACH_M = 25.0
"""Poses on a street this close to one of its end nodes count as filming that street there."""
MIN_POSES_PER_STREET = 4
ARM_M = 8.0
ARM_SHARE = 0.4
"""A street counts as filmed at a node only when its matched poses reach ``ARM_M`` from the
node, or ``ARM_SHARE`` of its length if shorter: GPS wander of a walker standing or milling
about at a crossing puts poses a few metres along every arm. Short because a walk may step only
8-9 m into a street where the filmed area ends (old-town twin: 15 m lost a junction there); the
share is low because a smoothed U-turn at the end of a 12 m stub turns 4-5 m short of it."""
PLACE_BY_FILMED_ARMS = False
"""Where a junction of OSM nodes joined by streets under :data:`SHORT_STREET_M` stands: at the
nodes with the most filmed streets (then the most streets), not at every node of the most
streets. Two nodes 7.1 m apart, each of three streets: a walker turned the corner at the north
one and another walked its third street down to it, while the south node's third street was
not filmed (Nerima, unseen window SE, wander seed 40). Halfway between them, 3.6 m off, the
junction stood 8.3 m from the video that ended 4.9 m short of the north node; that end became
a dead end of its own and the junction, left with two arms, was no junction. Off: on, that
row's junction R goes 0.964 -> 1.000 (still short: P 0.933), but Nerima SW one-way with
stops seed 40 (three nodes in one place, the junction moved 0.7 m) goes street F1 1.000 ->
0.979 (design notes, round twenty-three, branch osmfresh23). False: every node of the most
streets."""
SHORT_STREET_M = 8.0
"""OSM streets shorter than this join their two end nodes into one place when counting the
streets filmed at a node: video cannot resolve them (the scorer, ``score.MATCH_M``, contracts
them too), so a 1.5 m stub does not turn a bend into a junction."""
MIN_COVERED_SHARE = 0.5
"""At least this share of all poses must match an OSM street, or the extract is elsewhere."""
AUTO_NETWORKS = ("street", "street+service", "walk", "all")
"""Networks ``network="auto"`` tries, smallest first (see ``city360.maps.NETWORK_HIGHWAYS``):
a walk along lanes and yards matches ``street+service`` (before ``walk``, whose footpaths
beside them move junctions the walk never passed), one along footpaths, through parks and
across squares ``walk`` or ``all``."""
NETWORK_SHARE_SLACK = 0.05
"""``auto`` takes the smallest network matching within this share of the best one: more ways
than the walk needs only add junctions of paths nobody filmed."""
DRAWN_ONCE = True
"""Keep once an OSM way drawn twice between the same two nodes along nearly the same line
(mean gap under :data:`DRAWN_TWICE_GAP_M`, ten points spread by arc length, as
``score._drawn_once`` reads the truth) when loading the streets: a park path drawn as a
footway and, 5 m beside it, a cycleway that leave and rejoin at the same two nodes. Kept
twice, a walk along them is matched to either, both count as filmed arms, and each end node
(two arms to a camera, the way in and the way on) becomes a junction of three: two extra
junctions, the true street between their neighbours lost, five extra streets (Kaisaniemi
park, fresh window, coverage seed 0 with OSM: (-75.5, -68.7) and (-72.8, -108.7), 41 m
apart). Measured with OSM (design notes, round twenty-nine, branch foot29): on, 12 of 12
Kaisaniemi rows better (seeds 0-2; junction P 1.000 in all, street F1 +0.016 to +0.080),
73 rows equal (Bulevardi, the unseen Helsinki and Nerima windows, Nerima mid); but the
suite's three Tokyo rows lose street F1 (0.990 -> 0.985 twice, 1.000 -> 0.995): a road is
drawn twice exactly there (mean gap 0), and with one drawing dropped a loop street was built
at its east end (-29.3, -237.3): a walk turning back 2 m short of its west end (now of OSM
degree two, not three) was not cut at the junction there, whose gate took that node for a
bend beside it. With :data:`PLACE_GATE` (round thirty, branch loop30) the tokyo rows are
equal and the 12 Kaisaniemi rows still better (one-way 1 also by the gate): on.
Counting the drawings as one arm only when finding junctions (both kept in the streets) was
tried: it fixes nothing and two Kaisaniemi rows get worse. False: every way as OSM draws it."""
DRAWN_TWICE_GAP_M = 5.0
"""Mean gap under which two ways between the same nodes are one way drawn twice, metres (the
scorer's figure: no GPS parts lines this close)."""
THROUGH_FILMED = True
"""In :func:`osm_junction_candidates`, a street the matched sequence walks from one end node to
the other (a run of poses on it between runs on streets through each of its ends) counts as
filmed at both ends, however few of its poses the matching gave it: a smoothed track cuts
the corners of a 10 m link between two junctions, and the matching gave the link one pose
and the rest to the streets either side, so the far junction had two filmed streets and was
lost (Kaisaniemi, one-way seed 1 with OSM, (27.5, -44.1); round thirty-one, branch kais31).
Measured with OSM on 44 kept twins (design notes, round thirty-one): with
:data:`~city360.pose_graph.map_match.TURN_ALONG` 3 rows better (this one: that row, R 0.968
-> 1.000, street F1 0.931 -> 0.957), none worse in junction P, R or street F1. False: only by
its poses (:data:`MIN_POSES_PER_STREET`, :data:`ARM_M`)."""
PLACE_GATE = True
"""In :func:`matched_cut_filter`, a junction's streets are those of every OSM node of its
place (:func:`node_groups`: nodes joined by streets under :data:`SHORT_STREET_M`) that holds
a node of three or more streets near it, not only of those nodes themselves. OSM may draw a
crossing as a node of three streets and, 3.3 m from it, a node of two (a street's end that
a short link joins to the crossing). A walk that turns back on that street 2 m short of its
end node gets no dead end (:func:`city360.pose_graph.osm_dead_ends.place_dead_ends`: the
junction's cut stands for it), yet the gate, taking the node of two for a bend of a street
beside the junction, would not let the junction cut that street: its way out and back became
one street from the junction at its other end to itself, a loop no truth has (the suite's
tokyo coverage seed 2 with :data:`DRAWN_ONCE`, node 1311980300 at (-70.6, -236.7), the loop
at (-29.3, -237.3)). Measured with OSM (design notes, round thirty, branch loop30): on, 2
Kaisaniemi rows better (one-way 1 street F1 0.877 -> 0.931, turns 0.810 -> 0.832; wander
with stops 0 F1 0.959 -> 0.967), the other 48 rebuilt rows equal (tokyo 0-2, Kaisaniemi,
Bulevardi, the unseen and the suite's Helsinki twins). False: only the nodes of three or
more streets near the junction (else every node near it)."""


@dataclass(frozen=True, slots=True)
class OsmStreets:
    """An OSM street network as arrays (metres in the city CRS).

    ``node_xy`` (N, 2) and ``node_ids`` (N,) OSM ids; ``edge_nodes`` (E, 2) node indices of each
    street's ends; ``edge_length_m`` (E,); ``samples_xy`` (S, 2) points along the streets every
    ~``SAMPLE_STEP_M``, ``sample_edge`` (S,) their street, ``sample_dir_deg`` (S,) the street's
    local direction there (a bearing, meaningful modulo 180).
    """

    source: str
    node_xy: FloatArray
    node_ids: IntArray
    edge_nodes: IntArray
    edge_length_m: FloatArray
    samples_xy: FloatArray
    sample_edge: IntArray
    sample_dir_deg: FloatArray

    @property
    def total_length_m(self) -> float:
        return float(self.edge_length_m.sum())

    @property
    def node_degree(self) -> IntArray:
        """How many street ends meet at each node (N,): 1 at a dead end."""
        return np.bincount(self.edge_nodes.ravel(), minlength=len(self.node_xy))


def streets_from_graph(streets: nx.MultiGraph, *, source: str) -> OsmStreets:
    """Arrays from an ``OsmData.streets`` MultiGraph (node attrs ``x_m``/``y_m``, edge attr
    ``polyline_xy``)."""
    ids = list(streets.nodes)
    index = {n: i for i, n in enumerate(ids)}
    node_xy = np.array([[streets.nodes[n]["x_m"], streets.nodes[n]["y_m"]] for n in ids])
    edge_nodes: list[tuple[int, int]] = []
    lengths, samples, owner, dirs = [], [], [], []
    drawn: dict[tuple[int, int], list[FloatArray]] = {}
    for u, v, data in streets.edges(data=True):
        line = np.asarray(data["polyline_xy"], dtype=np.float64)
        if DRAWN_ONCE and len(line) >= 2:
            pair = (min(index[u], index[v]), max(index[u], index[v]))
            start = node_xy[pair[0]]  # a way's points may run either way between its ends
            flip = np.hypot(*(line[0] - start)) > np.hypot(*(line[-1] - start))
            along = line[::-1] if flip else line
            if any(mean_gap_m(along, other) < DRAWN_TWICE_GAP_M for other in drawn.get(pair, [])):
                continue
            drawn.setdefault(pair, []).append(along)
        k = len(edge_nodes)
        seg = np.diff(line, axis=0)
        seg_len = np.hypot(*seg.T)
        arc = np.concatenate([[0.0], np.cumsum(seg_len)])
        marks = np.linspace(0.0, arc[-1], max(2, int(np.ceil(arc[-1] / SAMPLE_STEP_M)) + 1))
        pts = np.column_stack(
            [np.interp(marks, arc, line[:, 0]), np.interp(marks, arc, line[:, 1])]
        )
        which = np.clip(np.searchsorted(arc, marks, side="right") - 1, 0, len(seg) - 1)
        bearing = np.degrees(np.arctan2(seg[which, 0], seg[which, 1]))
        edge_nodes.append((index[u], index[v]))
        lengths.append(arc[-1])
        samples.append(pts)
        owner.append(np.full(len(pts), k, dtype=np.int64))
        dirs.append(np.mod(bearing, 360.0))
    if not edge_nodes:
        msg = f"OSM extract {source} has no streets"
        raise OsmError(msg)
    return OsmStreets(
        source=source,
        node_xy=node_xy,
        node_ids=np.asarray(ids, dtype=np.int64),
        edge_nodes=np.asarray(edge_nodes, dtype=np.int64),
        edge_length_m=np.asarray(lengths),
        samples_xy=np.concatenate(samples),
        sample_edge=np.concatenate(owner),
        sample_dir_deg=np.concatenate(dirs),
    )


def load_streets(
    path: Path,
    projection: LocalProjection,
    *,
    network: str = "street",
    squares: bool | None = None,
) -> OsmStreets:
    """Read the ``network`` (``city360.maps.NETWORK_HIGHWAYS``) of an OSM extract in the
    city's CRS (``city360.maps.osm``), every connected piece of it: an extract cropped to a
    city falls apart at its edges, at rivers and fences, and a walk may be on any piece.
    ``squares``: the ways round and across walkable squares, as ``load_osm`` takes it (None:
    in the networks that walk across squares)."""
    from city360.maps.osm import load_osm

    data = load_osm(
        path, projection=projection, network=network, all_components=True, squares=squares
    )
    return streets_from_graph(data.streets, source=str(path))


def matched_share(osm: OsmStreets, tracks: Sequence[Track]) -> float:
    """Share of all poses within ``MATCH_RADIUS_M`` of an OSM street running their way."""
    matches = match_tracks(osm, tracks)
    total = sum(len(m) for m in matches)
    return sum(int((m >= 0).sum()) for m in matches) / total if total else 0.0


def choose_network(
    names: Sequence[str], bounds: dict[str, float], share_of: Callable[[str], float]
) -> tuple[str, dict[str, float]]:
    """The network ``auto`` keeps, and the matched share of each network it had to match.

    The rule: the first of ``names`` whose matched share is within
    :data:`NETWORK_SHARE_SLACK` of the best. ``share_of(name)`` map-matches (the cost);
    ``bounds[name]`` is an upper bound of it (:func:`~city360.pose_graph.map_match.
    candidate_share`). A network is matched only while the bounds leave the choice open: once
    a matched share reaches the highest bound still possible less the slack, the networks
    before it are out and it is in, the same choice as matching all of them. The first
    network still open is matched when it may be chosen at once, else the one of highest
    bound (the best share found rules out every network bounded below it less the slack).
    """
    shares: dict[str, float] = {}
    while True:
        low = max(shares.values(), default=0.0)  # the best share is at least this ...
        high = max([low, *(bounds[n] for n in names if n not in shares)])  # ... at most this
        undecided = None
        for name in names:
            share = shares.get(name)
            if share is not None and share >= high - NETWORK_SHARE_SLACK:
                return name, shares
            if (share if share is not None else bounds[name]) < low - NETWORK_SHARE_SLACK:
                continue  # out whatever the best is
            undecided = name
            break
        if undecided is None:  # unreachable: the best network is never out; match the rest
            undecided = next(n for n in names if n not in shares)
        if undecided in shares or bounds[undecided] < high - NETWORK_SHARE_SLACK:
            # it cannot be decided on its own: match the network that may be best, whose
            # share rules the most out (a walk on footways: "walk" rules out "street")
            undecided = max((n for n in names if n not in shares), key=lambda n: bounds[n])
        shares[undecided] = share_of(undecided)


def load_matching_streets(
    path: Path,
    projection: LocalProjection,
    tracks: Sequence[Track],
    *,
    network: str = "auto",
    squares: bool | None = None,
) -> tuple[OsmStreets, str, dict[str, float], list[IntArray]]:
    """The OSM network the walk is on: ``(streets, network name, share matched per network
    matched, per track the street of every pose on it)`` (the last as :func:`match_tracks`).
    ``squares`` as :func:`load_streets` takes it.

    ``network="auto"`` keeps the smallest of :data:`AUTO_NETWORKS` whose matched share is
    within :data:`NETWORK_SHARE_SLACK` of the best (:func:`choose_network`: a network the
    cheap bound of :func:`~city360.pose_graph.map_match.candidate_share` rules in or out is not
    map-matched, so a walk on streets is matched once); any other value is that network.
    Raises :class:`OsmError` naming the cause when no network matches
    :data:`MIN_COVERED_SHARE` of the poses (see :func:`check_overlap`).
    """
    from city360.maps.osm_types import NETWORK_HIGHWAYS
    from city360.pose_graph.map_match import candidate_share

    if network != "auto" and network not in NETWORK_HIGHWAYS:
        known = ["auto", *NETWORK_HIGHWAYS]
        msg = (
            f"--osm-network {network!r} is not known; expected one of {', '.join(known)}."
            f"{did_you_mean(network, known)}"
        )
        raise ConfigError(msg)
    names = AUTO_NETWORKS if network == "auto" else (network,)
    loaded: dict[str, OsmStreets] = {}
    for name in names:
        try:
            loaded[name] = load_streets(path, projection, network=name, squares=squares)
        except OsmError:
            if network != "auto":
                raise
            continue  # e.g. an extract of footpaths only has no "street" network
    if not loaded:
        msg = f"OSM extract {path} has no highway=* ways in any network ({', '.join(names)})"
        raise OsmError(msg)
    matches: dict[str, list[IntArray]] = {}

    def share_of(name: str) -> float:
        matches[name] = match_tracks(loaded[name], tracks)
        total = sum(len(m) for m in matches[name])
        return sum(int((m >= 0).sum()) for m in matches[name]) / total if total else 0.0

    tried = list(loaded)
    bounds = {n: candidate_share(loaded[n], tracks) for n in tried} if len(tried) > 1 else {}
    bounds = bounds or {n: 1.0 for n in tried}
    chosen, shares = choose_network(tried, bounds, share_of)
    if shares[chosen] < MIN_COVERED_SHARE:  # the error names every network's share
        for name in tried:
            if name not in shares:
                shares[name] = share_of(name)
    shares = {n: shares[n] for n in tried if n in shares}
    check_overlap(loaded[chosen], tracks, matches[chosen], shares=shares)
    return loaded[chosen], chosen, shares, matches[chosen]


def match_tracks(osm: OsmStreets, tracks: Sequence[Track]) -> list[IntArray]:
    """Per track, the OSM street index of every pose (-1 where it is off the mapped network),
    map-matched over the whole sequence (:func:`city360.pose_graph.map_match.viterbi_match`)."""
    from city360.pose_graph.map_match import viterbi_match

    return viterbi_match(osm, tracks)


def check_overlap(
    osm: OsmStreets,
    tracks: Sequence[Track],
    matches: Sequence[IntArray],
    *,
    shares: dict[str, float] | None = None,
) -> None:
    """Raise :class:`OsmError` when fewer than ``MIN_COVERED_SHARE`` of the poses match an OSM
    street, naming the likely cause: the extract lies elsewhere (its streets and the poses do
    not overlap), or the walk is on ways the network leaves out or follows no mapped way
    (``shares``: the share matched by each network tried)."""
    total = sum(len(m) for m in matches)
    hit = sum(int((m >= 0).sum()) for m in matches)
    share = hit / total if total else 0.0
    if share >= MIN_COVERED_SHARE:
        return
    xy = np.concatenate([t.xy for t in tracks])
    lo, hi = xy.min(axis=0), xy.max(axis=0)
    olo, ohi = osm.node_xy.min(axis=0), osm.node_xy.max(axis=0)
    spans = (
        f"poses span x {lo[0]:.0f}..{hi[0]:.0f} m, y {lo[1]:.0f}..{hi[1]:.0f} m; its streets "
        f"span x {olo[0]:.0f}..{ohi[0]:.0f} m, y {olo[1]:.0f}..{ohi[1]:.0f} m in the city CRS"
    )
    tried = ", ".join(f"{v:.0%} on {k!r}" for k, v in (shares or {}).items())
    overlap = bool(np.all(lo <= ohi + MATCH_RADIUS_M) and np.all(olo <= hi + MATCH_RADIUS_M))
    if not overlap:
        msg = (
            f"OSM extract {osm.source} is of another area: none of its streets lies where the "
            f"trajectories are ({spans}). Pass the extract of this city's area, or build "
            "without --osm"
        )
    else:
        networks = f" (networks tried: {tried})" if tried else ""
        msg = (
            f"OSM extract {osm.source} covers the trajectories' area, but only {share:.0%} of "
            f"poses lie within {MATCH_RADIUS_M:.0f} m of one of its ways running their way"
            f"{networks}; {spans}. The walk follows ways the extract does not map (or maps "
            "with another tag), or the GPS is offset: try --osm-network all, check the poses "
            "on the map, or build without --osm"
        )
    raise OsmError(msg)


def osm_junction_candidates(
    osm: OsmStreets,
    tracks: Sequence[Track],
    *,
    matches: Sequence[IntArray] | None = None,
    spurs: Sequence[Spur] = (),
) -> FloatArray:
    """Positions (K, 2) of OSM nodes the video passes through with three or more streets
    filmed near them (``matches``: :func:`match_tracks` of ``tracks``, computed when None).
    A street also counts as filmed at a node when one of ``spurs``
    (:func:`city360.pose_graph.osm_dead_ends.find_spurs`) walks into it from there and back:
    the smoothed U-turn at the end of a 12 m stub reaches 7 m, short of ``ARM_M``.
    Raises :class:`OsmError` if the extract does not cover the tracks."""
    matches = match_tracks(osm, tracks) if matches is None else matches
    check_overlap(osm, tracks, matches)
    n_nodes, n_edges = len(osm.node_xy), len(osm.edge_nodes)
    near_count = np.zeros((n_edges, 2), dtype=np.int64)  # poses near the edge's u / v end
    farthest = np.zeros((n_edges, 2))  # how far from the u / v end matched poses reach
    for track, matched in zip(tracks, matches, strict=True):
        rows = np.flatnonzero(matched >= 0)
        if rows.size == 0:
            continue
        edges = matched[rows]
        for end in (0, 1):
            node_xy = osm.node_xy[osm.edge_nodes[edges, end]]
            dist = np.hypot(*(track.xy[rows] - node_xy).T)
            np.add.at(near_count[:, end], edges[dist <= JUNCTION_REACH_M], 1)
            np.maximum.at(farthest[:, end], edges, dist)
    group = node_groups(osm)
    inner = group[osm.edge_nodes[:, 0]] == group[osm.edge_nodes[:, 1]]
    # a walker wandering about a crossing has poses on every arm near it, but walks none
    walked = farthest >= np.minimum(ARM_M, ARM_SHARE * osm.edge_length_m)[:, None]
    for spur in spurs:
        walked[spur.edge, int(osm.edge_nodes[spur.edge, 1] == spur.node)] = True
    through = _walked_through(osm, matches) if THROUGH_FILMED else np.zeros(n_edges, dtype=bool)
    filmed_degree = np.zeros(n_nodes, dtype=np.int64)  # per group label
    filmed_arms = np.zeros(n_nodes, dtype=np.int64)  # per node
    for end in (0, 1):
        filmed = (near_count[:, end] >= MIN_POSES_PER_STREET) & walked[:, end] | through
        filmed &= ~inner
        np.add.at(filmed_degree, group[osm.edge_nodes[filmed, end]], 1)
        np.add.at(filmed_arms, osm.edge_nodes[filmed, end], 1)
    degree = osm.node_degree
    found = []
    for label in np.flatnonzero(filmed_degree >= 3):
        members = np.flatnonzero(group == label)
        if PLACE_BY_FILMED_ARMS:  # the node the video turned at, not the one it passed
            members = members[filmed_arms[members] == filmed_arms[members].max()]
        top = members[degree[members] == degree[members].max()]
        found.append(osm.node_xy[top].mean(axis=0))
    return np.asarray(found, dtype=np.float64).reshape(-1, 2)


def _walked_through(osm: OsmStreets, matches: Sequence[IntArray]) -> npt.NDArray[np.bool_]:
    """Per street, whether a track's matched sequence walks it from one end node to the other:
    a run of poses on it between a run on a street through its one end node and a run on a
    street through its other (:data:`THROUGH_FILMED`)."""
    through = np.zeros(len(osm.edge_nodes), dtype=bool)
    for matched in matches:
        change = np.flatnonzero(np.diff(matched) != 0) + 1
        runs = matched[np.concatenate([[0], change])] if len(matched) else matched
        for before, edge, after in zip(runs[:-2], runs[1:-1], runs[2:], strict=True):
            if min(before, edge, after) < 0:
                continue
            u, v = osm.edge_nodes[edge]
            ends_before, ends_after = osm.edge_nodes[before], osm.edge_nodes[after]
            if (u in ends_before and v in ends_after) or (v in ends_before and u in ends_after):
                through[edge] = True
    return through


def node_groups(osm: OsmStreets) -> IntArray:
    """A label per OSM node; nodes joined by streets shorter than :data:`SHORT_STREET_M` share
    one (a 1.5 m stub beside a bend, or two nodes 5 m apart drawn for one crossing, are one
    place to a camera)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = len(osm.node_xy)
    short = osm.edge_nodes[osm.edge_length_m < SHORT_STREET_M]
    graph = coo_matrix((np.ones(len(short)), (short[:, 0], short[:, 1])), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    return labels.astype(np.int64)


def coverage(
    osm: OsmStreets, tracks: Sequence[Track], *, radius_m: float = 10.0
) -> tuple[float, float]:
    """(filmed length, total length) of the OSM streets within the city's own area, metres.

    The city's area is the convex hull of every pose widened by ``radius_m``: an extract that
    reaches far beyond the filmed district does not count its other streets as missed. A street
    sample counts as filmed when a pose lies within ``radius_m``.
    """
    if not tracks:
        return 0.0, osm.total_length_m
    pose_xy = np.concatenate([t.xy for t in tracks])
    poses = cKDTree(pose_xy)
    dist, _ = poses.query(osm.samples_xy, distance_upper_bound=radius_m)
    filmed = np.isfinite(dist)
    inside = _inside_area(pose_xy, osm.samples_xy, margin_m=radius_m)
    per_edge_samples = np.bincount(osm.sample_edge, minlength=len(osm.edge_nodes))
    per_edge_inside = np.bincount(osm.sample_edge, weights=inside, minlength=len(osm.edge_nodes))
    per_edge_filmed = np.bincount(
        osm.sample_edge, weights=filmed & inside, minlength=len(osm.edge_nodes)
    )
    denominator = np.maximum(per_edge_samples, 1)
    covered = float((per_edge_filmed / denominator * osm.edge_length_m).sum())
    total = float((per_edge_inside / denominator * osm.edge_length_m).sum())
    return covered, total


def _inside_area(
    pose_xy: FloatArray, points_xy: FloatArray, *, margin_m: float
) -> npt.NDArray[np.bool_]:
    """Which of ``points_xy`` lie in the convex hull of ``pose_xy`` widened by ``margin_m``."""
    import shapely

    hull = shapely.MultiPoint(pose_xy).convex_hull.buffer(margin_m)
    return np.asarray(shapely.contains_xy(hull, points_xy[:, 0], points_xy[:, 1]), dtype=bool)


def reconcile_junctions(
    pose_xy: FloatArray,
    osm: OsmStreets,
    tracks: Sequence[Track],
    *,
    snap_m: float,
    matches: Sequence[IntArray] | None = None,
    spurs: Sequence[Spur] = (),
) -> FloatArray:
    """Junction positions (K, 2) from OSM candidates and pose-derived junctions (see the module
    docstring; ``matches`` and ``spurs`` as for :func:`osm_junction_candidates`). Raises
    :class:`OsmError` if the extract does not cover the tracks."""
    candidates = osm_junction_candidates(osm, tracks, matches=matches, spurs=spurs)
    if len(pose_xy) == 0:
        return candidates
    keep: list[FloatArray] = [candidates]
    near_candidate = (
        np.isfinite(cKDTree(candidates).query(pose_xy, distance_upper_bound=snap_m)[0])
        if len(candidates)
        else np.zeros(len(pose_xy), dtype=bool)
    )
    rest = pose_xy[~near_candidate]
    if len(rest):
        on_street = np.isfinite(
            cKDTree(osm.samples_xy).query(rest, distance_upper_bound=MATCH_RADIUS_M)[0]
        )
        keep.append(rest[~on_street])
    return np.concatenate(keep).reshape(-1, 2)


def matched_cut_filter(
    osm: OsmStreets,
    matches: Sequence[IntArray],
    junctions_xy: FloatArray,
    dead_ends: Sequence[Sequence[DeadEndEvent]],
    *,
    reach_m: float,
) -> CutFilter:
    """A :data:`~city360.pose_graph.segments.CutFilter` from the map matching.

    A frame may be cut at a junction that stands for OSM nodes (those within ``reach_m`` of it
    where three or more streets meet, else any within ``reach_m``) only when the frame walks
    one of those nodes' streets, or no mapped street; junctions with
    no OSM node near (lanes OSM lacks) take any frame. A frame may be cut at a dead end (node
    id ``len(junctions_xy) + k``, where videos start, stop or turn back) only when it walks the
    street a video ended on there, or its continuation through a node of OSM degree two: a
    video that starts in the middle of a street is shared by the other videos of that street,
    the end of a street OSM leaves unconnected beside another street is not.
    """
    junctions_xy = np.asarray(junctions_xy, dtype=np.float64).reshape(-1, 2)
    n_edges = len(osm.edge_nodes)
    count = len(junctions_xy) + len(dead_ends)
    incident = np.zeros((count, n_edges), dtype=bool)
    gated = np.zeros(count, dtype=bool)
    degree = osm.node_degree
    place = node_groups(osm) if PLACE_GATE else None
    if len(junctions_xy):
        near = cKDTree(osm.node_xy).query_ball_point(junctions_xy, reach_m)
        for k, nodes in enumerate(near):
            if nodes:
                # a bend node of a street running beside the junction is not one of its nodes
                branching = [n for n in nodes if degree[n] >= 3]
                if place is not None and branching:  # but a node of its place is
                    branching = np.flatnonzero(np.isin(place, place[branching])).tolist()
                gated[k] = True
                incident[k] = np.isin(osm.edge_nodes, branching or nodes).any(axis=1)
    for k, events in enumerate(dead_ends):
        edges = np.array([matches[e.track][e.frame] for e in events], dtype=np.int64)
        if edges.size == 0 or (edges < 0).any():
            continue  # a video ends off the mapped streets: any frame may pass there
        row = len(junctions_xy) + k
        gated[row] = True
        through = osm.edge_nodes[edges].ravel()
        through = through[degree[through] <= 2]
        incident[row, edges] = True
        incident[row] |= np.isin(osm.edge_nodes, through).any(axis=1)

    def may_cut(track: int, frames: IntArray, nodes: IntArray) -> npt.NDArray[np.bool_]:
        edge = matches[track][frames]
        return ~gated[nodes] | (edge < 0) | incident[nodes, np.maximum(edge, 0)]

    return may_cut


def through_junction_passes(
    osm: OsmStreets,
    tracks: Sequence[Track],
    matches: Sequence[IntArray],
    junctions_xy: FloatArray,
    *,
    reach_m: float,
    cut_radius_m: float,
    pass_m: float,
    by_place: bool = False,
    dead_ends: Sequence[Sequence[DeadEndEvent]] = (),
) -> dict[int, list[tuple[int, int]]]:
    """Per track, ``(frame, junction id)`` where its map matching turns from one OSM street
    onto another at their shared node, a junction stands for that node (within ``reach_m``),
    and the track passes the junction farther than ``cut_radius_m`` but within ``pass_m``
    (metres; the frame is the nearest within ``pass_m`` of travel of the turn).

    ``by_place``: a junction also stands for a node of the place (:func:`node_groups`) of a
    node of three or more streets within ``reach_m`` of it, as the cut filter's gate reads it
    (:data:`PLACE_GATE`): a turn at a knot's outer node is cut at the knot's junction,
    unless the frame it would be cut at lies within ``cut_radius_m`` of where another
    track's video starts, ends or turns back on the street that frame walks (one of
    ``dead_ends``, grouped as the build places them): the frame is cut at that dead end,
    and a second cut at the junction would part its street from the others' there.

    The cut radius measures the smoothed pose's distance, and a walk whose GPS drifts 10-15 m
    to one side (an urban canyon) is still matched through the junction by the whole
    sequence; without the cut its passes do not share the junction, and two walks that cross
    there "never meet". Passes within the cut radius are cut by it already.
    """
    junctions_xy = np.asarray(junctions_xy, dtype=np.float64).reshape(-1, 2)
    passes: dict[int, list[tuple[int, int]]] = {}
    if not len(junctions_xy):
        return passes
    tree = cKDTree(junctions_xy)
    reach, nearest_junction = tree.query(osm.node_xy, distance_upper_bound=reach_m)
    own = np.where(np.isfinite(reach), nearest_junction, -1).astype(np.int64)
    stands_for = _place_junction(osm, own, reach) if by_place else own
    ends = _ends_on_streets(matches, dead_ends) if by_place else []
    for t, (track, matched) in enumerate(zip(tracks, matches, strict=True)):
        frames = np.flatnonzero(matched >= 0)
        edges = matched[frames]
        for i in np.flatnonzero(edges[1:] != edges[:-1]):
            shared = set(osm.edge_nodes[edges[i]].tolist()) & set(
                osm.edge_nodes[edges[i + 1]].tolist()
            )
            if not shared:
                continue  # a jump between streets, not a turn at a node
            before, after = int(frames[i]), int(frames[i + 1])
            arc = track.arc_m
            window = np.flatnonzero((arc >= arc[before] - pass_m) & (arc <= arc[after] + pass_m))
            for node in shared:
                k = int(stands_for[node])
                if k < 0:
                    continue
                dist = np.hypot(*(track.xy[window] - junctions_xy[k]).T)
                frame = int(window[np.argmin(dist)])
                if own[node] < 0 and _cut_at_an_end(track, t, frame, matched, ends, cut_radius_m):
                    continue  # one cut there, not two: the street would part from the others'
                if cut_radius_m < dist.min() <= pass_m:
                    passes.setdefault(t, []).append((frame, k))
    return passes


def _place_junction(osm: OsmStreets, own: IntArray, reach: FloatArray) -> IntArray:
    """Per OSM node, the junction that stands for it, -1 for none: ``own`` (the nearest
    junction within reach, ``reach`` metres away, -1 and inf for none), else the junction of
    the node of three or more streets of its place (:func:`node_groups`) nearest its own."""
    place = node_groups(osm)
    branching = np.flatnonzero((own >= 0) & (osm.node_degree >= 3))
    by_label: dict[int, int] = {}
    for node in branching[np.argsort(reach[branching], kind="stable")]:
        by_label.setdefault(int(place[node]), int(own[node]))
    from_place = np.array([by_label.get(int(label), -1) for label in place], dtype=np.int64)
    return np.where(own >= 0, own, from_place)


def _cut_at_an_end(
    track: Track,
    t: int,
    frame: int,
    matched: IntArray,
    ends: Sequence[tuple[FloatArray, set[int], set[int]]],
    cut_radius_m: float,
) -> bool:
    """Whether ``frame`` of track ``t`` is cut at another track's dead end (``ends``, as
    :func:`_ends_on_streets` gives them): within ``cut_radius_m`` of it, on a street a video
    ends on there."""
    return any(
        bool(tracks_there - {t})
        and int(matched[frame]) in streets
        and float(np.hypot(*(track.xy[frame] - where))) <= cut_radius_m
        for where, tracks_there, streets in ends
    )


def _ends_on_streets(
    matches: Sequence[IntArray], dead_ends: Sequence[Sequence[DeadEndEvent]]
) -> list[tuple[FloatArray, set[int], set[int]]]:
    """Per dead end of ``dead_ends`` (a group of events, placed at their mean): where it
    stands, the tracks that end there and the OSM streets they end on."""
    return [
        (
            np.mean([[e.x_m, e.y_m] for e in group], axis=0),
            {e.track for e in group},
            {int(matches[e.track][e.frame]) for e in group} - {-1},
        )
        for group in dead_ends
        if group
    ]
