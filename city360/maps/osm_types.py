"""Values read from OSM extracts: points of interest, buildings, the loaded extract, networks.

A leaf module (no city360 imports but :mod:`city360.geo`), so that :mod:`city360.maps.osm`, its
private feature reader and every stage that passes these values around can import them without
a cycle. All OSM data is © OpenStreetMap contributors, ODbL 1.0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal

import networkx as nx
from shapely.geometry import Polygon

from city360.geo import LocalProjection

__all__ = [
    "AREA_NETWORKS",
    "ATTRIBUTION",
    "NETWORK_HIGHWAYS",
    "POI_KEYS",
    "Building",
    "Network",
    "OsmData",
    "Poi",
]

ATTRIBUTION = "© OpenStreetMap contributors"
"""The credit OSM's licence (ODbL) asks for wherever OSM-derived data is shown."""


Network = Literal["street", "street+service", "walk", "all"]

_STREET_HIGHWAYS = frozenset(
    {
        "trunk",
        "trunk_link",
        "primary",
        "primary_link",
        "secondary",
        "secondary_link",
        "tertiary",
        "tertiary_link",
        "unclassified",
        "residential",
        "living_street",
        "pedestrian",
        "road",
    }
)

NETWORK_HIGHWAYS: Mapping[str, frozenset[str] | None] = MappingProxyType(
    {
        # what a pedestrian filming with a 360° camera walks along: roads with buildings on them
        "street": _STREET_HIGHWAYS,
        # plus service roads (alleys, access roads, parking aisles)
        "street+service": _STREET_HIGHWAYS | {"service"},
        # plus paths a pedestrian may take but a car may not
        "walk": _STREET_HIGHWAYS
        | {"service", "footway", "path", "steps", "cycleway", "track", "corridor", "bridleway"},
        # every highway=* way except those not (yet/any more) usable; None = test _NOT_A_STREET
        "all": None,
    }
)
"""``highway=*`` values each ``network`` keeps. Motorways are never filmed on foot, so only
``"all"`` keeps them. Ways tagged ``area=yes`` (pedestrian squares) are not streets
themselves; in :data:`AREA_NETWORKS` they add their outline and straight ways across them."""

AREA_NETWORKS = frozenset({"walk", "all"})
"""Networks that walk across squares: a walkable ``area=yes`` way whose ``highway`` the network
keeps adds its outline and a straight way between every two of its entrances that stays
inside it. ``street`` and ``street+service`` keep to streets (the synth cities are filmed on
them, and their bytes stay as they were)."""

POI_KEYS = (
    "shop",
    "amenity",
    "tourism",
    "leisure",
    "office",
    "craft",
    "healthcare",
    "historic",
)
"""Keys that make a named node or building a point of interest, in the order that picks its
``kind`` when several are present (``shop`` before ``amenity``, ...)."""


# values --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Poi:
    """A named point of interest: a tagged node, or the centroid of a tagged building/area.

    ``kind`` is ``"key=value"`` of the first of :data:`POI_KEYS` present (``"shop=convenience"``,
    ``"amenity=cafe"``). ``lat``/``lon`` are WGS84 degrees; ``x_m``/``y_m`` metres in the city
    CRS. ``tags`` holds every OSM tag of the element (a plain dict so that POIs pickle; treat it
    as read-only; it takes no part in hashing). ``element`` is ``"node"``, ``"way"`` or
    ``"relation"``: OSM ids are unique only within one element type.
    """

    osm_id: int
    name: str
    kind: str
    lat: float
    lon: float
    x_m: float
    y_m: float
    tags: Mapping[str, str] = field(hash=False)
    element: str = "node"


@dataclass(frozen=True, slots=True)
class Building:
    """A building footprint in local metres (x east, y north).

    ``height_m`` from the ``height`` tag (metres; ``"12 m"`` and ``"40'"`` are understood) and
    ``levels`` from ``building:levels``; ``None`` when the extract does not say. ``name`` is
    ``""`` when unnamed.
    """

    footprint: Polygon
    height_m: float | None
    levels: int | None
    name: str
    osm_id: int = 0


@dataclass(frozen=True)
class OsmData:
    """Everything city360 uses from one OSM extract, in the city's metric CRS.

    ``streets`` is an undirected :class:`networkx.MultiGraph`, simplified by osmnx (nodes are
    junctions and dead ends), reduced to its largest connected component.

    - Node id: the OSM node id (int). Attributes: ``x_m``, ``y_m`` (metres), ``lat``, ``lon``
      (degrees), ``street_count`` (streets meeting there, as osmnx counts them).
    - Edge attributes: ``length_m`` (along the polyline), ``name`` (``""`` if unnamed; the most
      common name when simplification merged differently named ways), ``highway`` (str),
      ``osm_ids`` (tuple of way ids), ``polyline_xy`` (list of ``(x_m, y_m)``).

    Orientation of ``polyline_xy``: nodes are inserted in ascending id order, so networkx
    reports every edge as ``(u, v, key)`` with ``u <= v`` (an undirected graph yields an edge
    from the endpoint inserted first), and ``polyline_xy`` runs from ``u`` (the smaller id) to
    ``v``. Each edge also records that start node as ``from_node``. The loader checks the
    geometry's end points against the node positions and reverses it when needed, so this does
    not depend on osmnx's orientation. Use :func:`edge_polyline` to get a polyline in any
    direction. Subgraph copies keep the node order; a graph rebuilt in another order must
    re-orient (``from_node`` tells how).
    """

    source: Path
    bbox: tuple[float, float, float, float]
    projection: LocalProjection
    streets: nx.MultiGraph
    buildings: list[Building] = field(default_factory=list)
    pois: list[Poi] = field(default_factory=list)
    parks: list[Polygon] = field(default_factory=list)
    water: list[Polygon] = field(default_factory=list)
    network: str = "street"

    def __repr__(self) -> str:
        return (
            f"OsmData(source={str(self.source)!r}, bbox={self.bbox}, "
            f"streets={self.streets.number_of_nodes()} nodes/{self.streets.number_of_edges()} "
            f"edges, buildings={len(self.buildings)}, pois={len(self.pois)}, "
            f"parks={len(self.parks)}, water={len(self.water)})"
        )

    @property
    def street_length_m(self) -> float:
        """Total length of the street graph, metres (each street counted once)."""
        return float(sum(d["length_m"] for _, _, d in self.streets.edges(data=True)))
