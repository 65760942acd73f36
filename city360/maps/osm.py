"""OpenStreetMap from local files: streets, buildings, POIs, parks and water in local metres.

Reads ``.osm`` (XML), ``.osm.bz2`` and ``.osm.pbf`` extracts, never the network. pyosmium does
the reading and cropping (it understands all three formats) and writes a cropped OSM XML into a
temporary folder; osmnx then turns that XML into a simplified street graph
(``graph_from_xml``) and into feature geometries (``features_from_xml``). Everything is
projected to the city's :class:`~city360.geo.LocalProjection` (``x_m`` east, ``y_m`` north).

Cropping keeps *complete ways* (like ``osmium extract --strategy complete_ways``): a way with at
least one node inside the bbox is kept whole, and so is every ``type=multipolygon`` relation with
a member inside, with all its member ways; a park that straddles the edge is therefore whole and
then clipped to the bbox in metres. The street graph is cut where each way crosses the bbox's
edge, so streets run to the edge of a map; or, for a twin (``edge="junction"``), back to their
last junction inside, so no street ends where the crop does (:mod:`city360.maps._osm_window`).

The pyosmium side lives in :mod:`city360.maps._osm_extract`, the feature layers in
:mod:`city360.maps._osm_features`. All OSM data is © OpenStreetMap contributors, ODbL 1.0;
credit it wherever it is shown.
"""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from city360.errors import ConfigError, OsmError, did_you_mean
from city360.geo import LocalProjection
from city360.maps._osm_extract import (
    _check_source,
    _crop_to_xml,
    _fmt_bbox,
    _no_overlap,
    _write_streets_xml,
)
from city360.maps._osm_window import (
    BEYOND_EDGE_M,
    WINDOW_EDGES,
    WindowEdge,
    clip_streets_to_bbox,
)
from city360.maps.osm_types import (
    AREA_NETWORKS,
    ATTRIBUTION,
    NETWORK_HIGHWAYS,
    POI_KEYS,
    Building,
    Network,
    OsmData,
    Poi,
)

__all__ = [
    "ATTRIBUTION",
    "BEYOND_EDGE_M",
    "NETWORK_HIGHWAYS",
    "POI_KEYS",
    "WINDOW_EDGES",
    "Building",
    "Network",
    "OsmData",
    "Poi",
    "WindowEdge",
    "edge_polyline",
    "load_osm",
    "parse_bbox",
    "write_osm_extract",
]


def edge_polyline(
    streets: nx.MultiGraph, u: int, v: int, key: int = 0
) -> list[tuple[float, float]]:
    """The polyline of edge ``(u, v, key)`` in metres, running from ``u`` to ``v``.

    Works whichever way round the caller names the endpoints.
    """
    data = streets.edges[u, v, key]
    points: list[tuple[float, float]] = data["polyline_xy"]
    return list(points) if data["from_node"] == u else list(reversed(points))


# arguments -----------------------------------------------------------------------------------
def parse_bbox(value: str | Sequence[float]) -> tuple[float, float, float, float]:
    """Parse and check ``"S,W,N,E"`` (or a 4-sequence) in WGS84 degrees."""
    if isinstance(value, str):
        parts = [p for p in value.replace(" ", "").split(",") if p]
        try:
            numbers = [float(p) for p in parts]
        except ValueError:
            msg = (
                f"bbox {value!r} must be four numbers S,W,N,E in degrees, "
                "e.g. 60.165,24.94,60.17,24.95"
            )
            raise ConfigError(msg) from None
    else:
        numbers = [float(v) for v in value]
    if len(numbers) != 4 or not all(math.isfinite(n) for n in numbers):
        msg = f"bbox {value!r} must be four finite numbers S,W,N,E in degrees"
        raise ConfigError(msg)
    south, west, north, east = numbers
    if not (-90 <= south < north <= 90 and -180 <= west < east <= 180):
        msg = (
            f"bbox {_fmt_bbox((south, west, north, east))} must satisfy -90 <= S < N <= 90 and "
            "-180 <= W < E <= 180 (order is S,W,N,E)"
        )
        raise ConfigError(msg)
    return south, west, north, east


def write_osm_extract(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    bbox: str | Sequence[float],
) -> Path:
    """Crop any ``.osm``/``.osm.bz2``/``.osm.pbf`` extract to ``bbox`` and write OSM XML.

    ``bbox`` is ``(south, west, north, east)`` in degrees (or ``"S,W,N,E"``). Complete ways and
    multipolygons are kept (see the module docstring). ``dst`` must end in ``.osm``; it is
    written under a temporary name and renamed, so it is whole or absent. Raises
    :class:`OsmError` when the extract has no data inside ``bbox``.
    """
    source = _check_source(src)
    target = Path(dst)
    if target.suffix.lower() != ".osm":
        msg = f"output {target} must end in .osm (write_osm_extract writes OSM XML)"
        raise ConfigError(msg)
    box_ = parse_bbox(bbox)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".osm-extract-", dir=target.parent) as tmp:
        crop = _crop_to_xml(source, Path(tmp) / "crop.osm", box_)
        if crop.nodes_inside == 0:
            raise _no_overlap(source, box_, crop.file_extent)
        os.replace(crop.path, target)
    return target


# streets -------------------------------------------------------------------------------------
def _first_str(value: Any) -> str:
    """osmnx keeps a list when simplification merged ways with different tags: pick one."""
    if isinstance(value, list):
        values = [str(v) for v in value if isinstance(v, str) and v]
        return Counter(values).most_common(1)[0][0] if values else ""
    return value if isinstance(value, str) else ""


def _ids(value: Any) -> tuple[int, ...]:
    if isinstance(value, list):
        return tuple(int(v) for v in value)
    return (int(value),) if value is not None else ()


def _load_streets(
    streets_xml: Path,
    source: Path,
    bbox: tuple[float, float, float, float],
    projection: LocalProjection,
    *,
    all_components: bool = False,
    edge: WindowEdge = "clip",
) -> nx.MultiGraph:
    import osmnx as ox
    from osmnx._errors import InsufficientResponseError

    no_streets = OsmError(
        f"no streets inside bbox {_fmt_bbox(bbox)} of {source}; widen --bbox or pick another "
        "extract"
    )
    try:
        raw = ox.graph_from_xml(streets_xml, simplify=False, retain_all=True)
    except InsufficientResponseError:
        raise no_streets from None
    # count streets per node before cutting at the bbox, so a street leaving the area still
    # counts (what osmnx's graph_from_bbox does with its buffered graph)
    street_counts = ox.stats.count_streets_per_node(raw)
    raw = clip_streets_to_bbox(raw, bbox, edge=edge)
    if raw.number_of_edges() == 0:
        raise no_streets
    counts = {n: street_counts.get(n, raw.nodes[n].get("street_count", 0)) for n in raw.nodes}
    nx.set_node_attributes(raw, counts, "street_count")
    raw = ox.simplify_graph(raw)
    undirected = ox.convert.to_undirected(raw)
    if all_components:
        return _canonical_graph(undirected, projection)
    # the longest piece, not the one with most nodes: simplified, a long street has two
    # nodes and a mesh of parking lanes many (a 75 m mesh won over 570 m of streets)
    longest = max(
        nx.connected_components(undirected),
        key=lambda piece: (undirected.subgraph(piece).size(weight="length"), len(piece)),
    )
    return _canonical_graph(undirected.subgraph(longest), projection)


def _canonical_graph(osmnx_graph: nx.MultiGraph, projection: LocalProjection) -> nx.MultiGraph:
    """Rebuild osmnx's graph with city360's attributes and polyline orientation (u < v)."""
    node_ids = sorted(osmnx_graph.nodes)
    lats = np.array([osmnx_graph.nodes[n]["y"] for n in node_ids], dtype=np.float64)
    lons = np.array([osmnx_graph.nodes[n]["x"] for n in node_ids], dtype=np.float64)
    xs, ys = projection.to_xy(lats, lons)
    graph = nx.MultiGraph(crs=projection.proj4)
    position: dict[int, tuple[float, float]] = {}
    for i, node in enumerate(node_ids):
        position[node] = (float(xs[i]), float(ys[i]))
        graph.add_node(
            int(node),
            x_m=float(xs[i]),
            y_m=float(ys[i]),
            lat=float(lats[i]),
            lon=float(lons[i]),
            street_count=int(osmnx_graph.nodes[node].get("street_count", 0)),
        )
    edges = sorted(
        osmnx_graph.edges(keys=True, data=True), key=lambda e: (min(e[0], e[1]), max(e[0], e[1]))
    )
    for u_raw, v_raw, _, data in edges:
        u, v = sorted((int(u_raw), int(v_raw)))
        coords = np.asarray(data["geometry"].coords, dtype=np.float64)  # lon, lat
        px, py = projection.to_xy(coords[:, 1], coords[:, 0])
        points = np.column_stack([px, py])
        # orient from u: trust the geometry, not the attribute naming which end is which
        start_u = np.hypot(*(points[0] - position[u])) + np.hypot(*(points[-1] - position[v]))
        start_v = np.hypot(*(points[0] - position[v])) + np.hypot(*(points[-1] - position[u]))
        if start_v < start_u:
            points = points[::-1]
        points[0], points[-1] = position[u], position[v]
        length_m = float(np.hypot(*np.diff(points, axis=0).T).sum())
        graph.add_edge(
            u,
            v,
            length_m=length_m,
            name=_first_str(data.get("name")),
            highway=_first_str(data.get("highway")),
            osm_ids=_ids(data.get("osmid")),
            polyline_xy=[(float(x), float(y)) for x, y in points],
            from_node=u,
        )
    return graph


# entry point ---------------------------------------------------------------------------------
def load_osm(
    path: str | os.PathLike[str],
    *,
    bbox: str | Sequence[float] | None = None,
    projection: LocalProjection | None = None,
    network: Network | str = "street",
    all_components: bool = False,
    squares: bool | None = None,
    edge: WindowEdge | str = "clip",
) -> OsmData:
    """Read a local OSM extract into streets, buildings, POIs, parks and water in metres.

    ``bbox`` (``(south, west, north, east)`` degrees or ``"S,W,N,E"``) crops the extract; by
    default the whole file is used and ``OsmData.bbox`` is the extent of its nodes.
    ``projection`` is the city's CRS; by default a :class:`LocalProjection` centred on the bbox.
    ``network`` picks the streets (see :data:`NETWORK_HIGHWAYS`): ``"street"`` (default) the
    roads a pedestrian with a 360° camera films along — trunk to residential, unclassified,
    living streets and pedestrian streets, no footways, steps or cycleways; ``"street+service"``
    adds service roads; ``"walk"`` adds footways, paths, steps and cycleways; ``"all"`` every
    usable ``highway=*``. ``all_components=True`` keeps every connected piece of the street
    graph instead of only the longest (maps draw all streets; a walkable city needs one piece).
    ``squares`` adds ways across walkable squares (:data:`AREA_NETWORKS`; default: in those
    networks); maps and the synth scene leave them out (nothing to draw or build along).
    ``edge`` is how streets leaving ``bbox`` end (:data:`WINDOW_EDGES`): ``"clip"`` (default)
    where they cross its edge, as a map draws them; ``"junction"`` at their last junction
    inside (or one less than :data:`BEYOND_EDGE_M` beyond), as a twin films them: a walker
    turns at junctions, not where a data crop ends.

    Raises :class:`InputFileError` for a missing or empty file, :class:`OsmError` for a corrupt
    one, an extract that does not overlap ``bbox``, or no streets inside it.
    """
    source = _check_source(path)
    if network not in NETWORK_HIGHWAYS:
        msg = (
            f"network {network!r} is not known; expected one of "
            f"{', '.join(NETWORK_HIGHWAYS)}.{did_you_mean(str(network), NETWORK_HIGHWAYS)}"
        )
        raise ConfigError(msg)
    if edge not in WINDOW_EDGES:
        msg = (
            f"edge {edge!r} is not known; expected one of "
            f"{', '.join(WINDOW_EDGES)}.{did_you_mean(str(edge), WINDOW_EDGES)}"
        )
        raise ConfigError(msg)
    wanted = parse_bbox(bbox) if bbox is not None else None
    with _workdir() as tmp:
        crop = _crop_to_xml(source, tmp / "crop.osm", wanted)
        if crop.file_extent is None:
            msg = f"OSM file {source} contains no nodes; export the area again"
            raise OsmError(msg)
        if crop.nodes_inside == 0 and wanted is not None:
            raise _no_overlap(source, wanted, crop.file_extent)
        kept = crop.bbox
        proj = projection or LocalProjection((kept[0] + kept[2]) / 2, (kept[1] + kept[3]) / 2)
        streets_xml = tmp / "streets.osm"
        highways = NETWORK_HIGHWAYS[str(network)]
        areas = str(network) in AREA_NETWORKS if squares is None else squares
        if _write_streets_xml(crop.path, streets_xml, highways, areas=areas) == 0:
            msg = (
                f"no streets inside bbox {_fmt_bbox(kept)} of {source}; widen --bbox or pick "
                "another extract"
            )
            raise OsmError(msg)
        streets = _load_streets(
            streets_xml,
            source,
            kept,
            proj,
            all_components=all_components,
            edge="junction" if edge == "junction" else "clip",
        )
        from city360.maps._osm_features import extract_layers, read_features

        layers = extract_layers(read_features(crop.path), kept, proj)
    return OsmData(
        source=source,
        bbox=kept,
        projection=proj,
        streets=streets,
        buildings=layers.buildings,
        pois=layers.pois,
        parks=layers.parks,
        water=layers.water,
        network=str(network),
    )


@contextlib.contextmanager
def _workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="city360-osm-") as tmp:
        yield Path(tmp)
