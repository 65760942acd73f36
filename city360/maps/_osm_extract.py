"""Cropping and filtering OSM extracts with pyosmium (private to :mod:`city360.maps.osm`).

pyosmium reads ``.osm``, ``.osm.bz2`` and ``.osm.pbf`` alike; everything here writes OSM XML
that osmnx can read, with every reference resolvable (see :func:`_write_complete`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from city360.errors import InputFileError, OsmError

OSM_SUFFIXES = (".osm", ".osm.bz2", ".osm.pbf", ".pbf", ".xml", ".osm.xml")
"""File names load_osm accepts (XML, bzip2-compressed XML, PBF)."""

_NOT_A_STREET = frozenset(
    {
        "proposed",
        "construction",
        "abandoned",
        "disused",
        "planned",
        "razed",
        "platform",
        "raceway",
        "bus_stop",
        "elevator",
        "escape",
        "emergency_bay",
        "rest_area",
        "services",
        "no",
    }
)


def _fmt_bbox(bbox: Sequence[float]) -> str:
    return ",".join(f"{v:.6f}".rstrip("0").rstrip(".") for v in bbox)


def _check_source(path: str | os.PathLike[str]) -> Path:
    source = Path(path)
    if not source.exists():
        msg = f"OSM file {source} does not exist; pass a local .osm, .osm.bz2 or .osm.pbf extract"
        raise InputFileError(msg)
    if not source.is_file():
        msg = f"OSM file {source} is not a file; pass a local .osm, .osm.bz2 or .osm.pbf extract"
        raise InputFileError(msg)
    if source.stat().st_size == 0:
        msg = f"OSM file {source} is empty; export the area again (.osm, .osm.bz2 or .osm.pbf)"
        raise InputFileError(msg)
    name = source.name.lower()
    if not name.endswith(OSM_SUFFIXES):
        msg = (
            f"OSM file {source} has an unknown extension; expected one of {', '.join(OSM_SUFFIXES)}"
        )
        raise OsmError(msg)
    return source


def _corrupt(source: Path, exc: BaseException) -> OsmError:
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    msg = (
        f"OSM file {source} cannot be read ({detail}); it is corrupt or truncated: "
        "download or export the extract again"
    )
    return OsmError(msg)


@dataclass(frozen=True, slots=True)
class _Crop:
    path: Path
    bbox: tuple[float, float, float, float]
    nodes_inside: int
    file_extent: tuple[float, float, float, float] | None
    file_nodes: int
    """Nodes with a location in the whole source file."""


def _objects(path: Path, entities: Any = None) -> Iterator[Any]:
    """Iterate the OSM objects of ``path`` (pyosmium's union type is too wide for mypy)."""
    import osmium

    processor = (
        osmium.FileProcessor(path) if entities is None else osmium.FileProcessor(path, entities)
    )
    return iter(processor)


def _crop_to_xml(source: Path, dst: Path, bbox: tuple[float, float, float, float] | None) -> _Crop:
    """Write the complete ways/multipolygons of ``source`` touching ``bbox`` to OSM XML ``dst``.

    ``bbox=None`` keeps the whole file (and reports the extent of its nodes as its bbox).
    Plain Python sets track the ids: pyosmium's IdTracker costs ~0.3 ms per ``add_*`` call.
    """
    import osmium

    everything = bbox is None
    try:
        south = west = math.inf
        north = east = -math.inf
        inside: set[int] = set()
        located = 0
        for node in _objects(source, osmium.osm.NODE):
            loc = node.location
            if not loc.valid():
                continue
            located += 1
            lat, lon = loc.lat, loc.lon
            south, north = min(south, lat), max(north, lat)
            west, east = min(west, lon), max(east, lon)
            if bbox is not None and bbox[0] <= lat <= bbox[2] and bbox[1] <= lon <= bbox[3]:
                inside.add(node.id)
        extent = (south, west, north, east) if math.isfinite(south) else None
        ways: set[int] = set()
        relations: set[int] = set()
        needed_nodes = set(inside)
        if not everything and inside:
            for way in _objects(source, osmium.osm.WAY):
                refs = [n.ref for n in way.nodes]
                if any(ref in inside for ref in refs):
                    ways.add(way.id)
                    needed_nodes.update(refs)
            member_ways: set[int] = set()
            for relation in _objects(source, osmium.osm.RELATION):
                if relation.tags.get("type") != "multipolygon":
                    continue
                members = [(m.type, m.ref) for m in relation.members]
                if any(
                    (kind == "w" and ref in ways) or (kind == "n" and ref in inside)
                    for kind, ref in members
                ):
                    relations.add(relation.id)
                    member_ways.update(ref for kind, ref in members if kind == "w")
            member_ways -= ways
            if member_ways:  # multipolygons stay whole: fetch their outside members too
                for way in _objects(source, osmium.osm.WAY):
                    if way.id in member_ways:
                        ways.add(way.id)
                        needed_nodes.update(n.ref for n in way.nodes)

        def wanted(obj: Any) -> bool:
            if everything:
                return True
            if obj.is_node():
                return obj.id in needed_nodes
            if obj.is_way():
                return obj.id in ways
            return obj.id in relations

        dst.parent.mkdir(parents=True, exist_ok=True)
        with osmium.SimpleWriter(dst, overwrite=True) as writer:
            if everything or inside:
                _write_complete((o for o in _objects(source) if wanted(o)), writer)
    except (RuntimeError, ValueError, OSError) as exc:
        raise _corrupt(source, exc) from None
    keep = bbox if bbox is not None else extent
    return _Crop(
        path=dst,
        bbox=keep if keep is not None else (0.0, 0.0, 0.0, 0.0),
        nodes_inside=located if everything else len(inside),
        file_extent=extent,
        file_nodes=located,
    )


def _write_complete(objects: Any, writer: Any) -> None:
    """Write OSM objects (sorted: nodes, ways, relations) so every reference resolves.

    Extracts clipped by their producer (Helsinki.osm.pbf is one) reference nodes and ways they
    do not contain; osmnx fails on those, so such references are dropped here, and a way left
    with fewer than two nodes is dropped with them.
    """
    nodes: set[int] = set()
    ways: set[int] = set()
    for obj in objects:
        if obj.is_node():
            nodes.add(obj.id)
            writer.add_node(obj)
        elif obj.is_way():
            refs = [n.ref for n in obj.nodes]
            kept = [ref for ref in refs if ref in nodes]
            if len(kept) >= 2:
                writer.add_way(obj if len(kept) == len(refs) else obj.replace(nodes=kept))
                ways.add(obj.id)
        elif obj.is_relation():
            members = [
                (m.type, m.ref, m.role)
                for m in obj.members
                if (m.type == "n" and m.ref in nodes) or (m.type == "w" and m.ref in ways)
            ]
            if members:
                writer.add_relation(obj.replace(members=members))


def _is_street_way(tags: Any, highways: frozenset[str] | None) -> bool:
    highway = tags.get("highway")
    if highway is None or tags.get("area") == "yes":
        return False
    if highways is None:
        return highway not in _NOT_A_STREET
    return highway in highways


@dataclass(frozen=True, slots=True)
class _Area:
    """A walkable area (``highway=pedestrian|footway|... + area=yes``: a square, a plaza)."""

    way_id: int
    ring: tuple[int, ...]
    """Its outline's node ids, closed (first == last)."""
    highway: str
    name: str


def _walkable_areas(crop_xml: Path, highways: frozenset[str] | None) -> list[_Area]:
    """The closed ``area=yes`` ways of ``crop_xml`` whose ``highway`` the network keeps."""
    import osmium

    areas = []
    for way in _objects(crop_xml, osmium.osm.WAY):
        tags = way.tags
        highway = tags.get("highway")
        if highway is None or tags.get("area") != "yes":
            continue
        if (highway in _NOT_A_STREET) if highways is None else (highway not in highways):
            continue
        ring = tuple(n.ref for n in way.nodes)
        if len(ring) >= 4 and ring[0] == ring[-1]:
            areas.append(_Area(way.id, ring, highway, tags.get("name", "")))
    return areas


def _area_ways(
    areas: Sequence[_Area], street_nodes: set[int], lonlat: dict[int, tuple[float, float]]
) -> list[tuple[list[int], dict[str, str]]]:
    """Streets across and around walkable areas, as (node ids, tags) ways.

    A street graph has no way across a square, so a walk over one matched nothing. Each area
    becomes its outline (people walk along the shopfronts) plus a straight way between every
    two of its entrances (outline nodes that a street also uses) that stays inside the area:
    the visibility graph area routers build (OSRM, GraphHopper), limited to the entrances.
    """
    from shapely.geometry import LineString, Polygon

    out: list[tuple[list[int], dict[str, str]]] = []
    for area in areas:
        if any(ref not in lonlat for ref in area.ring):
            continue  # clipped by the extract's producer: its shape is unknown
        tags = {"highway": area.highway, "city360:area": str(area.way_id)}
        if area.name:
            tags["name"] = area.name
        out.append((list(area.ring), tags))
        shape = Polygon([lonlat[ref] for ref in area.ring])
        if not shape.is_valid:
            continue
        inside = shape.buffer(1e-7)  # about a centimetre of slack for points on the outline
        entrances = sorted({ref for ref in area.ring[:-1] if ref in street_nodes})
        ring_neighbours = set(zip(area.ring, area.ring[1:], strict=False))
        for i, a in enumerate(entrances):
            for b in entrances[i + 1 :]:
                if (a, b) in ring_neighbours or (b, a) in ring_neighbours:
                    continue  # the outline already joins them
                if inside.covers(LineString([lonlat[a], lonlat[b]])):
                    out.append(([a, b], {**tags, "city360:area_crossing": "yes"}))
    return out


def _write_streets_xml(
    crop_xml: Path, dst: Path, highways: frozenset[str] | None, *, areas: bool = False
) -> int:
    """Write the street ways of ``crop_xml`` (and their nodes) to ``dst``; return how many.

    ``highways`` are the ``highway=*`` values kept; None keeps all but :data:`_NOT_A_STREET`.
    ``areas``: also the walkable areas those values name, as their outline plus straight ways
    between their entrances (:func:`_area_ways`), under negative way ids.
    """
    import osmium

    ways: set[int] = set()
    nodes: set[int] = set()
    for way in _objects(crop_xml, osmium.osm.WAY):
        if _is_street_way(way.tags, highways) and len(way.nodes) >= 2:
            ways.add(way.id)
            nodes.update(n.ref for n in way.nodes)
    found = _walkable_areas(crop_xml, highways) if areas else []
    ring_nodes = {ref for area in found for ref in area.ring}
    lonlat: dict[int, tuple[float, float]] = {}
    extra: list[tuple[list[int], dict[str, str]]] = []
    if found:
        for node in _objects(crop_xml, osmium.osm.NODE):
            if node.id in ring_nodes and node.location.valid():
                lonlat[node.id] = (node.location.lon, node.location.lat)
        extra = _area_ways(found, nodes, lonlat)
        nodes.update(ref for refs, _ in extra for ref in refs)
    with osmium.SimpleWriter(dst, overwrite=True) as writer:
        if ways or extra:
            objects = _objects(crop_xml, osmium.osm.NODE | osmium.osm.WAY)
            _write_complete(
                (o for o in objects if o.id in (nodes if o.is_node() else ways)), writer
            )
            for k, (refs, tags) in enumerate(extra, start=1):
                writer.add_way(osmium.osm.mutable.Way(id=-k, nodes=refs, tags=tags))
    return len(ways) + len(extra)


def _no_overlap(
    source: Path,
    bbox: tuple[float, float, float, float],
    extent: tuple[float, float, float, float] | None,
) -> OsmError:
    if extent is not None and (
        extent[0] <= bbox[2]
        and bbox[0] <= extent[2]
        and extent[1] <= bbox[3]
        and bbox[1] <= extent[3]
    ):
        msg = (
            f"OSM extract {source} has no node inside bbox {_fmt_bbox(bbox)} although its "
            f"nodes span {_fmt_bbox(extent)} around it; widen the bbox, or pick an extract "
            "that maps this area"
        )
        return OsmError(msg)
    covers = f"it covers {_fmt_bbox(extent)}" if extent else "it has no nodes"
    msg = (
        f"OSM extract {source} does not overlap bbox {_fmt_bbox(bbox)} ({covers}); "
        "pick an extract of that area or a bbox inside the extract"
    )
    return OsmError(msg)
