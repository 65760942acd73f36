"""Write one picture of each map kind, for the README (``docs/images/map_*.png``).

``python -m city360.maps.examples OSM_FILE S,W,N,E OUT_DIR`` makes a throw-away city directory
holding only ``city.json`` and the cropped extract (so the exploration area is the bbox grown
by the usual margin), opens its :class:`~city360.maps.citymap.CityMap` and writes
``map_base.png``, ``map_location.png``, ``map_grid.png``, ``map_route.png`` and
``map_landmark.png``. The route runs between the two street junctions farthest apart, the
landmark is the named POI nearest the centre, and the location map walks the longest named
street with its trail.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from city360.city import CityDir, CityManifest, SourceFile, file_sha256
from city360.geo import LocalProjection, bearing_deg
from city360.maps.citymap import CityMap, _png
from city360.maps.osm import load_osm, parse_bbox, write_osm_extract

__all__ = ["write_examples"]


def write_examples(osm: Path, bbox: tuple[float, float, float, float], out_dir: Path) -> list[Path]:
    """Render every map kind of the area ``bbox`` of ``osm`` into ``out_dir``."""
    from city360._atomic import atomic_write_bytes

    out_dir.mkdir(parents=True, exist_ok=True)
    south, west, north, east = bbox
    projection = LocalProjection((south + north) / 2, (west + east) / 2)
    with tempfile.TemporaryDirectory(prefix="city360-map-examples-") as tmp:
        city = CityDir(Path(tmp) / "city")
        extract = write_osm_extract(osm, city.osm_extract_path, bbox=bbox)
        city.write_manifest(
            CityManifest(
                name=f"{osm.name} example",
                crs=projection.proj4,
                origin_lat=projection.origin_lat,
                origin_lon=projection.origin_lon,
                bbox=bbox,
                sources=[
                    SourceFile(kind="osm", path="map/extract.osm", sha256=file_sha256(extract))
                ],
            )
        )
        citymap = CityMap.open(city.root)
        data = load_osm(extract, bbox=bbox, projection=projection)
    streets = data.streets
    junctions = [
        (d["x_m"], d["y_m"]) for _, d in streets.nodes(data=True) if d["street_count"] >= 3
    ]
    points = np.asarray(junctions)
    gaps = np.hypot(*(points[:, None, :] - points[None, :, :]).transpose(2, 0, 1))
    a, b = np.unravel_index(int(np.argmax(gaps)), gaps.shape)
    centre = np.array(citymap.grid.cell_centre(3, 3))
    poi = min(data.pois, key=lambda p: float(np.hypot(p.x_m - centre[0], p.y_m - centre[1])))
    named = [d for _, _, d in streets.edges(data=True) if d["name"]]
    street = max(named or [d for _, _, d in streets.edges(data=True)], key=lambda d: d["length_m"])
    polyline = np.asarray(street["polyline_xy"])
    here = polyline[len(polyline) // 2] if len(polyline) > 2 else polyline.mean(axis=0)
    before = polyline[max(len(polyline) // 2 - 1, 0)]
    heading = bearing_deg(*(here - before)) if len(polyline) > 2 else 0.0
    trail = polyline[: len(polyline) // 2 + 1]
    images = {
        "map_base.png": citymap.area_map(size_px=800),
        "map_location.png": citymap.location_map(
            float(here[0]), float(here[1]), heading, size_px=256, trail=trail
        ),
        "map_grid.png": citymap.grid_map(size_px=800),
        "map_route.png": citymap.route_map(tuple(points[a]), tuple(points[b]), size_px=800),
        "map_landmark.png": citymap.landmark_map(poi.x_m, poi.y_m, size_px=800, label=poi.name),
    }
    written = []
    for name, image in images.items():
        written.append(atomic_write_bytes(out_dir / name, _png(image)))
    return written


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: python -m city360.maps.examples OSM_FILE S,W,N,E OUT_DIR")
    for path in write_examples(Path(sys.argv[1]), parse_bbox(sys.argv[2]), Path(sys.argv[3])):
        print(path)
