"""Where a bbox crop cuts the street graph: at the window's edge, not at a street's last node.

A way that leaves the window is cut where it crosses the bbox, at a new node on the edge, so a
long street runs to the edge of the crop instead of stopping at whichever of its nodes happens
to lie last inside (which left 6-12 m stubs of long streets: a twin filmed them and turned back,
while the map the build got, the whole ways of ``map/extract.osm``, has the street go on).

A piece cut off at the edge that is shorter than :data:`EDGE_STUB_MIN_M` from the first node
where other streets meet is dropped: it is a crop's artefact, not a street anyone would walk to
its end, and it is too short to tell from a walker stepping into a street and back (the scorer
contracts streets under 8 m; the build counts an arm from 8 m). The node it left is then a bend.
The same floor works the other way: a way whose next junction (or end) lies less than
:data:`EDGE_STUB_MIN_M` beyond the edge goes on to it, and one that leaves the window and comes
back within twice that stays whole, so two streets meeting just outside the window are one
street round that corner, not two dead ends metres apart at the edge.

Works on osmnx's raw graph (``simplify=False``: one edge per pair of consecutive OSM nodes;
node ``x`` is the longitude, ``y`` the latitude, edge ``length`` in metres). New edge nodes get
negative ids (OSM ids are positive), numbered in the order of the OSM nodes they lie between.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable

import networkx as nx

__all__ = ["EDGE_STUB_MIN_M", "clip_streets_to_bbox"]

EDGE_STUB_MIN_M = 15.0
"""Shortest piece of a street cut off at a bbox edge that is kept, metres from the edge to the
first node where it meets another street. A walker filming a twin walks to the end of every
street and back; smoothing takes 3-5 m off such a turn (``osm_dead_ends.SPUR_MIN_M``) and the
build counts a street filmed at a junction from 8 m (``osm_match.ARM_M``), so a piece under
about 15 m is filmed as a step into a long street and back, which the map cannot settle."""

_Box = tuple[float, float, float, float]


def clip_streets_to_bbox(raw: nx.MultiDiGraph, bbox: _Box) -> nx.MultiDiGraph:
    """``raw`` cut at ``bbox`` (``(south, west, north, east)`` degrees, edges inclusive).

    A segment crossing the edge ends at a new node there (``street_count`` 2: the street goes
    on outside), or, when the way's next junction or end lies within :data:`EDGE_STUB_MIN_M`
    beyond the crossing, at that node, or it goes out and back in within twice that (see
    :func:`_just_beyond`): every node lies inside ``bbox`` or at most
    :data:`EDGE_STUB_MIN_M` from it. Pieces ending at the window shorter than
    :data:`EDGE_STUB_MIN_M` are dropped (see the module docstring). ``raw`` is not changed.
    """
    clipped, cut_ends = _cut_at_edges(raw, bbox)
    # where two cut streets meet at a corner just beyond the edge, the corner is no end
    ends = {n for n in cut_ends if len(_neighbours(clipped, n)) == 1}
    _drop_edge_stubs(clipped, edge_nodes=ends)
    clipped.remove_nodes_from([n for n in list(clipped.nodes) if clipped.degree(n) == 0])
    return clipped


def _inside(node: dict[str, float], bbox: _Box) -> bool:
    south, west, north, east = bbox
    return south <= node["y"] <= north and west <= node["x"] <= east


def _clip_segment(
    start: tuple[float, float], end: tuple[float, float], bbox: _Box
) -> tuple[float, float] | None:
    """The part of segment ``start``-``end`` (lon, lat) inside ``bbox`` as fractions ``(t0,
    t1)`` along it (Liang-Barsky), or None when it misses the box. Straight in degrees: over a
    segment of tens of metres the difference from straight in metres is millimetres."""
    south, west, north, east = bbox
    t0, t1 = 0.0, 1.0
    dx, dy = end[0] - start[0], end[1] - start[1]
    for p, q in (
        (-dx, start[0] - west),
        (dx, east - start[0]),
        (-dy, start[1] - south),
        (dy, north - start[1]),
    ):
        if p == 0.0:
            if q < 0.0:
                return None
            continue
        t = q / p
        if p < 0.0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return None
    return t0, t1


def _cut_at_edges(raw: nx.MultiDiGraph, bbox: _Box) -> tuple[nx.MultiDiGraph, set[Hashable]]:
    """``raw`` cut at ``bbox``'s edge, and the nodes where the cut streets now end.

    A segment leaving the window is cut where it crosses the edge, unless the first node
    beyond where streets meet (or the street ends) lies within :data:`EDGE_STUB_MIN_M` of the
    crossing: then the way goes on to that node (see :func:`_just_beyond`).
    """
    inside = {n for n, data in raw.nodes(data=True) if _inside(data, bbox)}
    clipped: nx.MultiDiGraph = raw.subgraph(inside).copy()
    crossing = sorted(
        (u, v, key) for u, v, key in raw.edges(keys=True) if u not in inside or v not in inside
    )
    # one edge node per (outside end, other end) pair, so both directions of a two-way
    # street share it
    edge_node: dict[tuple[Hashable, Hashable], int] = {}
    beyond_ends: set[Hashable] = set()
    for u, v, key in crossing:
        data = raw.edges[u, v, key]
        a, b = raw.nodes[u], raw.nodes[v]
        span = _clip_segment((a["x"], a["y"]), (b["x"], b["y"]), bbox)
        if span is None or span[1] - span[0] <= 0.0:
            continue
        if (u in inside) != (v in inside):
            inner, outer = (u, v) if u in inside else (v, u)
            cut_m = float(data.get("length", 0.0)) * (1.0 - (span[1] - span[0]))
            chain = _just_beyond(raw, inner, outer, cut_m, bbox)
            if chain:
                clipped.add_nodes_from((n, raw.nodes[n]) for n in chain)
                clipped.add_edge(u, v, key, **data)
                for p, q in itertools.pairwise(chain):
                    for x, y in ((p, q), (q, p)):
                        for k, d in raw.get_edge_data(x, y, default={}).items():
                            clipped.add_edge(x, y, k, **d)
                beyond_ends.add(chain[-1])
                continue
        ends = []
        for node, other, t in ((u, v, span[0]), (v, u, span[1])):
            if node in inside:
                ends.append(node)
                continue
            pair = (node, other)
            if pair not in edge_node:
                edge_node[pair] = -(len(edge_node) + 1)
                clipped.add_node(
                    edge_node[pair],
                    x=a["x"] + t * (b["x"] - a["x"]),
                    y=a["y"] + t * (b["y"] - a["y"]),
                    street_count=2,
                )
            ends.append(edge_node[pair])
        length = float(data.get("length", 0.0)) * (span[1] - span[0])
        clipped.add_edge(ends[0], ends[1], **{**data, "length": length})
    return clipped, set(edge_node.values()) | beyond_ends


def _just_beyond(
    raw: nx.MultiDiGraph, inner: Hashable, outer: Hashable, cut_m: float, bbox: _Box
) -> list[Hashable]:
    """The nodes from ``outer`` (the first node beyond the edge of a way leaving the window at
    ``inner``, ``cut_m`` metres past the crossing) on to the first node where streets meet or
    the street ends, if that lies within :data:`EDGE_STUB_MIN_M` of the crossing along the
    street, or on to the node where it comes back into the window, if it is outside less than
    twice that; else ``[]``.

    A walker does not stop a few metres short of a corner: two streets meeting just beyond the
    edge would be two dead ends metres apart at it (Kamppi's south edge: 7.5 m), which the
    build, seeing the map's corner, joins. Going on to the corner makes them one street. In
    the crop the streets are read from (ways with a node inside), such a corner is mostly a
    bend of one way out of the window and back, so that counts as going on to the corner from
    both sides.
    """
    chain, travelled_m, previous, node = [outer], cut_m, inner, outer
    while travelled_m < 2 * EDGE_STUB_MIN_M:
        ahead = _neighbours(raw, node) - {previous}
        if len(ahead) != 1:  # streets meet here, or the street ends
            return chain if travelled_m < EDGE_STUB_MIN_M else []
        following = ahead.pop()
        step_m = _segment_m(raw, node, following)
        if _inside(raw.nodes[following], bbox):
            here, there = raw.nodes[node], raw.nodes[following]
            span = _clip_segment((here["x"], here["y"]), (there["x"], there["y"]), bbox)
            outside = 1.0 - (span[1] - span[0]) if span is not None else 1.0
            if travelled_m + step_m * outside < 2 * EDGE_STUB_MIN_M:
                return [*chain, following]  # back inside: out and back is one street
            return []
        travelled_m += step_m
        previous, node = node, following
        chain.append(node)
    return []


def _neighbours(graph: nx.MultiDiGraph, node: Hashable) -> set[Hashable]:
    return (set(graph.successors(node)) | set(graph.predecessors(node))) - {node}


def _segment_m(graph: nx.MultiDiGraph, a: Hashable, b: Hashable) -> float:
    lengths = [float(d.get("length", 0.0)) for d in graph.get_edge_data(a, b, default={}).values()]
    lengths += [float(d.get("length", 0.0)) for d in graph.get_edge_data(b, a, default={}).values()]
    return min(lengths)


def _drop_edge_stubs(graph: nx.MultiDiGraph, *, edge_nodes: set[Hashable]) -> None:
    """Remove, in place, each chain from an edge node inward to the first node where streets
    meet (or end) when it is shorter than :data:`EDGE_STUB_MIN_M`.

    All chains are measured on the graph as cut, then removed together, so the answer does
    not depend on which of two pieces at one junction is looked at first.
    """
    doomed: set[Hashable] = set()
    for start in edge_nodes:
        chain, length_m = [start], 0.0
        previous, node = start, start
        ahead = _neighbours(graph, start)
        while len(ahead) == 1:
            following = ahead.pop()
            length_m += _segment_m(graph, node, following)
            previous, node = node, following
            if len(_neighbours(graph, node)) != 2:
                break  # a junction, a dead end or another edge node: the chain stops here
            chain.append(node)
            ahead = _neighbours(graph, node) - {previous}
        if length_m >= EDGE_STUB_MIN_M:
            continue
        doomed.update(chain)
        # the node it stops at stays (a junction becomes a bend, or a dead end), unless the
        # chain is the whole piece: it runs to a dead end or another edge node
        if node != start and len(_neighbours(graph, node)) <= 1:
            doomed.add(node)
    graph.remove_nodes_from(doomed)
