"""Scoring a built pose graph against a synthetic city's ground truth (``SceneTruth``): the
one scorer of city360 (``city360 score CITY``, tests, benchmarks).

Figures: junction precision and recall (built junctions matched one-to-one to true junctions
within ``MATCH_M`` = 8 m, Hungarian assignment on distance); street precision, recall and F1
(built streets, degree-2 nodes contracted, whose two ends match the two ends of a true street;
node identity within ``NODE_IDENTITY_M`` = 15 m); turn accuracy (below). All positions are
metres in the city CRS.

Junctions are true nodes where three or more streets meet; streets through degree-2 nodes
(bends) are joined into one, in the truth and in the built graph alike. The truth is first
reduced to what a camera can tell apart: OSM ways drawn twice between the same nodes along the
same line count once, and streets shorter than the 8 m matching tolerance are contracted into
their end node (a 1.5 m stub next to a junction is not a separate branch); with
:data:`DROP_PLACE_LOOPS` (on) a longer way between two nodes of one such place that never runs
farther than 8 m from its nodes is dropped too, and so is a built street of at most 16 m from
the junction matched to that place to itself (never farther than 8 m from the junction): one
thing read alike on both sides. A built graph that does resolve such a pair is
not penalised for it: an extra built junction (matched to no true one) within 8 m of the place's
other true junction, joined by a built street to the built junction matched to the place, is
read as that one place (either reading of a staggered
crossing 7 m long is right; a built junction that matches a true one is never read so). A
contracted place stands at one of its true junctions (the one with most streets); a chain of
them can reach past 8 m from it, so a place that no built junction matches there is matched
to a built junction left over within 8 m of another of its true junctions (a build standing
at any true junction of the place stands at the place).

A chain of junctions 5-7 m apart (Kaisaniemi's footpath tangle, nine true junctions 23 m
across) is one place, and a build that resolves it makes a junction by each of several of
them, joined to the place's matched junction only through one another. Each stands within
8 m of its own true junction of the place, one built junction per true one (as for a pair),
and is joined to the place through the place's own built streets: it is a true junction the
camera resolved and the reduction contracted, not an invented one. With
:data:`READ_PLACE_CHAINS` "junctions" (the default) such an extra is read as the place in the
junction figures: it no longer counts against precision; recall (the place counts once) and
the streets and turns are scored as before. Merging it into the place for the streets too
("all", as a directly joined half is merged) is the fuller reading, but it moves street F1
both ways: the chain's streets out of the place then match the place's true streets, and an
extra that stood, by the 15 m node identity, for a missed true junction beyond the place
loses the credit it had for that junction's streets (Kaisaniemi (-45.2, -121.4), 13-14 m
from extras 1.7-1.9 m from their own true junctions). An extra more than 8 m from every true
junction of the place counts as before, whatever it is joined to.

A built graph that resolves a stub the truth contracted is not penalised for it either: a built
dead-end street stands for the nearest true dead-end street whose dead end and junction lie
within 8 m of its dead end and its other end, and when the truth contracted that one it is
contracted into its other end as the true one was, whatever its built length, and a junction it
leaves with fewer than three streets is no junction (``Score.contracted_stubs`` lists them). So a
video that ends 6 m up a true 5 m stub no longer makes an extra junction. The rule follows the
truth's decision, taken on the true length, rather than the built length: built dead ends come
out about 1 m short of the mapped ends (3.4 m at the 90th percentile), so a length rule on the
built side would take the junction of a true 8-10 m stub built 7 m long (round nineteen
measured 17 of 96 kept rows with OSM losing junctions so), and a rule that spared built stubs
standing for a kept true street would let made-up short stubs cost nothing elsewhere. Nothing
else is contracted: a built street is only ever removed where it stands, within the tolerance,
for a stub the truth itself dropped (so adding one there leaves every figure as it was), and
any other built street, short or not, counts as before (a made-up stub costs what it cost). A
short built street between two built junctions is not contracted (a junk street joining an
extra junction to a matched one would merge the extra away; the truth's own close pairs are
read as above).

Two true streets that cross with no node there (farther than 8 m from every true node: the
map lacks the shared node, which OSM validators flag as "crossing ways") are read as the
picture shows them where the build makes the crossing: the synthetic twin paints every street at
ground level, so its videos show a crossing there and a walker can turn. When a built junction
that matches no true one lies within 8 m of such a point, the truth is read with a junction
there splitting both streets (it counts in the recall's denominator and the junction is a hit);
when the build makes none (a build with OSM follows the map), the truth is read as the map
draws it and nothing is missed. Either reading is right, as for a staggered pair; a junction
built anywhere else costs what it cost (``_crossings_without_node``).

Two true streets out of a bend (a node with just those two, or a junction whose other streets
are stubs under 8 m to a dead end, which the reduction contracts) that stay within 4 m of each
other for 6 m or more (:mod:`city360.pose_graph.side_by_side`: a carriageway pair joined at the end
where the window cut the street on, a hairpin V's last metres) are read as the camera sees them
where the build makes a junction matching no true one within 8 m of where they part: one street
from the bend to a junction there, and the two streets on from it (when that one street is
under 8 m it is a stub the truth contracts, as above). No GPS parts lines 4 m apart, so a
build that walks up one and back down the other makes that junction; a build that makes none
there (with OSM, it follows the map) is scored against the truth as drawn. Lines 6 m or more
apart, or close for less than 6 m (a plain bend's arms), are read as drawn.

A true dead end that stops 6 m or less short of another street it runs into, the foot of the
gap farther than 8 m from every other true node (:mod:`city360.pose_graph.short_ends`:
Kalevankatu's east end, 5.2 m), is read as a T-junction at the foot where the build makes a
junction matching no true one within 8 m of it (:data:`READ_SHORT_ENDS`). The twin paints
both carriageways with round ends, so its pictures show them joined, and no GPS parts an end
5 m short from one at the street; a build that makes no junction there (with OSM, it follows
the map) is scored against the truth as drawn.

Turns are judged by geometry: the built edge arriving at the matched junction along a true
street, and its transition leaving along another true street, must carry the label the same
policy gives the true angles. A place the truth contracted and the build resolved into two
junctions (read as one, above) is judged through both: an arrival at either, and the route
on through the short built street between them to the street it leaves by, whose labels
(each by its action, rank 0) must add up to the true label (LEFT -1, UP 0, RIGHT +1): UP
then LEFT or LEFT then UP for LEFT, and a jog, LEFT then RIGHT, for UP. (Judged at one
junction only, every arrival at the other half counted wrong.) A built edge arriving within
30 degrees of two true streets (a fork's arms 18 degrees apart) is judged as arriving along the
nearer one only; a true street that no built edge is nearest to is judged by every edge within
30 degrees of it (:func:`_arrivals`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import networkx as nx
import numpy as np
from scipy.optimize import linear_sum_assignment

from city360.errors import CityFormatError
from city360.geo import angle_diff_deg, bearing_deg, mean_gap_m
from city360.pose_graph.graph import Edge, PoseGraph
from city360.pose_graph.short_ends import ShortEnd, join_short_end, short_ends
from city360.pose_graph.side_by_side import Parting, partings, split_at_parting
from city360.pose_graph.transitions import assign_labels
from city360.synth.groundtruth import SceneTruth

__all__ = [
    "DROP_PLACE_LOOPS",
    "MATCH_M",
    "NODE_IDENTITY_M",
    "READ_PLACE_CHAINS",
    "READ_SHORT_ENDS",
    "Score",
    "score",
    "score_city",
]

MATCH_M = 8.0
"""A built junction matches a true one within this distance, metres."""
NODE_IDENTITY_M = 15.0
"""A built node stands for a true node (any kind) within this distance, metres."""
READ_SHORT_ENDS = True
"""Read a true dead end that stops 6 m or less short of another street it runs into as a
T-junction on that street, where the build made one there
(:mod:`city360.pose_graph.short_ends`; False: the truth as drawn). On: measured on 179
cached twins without OSM (round twenty-seven, branch kamppi27), 27 rows better (Helsinki 22,
Kamppi 5: one-way+stops 8 P 0.923 -> 1.000, F1 0.920 -> 0.980, to target; one-way 7 P 0.800
-> 0.867), none worse in junction P, R, street F1 or turns; the other 152 equal. Fresh
twins (Kamppi seeds 45 and 46, Helsinki seed 5): without OSM 13 of 20 rows better, none
worse; with OSM none of 20 moved (the build follows the map there)."""

DROP_PLACE_LOOPS = True
"""Drop a true street that starts and ends in one contracted place (both its nodes joined by
streets under ``MATCH_M``) and never runs farther than ``MATCH_M`` from a node of that place:
it lies inside the place, which the reduction reads as one junction (Kaisaniemi's theatre
lanes: an 11.2 m and a 9.5 m way between two nodes of a knot of 5-7 m ways, round thirty-one,
branch kais31). The built side is read alike (round thirty-three, branch kosm33): a built
street from the junction matched to that place to itself, no longer than ``2 * MATCH_M``
(so never farther than ``MATCH_M`` from its junction), is dropped with it, one per dropped
loop; a longer built loop is a street of its own and counts as before. Measured: rescored
without OSM on the 120 kept twins, the 12 Kaisaniemi rows better (street F1 +0.010-0.014,
turns up), the other 108 equal; with OSM on the 73 Helsinki, suite and fresh twins, see
the design notes (round thirty-three): the one row it made worse on main's builds (Kaisaniemi
wander+stops 2, 0.932 -> 0.931) had a 49 m turn-back built as a loop at the knot, which the
truth's 11.2 m lane matched by its ends; with ``osm_dead_ends.PLACE_NODES`` that loop is a
spur and the row is better. False: such ways kept as loops of the truth."""

READ_PLACE_CHAINS: Literal["junctions", "all"] | None = "junctions"
"""Read extra built junctions joined to a contracted place's built junction through other
such extras, each within ``MATCH_M`` of its own true junction of the place, as that place
too, not only those joined to it directly (:func:`_read_as_one`, module docstring).
"junctions": in the junction figures (no invented junction; streets and turns as built);
"all": in the streets and turns too (merged into the place's junction, as a directly joined
one is). None: directly joined ones only (before round thirty-two). "junctions" since round
thirty-two (branch tangle32): rescored on 120 kept twins built with and without the vote
pile's parting, 120 OSM builds and 12 real walks, 12 rows better in precision (Kaisaniemi
10: parted coverage 0 P 0.765 -> 0.839; Nerima SW one-way 7 in both, 0.967 -> 1.000),
nothing else moves. "all" also moves street F1: up on 10 rows (Nerima SW one-way 7 0.950 -> 1.000),
down on 2 (Kaisaniemi parted wander 2 0.672 -> 0.649, unparted coverage 0 0.715 -> 0.705:
an extra of the place 1.7-1.9 m from its own true junction had stood, by the 15 m node
identity, for a missed true junction 13-14 m away, (-45.2, -121.4), and an inner street of
the tangle had been credited as that junction's street)."""


@dataclass
class Score:
    """Scores in [0, 1], the counts behind turn accuracy, and readable lists of what was
    missed (``missing_streets``), invented (``extra_streets``) or turned wrong. A street list
    names each pair of ends once (``x_m``, ``y_m`` to 0.1 m), with `` ×N`` when N streets
    join them."""

    junction_precision: float
    junction_recall: float
    edge_precision: float
    edge_recall: float
    edge_f1: float
    turns_total: int
    turns_right: int
    true_junctions: int = 0
    """Junctions of the resolvable truth (the recall's denominator)."""
    wrong_turns: list[str] = field(default_factory=list)
    missing_streets: list[str] = field(default_factory=list)
    extra_streets: list[str] = field(default_factory=list)
    contracted_stubs: list[str] = field(default_factory=list)
    """Built dead-end streets read as a true stub the truth contracted (module docstring)."""
    read_crossings: list[str] = field(default_factory=list)
    """Points where two true streets cross with no node and the build made the crossing, read
    with a junction there (module docstring)."""
    read_side_by_side: list[str] = field(default_factory=list)
    """Bends whose two true streets run closer than a camera parts them, where the build made
    the junction where they part: read as one street up to there (module docstring)."""
    missed_junctions: list[str] = field(default_factory=list)
    """True junctions no built junction matched (recall's misses), ``x_m``, ``y_m`` to 0.1 m."""
    extra_junctions: list[str] = field(default_factory=list)
    """Built junctions that matched no true one (precision's misses), with the distance to the
    nearest true junction, metres."""
    read_short_ends: list[str] = field(default_factory=list)
    """True dead ends a few metres short of a street they run into, where the build made a
    junction: read as a T there (module docstring, :data:`READ_SHORT_ENDS`)."""

    @property
    def turn_accuracy(self) -> float:
        return self.turns_right / self.turns_total if self.turns_total else 1.0


def _contract(graph: nx.MultiGraph) -> nx.MultiGraph:
    """Join the two streets at every degree-2 node (no self-loops) into one; a street's
    ``length_m`` (when its edges carry one) is the sum of its parts'."""
    graph = nx.MultiGraph(graph)
    changed = True
    while changed:
        changed = False
        for node in list(graph.nodes):
            if graph.degree[node] != 2:
                continue
            ends = [(v, d.get("length_m", 0.0)) for _, v, d in graph.edges(node, data=True)]
            if any(v == node for v, _ in ends):
                continue
            (a, length_a), (b, length_b) = ends
            graph.remove_node(node)
            graph.add_edge(a, b, length_m=length_a + length_b)
            changed = True
    return graph


def _without_contracted_stubs(
    streets: nx.MultiGraph,
    true_stubs: Sequence[tuple[tuple[float, float], tuple[float, float], bool]],
) -> tuple[nx.MultiGraph, set[int], list[str]]:
    """The built streets read as the truth's reduction reads the place they stand for: a
    built dead-end street stands for the true dead-end street whose junction and dead end lie
    within ``MATCH_M`` of its other end and its dead end (the nearest such, by the two gaps
    summed), and is contracted into its other end when the truth contracted that one (see the
    module docstring).

    ``streets``: built streets with degree-2 nodes contracted, each edge's ``length_m`` the
    street's length along its walks, metres, and each node's ``xy``; ``true_stubs``: (junction,
    dead end) positions, metres, of every true dead-end street, and whether the truth's
    reduction contracted it. One pass, on the degrees the streets had. Returns (the reduced
    streets, the nodes that are no junction of the reduced streets: gone, or left with fewer
    than three streets by a contraction; one readable line per contracted street)."""
    reduced = nx.MultiGraph(streets)
    lowered: set[int] = set()
    lines: list[str] = []
    for u, v, data in streets.edges(data=True):
        if u == v or not (streets.degree[u] == 1 or streets.degree[v] == 1):
            continue
        end, root = (u, v) if streets.degree[u] == 1 else (v, u)
        (ex, ey), (rx, ry) = streets.nodes[end]["xy"], streets.nodes[root]["xy"]
        gaps = [
            (float(np.hypot(rx - jx, ry - jy)), float(np.hypot(ex - dx, ey - dy)), contracted)
            for (jx, jy), (dx, dy), contracted in true_stubs
        ]
        near = [(a + b, contracted) for a, b, contracted in gaps if max(a, b) <= MATCH_M]
        if not near or not min(near)[1]:
            continue
        reduced.remove_node(end)
        if streets.degree[root] == 1:
            reduced.remove_node(root)
        else:
            lowered.add(root)
        ends = " ".join(_at(*streets.nodes[n]["xy"]) for n in (root, end))
        lines.append(f"built street {root}-{end} at {ends}, {data.get('length_m', 0.0):.1f} m")
    unmade = {n for n in lowered if n not in reduced or reduced.degree[n] < 3}
    return reduced, unmade | (set(streets.nodes) - set(reduced.nodes)), lines


def _match(
    pred: np.ndarray,
    true: np.ndarray,
    radius: float,
    *,
    members: Sequence[Sequence[tuple[float, float]]] | None = None,
) -> list[tuple[int, int]]:
    """One-to-one pairs (pred index, true index) within ``radius`` metres, least total
    distance first. ``members``: per true point, every true junction of the place it stands
    for (the truth's reduction contracted them into one); a point is then as near as the
    nearest of them."""
    if len(pred) == 0 or len(true) == 0:
        return []
    cost = np.hypot(pred[:, None, 0] - true[None, :, 0], pred[:, None, 1] - true[None, :, 1])
    for t, points in enumerate(members or []):
        if len(points) > 1:
            place = np.asarray(points, dtype=np.float64)
            gaps = np.hypot(
                pred[:, None, 0] - place[None, :, 0], pred[:, None, 1] - place[None, :, 1]
            )
            cost[:, t] = gaps.min(axis=1)
    rows, cols = linear_sum_assignment(np.where(cost <= radius, cost, 1e6))
    return [(int(r), int(c)) for r, c in zip(rows, cols, strict=True) if cost[r, c] <= radius]


def _chord(line: np.ndarray, near: float, far: float) -> float:
    """Bearing of travel towards line[0], measured from ``far`` to ``near`` metres before it."""
    arc = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(line, axis=0).T))])
    far = min(far, 0.6 * arc[-1])
    near = min(near, 0.2 * arc[-1])
    p_far = np.array([np.interp(far, arc, line[:, 0]), np.interp(far, arc, line[:, 1])])
    p_near = np.array([np.interp(near, arc, line[:, 0]), np.interp(near, arc, line[:, 1])])
    d = p_near - p_far
    return bearing_deg(float(d[0]), float(d[1]))


@dataclass(frozen=True)
class _Resolvable:
    """The true street graph as a camera can resolve it (see the module docstring).

    ``graph``: nodes are the kept true junctions (``xy``, metres); ``lines`` and ``ends``: the
    kept streets' polylines with their (u, v) after contraction; ``absorbed``: for each kept
    node that short streets were contracted into, the positions (metres) of every true
    junction (three or more streets) it stands for, its own first; ``stubs``: (junction, dead
    end) positions, metres, of every true dead-end street, and whether the reduction
    contracted it; ``inside``: loops dropped inside a place, per place."""

    graph: nx.MultiGraph
    lines: list[np.ndarray]
    ends: list[tuple[int, int]]
    absorbed: dict[int, list[tuple[float, float]]]
    stubs: list[tuple[tuple[float, float], tuple[float, float], bool]]
    inside: dict[int, int] = field(default_factory=dict)
    """Per kept node, how many true streets from it to itself :data:`DROP_PLACE_LOOPS`
    dropped as inside its place."""


def _drawn_once(truth: SceneTruth) -> list[tuple[int, int, np.ndarray]]:
    """The true streets (u, v, polyline in metres), a way drawn twice between the same nodes
    along the same line (mean gap under 5 m) kept once."""
    kept: list[tuple[int, int, np.ndarray]] = []
    for s in truth.streets:
        line = np.asarray(s.polyline_xy, dtype=np.float64)
        duplicate = False
        for u, v, other in kept:
            if (u, v) == (s.u, s.v) and len(other) and mean_gap_m(line, other) < 5.0:
                duplicate = True
                break
        if not duplicate:
            kept.append((s.u, s.v, line))
    return kept


def _resolvable(
    truth: SceneTruth,
    crossings: Sequence[tuple[float, float]] = (),
    sides: Sequence[Parting] = (),
    shorts: Sequence[ShortEnd] = (),
) -> _Resolvable:
    """The true street graph as a camera can resolve it (see the module docstring), with a
    node at each of ``crossings`` (points, metres, from :func:`_crossings_without_node`)
    splitting the two streets that cross there, and each of ``sides`` (from
    :func:`~city360.pose_graph.side_by_side.partings`) read as one street up to a node where
    its two streets part, and each of ``shorts`` (from
    :func:`~city360.pose_graph.short_ends.short_ends`) joined to the street it stops short of
    at a node cutting that street."""
    kept = _drawn_once(truth)
    position = {j.id: (j.x_m, j.y_m) for j in truth.junctions}
    crossing_ids = []
    for point in crossings:
        node = min([0, *position]) - 1  # true node ids are OSM ids, never negative
        position[node] = point
        crossing_ids.append(node)
        kept = [part for street in kept for part in _split_at(street, node, point)]
    for parting in sides:
        node = min([0, *position]) - 1
        position[node] = parting.point
        kept = split_at_parting(kept, parting, node, MATCH_M)
    for short in shorts:
        node = min([0, *position]) - 1
        position[node] = short.foot
        kept = [part for street in kept for part in _split_at(street, node, short.foot)]
        kept = join_short_end(kept, short, node)
    parent = {n: n for n in position}

    def root(n: int) -> int:
        while parent[n] != n:
            n = parent[n]
        return n

    degree: dict[int, int] = {}
    for u, v, _ in kept:
        degree[u] = degree.get(u, 0) + 1
        degree[v] = degree.get(v, 0) + 1
    stubs = []
    for u, v, line in kept:
        length = float(np.hypot(*np.diff(line, axis=0).T).sum())
        contracted = length < MATCH_M and root(u) != root(v)
        if contracted:
            a, b = root(u), root(v)
            if degree.get(b, 0) > degree.get(a, 0):
                a, b = b, a
            parent[b] = a
        # a dead end on a street: at a junction (a bend's, say one a parting's reading left,
        # is no junction for a built stub to stand at)
        if (degree[u] == 1) != (degree[v] == 1) and max(degree[u], degree[v]) >= 3:
            end, tee = (u, v) if degree[u] == 1 else (v, u)
            stubs.append((position[tee], position[end], contracted))
    graph = nx.MultiGraph()
    for n in position:
        if root(n) == n:
            graph.add_node(n, xy=position[n])
    place_of: dict[int, list[tuple[float, float]]] = {}
    for n in position:
        place_of.setdefault(root(n), []).append(position[n])
    lines, ends = [], []
    inside: dict[int, int] = {}
    for u, v, line in kept:
        a, b = root(u), root(v)
        if a == b and float(np.hypot(*np.diff(line, axis=0).T).sum()) < MATCH_M:
            continue
        if a == b and DROP_PLACE_LOOPS and _inside_place(line, place_of[a]):
            inside[a] = inside.get(a, 0) + 1
            continue
        graph.add_edge(a, b)
        lines.append(line)
        ends.append((a, b))
    members: dict[int, list[tuple[float, float]]] = {}
    for n in position:
        if degree.get(n, 0) >= 3:
            members.setdefault(root(n), []).append(position[n])
    absorbed = {
        r: [position[r], *[xy for xy in group if xy != position[r]]]
        for r, group in members.items()
        if len(group) > 1 and r in graph
    }
    return _Resolvable(graph, lines, ends, absorbed, stubs, inside)


def _without_inside_loops(streets: nx.MultiGraph, inside: dict[int, int]) -> nx.MultiGraph:
    """``streets`` (built, contracted; each edge's ``length_m``, metres) without the built
    streets from a junction to itself that stand for the true loops :data:`DROP_PLACE_LOOPS`
    dropped inside the place the junction matched (``inside``: built junction -> how many):
    at most that many, each no longer than ``2 * MATCH_M``, so that no point of it lies
    farther than ``MATCH_M`` from its junction along the walk, nor so as the crow flies. The
    truth's loop inside the place and the build's loop at the junction standing for it are
    one thing; only one side read so would cost a build that made it."""
    reduced = nx.MultiGraph(streets)
    for node, count in inside.items():
        loops = sorted(
            (data.get("length_m", np.inf), key)  # a loop of unknown length stays
            for _, v, key, data in streets.edges(node, keys=True, data=True)
            if v == node
        )
        for length, key in loops[:count]:
            if length <= 2 * MATCH_M:
                reduced.remove_edge(node, node, key)
    return reduced


def _inside_place(line: np.ndarray, place: Sequence[tuple[float, float]]) -> bool:
    """Whether every point of ``line`` (metres, sampled every metre) lies within ``MATCH_M``
    of a node of ``place`` (positions, metres: the true nodes contracted into one)."""
    arc = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(line, axis=0).T))])
    at = np.linspace(0.0, arc[-1], max(2, int(np.ceil(arc[-1])) + 1))
    points = np.column_stack([np.interp(at, arc, line[:, 0]), np.interp(at, arc, line[:, 1])])
    nodes = np.asarray(place, dtype=np.float64)
    gaps = np.hypot(points[:, None, 0] - nodes[None, :, 0], points[:, None, 1] - nodes[None, :, 1])
    return bool((gaps.min(axis=1) <= MATCH_M).all())


def _split_at(
    street: tuple[int, int, np.ndarray], node: int, point: tuple[float, float]
) -> list[tuple[int, int, np.ndarray]]:
    """``street`` (u, v, polyline) cut in two at ``point`` with ``node`` between the halves
    when its polyline passes within 0.5 m of ``point``; else unchanged."""
    from shapely.geometry import LineString, Point

    u, v, line = street
    shape = LineString(line)
    if shape.distance(Point(point)) > 0.5:
        return [street]
    arc = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(line, axis=0).T))])
    at = shape.project(Point(point))
    inner = (arc > at) & (arc < arc[-1])
    before = np.vstack([line[: int(np.searchsorted(arc, at, side="right"))], [point]])
    after = np.vstack([[point], line[inner], line[-1:]])
    return [(u, node, before), (node, v, after)]


def _crossings_without_node(truth: SceneTruth) -> list[tuple[float, float]]:
    """Points (metres) where two true streets cross with no node there: farther than
    ``MATCH_M`` from every true node (junction, bend or dead end). The map lacks the shared
    node (an OSM drawing error; the synthetic twin paints every street at ground level, so its
    pictures show a crossing there)."""
    from shapely.geometry import LineString, Point

    nodes = np.array([(j.x_m, j.y_m) for j in truth.junctions]).reshape(-1, 2)
    lines = [LineString(s.polyline_xy) for s in truth.streets if len(s.polyline_xy) >= 2]
    found: list[tuple[float, float]] = []
    for i, first in enumerate(lines):
        for second in lines[i + 1 :]:
            if not first.crosses(second):
                continue
            where = first.intersection(second)
            for point in getattr(where, "geoms", [where]):
                if not isinstance(point, Point):
                    continue
                xy = (float(point.x), float(point.y))
                far = np.hypot(nodes[:, 0] - xy[0], nodes[:, 1] - xy[1]).min() > MATCH_M
                if far and all(np.hypot(xy[0] - x, xy[1] - y) > MATCH_M for x, y in found):
                    found.append(xy)
    return found


def _at(x_m: float, y_m: float) -> str:
    """A point as the score lists print it, to 0.1 m (the truth is exact, a built node is not)."""
    return f"({x_m:.1f}, {y_m:.1f})"


def _once(lines: list[str]) -> list[str]:
    """Each line once, in first-seen order, with `` ×N`` when N streets join the same two
    ends (parallel streets, or one street built once per pass, print alike)."""
    counts = Counter(lines)
    return [line if counts[line] == 1 else f"{line} ×{counts[line]}" for line in counts]


def score_city(city_dir: str | Path) -> Score:
    """Score ``city_dir``'s built ``graph.json`` against its ``groundtruth/scene.json``.

    Raises :class:`CityFormatError` when the city has no ground truth (only ``synth`` cities
    have one) or no graph.
    """
    from city360.city import CityDir
    from city360.pose_graph.graph import load_graph

    city = CityDir(city_dir)
    truth_path = city.groundtruth_dir / "scene.json"
    if not truth_path.is_file():
        msg = (
            f"{truth_path} not found: only cities made by `city360 synth` have ground truth to "
            "score against"
        )
        raise CityFormatError(msg)
    if not city.graph_path.is_file():
        msg = (
            f"{city.graph_path} not found; build the pose graph first: `city360 build {city.root}`"
        )
        raise CityFormatError(msg)
    return score(load_graph(city, require_frames=False), SceneTruth.load(truth_path))


def _read_as_one(
    streets: nx.MultiGraph,
    extras: list[int],
    place_nodes: dict[int, int],
    xy: dict[int, tuple[float, float]],
    absorbed: dict[int, list[tuple[float, float]]],
    *,
    chain: bool = False,
) -> dict[int, int]:
    """Extra built junctions that resolve a place the truth's reduction contracted (true
    junctions joined by a street shorter than ``MATCH_M``), read as that one place.

    ``place_nodes``: the built junction matched to each contracted place (true node id ->
    built node); ``extras``: the built junctions matched to nothing. The place's built
    junction and the extras joined to it by a built street are assigned to the place's true
    junctions (``absorbed``, metres), one each: as many pairs within ``MATCH_M`` as can be,
    then the nearest (the place's built junction always stands at one of them, not
    necessarily the place's own position). An extra so paired is that place's other half,
    not an invented junction. Only extras are read so: a built junction that matches a true
    one keeps it. ``chain``: then, round by round, the extras joined by a built street to one
    already so read, each assigned to a true junction of the place left, as long as any is
    (:data:`READ_PLACE_CHAINS`).
    Returns {merged-away node: kept node}."""
    merged: dict[int, int] = {}
    for place, members in absorbed.items():
        kept = place_nodes.get(place)
        if kept is None or kept not in streets:
            continue
        group = [kept]
        while True:
            near = [
                n
                for n in extras
                if n not in merged
                and n in streets
                and any(streets.has_edge(n, g) for g in (group if chain else group[:1]))
            ]
            if not near:
                break
            built = [*group, *near]
            gaps = np.array(
                [
                    [float(np.hypot(xy[b][0] - mx, xy[b][1] - my)) for mx, my in members]
                    for b in built
                ]
            )
            # one built junction per true junction of the place, as many within MATCH_M as can
            # be (then nearest); the junctions already read as the place keep theirs
            cost = np.where(gaps <= MATCH_M, gaps, 1e6)
            cost[: len(group)] -= 1e7
            rows, cols = linear_sum_assignment(cost)
            taken = [
                built[r]
                for r, c in zip(rows, cols, strict=True)
                if r >= len(group) and gaps[r, c] <= MATCH_M
            ]
            for node in taken:
                merged[node] = kept
            group += taken
            if not (chain and taken):
                break
    return merged


def _match_places(
    built_xy: np.ndarray,
    true_junctions: Sequence[int],
    pairs: Sequence[tuple[int, int]],
    absorbed: dict[int, list[tuple[float, float]]],
) -> list[tuple[int, int]]:
    """More (built index, true index) pairs: a contracted place no built junction matched by
    its own position, matched to a built junction left over within ``MATCH_M`` of another of
    its true junctions (``absorbed``, metres). The place's position is one of its junctions
    (the one with most streets), so a build standing at another of them stands at the
    place."""
    taken_built = {p for p, _ in pairs}
    taken_true = {t for _, t in pairs}
    free_built = [p for p in range(len(built_xy)) if p not in taken_built]
    places = [
        t
        for t, n in enumerate(true_junctions)
        if t not in taken_true and len(absorbed.get(n, [])) > 1
    ]
    if not free_built or not places:
        return []
    members = [absorbed[true_junctions[t]] for t in places]
    centres = np.array([m[0] for m in members], dtype=np.float64)
    found = _match(built_xy[free_built], centres, MATCH_M, members=members)
    return [(free_built[p], places[t]) for p, t in found]


def _crossings_built(
    graph: nx.MultiDiGraph,
    xy: dict[int, tuple[float, float]],
    resolvable: _Resolvable,
    crossings: Sequence[tuple[float, float]],
) -> list[tuple[float, float]]:
    """The points of ``crossings`` (metres: crossings without node, or where side-by-side
    streets part) where the build has a junction within ``MATCH_M`` that matches no true
    junction of ``resolvable``: there the truth is read as the build made it."""
    true = resolvable.graph
    true_xy = np.array([true.nodes[n]["xy"] for n in true if true.degree[n] >= 3])
    built = [n for n, d in graph.nodes(data=True) if d["kind"] == "junction"]
    built_xy = np.array([xy[n] for n in built]).reshape(-1, 2)
    matched = {p for p, _ in _match(built_xy, true_xy.reshape(-1, 2), MATCH_M)}
    free = np.array([built_xy[i] for i in range(len(built)) if i not in matched]).reshape(-1, 2)
    return [
        (cx, cy)
        for cx, cy in crossings
        if len(free) and float(np.hypot(free[:, 0] - cx, free[:, 1] - cy).min()) <= MATCH_M
    ]


def score(pose_graph: PoseGraph, truth: SceneTruth) -> Score:
    """Score ``pose_graph`` against ``truth`` (see the module docstring)."""
    graph = pose_graph.graph
    xy = {n: (float(d["x_m"]), float(d["y_m"])) for n, d in graph.nodes(data=True)}
    resolvable = _resolvable(truth)
    crossings = _crossings_without_node(truth)
    sides = partings(_drawn_once(truth), MATCH_M)
    shorts = (
        short_ends(_drawn_once(truth), {j.id: (j.x_m, j.y_m) for j in truth.junctions}, MATCH_M)
        if READ_SHORT_ENDS
        else []
    )
    if crossings or sides or shorts:  # the picture's reading where the build makes it
        points = [*crossings, *(p.point for p in sides), *(s.foot for s in shorts)]
        made = set(_crossings_built(graph, xy, resolvable, points))
        crossings = [point for point in crossings if point in made]
        sides = [parting for parting in sides if parting.point in made]
        shorts = [short for short in shorts if short.foot in made]
        resolvable = _resolvable(truth, crossings, sides, shorts)
    bends = {j.id: (j.x_m, j.y_m) for j in truth.junctions}
    true_graph, true_lines, true_ends = resolvable.graph, resolvable.lines, resolvable.ends
    true_contracted = _contract(true_graph)
    true_junctions = [n for n in true_graph if true_graph.degree[n] >= 3]
    true_xy = np.array([true_graph.nodes[n]["xy"] for n in true_junctions])

    # streets: one undirected edge per built street, degree-2 nodes contracted
    pred_streets = nx.MultiGraph()
    pred_streets.add_nodes_from((n, {"xy": xy[n]}) for n in graph.nodes)
    passes: dict[int, list[float]] = {}
    ends_of: dict[int, tuple[int, int]] = {}
    for edge in pose_graph.edges():
        passes.setdefault(edge.street, []).append(edge.length_m)
        ends_of.setdefault(edge.street, (edge.u, edge.v))
    for street, (u, v) in ends_of.items():
        pred_streets.add_edge(u, v, length_m=float(np.median(passes[street])))
    pred_reduced, unmade, contracted_stubs = _without_contracted_stubs(
        _contract(pred_streets), resolvable.stubs
    )
    pred_contracted = _contract(pred_reduced)
    built_junctions = [
        n for n, d in graph.nodes(data=True) if d["kind"] == "junction" and n not in unmade
    ]
    built_xy = np.array([xy[n] for n in built_junctions]).reshape(-1, 2)
    pairs = _match(built_xy, true_xy.reshape(-1, 2), MATCH_M)
    pairs += _match_places(built_xy, true_junctions, pairs, resolvable.absorbed)
    matched = {built_junctions[p] for p, _ in pairs}
    read = [
        _read_as_one(
            pred_contracted,
            [n for n in built_junctions if n not in matched],
            {true_junctions[t]: built_junctions[p] for p, t in pairs},
            xy,
            resolvable.absorbed,
            chain=chain,
        )
        for chain in (False, True)
    ]
    # through a chain: no invented junction, and the streets and turns too with "all"
    chained = read[1] if READ_PLACE_CHAINS else read[0]
    merged = chained if READ_PLACE_CHAINS == "all" else read[0]
    for gone, kept in merged.items():
        pred_contracted = nx.contracted_nodes(pred_contracted, kept, gone, self_loops=False)
    pred_contracted = _contract(pred_contracted)
    pred_junctions = [n for n in built_junctions if n not in merged and n not in chained]
    index = {n: i for i, n in enumerate(pred_junctions)}
    pairs = [(index[built_junctions[p]], t) for p, t in pairs]
    if resolvable.inside:  # the built side of DROP_PLACE_LOOPS
        pred_contracted = _contract(
            _without_inside_loops(
                pred_contracted,
                {pred_junctions[p]: resolvable.inside.get(true_junctions[t], 0) for p, t in pairs},
            )
        )
    # no junction built: perfect precision only if there was none to build (recall says the rest)
    precision = len(pairs) / len(pred_junctions) if pred_junctions else float(not true_junctions)
    recall = len(pairs) / len(true_junctions) if true_junctions else 1.0

    all_true = [n for n in true_contracted]
    all_pred = [n for n in pred_contracted]
    pairs_all = _match(
        np.array([xy[n] for n in all_pred]).reshape(-1, 2),
        np.array([true_graph.nodes[n]["xy"] for n in all_true]).reshape(-1, 2),
        NODE_IDENTITY_M,
    )
    to_true = {all_pred[p]: all_true[t] for p, t in pairs_all}
    true_set: dict[tuple[int, int], int] = {}
    for u, v in true_contracted.edges():
        key = (min(u, v), max(u, v))
        true_set[key] = true_set.get(key, 0) + 1
    hits = 0
    pred_total = 0
    extra: list[str] = []
    remaining = dict(true_set)
    for u, v in pred_contracted.edges():
        pred_total += 1
        if u in to_true and v in to_true:
            key = (min(to_true[u], to_true[v]), max(to_true[u], to_true[v]))
            if remaining.get(key, 0) > 0:
                remaining[key] -= 1
                hits += 1
                continue
        ends = [_at(graph.nodes[n]["x_m"], graph.nodes[n]["y_m"]) for n in (u, v)]
        extra.append(f"built street {u}-{v} at {ends[0]}-{ends[1]}")
    missing = []
    for (a, b), left in remaining.items():
        ends = [_at(*true_graph.nodes[n]["xy"]) for n in (a, b)]
        missing.extend([f"true street {a}-{b} at {ends[0]}-{ends[1]}"] * left)
    true_total = sum(true_set.values())
    e_p = hits / pred_total if pred_total else 0.0
    e_r = hits / true_total if true_total else 1.0
    f1 = 2 * e_p * e_r / (e_p + e_r) if e_p + e_r else 0.0

    halves: dict[int, set[int]] = {}
    for gone, kept in merged.items():
        halves.setdefault(kept, {kept}).add(gone)
    turns_total, turns_right, wrong = _score_turns(
        pose_graph, true_lines, true_ends, true_junctions, pairs, pred_junctions, halves
    )
    missed, invented = _unmatched_junctions(
        [xy[n] for n in pred_junctions], true_xy.reshape(-1, 2), pairs
    )
    return Score(
        precision,
        recall,
        e_p,
        e_r,
        f1,
        turns_total,
        turns_right,
        len(true_junctions),
        wrong,
        _once(missing),
        _once(extra),
        contracted_stubs,
        [f"true streets crossing at {_at(x, y)}, no node in the map" for x, y in crossings],
        [
            f"true streets side by side from {_at(*bends[p.node])} for {p.arc_m:.1f} m "
            f"(at most {p.gap_m:.1f} m apart), parting at {_at(*p.point)}"
            for p in sides
        ],
        missed,
        invented,
        [
            f"true dead end at {_at(*s.end)} {s.gap_m:.1f} m short of a street, "
            f"read as a T at {_at(*s.foot)}"
            for s in shorts
        ],
    )


def _unmatched_junctions(
    built_xy: Sequence[tuple[float, float]],
    true_xy: np.ndarray,
    pairs: Sequence[tuple[int, int]],
) -> tuple[list[str], list[str]]:
    """The score's lists of missed true junctions and of built junctions that match none
    (metres; ``pairs`` index ``built_xy`` and ``true_xy``)."""
    matched_built = {p for p, _ in pairs}
    matched_true = {t for _, t in pairs}
    missed = [
        f"true junction at {_at(*true_xy[t])}" for t in range(len(true_xy)) if t not in matched_true
    ]
    invented = []
    for k, (x, y) in enumerate(built_xy):
        if k in matched_built:
            continue
        near = (
            f", {float(np.min(np.hypot(true_xy[:, 0] - x, true_xy[:, 1] - y))):.1f} m from the "
            "nearest true junction"
            if len(true_xy)
            else ""
        )
        invented.append(f"built junction at {_at(x, y)}{near}")
    return missed, invented


def _stable(turns: list[float], labels: Sequence[tuple[str, int]]) -> list[bool]:
    """Whether each label survives moving any one angle by ±8° (else the junction is
    symmetric enough that the policy's choice is a coin toss, and not scored)."""
    firm = [True] * len(turns)
    for i in range(len(turns)):
        for delta in (-8.0, 8.0):
            moved = list(turns)
            moved[i] += delta
            for k, (a, b) in enumerate(zip(labels, assign_labels(moved), strict=True)):
                if a != b:
                    firm[k] = False
    return firm


def _routes(
    pose_graph: PoseGraph, arrival: str, place: set[int]
) -> list[tuple[list[tuple[str, int]], str]]:
    """Every way through ``place`` (its built junctions) from edge ``arrival``: the
    (label, rank) of each transition taken, and the edge it leaves the place by. A transition
    onto a built street between two of the place's junctions is followed on (each junction
    once); any other ends the route."""
    routes: list[tuple[list[tuple[str, int]], str]] = []

    def walk(edge_id: str, taken: list[tuple[str, int]], seen: set[int]) -> None:
        for tr in pose_graph.edge(edge_id).transitions:
            nxt = pose_graph.edge(tr.edge)
            step = [*taken, (tr.label, tr.rank)]
            if not _inside(nxt, place):
                routes.append((step, tr.edge))
            elif nxt.v not in seen:
                walk(tr.edge, step, seen | {nxt.v})

    walk(arrival, [], {pose_graph.edge(arrival).v})
    return routes


INSIDE_MAX_M = 3 * MATCH_M
"""Longest built street followed through a place built as several junctions, metres. Its
halves stand within ``MATCH_M`` of true junctions under ``MATCH_M`` apart, so no two are
farther apart than this; a longer street joining them goes round a block, not across the
place."""


def _inside(edge: Edge, place: set[int]) -> bool:
    """Whether a built street joins two of a place's junctions across the place: its ends
    are two of them (a loop at one junction leaves the place and comes back: it is a street
    of its own) and it is no longer than ``INSIDE_MAX_M``."""
    return (
        edge.u != edge.v and edge.u in place and edge.v in place and edge.length_m <= INSIDE_MAX_M
    )


_SIDE = {"LEFT": -1, "UP": 0, "RIGHT": 1}
"""Each label's side, for adding up the turns of a route through a place (:func:`_takes`)."""


def _takes(labels: list[tuple[str, int]], label: str) -> bool:
    """Whether a route's labels take a turn labelled ``label`` at a place: every step by its
    action (rank 0), and the sides adding up to the label's (at one junction: that label; at
    two, straight on then the label, the label then straight on, or a jog LEFT then RIGHT
    for UP)."""
    return (
        all(rank == 0 for _, rank in labels)
        and sum(_SIDE[lab] for lab, _ in labels) == _SIDE[label]
    )


HEADING_WINDOW_DEG = 30.0
"""Widest difference, degrees, between a built edge's heading at a junction and a true
street's heading there (arriving or leaving) for the edge to be judged as running along that
street."""


def _arrivals(pose_graph: PoseGraph, incoming: list[str], arrive: list[float], k: int) -> list[str]:
    """The built edges (keys, from ``incoming``) judged as arriving along true street ``k``
    (``arrive``: each true street's heading into the junction, degrees clockwise from north):
    those within ``HEADING_WINDOW_DEG`` of it that no other true street is nearer in heading.
    A fork's two arms 18 degrees apart each have their own built edge, and the edge along one
    arm is not judged as arriving along the other. When no built edge is nearest to street
    ``k`` (the build drew two close arms as one street), every edge within the window is
    judged for it, so a merged arm counts for both as it did before."""
    near: list[str] = []
    own: list[str] = []
    for key in incoming:
        gaps = [abs(angle_diff_deg(pose_graph.edge(key).end_heading_deg, a)) for a in arrive]
        if gaps[k] < HEADING_WINDOW_DEG:
            near.append(key)
            if gaps[k] <= min(gaps):
                own.append(key)
    return own or near


def _score_turns(
    pose_graph: PoseGraph,
    true_lines: list[np.ndarray],
    true_ends: list[tuple[int, int]],
    true_junctions: list[int],
    pairs: list[tuple[int, int]],
    pred_junctions: list[int],
    halves: dict[int, set[int]] | None = None,
) -> tuple[int, int, list[str]]:
    """Turns right and judged at the matched junctions (module docstring). ``halves``: for a
    place built as several junctions (read as one by :func:`_read_as_one`), the built node it
    was matched by -> all of them; a turn there is judged along the route through the
    place's streets (:func:`_routes`, :func:`_takes`)."""
    by_node: dict[int, list[np.ndarray]] = {}
    for line, (u, v) in zip(true_lines, true_ends, strict=True):
        by_node.setdefault(u, []).append(line)  # starting at u
        by_node.setdefault(v, []).append(line[::-1])
    total = right = 0
    wrong: list[str] = []
    for p, t in pairs:
        true_id = true_junctions[t]
        node = pred_junctions[p]
        place = (halves or {}).get(node, {node})
        lines = by_node[true_id]
        # heading arriving along street k (travel towards the node) and leaving along street m
        arrive = [(_chord(line, 5.0, 20.0) + 0.0) for line in lines]
        leave = [(_chord(line, 5.0, 20.0) + 180.0) % 360.0 for line in lines]
        incoming = [
            key
            for at in sorted(place)
            for _, _, key in pose_graph.graph.in_edges(at, keys=True)
            if not _inside(pose_graph.edge(key), place)
        ]
        for k in range(len(lines)):
            others = [m for m in range(len(lines)) if m != k]
            turns = [angle_diff_deg(leave[m], arrive[k]) for m in others]
            labels = assign_labels(turns)
            stable = _stable(turns, labels)
            candidates = _arrivals(pose_graph, incoming, arrive, k)
            for m, (label, rank), firm in zip(others, labels, stable, strict=True):
                if rank or not firm:
                    continue
                total += 1
                ok = bool(candidates)
                for key in candidates:
                    offered = [
                        steps
                        for steps, out in _routes(pose_graph, key, place)
                        if abs(angle_diff_deg(pose_graph.edge(out).start_heading_deg, leave[m]))
                        < HEADING_WINDOW_DEG
                    ]
                    if not any(_takes(steps, label) for steps in offered):
                        ok = False
                if ok:
                    right += 1
                else:
                    wrong.append(f"junction {true_id}: street {k}->{m} should be {label}")
    return total, right, wrong
