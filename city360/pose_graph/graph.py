"""The pose graph type, its file ``graph.json``, and its validation.

``graph.json`` is networkx node-link JSON (``nx.node_link_data(G, edges="edges")``) of a
``MultiDiGraph``; the schema is in docs/contracts.md ("pose_graph -> graph.json"). Nodes are
junctions, dead ends and links (degree-2 nodes kept because videos change there); edges are
directed segments of trajectories, keyed by their segment id. :func:`load_graph` parses the file
with pydantic (clear errors naming the field), rebuilds the networkx graph and validates it
against the city's trajectories, so a graph that loads is one the simulator can walk.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import numpy.typing as npt

from city360._atomic import atomic_write_json
from city360.city import CityDir, max_pose_step_m
from city360.errors import CityFormatError
from city360.pose_graph.tracks import Track
from city360.streets.schema import (
    GRAPH_SCHEMA_VERSION,
    GraphFile,
    parse_graph,
    read_graph_file,
    require_builder_fields,
)
from city360.streets.values import Node, Transition

__all__ = [
    "GRAPH_SCHEMA_VERSION",
    "NODE_TOLERANCE_M",
    "DisconnectedGraphWarning",
    "Edge",
    "Node",
    "PoseGraph",
    "load_graph",
    "save_graph",
    "validate_graph",
]


NODE_TOLERANCE_M = 15.0
"""An edge's first/last pose must lie this close to its start/end node."""


class DisconnectedGraphWarning(UserWarning):
    """The pose graph falls apart into several pieces that cannot reach each other."""


# values ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Edge:
    """A directed segment: frames of ``trajectory`` from node ``u`` to node ``v``.

    Forward edges play ``first_frame`` up to ``last_frame``; ``reverse`` edges play
    ``last_frame`` down to ``first_frame`` with the view turned 180°. Headings are travel
    headings in traversal direction, degrees clockwise from north.
    """

    id: str
    u: int
    v: int
    trajectory: str
    first_frame: int
    last_frame: int
    reverse: bool
    length_m: float
    start_heading_deg: float
    end_heading_deg: float
    heading_profile_deg: tuple[float, ...]
    twin: str | None
    street: int
    primary: bool
    transitions: tuple[Transition, ...]

    def frames(self) -> range:
        """Frame indices in traversal order."""
        if self.reverse:
            return range(self.last_frame, self.first_frame - 1, -1)
        return range(self.first_frame, self.last_frame + 1)


class PoseGraph:
    """A built pose graph: typed read access over a networkx ``MultiDiGraph``.

    ``graph`` is the networkx object (node ids int, edge keys = segment ids); treat it as
    read-only, or build a new :class:`PoseGraph` after changing it.
    """

    def __init__(self, graph: nx.MultiDiGraph) -> None:
        self.graph = graph
        self._edge_ends: dict[str, tuple[int, int]] = {
            key: (u, v) for u, v, key in graph.edges(keys=True)
        }

    def __repr__(self) -> str:
        return (
            f"PoseGraph(nodes={self.graph.number_of_nodes()}, "
            f"edges={self.graph.number_of_edges()}, crs={self.crs!r})"
        )

    @property
    def crs(self) -> str:
        return str(self.graph.graph.get("crs", ""))

    @property
    def build_params(self) -> dict[str, Any]:
        return dict(self.graph.graph.get("build", {}))

    def node(self, node_id: int) -> Node:
        data = self.graph.nodes[node_id]
        return Node(
            id=node_id,
            kind=data["kind"],
            x_m=data["x_m"],
            y_m=data["y_m"],
            lat=data["lat"],
            lon=data["lon"],
            degree=data["degree"],
        )

    def nodes(self) -> Iterator[Node]:
        for node_id in self.graph.nodes:
            yield self.node(node_id)

    def has_edge(self, edge_id: str) -> bool:
        return edge_id in self._edge_ends

    def edge(self, edge_id: str) -> Edge:
        try:
            u, v = self._edge_ends[edge_id]
        except KeyError:
            msg = f"no edge {edge_id!r} in the pose graph"
            raise KeyError(msg) from None
        data = self.graph.edges[u, v, edge_id]
        return Edge(
            id=edge_id,
            u=u,
            v=v,
            trajectory=data["trajectory"],
            first_frame=data["first_frame"],
            last_frame=data["last_frame"],
            reverse=data["reverse"],
            length_m=data["length_m"],
            start_heading_deg=data["start_heading_deg"],
            end_heading_deg=data["end_heading_deg"],
            heading_profile_deg=tuple(data["heading_profile_deg"]),
            twin=data["twin"],
            street=data["street"],
            primary=data["primary"],
            transitions=tuple(Transition(**t) for t in data["transitions"]),
        )

    def edges(self) -> Iterator[Edge]:
        for key in self._edge_ends:
            yield self.edge(key)

    def out_edges(self, node_id: int, *, primary_only: bool = True) -> list[Edge]:
        """Edges leaving ``node_id`` (by default one per street direction)."""
        out = [self.edge(k) for _, _, k in self.graph.out_edges(node_id, keys=True)]
        return [e for e in out if e.primary or not primary_only]

    def transitions(self, edge_id: str) -> tuple[Transition, ...]:
        return self.edge(edge_id).transitions

    def streets(self) -> dict[int, list[Edge]]:
        """Edges grouped by street id."""
        grouped: dict[int, list[Edge]] = {}
        for edge in self.edges():
            grouped.setdefault(edge.street, []).append(edge)
        return grouped

    def components(self) -> list[set[int]]:
        """Weakly connected pieces as node sets, largest first."""
        return sorted(nx.weakly_connected_components(self.graph), key=len, reverse=True)

    def to_node_link(self) -> dict[str, Any]:
        data: dict[str, Any] = nx.node_link_data(self.graph, edges="edges")
        return data

    @classmethod
    def from_node_link(cls, data: Any, *, source: str = "<memory>") -> PoseGraph:
        """Parse node-link data with the one graph schema (:mod:`city360.streets.schema`),
        requiring the fields the builder writes; :class:`CityFormatError` names the field."""
        return cls._from_parsed(parse_graph(data, source=source), source=source)

    @classmethod
    def _from_parsed(cls, parsed: GraphFile, *, source: str) -> PoseGraph:
        require_builder_fields(parsed, source=source)
        graph = nx.MultiDiGraph(**parsed.graph.model_dump())
        for node in parsed.nodes:
            attrs = node.model_dump()
            graph.add_node(attrs.pop("id"), **attrs)
        for edge in parsed.edges:
            attrs = edge.model_dump()
            source_id, target_id = attrs.pop("source"), attrs.pop("target")
            attrs.pop("key")
            attrs["id"] = edge.segment_id
            graph.add_edge(source_id, target_id, key=edge.segment_id, **attrs)
        return cls(graph)

    @classmethod
    def from_file(cls, path: Path, *, city_root: Path | None = None) -> PoseGraph:
        """Read ``graph.json`` at ``path`` (:func:`city360.streets.read_graph_file`) without
        checking it against a city (see :func:`load_graph` for that)."""
        return cls._from_parsed(read_graph_file(path, city_root=city_root), source=str(path))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PoseGraph):
            return NotImplemented
        return _canonical(self.to_node_link()) == _canonical(other.to_node_link())

    __hash__ = None  # type: ignore[assignment]


def _canonical(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, default=float)


# persistence -------------------------------------------------------------------------------
def save_graph(
    pose_graph: PoseGraph,
    city: CityDir | str | Path,
    *,
    require_frames: bool = True,
    tracks: Mapping[str, Track] | None = None,
) -> Path:
    """Validate ``pose_graph`` against ``city`` and write ``graph.json`` atomically."""
    city = city if isinstance(city, CityDir) else CityDir(city)
    validate_graph(pose_graph, city, require_frames=require_frames, tracks=tracks)
    return atomic_write_json(city.graph_path, pose_graph.to_node_link())


def load_graph(city: CityDir | str | Path, *, require_frames: bool = True) -> PoseGraph:
    """Read ``graph.json`` of ``city`` and validate it (see :func:`validate_graph`).

    ``require_frames=False`` accepts a pose-only city (trajectories without ``frames.mp4``).
    """
    city = city if isinstance(city, CityDir) else CityDir(city)
    path = city.graph_path
    pose_graph = PoseGraph.from_file(path, city_root=city.root)
    validate_graph(pose_graph, city, require_frames=require_frames, source=str(path))
    return pose_graph


# validation --------------------------------------------------------------------------------
def _fail(source: str, problems: list[str]) -> None:
    shown = "\n".join(f"  - {p}" for p in problems[:20])
    more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
    msg = f"{source}: the pose graph is inconsistent with its city:\n{shown}{more}"
    raise CityFormatError(msg)


def validate_graph(
    pose_graph: PoseGraph,
    city: CityDir,
    *,
    require_frames: bool = True,
    source: str | None = None,
    tracks: Mapping[str, Track] | None = None,
) -> list[str]:
    """Check ``pose_graph`` against ``city``; raise :class:`CityFormatError` listing problems.

    Checked: every edge's trajectory exists and its frames lie within ``frame_count`` (and
    ``frames.mp4`` exists unless ``require_frames=False``); poses inside an edge are continuous
    (no jump over ``city360.city.max_pose_step_m``); an edge's first and last pose lie within
    ``NODE_TOLERANCE_M`` of its start and end node; twins run the opposite way between the same
    nodes; transitions leave from the node the edge ends at. Several connected pieces are not an
    error: a :class:`DisconnectedGraphWarning` lists them. Returns the warnings' texts.
    """
    source = source or str(city.graph_path)
    graph = pose_graph.graph
    problems: list[str] = []
    if graph.number_of_edges() == 0:
        problems.append("the graph has no edges")
    city_crs = city.read_manifest().crs
    if pose_graph.crs != city_crs:
        problems.append(
            f"graph CRS {pose_graph.crs!r} is not the city's ({city_crs!r} in "
            f"{city.manifest_path}); the graph belongs to another city or predates a re-ingest"
        )
    known = set(city.trajectory_ids())
    positions: dict[str, tuple[npt.NDArray[np.float64], int, float]] = {}
    for edge in pose_graph.edges():
        if edge.trajectory not in known:
            problems.append(f"edge {edge.id}: trajectory {edge.trajectory!r} does not exist")
            continue
        if edge.trajectory not in positions:
            if tracks is not None and edge.trajectory in tracks:
                track = tracks[edge.trajectory]
                positions[edge.trajectory] = (track.xy, track.frame_count, track.spacing_m)
            else:
                meta = city.read_trajectory_meta(edge.trajectory)
                poses = city.read_poses(edge.trajectory)
                xy = np.column_stack([poses.x_m, poses.y_m])
                positions[edge.trajectory] = (xy, meta.frame_count, meta.spacing_m)
            if require_frames and not city.frames_path(edge.trajectory).is_file():
                problems.append(
                    f"trajectory {edge.trajectory!r} has no frames.mp4 "
                    "(use require_frames=False / --pose-only for pose-only cities)"
                )
        xy, frame_count, spacing_m = positions[edge.trajectory]
        if not 0 <= edge.first_frame < edge.last_frame < min(frame_count, len(xy)):
            problems.append(
                f"edge {edge.id}: frames {edge.first_frame}..{edge.last_frame} are not an "
                f"increasing range within the {frame_count} frames of {edge.trajectory!r}"
            )
            continue
        span = slice(edge.first_frame, edge.last_frame + 1)
        steps = np.hypot(*np.diff(xy[span], axis=0).T)
        limit = max_pose_step_m(spacing_m)
        if steps.size and float(steps.max()) > limit:
            problems.append(
                f"edge {edge.id}: poses jump {float(steps.max()):.1f} m between consecutive frames "
                f"(limit {limit:.1f} m); the segment is not continuous"
            )
        order = edge.frames()
        first, last = order[0], order[-1]
        for node_id, frame, which in ((edge.u, first, "start"), (edge.v, last, "end")):
            node = pose_graph.node(node_id)
            gap = float(np.hypot(xy[frame, 0] - node.x_m, xy[frame, 1] - node.y_m))
            if gap > NODE_TOLERANCE_M:
                problems.append(
                    f"edge {edge.id}: its {which} (frame {frame}) is {gap:.1f} m from node "
                    f"{node_id} (limit {NODE_TOLERANCE_M} m)"
                )
        if edge.twin is not None:
            if not pose_graph.has_edge(edge.twin):
                problems.append(f"edge {edge.id}: twin {edge.twin!r} does not exist")
            else:
                twin = pose_graph.edge(edge.twin)
                if (twin.u, twin.v) != (edge.v, edge.u):
                    problems.append(f"edge {edge.id}: twin {edge.twin!r} does not run back")
        for transition in edge.transitions:
            if not pose_graph.has_edge(transition.edge):
                problems.append(f"edge {edge.id}: transition to missing edge {transition.edge!r}")
            elif pose_graph.edge(transition.edge).u != edge.v:
                problems.append(
                    f"edge {edge.id}: transition to {transition.edge!r}, which does not start at "
                    f"node {edge.v}"
                )
    if problems:
        _fail(source, problems)
    return _warn_disconnected(pose_graph, source)


def _warn_disconnected(pose_graph: PoseGraph, source: str) -> list[str]:
    pieces = pose_graph.components()
    if len(pieces) <= 1:
        return []
    lines = []
    for k, nodes in enumerate(pieces):
        sub = pose_graph.graph.subgraph(nodes)
        trajectories = sorted({d["trajectory"] for _, _, d in sub.edges(data=True)})
        xs = [pose_graph.graph.nodes[n]["x_m"] for n in nodes]
        ys = [pose_graph.graph.nodes[n]["y_m"] for n in nodes]
        lines.append(
            f"piece {k + 1}: {len(nodes)} nodes, {sub.number_of_edges()} edges around "
            f"x={np.mean(xs):.0f} m, y={np.mean(ys):.0f} m, trajectories "
            f"{', '.join(trajectories[:8])}{' ...' if len(trajectories) > 8 else ''}"
        )
    text = (
        f"{source}: the pose graph has {len(pieces)} disconnected pieces; an agent cannot walk "
        "from one to another. Film a connection between them or build them as separate cities:\n"
        + "\n".join(lines)
    )
    warnings.warn(text, DisconnectedGraphWarning, stacklevel=3)
    return [text]
