"""Ingest a photo sequence (interval shooting: a geotagged 360° JPEG every 1-3 m) into
``trajectories/<id>/``, the same files a video gives.

Each photo is one candidate frame. Its time is the EXIF time (GPSDateStamp + GPSTimeStamp, else
DateTimeOriginal with OffsetTimeOriginal, else read as UTC); its place is the EXIF GPS position,
or, with a GPS track (GPX or CSV), the smoothed track at that time plus the ``offset`` (GPS minus
camera clock, seconds). A partial panorama (a phone's photo sphere) whose GPano XMP gives its
full panorama is placed in it, black elsewhere (:mod:`.gpano`). A photo without a time,
without a position (and no track), or that is not a 2:1 panorama (a flat test shot) is left
out with a warning naming it, and so are photos taken outside the GPS track's time span when
at least two are inside it; the walk's other photos ingest.
Photos are ordered by time (the given order breaks ties: cameras stamp whole seconds), photos
taken without moving ``spacing_m / 2`` are dropped (the photographer stood still), and the rest
are stored as all-intra frames. The travel heading is the chord from the previous to the next
kept photo. A gap wider than :func:`city360.city.max_pose_step_m` (photos missing, the camera
paused) splits the sequence into several trajectories ``<name>``, ``<name>_2``, ... so each is
one the pose-graph build accepts.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from city360._atomic import atomic_dir
from city360.city import CityDir, TrajectoryMeta, TrajectoryPoses
from city360.errors import ConfigError, GpsError, VideoError
from city360.geo import LocalProjection
from city360.video_store.clean import clean_track
from city360.video_store.decode import EQUIRECT_ASPECT_TOLERANCE
from city360.video_store.gpano import place_in_full_pano, read_pano_crop
from city360.video_store.gps import GpsTrack, read_track
from city360.video_store.gps.exif import read_exif_fixes
from city360.video_store.ingest import (
    IngestOptions,
    IngestResult,
    check_in_city,
    check_target,
    part_id,
    trajectory_id_for,
)
from city360.video_store.resample import _zone_hint, continuous_parts
from city360.video_store.writer import FrameWriter, output_size

__all__ = ["PhotoPlaces", "ingest_photos", "place_photos"]

FloatArray = npt.NDArray[np.float64]

log = logging.getLogger(__name__)


class PhotoPlaces:
    """Where and when each photo was taken: ``photos`` in time order, ``t_s`` POSIX seconds
    (camera clock), ``x_m``/``y_m`` metres in the city CRS."""

    def __init__(
        self, photos: list[Path], t_s: FloatArray, x_m: FloatArray, y_m: FloatArray
    ) -> None:
        self.photos, self.t_s, self.x_m, self.y_m = photos, t_s, x_m, y_m

    def __len__(self) -> int:
        return len(self.photos)


def place_photos(
    photos: Sequence[Path],
    projection: LocalProjection,
    *,
    gps: Path | None = None,
    offset_s: float = 0.0,
    osm: Path | None = None,
) -> PhotoPlaces:
    """Time and place of every photo (see the module docstring), in time order. With a ``gps``
    track and an ``osm`` extract, the track's gaps are bridged along the extract's streets
    (:func:`~city360.video_store.map_bridge.bridge_gaps`) before the photos are placed on it."""
    tagged, fixes = read_exif_fixes([Path(p) for p in photos], require_position=gps is None)
    t = np.array([f[0] for f in fixes], np.float64)
    order = np.argsort(t, kind="stable")
    ordered = [tagged[int(i)] for i in order]
    t = t[order]
    if gps is None:
        lat = np.array([fixes[int(i)][1] for i in order], np.float64)
        lon = np.array([fixes[int(i)][2] for i in order], np.float64)
        x, y = projection.to_xy(lat, lon)
        return PhotoPlaces(ordered, t, np.asarray(x, np.float64), np.asarray(y, np.float64))
    track: GpsTrack = read_track(gps)
    smooth = clean_track(track, projection)
    if osm is not None:
        from city360.video_store.map_bridge import bridge_gaps, gaps_to_bridge, load_street_routes

        if gaps_to_bridge(smooth):
            smooth, _ = bridge_gaps(smooth, load_street_routes(osm, projection))
    gps_t = t + offset_s
    outside = (gps_t < smooth.start_s - 1.0) | (gps_t > smooth.end_s + 1.0)
    if outside.any():
        first = ordered[int(np.argmax(outside))]
        zone = _zone_hint(smooth.start_s, smooth.end_s, float(gps_t[0]), float(gps_t[-1]), offset_s)
        msg = (
            f"photo {first} was taken outside GPS track {gps}'s time span "
            f"({int(outside.sum())} of {len(ordered)} photos); pair the right track, or pass "
            f"--offset SECONDS if the camera clock is wrong{zone}"
        )
        if int((~outside).sum()) < 2:
            raise GpsError(msg)
        # the logger stopped before the camera (or started after it): the photos it covers
        # still make a walk, as a video's frames outside its track are dropped with a warning
        log.warning("%s; those photos are left out", msg)
        inside = np.flatnonzero(~outside)
        ordered, t, gps_t = [ordered[int(k)] for k in inside], t[inside], gps_t[inside]
    x, y, _ = smooth.sample(gps_t)
    return PhotoPlaces(ordered, t, x, y)


def _moving_subset(places: PhotoPlaces, spacing_m: float) -> list[int]:
    """Indices of photos to keep: each at least ``spacing_m / 2`` from the last kept one."""
    keep = [0]
    for k in range(1, len(places)):
        a = keep[-1]
        moved = math.hypot(places.x_m[k] - places.x_m[a], places.y_m[k] - places.y_m[a])
        if moved >= 0.5 * spacing_m:
            keep.append(k)
    return keep


def _headings(x: FloatArray, y: FloatArray) -> FloatArray:
    """Travel heading (degrees clockwise from north, [0, 360)) from neighbour to neighbour."""
    n = x.shape[0]
    ahead = np.minimum(np.arange(n) + 1, n - 1)
    behind = np.maximum(np.arange(n) - 1, 0)
    return np.mod(np.degrees(np.arctan2(x[ahead] - x[behind], y[ahead] - y[behind])), 360.0)


def _read_rgb(path: Path) -> npt.NDArray[np.uint8]:
    import cv2

    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        msg = f"photo {path} cannot be decoded; is it a JPEG? re-copy it from the camera"
        raise VideoError(msg)
    height, width = image.shape[:2]
    rgb: npt.NDArray[np.uint8] = np.ascontiguousarray(image[:, :, ::-1], dtype=np.uint8)
    if abs(width / height / 2.0 - 1.0) <= EQUIRECT_ASPECT_TOLERANCE:
        return rgb
    crop = read_pano_crop(path, width, height)
    if crop is None:
        raise VideoError(_NOT_2_TO_1.format(path=path, width=width, height=height))
    return place_in_full_pano(rgb, crop)


_NOT_2_TO_1 = (
    "photo {path} is {width}x{height}, not a 2:1 equirectangular 360° photo, and its XMP does "
    "not place it in a full panorama (GPano:FullPanoWidthPixels, CroppedArea...); export it as "
    "an equirectangular panorama"
)


def _not_panorama(path: Path) -> str:
    """Why ``path`` is not a 2:1 equirectangular photo or a partial panorama its GPano XMP
    places in one, from its header ("" when it is either)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            width, height = image.size
    except (UnidentifiedImageError, OSError) as exc:
        return f"photo {path} cannot be decoded ({exc}); is it a JPEG? re-copy it from the camera"
    if abs(width / height / 2.0 - 1.0) <= EQUIRECT_ASPECT_TOLERANCE:
        return ""
    if read_pano_crop(path, width, height) is not None:
        return ""  # a partial panorama: placed in its full sphere when read
    return _NOT_2_TO_1.format(path=path, width=width, height=height)


def _panoramas(paths: Sequence[Path]) -> list[Path]:
    """The photos of ``paths`` that are 2:1 panoramas; the others (a flat shot from the same
    camera, a cut file) are left out with one warning that counts them and names the first.
    :class:`VideoError` naming the first when fewer than two are left."""
    problems = {path: _not_panorama(path) for path in paths}
    kept = [path for path in paths if not problems[path]]
    refused = [problem for problem in problems.values() if problem]
    if refused and len(kept) < 2:
        raise VideoError(refused[0])
    if refused:
        log.warning("%d of %d photos left out; the first: %s", len(refused), len(paths), refused[0])
    return kept


def _sequence_sha256(photos: Sequence[Path]) -> str:
    from city360.city import file_sha256

    digest = hashlib.sha256()
    for photo in photos:
        digest.update(file_sha256(photo).encode())
    return digest.hexdigest()


def ingest_photos(
    name: str,
    photos: Sequence[str | os.PathLike[str]],
    gps: str | os.PathLike[str] | None,
    city_dir: str | os.PathLike[str],
    *,
    projection: LocalProjection,
    options: IngestOptions | None = None,
) -> list[IngestResult]:
    """Ingest one photo sequence into ``city_dir``; one result per trajectory written."""
    started = time.perf_counter()
    opts = options or IngestOptions()
    if opts.offset == "auto":
        msg = "--offset auto needs video motion; for photos pass --offset SECONDS or omit it"
        raise ConfigError(msg)
    paths = [Path(p) for p in photos]
    if len(paths) < 2:
        msg = f"photo sequence {name!r} has {len(paths)} photo; a trajectory needs several"
        raise ConfigError(msg)
    gps_path = Path(gps) if gps is not None else None
    places = place_photos(
        _panoramas(paths),
        projection,
        gps=gps_path,
        offset_s=float(opts.offset or 0.0),
        osm=opts.osm,
    )
    check_in_city(
        f"photo sequence {name!r} ({gps_path or paths[0].parent})",
        places.x_m, places.y_m, projection, city_dir,
    )  # fmt: skip
    keep = _moving_subset(places, opts.spacing_m)
    x, y, t = places.x_m[keep], places.y_m[keep], places.t_s[keep]
    kept = [places.photos[k] for k in keep]
    pieces, _ = continuous_parts(x, y, spacing_m=opts.spacing_m)
    if not pieces:
        msg = (
            f"photo sequence {name!r}: its {len(paths)} photos lie within "
            f"{opts.spacing_m / 2:g} m of each other or far apart; a trajectory needs photos "
            "taken every few metres along a walk"
        )
        raise GpsError(msg)
    city = CityDir(city_dir)
    base = trajectory_id_for(Path(name + ".jpg"))
    first = _read_rgb(kept[pieces[0][0]])
    out_w, out_h = output_size(first.shape[1], first.shape[0], opts.max_width)
    source = str(paths[0].parent if len(set(p.parent for p in paths)) == 1 else paths[0])
    sha = _sequence_sha256(paths)
    gps_source = str(gps_path) if gps_path is not None else source
    gps_sha = sha if gps_path is None else _sequence_sha256([gps_path])
    results: list[IngestResult] = []
    targets = [  # every part checked before any is written
        check_target(city, part_id(base, number), source=Path(source), number=number, options=opts)
        for number in range(1, len(pieces) + 1)
    ]
    for number, ((a, b), target) in enumerate(zip(pieces, targets, strict=True), start=1):
        tid = part_id(base, number)
        px, py, pt = x[a:b], y[a:b], t[a:b]
        with atomic_dir(target, replace=opts.overwrite) as tmp:
            with FrameWriter(tmp / "frames.mp4", out_w, out_h, crf=opts.crf) as writer:
                for photo in kept[a:b]:
                    writer.write(_fit(_read_rgb(photo), out_w, out_h))
            if opts.pyramid:
                from city360.video_store.pyramid import build_levels

                build_levels(tmp / "frames.mp4", crf=opts.crf)
            lat, lon = projection.to_latlon(px, py)
            poses = TrajectoryPoses(
                x_m=px,
                y_m=py,
                lat=np.asarray(lat, np.float64),
                lon=np.asarray(lon, np.float64),
                heading_deg=_headings(px, py),
                t_s=pt - pt[0],
                source_pts=np.asarray([places.photos.index(p) for p in kept[a:b]], np.int64),
            )
            length_m = float(np.hypot(np.diff(px), np.diff(py)).sum())
            meta = TrajectoryMeta(
                id=tid,
                source_video=source,
                source_sha256=sha,
                gps_source=gps_source,
                width=out_w,
                height=out_h,
                frame_count=b - a,
                spacing_m=opts.spacing_m,
                camera_yaw_offset_deg=0.0,
                clock_offset_s=float(opts.offset or 0.0),
                length_m=length_m,
                part=number if len(pieces) > 1 else None,
            )
            CityDir.write_trajectory_files(tmp, meta, poses)
        results.append(
            IngestResult(
                trajectory_id=tid,
                folder=target,
                source_video=Path(source),
                gps_source=Path(gps_source),
                frame_count=b - a,
                width=out_w,
                height=out_h,
                length_m=length_m,
                offset_s=float(opts.offset or 0.0),
                sync_method="given" if opts.offset is not None else "exif",
                sync_score=None,
                dropped_fixes=len(paths) - len(keep),
                visual_heading=False,
                video_duration_s=float(pt[-1] - pt[0]),
                elapsed_s=time.perf_counter() - started,
                lat_range=(float(np.min(lat)), float(np.max(lat))),
                lon_range=(float(np.min(lon)), float(np.max(lon))),
                video_sha256=sha,
                gps_sha256=gps_sha,
                part=number if len(pieces) > 1 else None,
            )
        )
    return results


def _fit(image: npt.NDArray[np.uint8], width: int, height: int) -> npt.NDArray[np.uint8]:
    """``image`` scaled to ``width`` x ``height`` (area averaging) when it is not that size."""
    if image.shape[:2] == (height, width):
        return image
    import cv2

    return np.ascontiguousarray(cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA))
