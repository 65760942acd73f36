"""city360.maps: OpenStreetMap layers and every map image an agent or annotator sees.

Heavy modules (osmnx, matplotlib) load on first use: ``from city360.maps import load_osm``
imports :mod:`city360.maps.osm` only then.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "ATTRIBUTION",
    "Building",
    "CityMap",
    "GeoTransform",
    "MapGrid",
    "MapMeta",
    "OsmData",
    "Poi",
    "edge_polyline",
    "format_cell",
    "load_map_meta",
    "load_osm",
    "parse_cell",
    "write_osm_extract",
]

_LAZY = {
    "ATTRIBUTION": "city360.maps.osm",
    "Building": "city360.maps.osm",
    "OsmData": "city360.maps.osm",
    "Poi": "city360.maps.osm",
    "edge_polyline": "city360.maps.osm",
    "load_osm": "city360.maps.osm",
    "write_osm_extract": "city360.maps.osm",
    "CityMap": "city360.maps.citymap",
    "MapMeta": "city360.maps.citymap",
    "load_map_meta": "city360.maps.citymap",
    "GeoTransform": "city360.maps.geotransform",
    "MapGrid": "city360.maps.grid",
    "format_cell": "city360.maps.grid",
    "parse_cell": "city360.maps.grid",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        msg = f"module 'city360.maps' has no attribute {name!r}"
        raise AttributeError(msg)
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(__all__)
