"""A city's ``city.json`` as ingest makes and extends it: one frame for every trajectory.

Every trajectory's poses are metres in the city's local projection (``city.json``'s origin).
A new city's origin is the centre of the first batch's tracks. Two ``city360 ingest`` runs
into one new city at once each centred their own, and the one whose ``city.json`` landed
second had its poses in a frame the city did not use, hundreds of metres off, without a word.
So the origin is claimed at the start of a batch, under the manifest's lock
(:func:`claim_city`): the second run reads the first run's. :func:`update_manifest` extends
the manifest under the same lock, and puts into the city's frame any result made in another
one (a caller of :func:`~city360.video_store.ingest.ingest_video` that chose its own), from
the poses' latitude and longitude.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from city360._atomic import atomic_write_text, lock_file
from city360.city import CityDir, CityManifest, SourceFile
from city360.geo import LocalProjection
from city360.video_store.gps import GpsTrack, validate_track

if TYPE_CHECKING:
    from city360.video_store.ingest import IngestOptions, IngestResult

__all__ = ["city_projection", "claim_city", "release_city", "update_manifest"]

_EMPTY_BBOX = (90.0, 180.0, -90.0, -180.0)
"""South, west, north, east of a city with no trajectory yet: every walk widens it."""


def city_projection(city: CityDir, tracks: Sequence[GpsTrack]) -> LocalProjection:
    """The city's projection from ``city.json``; a new one centred on ``tracks`` otherwise."""
    if city.exists():
        return city.read_manifest().projection
    lats = np.concatenate([validate_track(t).lat for t in tracks])
    lons = np.concatenate([validate_track(t).lon for t in tracks])
    centre_lat = round(0.5 * float(lats.min() + lats.max()), 6)
    centre_lon = round(0.5 * float(lons.min() + lons.max()), 6)
    return LocalProjection(centre_lat, centre_lon)


def _new_manifest(city: CityDir, projection: LocalProjection) -> CityManifest:
    return CityManifest(
        name=city.root.resolve().name,
        crs=projection.proj4,
        origin_lat=projection.origin_lat,
        origin_lon=projection.origin_lon,
        bbox=_EMPTY_BBOX,
        stats={"trajectories": 0},
    )


def claim_city(
    city_dir: str | os.PathLike[str], tracks: Sequence[GpsTrack]
) -> tuple[LocalProjection, bool]:
    """The projection a batch of ``tracks`` is ingested in, and whether this call made the
    city: read from ``city.json``, or for a new city centred on ``tracks`` and written at once
    as a ``city.json`` without trajectories, under the manifest's lock, so a second ingest into
    the same new city reads it. Pair with :func:`release_city` when the batch keeps nothing."""
    city = CityDir(city_dir)
    with city.manifest_lock():
        if city.exists():
            return city.read_manifest().projection, False
        projection = city_projection(city, tracks)
        city.write_manifest(_new_manifest(city, projection))
        return projection, True


def release_city(city_dir: str | os.PathLike[str]) -> None:
    """Undo :func:`claim_city` for a batch that kept nothing: remove ``city.json`` unless the
    trajectories folder holds anything by now (another ingest's trajectories, or its partial
    folders while it runs), then the folder when that leaves it empty, as a failed ingest into
    a new city always left no trace. Never raises for a folder another process fills
    meanwhile."""
    city = CityDir(city_dir)
    lock = lock_file(city.manifest_path)
    with city.manifest_lock():
        if city.trajectories_dir.is_dir() and any(city.trajectories_dir.iterdir()):
            return
        city.manifest_path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):  # another ingest may be creating them right now
        if city.trajectories_dir.is_dir():
            city.trajectories_dir.rmdir()
        if [p.name for p in city.root.iterdir()] == [lock.name]:
            lock.unlink()
            city.root.rmdir()


def _into_city_frame(
    city: CityDir, results: Sequence[IngestResult], city_frame: LocalProjection
) -> None:
    """Rewrite the poses of ``results``, made in another local frame, as metres in
    ``city_frame``, from their latitude and longitude (stored to 1e-9 degrees). Headings stay:
    two local frames of one city turn against each other by well under 0.01 degrees."""
    for result in results:
        poses = city.read_poses(result.trajectory_id)
        x_m, y_m = city_frame.to_xy(poses.lat, poses.lon)
        moved = dataclasses.replace(poses, x_m=x_m, y_m=y_m)
        atomic_write_text(city.poses_path(result.trajectory_id), moved.to_csv())


def update_manifest(
    city_dir: str | os.PathLike[str],
    projection: LocalProjection,
    results: Sequence[IngestResult],
    options: IngestOptions,
) -> CityManifest:
    """Create or extend ``city.json`` with the ingested sources, bbox and ingest parameters,
    under the manifest's lock (two ingests into one city each keep the other's). ``results``
    were made in ``projection``; if the city has another, their poses are put into it."""
    city = CityDir(city_dir)
    with city.manifest_lock():
        manifest = city.read_manifest() if city.exists() else _new_manifest(city, projection)
        if manifest.projection != projection:
            _into_city_frame(city, results, manifest.projection)
        updated = _extended(city, manifest, results, options)
        city.write_manifest(updated)
    return updated


def _extended(
    city: CityDir,
    manifest: CityManifest,
    results: Sequence[IngestResult],
    options: IngestOptions,
) -> CityManifest:
    """``manifest`` with ``results``' sources, bbox, offsets and layouts added."""
    south, west, north, east = manifest.bbox
    known = {(s.kind, s.path) for s in manifest.sources}
    sources = list(manifest.sources)
    for result in results:
        south, north = min(south, result.lat_range[0]), max(north, result.lat_range[1])
        west, east = min(west, result.lon_range[0]), max(east, result.lon_range[1])
        for kind, path, digest in (
            ("video", result.source_video, result.video_sha256),
            ("gps", result.gps_source, result.gps_sha256),
        ):
            if (kind, str(path)) not in known:
                known.add((kind, str(path)))
                sources.append(SourceFile(kind=kind, path=str(path), sha256=digest))
    build = dict(manifest.build)
    build["ingest"] = {
        "spacing_m": options.spacing_m,
        "max_width": options.max_width,
        "offset": options.offset,
        "crf": options.crf,
        "offsets_s": {
            **build.get("ingest", {}).get("offsets_s", {}),
            **{r.trajectory_id: round(r.offset_s, 3) for r in results},
        },
        "layout": options.layout,
        "fisheye_fov_deg": options.fisheye.fov_deg,
        "layouts": {
            **build.get("ingest", {}).get("layouts", {}),
            **{r.trajectory_id: r.layout for r in results},
        },
    }
    stats = dict(manifest.stats)
    stats["trajectories"] = len(city.trajectory_ids()) if city.trajectories_dir.is_dir() else 0
    return manifest.model_copy(
        update={
            "bbox": (south, west, north, east),
            "sources": sources,
            "build": build,
            "stats": stats,
        }
    )
