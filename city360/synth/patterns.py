"""Filming patterns: the ways a person walks a district with a 360° camera.

:data:`FILMING_PATTERNS` names them; :func:`plan_routes` plans one:

- ``coverage`` (the default): every street once in each direction, turning as little as
  possible (:func:`city360.synth.routes.plan_coverage_routes`, unchanged).
- ``one-way``: every street exactly once, in one direction. An undirected street graph with
  2k odd-degree junctions splits into k trails (one closed walk where there are none) and no
  fewer, so that is the fewest videos that film nothing twice. The odd junctions of each
  connected part are paired nearest first, joined by a virtual street, and an Euler circuit of
  the result is cut at the virtual streets (where the person stops the camera and walks on).
  Trails longer than ``max_video_m`` are cut at junctions as coverage cuts its walks.
- ``wander``: long random walks. At a junction the walker prefers a street not yet filmed
  (:data:`WANDER_NEW_STREET_P`), else heads for the nearest one, else strolls anywhere but back;
  on a street already filmed they sometimes turn back midway (:data:`WANDER_TURN_BACK_P`), so
  the walks cross themselves, double back mid-street, revisit streets partly and go in and out
  of dead ends (out-and-back spurs). Each video after the first starts at a junction of the
  previous one, so the walks overlap partly. A street is turned back on only once it has been
  filmed whole, so every street filmed at all is filmed end to end at least once and the
  filmed part of the truth is exactly the streets in some ``Route.arcs``. Walking stops when
  every street is filmed or :data:`WANDER_BUDGET` times the street length is.

Stops and speed changes combine with any pattern (:mod:`city360.synth.stops`).

All randomness comes from the seed (``np.random.default_rng([seed, ...])``), and graph orders
are sorted, so a seed gives the same routes. Coordinates are metres in the city CRS.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Final

import networkx as nx
import numpy as np
import numpy.typing as npt

from city360.errors import ConfigError, did_you_mean
from city360.synth.routes import (
    DEFAULT_MAX_VIDEO_M,
    Arc,
    Route,
    arcs_of,
    cut_walk,
    plan_coverage_routes,
    route_from_arcs,
)

__all__ = [
    "FILMING_PATTERNS",
    "WANDER_BUDGET",
    "WANDER_NEW_STREET_P",
    "WANDER_TURN_BACK_P",
    "check_pattern",
    "plan_one_way_routes",
    "plan_routes",
    "plan_wander_routes",
]

FILMING_PATTERNS: Final = ("coverage", "one-way", "wander")
"""Names :func:`plan_routes` knows (``city360 synth --pattern``)."""

WANDER_NEW_STREET_P = 0.85
"""Chance that a wanderer at a junction with an unfilmed street takes one of them."""
WANDER_TURN_BACK_P = 0.2
"""Chance of turning back midway along a street already filmed (0.3-0.7 of its length)."""
WANDER_BUDGET = 2.5
"""A wander ends once it has filmed this many times the street network's length."""
_TURN_BACK_MIN_M = 20.0
"""Streets shorter than this are never turned back on midway (metres)."""


def check_pattern(pattern: str) -> str:
    """``pattern`` if it is one of :data:`FILMING_PATTERNS`, else a :class:`ConfigError`."""
    if pattern not in FILMING_PATTERNS:
        msg = (
            f"unknown filming pattern {pattern!r}; expected one of "
            f"{', '.join(FILMING_PATTERNS)}.{did_you_mean(pattern, FILMING_PATTERNS)}"
        )
        raise ConfigError(msg)
    return pattern


def plan_routes(
    graph: nx.MultiGraph,
    *,
    pattern: str = "coverage",
    seed: int = 0,
    max_video_m: float = DEFAULT_MAX_VIDEO_M,
    name_prefix: str = "walk",
) -> list[Route]:
    """Routes filming ``graph`` the way ``pattern`` says (see the module docstring).

    ``graph`` is the undirected street graph of :func:`plan_coverage_routes`; ``seed`` matters
    to ``wander`` only. Videos are named ``<name_prefix>_000``, ...
    """
    check_pattern(pattern)
    if not max_video_m > 0:
        msg = f"`max_video_m` must be > 0, got {max_video_m}"
        raise ConfigError(msg)
    if pattern == "coverage":
        return plan_coverage_routes(graph, max_video_m=max_video_m, name_prefix=name_prefix)
    arcs = arcs_of(graph)
    if not arcs:
        msg = "the street graph has no streets of non-zero length to film"
        raise ConfigError(msg)
    if pattern == "one-way":
        return plan_one_way_routes(arcs, max_video_m=max_video_m, name_prefix=name_prefix)
    return plan_wander_routes(arcs, seed=seed, max_video_m=max_video_m, name_prefix=name_prefix)


# one-way -------------------------------------------------------------------------------------
def _node_xy(arcs: list[Arc]) -> dict[Hashable, npt.NDArray[np.float64]]:
    xy: dict[Hashable, npt.NDArray[np.float64]] = {}
    for arc in arcs:
        xy.setdefault(arc.u, arc.polyline_xy[0])
        xy.setdefault(arc.v, arc.polyline_xy[-1])
    return xy


def plan_one_way_routes(
    arcs: list[Arc], *, max_video_m: float = DEFAULT_MAX_VIDEO_M, name_prefix: str = "walk"
) -> list[Route]:
    """Every street of ``arcs`` (both directions of each, as :func:`arcs_of` gives them)
    filmed exactly once, in the fewest trails (see the module docstring)."""
    index = {arc.id: n for n, arc in enumerate(arcs)}
    streets = nx.MultiGraph()
    for arc in arcs[::2]:  # arcs_of lists each street forward, then backward
        streets.add_edge(arc.u, arc.v, key=("street", arc.key))
    xy = _node_xy(arcs)
    walks: list[list[int]] = []
    for part in sorted(nx.connected_components(streets), key=lambda c: min(map(repr, c))):
        nodes = sorted(part, key=repr)
        sub = nx.MultiGraph(streets.subgraph(nodes))
        odd = [n for n in nodes if sub.degree[n] % 2 == 1]
        for pair, (a, b) in enumerate(_pair_nearest(odd, xy)):
            sub.add_edge(a, b, key=("camera off", pair))
        start = odd[0] if odd else nodes[0]
        circuit = list(nx.eulerian_circuit(sub, source=start, keys=True))
        off = [n for n, (_, _, key) in enumerate(circuit) if key[0] == "camera off"]
        if off:  # begin right after a camera-off walk, so no trail wraps round the end
            circuit = circuit[off[0] + 1 :] + circuit[: off[0] + 1]
        pieces: list[list[int]] = [[]]
        for u, v, (kind, street_key) in circuit:
            if kind == "camera off":
                pieces.append([])
            else:
                pieces[-1].append(index[(u, v, street_key)])
        for piece in filter(None, pieces):
            walks.extend(cut_walk(arcs, piece, max_video_m=max_video_m))
    return [route_from_arcs(arcs, walk, f"{name_prefix}_{n:03d}") for n, walk in enumerate(walks)]


def _pair_nearest(
    odd: list[Hashable], xy: dict[Hashable, npt.NDArray[np.float64]]
) -> list[tuple[Hashable, Hashable]]:
    """Pair the odd-degree nodes, the closest remaining pair first (the camera-off walks
    between trails stay short; which pairing does not change the number of trails)."""
    left = list(odd)
    pairs: list[tuple[Hashable, Hashable]] = []
    if not left:
        return pairs
    points = np.array([xy[n] for n in left], np.float64)
    dist = np.hypot(*(points[:, None, :] - points[None, :, :]).transpose(2, 0, 1))
    np.fill_diagonal(dist, np.inf)
    alive = np.ones(len(left), bool)
    rows, cols = np.unravel_index(np.argsort(dist, axis=None, kind="stable"), dist.shape)
    for i, j in zip(rows, cols, strict=True):
        if i < j and alive[i] and alive[j]:
            pairs.append((left[int(i)], left[int(j)]))
            alive[i] = alive[j] = False
    return pairs


# wander --------------------------------------------------------------------------------------
class _Wanderer:
    """The state of a wander: which streets are filmed, where arcs leave each node."""

    def __init__(self, arcs: list[Arc], rng: np.random.Generator) -> None:
        self.arcs = arcs
        self.rng = rng
        self.leaving: dict[Hashable, list[int]] = {}
        for n, arc in enumerate(arcs):
            self.leaving.setdefault(arc.u, []).append(n)
        self.filmed: set[int] = set()  # street index = arc index // 2
        self.streets = nx.Graph()
        for n, arc in enumerate(arcs):
            weight = arc.length_m
            if self.streets.has_edge(arc.u, arc.v):
                weight = min(weight, self.streets.edges[arc.u, arc.v]["weight"])
            self.streets.add_edge(arc.u, arc.v, weight=weight, arc=n)

    def unfilmed_left(self) -> bool:
        return len(self.filmed) < len(self.arcs) // 2

    def next_arc(self, node: Hashable, came_on: int | None) -> int:
        """The arc the walker takes leaving ``node`` after arriving on arc ``came_on``."""
        outs = self.leaving[node]
        back = [n for n in outs if came_on is not None and n // 2 == came_on // 2]
        onward = [n for n in outs if n not in back] or outs  # a dead end: back is all there is
        new = [n for n in onward if n // 2 not in self.filmed]
        if new and self.rng.random() < WANDER_NEW_STREET_P:
            return int(new[int(self.rng.integers(len(new)))])
        if not new and self.unfilmed_left():
            towards = self._towards_unfilmed(node, onward)
            if towards is not None and self.rng.random() < WANDER_NEW_STREET_P:
                return towards
        return int(onward[int(self.rng.integers(len(onward)))])

    def _towards_unfilmed(self, node: Hashable, onward: list[int]) -> int | None:
        """The first arc of the shortest way from ``node`` to a street not yet filmed."""
        ends = {
            end
            for n, arc in enumerate(self.arcs)
            if n // 2 not in self.filmed
            for end in (arc.u, arc.v)
        }
        lengths, paths = nx.single_source_dijkstra(self.streets, node, weight="weight")
        reachable = sorted((d, repr(n), n) for n, d in lengths.items() if n in ends and n != node)
        if not reachable:
            return None
        path = paths[reachable[0][2]]
        for n in onward:
            if self.arcs[n].v == path[1]:
                return n
        return None


def plan_wander_routes(
    arcs: list[Arc],
    *,
    seed: int = 0,
    max_video_m: float = DEFAULT_MAX_VIDEO_M,
    name_prefix: str = "walk",
) -> list[Route]:
    """Random walks over ``arcs`` (see the module docstring); deterministic per ``seed``."""
    rng = np.random.default_rng([seed, 0x3A4D])
    walker = _Wanderer(arcs, rng)
    budget_m = WANDER_BUDGET * sum(arc.length_m for arc in arcs[::2])
    nodes = sorted(walker.leaving, key=repr)
    start: Hashable = nodes[int(rng.integers(len(nodes)))]
    routes: list[Route] = []
    filmed_m = 0.0
    while walker.unfilmed_left() and filmed_m < budget_m:
        route = _wander_once(
            walker, start, max_video_m=max_video_m, name=f"{name_prefix}_{len(routes):03d}"
        )
        routes.append(route)
        filmed_m += route.length_m
        # the next walk starts where this one passed (the walks overlap partly), unless
        # nothing is left to film from there (another part of a disconnected graph)
        passed = sorted(set(route.junction_sequence), key=repr)
        start = passed[int(rng.integers(len(passed)))]
        if (
            walker.unfilmed_left()
            and walker._towards_unfilmed(start, walker.leaving[start]) is None
        ):
            unfilmed = sorted(
                (arcs[2 * s].u for s in range(len(arcs) // 2) if s not in walker.filmed), key=repr
            )
            start = unfilmed[0]
    return routes


def _wander_once(walker: _Wanderer, start: Hashable, *, max_video_m: float, name: str) -> Route:
    """One video of a wander from node ``start``, about ``max_video_m`` long."""
    arcs = walker.arcs
    parts: list[npt.NDArray[np.float64]] = []
    sequence: list[Hashable] = [start]
    walked: list[int] = []
    node, came_on, length = start, None, 0.0
    while length < max_video_m and (walker.unfilmed_left() or length < max_video_m / 2):
        n = walker.next_arc(node, came_on)
        arc = arcs[n]
        if (
            n // 2 in walker.filmed
            and arc.length_m >= _TURN_BACK_MIN_M
            and walker.rng.random() < WANDER_TURN_BACK_P
        ):
            share = float(walker.rng.uniform(0.3, 0.7))
            out = _head_of(arc.polyline_xy, share * arc.length_m)
            parts.append(np.concatenate([out, out[-2::-1]]))
            length += 2 * share * arc.length_m
            sequence.append(node)
            came_on = n ^ 1  # arriving back as if on the reverse arc: no U-turn onto it again
            continue
        parts.append(arc.polyline_xy)
        walker.filmed.add(n // 2)
        walked.append(n)
        length += arc.length_m
        node, came_on = arc.v, n
        sequence.append(node)
    polyline = np.concatenate([parts[0], *(p[1:] for p in parts[1:])], axis=0)
    return Route(
        name=name,
        polyline_xy=polyline,
        junction_sequence=tuple(int(s) for s in sequence),  # type: ignore[call-overload]
        arcs=tuple(arcs[n].id for n in walked),
    )


def _head_of(polyline: npt.NDArray[np.float64], length_m: float) -> npt.NDArray[np.float64]:
    """The first ``length_m`` metres of ``polyline`` (its vertices up to there, then the cut)."""
    steps = np.hypot(*np.diff(polyline, axis=0).T)
    cumulative = np.concatenate([[0.0], np.cumsum(steps)])
    inside = int(np.searchsorted(cumulative, length_m, side="left"))
    cut = np.array(
        [
            np.interp(length_m, cumulative, polyline[:, 0]),
            np.interp(length_m, cumulative, polyline[:, 1]),
        ]
    )
    return np.concatenate([polyline[:inside], cut[None, :]], axis=0)
