"""A city's maps: the cached base map, its geotransform and grid, and every map image.

:meth:`CityMap.open` renders the base map once and caches it in ``<city>/map/``:

``basemap.png``
    the base raster (north up, "© OpenStreetMap contributors" in its corner when OSM data is
    drawn: see :func:`osm_credit`);
``map.json``
    :class:`MapMeta`: the geotransform (pixel <-> metres <-> lat/lon), the exploration area and
    how it was chosen, the default localization grid, which layers were drawn from what, and
    the hashes of the inputs. Tasks and the simulator read the grid from here, so both use the
    same cells. The cache is reused while the inputs (graph, poses, OSM extract, parameters)
    hash the same, and redrawn otherwise.

Per-step location maps are integer crops of a pre-scaled copy of the raster plus a few OpenCV
shapes and a cached attribution stamp: no matplotlib per step.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from city360._atomic import atomic_write_bytes, atomic_write_json
from city360.city import CityDir, CityManifest, file_sha256, format_validation_error
from city360.errors import CityFormatError, ConfigError, InputFileError, OutputError
from city360.geo import LocalProjection
from city360.maps.draw import (
    GOAL_RGB,
    LANDMARK_RGB,
    START_RGB,
    draw_arrow,
    draw_marker,
    draw_polyline,
    stamp_attribution,
    stamp_text,
    text_stamp,
)
from city360.maps.geotransform import GeoTransform
from city360.maps.grid import DEFAULT_GRID_N, MapGrid, format_cell
from city360.maps.layers import (
    ExplorationArea,
    MapLayers,
    StreetLine,
    city_street_lines,
    exploration_area,
    layers_from_osm,
)
from city360.maps.osm import ATTRIBUTION
from city360.types import Image

__all__ = [
    "BASEMAP_NAME",
    "DEFAULT_METRES_PER_PX",
    "MAP_JSON_NAME",
    "CityMap",
    "MapMeta",
    "load_map_meta",
    "map_network",
    "osm_credit",
    "record_map_network",
]

logger = logging.getLogger(__name__)

MAP_SCHEMA_VERSION = 1
RENDER_VERSION = 4
"""Bump when the drawing changes, so cached base maps are redrawn (4: no OSM credit on a map
with no OSM data)."""
BASEMAP_NAME = "basemap.png"
MAP_JSON_NAME = "map.json"
DEFAULT_METRES_PER_PX = 0.5
"""Base map scale; the simulator's default location map uses the same, so it is a pure crop."""
DEFAULT_PAD_M = 80.0
"""The base map extends this far beyond the exploration area, so a location map of an agent
near the edge still shows real surroundings."""
MAX_RASTER_PX = 6144
"""Longest side of the base raster; larger areas get a coarser scale (recorded in map.json)."""
OSM_NETWORK = "walk"
"""The base map draws footways and paths too: they are part of what a person sees. A city
built on a wider network (``all``) draws that; ``city360 map --network`` chooses and records
the choice in ``city.json`` ``build.maps.network`` (see :func:`map_network`)."""


class MapMeta(BaseModel):
    """``<city>/map/map.json``."""

    model_config = ConfigDict(extra="forbid")
    schema_version: int = MAP_SCHEMA_VERSION
    attribution: str | None = Field(
        default=ATTRIBUTION,
        description="the credit every image of the map carries; None when no OSM data is in it",
    )
    crs: str = Field(description="proj4 of the city's LocalProjection")
    basemap: str = BASEMAP_NAME
    geotransform: dict[str, Any] = Field(description="GeoTransform.to_dict() of basemap.png")
    area: dict[str, Any] = Field(description="exploration area (metres) and the rule used")
    grid: dict[str, Any] = Field(description="default localization grid, MapGrid.to_dict()")
    layers: dict[str, Any] = Field(description="source of each layer and counts")
    inputs: dict[str, Any] = Field(description="hashes and parameters the cache depends on")

    @property
    def transform(self) -> GeoTransform:
        return GeoTransform.from_dict(self.geotransform)

    @property
    def map_grid(self) -> MapGrid:
        return MapGrid.from_dict(self.grid)


def _check_network(network: str) -> str:
    from city360.errors import did_you_mean
    from city360.maps.osm_types import NETWORK_HIGHWAYS

    if network not in NETWORK_HIGHWAYS:
        msg = (
            f"map network {network!r} is not known; expected one of "
            f"{', '.join(NETWORK_HIGHWAYS)}.{did_you_mean(network, NETWORK_HIGHWAYS)}"
        )
        raise ConfigError(msg)
    return network


def map_network(city_dir: str | os.PathLike[str], network: str | None = None) -> str:
    """The OSM network the base map of ``city_dir`` draws: ``network`` when given, else the one
    recorded by ``city360 map --network`` (``city.json`` ``build.maps.network``), else the
    network the city was built on (``build.pose_graph.osm_network``, else the filmed
    ``build.synth.network``) but at least :data:`OSM_NETWORK`. Networks nest (street within
    street+service within walk within all), so the default draws every street the city was
    made from and the footways a person sees beside them."""
    from city360.maps.osm_types import NETWORK_HIGHWAYS

    if network is not None:
        return _check_network(network)
    build = CityDir(city_dir).read_manifest().build
    recorded = build.get("maps", {}).get("network")
    if recorded in NETWORK_HIGHWAYS:
        return str(recorded)
    built = build.get("pose_graph", {}).get("osm_network") or build.get("synth", {}).get("network")
    order = list(NETWORK_HIGHWAYS)
    if built in NETWORK_HIGHWAYS and order.index(built) > order.index(OSM_NETWORK):
        return str(built)
    return OSM_NETWORK


def record_map_network(city_dir: str | os.PathLike[str], network: str) -> None:
    """Record ``network`` as the city's map network (``city.json`` ``build.maps.network``), so
    every later map of the city (simulator, tasks, viewer) draws it."""
    city = CityDir(city_dir)
    with city.manifest_lock():
        manifest = city.read_manifest()
        maps = dict(manifest.build.get("maps", {}))
        if maps.get("network") == _check_network(network):
            return
        maps["network"] = network
        manifest.build["maps"] = maps
        city.write_manifest(manifest)


def load_map_meta(city_dir: str | os.PathLike[str]) -> MapMeta:
    """Read and validate ``<city>/map/map.json`` (written by :meth:`CityMap.open`)."""
    path = CityDir(city_dir).map_dir / MAP_JSON_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        msg = f"{path} not found; draw the map with `city360 map {city_dir} --out map.png`"
        raise InputFileError(msg) from None
    try:
        return MapMeta.model_validate_json(text)
    except ValidationError as exc:
        raise CityFormatError(format_validation_error(path, exc)) from None


def osm_credit(manifest: CityManifest, layers_source: str) -> str | None:
    """The credit a city's maps carry: :data:`ATTRIBUTION` when the layers are drawn from OSM
    (``layers_source == "osm"``) or the city was made from OSM data (a ``city.json`` source of
    kind ``osm``, or one whose attribution names OpenStreetMap: a synthetic twin, a city built
    with ``--osm`` whose extract was since removed); None for a city drawn only from its own
    walks. ODbL asks for the credit where OSM data is shown, and a credit on a user's own
    streets would say their data is OpenStreetMap's."""
    if layers_source == "osm":
        return ATTRIBUTION
    for source in manifest.sources:
        if source.kind == "osm" or "OpenStreetMap" in (source.attribution or ""):
            return ATTRIBUTION
    return None


# inputs and cache ----------------------------------------------------------------------------
def _inputs_digest(city: CityDir, osm: Path | None, params: dict[str, Any]) -> dict[str, Any]:
    digest = hashlib.sha256()
    if city.graph_path.is_file():
        digest.update(b"graph" + file_sha256(city.graph_path).encode())
    for trajectory_id in city.trajectory_ids():
        poses = city.poses_path(trajectory_id)
        if poses.is_file():
            digest.update(trajectory_id.encode() + file_sha256(poses).encode())
    osm_name = None
    if osm is not None:  # relative inside the city, so a moved city keeps its cache
        resolved = osm.resolve()
        root = city.root.resolve()
        osm_name = str(resolved.relative_to(root)) if resolved.is_relative_to(root) else str(osm)
    return {
        "city_sha256": digest.hexdigest(),
        "osm": osm_name,
        "osm_sha256": file_sha256(osm) if osm else None,
        **params,
        "render_version": RENDER_VERSION,
    }


def _area_from_manifest(city: CityDir, projection: LocalProjection) -> ExplorationArea:
    south, west, north, east = city.read_manifest().bbox
    xs, ys = projection.to_xy([south, south, north, north], [west, east, east, west])
    return exploration_area(np.column_stack([xs, ys]), "city.json bbox")


def _area_bbox_latlon(
    transform: GeoTransform,
) -> tuple[float, float, float, float]:
    x_min, y_min, x_max, y_max = transform.extent_m
    lat, lon = transform.projection.to_latlon(
        [x_min, x_max, x_max, x_min], [y_min, y_min, y_max, y_max]
    )
    return float(lat.min()), float(lon.min()), float(lat.max()), float(lon.max())


# the map -------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Level:
    image: Image
    transform: GeoTransform


class CityMap:
    """The base map of one city and the images drawn from it.

    ``transform`` maps base-map pixels to city metres and lat/lon; ``grid`` is the default
    localization grid over ``area``. Images are RGB uint8 (H, W, 3), and every one carries
    ``meta.attribution`` ("© OpenStreetMap contributors") when the map shows OSM data (see
    :func:`osm_credit`).
    """

    def __init__(self, image: Image, meta: MapMeta, *, root: Path | None = None) -> None:
        self.meta = meta
        self.root = root
        self.transform = meta.transform
        self.grid = meta.map_grid
        self.area = ExplorationArea(
            x_min_m=float(meta.area["x_min_m"]),
            y_min_m=float(meta.area["y_min_m"]),
            x_max_m=float(meta.area["x_max_m"]),
            y_max_m=float(meta.area["y_max_m"]),
            margin_m=float(meta.area["margin_m"]),
            source=str(meta.area["source"]),
        )
        if image.shape[:2] != (self.transform.height, self.transform.width):
            msg = (
                f"base map is {image.shape[1]}x{image.shape[0]} px but its geotransform says "
                f"{self.transform.width}x{self.transform.height}; redraw it with --rebuild"
            )
            raise CityFormatError(msg)
        image.setflags(write=False)
        self.image = image
        self._levels: dict[float, _Level] = {
            self.transform.metres_per_px: _Level(image, self.transform)
        }
        self._background = tuple(int(v) for v in image[0, 0])
        self._blanks: dict[tuple[int, int], Image] = {}

    def _credit(self, image: Image) -> Image:
        """``image`` with the map's attribution stamped (in place), when it has one."""
        if self.meta.attribution is None:
            return image
        return stamp_attribution(image, text=self.meta.attribution)

    def __repr__(self) -> str:
        return (
            f"CityMap({str(self.root)!r}, {self.transform.width}x{self.transform.height} px at "
            f"{self.transform.metres_per_px} m/px, layers from {self.meta.layers['source']})"
        )

    @property
    def projection(self) -> LocalProjection:
        return self.transform.projection

    # building ------------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        city_dir: str | os.PathLike[str],
        *,
        osm: str | os.PathLike[str] | None = None,
        metres_per_px: float = DEFAULT_METRES_PER_PX,
        grid_n: int = DEFAULT_GRID_N,
        pad_m: float = DEFAULT_PAD_M,
        rebuild: bool = False,
        network: str | None = None,
    ) -> CityMap:
        """Load the cached base map of ``city_dir``, drawing it first when missing or stale.

        ``map.json`` always records the default ``DEFAULT_GRID_N`` grid; ``grid_n`` only sets
        the grid of the returned object (the area, and so the cells' edges, are shared).
        ``network`` is the OSM network drawn (:data:`city360.maps.osm.NETWORK_HIGHWAYS`;
        default :func:`map_network`: the city's recorded choice).

        ``osm`` is an extract to draw streets, buildings, parks and water from; by default
        ``map/extract.osm`` or an OSM source in ``city.json``. Without one the streets are the
        city's own graph edges or trajectories. Raises :class:`InputFileError` for a missing
        ``osm``, :class:`~city360.errors.OsmError` for one that is corrupt, has no streets or
        does not overlap the city, and :class:`CityFormatError` when there is nothing to draw.
        """
        from PIL import Image as PilImage

        city = CityDir(city_dir)
        if not city.exists():
            city.read_manifest()  # raises the standard "not a city directory" error
        if not metres_per_px > 0:
            msg = f"`metres_per_px` must be > 0, got {metres_per_px}"
            raise ConfigError(msg)
        osm_path = Path(osm) if osm is not None else city.osm_source()
        if osm_path is not None and not osm_path.is_file():
            msg = f"OSM file {osm_path} does not exist; pass a local .osm, .osm.bz2 or .osm.pbf"
            raise InputFileError(msg)
        drawn_network = map_network(city.root, network)
        params = {"metres_per_px": metres_per_px, "pad_m": pad_m, "osm_network": drawn_network}
        inputs = _inputs_digest(city, osm_path, params)
        meta_path = city.map_dir / MAP_JSON_NAME
        image_path = city.map_dir / BASEMAP_NAME
        if not rebuild and meta_path.is_file() and image_path.is_file():
            try:
                meta = load_map_meta(city.root)
            except CityFormatError:
                meta = None
            if meta is not None and meta.inputs == inputs:
                image = np.asarray(PilImage.open(image_path).convert("RGB"), dtype=np.uint8)
                citymap = cls(image, meta, root=city.root)
                return citymap.with_grid(grid_n) if grid_n != citymap.grid.n else citymap
        image, meta = cls._draw(city, osm_path, inputs, metres_per_px, pad_m, drawn_network)
        try:
            atomic_write_bytes(image_path, _png(image))
            atomic_write_json(meta_path, meta.model_dump(mode="json"))
        except OutputError as exc:  # a read-only city still gets its maps, just not cached
            logger.warning("base map not cached: %s", exc)
        citymap = cls(image, meta, root=city.root)
        return citymap.with_grid(grid_n) if grid_n != citymap.grid.n else citymap

    @staticmethod
    def _draw(
        city: CityDir,
        osm: Path | None,
        inputs: dict[str, Any],
        metres_per_px: float,
        pad_m: float,
        network: str,
    ) -> tuple[Image, MapMeta]:
        from city360.maps.basemap import render_basemap

        manifest = city.read_manifest()
        projection = manifest.projection
        lines: list[StreetLine] = []
        if osm is not None and not city.graph_path.is_file() and not city.trajectory_ids():
            # a proto-city (synth output before ingest): the map covers its manifest bbox
            area = _area_from_manifest(city, projection)
            source = "osm"
        else:  # a corrupt graph or poses file raises here rather than being papered over
            lines, points, source = city_street_lines(city)
            area = exploration_area(points, f"{source} positions")
        side_m = max(area.x_max_m - area.x_min_m, area.y_max_m - area.y_min_m) + 2 * pad_m
        scale = max(metres_per_px, side_m / MAX_RASTER_PX)
        transform = GeoTransform.covering(
            area.x_min_m - pad_m,
            area.y_min_m - pad_m,
            area.x_max_m + pad_m,
            area.y_max_m + pad_m,
            metres_per_px=scale,
            projection=projection,
        )
        if osm is not None:
            from city360.maps.osm import load_osm

            data = load_osm(
                osm,
                bbox=_area_bbox_latlon(transform),
                projection=projection,
                network=network,
                all_components=True,
                squares=False,  # a square is drawn as an area, not hatched with crossings
            )
            layers = layers_from_osm(data)
            layer_info: dict[str, Any] = {"source": "osm", "osm": str(osm), "network": network}
        else:
            layers = MapLayers(source=source, streets=lines)
            layer_info = {"source": source}
        attribution = osm_credit(manifest, layer_info["source"])
        image = render_basemap(layers, transform, attribution=attribution is not None)
        grid = MapGrid(area.x_min_m, area.y_min_m, area.x_max_m, area.y_max_m, DEFAULT_GRID_N)
        meta = MapMeta(
            attribution=attribution,
            crs=projection.proj4,
            geotransform=transform.to_dict(),
            area=area.to_dict(),
            grid=grid.to_dict(),
            layers={**layer_info, **layers.counts()},
            inputs=inputs,
        )
        return image, meta

    def with_grid(self, n: int) -> CityMap:
        """The same map with an ``n`` x ``n`` grid (the base raster is shared)."""
        meta = self.meta.model_copy(update={"grid": self.grid.with_n(n).to_dict()})
        other = CityMap.__new__(CityMap)
        other.meta = meta
        other.root = self.root
        other.transform = self.transform
        other.grid = meta.map_grid
        other.area = self.area
        other.image = self.image
        other._levels = self._levels
        other._background = self._background
        other._blanks = self._blanks
        return other

    # scaled copies and crops ---------------------------------------------------------------
    def _level(self, metres_per_px: float) -> _Level:
        """The base raster resampled to ``metres_per_px`` (cached), with its exact transform.

        ``cv2.resize`` with factor ``f`` maps destination column ``c`` to source column
        ``(c + 0.5) / f - 0.5``; the transform below is that map written in metres.
        """
        level = self._levels.get(metres_per_px)
        if level is not None:
            return level
        if not (metres_per_px > 0 and math.isfinite(metres_per_px)):
            msg = f"`metres_per_px` must be > 0, got {metres_per_px}"
            raise ConfigError(msg)
        base = self.transform
        factor = base.metres_per_px / metres_per_px
        width = round(base.width * factor)
        height = round(base.height * factor)
        if width < 1 or height < 1 or width * height > 4 * MAX_RASTER_PX**2:
            msg = f"cannot resample the base map to {metres_per_px} m/px ({width}x{height} px)"
            raise ConfigError(msg)
        interpolation = cv2.INTER_AREA if factor < 1 else cv2.INTER_LINEAR
        image: Image = np.asarray(
            cv2.resize(self.image, None, fx=factor, fy=factor, interpolation=interpolation),
            dtype=np.uint8,
        )
        half = base.metres_per_px / 2
        transform = GeoTransform(
            x0_m=base.x0_m - half + metres_per_px / 2,
            y0_m=base.y0_m + half - metres_per_px / 2,
            metres_per_px=metres_per_px,
            width=int(image.shape[1]),
            height=int(image.shape[0]),
            projection=base.projection,
        )
        image.setflags(write=False)
        level = _Level(image, transform)
        self._levels[metres_per_px] = level
        return level

    def _crop(self, level: _Level, col0: int, row0: int, width: int, height: int) -> Image:
        """``level.image[row0:row0+height, col0:col0+width]``, background where it runs off."""
        src_h, src_w = level.image.shape[:2]
        c0, r0 = max(col0, 0), max(row0, 0)
        c1, r1 = min(col0 + width, src_w), min(row0 + height, src_h)
        if (c0, r0, c1, r1) == (col0, row0, col0 + width, row0 + height):
            return level.image[r0:r1, c0:c1].copy()
        out = self._blank(height, width)
        if c0 < c1 and r0 < r1:
            out[r0 - row0 : r1 - row0, c0 - col0 : c1 - col0] = level.image[r0:r1, c0:c1]
        return out

    def _blank(self, height: int, width: int) -> Image:
        """A background-coloured image; copied from a cached one because numpy fills an
        (H, W, 3) array from a 3-vector ~100x slower than it copies one."""
        blank = self._blanks.get((height, width))
        if blank is None:
            blank = np.empty((height, width, 3), dtype=np.uint8)
            for channel in range(3):
                blank[:, :, channel] = self._background[channel]
            self._blanks[(height, width)] = blank
        return blank.copy()

    @staticmethod
    def _crop_transform(
        level: _Level, col0: int, row0: int, width: int, height: int
    ) -> GeoTransform:
        mpp = level.transform.metres_per_px
        return GeoTransform(
            x0_m=level.transform.x0_m + col0 * mpp,
            y0_m=level.transform.y0_m - row0 * mpp,
            metres_per_px=mpp,
            width=width,
            height=height,
            projection=level.transform.projection,
        )

    # images --------------------------------------------------------------------------------
    def location_map(
        self,
        x_m: float,
        y_m: float,
        heading_deg: float,
        *,
        size_px: int = 256,
        metres_per_px: float | None = None,
        trail: Sequence[tuple[float, float]] | npt.NDArray[np.float64] | None = None,
    ) -> Image:
        """A ``size_px`` square crop centred on the agent, north up, with a red arrow at
        ``(x_m, y_m)`` pointing along ``heading_deg`` (clockwise from north) and, when given,
        the ``trail`` of past positions (metres) in orange. ``metres_per_px`` defaults to the
        base map's scale (a pure crop); other scales use a resampled copy made once."""
        image, _ = self.location_map_with_transform(
            x_m, y_m, heading_deg, size_px=size_px, metres_per_px=metres_per_px, trail=trail
        )
        return image

    def location_map_with_transform(
        self,
        x_m: float,
        y_m: float,
        heading_deg: float,
        *,
        size_px: int = 256,
        metres_per_px: float | None = None,
        trail: Sequence[tuple[float, float]] | npt.NDArray[np.float64] | None = None,
    ) -> tuple[Image, GeoTransform]:
        """:meth:`location_map` and the geotransform of the returned image."""
        if size_px < 16:
            msg = f"`size_px` must be >= 16, got {size_px}"
            raise ConfigError(msg)
        level = self._level(metres_per_px or self.transform.metres_per_px)
        col, row = level.transform.xy_to_px(x_m, y_m)
        col0 = round(float(col) - (size_px - 1) / 2)
        row0 = round(float(row) - (size_px - 1) / 2)
        out = self._crop(level, col0, row0, size_px, size_px)
        if trail is not None and len(trail) >= 2:
            points = np.asarray(trail, dtype=np.float64)
            cols, rows = level.transform.xy_to_px(points[:, 0], points[:, 1])
            draw_polyline(out, cols - col0, rows - row0, thickness_px=max(2, size_px // 100))
        draw_arrow(
            out, float(col) - col0, float(row) - row0, heading_deg, length_px=max(12, size_px / 12)
        )
        self._credit(out)
        return out, self._crop_transform(level, col0, row0, size_px, size_px)

    def _area_view(
        self,
        size_px: int,
        include: Sequence[tuple[float, float]] = (),
        margin_m: float = 25.0,
    ) -> tuple[Image, GeoTransform]:
        """The exploration area (grown to hold ``include`` points), longest side ``size_px``."""
        if size_px < 64:
            msg = f"`size_px` must be >= 64, got {size_px}"
            raise ConfigError(msg)
        x_min, y_min = self.area.x_min_m, self.area.y_min_m
        x_max, y_max = self.area.x_max_m, self.area.y_max_m
        for x, y in include:
            x_min, x_max = min(x_min, x - margin_m), max(x_max, x + margin_m)
            y_min, y_max = min(y_min, y - margin_m), max(y_max, y + margin_m)
        mpp = max(x_max - x_min, y_max - y_min) / size_px
        level = self._level(mpp)
        col_a, row_a = level.transform.xy_to_px(x_min, y_max)  # centre coords of the NW edge
        col0 = math.floor(float(col_a) + 0.5)
        row0 = math.floor(float(row_a) + 0.5)
        width = max(1, round((x_max - x_min) / mpp))
        height = max(1, round((y_max - y_min) / mpp))
        return self._crop(level, col0, row0, width, height), self._crop_transform(
            level, col0, row0, width, height
        )

    def area_map(self, *, size_px: int = 800) -> Image:
        """The whole exploration area, longest side ``size_px``."""
        image, _ = self._area_view(size_px)
        return self._credit(image)

    def grid_map(self, *, n: int | None = None, size_px: int = 800, origin: int = 1) -> Image:
        """The exploration area with the N x N grid, each cell labelled ``x:i y:j``, counted
        from ``origin`` (1; the reference benchmark's maps count from 0)."""
        image, _ = self.grid_map_with_transform(n=n, size_px=size_px, origin=origin)
        return image

    def grid_map_with_transform(
        self, *, n: int | None = None, size_px: int = 800, origin: int = 1
    ) -> tuple[Image, GeoTransform]:
        grid = self.grid if n is None else self.grid.with_n(n)
        image, transform = self._area_view(size_px)
        xs = [grid.x_min_m + k * grid.cell_width_m for k in range(grid.n + 1)]
        ys = [grid.y_max_m - k * grid.cell_height_m for k in range(grid.n + 1)]
        cols, _ = transform.xy_to_px(xs, grid.y_max_m)
        _, rows = transform.xy_to_px(grid.x_min_m, ys)
        thickness = max(2, size_px // 300)
        top, bottom = float(rows[0]), float(rows[-1])
        left, right = float(cols[0]), float(cols[-1])
        for col in cols:
            draw_polyline(
                image, [col, col], [top, bottom], color=(40, 40, 40), thickness_px=thickness
            )
        for row in rows:
            draw_polyline(
                image, [left, right], [row, row], color=(40, 40, 40), thickness_px=thickness
            )
        cell_px = min(abs(cols[1] - cols[0]), abs(rows[1] - rows[0]))
        font_px = int(np.clip(cell_px / 7, 11, 22))
        for i in range(1, grid.n + 1):
            for j in range(1, grid.n + 1):
                label = format_cell(i - 1 + origin, j - 1 + origin)
                stamp = text_stamp(label, font_px, color=(20, 20, 20), box=(255, 255, 255, 215))
                stamp_text(
                    image,
                    stamp,
                    round(float(cols[i - 1])) + thickness + 2,
                    round(float(rows[j - 1])) + thickness + 2,
                )
        return self._credit(image), transform

    def route_map(
        self,
        start_xy: tuple[float, float],
        goal_xy: tuple[float, float],
        *,
        size_px: int = 800,
        path_xy: Sequence[tuple[float, float]] | None = None,
    ) -> Image:
        """The exploration area with a BLUE start marker and a RED goal marker (metres)."""
        image, _ = self.route_map_with_transform(
            start_xy, goal_xy, size_px=size_px, path_xy=path_xy
        )
        return image

    def route_map_with_transform(
        self,
        start_xy: tuple[float, float],
        goal_xy: tuple[float, float],
        *,
        size_px: int = 800,
        path_xy: Sequence[tuple[float, float]] | None = None,
    ) -> tuple[Image, GeoTransform]:
        image, transform = self._area_view(size_px, include=(start_xy, goal_xy))
        radius = max(6.0, size_px / 80)
        if path_xy is not None and len(path_xy) >= 2:
            path = np.asarray(path_xy, dtype=np.float64)
            cols, rows = transform.xy_to_px(path[:, 0], path[:, 1])
            draw_polyline(
                image, cols, rows, color=(90, 90, 200), thickness_px=max(2, size_px // 250)
            )
        for (x, y), color in ((start_xy, START_RGB), (goal_xy, GOAL_RGB)):
            col, row = transform.xy_to_px(x, y)
            draw_marker(image, float(col), float(row), color=color, radius_px=radius)
        return self._credit(image), transform

    def landmark_map(
        self, x_m: float, y_m: float, *, size_px: int = 800, label: str | None = None
    ) -> Image:
        """The exploration area with a magenta marker on the landmark and its ``label``."""
        image, _ = self.landmark_map_with_transform(x_m, y_m, size_px=size_px, label=label)
        return image

    def landmark_map_with_transform(
        self, x_m: float, y_m: float, *, size_px: int = 800, label: str | None = None
    ) -> tuple[Image, GeoTransform]:
        image, transform = self._area_view(size_px, include=((x_m, y_m),))
        col, row = transform.xy_to_px(x_m, y_m)
        radius = max(6.0, size_px / 80)
        draw_marker(image, float(col), float(row), color=LANDMARK_RGB, radius_px=radius)
        if label:
            stamp = text_stamp(label, int(np.clip(size_px / 45, 11, 20)), color=(20, 20, 20))
            stamp_text(
                image, stamp, round(float(col) + radius + 4), round(float(row) - stamp.height / 2)
            )
        return self._credit(image), transform


def _png(image: Image) -> bytes:
    import io

    from PIL import Image as PilImage

    buffer = io.BytesIO()
    PilImage.fromarray(image, "RGB").save(buffer, format="PNG", compress_level=6)
    return buffer.getvalue()
