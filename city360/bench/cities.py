"""The cities the benchmarks run on, built once and cached under the user cache dir.

Every city is made by the real pipeline from a generated street grid (:mod:`city360.bench.osm`),
so the harness needs no downloaded data. A city's folder name carries a hash of everything it
depends on (city360 version, grid, synth options), so changing an input builds a new one and
an unchanged one is reused. A city is built in ``<name>.building`` and renamed when complete.

- the *view city*: a 2 x 2 grid (four junctions, four dead ends) filmed at ``width`` px,
  1 fps, 2 m/s (a frame every 2 m: rendering 3840 px frames is what building costs),
  ingested, built with its OSM, its maps drawn and a task suite generated — what
  ``env.step`` and the location map are measured on; episode throughput runs a larger suite
  generated on it (:func:`throughput_suite`);
- the *clip*: one straight street filmed at 30 fps (long-GOP H.264, a consumer camera's
  format), for ingest speed and the naive seek-decode-convert pipeline;
- the *pose-only city*: a large grid synthesized without video (GPS tracks only), turned into
  pose-only trajectories, for the pose-graph build time.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from city360.bench.osm import write_grid_osm
from city360.progress import console

__all__ = [
    "ClipSpec",
    "PoseCitySpec",
    "ViewCitySpec",
    "bench_cache_dir",
    "clip_video",
    "pose_only_city",
    "throughput_suite",
    "view_city",
]

SUITE_NAME = "bench"


def bench_cache_dir() -> Path:
    """``<city360 cache dir>/bench``."""
    from city360.settings import cache_dir

    return cache_dir() / "bench"


@dataclass(frozen=True, slots=True)
class ViewCitySpec:
    """A filmed grid city for stepping: junction spacing and equirect width (px)."""

    width: int = 3840
    cols: int = 2
    rows: int = 2
    spacing_m: float = 30.0
    stub_m: float = 10.0
    fps: int = 1
    speed_mps: float = 2.0
    per_family: int = 2
    seed: int = 0


@dataclass(frozen=True, slots=True)
class ClipSpec:
    """One straight street of ``length_m`` filmed at ``fps`` walking at ``speed_mps``."""

    width: int = 3840
    length_m: float = 15.0
    fps: int = 30
    speed_mps: float = 3.0
    seed: int = 0


@dataclass(frozen=True, slots=True)
class PoseCitySpec:
    """A ``cols`` x ``rows`` grid synthesized without video, one pose a metre."""

    cols: int = 14
    rows: int = 14
    spacing_m: float = 40.0
    seed: int = 0


def _key(kind: str, spec: Any) -> str:
    from city360 import __version__

    payload = json.dumps({"kind": kind, "version": __version__, **asdict(spec)}, sort_keys=True)
    return f"{kind}-{hashlib.sha256(payload.encode()).hexdigest()[:12]}"


def _cached(kind: str, spec: Any, make: Callable[[Path], None], *, rebuild: bool) -> Path:
    """The cached folder for ``spec``; ``make(folder)`` fills a fresh one when missing."""
    root = bench_cache_dir()
    final = root / _key(kind, spec)
    if rebuild and final.exists():
        shutil.rmtree(final)
    if final.is_dir():
        return final
    building = final.with_name(final.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    try:
        make(building)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    (building / "bench-spec.json").write_text(
        json.dumps({"kind": kind, **asdict(spec)}, indent=2), encoding="utf-8"
    )
    os.replace(building, final)
    return final


def _run_cli(*args: str) -> None:
    """Run one ``city360`` command in this process, echoing it like a shell would."""
    from city360.cli import app

    console.print(f"[bold cyan]$ city360 {shlex.join(args)}[/]")
    app(list(args), standalone_mode=False)


def view_city(spec: ViewCitySpec, *, rebuild: bool = False) -> Path:
    """The built view city for ``spec`` (see the module docstring); its suite is
    ``<city>/tasks/bench``."""

    def make(folder: Path) -> None:
        from city360.synth.pipeline import synthesize

        city = folder / "city"
        osm = write_grid_osm(
            folder / "grid.osm",
            cols=spec.cols,
            rows=spec.rows,
            spacing_m=spec.spacing_m,
            stub_m=spec.stub_m,
        )
        console.print(f"synthesizing the view city at {spec.width} px ({osm})")
        synthesize(
            osm, out=city, width=spec.width, fps=spec.fps, speed=spec.speed_mps, seed=spec.seed
        )
        videos = sorted(str(p) for p in (city / "videos").glob("*.mp4"))
        gps = [a for v in videos for a in ("--gps", str(Path(v).with_suffix(".gpx")))]
        _run_cli("ingest", *videos, *gps, "--out", str(city), "--max-width", str(spec.width))
        _run_cli("build", str(city), "--osm", str(city / "map" / "extract.osm"))
        from city360.maps import CityMap

        CityMap.open(city)
        _run_cli(
            "tasks",
            "generate",
            str(city),
            "--out",
            str(city / "tasks" / SUITE_NAME),
            "--per-family",
            str(spec.per_family),
            "--seed",
            str(spec.seed),
        )

    return _cached("view", spec, make, rebuild=rebuild) / "city"


_ASSET_FIELDS = ("grid_map", "reference_image", "route_map")


def throughput_suite(city: Path, *, per_family: int, seeds: int = 1) -> Path:
    """A task suite on the view ``city`` for episode throughput: the suites generated with
    ``per_family`` tasks per family for seeds ``0 .. seeds - 1``, merged (ids and assets
    prefixed ``s<seed>-``), made once into ``<city>/tasks/throughput-<per_family>x<seeds>``.

    The view city's own suite (two per family, 11 tasks) is too small to measure throughput:
    worker processes start (imports, opening the environment) in about the time they need
    for it. One seed cannot give more: the 2x2 grid rejects most candidates of some families
    (``per_family=150``: 234 tasks, 400: 271), so other seeds add other starts and goals
    (three seeds of 150: 697 tasks).
    """
    from city360.tasks.suite import load_suite, save_suite

    target = city / "tasks" / f"throughput-{per_family}x{seeds}"
    if (target / "suite.json").is_file():
        return target
    scratch = target.with_name(target.name + ".parts")
    shutil.rmtree(scratch, ignore_errors=True)
    try:
        parts = []
        for seed in range(seeds):
            out = scratch / f"seed-{seed}"
            _run_cli(
                "tasks",
                "generate",
                str(city),
                "--out",
                str(out),
                "--per-family",
                str(per_family),
                "--seed",
                str(seed),
            )
            parts.append(load_suite(out))
        save_suite(_merge_suites(parts), target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def _merge_suites(parts: list[Any]) -> Any:
    """One suite holding every task of ``parts`` (suites of one city and grid), the tasks and
    assets of part ``k`` renamed with the prefix ``s<k>-`` so that none collide."""
    from city360.tasks.suite import ASSETS_DIR, Suite

    first = parts[0]
    tasks, assets = [], {}
    for k, part in enumerate(parts):
        if (part.city, part.grid_size, part.grid_area_m) != (
            first.city,
            first.grid_size,
            first.grid_area_m,
        ):
            msg = f"suite part {k} has another city or grid than part 0; cannot merge"
            raise ValueError(msg)
        prefix = f"s{k}-"

        def renamed(path: str, prefix: str = prefix) -> str:
            return f"{ASSETS_DIR}/{prefix}{path.removeprefix(ASSETS_DIR + '/')}"

        assets.update({renamed(path): data for path, data in part.assets.items()})
        for task in part.tasks:
            told_update = {
                name: renamed(value)
                for name, value in task.told
                if name in _ASSET_FIELDS and isinstance(value, str)
            }
            told = task.told.model_copy(update=told_update)
            tasks.append(task.model_copy(update={"id": prefix + task.id, "told": told}))
    return Suite(
        name=f"{first.name}-throughput",
        city=first.city,
        tasks=tasks,
        assets=assets,
        grid_size=first.grid_size,
        created={"merged": [part.created for part in parts]},
        grid_area_m=first.grid_area_m,
    )


def clip_video(spec: ClipSpec, *, rebuild: bool = False) -> tuple[Path, Path]:
    """``(video.mp4, track.gpx)``: the longest video filmed along one straight street."""

    def make(folder: Path) -> None:
        from city360.synth.pipeline import synthesize

        cols = max(2, round(spec.length_m / 15.0) + 1)
        osm = write_grid_osm(
            folder / "street.osm", cols=cols, rows=1, spacing_m=spec.length_m / (cols - 1)
        )
        console.print(f"synthesizing a {spec.fps} fps clip at {spec.width} px ({osm})")
        synthesize(
            osm,
            out=folder / "city",
            width=spec.width,
            fps=spec.fps,
            speed=spec.speed_mps,
            seed=spec.seed,
        )

    folder = _cached("clip", spec, make, rebuild=rebuild)
    videos = sorted((folder / "city" / "videos").glob("*.mp4"), key=lambda p: -p.stat().st_size)
    if not videos:
        msg = f"benchmark clip folder {folder} has no video; delete it and run again"
        raise FileNotFoundError(msg)
    return videos[0], videos[0].with_suffix(".gpx")


def _pose_only_trajectories(city_dir: Path, *, spacing_m: float = 1.0) -> int:
    """Turn each GPX track of a pose-only synthetic city into a pose-only trajectory the way
    ingest does without video: video_store's track cleaning, then one pose every
    ``spacing_m`` metres travelled. Returns how many trajectories were written."""
    from city360._atomic import atomic_dir
    from city360.city import CityDir, TrajectoryMeta, TrajectoryPoses
    from city360.video_store import clean_track, read_track

    city = CityDir(city_dir)
    projection = city.read_manifest().projection
    count = 0
    for gpx in sorted(city.videos_dir.glob("*.gpx")):
        smooth = clean_track(read_track(gpx), projection)
        steps = np.hypot(np.diff(smooth.x_m), np.diff(smooth.y_m))
        arc = np.concatenate([[0.0], np.cumsum(steps)])
        marks = np.arange(0.0, float(arc[-1]), spacing_m)
        if marks.shape[0] < 2:
            continue
        x = np.interp(marks, arc, smooth.x_m)
        y = np.interp(marks, arc, smooth.y_m)
        t = np.interp(marks, arc, smooth.t_s)
        ahead = np.append(np.arange(1, x.shape[0]), x.shape[0] - 1)
        behind = np.append(np.arange(0, x.shape[0] - 1), x.shape[0] - 2)
        heading = np.mod(np.degrees(np.arctan2(x[ahead] - x[behind], y[ahead] - y[behind])), 360)
        lat, lon = projection.to_latlon(x, y)
        poses = TrajectoryPoses(
            x_m=x,
            y_m=y,
            lat=np.asarray(lat, np.float64),
            lon=np.asarray(lon, np.float64),
            heading_deg=heading,
            t_s=t - t[0],
            source_pts=np.arange(x.shape[0], dtype=np.int64),
        )
        meta = TrajectoryMeta(
            id=gpx.stem,
            source_video=f"{gpx.stem}.mp4",
            source_sha256="0" * 64,
            gps_source=str(gpx),
            width=3840,
            height=1920,
            frame_count=x.shape[0],
            spacing_m=spacing_m,
            camera_yaw_offset_deg=0.0,
            clock_offset_s=0.0,
            length_m=float(np.hypot(np.diff(x), np.diff(y)).sum()),
        )
        with atomic_dir(city.trajectory_dir(gpx.stem)) as tmp:
            CityDir.write_trajectory_files(tmp, meta, poses)
        count += 1
    return count


def pose_only_city(spec: PoseCitySpec, *, rebuild: bool = False) -> Path:
    """A city with pose-only trajectories (no frames.mp4) and no graph yet."""

    def make(folder: Path) -> None:
        from city360.synth.pipeline import synthesize

        osm = write_grid_osm(
            folder / "grid.osm", cols=spec.cols, rows=spec.rows, spacing_m=spec.spacing_m
        )
        console.print(f"synthesizing a pose-only {spec.cols} x {spec.rows} grid ({osm})")
        synthesize(osm, out=folder / "city", seed=spec.seed, poses_only=True)
        _pose_only_trajectories(folder / "city")

    return _cached("poses", spec, make, rebuild=rebuild) / "city"
