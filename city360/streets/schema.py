"""The file schema of ``graph.json`` and its one reader.

``graph.json`` is networkx node-link JSON (``nx.node_link_data(G, edges="edges")``) of a
``MultiDiGraph``; the contract is docs/contracts.md ("pose_graph -> graph.json"). This module is
the only place that parses the file: :func:`read_graph_file` reads and validates it into a
:class:`GraphFile` (pydantic, every error naming the file, the field and the fix), checks
``schema_version`` and cross-checks the references inside the file (edge ids unique, edge ends,
twins and transition targets exist). Everyone else asks the objects built on top of it:
:class:`city360.streets.StreetGraph` (walking) and :class:`city360.pose_graph.PoseGraph` (the
builder's networkx view).

The schema is the contract's, tolerant in the way the contract allows: fields only the builder
needs (``degree``, headings, ``street``, ``primary``) may be missing from hand-made graphs
(and ``lat``/``lon`` from networkx graphs made by hand)
(:func:`require_builder_fields` insists on them), ``reverse``/``rank``/``uturn`` default to
false/0, ``length_m`` defaults to the length of the segment's poses, and fields the contract does
not name are kept but not read.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from city360.city import format_validation_error
from city360.errors import CityFormatError, InputFileError
from city360.streets.values import Label, Node, NodeKind, Transition

__all__ = [
    "BUILDER_EDGE_FIELDS",
    "BUILDER_NODE_FIELDS",
    "GRAPH_SCHEMA_VERSION",
    "EdgeModel",
    "GraphAttrs",
    "GraphFile",
    "NodeModel",
    "TransitionModel",
    "parse_graph",
    "read_graph_file",
    "require_builder_fields",
]

GRAPH_SCHEMA_VERSION = 1
"""The ``schema_version`` graph attribute this city360 reads and writes."""

BUILDER_NODE_FIELDS = ("lat", "lon", "degree")
"""Node fields the builder always writes; optional in hand-made graphs (a city's
``graph.json`` needs ``lat``/``lon``: :func:`read_graph_file` insists on them)."""
BUILDER_EDGE_FIELDS = (
    "trajectory",
    "first_frame",
    "last_frame",
    "length_m",
    "start_heading_deg",
    "end_heading_deg",
    "heading_profile_deg",
    "street",
    "primary",
)
"""Edge fields the builder always writes (:func:`require_builder_fields`)."""


def _finite(value: float | None) -> float | None:
    if value is not None and not math.isfinite(value):
        msg = f"must be finite, got {value}"
        raise ValueError(msg)
    return value


class TransitionModel(BaseModel):
    """One ``transitions`` entry of an edge."""

    model_config = ConfigDict(extra="allow")
    edge: str
    turn_deg: float = Field(ge=-180.0, le=180.0)
    label: Label
    rank: int = Field(0, ge=0)
    uturn: bool = False

    def value(self) -> Transition:
        return Transition(self.edge, self.turn_deg, self.label, self.rank, self.uturn)


class NodeModel(BaseModel):
    """One node: metres in the city CRS (``x_m`` east, ``y_m`` north), WGS84 degrees."""

    model_config = ConfigDict(extra="allow")
    id: int
    kind: NodeKind = "junction"
    x_m: float
    y_m: float
    lat: float | None = Field(None, ge=-90.0, le=90.0)
    lon: float | None = Field(None, ge=-180.0, le=180.0)
    degree: int | None = Field(None, ge=0)

    _check_finite = field_validator("x_m", "y_m")(_finite)

    def value(self) -> Node:
        return Node(self.id, self.kind, self.x_m, self.y_m, self.lat, self.lon, self.degree)


class EdgeModel(BaseModel):
    """One directed edge (a segment), keyed by its id; see docs/contracts.md for each field.

    ``first_frame``/``last_frame`` are inclusive frame indices of ``trajectory``; a ``reverse``
    edge plays them from ``last_frame`` down to ``first_frame``. Headings are degrees clockwise
    from north in traversal direction; ``length_m`` is metres.
    """

    model_config = ConfigDict(extra="allow")
    source: int
    target: int
    key: str | None = None
    id: str | None = None
    trajectory: str | None = None
    first_frame: int | None = Field(None, ge=0)
    last_frame: int | None = Field(None, ge=1)
    reverse: bool = False
    length_m: float | None = Field(None, gt=0.0)
    start_heading_deg: float | None = Field(None, ge=0.0, lt=360.0)
    end_heading_deg: float | None = Field(None, ge=0.0, lt=360.0)
    heading_profile_deg: list[float] | None = None
    twin: str | None = None
    street: int | None = Field(None, ge=0)
    primary: bool | None = None
    transitions: list[TransitionModel] = Field(default_factory=list)

    _check_finite = field_validator("length_m")(_finite)

    @model_validator(mode="after")
    def _ids_and_frames(self) -> EdgeModel:
        if self.id is None and self.key is None:
            msg = "an edge needs its segment id as `id` (and `key`)"
            raise ValueError(msg)
        if self.id is not None and self.key is not None and self.id != self.key:
            msg = f"edge key {self.key!r} differs from its id {self.id!r}"
            raise ValueError(msg)
        first, last = self.first_frame, self.last_frame
        if first is not None and last is not None and not first < last:
            msg = f"needs 0 <= first_frame < last_frame, got {first}, {last}"
            raise ValueError(msg)
        return self

    @property
    def segment_id(self) -> str:
        """The segment id (``id``, or ``key`` when only that is given)."""
        return str(self.id if self.id is not None else self.key)


class GraphAttrs(BaseModel):
    """The graph attributes: ``crs`` (proj4 of the city CRS), ``schema_version``, ``build``."""

    model_config = ConfigDict(extra="allow")
    crs: str = ""
    schema_version: int | None = None
    build: dict[str, Any] = Field(default_factory=dict)


class GraphFile(BaseModel):
    """A parsed ``graph.json``."""

    model_config = ConfigDict(extra="forbid")
    directed: Literal[True] = True
    multigraph: Literal[True] = True
    graph: GraphAttrs = Field(default_factory=GraphAttrs)
    nodes: list[NodeModel]
    edges: list[EdgeModel]


def _rebuild_hint(city_root: Path | None) -> str:
    where = f" {city_root}" if city_root is not None else ""
    return f"rebuild the graph with `city360 build{where}`"


def parse_graph(
    data: Any,
    *,
    source: str = "<memory>",
    require_version: bool = True,
    city_root: Path | None = None,
) -> GraphFile:
    """Validate node-link ``data`` into a :class:`GraphFile`; :class:`CityFormatError` names
    ``source``, the field at fault and the fix.

    ``require_version=False`` accepts a graph without ``schema_version`` (a networkx graph made
    by hand); a version that is given must still be :data:`GRAPH_SCHEMA_VERSION`.
    """
    if isinstance(data, dict) and "edges" not in data and "links" in data:
        data = {("edges" if k == "links" else k): v for k, v in data.items()}  # networkx < 3.4
    try:
        parsed = GraphFile.model_validate(data)
    except ValidationError as exc:
        text = format_validation_error(Path(source), exc)
        msg = f"{text}\n{source}: fix the field(s) above or {_rebuild_hint(city_root)}"
        raise CityFormatError(msg) from None
    version = parsed.graph.schema_version
    if version != GRAPH_SCHEMA_VERSION and (version is not None or require_version):
        shown = "missing" if version is None else str(version)
        msg = (
            f"{source}: field 'graph.schema_version': {shown} is not supported (this city360 "
            f"reads {GRAPH_SCHEMA_VERSION}); {_rebuild_hint(city_root)}"
        )
        raise CityFormatError(msg)
    _check_references(parsed, source)
    return parsed


def _check_references(parsed: GraphFile, source: str) -> None:
    node_ids: set[int] = set()
    for node in parsed.nodes:
        if node.id in node_ids:
            msg = f"{source}: node id {node.id} appears twice"
            raise CityFormatError(msg)
        node_ids.add(node.id)
    edge_ids: set[str] = set()
    for edge in parsed.edges:
        if edge.segment_id in edge_ids:
            msg = f"{source}: edge id {edge.segment_id!r} appears twice"
            raise CityFormatError(msg)
        edge_ids.add(edge.segment_id)
    for edge in parsed.edges:
        where = f"{source}: edge {edge.segment_id!r}"
        for end in (edge.source, edge.target):
            if end not in node_ids:
                msg = f"{where}: node {end} is not in the graph"
                raise CityFormatError(msg)
        if edge.twin is not None and edge.twin not in edge_ids:
            msg = f"{where}: twin {edge.twin!r} is not an edge of the graph"
            raise CityFormatError(msg)
        for i, transition in enumerate(edge.transitions):
            if transition.edge not in edge_ids:
                msg = f"{where}: transitions[{i}] names unknown edge {transition.edge!r}"
                raise CityFormatError(msg)


def require_builder_fields(parsed: GraphFile, *, source: str = "<memory>") -> None:
    """Raise :class:`CityFormatError` unless every node and edge has the fields the builder
    writes (:data:`BUILDER_NODE_FIELDS`, :data:`BUILDER_EDGE_FIELDS`)."""
    problems: list[str] = []
    for i, node in enumerate(parsed.nodes):
        problems.extend(
            f"field 'nodes.{i}.{name}' is missing"
            for name in BUILDER_NODE_FIELDS
            if getattr(node, name) is None
        )
    for i, edge in enumerate(parsed.edges):
        problems.extend(
            f"field 'edges.{i}.{name}' is missing"
            for name in BUILDER_EDGE_FIELDS
            if getattr(edge, name) is None
        )
    if problems:
        shown = "\n".join(f"{source}: {p}" for p in problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        msg = f"{shown}{more}\n{source}: the builder writes these fields; {_rebuild_hint(None)}"
        raise CityFormatError(msg)


def read_graph_file(path: Path, *, city_root: Path | None = None) -> GraphFile:
    """Read and validate ``graph.json`` at ``path`` (the one parser of the file).

    A missing file raises :class:`InputFileError` saying how to build it; invalid JSON, a field
    of the wrong type, an unsupported ``schema_version`` or a dangling reference raise
    :class:`CityFormatError` naming the file and field.
    """
    root = city_root if city_root is not None else path.parent
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        msg = f"{path} not found; build the pose graph first: `city360 build {root}`"
        raise InputFileError(msg) from None
    except UnicodeDecodeError as exc:
        msg = (
            f"{path}: not valid JSON ({exc}); the file is corrupt, rebuild it with "
            f"`city360 build {root}`"
        )
        raise CityFormatError(msg) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        msg = (
            f"{path}: not valid JSON (line {exc.lineno}: {exc.msg}); the file is corrupt, "
            f"rebuild it with `city360 build {root}`"
        )
        raise CityFormatError(msg) from None
    parsed = parse_graph(data, source=str(path), city_root=root)
    for i, node in enumerate(parsed.nodes):
        for name in ("lat", "lon"):
            if getattr(node, name) is None:
                msg = f"{path}: field 'nodes.{i}.{name}': Field required; {_rebuild_hint(root)}"
                raise CityFormatError(msg)
    return parsed
