"""Where a bbox crop cuts the street graph: at the window's edge, or back to a junction.

``"clip"`` (maps): a way that leaves the window is cut where it crosses the bbox, at a new node
on the edge, so streets run to the edge of the drawing.

``"junction"`` (twins, ``city360 synth --bbox``): no street ends where the crop does. A walker
filming an area turns at junctions and at the ends of streets, not at the line where a data
crop happens to end; a twin that films a street to the crop's edge and back (or, as the old
cut at a way's last node inside did, 6-12 m into it) shows the build a turn-back in the middle
of a street that the map (``map/extract.osm``, whole ways) has go on, and the truth a dead end
no map has. So each piece from the edge back to the first node inside where streets meet (or
the street ends) is dropped, and that node becomes a bend or an end. Before that, a way whose
next junction (or end) lies less than :data:`BEYOND_EDGE_M` beyond the edge goes on to it, and
one that leaves the window and comes back within twice that stays whole: two streets meeting
just outside the window are one street round that corner, not two dead ends metres apart. A
corner beyond the edge that only one street reaches is dropped back like an edge end.

Works on osmnx's raw graph (``simplify=False``: one edge per pair of consecutive OSM nodes;
node ``x`` is the longitude, ``y`` the latitude, edge ``length`` in metres). New edge nodes get
negative ids (OSM ids are positive), numbered in the order of the OSM nodes they lie between.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable
from typing import Literal

import networkx as nx

__all__ = ["BEYOND_EDGE_M", "WINDOW_EDGES", "WindowEdge", "clip_streets_to_bbox"]

WindowEdge = Literal["clip", "junction"]
WINDOW_EDGES: tuple[WindowEdge, ...] = ("clip", "junction")
"""How streets leaving a bbox end (see the module docstring): at its edge, or at a junction."""

BEYOND_EDGE_M = 15.0
"""How far beyond the window's edge (metres along the street) a ``"junction"`` cut follows a
way to its next junction or end, rather than drop it. Two streets meeting 3 m beyond Kamppi's
south edge were two dead ends 7.5 m apart at it; the build counts a street filmed at a junction
from 8 m (``osm_match.ARM_M``), so a corner within about 15 m is one the walker goes round."""

_Box = tuple[float, float, float, float]


def clip_streets_to_bbox(raw: nx.MultiDiGraph, bbox: _Box, *, edge: WindowEdge) -> nx.MultiDiGraph:
    """``raw`` cut at ``bbox`` (``(south, west, north, east)`` degrees, edges inclusive).

    ``edge="clip"``: a segment crossing the edge ends at a new node there (``street_count`` 2:
    the street goes on outside); every node lies inside ``bbox``. ``edge="junction"``: a way
    whose next junction or end lies within :data:`BEYOND_EDGE_M` beyond the edge goes on to it
    (or out and back in within twice that, see :func:`_just_beyond`), and every piece that
    still ends at the edge is dropped back to its first junction inside; every node lies inside
    ``bbox`` or at most :data:`BEYOND_EDGE_M` from it. ``raw`` is not changed.
    """
    if edge not in WINDOW_EDGES:
        msg = f"edge {edge!r} is not known; expected one of {', '.join(WINDOW_EDGES)}"
        raise ValueError(msg)
    clipped, cut_ends = _cut_at_edges(raw, bbox, go_beyond=edge == "junction")
    if edge == "junction":
        _drop_edge_pieces(clipped, {n for n in cut_ends if len(_neighbours(clipped, n)) == 1})
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


def _cut_at_edges(
    raw: nx.MultiDiGraph, bbox: _Box, *, go_beyond: bool
) -> tuple[nx.MultiDiGraph, set[Hashable]]:
    """``raw`` cut at ``bbox``'s edge, and the new nodes on the edge where cut streets end.

    A segment leaving the window is cut where it crosses the edge, unless ``go_beyond`` and
    :func:`_just_beyond` finds a junction or end close beyond: then the way goes on to it and
    ends at that junction (which a walker turns at), at the street's real end or back inside,
    at no end of the crop's.
    """
    inside = {n for n, data in raw.nodes(data=True) if _inside(data, bbox)}
    clipped: nx.MultiDiGraph = raw.subgraph(inside).copy()
    crossing = sorted(
        (u, v, key) for u, v, key in raw.edges(keys=True) if u not in inside or v not in inside
    )
    # one edge node per (outside end, other end) pair, so both directions of a two-way
    # street share it
    edge_node: dict[tuple[Hashable, Hashable], int] = {}
    for u, v, key in crossing:
        data = raw.edges[u, v, key]
        a, b = raw.nodes[u], raw.nodes[v]
        span = _clip_segment((a["x"], a["y"]), (b["x"], b["y"]), bbox)
        if span is None or span[1] - span[0] <= 0.0:
            continue
        if go_beyond and (u in inside) != (v in inside):
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
    # a corner beyond the edge that only one street reaches is outside the window all the
    # same: that street ends where the crop does, as one cut at the edge
    beyond = {n for n in clipped.nodes if n not in inside and int(n) > 0}
    return clipped, set(edge_node.values()) | beyond


def _just_beyond(
    raw: nx.MultiDiGraph, inner: Hashable, outer: Hashable, cut_m: float, bbox: _Box
) -> list[Hashable]:
    """The nodes from ``outer`` (the first node beyond the edge of a way leaving the window at
    ``inner``, ``cut_m`` metres past the crossing) on to the first node where streets meet or
    the street ends, if that lies within :data:`BEYOND_EDGE_M` of the crossing along the
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
    while travelled_m < 2 * BEYOND_EDGE_M:
        ahead = _neighbours(raw, node) - {previous}
        if len(ahead) != 1:  # streets meet here, or the street ends
            return chain if travelled_m < BEYOND_EDGE_M else []
        following = ahead.pop()
        step_m = _segment_m(raw, node, following)
        if _inside(raw.nodes[following], bbox):
            here, there = raw.nodes[node], raw.nodes[following]
            span = _clip_segment((here["x"], here["y"]), (there["x"], there["y"]), bbox)
            outside = 1.0 - (span[1] - span[0]) if span is not None else 1.0
            if travelled_m + step_m * outside < 2 * BEYOND_EDGE_M:
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


def _drop_edge_pieces(graph: nx.MultiDiGraph, ends: set[Hashable]) -> None:
    """Remove, in place, each chain from an end at the window's edge inward to the first node
    where streets meet or the street ends (a chain between two edge ends goes whole).

    All chains are found on the graph as cut, then removed together, so the answer does not
    depend on which of two pieces at one junction is looked at first.
    """
    doomed: set[Hashable] = set()
    for start in ends:
        chain, previous, node = [start], start, start
        ahead = _neighbours(graph, start)
        while len(ahead) == 1:
            following = ahead.pop()
            previous, node = node, following
            if len(_neighbours(graph, node)) != 2:
                break  # a junction, a dead end or another edge end: the chain stops here
            chain.append(node)
            ahead = _neighbours(graph, node) - {previous}
        doomed.update(chain)
        if node != start and len(_neighbours(graph, node)) <= 1:
            doomed.add(node)  # the chain is the whole street: it ends at both sides
    graph.remove_nodes_from(doomed)
