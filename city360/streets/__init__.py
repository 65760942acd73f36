"""city360.streets: the one model of a city's pose graph (``graph.json``).

- :mod:`~city360.streets.schema`: the file schema and its one reader, :func:`read_graph_file`;
- :mod:`~city360.streets.values`: :class:`Node`, :class:`Transition`;
- :mod:`~city360.streets.moves`: the movement rules the controller and the oracle share;
- :mod:`~city360.streets.segment`: :class:`Segment` and the length rule;
- :mod:`~city360.streets.street_graph`: :class:`StreetGraph`, ``StreetGraph.open(city_dir)``.

This package imports only ``city360.city``, ``city360.errors`` and ``city360.geo`` (no
simulator, tasks, maps or eval), so every stage can use it.
"""

from __future__ import annotations

from city360.streets.moves import END_EPS_M, branch_yaw_deg, offered, passthrough
from city360.streets.schema import GRAPH_SCHEMA_VERSION, GraphFile, parse_graph, read_graph_file
from city360.streets.segment import Segment, scaled_offsets, twin_offset_m
from city360.streets.street_graph import OFFSET_QUANTUM_M, StreetGraph, clear_cache
from city360.streets.values import LABELS, Label, Node, NodeKind, Transition

__all__ = [
    # rules
    "END_EPS_M",
    # file
    "GRAPH_SCHEMA_VERSION",
    # values
    "LABELS",
    # the graph
    "OFFSET_QUANTUM_M",
    "GraphFile",
    "Label",
    "Node",
    "NodeKind",
    "Segment",
    "StreetGraph",
    "Transition",
    "branch_yaw_deg",
    "clear_cache",
    "offered",
    "parse_graph",
    "passthrough",
    "read_graph_file",
    "scaled_offsets",
    "twin_offset_m",
]
