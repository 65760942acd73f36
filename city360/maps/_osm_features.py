"""Buildings, POIs, parks and water from a cropped OSM XML (private to :mod:`city360.maps.osm`).

osmnx's ``features_from_xml`` builds the geometries (ways, multipolygon relations); this module
sorts them into layers and projects them to the city's metres.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import shapely
from shapely.geometry import MultiPolygon, Polygon, box

from city360.geo import LocalProjection
from city360.maps.osm_types import POI_KEYS, Building, Poi

if TYPE_CHECKING:
    import geopandas as gpd

_PARK_TAGS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "leisure": frozenset(
            {"park", "garden", "playground", "pitch", "nature_reserve", "common", "dog_park"}
        ),
        "landuse": frozenset(
            {
                "grass",
                "recreation_ground",
                "forest",
                "meadow",
                "village_green",
                "cemetery",
                "allotments",
            }
        ),
        "natural": frozenset({"wood", "scrub", "grassland", "heath"}),
    }
)
_WATER_TAGS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "natural": frozenset({"water", "bay"}),
        "waterway": frozenset({"riverbank", "dock", "canal"}),
        "landuse": frozenset({"reservoir", "basin"}),
        "water": frozenset(),  # any value
    }
)
_FEATURE_KEYS = ("building", *POI_KEYS, "landuse", "natural", "waterway", "water")


def _tags_of(row: Mapping[str, Any]) -> dict[str, str]:
    return {
        str(k): v
        for k, v in row.items()
        if k != "geometry" and isinstance(v, str) and not k.startswith("_")
    }


def _parse_height_m(value: str | None) -> float | None:
    if not value:
        return None
    text = value.strip().lower().replace(",", ".")
    try:
        if text.endswith("'") or text.endswith("ft"):
            return float(text.rstrip("'ft ").strip()) * 0.3048
        return float(text.removesuffix("m").strip())
    except ValueError:
        return None


def _parse_levels(value: str | None) -> int | None:
    if not value:
        return None
    try:
        levels = round(float(value.replace(",", ".").split(";")[0]))
    except ValueError:
        return None
    return levels if levels >= 0 else None


def _poi_kind(tags: Mapping[str, str]) -> str | None:
    for key in POI_KEYS:
        value = tags.get(key)
        if value and value != "no":
            return f"{key}={value}"
    return None


def _matches(tags: Mapping[str, str], table: Mapping[str, frozenset[str]]) -> bool:
    for key, values in table.items():
        value = tags.get(key)
        if value is not None and (not values or value in values):
            return True
    return False


def _polygons(geometry: Any) -> Iterator[Polygon]:
    if isinstance(geometry, Polygon):
        if not geometry.is_empty:
            yield geometry
    elif isinstance(geometry, MultiPolygon):
        yield from (g for g in geometry.geoms if not g.is_empty)
    elif hasattr(geometry, "geoms"):
        for part in geometry.geoms:
            yield from _polygons(part)


def _to_local(geometry: Any, projection: LocalProjection) -> Any:
    def forward(coords: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        x, y = projection.to_xy(coords[:, 1], coords[:, 0])
        return np.column_stack([x, y])

    return shapely.transform(geometry, forward)


def read_features(crop_xml: Path) -> gpd.GeoDataFrame | None:
    import osmnx as ox
    from osmnx._errors import InsufficientResponseError

    try:
        return ox.features_from_xml(crop_xml, tags=dict.fromkeys(_FEATURE_KEYS, True))
    except InsufficientResponseError:
        return None


@dataclass
class Layers:
    buildings: list[Building] = field(default_factory=list)
    pois: list[Poi] = field(default_factory=list)
    parks: list[Polygon] = field(default_factory=list)
    water: list[Polygon] = field(default_factory=list)


def extract_layers(
    features: gpd.GeoDataFrame | None,
    bbox: tuple[float, float, float, float],
    projection: LocalProjection,
) -> Layers:
    layers = Layers()
    if features is None or len(features) == 0:
        return layers
    south, west, north, east = bbox
    area_lonlat = box(west, south, east, north)
    corners_x, corners_y = projection.to_xy([south, south, north, north], [west, east, east, west])
    area_m = Polygon(zip(corners_x, corners_y, strict=True))
    rows = features.to_dict(orient="records")
    for (element, osm_id), row in zip(features.index, rows, strict=True):
        geometry = row["geometry"]
        if geometry is None or geometry.is_empty:
            continue
        tags = _tags_of(row)
        polygons = list(_polygons(geometry))
        if (
            "building" in tags
            and tags["building"] != "no"
            and polygons
            and area_lonlat.contains(geometry.centroid)
        ):
            for polygon in polygons:
                footprint = _to_local(polygon, projection)
                if footprint.is_valid and footprint.area > 1.0:
                    layers.buildings.append(
                        Building(
                            footprint=footprint,
                            height_m=_parse_height_m(tags.get("height")),
                            levels=_parse_levels(tags.get("building:levels")),
                            name=tags.get("name", ""),
                            osm_id=int(osm_id),
                        )
                    )
        if polygons and _matches(tags, _PARK_TAGS):
            layers.parks.extend(_clipped(polygons, projection, area_m))
        elif polygons and _matches(tags, _WATER_TAGS):
            layers.water.extend(_clipped(polygons, projection, area_m))
        name = tags.get("name", "").strip()
        kind = _poi_kind(tags)
        if name and kind:
            point = geometry if geometry.geom_type == "Point" else geometry.representative_point()
            if geometry.geom_type != "Point" and polygons:
                centroid = geometry.centroid
                point = centroid if geometry.contains(centroid) else point
            if not area_lonlat.contains(point):
                continue
            x_m, y_m = projection.to_xy(point.y, point.x)
            layers.pois.append(
                Poi(
                    osm_id=int(osm_id),
                    name=name,
                    kind=kind,
                    lat=float(point.y),
                    lon=float(point.x),
                    x_m=float(x_m),
                    y_m=float(y_m),
                    tags=tags,
                    element=str(element),
                )
            )
    return layers


def _clipped(
    polygons: list[Polygon], projection: LocalProjection, area_m: Polygon
) -> Iterator[Polygon]:
    for polygon in polygons:
        local = _to_local(polygon, projection)
        if not local.is_valid:
            local = shapely.make_valid(local)
        yield from _polygons(local.intersection(area_m))
