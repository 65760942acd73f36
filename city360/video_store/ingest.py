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

import contextlib
import dataclasses
import os
import re
import shutil
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from city360._atomic import atomic_dir
from city360.city import (
    CityDir,
    TrajectoryMeta,
    TrajectoryPoses,
    max_pose_step_m,
)
from city360.errors import City360Error, GpsError, OutputError, VideoError
from city360.geo import LocalProjection
from city360.video_store.clean import CleanParams, SmoothTrack, clean_track
from city360.video_store.cut_edges import beside_cuts, with_cut_fixes
from city360.video_store.decode import VideoInfo, iter_frames, probe_video
from city360.video_store.dual_fisheye import DualFisheye
from city360.video_store.gps import GpsTrack, read_embedded_track, read_track
from city360.video_store.heading import HeadingFusion, fuse_heading
from city360.video_store.layouts import Layout, LayoutChoice
from city360.video_store.map_bridge import (
    MapBridgeParams,
    bridge_gaps,
    gaps_to_bridge,
    load_street_routes,
)
from city360.video_store.map_pull import MapPullParams, pull_across
from city360.video_store.motion import MotionMeter, MotionSignal, StillParams, still_spans_of_walk
from city360.video_store.reckon import (
    EdgeReckoning,
    GpsCoverageWarning,
    ReckonParams,
    coverage_message,
    reckon_ends,
    uncovered_ends,
)
from city360.video_store.resample import (
    GPS_STILL_SPEED_MPS,
    FrameSelection,
    continuity_gaps,
    continuous_parts,
    frame_times,
    select_frames,
    stationary_keep,
)
from city360.video_store.retake import stored_picture
from city360.video_store.smooth import (
    CROSS_SIGMA_PER_MPS,
    heading_aided_smooth,
    reweighted_heading_aided_smooth,
)
from city360.video_store.sync import DEFAULT_SEARCH_S, SyncResult, resolve_sync
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
    "check_in_city",
    "check_target",
    "ingest_video",
    "load_track",
    "part_id",
    "trajectory_id_for",
    "video_trajectory_ids",
]

ProgressCallback = Callable[[str, int, int], None]
"""``(phase, done, total)``: phase is "motion" or "frames"; counts are source frames."""

CUT_MIN_FIXES = 3
"""A run of cut fixes at least this long is a burst whose edges
:attr:`IngestOptions.cut_ramp_fixes` and :attr:`IngestOptions.cut_island_fixes` look at."""

CUT_READMIT_PASSES = 3
"""How many times :attr:`IngestOptions.cut_readmit_m` puts fixes back and smooths again (each
pass may reach further into a cut run, from the bridge the last one made)."""

LEAP_FACTOR = 1.0
"""An aided step between two kept frames across which the plain track stands is a leap
(and is smoothed again standing still) when it is longer than this many times
:func:`city360.city.max_pose_step_m`: at 1, exactly the steps that would split the walk."""


@dataclass(frozen=True, slots=True)
class IngestOptions:
    """How to ingest. ``offset``: None trusts the clocks, seconds (GPS minus camera), or
    "auto". ``max_width``: stored frames are at most this wide (None keeps the source)."""

    offset: float | Literal["auto"] | None = None
    spacing_m: float = 1.0
    max_width: int | None = 3840
    projection: Literal["equirect"] | None = None
    layout: LayoutChoice = "auto"
    """How the camera laid out the sphere (:mod:`.layouts`); ``auto`` decides from the file."""
    fisheye: DualFisheye = field(default_factory=DualFisheye)
    """Lens geometry of dual-fisheye videos (field of view, circle centres and radius)."""
    crf: int = 16
    pyramid: bool = True
    """Also write the frame pyramid (``frames_<width>.mp4``, ``video_store.pyramid``)."""
    offset_search_s: float = DEFAULT_SEARCH_S
    """How far ``offset='auto'`` searches each way, seconds."""
    overwrite: bool = False
    clean: CleanParams = field(default_factory=CleanParams)
    aided_cross_sigma: float = CROSS_SIGMA_PER_MPS
    """How far the heading-aided smoother lets the camera stray across its heading, per m/s
    of speed, metres per sqrt(s) per m/s (:data:`~city360.video_store.smooth.CROSS_SIGMA_PER_MPS`;
    0 holds it to the pictures' heading, which put a car's poses further off than its GPS)."""
    aided_speed_sigma: float | None = 1.0
    """How firmly the heading-aided smoother's speed is held to the GPS-only smoothing's
    speed, m/s at each motion sample (:func:`~city360.video_store.smooth.heading_aided_smooth`'s
    ``speed_meas_sigma``); None leaves the speed free, as before."""
    hold_still_leaps: bool = True
    """Where the heading-aided track would leap over
    :func:`city360.city.max_pose_step_m` between two kept frames across which the GPS-only
    smoothing stands (a stop whose fixes creep), smooth it again standing still there
    (:func:`_choose_positions`) instead of refusing the aided poses. On the filmed canyon
    twins of seeds 0-9 it gives seed 9 its aided poses (4.682 -> 4.438 m at the kept frames);
    no other filmed row moves (round twenty-two, branch canyon22). Off until then: seed 8's
    build without OSM read the aided track's wander where the walker stands as a loop, which
    :attr:`still_wander` removes (round twenty-one, branch filmed2)."""
    reweight_runs: bool = False
    """Smooth the heading-aided track again with each fix reweighted on the run of residuals
    around it (:func:`~city360.video_store.smooth.reweighted_heading_aided_smooth`, a Cauchy
    loss): a canyon burst the cleaning kept pulls the aided poses less. **Off**: measured on
    the filmed walk twins (seeds 0-9, kept frames), it helps the canyon walks whose error is
    a kept burst (seed 3 4.134 -> 3.640 m, seed 6 4.006 -> 3.694 m) but costs the others
    (canyon seed 0 3.327 -> 3.537 m, seed 5 6.811 -> 6.942 m; held-out canyon seeds 10-13
    all worse) and every Hamburg phone walk (1.76-2.37 -> 1.87-2.52 m): it also down-weights
    fixes where the pictures' own heading or speed is off. docs/design-notes.md, round
    twenty-seven, branch canyon27."""
    cut_ramp_fixes: int = 0
    """The heading-aided smoother leaves out this many kept fixes next to each end of a run of
    at least :data:`CUT_MIN_FIXES` fixes the cleaning cut (a canyon burst's ramp,
    :func:`~city360.video_store.cut_edges.beside_cuts`); 0: none. **Off**: on the filmed
    Hamburg canyon twins (seeds 0-9, kept frames) 1 fix each side takes the mean RMSE
    4.124 -> 4.173 m (seed 5 6.811 -> 7.236 m, seed 9 4.438 -> 4.548 m): the fixes beside a
    cut lean with the canyon's slow error more often than with the burst's ramp, and leaving
    them out loosens the bridge's ends (round twenty-eight, branch canyon28)."""
    cut_island_fixes: int = 1
    """The heading-aided smoother leaves out every run of at most this many kept fixes with a
    run of at least :data:`CUT_MIN_FIXES` cut fixes on each side (a burst's fix the burst test
    kept between two cut runs of it, :func:`~city360.video_store.cut_edges.beside_cuts`); 0:
    none. On at 1 with :attr:`cut_readmit_m` (see there for the figures): alone it leaves out
    one fix on 4 of the 14 filmed canyon twins (seeds 0-13) and moves one, seed 8
    4.042 -> 3.965 m (its fix at 137 s, 22.7 m off, pulled the bridge 10 m)."""
    cut_readmit_m: float | None = 6.0
    """After the heading-aided smoother has bridged a run of at least :data:`CUT_MIN_FIXES`
    cut fixes, put back the cut fixes at either end of the run that stand within this many
    metres of the bridge, up to the first that does not, and smooth again (up to
    :data:`CUT_READMIT_PASSES` times): the burst test places a run's ends from steps between
    noisy fixes and can cut clean fixes with the burst (15 s of them after the burst of the
    filmed canyon twin of seed 8). None: none. **On** at 6 m with :attr:`cut_island_fixes` 1,
    measured on the filmed walk twins (round twenty-eight, branch canyon28): canyon seeds 0-9
    mean 4.124 -> 4.106 m, 9 better (seed 8 4.042 -> 3.976, seed 5 6.811 -> 6.773), seed 7
    +0.001 m; held-out seeds 10-13 3 better (seed 11 3.114 -> 3.065), seed 12 +0.006 m;
    junction P / R / street F1 / turns unchanged (1 / 1 / 1 / 1 with and without OSM on all
    14); the Hamburg phone and SF camera and phone walks cut no run of 3 fixes the rule
    reaches: their poses are unchanged to the bit. At 10 m seed 8 goes to 3.462 m but seeds
    1, 2, 3, 4, 6 get 0.02-0.07 m worse; without the ends-only rule (every cut fix near the
    bridge) seed 5's start, 15 m off, is pinned where it is wrong (6.811 -> 6.946 m)."""
    still_wander: bool = True
    """Where the pictures say the camera stands but the GPS-only smoothing wanders (faster
    than :data:`~city360.video_store.resample.GPS_STILL_SPEED_MPS` along its path), keep one
    frame all the same when the wander gets nowhere
    (:func:`~city360.video_store.resample.stationary_keep`'s ``wander``). On the filmed canyon
    twin of seed 8 it drops 16 frames kept along the wander where the walker stands and the
    aided poses are written (5.015 -> 4.042 m); no other filmed row of seeds 0-9 moves
    (round twenty-two, branch canyon22). False: the GPS's mean speed alone, as before."""
    still: StillParams = field(default_factory=StillParams)
    """When the pictures say the camera stands (:func:`~.motion.still_spans_of_walk`): a share
    of the picture's rate while the GPS walks, blips of a second inside a stop ignored. On the
    filmed Hamburg walks, which stand 1300 of their 1890 s, the video's median rate (the rule
    before round thirty-five) was the standing noise and split the stop into pieces, between
    which frames were kept along canyon bursts."""
    reckon: ReckonParams = field(default_factory=ReckonParams)
    """Dead reckoning of a head or tail of the video without GPS (:mod:`.reckon`); off by
    default (those frames are dropped), ``ReckonParams(enabled=True)`` keeps them; a warning
    either way."""
    osm: Path | None = None
    """An OSM extract of the area: GPS gaps are bridged along its streets where a route fits
    the track (:mod:`.map_bridge`) and the frame poses pulled across the streets they are on
    (:attr:`map_pull`); None bridges gaps with the smoother's curve alone and pulls nothing."""
    map_bridge: MapBridgeParams = field(default_factory=MapBridgeParams)
    """When a gap is bridged along the streets (with :attr:`osm`)."""
    map_pull: MapPullParams = field(default_factory=MapPullParams)
    """How far the frame poses are pulled across the street towards the walker's line along
    the matched way (with :attr:`osm`; :mod:`.map_pull`): metres of stretch and of fade at the
    way's ends, a share of the offset. On by default (figures in
    :attr:`~city360.video_store.map_pull.MapPullParams.enabled`)."""
    batch_ids: dict[str, str] = field(default_factory=dict)
    """Trajectory id -> input file name of every input of this ``city360 ingest`` batch: a
    part of a source split at GPS gaps (``walk_2``) must not take another input's id
    (``walk_2.mp4``), which the run in another process would write too."""


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
    part: int | None = None
    """1-based part number when the video was split at GPS gaps, else None."""
    source_range_s: tuple[float, float] | None = None
    """Video time of the part's first and last kept frame, seconds (split parts)."""
    split_parts: tuple[IngestResult, ...] = ()
    """The video's further parts (2, 3, ...) when it was split; this result is part 1."""
    dropped_parts: tuple[tuple[float, float], ...] = ()
    """Video time ranges of parts too short to keep (< 2 frames or < ``spacing_m``)."""
    layout: Layout = "equirect"
    """The layout the source was in (converted to equirect on ingest)."""
    dead_reckoned_s: tuple[tuple[float, float], ...] = ()
    """Video time ranges (first and last kept frame) of this trajectory's frames posed by dead
    reckoning outside the GPS span (:mod:`.reckon`)."""
    uncovered: tuple[EdgeReckoning, ...] = ()
    """The video's ends without GPS (at least ``ReckonParams.min_s``) and what was done."""
    unusable_fixes: int = 0
    """Points of the GPS file without a usable position (no fix, at lat 0, lon 0, out of
    range), left out before cleaning; not counted in ``dropped_fixes``."""

    def all_parts(self) -> tuple[IngestResult, ...]:
        """This result and its :attr:`split_parts`: one per trajectory written."""
        return (self, *self.split_parts)


def trajectory_id_for(video: Path) -> str:
    """The trajectory id of a video: its file stem, reduced to ``[A-Za-z0-9._-]``."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", video.stem).strip("._")
    return cleaned or "trajectory"


def part_id(base: str, number: int) -> str:
    """The id of part ``number`` (1-based) of a source split at GPS gaps: ``base`` for the
    first, ``base_2``, ``base_3``, ... after it (videos and photo sequences alike). Parts are
    numbered in time order among the parts kept, so the first always carries ``base``."""
    return base if number == 1 else f"{base}_{number}"


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


def check_in_city(
    source: str | os.PathLike[str],
    x_m: npt.ArrayLike,
    y_m: npt.ArrayLike,
    projection: LocalProjection,
    city_dir: str | os.PathLike[str],
) -> None:
    """Refuse a walk (``x_m``/``y_m`` in the city CRS, from ``source``) farther than
    :data:`~city360.city.MAX_CITY_RADIUS_M` from the CRS origin: filmed in another city."""
    from city360.city import MAX_CITY_RADIUS_M

    off_m = float(np.max(np.hypot(np.asarray(x_m, np.float64), np.asarray(y_m, np.float64))))
    if off_m > MAX_CITY_RADIUS_M:
        msg = (
            f"{source} puts the walk {off_m / 1000:.0f} km from the centre of the city "
            f"{city_dir} ({projection.origin_lat:.5f}, {projection.origin_lon:.5f}); a city "
            f"spans at most {MAX_CITY_RADIUS_M / 1000:.0f} km: ingest it into a city of its "
            "own (--out ANOTHER_CITY)"
        )
        raise GpsError(msg)


def _sha256(path: Path) -> str:
    """SHA-256 of a source file; of a saved stream's manifest or playlist, of its video's bytes
    (the segments)."""
    from city360.city import file_sha256
    from city360.video_store.saved_stream import is_saved_stream, read_saved_stream
    from city360.video_store.stream_parts import parts_sha256

    if is_saved_stream(path):
        return parts_sha256(read_saved_stream(path))
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
    touch ``city.json`` (see :func:`~city360.video_store.city_manifest.update_manifest`, called
    once for a batch).
    """
    from av.video.reformatter import VideoReformatter

    started = time.perf_counter()
    opts = options or IngestOptions()
    video_path = Path(video)
    gps_path = Path(gps) if gps is not None else None
    city = CityDir(city_dir)
    tid = trajectory_id or trajectory_id_for(video_path)
    target = check_target(city, tid, source=video_path, number=1, options=opts)

    info = probe_video(
        video_path, projection=opts.projection, layout=opts.layout, fisheye=opts.fisheye
    )
    track = load_track(video_path, gps_path, info)
    smooth = clean_track(track, projection, params=opts.clean)
    check_in_city(track.source, smooth.x_m, smooth.y_m, projection, city.root)
    if opts.osm is not None and gaps_to_bridge(smooth, opts.map_bridge):
        smooth, _ = bridge_gaps(smooth, load_street_routes(opts.osm, projection), opts.map_bridge)
    motion: MotionSignal | None = None
    if opts.offset == "auto":  # the offset decides which frames to keep: measure motion first
        motion = _measure_motion(info, progress)
    sync = resolve_sync(
        track, info, opts.offset, smooth=smooth, motion=motion, search_s=opts.offset_search_s
    )
    pts, t_video = frame_times(info)
    if pts.shape[0] == 0:
        msg = f"video {video_path} has no frames; re-copy it from the camera"
        raise VideoError(msg)
    uncovered: tuple[EdgeReckoning, ...] = ()
    if uncovered_ends(t_video, smooth, sync, min_s=opts.reckon.min_s):
        if motion is None and opts.reckon.enabled:  # reckoning picks frames: motion first
            motion = _measure_motion(info, progress)
        edge_heading = (  # only reckoning reads it
            fuse_heading(motion.t_s, motion, smooth, sync)
            if motion is not None and opts.reckon.enabled
            else None
        )
        uncovered = reckon_ends(
            t_video, motion, edge_heading, smooth, sync, opts.reckon, still=opts.still
        )
        for ending in uncovered:
            warnings.warn(
                coverage_message(str(video_path), ending), GpsCoverageWarning, stacklevel=2
            )
    selection = select_frames(
        pts,
        t_video,
        smooth,
        sync,
        spacing_m=opts.spacing_m,
        source=str(video_path),
        gps_source=str(track.source),
        ends=uncovered,
    )
    out_w, out_h = output_size(info.width, info.height, opts.max_width)
    wanted = {int(p): k for k, p in enumerate(selection.source_pts)}
    video_sha = _sha256(video_path)
    gps_sha = video_sha if gps_path is None else _sha256(gps_path)

    created_dirs = [p for p in (city.root, city.trajectories_dir) if not p.exists()]
    try:
        # every part's folder is renamed into place only when all of them are complete
        with contextlib.ExitStack() as stack:
            tmp = stack.enter_context(atomic_dir(target, replace=opts.overwrite))
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
            spans = (
                still_spans_of_walk(motion, smooth, sync, opts.still) if motion is not None else []
            )
            keep = stationary_keep(
                selection, spans, smooth, sync, spacing_m=opts.spacing_m, wander=opts.still_wander
            )
            if len(keep) < written:  # standing still: keep one frame per stop
                remux_subset(tmp / "frames.mp4", tmp / "frames.kept.mp4", keep)
                os.replace(tmp / "frames.kept.mp4", tmp / "frames.mp4")
                selection = selection.subset(keep)
                written = len(keep)
            heading = fuse_heading(selection.t_s, motion, smooth, sync)
            x_m, y_m = _choose_positions(selection, heading, smooth, sync, opts)
            if opts.osm is not None and opts.map_pull.enabled:
                x_m, y_m = pull_across(
                    x_m, y_m, osm=opts.osm, projection=projection, params=opts.map_pull
                )
            parts, dropped = continuous_parts(x_m, y_m, spacing_m=opts.spacing_m)
            if not parts:
                msg = (
                    f"video {video_path}: GPS jumps split the walk into {len(dropped)} parts, "
                    f"each shorter than 2 frames or `spacing_m` = {opts.spacing_m:g} m; check "
                    "the GPS track for dropouts"
                )
                raise VideoError(msg)
            full = tmp / "frames.mp4"
            if len(parts) > 1:  # each part gets its own frame store, cut from the whole
                full = tmp / "frames.all.mp4"
                os.replace(tmp / "frames.mp4", full)
            results = []
            for number, (a, b) in enumerate(parts, start=1):
                part_tid = part_id(tid, number)
                folder = tmp
                if number > 1:
                    part_target = check_target(
                        city, part_tid, source=video_path, number=number, options=opts
                    )
                    folder = stack.enter_context(atomic_dir(part_target, replace=opts.overwrite))
                if len(parts) > 1:
                    remux_subset(full, folder / "frames.mp4", list(range(a, b)))
                if opts.pyramid:  # the half-width levels the renderer reads for small views
                    from city360.video_store.pyramid import build_levels

                    build_levels(folder / "frames.mp4", crf=opts.crf)
                rows = slice(a, b)
                lat, lon = projection.to_latlon(x_m[rows], y_m[rows])
                poses = TrajectoryPoses(
                    x_m=x_m[rows],
                    y_m=y_m[rows],
                    lat=lat,
                    lon=lon,
                    heading_deg=heading.heading_deg[rows],
                    t_s=selection.t_s[rows],
                    source_pts=selection.source_pts[rows],
                )
                length_m = float(np.hypot(np.diff(poses.x_m), np.diff(poses.y_m)).sum())
                video_range = (float(poses.t_s[0]), float(poses.t_s[-1]))
                split = len(parts) + len(dropped) > 1  # the trajectory is not the whole video
                meta = TrajectoryMeta(
                    id=part_tid,
                    source_video=str(video_path),
                    source_sha256=video_sha,
                    gps_source=str(track.source),
                    width=out_w,
                    height=out_h,
                    frame_count=b - a,
                    spacing_m=opts.spacing_m,
                    camera_yaw_offset_deg=0.0,
                    clock_offset_s=sync.offset_s,
                    length_m=length_m,
                    part=number if split else None,
                    source_range_s=video_range if split else None,
                    source_layout=info.layout,
                    dead_reckoned_s=_reckoned_ranges(selection, a, b) or None,
                )
                CityDir.write_trajectory_files(folder, meta, poses)
                results.append(
                    IngestResult(
                        trajectory_id=part_tid,
                        folder=city.trajectory_dir(part_tid),
                        source_video=video_path,
                        gps_source=track.source,
                        frame_count=b - a,
                        width=out_w,
                        height=out_h,
                        length_m=length_m,
                        offset_s=sync.offset_s,
                        sync_method=sync.method,
                        sync_score=sync.score,
                        dropped_fixes=smooth.dropped,
                        unusable_fixes=smooth.unusable,
                        visual_heading=heading.visual,
                        video_duration_s=info.duration_s,
                        elapsed_s=0.0,
                        lat_range=(float(lat.min()), float(lat.max())),
                        lon_range=(float(lon.min()), float(lon.max())),
                        video_sha256=video_sha,
                        gps_sha256=gps_sha,
                        part=number if split else None,
                        source_range_s=video_range if split else None,
                        layout=info.layout,
                        dead_reckoned_s=tuple(_reckoned_ranges(selection, a, b)),
                    )
                )
            if len(parts) > 1:
                full.unlink()
            stale = _stale_parts(city, tid, video_path, keep=len(parts))
    except BaseException:
        for folder in reversed(created_dirs):
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        raise
    for old in stale:  # --overwrite of a video that split into more parts before
        shutil.rmtree(city.trajectory_dir(old), ignore_errors=True)
    if progress is not None:
        progress("frames", info.frame_count, info.frame_count)
    dropped_ranges = tuple(
        (float(selection.t_s[a]), float(selection.t_s[b - 1])) for a, b in dropped
    )
    elapsed = time.perf_counter() - started  # one pass made every part
    parts_done = [dataclasses.replace(r, elapsed_s=elapsed) for r in results]
    return dataclasses.replace(
        parts_done[0],
        split_parts=tuple(parts_done[1:]),
        dropped_parts=dropped_ranges,
        uncovered=uncovered,
    )


def _opens_no_gap(
    aided: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]],
    plain: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]],
    *,
    spacing_m: float,
) -> bool:
    """Whether the heading-aided kept-frame positions ``aided`` (x, y metres) split the walk
    nowhere the plain GPS smoothing ``plain`` does not: each of their continuity gaps
    (:func:`~city360.video_store.resample.continuity_gaps`) is one of the plain track's.

    Either track is buildable (:func:`~city360.video_store.resample.continuous_parts` cuts
    every gap left); what the aided track must not do is cut a walk the GPS keeps whole, or
    drop the frames of a short piece. It may close a gap: a stiff smoothing that leaps 10.09 m
    between two kept frames (over the 10 m limit) while the pictures walk the same metres in
    steps of one. Until round twenty-one the gaps had to be equal, so such a leap threw the
    aided poses away and split the walk where its pictures are continuous: the filmed Hamburg
    canyon twin of seed 4 (a 10.26 m leap) came out as two trajectories that shared no
    junction, and its build failed."""
    plain_gaps = continuity_gaps(*plain, spacing_m=spacing_m)
    aided_gaps = continuity_gaps(*aided, spacing_m=spacing_m)
    return bool(np.isin(aided_gaps, plain_gaps).all())


def _measure_motion(info: VideoInfo, progress: ProgressCallback | None) -> MotionSignal:
    """The visual motion of the whole video, in a pass of its own (before frames are chosen)."""
    meter = MotionMeter(info)
    for frame in iter_frames(info, deblock=False):  # motion needs no exact pictures
        if progress is not None and frame.index % 30 == 0:
            progress("motion", frame.index, info.frame_count)
        meter.add(frame)
    return meter.result()


def _keep_reckoned(
    selection: FrameSelection, x_m: npt.NDArray[np.float64], y_m: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Aided positions with the dead-reckoned frames put back on their reckoned path, moved
    with the frame at the track's edge: the aided smoother would walk past the edge on its
    own, at the GPS speed, where the pictures may show the camera standing still."""
    if selection.reckoned is None or not selection.reckoned.any():
        return x_m, y_m
    placed = np.flatnonzero(~selection.reckoned)
    if placed.shape[0] == 0:
        return x_m, y_m
    x_m, y_m = x_m.copy(), y_m.copy()
    first, last = int(placed[0]), int(placed[-1])
    for rows, edge in ((slice(0, first), first), (slice(last + 1, None), last)):
        x_m[rows] = x_m[edge] + selection.x_m[rows] - selection.x_m[edge]
        y_m[rows] = y_m[edge] + selection.y_m[rows] - selection.y_m[edge]
    return x_m, y_m


def _reckoned_ranges(selection: FrameSelection, a: int, b: int) -> list[tuple[float, float]]:
    """Video time ranges of the dead-reckoned kept frames among positions ``[a, b)``."""
    if selection.reckoned is None:
        return []
    ranges = []
    rows = np.flatnonzero(selection.reckoned[a:b]) + a
    for run in np.split(rows, np.flatnonzero(np.diff(rows) > 1) + 1):
        if run.shape[0]:
            ranges.append((float(selection.t_s[run[0]]), float(selection.t_s[run[-1]])))
    return ranges


def _aided_positions(
    selection: FrameSelection,
    heading: HeadingFusion,
    smooth: SmoothTrack,
    sync: SyncResult,
    opts: IngestOptions,
    *,
    still_pairs: npt.NDArray[np.bool_] | None = None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None:
    """Kept-frame positions from the heading-aided smoother, or None without a visual
    heading. Each stretch between GPS jumps (``smooth.breaks_s``) is smoothed on its own, so
    a jump stays a jump; a stretch too short for it keeps the plain smoothing.

    ``still_pairs`` (optional, one per pair of consecutive kept frames): True where the
    smoother stands still from the first frame of the pair to the second
    (:func:`_still_steps`)."""
    if heading.dense_t_s is None or heading.dense_heading_deg is None:
        return None
    dense_gps = sync.video_start_gps + heading.dense_t_s
    kept_gps = sync.video_start_gps + selection.t_s
    x_m, y_m = selection.x_m.copy(), selection.y_m.copy()
    bounds = [-np.inf, *(t for span in smooth.breaks_s for t in span), np.inf]
    for lo, hi in zip(bounds[::2], bounds[1::2], strict=True):
        dense = (dense_gps >= lo) & (dense_gps <= hi)
        meas = (smooth.meas_t_s >= lo) & (smooth.meas_t_s <= hi)
        if smooth.cut_t_s is not None and (opts.cut_ramp_fixes or opts.cut_island_fixes):
            meas &= ~beside_cuts(
                smooth.meas_t_s,
                smooth.cut_t_s,
                min_cut=CUT_MIN_FIXES,
                ramp=opts.cut_ramp_fixes,
                island=opts.cut_island_fixes,
            )
        rows = (kept_gps >= lo) & (kept_gps <= hi)
        if dense.sum() < 2 or meas.sum() < 2 or not rows.any():
            continue
        smoother = reweighted_heading_aided_smooth if opts.reweight_runs else heading_aided_smooth
        fix_t, fix_x, fix_y = smooth.meas_t_s[meas], smooth.meas_x_m[meas], smooth.meas_y_m[meas]
        fix_sigma = None if smooth.meas_sigma_m is None else smooth.meas_sigma_m[meas]
        dense_heading = heading.dense_heading_deg[dense]
        still = (
            None
            if still_pairs is None
            else _still_steps(selection.t_s, heading.dense_t_s[dense], still_pairs)
        )
        speed = (
            None
            if opts.aided_speed_sigma is None
            else np.interp(dense_gps[dense], smooth.t_s, smooth.speed_mps)
        )

        run = partial(
            smoother,
            dense_gps[dense],
            dense_heading,
            sigma_m=opts.clean.gps_sigma_m,
            gate_sigma=opts.clean.gate_sigma,
            speed_mps=speed,
            speed_meas_sigma=1.0 if opts.aided_speed_sigma is None else opts.aided_speed_sigma,
            cross_sigma_per_mps=opts.aided_cross_sigma,
            still=still,
        )
        rx, ry, _ = run(fix_t, fix_x, fix_y, meas_sigma_m=fix_sigma)
        back = None
        readmit_m = opts.cut_readmit_m
        for _ in range(CUT_READMIT_PASSES):
            if readmit_m is None:
                break
            grown = _readmitted(smooth, lo, hi, dense_gps[dense], rx, ry, readmit_m, already=back)
            if not grown.any() or (back is not None and np.array_equal(grown, back)):
                break
            back = grown
            t, fx, fy, sigma = with_cut_fixes(smooth, back, fix_t, fix_x, fix_y, fix_sigma)
            rx, ry, _ = run(t, fx, fy, meas_sigma_m=sigma)
        x_m[rows] = np.interp(kept_gps[rows], dense_gps[dense], rx)
        y_m[rows] = np.interp(kept_gps[rows], dense_gps[dense], ry)
    return x_m, y_m


def _readmitted(
    smooth: SmoothTrack,
    lo: float,
    hi: float,
    t_s: npt.NDArray[np.float64],
    x_m: npt.NDArray[np.float64],
    y_m: npt.NDArray[np.float64],
    within_m: float,
    *,
    already: npt.NDArray[np.bool_] | None = None,
) -> npt.NDArray[np.bool_]:
    """Mask of the cut fixes (:attr:`SmoothTrack.cut_t_s`) between GPS times ``lo`` and
    ``hi`` to put back: in each run of at least :data:`CUT_MIN_FIXES` cut fixes, those at
    either end of the run that stand within ``within_m`` of the aided track
    ``(t_s, x_m, y_m)``, up to the first that does not (the run's middle, the burst, stays
    cut). ``already``: fixes put back before, which count as ends."""
    if smooth.cut_t_s is None or smooth.cut_x_m is None or smooth.cut_y_m is None:
        return np.zeros(0, bool)
    cut_t = smooth.cut_t_s
    back = np.zeros(cut_t.shape[0], bool) if already is None else already.copy()
    near = (
        np.hypot(
            smooth.cut_x_m - np.interp(cut_t, t_s, x_m), smooth.cut_y_m - np.interp(cut_t, t_s, y_m)
        )
        <= within_m
    )
    near &= (cut_t >= lo) & (cut_t <= hi)
    run_of = np.searchsorted(smooth.meas_t_s, cut_t)  # kept fixes before: names the run
    _, first, counts = np.unique(run_of, return_index=True, return_counts=True)
    for start, count in zip(first.tolist(), counts.tolist(), strict=True):
        if count < CUT_MIN_FIXES:
            continue
        for row in range(start, start + count):  # from the run's first fix inward
            if not (back[row] or near[row]):
                break
            back[row] = True
        for row in range(start + count - 1, start - 1, -1):  # and from its last
            if not (back[row] or near[row]):
                break
            back[row] = True
    return back


def _choose_positions(
    selection: FrameSelection,
    heading: HeadingFusion,
    smooth: SmoothTrack,
    sync: SyncResult,
    opts: IngestOptions,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The kept frames' positions ingest writes (x, y metres): the heading-aided ones unless
    they open a gap the plain GPS smoothing does not have (:func:`_opens_no_gap`), else the
    plain ones.

    Frames are kept every ``spacing_m`` along the plain track, so where it stands only a
    stop's first and last frames are kept. The aided track is sampled at those frames' times;
    where it follows the fixes' creep across the stop it leaps between them (11.9 m across
    the 85 s stop of the filmed Hamburg canyon twin of seed 8) and was refused for it. Such
    a stretch is smoothed again standing still (:func:`_standing_leaps`) with
    ``opts.hold_still_leaps`` (on by default): the plain track stands there, the pictures
    kept show one place, and no frame could show the leap. The creep held back at one stop
    can move to the one before (canyon seed 8: 8.96 -> 10.48 m across 551-689 s once
    713.5-798.5 s stands), so this repeats until no stop leaps; each round holds at least
    one more pair, so it ends."""
    plain = (selection.x_m, selection.y_m)
    aided = _aided_positions(selection, heading, smooth, sync, opts)
    if aided is None:
        return plain
    still = np.zeros(max(len(selection) - 1, 0), bool)
    while opts.hold_still_leaps:  # a stop held still may pass its creep on to another: hold it
        leaps = _standing_leaps(selection, aided, spacing_m=opts.spacing_m) & ~still
        if not leaps.any():
            break
        still |= leaps
        held = _aided_positions(selection, heading, smooth, sync, opts, still_pairs=still)
        if held is None:
            break
        aided = held
    if not _opens_no_gap(aided, plain, spacing_m=opts.spacing_m):
        return plain
    return _keep_reckoned(selection, *aided)


def _standing_leaps(
    selection: FrameSelection,
    aided: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]],
    *,
    spacing_m: float,
) -> npt.NDArray[np.bool_]:
    """One per pair of consecutive kept frames: whether the aided track ``aided`` (x, y
    metres) steps further than :func:`city360.city.max_pose_step_m` between them while the
    plain track (``selection``) stands, moving slower than
    :data:`~city360.video_store.resample.GPS_STILL_SPEED_MPS` on average."""
    dt = np.diff(selection.t_s)
    plain_m = np.hypot(np.diff(selection.x_m), np.diff(selection.y_m))
    aided_m = np.hypot(np.diff(aided[0]), np.diff(aided[1]))
    stands = plain_m < GPS_STILL_SPEED_MPS * np.maximum(dt, 1e-9)
    return stands & (aided_m > LEAP_FACTOR * max_pose_step_m(spacing_m))


def _still_steps(
    kept_t_s: npt.NDArray[np.float64],
    grid_t_s: npt.NDArray[np.float64],
    still_pairs: npt.NDArray[np.bool_],
) -> npt.NDArray[np.bool_]:
    """For each time of ``grid_t_s`` (video seconds, sorted): whether the step to it from the
    previous one lies between two consecutive kept frames (``kept_t_s``, video seconds) of a
    pair ``still_pairs`` marks."""
    still = np.zeros(grid_t_s.shape[0], bool)
    if kept_t_s.shape[0] < 2 or grid_t_s.shape[0] < 2:
        return still
    eps = 1e-6  # kept frames sit on grid times: a step ending on the second frame is inside
    pair = np.searchsorted(kept_t_s, grid_t_s[:-1] + eps, side="right") - 1
    valid = (pair >= 0) & (pair < kept_t_s.shape[0] - 1)
    pair = np.clip(pair, 0, kept_t_s.shape[0] - 2)
    inside = valid & (grid_t_s[1:] <= kept_t_s[pair + 1] + eps)
    still[1:] = inside & still_pairs[pair]
    return still


def check_target(
    city: CityDir, tid: str, *, source: Path, number: int, options: IngestOptions
) -> Path:
    """The folder of trajectory ``tid``, part ``number`` (1-based) of ``source``, checked free.

    A split source's parts are ``<stem>_2``, ``<stem>_3``, ...: the id of another file
    (``walk.mp4``'s part 2 and ``walk_2.mp4``). Such a clash is refused, ``--overwrite`` or
    not, since replacing would lose the other walk: against an input of this batch
    (:attr:`IngestOptions.batch_ids`) and against a trajectory of the city that another
    source wrote, when either of the two is a split part."""
    target = city.trajectory_dir(tid)
    rename = "rename one of the two files (a split source's parts are <stem>_2, <stem>_3, ...)"
    other_input = options.batch_ids.get(tid)
    if number > 1 and other_input is not None and other_input != source.name:
        msg = (
            f"part {number} of {source} (split at a GPS gap) would be trajectory {tid!r}, "
            f"the id of {other_input} in this batch; {rename} and ingest {source.name} again"
        )
        raise OutputError(msg)
    if not (target.exists() and any(target.iterdir())):
        return target
    meta_path = target / "trajectory.json"
    if meta_path.is_file():
        try:
            meta = city.read_trajectory_meta(tid)
        except City360Error:
            meta = None
        owner = Path(meta.source_video).name if meta is not None else source.name
        if owner != source.name and (number > 1 or (meta is not None and (meta.part or 1) > 1)):
            held = f"part {meta.part} of {owner}" if meta is not None and meta.part else owner
            this = f"part {number} of {source}" if number > 1 else str(source)
            msg = (
                f"trajectory {target} holds {held}, and {this} would replace it, "
                f"--overwrite or not; {rename}"
            )
            raise OutputError(msg)
    if not options.overwrite:
        msg = f"trajectory {target} already exists; pass --overwrite to replace it"
        raise OutputError(msg)
    return target


def _stale_parts(city: CityDir, tid: str, video: Path, *, keep: int) -> list[str]:
    """Ids of parts ``part_id(tid, n)``, ``n > keep``, that an earlier ingest of ``video``
    wrote (a re-ingest with --overwrite that splits into fewer parts leaves them behind)."""
    stale = []
    pattern = re.compile(re.escape(tid) + r"_(\d+)")
    for other in city.trajectory_ids() if city.trajectories_dir.is_dir() else []:
        match = pattern.fullmatch(other)
        if match is None or int(match.group(1)) <= keep:
            continue
        meta = city.read_trajectory_meta(other)
        if meta.part is not None and Path(meta.source_video).name == video.name:
            stale.append(other)
    return stale


def video_trajectory_ids(city: CityDir, video: Path) -> list[str]:
    """The trajectories ingest made of ``video``: ``trajectory_id_for(video)`` and, when the
    video was split at GPS gaps, its further parts (:func:`part_id`); empty when it is not
    ingested. The first part always has the video's own id, so ``trajectory_id_for(video) in
    city.trajectory_ids()`` is the test for "ingested"."""
    tid = trajectory_id_for(video)
    ids = set(city.trajectory_ids()) if city.trajectories_dir.is_dir() else set()
    if tid not in ids:
        return []
    return [tid, *sorted(_stale_parts(city, tid, video, keep=1), key=_part_number)]


def _part_number(trajectory_id: str) -> int:
    return int(trajectory_id.rsplit("_", 1)[1])
