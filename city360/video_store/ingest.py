"""Ingest one video and its GPS track into ``trajectories/<id>/`` of a city directory.

probe video -> read GPS -> clean + project -> sync clocks (maybe from motion) -> pose every
frame -> keep one per ``spacing_m`` -> encode all-intra + write poses, in a temporary folder
renamed into place only when complete. Inputs are checked before anything is written.

Speed: decoding the long-GOP source front to back is the floor (every frame is a reference
for the next). On top of it, only the kept frames (about one a metre) are touched at full
resolution, and they stay yuv420p as decoded (no RGB round trip); visual motion is measured
on ~10 frames a second scaled to 256 px grey by FFmpeg with one reused scaler; the kept
frames are encoded on a worker thread while decoding goes on. With ``--offset auto`` the
motion-only pass skips deblocking (~1/3 less decoding) and the second pass stops after the
last kept frame.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Literal

import numpy as np

from city360._atomic import atomic_dir
from city360.city import (
    CityDir,
    CityManifest,
    SourceFile,
    TrajectoryMeta,
    TrajectoryPoses,
    max_pose_step_m,
)
from city360.errors import GpsError, OutputError, VideoError
from city360.geo import LocalProjection
from city360.video_store.clean import CleanParams, clean_track
from city360.video_store.decode import VideoInfo, iter_frames, probe_video
from city360.video_store.gps import GpsTrack, read_embedded_track, read_track, validate_track
from city360.video_store.heading import fuse_heading
from city360.video_store.motion import MotionMeter, MotionSignal, still_spans
from city360.video_store.resample import (
    continuity_gaps,
    frame_times,
    select_frames,
    stationary_keep,
)
from city360.video_store.retake import stored_picture
from city360.video_store.smooth import heading_aided_smooth
from city360.video_store.sync import DEFAULT_SEARCH_S, resolve_sync
from city360.video_store.writer import (
    BackgroundWriter,
    FrameWriter,
    output_size,
    remux_subset,
)

__all__ = [
    "IngestOptions",
    "IngestResult",
    "ProgressCallback",
    "city_projection",
    "ingest_video",
    "load_track",
    "trajectory_id_for",
    "update_manifest",
]

ProgressCallback = Callable[[str, int, int], None]
"""``(phase, done, total)``: phase is "motion" or "frames"; counts are source frames."""


@dataclass(frozen=True, slots=True)
class IngestOptions:
    """How to ingest. ``offset``: None trusts the clocks, seconds (GPS minus camera), or
    "auto". ``max_width``: stored frames are at most this wide (None keeps the source)."""

    offset: float | Literal["auto"] | None = None
    spacing_m: float = 1.0
    max_width: int | None = 3840
    projection: Literal["equirect"] | None = None
    crf: int = 16
    pyramid: bool = True
    """Also write the frame pyramid (``frames_<width>.mp4``, ``video_store.pyramid``)."""
    offset_search_s: float = DEFAULT_SEARCH_S
    """How far ``offset='auto'`` searches each way, seconds."""
    overwrite: bool = False
    clean: CleanParams = field(default_factory=CleanParams)


@dataclass(frozen=True, slots=True)
class IngestResult:
    """What one ingest produced (and how long it took, for the benchmark harness)."""

    trajectory_id: str
    folder: Path
    source_video: Path
    gps_source: Path
    frame_count: int
    width: int
    height: int
    length_m: float
    offset_s: float
    sync_method: str
    sync_score: float | None
    dropped_fixes: int
    visual_heading: bool
    video_duration_s: float
    elapsed_s: float
    lat_range: tuple[float, float]
    lon_range: tuple[float, float]
    video_sha256: str
    gps_sha256: str


def trajectory_id_for(video: Path) -> str:
    """The trajectory id of a video: its file stem, reduced to ``[A-Za-z0-9._-]``."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", video.stem).strip("._")
    return cleaned or "trajectory"


def load_track(video: Path, gps: Path | None, info: VideoInfo | None = None) -> GpsTrack:
    """The GPS track for ``video``: ``gps`` when given, else the one embedded in the video."""
    created = info.creation_time_utc if info is not None else None
    if gps is not None:
        return read_track(gps, creation_time_utc=created)
    track = read_embedded_track(video, creation_time_utc=created)
    if track is None:
        msg = (
            f"video {video} has no embedded GPS (GoPro GPMF or CAMM); pass --gps TRACK "
            "(a .gpx or .csv with the same file stem)"
        )
        raise GpsError(msg)
    return track


def city_projection(city: CityDir, tracks: Sequence[GpsTrack]) -> LocalProjection:
    """The city's projection from ``city.json``; a new one centred on ``tracks`` otherwise."""
    if city.exists():
        return city.read_manifest().projection
    lats = np.concatenate([validate_track(t).lat for t in tracks])
    lons = np.concatenate([validate_track(t).lon for t in tracks])
    centre_lat = round(0.5 * float(lats.min() + lats.max()), 6)
    centre_lon = round(0.5 * float(lons.min() + lons.max()), 6)
    return LocalProjection(centre_lat, centre_lon)


def _sha256(path: Path) -> str:
    from city360.city import file_sha256

    return file_sha256(path)


def ingest_video(
    video: str | os.PathLike[str],
    gps: str | os.PathLike[str] | None,
    city_dir: str | os.PathLike[str],
    *,
    projection: LocalProjection,
    options: IngestOptions | None = None,
    trajectory_id: str | None = None,
    progress: ProgressCallback | None = None,
) -> IngestResult:
    """Ingest ``video`` with track ``gps`` (None: the video's embedded GPS) into ``city_dir``.

    Writes ``trajectories/<id>/{frames.mp4,poses.csv,trajectory.json}`` atomically; does not
    touch ``city.json`` (see :func:`update_manifest`, called once for a batch).
    """
    from av.video.reformatter import VideoReformatter

    started = time.perf_counter()
    opts = options or IngestOptions()
    video_path = Path(video)
    gps_path = Path(gps) if gps is not None else None
    city = CityDir(city_dir)
    tid = trajectory_id or trajectory_id_for(video_path)
    target = city.trajectory_dir(tid)
    if target.exists() and any(target.iterdir()) and not opts.overwrite:
        msg = f"trajectory {target} already exists; pass --overwrite to replace it"
        raise OutputError(msg)

    info = probe_video(video_path, projection=opts.projection)
    track = load_track(video_path, gps_path, info)
    smooth = clean_track(track, projection, params=opts.clean)
    motion: MotionSignal | None = None
    if opts.offset == "auto":  # the offset decides which frames to keep: measure motion first
        meter = MotionMeter(info)
        for frame in iter_frames(info, deblock=False):  # motion needs no exact pictures
            if progress is not None and frame.index % 30 == 0:
                progress("motion", frame.index, info.frame_count)
            meter.add(frame)
        motion = meter.result()
    sync = resolve_sync(
        track, info, opts.offset, smooth=smooth, motion=motion, search_s=opts.offset_search_s
    )
    pts, t_video = frame_times(info)
    if pts.shape[0] == 0:
        msg = f"video {video_path} has no frames; re-copy it from the camera"
        raise VideoError(msg)
    selection = select_frames(
        pts,
        t_video,
        smooth,
        sync,
        spacing_m=opts.spacing_m,
        source=str(video_path),
        gps_source=str(track.source),
    )
    out_w, out_h = output_size(info.width, info.height, opts.max_width)
    wanted = {int(p): k for k, p in enumerate(selection.source_pts)}
    video_sha = _sha256(video_path)
    gps_sha = video_sha if gps_path is None else _sha256(gps_path)

    created_dirs = [p for p in (city.root, city.trajectories_dir) if not p.exists()]
    try:
        with atomic_dir(target, replace=opts.overwrite) as tmp:
            written = 0
            frame_meter = None if motion is not None else MotionMeter(info)
            scaler = VideoReformatter()  # used by the writer's thread alone
            frames = iter_frames(info)
            try:
                with BackgroundWriter(
                    FrameWriter(tmp / "frames.mp4", out_w, out_h, crf=opts.crf)
                ) as writer:
                    for frame in frames:
                        if progress is not None and frame.index % 30 == 0:
                            progress("frames", frame.index, info.frame_count)
                        if frame_meter is not None:
                            frame_meter.add(frame)
                        row = wanted.get(frame.pts)
                        if row is None:
                            continue
                        if row != written:
                            msg = f"video {video_path}: frame pts {frame.pts} decoded out of order"
                            raise VideoError(msg)
                        writer.submit(partial(stored_picture, frame, out_w, out_h, scaler))
                        written += 1
                        if written == len(selection) and frame_meter is None:
                            break  # motion is measured already: the rest adds nothing
            finally:
                frames.close()
            if written != len(selection):
                msg = (
                    f"video {video_path} is truncated or corrupt: {written} of "
                    f"{len(selection)} selected frames decoded; re-copy it from the camera"
                )
                raise VideoError(msg)
            if frame_meter is not None:
                motion = frame_meter.result()
            spans = still_spans(motion) if motion is not None else []
            keep = stationary_keep(selection, spans, smooth, sync, spacing_m=opts.spacing_m)
            if len(keep) < written:  # standing still: keep one frame per stop
                remux_subset(tmp / "frames.mp4", tmp / "frames.kept.mp4", keep)
                os.replace(tmp / "frames.kept.mp4", tmp / "frames.mp4")
                selection = selection.subset(keep)
                written = len(keep)
            if opts.pyramid:  # the half-width levels the renderer reads for small views
                from city360.video_store.pyramid import build_levels

                build_levels(tmp / "frames.mp4", crf=opts.crf)
            heading = fuse_heading(selection.t_s, motion, smooth, sync)
            x_m, y_m = selection.x_m, selection.y_m
            if heading.dense_t_s is not None and heading.dense_heading_deg is not None:
                rx, ry, _ = heading_aided_smooth(
                    sync.video_start_gps + heading.dense_t_s,
                    heading.dense_heading_deg,
                    smooth.meas_t_s,
                    smooth.meas_x_m,
                    smooth.meas_y_m,
                    sigma_m=opts.clean.gps_sigma_m,
                    gate_sigma=opts.clean.gate_sigma,
                )
                aided_x = np.interp(selection.t_s, heading.dense_t_s, rx)
                aided_y = np.interp(selection.t_s, heading.dense_t_s, ry)
                if not continuity_gaps(aided_x, aided_y, spacing_m=opts.spacing_m).size:
                    x_m, y_m = aided_x, aided_y  # else keep the plain GPS smoothing
            gaps = continuity_gaps(x_m, y_m, spacing_m=opts.spacing_m)
            if gaps.size:  # never write a trajectory the pose-graph build rejects
                k = int(gaps[0])
                step = float(np.hypot(x_m[k + 1] - x_m[k], y_m[k + 1] - y_m[k]))
                msg = (
                    f"video {video_path}: kept frames {k} and {k + 1} (video time "
                    f"{selection.t_s[k]:.1f} s .. {selection.t_s[k + 1]:.1f} s) are "
                    f"{step:.1f} m apart, more than the {max_pose_step_m(opts.spacing_m):.0f} m "
                    "a trajectory may jump; the video has a gap there: cut it into two "
                    "videos at that time, or check the GPS track for a dropout"
                )
                raise VideoError(msg)
            lat, lon = projection.to_latlon(x_m, y_m)
            poses = TrajectoryPoses(
                x_m=x_m,
                y_m=y_m,
                lat=lat,
                lon=lon,
                heading_deg=heading.heading_deg,
                t_s=selection.t_s,
                source_pts=selection.source_pts,
            )
            steps = np.hypot(np.diff(x_m), np.diff(y_m))
            length_m = float(steps.sum())
            meta = TrajectoryMeta(
                id=tid,
                source_video=str(video_path),
                source_sha256=video_sha,
                gps_source=str(track.source),
                width=out_w,
                height=out_h,
                frame_count=written,
                spacing_m=opts.spacing_m,
                camera_yaw_offset_deg=0.0,
                clock_offset_s=sync.offset_s,
                length_m=length_m,
            )
            CityDir.write_trajectory_files(tmp, meta, poses)
    except BaseException:
        for folder in reversed(created_dirs):
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        raise
    if progress is not None:
        progress("frames", info.frame_count, info.frame_count)
    return IngestResult(
        trajectory_id=tid,
        folder=target,
        source_video=video_path,
        gps_source=track.source,
        frame_count=written,
        width=out_w,
        height=out_h,
        length_m=length_m,
        offset_s=sync.offset_s,
        sync_method=sync.method,
        sync_score=sync.score,
        dropped_fixes=smooth.dropped,
        visual_heading=heading.visual,
        video_duration_s=info.duration_s,
        elapsed_s=time.perf_counter() - started,
        lat_range=(float(lat.min()), float(lat.max())),
        lon_range=(float(lon.min()), float(lon.max())),
        video_sha256=video_sha,
        gps_sha256=gps_sha,
    )


def update_manifest(
    city_dir: str | os.PathLike[str],
    projection: LocalProjection,
    results: Sequence[IngestResult],
    options: IngestOptions,
) -> CityManifest:
    """Create or extend ``city.json`` with the ingested sources, bbox and ingest parameters."""
    city = CityDir(city_dir)
    if city.exists():
        manifest = city.read_manifest()
    else:
        manifest = CityManifest(
            name=city.root.resolve().name,
            crs=projection.proj4,
            origin_lat=projection.origin_lat,
            origin_lon=projection.origin_lon,
            bbox=(90.0, 180.0, -90.0, -180.0),
        )
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
    }
    stats = dict(manifest.stats)
    stats["trajectories"] = len(city.trajectory_ids())
    updated = manifest.model_copy(
        update={
            "bbox": (south, west, north, east),
            "sources": sources,
            "build": build,
            "stats": stats,
        }
    )
    city.write_manifest(updated)
    return updated
