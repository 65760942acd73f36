"""``synthesize``: an OSM extract in, a proto-city directory of 360° videos and truth out.

Steps: load the extract (streets, buildings, POIs) in a local metric CRS; build the 3D scene;
plan routes that walk every street both ways or in another filming pattern (or follow a given
GPX track), optionally with stops; film each route;
simulate the GPS a phone would log beside it; write the ground truth. The layout is the
"synth output" of docs/contracts.md::

    city.json  videos/<name>.mp4 + .gpx  map/extract.osm
    groundtruth/scene.json  groundtruth/poses/<name>.csv

Everything is written into a temporary folder that is renamed to ``out`` at the very end, so a
failure leaves nothing that looks like a city. Output bytes depend only on the inputs and the
seed: camera clocks are derived from the seed, never read from the wall clock.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from city360._atomic import atomic_dir
from city360.city import (
    OSM_ATTRIBUTION,
    OSM_EXTRACT,
    CityDir,
    CityManifest,
    SourceFile,
    file_sha256,
)
from city360.errors import ConfigError
from city360.progress import make_progress
from city360.synth.film import (
    DEFAULT_FPS,
    DEFAULT_SPEED_MPS,
    DEFAULT_WIDTH,
    FramePoses,
    format_creation_time,
    sample_route,
    validate_width,
)
from city360.synth.gps import gps_model as make_gps_model
from city360.synth.gps import simulate_gps, write_gpx
from city360.synth.groundtruth import (
    SceneTruth,
    VideoTruth,
    write_true_poses,
)
from city360.synth.patterns import check_pattern, plan_routes
from city360.synth.routes import (
    DEFAULT_MAX_VIDEO_M,
    PathSampler,
    Route,
    route_from_gpx,
)
from city360.synth.stops import with_stops

if TYPE_CHECKING:
    from rich.progress import Progress

    from city360.geo import LocalProjection
    from city360.maps.osm import OsmData, WindowEdge
    from city360.synth.scene import Scene

__all__ = [
    "DEMO_FPS",
    "DEMO_SPEED_MPS",
    "DEMO_WIDTH",
    "SCENE_EDGE",
    "SynthOptions",
    "demo_city_source",
    "scene_from_osm",
    "synthesize",
]

log = logging.getLogger(__name__)

DEMO_WIDTH = 1536
"""Equirect width for ``--demo``. Rendering cost on a CPU is mostly per frame, not per pixel
(measured: 36 ms a frame at 512 px, 50 at 1024, 91 at 2048), so the frame count (below) is what
keeps the demo to a few minutes. 1536 px (4.3 px per degree) is the least at which shop signs
read with OCR from the street (512 px: none of 25; 1536 px: as many as 2048), which the
sign-reading baseline and any model searching for a landmark by name need."""
DEMO_FPS = 2
"""Frame rate for ``--demo``."""
DEMO_SPEED_MPS = 2.0
"""Walking speed for ``--demo``, a brisk walk: with :data:`DEMO_FPS` exactly one frame per
metre, the spacing the rest of city360 resamples to, in the fewest frames."""

SCENE_EDGE: WindowEdge = "junction"
"""How a twin's streets end at its ``--bbox`` (``city360.maps.osm.load_osm``'s ``edge``): at
their last junction inside, never where the crop does, for a walker turns at junctions; the
build's map (``map/extract.osm``) keeps whole ways. The cut at a way's last node inside that it
replaces made twins film 6-12 m stubs of long streets (design notes, issue 17: window edges)."""

_CAMERA_EPOCH = dt.datetime(2024, 6, 1, 8, 0, 0, tzinfo=dt.UTC)
"""Camera clocks start on this day, at a seeded time of day, so output never reads the clock."""
_PAUSE_BETWEEN_VIDEOS_S = (30, 120)
"""Seconds the filming person pauses between two videos (seeded)."""


def scene_from_osm(osm: OsmData, *, seed: int) -> Scene:
    """The 3D scene of a synthetic city: every caller (filming, task reference images) builds
    it through here, so the same extract and seed always give the same scene."""
    from city360.synth.scene import build_scene

    return build_scene(
        streets=osm.streets,
        buildings=osm.buildings,
        pois=osm.pois,
        projection=osm.projection,
        seed=seed,
        parks=osm.parks,
        water=osm.water,
    )


def demo_city_source() -> Path:
    """The packaged demo OSM extract (a crop of Helsinki centre, © OpenStreetMap contributors)."""
    path = Path(str(resources.files("city360") / "data" / "demo" / "helsinki_centre.osm"))
    if not path.is_file():
        from city360.errors import InputFileError

        msg = f"demo OSM extract {path} is missing; reinstall city360 (pip install -e .)"
        raise InputFileError(msg)
    return path


@dataclass(frozen=True, slots=True)
class SynthOptions:
    """The knobs of :func:`synthesize`, validated once (see its docstring for meanings)."""

    seed: int = 0
    width: int = DEFAULT_WIDTH
    fps: int = DEFAULT_FPS
    speed_mps: float = DEFAULT_SPEED_MPS
    gps_noise_m: float = 3.0
    clock_offset_s: float = 0.0
    max_video_m: float = DEFAULT_MAX_VIDEO_M
    network: str = "street"
    poses_only: bool = False
    gps_model: str = "phone"
    gps_quality: bool = False
    pattern: str = "coverage"
    stops: bool = False

    def __post_init__(self) -> None:
        validate_width(self.width)
        check_pattern(self.pattern)
        if self.fps <= 0 or self.fps > 240:
            msg = f"`fps` must be in 1..240 frames per second, got {self.fps}"
            raise ConfigError(msg)
        if not 0.1 <= self.speed_mps <= 30.0:
            msg = f"`speed` must be in 0.1..30 m/s, got {self.speed_mps}"
            raise ConfigError(msg)
        if not 0.0 <= self.gps_noise_m <= 100.0:
            msg = f"`gps_noise` must be in 0..100 metres, got {self.gps_noise_m}"
            raise ConfigError(msg)
        make_gps_model(self.gps_model)  # raises for an unknown name
        if abs(self.clock_offset_s) > 86_400:
            msg = f"`clock_offset` must be within ±86400 s, got {self.clock_offset_s}"
            raise ConfigError(msg)
        if self.seed < 0:
            msg = f"`seed` must be >= 0, got {self.seed}"
            raise ConfigError(msg)

    def build_params(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "width": self.width,
            "height": self.width // 2,
            "fps": self.fps,
            "speed_mps": self.speed_mps,
            "gps_noise_m": self.gps_noise_m,
            "gps_model": self.gps_model,
            "gps_quality": self.gps_quality,
            "clock_offset_s": self.clock_offset_s,
            "max_video_m": self.max_video_m,
            "network": self.network,
            "pattern": self.pattern,
            "stops": self.stops,
            "poses_only": self.poses_only,
        }


def synthesize(
    osm_path: str | Path,
    *,
    out: str | Path,
    bbox: str | Sequence[float] | None = None,
    seed: int = 0,
    width: int = DEFAULT_WIDTH,
    fps: int = DEFAULT_FPS,
    speed: float = DEFAULT_SPEED_MPS,
    gps_noise_m: float | None = None,
    gps_model: str = "phone",
    gps_quality: bool | None = None,
    clock_offset_s: float = 0.0,
    route_gpx: str | Path | None = None,
    max_video_m: float = DEFAULT_MAX_VIDEO_M,
    network: str = "street",
    pattern: str = "coverage",
    stops: bool = False,
    poses_only: bool = False,
    replace: bool = False,
    workers: int = 1,
) -> Path:
    """Make a synthetic 360° city from the OSM extract ``osm_path`` into the folder ``out``.

    ``bbox`` (S,W,N,E degrees) crops the extract. ``width`` is the equirect width in pixels
    (height = width / 2), ``fps`` frames per second, ``speed`` walking speed in m/s,
    ``gps_model`` the GPS error model (``city360.synth.gps.GPS_MODELS``: phone, camera,
    canyon), ``gps_noise_m`` its RMS horizontal error in metres (None: the model's own; phone
    3 m), ``gps_quality`` whether each fix carries HDOP, satellites and fix type (written to
    the GPX as ``<hdop>``, ``<sat>``, ``<fix>``; None: the model's own, on for canyon only),
    ``clock_offset_s`` GPS time minus
    camera time in seconds. ``route_gpx`` films along that track instead of covering every
    street. ``pattern`` is how the streets are filmed (``city360.synth.patterns.
    FILMING_PATTERNS``: coverage, one-way, wander; not with ``route_gpx``); ``stops`` adds pauses
    of 5-60 s and a varying pace to any pattern (``city360.synth.stops``). ``max_video_m``
    bounds a video's length. ``network`` picks the streets (see
    ``city360.maps.osm.NETWORK_HIGHWAYS``). ``poses_only`` skips rendering: no MP4s, everything
    else as usual (for large pose-graph tests). ``replace`` overwrites an existing ``out``.
    ``workers`` is how many processes film (1: this one; ``city360 synth`` defaults to every
    core it may use); the output bytes are the same for any number.

    Returns ``out``. Raises a :class:`~city360.errors.City360Error` leaf naming the file and the
    fix for bad input; ``out`` is then left as it was.
    """
    options = SynthOptions(
        seed=int(seed),
        width=int(width),
        fps=int(fps),
        speed_mps=float(speed),
        gps_noise_m=float(
            gps_noise_m if gps_noise_m is not None else make_gps_model(gps_model).sigma_m
        ),
        gps_model=gps_model,
        gps_quality=bool(
            gps_quality if gps_quality is not None else make_gps_model(gps_model).report_quality
        ),
        clock_offset_s=float(clock_offset_s),
        max_video_m=float(max_video_m),
        network=network,
        poses_only=poses_only,
        pattern=pattern,
        stops=bool(stops),
    )
    if route_gpx is not None and pattern != "coverage":
        msg = (
            f"--pattern {pattern} plans its own walks; a --route is filmed as recorded "
            "(leave out one of them)"
        )
        raise ConfigError(msg)
    from city360.synth.film_workers import check_workers

    check_workers(int(workers))
    target = Path(out)
    started = time.perf_counter()
    with make_progress() as progress, atomic_dir(target, replace=replace) as tmp:
        _synthesize_into(
            Path(osm_path),
            tmp,
            name=_city_name(Path(osm_path)),
            bbox=bbox,
            route_gpx=Path(route_gpx) if route_gpx is not None else None,
            options=options,
            progress=progress,
            workers=int(workers),
        )
    log.info("synthesized %s in %.1f s", target, time.perf_counter() - started)
    return target


def _city_name(osm_path: Path) -> str:
    name = osm_path.name
    for suffix in (".osm.pbf", ".osm.bz2", ".osm.xml", ".osm", ".pbf", ".xml"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)] or "city"
    return osm_path.stem or "city"


@contextmanager
def _step(progress: Progress, description: str) -> Iterator[None]:
    """A one-shot progress line for a step with no natural count."""
    task = progress.add_task(description, total=1)
    yield
    progress.update(task, completed=1)


def _synthesize_into(
    osm_path: Path,
    root: Path,
    *,
    name: str,
    bbox: str | Sequence[float] | None,
    route_gpx: Path | None,
    options: SynthOptions,
    progress: Progress,
    workers: int,
) -> None:
    from city360.maps.osm import load_osm, write_osm_extract

    city = CityDir(root)
    with _step(progress, f"reading {osm_path.name}"):
        # no ways across squares: the scene would line them with facades (city360.maps.osm);
        # streets end at junctions, not where the bbox crops them: a walker turns there
        osm = load_osm(osm_path, bbox=bbox, network=options.network, squares=False, edge=SCENE_EDGE)
        extract = write_osm_extract(osm_path, city.osm_extract_path, bbox=osm.bbox)
    streets, projection = osm.streets, osm.projection

    if route_gpx is not None:
        routes = [route_from_gpx(route_gpx, graph=streets, projection=projection)]
    else:
        routes = plan_routes(
            streets, pattern=options.pattern, seed=options.seed, max_video_m=options.max_video_m
        )
    if options.stops:
        node_xy = {int(n): (d["x_m"], d["y_m"]) for n, d in streets.nodes(data=True)}
        routes = [
            with_stops(
                route,
                speed_mps=options.speed_mps,
                rng=np.random.default_rng([options.seed, 0x5709, index]),
                node_xy=node_xy,
            )
            for index, route in enumerate(routes)
        ]
    poses = [sample_route(r, fps=options.fps, speed_mps=options.speed_mps) for r in routes]

    with _step(progress, "building the 3D scene"):
        scene = scene_from_osm(osm, seed=options.seed)

    starts = _camera_start_times(options.seed, [p.duration_s for p in poses])
    starts = [  # a recorded walk is filmed on its own clock, so its truth keeps the real times
        dt.datetime.fromtimestamp(r.timing.start_utc, dt.UTC)
        if r.timing is not None and r.timing.start_utc is not None
        else start
        for r, start in zip(routes, starts, strict=True)
    ]
    if not options.poses_only:
        _film_all(scene, routes, poses, starts, city, options, progress, workers=workers)

    videos: list[VideoTruth] = []
    for index, (route, frame_poses, start) in enumerate(zip(routes, poses, starts, strict=True)):
        write_true_poses(
            city.groundtruth_dir / "poses" / f"{route.name}.csv", frame_poses.table(projection)
        )
        videos.append(
            _write_gps(city, route, frame_poses, start, projection, options, video_index=index)
        )

    truth = SceneTruth(
        seed=options.seed,
        junctions=scene.junction_truths(),
        streets=scene.street_truths(),
        pois=list(scene.poi_truths()),
        objects=list(scene.object_truths()),
        videos=videos,
    )
    truth.save(city.groundtruth_dir / "scene.json")
    sources = [
        SourceFile(
            kind="osm",
            path=str(osm_path),
            sha256=file_sha256(osm_path),
            attribution=OSM_ATTRIBUTION,
        )
    ]
    if route_gpx is not None:
        sources.append(SourceFile(kind="route", path=str(route_gpx), sha256=file_sha256(route_gpx)))
    sources.append(
        SourceFile(
            kind="osm", path=OSM_EXTRACT, sha256=file_sha256(extract), attribution=OSM_ATTRIBUTION
        )
    )
    origin = projection
    city.write_manifest(
        CityManifest(
            name=name,
            crs=projection.proj4,
            origin_lat=origin.origin_lat,
            origin_lon=origin.origin_lon,
            bbox=osm.bbox,
            synthetic=True,
            sources=sources,
            build={"synth": {**options.build_params(), "bbox": list(osm.bbox)}},
            stats={
                "videos": len(videos),
                "frames": int(sum(len(p) for p in poses)),
                "duration_s": round(sum(p.duration_s for p in poses), 3),
                "route_length_m": round(sum(r.length_m for r in routes), 2),
                "street_length_m": round(osm.street_length_m, 2),
                "junctions": len(truth.junctions),
                "streets": len(truth.streets),
                "pois": len(truth.pois),
                "objects": len(truth.objects),
            },
        )
    )


def _camera_start_times(seed: int, durations_s: Sequence[float]) -> list[dt.datetime]:
    """Camera clock (UTC, whole seconds) at the first frame of each video, from the seed."""
    rng = np.random.default_rng([seed, 0x5EED])
    start = _CAMERA_EPOCH + dt.timedelta(seconds=int(rng.integers(0, 8 * 3600)))
    starts = []
    for duration in durations_s:
        starts.append(start)
        pause = int(rng.integers(*_PAUSE_BETWEEN_VIDEOS_S))
        start = start + dt.timedelta(seconds=int(np.ceil(duration)) + pause)
    return starts


def _film_all(
    scene: Any,
    routes: Sequence[Route],
    poses: Sequence[FramePoses],
    starts: Sequence[dt.datetime],
    city: CityDir,
    options: SynthOptions,
    progress: Progress,
    *,
    workers: int,
) -> None:
    """Film every route into ``videos/`` on ``workers`` processes, with one progress bar over
    all frames, an estimate once the first frames are timed and the time it took at the end."""
    from city360.synth.film_clock import FilmingClock, planned_makespan
    from city360.synth.film_workers import FilmJob, film_jobs, longest_first

    city.videos_dir.mkdir(parents=True, exist_ok=True)
    jobs = [
        FilmJob(
            name=route.name,
            poses=frame_poses,
            path=city.videos_dir / f"{route.name}.mp4",
            creation_time=start,
        )
        for route, frame_poses, start in zip(routes, poses, starts, strict=True)
    ]
    total = sum(len(job.poses) for job in jobs)
    used = min(workers, len(jobs)) or 1
    plural = "s" if used != 1 else ""
    progress.console.print(
        f"filming {total:,} frames in {len(jobs)} videos at {options.width} x "
        f"{options.width // 2} px on {used} worker{plural}",
        highlight=False,
    )
    clock = FilmingClock(
        total_frames=total,
        workers=used,
        makespan_frames=planned_makespan([len(j.poses) for j in longest_first(jobs)], used),
    )
    task = progress.add_task(f"filming {len(jobs)} videos", total=total, unit="frames")

    def advance(frames: int) -> None:
        progress.advance(task, frames)
        estimate = clock.advance(frames)
        if estimate is not None:
            progress.console.print(estimate, highlight=False)
            log.info("%s", estimate)

    film_jobs(
        scene, jobs, width=options.width, workers=used, on_ready=clock.ready, on_frames=advance
    )
    progress.console.print(clock.summary(), highlight=False)
    log.info("%s", clock.summary())


def _write_gps(
    city: CityDir,
    route: Route,
    frame_poses: FramePoses,
    start: dt.datetime,
    projection: LocalProjection,
    options: SynthOptions,
    *,
    video_index: int,
) -> VideoTruth:
    rng = np.random.default_rng([options.seed, 0x69B5, video_index])
    track = simulate_gps(
        PathSampler(route.polyline_xy),
        speed_mps=options.speed_mps,
        duration_s=frame_poses.duration_s,
        creation_time=start,
        projection=projection,
        noise=make_gps_model(
            options.gps_model, sigma_m=options.gps_noise_m, report_quality=options.gps_quality
        ),
        clock_offset_s=options.clock_offset_s,
        rng=rng,
        distance_m=(frame_poses.t_s, frame_poses.s_m) if route.timing is not None else None,
    )
    write_gpx(city.videos_dir / f"{route.name}.gpx", track, name=route.name)
    return VideoTruth(
        name=route.name,
        junction_sequence=list(route.junction_sequence),
        fps=float(options.fps),
        frame_count=len(frame_poses),
        width=options.width,
        height=options.width // 2,
        clock_offset_s=options.clock_offset_s,
        gps_noise_sigma_m=options.gps_noise_m,
        gps_outlier_indices=list(track.outlier_indices),
        gps_dropout_spans_s=list(track.dropout_spans_s),
        creation_time_utc=format_creation_time(start),
        gps_model=options.gps_model,
        gps_canyon_spans_s=list(track.canyon_spans_s),
    )
