"""``city360 synth``: make a synthetic 360° city from an OSM extract."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from city360.errors import ConfigError
from city360.progress import console

__all__ = ["register", "synth_command"]

# Defaults are repeated as literals so `city360 --help` does not import the pipeline; a test
# checks they match city360.synth.film / city360.synth.pipeline.
_DEFAULT_WIDTH = 3840
_DEFAULT_FPS = 30
_DEFAULT_SPEED_MPS = 1.4
_DEFAULT_MAX_VIDEO_M = 600.0


def synth_command(
    out: Annotated[Path, typer.Option("--out", help="Folder to create for the city.")],
    osm: Annotated[
        Path | None,
        typer.Option("--osm", help="OSM extract: .osm, .osm.bz2 or .osm.pbf.", show_default=False),
    ] = None,
    bbox: Annotated[
        str | None,
        typer.Option("--bbox", help="Crop to S,W,N,E (degrees).", show_default=False),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Random seed; same seed, same bytes.")] = 0,
    width: Annotated[
        int | None,
        typer.Option(
            "--width",
            help=f"Equirect width in pixels, height = width/2 (default {_DEFAULT_WIDTH}; "
            "512 with --demo).",
            show_default=False,
        ),
    ] = None,
    fps: Annotated[
        int | None,
        typer.Option(
            "--fps",
            help=f"Frames per second (default {_DEFAULT_FPS}; 2 with --demo).",
            show_default=False,
        ),
    ] = None,
    speed: Annotated[
        float | None,
        typer.Option(
            "--speed",
            help=f"Walking speed, m/s (default {_DEFAULT_SPEED_MPS}; 2.0 with --demo).",
            show_default=False,
        ),
    ] = None,
    gps_noise: Annotated[
        float | None,
        typer.Option(
            "--gps-noise",
            help="RMS horizontal GPS error, metres (default: the model's; phone 3 m).",
            show_default=False,
        ),
    ] = None,
    gps_model: Annotated[
        str,
        typer.Option(
            "--gps-model",
            help="GPS error model: phone (1 Hz, 3 m), camera (10 Hz, drift), canyon (5 m, "
            "10-30 m bursts, drift, dropouts). See city360/synth/gps.py.",
        ),
    ] = "phone",
    gps_quality: Annotated[
        bool | None,
        typer.Option(
            "--gps-quality/--no-gps-quality",
            help="Write fix quality (HDOP, satellites, 2d/3d fix) per point into the GPX as "
            "<hdop>, <sat>, <fix>, the error following the HDOP (default: the model's; on for "
            "canyon only).",
            show_default=False,
        ),
    ] = None,
    clock_offset: Annotated[
        float,
        typer.Option("--clock-offset", help="GPS time minus camera (MP4 creation) time, s."),
    ] = 0.0,
    route: Annotated[
        Path | None,
        typer.Option(
            "--route", help="Film along this GPX track instead of every street.", show_default=False
        ),
    ] = None,
    pattern: Annotated[
        str,
        typer.Option(
            "--pattern",
            help="How the streets are filmed: coverage (every street both ways), one-way "
            "(every street once, one direction), wander (long random walks that cross, turn "
            "back and overlap). See city360/synth/patterns.py.",
        ),
    ] = "coverage",
    stops: Annotated[
        bool,
        typer.Option(
            "--stops",
            help="Pause 5-60 s at some junctions and mid-street and vary the pace (any "
            "--pattern; not with a timed --route).",
        ),
    ] = False,
    max_video_m: Annotated[
        float, typer.Option("--max-video-m", help="Longest planned video, metres.")
    ] = _DEFAULT_MAX_VIDEO_M,
    network: Annotated[
        str,
        typer.Option("--network", help="Streets to film: street, street+service, walk, all."),
    ] = "street",
    poses_only: Annotated[
        bool,
        typer.Option("--poses-only", help="Skip rendering: GPX, poses and ground truth only."),
    ] = False,
    demo: Annotated[
        bool,
        typer.Option("--demo", help="Use the packaged demo extract (Helsinki centre)."),
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Replace --out if it already exists.")
    ] = False,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            help="Processes that film, each with its own renderer (default: the cores this "
            "process may use; 1 films in this process). The bytes do not depend on it.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Film a procedural 360° twin of an OSM extract: GPS-tagged video plus ground truth.

    Map data © OpenStreetMap contributors (ODbL).
    """
    from city360.synth.film_workers import check_workers, default_workers
    from city360.synth.pipeline import (
        DEMO_FPS,
        DEMO_SPEED_MPS,
        DEMO_WIDTH,
        demo_city_source,
        synthesize,
    )

    if demo and osm is not None:
        msg = "pass either --osm FILE or --demo, not both"
        raise ConfigError(msg)
    if not demo and osm is None:
        msg = "no OSM extract given: pass --osm FILE (.osm, .osm.bz2, .osm.pbf) or --demo"
        raise ConfigError(msg)
    film_workers = check_workers(workers) if workers is not None else default_workers()
    source = demo_city_source() if demo or osm is None else osm
    started = time.perf_counter()
    with _exit_cleanly_on_sigterm(out):
        city_dir = synthesize(
            source,
            out=out,
            bbox=bbox,
            seed=seed,
            width=width if width is not None else (DEMO_WIDTH if demo else _DEFAULT_WIDTH),
            fps=fps if fps is not None else (DEMO_FPS if demo else _DEFAULT_FPS),
            speed=speed if speed is not None else (DEMO_SPEED_MPS if demo else _DEFAULT_SPEED_MPS),
            gps_noise_m=gps_noise,
            gps_model=gps_model,
            gps_quality=gps_quality,
            clock_offset_s=clock_offset,
            route_gpx=route,
            max_video_m=max_video_m,
            network=network,
            pattern=pattern,
            stops=stops,
            poses_only=poses_only,
            replace=force,
            workers=film_workers,
        )
    _print_summary(city_dir, time.perf_counter() - started)


SIGTERM_GRACE_S = 5.0
"""Seconds a SIGTERM waits for the SystemExit it raises to unwind before synth leaves anyway."""


@contextmanager
def _exit_cleanly_on_sigterm(out: Path) -> Iterator[None]:
    """Turn SIGTERM into SystemExit so the temporary output folder is removed on the way out,
    and leave with exit code 128 + SIGTERM whatever a library does with that SystemExit."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    received: list[int] = []

    def leave() -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(128 + received[0])

    def force() -> None:
        # A C library swallowed the SystemExit inside one of its callbacks (pyosmium can):
        # remove this process's temporary output folder here and leave.
        import shutil

        for partial in out.parent.glob(f".{out.name}.{os.getpid()}.*.partial"):
            shutil.rmtree(partial, ignore_errors=True)
        leave()

    def stop(signum: int, _frame: object) -> None:
        if not received:
            received.append(signum)
            timer = threading.Timer(SIGTERM_GRACE_S, force)
            timer.daemon = True
            timer.start()
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    except BaseException:
        if not received:
            raise
        # The output folder's clean-up ran on the way out. Leave now, with the signal's exit
        # code: a library may have turned the SystemExit raised inside its callbacks into its
        # own error (pyosmium does: "OSM file cannot be read", exit 1), and interpreter shutdown
        # can abort while a library's reader threads still run.
        leave()
    finally:
        signal.signal(signal.SIGTERM, previous)
    if received:  # the SystemExit was swallowed and the work finished: still a SIGTERM exit
        leave()


def _print_summary(city_dir: Path, seconds: float) -> None:
    from city360.city import CityDir

    manifest = CityDir(city_dir).read_manifest()
    stats = manifest.stats
    console.print(
        f"[bold green]synthesized[/] {city_dir}: {stats.get('videos', 0)} videos, "
        f"{stats.get('frames', 0)} frames, {stats.get('route_length_m', 0):.0f} m walked, "
        f"{stats.get('junctions', 0)} junctions, {stats.get('pois', 0)} POIs, "
        f"{stats.get('objects', 0)} objects in {seconds:.1f} s",
        highlight=False,
    )
    console.print("Map data © OpenStreetMap contributors (ODbL)", highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``city360 synth`` to the main CLI."""
    app.command("synth")(synth_command)
