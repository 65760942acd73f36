"""Pose-only trajectories from GPS tracks alone, the way ingest places a video without its pictures.

A city made with ``city360 synth --poses-only`` has a GPX per video but no video. This module
turns each track into a trajectory as ingest would place the frames: video_store's cleaning
(speed gate, RTS smoothing, gaps bridged), then one pose every ``spacing_m`` metres travelled.
Headings are the chord between neighbouring poses (no video to refine them), ``t_s`` is GPS
time (seconds since the track's first kept fix) and the trajectory gets no ``frames.mp4``:
build it with ``city360 build --pose-only``. Used by the accuracy suite
(:mod:`city360.pose_graph.accuracy`) and by tests.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import numpy as np
import numpy.typing as npt

from city360._atomic import atomic_dir
from city360.city import CityDir, TrajectoryMeta, TrajectoryPoses, file_sha256
from city360.errors import GpsError, InputFileError
from city360.geo import LocalProjection
from city360.video_store.clean import CleanParams, SmoothTrack, clean_track

__all__ = ["poses_along", "split_at_breaks", "trajectories_from_gpx"]

log = logging.getLogger(__name__)

FloatArray = npt.NDArray[np.float64]


def split_at_breaks(smooth: SmoothTrack) -> list[SmoothTrack]:
    """``smooth`` cut at its GPS jumps (:attr:`SmoothTrack.breaks_s`): one track per continuous
    part, in time order (the whole track when it has none)."""
    if not smooth.breaks_s:
        return [smooth]
    edges = [smooth.start_s, *(t for span in smooth.breaks_s for t in span), smooth.end_s]
    parts = []
    for begin, end in zip(edges[::2], edges[1::2], strict=True):
        grid = (smooth.t_s >= begin) & (smooth.t_s <= end)
        fixes = (smooth.meas_t_s >= begin) & (smooth.meas_t_s <= end)
        if grid.sum() < 2:
            continue
        parts.append(
            dataclasses.replace(
                smooth,
                t_s=smooth.t_s[grid],
                x_m=smooth.x_m[grid],
                y_m=smooth.y_m[grid],
                speed_mps=smooth.speed_mps[grid],
                heading_deg=smooth.heading_deg[grid],
                meas_t_s=smooth.meas_t_s[fixes],
                meas_x_m=smooth.meas_x_m[fixes],
                meas_y_m=smooth.meas_y_m[fixes],
                breaks_s=(),
                meas_sigma_m=None if smooth.meas_sigma_m is None else smooth.meas_sigma_m[fixes],
            )
        )
    return parts


def poses_along(
    smooth: SmoothTrack,
    projection: LocalProjection,
    *,
    spacing_m: float = 1.0,
    origin_s: float | None = None,
) -> TrajectoryPoses:
    """Poses every ``spacing_m`` metres along ``smooth`` (metres in the city CRS; ``t_s``
    seconds since ``origin_s`` on the GPS clock, default the track's start; heading the chord
    between neighbours). Raises :class:`GpsError` when the track moves less than two poses'
    worth."""
    xy = np.column_stack([smooth.x_m, smooth.y_m])
    arc = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(xy, axis=0).T))])
    # the smoothed track may stand still (stops): arc must increase for interpolation
    moving = np.concatenate([[True], np.diff(arc) > 1e-9])
    arc, xy, t = arc[moving], xy[moving], smooth.t_s[moving]
    marks = np.arange(0.0, arc[-1], spacing_m)
    if len(marks) < 2:
        msg = (
            f"the GPS track ({smooth.meas_t_s.shape[0]} fixes) moves {arc[-1]:.1f} m in all, "
            f"less than two poses {spacing_m} m apart: a camera that stood still throughout "
            "has no trajectory"
        )
        raise GpsError(msg)
    x = np.interp(marks, arc, xy[:, 0])
    y = np.interp(marks, arc, xy[:, 1])
    times = np.interp(marks, arc, t) - (smooth.start_s if origin_s is None else origin_s)
    dx, dy = np.gradient(x), np.gradient(y)
    heading = np.mod(np.degrees(np.arctan2(dx, dy)), 360.0)
    lat, lon = projection.to_latlon(x, y)
    return TrajectoryPoses(
        x_m=x,
        y_m=y,
        lat=np.asarray(lat, np.float64),
        lon=np.asarray(lon, np.float64),
        heading_deg=heading,
        t_s=times,
        source_pts=np.arange(len(x), dtype=np.int64),
    )


def trajectories_from_gpx(
    city_dir: str | Path | CityDir,
    *,
    spacing_m: float = 1.0,
    params: CleanParams | None = None,
    osm: Path | None = None,
) -> list[str]:
    """Write one pose-only trajectory per ``videos/*.gpx`` of the city; returns their ids.

    With ``osm`` (an OSM extract of the area) GPS gaps are bridged along its streets where a
    route fits the track (:func:`city360.video_store.map_bridge.bridge_gaps`), as ingest does
    with ``--osm``.

    A track with GPS jumps (the receiver lost the position and found it elsewhere) gives one
    trajectory per continuous part, ``<stem>``, ``<stem>_2``, ... as ingest splits a video
    (:func:`city360.video_store.ingest.part_id`); ``t_s`` stays on the whole track's clock. A
    part along which the camera stood still throughout (a few metres, a stop collapsed to one
    place) gives no trajectory and is skipped with a warning. Raises
    :class:`InputFileError` when the city has no GPX under ``videos/``.
    """
    from city360.video_store.gps import read_track
    from city360.video_store.ingest import part_id

    city = city_dir if isinstance(city_dir, CityDir) else CityDir(city_dir)
    projection = city.read_manifest().projection
    tracks = sorted(city.videos_dir.glob("*.gpx"))
    if not tracks:
        msg = f"no GPX tracks in {city.videos_dir}; make the city with `city360 synth` first"
        raise InputFileError(msg)
    routes = None
    if osm is not None:
        from city360.video_store.map_bridge import load_street_routes

        routes = load_street_routes(osm, projection)
    ids = []
    for gpx in tracks:
        whole = clean_track(read_track(gpx), projection, params=params)
        if routes is not None:
            from city360.video_store.map_bridge import bridge_gaps

            whole, _ = bridge_gaps(whole, routes)
        kept = 0
        for part in split_at_breaks(whole):
            try:
                poses = poses_along(part, projection, spacing_m=spacing_m, origin_s=whole.start_s)
            except GpsError as exc:
                log.warning("%s skipped: %s", gpx.name, exc)
                continue
            kept += 1
            ids.append(_write(city, gpx, part_id(gpx.stem, kept), poses, spacing_m))
    return ids


def _write(
    city: CityDir, gpx: Path, trajectory_id: str, poses: TrajectoryPoses, spacing_m: float
) -> str:
    """Write one pose-only trajectory of ``gpx``; returns its id."""
    xy = np.column_stack([poses.x_m, poses.y_m])
    meta = TrajectoryMeta(
        id=trajectory_id,
        source_video=gpx.name,
        source_sha256=file_sha256(gpx),
        gps_source=gpx.name,
        width=0,
        height=0,
        frame_count=len(poses.x_m),
        spacing_m=spacing_m,
        camera_yaw_offset_deg=0.0,
        clock_offset_s=0.0,
        length_m=float(np.hypot(*np.diff(xy, axis=0).T).sum()),
    )
    with atomic_dir(city.trajectory_dir(trajectory_id), replace=True) as folder:
        CityDir.write_trajectory_files(folder, meta, poses)
    return trajectory_id
