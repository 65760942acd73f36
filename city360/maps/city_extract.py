"""Keep a city's OSM data inside the city: ``map/extract.osm``, cropped to the city's area.

``city360 build CITY --osm district.osm.pbf`` names a file that may lie anywhere and may cover
far more than the city. Later stages (maps, tasks, ``info``, the viewer) need the same data, and
a city directory must still work after it is moved or copied, so the extract is cropped to the
city's bounding box plus :data:`CROP_MARGIN_M` and written into the city as OSM XML, and
``city.json`` records both the original file and the kept extract with their SHA-256 and the
ODbL attribution. :meth:`city360.city.CityDir.osm_source` is then the one answer to "where is
this city's OSM data".

The crop is staged beside the city's files and only takes the place of ``map/extract.osm`` when
the caller's block succeeds (:func:`city_extract`), so a build that fails leaves the city as it
was.
"""

from __future__ import annotations

import logging
import math
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from city360.city import OSM_ATTRIBUTION, OSM_EXTRACT, CityDir, SourceFile, file_sha256
from city360.errors import CityFormatError, OsmError
from city360.geo import LocalProjection

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from city360.maps._osm_extract import _Crop

__all__ = ["CROP_MARGIN_M", "city_extract", "keep_city_extract"]

CROP_MARGIN_M = 250.0
"""Metres of OSM data kept around the city's bounding box (streets and shops just beyond the
last filmed frame still belong on its maps)."""


def _crop_bbox(
    bbox: tuple[float, float, float, float], margin_m: float, projection: LocalProjection
) -> tuple[float, float, float, float]:
    """``bbox`` (south, west, north, east; degrees) widened by ``margin_m`` metres each way,
    measured in the city's own projection."""
    south, west, north, east = bbox
    xs, ys = projection.to_xy([south, south, north, north], [west, east, east, west])
    lat, lon = projection.to_latlon(
        [xs.min() - margin_m, xs.max() + margin_m, xs.max() + margin_m, xs.min() - margin_m],
        [ys.min() - margin_m, ys.min() - margin_m, ys.max() + margin_m, ys.max() + margin_m],
    )
    return (
        max(-90.0, float(lat.min())),
        max(-180.0, float(lon.min())),
        min(90.0, float(lat.max())),
        min(180.0, float(lon.max())),
    )


def _fmt(bbox: tuple[float, float, float, float] | None) -> str:
    return "nothing" if bbox is None else ",".join(f"{v:.5f}" for v in bbox)


def _overlaps(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]


def _not_covered(
    src: Path,
    city: CityDir,
    city_bbox: tuple[float, float, float, float],
    area: tuple[float, float, float, float],
    crop: _Crop,
    margin_m: float,
) -> str:
    """The message for an extract without a node in the crop ``area`` (S,W,N,E degrees):
    an extract of somewhere else, or one whose nodes span the city without one near it (cut
    around another part of that span with its ways kept whole), which "covers" would hide."""
    if crop.file_extent is not None and _overlaps(crop.file_extent, area):
        return (
            f"OSM extract {src} has no map data within {margin_m:g} m of the city {city.root}: "
            f"the city lies in {_fmt(city_bbox)} (S,W,N,E) and the extract's "
            f"{crop.file_nodes} nodes span {_fmt(crop.file_extent)}, none of them near the "
            "city; pass an extract that includes this city's area"
        )
    return (
        f"OSM extract {src} does not cover the city {city.root}: the city lies in "
        f"{_fmt(city_bbox)} (S,W,N,E) and the extract covers {_fmt(crop.file_extent)}; pass "
        "the extract of this city's area"
    )


def _record(city: CityDir, original: Path | None) -> None:
    """Name the kept extract (and the file it came from) in ``city.json`` ``sources``."""
    entries = [
        SourceFile(
            kind="osm",
            path=OSM_EXTRACT,
            sha256=file_sha256(city.osm_extract_path),
            attribution=OSM_ATTRIBUTION,
        )
    ]
    if original is not None:
        entries.insert(
            0,
            SourceFile(
                kind="osm",
                path=str(original.resolve()),
                sha256=file_sha256(original),
                attribution=OSM_ATTRIBUTION,
            ),
        )
    replaced = {entry.path for entry in entries}
    with city.manifest_lock():
        manifest = city.read_manifest()
        sources = [s for s in manifest.sources if not (s.kind == "osm" and s.path in replaced)]
        city.write_manifest(manifest.model_copy(update={"sources": [*sources, *entries]}))


@contextmanager
def city_extract(
    city: CityDir, source: str | os.PathLike[str], *, margin_m: float = CROP_MARGIN_M
) -> Iterator[Path]:
    """Crop ``source`` (``.osm``, ``.osm.bz2`` or ``.osm.pbf``) to the city; yield the crop.

    The crop is the manifest's bbox (south, west, north, east; degrees) widened by
    ``margin_m`` metres. When the ``with`` block ends without an error the crop becomes
    ``map/extract.osm`` and ``city.json`` names it; on an error nothing in the city changes.
    When ``source`` already is the city's own extract, or the city is a synthetic one that has
    its extract (its 3D scene was made from it, and task images rebuild the scene from it),
    the extract is yielded as it is and never replaced. Raises
    :class:`~city360.errors.OsmError` when ``source`` has no data in the city's area.
    """
    from city360.maps._osm_extract import _check_source, _crop_to_xml

    if margin_m < 0 or not math.isfinite(margin_m):
        msg = f"`margin_m` must be a finite number >= 0, got {margin_m}"
        raise ValueError(msg)
    src = _check_source(source)
    target = city.osm_extract_path
    manifest = city.read_manifest()
    if target.is_file() and (manifest.synthetic or src.resolve() == target.resolve()):
        if src.resolve() != target.resolve():
            _warn_if_not_the_twins(src, manifest.sources, target)
        yield target
        if not any(s.kind == "osm" and s.path == OSM_EXTRACT for s in manifest.sources):
            _record(city, None)
        return
    south, west, north, east = manifest.bbox
    if not (south <= north and west <= east):
        msg = (
            f"{city.manifest_path}: bbox {manifest.bbox} is empty, so there is no area to crop "
            f"{src} to; ingest videos into the city first (`city360 ingest ... --out CITY`)"
        )
        raise CityFormatError(msg)
    area = _crop_bbox(manifest.bbox, margin_m, manifest.projection)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".osm-crop-", dir=target.parent) as tmp:
        crop = _crop_to_xml(src, Path(tmp) / "extract.osm", area)
        if crop.nodes_inside == 0:
            raise OsmError(_not_covered(src, city, manifest.bbox, area, crop, margin_m))
        yield crop.path
        os.replace(crop.path, target)
    _record(city, src)


def _warn_if_not_the_twins(src: Path, sources: list[SourceFile], target: Path) -> None:
    """Warn when ``src`` is not the extract a synthetic twin was made from: the twin keeps its
    own (its truth is that extract's streets), so a user who passed another area's file built
    against the twin's map without a word (``build --osm Helsinki.osm.pbf`` of a Nerima twin)."""
    recorded = {s.sha256 for s in sources if s.kind == "osm"}
    if file_sha256(src) in recorded:
        return
    made_from = [s.path for s in sources if s.kind == "osm" and s.path != OSM_EXTRACT]
    log.warning(
        "%s is not the extract this synthetic twin was made from (%s); the twin's own %s is "
        "used, as its ground truth follows it",
        src,
        ", ".join(made_from) or "unrecorded",
        target,
    )


def keep_city_extract(
    city: CityDir, source: str | os.PathLike[str], *, margin_m: float = CROP_MARGIN_M
) -> Path:
    """Crop ``source`` to the city and keep it as ``map/extract.osm`` at once (see
    :func:`city_extract`); returns the kept extract's path."""
    with city_extract(city, source, margin_m=margin_m):
        pass
    return city.osm_extract_path
