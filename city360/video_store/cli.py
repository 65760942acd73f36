"""``city360 ingest INPUT... --gps TRACK... --out CITY_DIR``.

Inputs are videos, folders of videos, photo folders or photos (:mod:`.inputs` sorts them; a
GPS file among them is taken as a track, as ``ingest *.mp4 --gps *.gpx`` puts it there).
Videos and tracks pair by file stem when there are several (``a.mp4`` with ``a.gpx``); one
video and one track pair whatever their names; a video without a track uses its embedded
GPS (GoPro GPMF or CAMM). A photo sequence pairs with the track named like it (or the only
track, when it is the only input) and otherwise uses its photos' EXIF GPS. Videos are ingested
in parallel processes, each writing its own ``trajectories/<id>/``; photo sequences follow in
this process; ``city.json`` is written once, at the end.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from city360._lifetime import die_with_parent, signals_interrupt, stop_pool
from city360.errors import City360Error, ConfigError, InputFileError
from city360.video_store.dual_fisheye import DEFAULT_FISHEYE_FOV_DEG

if TYPE_CHECKING:
    from city360.geo import LocalProjection
    from city360.video_store.ingest import IngestOptions, IngestResult
    from city360.video_store.inputs import PhotoSequence

__all__ = [
    "check_trajectory_ids",
    "describe_result",
    "pair_inputs",
    "pair_sequences",
    "parse_offset",
    "register",
    "run_ingest",
]


MAX_OFFSET_S = 10 * 365.25 * 86400.0
"""Largest GPS-minus-camera clock offset accepted: a camera whose clock was never set is years
off, more is a typo (1e300 overflowed the time arithmetic)."""


def parse_offset(value: str | None) -> float | Literal["auto"] | None:
    """``None`` | ``"auto"`` | seconds (GPS time minus camera time)."""
    if value is None:
        return None
    if value.strip().lower() == "auto":
        return "auto"
    try:
        seconds = float(value)
    except ValueError:
        msg = f"--offset must be a number of seconds or 'auto', got {value!r}"
        raise ConfigError(msg) from None
    if seconds != seconds or abs(seconds) == float("inf"):
        msg = f"--offset must be finite, got {value!r}"
        raise ConfigError(msg)
    if abs(seconds) > MAX_OFFSET_S:
        msg = (
            f"--offset {value} s is more than {MAX_OFFSET_S:.0f} s (10 years) between the GPS "
            "and camera clocks; give the offset in seconds (GPS time minus camera time), or "
            "'auto'"
        )
        raise ConfigError(msg)
    return seconds


def pair_inputs(videos: Sequence[Path], tracks: Sequence[Path]) -> list[tuple[Path, Path | None]]:
    """Pair each video with its GPS track (see the module docstring)."""
    if not videos:
        msg = "no video given; pass one or more VIDEO files"
        raise ConfigError(msg)
    missing = [str(p) for p in [*videos, *tracks] if not p.is_file()]
    if missing:
        msg = f"not found: {', '.join(missing)}; check the paths"
        raise InputFileError(msg)
    stems = [v.stem for v in videos]
    duplicates = sorted({s for s in stems if stems.count(s) > 1})
    if duplicates:
        msg = (
            f"several videos share the name {duplicates[0]!r}; trajectories are named by "
            "file stem, so rename them"
        )
        raise ConfigError(msg)
    if len(videos) == 1 and len(tracks) == 1:
        return [(videos[0], tracks[0])]
    by_stem: dict[str, Path] = {}
    for track in tracks:
        if track.stem in by_stem:
            msg = f"several GPS tracks are named {track.stem!r}: {by_stem[track.stem]}, {track}"
            raise ConfigError(msg)
        by_stem[track.stem] = track
    unused = sorted(set(by_stem) - set(stems))
    if unused:
        msg = (
            f"GPS track {by_stem[unused[0]]} matches no video by name; name each track like "
            "its video (walk1.mp4 + walk1.gpx)"
        )
        raise ConfigError(msg)
    return [(v, by_stem.get(v.stem)) for v in videos]


def _hint_track(sequence: PhotoSequence, gps: Path | None, exc: City360Error) -> City360Error:
    """``exc``, naming the GPS file beside the photos when they carry no position of their own
    and no track was paired (a folder's track pairs only when named like the folder)."""
    from city360.errors import GpsError

    if gps is not None or not sequence.tracks_beside or "no EXIF GPS position" not in str(exc):
        return exc
    track = sequence.tracks_beside[0]
    msg = (
        f"{exc}. A track lies beside the photos ({track.name}): pass --gps {track}, or name it "
        f"{sequence.name}{track.suffix} (a track in a photo folder pairs when named like it)"
    )
    return GpsError(msg)


def check_trajectory_ids(
    videos: Sequence[Path], sequences: Sequence[PhotoSequence] = ()
) -> dict[str, str]:
    """Refuse inputs whose trajectory ids coincide. An id keeps a name's ASCII letters, digits,
    ``.``, ``_`` and ``-``, so names in other scripts collapse (``新宿.mp4`` and ``渋谷.mp4`` are
    both ``trajectory``) and the second was refused as "already exists" after the first was
    ingested, or, with ``--overwrite``, replaced it. Return each id with the name of the input
    that makes it (:attr:`~city360.video_store.ingest.IngestOptions.batch_ids`)."""
    from city360.video_store.ingest import trajectory_id_for

    named: dict[str, Path] = {}
    sources = [
        *((v, v) for v in videos),
        *((Path(s.name + ".jpg"), s.photos[0].parent) for s in sequences),
    ]
    for name, source in sources:
        tid = trajectory_id_for(name)
        if tid in named:
            msg = (
                f"{named[tid]} and {source} both make the trajectory id {tid!r} (an id keeps "
                "a name's ASCII letters, digits, '.', '_' and '-'); rename one in Latin "
                "letters or digits, e.g. walk_01"
            )
            raise ConfigError(msg)
        named[tid] = source
    return {tid: source.name for tid, source in named.items()}


def pair_sequences(
    sequences: Sequence[PhotoSequence], tracks: Sequence[Path], *, only_input: bool
) -> tuple[list[tuple[PhotoSequence, Path | None]], list[Path]]:
    """Pair photo sequences with the tracks named like them; return the pairs and the tracks
    left for the videos. ``only_input``: the sequence is all there is to ingest, so a single
    track belongs to it whatever its name."""
    if only_input and len(sequences) == 1 and len(tracks) == 1:
        return [(sequences[0], tracks[0])], []
    by_stem = {t.stem: t for t in tracks}
    pairs = [(s, by_stem.pop(s.name, None)) for s in sequences]
    return pairs, [t for t in tracks if t.stem in by_stem]


def _worker(
    video: Path,
    gps: Path | None,
    out: Path,
    projection: tuple[float, float],
    options: IngestOptions,
    queue: Any,
) -> tuple[IngestResult, list[Warning]]:
    """Ingest one video; return its result and the warnings it raised, for the parent to
    issue (a worker process would print them in Python's format, with city360's source)."""
    from city360.geo import LocalProjection
    from city360.video_store.ingest import ingest_video

    def report(phase: str, done: int, total: int) -> None:
        if queue is not None:
            queue.put((video.stem, phase, done, total))

    with warnings.catch_warnings(record=True) as caught:
        result = ingest_video(
            video, gps, out, projection=LocalProjection(*projection), options=options,
            progress=report,
        )  # fmt: skip
    return result, [w.message for w in caught if isinstance(w.message, Warning)]


def _issue(raised: list[Warning]) -> None:
    """Warn again in this process what a worker raised (the CLI prints ``warning: ...``)."""
    for warning in raised:
        warnings.warn(warning, stacklevel=2)


def run_ingest(
    pairs: Sequence[tuple[Path, Path | None]],
    out: Path,
    options: IngestOptions,
    *,
    workers: int = 1,
    sequences: Sequence[tuple[PhotoSequence, Path | None]] = (),
) -> tuple[list[IngestResult], list[tuple[Path, City360Error]]]:
    """Ingest every video pair (in ``workers`` processes) and photo sequence, then write
    ``city.json`` once.

    Returns the results and the failures; a failure leaves nothing of its trajectory behind.
    """
    from city360.city import CityDir
    from city360.video_store.city_manifest import claim_city
    from city360.video_store.decode import probe_video
    from city360.video_store.gps import read_track
    from city360.video_store.gps.exif import read_exif_track
    from city360.video_store.ingest import load_track

    city = CityDir(out)
    failures: list[tuple[Path, City360Error]] = []
    created = False  # whether this batch made the city (its city.json)
    if city.exists():
        projection = city.read_manifest().projection
    else:  # a new city: centre its CRS on every track, read here once (tracks are small)
        # An input whose track cannot be read (an audio memo, a cut file, a broken GPX) is a
        # failure named with the others at the end; the rest still ingest, as they do into a
        # city that exists.
        tracks = []
        readable: list[tuple[Path, Path | None]] = []
        for video, gps in pairs:
            try:
                info = (
                    probe_video(
                        video, projection=options.projection, layout=options.layout,
                        fisheye=options.fisheye,
                    )
                    if gps is None
                    else None
                )  # fmt: skip
                tracks.append(load_track(video, gps, info))
            except City360Error as exc:
                failures.append((video, exc))
                continue
            readable.append((video, gps))
        readable_sequences: list[tuple[PhotoSequence, Path | None]] = []
        for sequence, gps in sequences:
            try:
                tracks.append(  # the photos left out are named when the sequence is ingested
                    read_track(gps)
                    if gps is not None
                    else read_exif_track(list(sequence.photos), warn=False)
                )
            except City360Error as exc:
                failures.append((sequence.photos[0].parent, _hint_track(sequence, gps, exc)))
                continue
            readable_sequences.append((sequence, gps))
        pairs, sequences = readable, readable_sequences
        if not tracks:
            return [], failures
        # claimed at once: another ingest into this new city meanwhile uses the same frame
        projection, created = claim_city(out, tracks)
    results: list[IngestResult] = []
    try:
        _ingest_all(pairs, sequences, out, options, workers, projection, results, failures)
    except KeyboardInterrupt as exc:
        # Trajectories finished so far are kept and recorded; the unfinished left nothing
        # (each is written to a hidden partial folder and renamed only when complete).
        _record(out, projection, results, options, created=created)
        raise IngestInterrupted(str(exc), [r.trajectory_id for r in results]) from None
    _record(out, projection, results, options, created=created)
    return results, failures


def _record(
    out: Path,
    projection: LocalProjection,
    results: Sequence[IngestResult],
    options: IngestOptions,
    *,
    created: bool,
) -> None:
    """Add ``results`` to ``city.json``; with none, undo the city this batch made."""
    from city360.video_store.city_manifest import release_city, update_manifest

    if results:
        update_manifest(out, projection, results, options)
    elif created:
        release_city(out)


class IngestInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM during ingest; ``finished`` names the trajectories that were kept."""

    def __init__(self, signal_name: str, finished: list[str]) -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name or "SIGINT"
        self.finished = finished


@contextlib.contextmanager
def _stopped_on_error(pool: Any) -> Iterator[None]:
    try:
        yield
    except BaseException:
        stop_pool(pool)  # do not wait for trajectories nobody will record
        raise


def _ingest_all(
    pairs: Sequence[tuple[Path, Path | None]],
    sequences: Sequence[tuple[PhotoSequence, Path | None]],
    out: Path,
    options: IngestOptions,
    workers: int,
    projection: Any,
    results: list[IngestResult],
    failures: list[tuple[Path, City360Error]],
) -> None:
    from city360.progress import make_progress
    from city360.video_store.photos import ingest_photos

    with signals_interrupt(), make_progress() as progress:
        bars = {
            video.stem: progress.add_task(f"ingest {video.name}", total=None) for video, _ in pairs
        }

        def show(stem: str, phase: str, done: int, total: int) -> None:
            label = "motion" if phase == "motion" else "frames"
            progress.update(
                bars[stem],
                completed=done,
                total=total or None,
                description=f"{label} {stem}",
            )

        class _Direct:
            def put(self, item: tuple[str, str, int, int]) -> None:
                show(*item)

        if workers <= 1 or len(pairs) == 1:
            for video, gps in pairs:
                try:
                    result, raised = _worker(
                        video, gps, out, (projection.origin_lat, projection.origin_lon),
                        options, _Direct(),
                    )  # fmt: skip
                except City360Error as exc:
                    failures.append((video, exc))
                    continue
                show(video.stem, "frames", 1, 1)
                _issue(raised)
                results.extend(result.all_parts())
        else:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor
            from multiprocessing.managers import SyncManager

            context = multiprocessing.get_context("spawn")
            # The workers and the progress queue's manager exit with this process, however it
            # ends (a killed ingest left them decoding for minutes).
            manager = SyncManager(ctx=context)
            manager.start(die_with_parent, (os.getpid(),))
            with (
                manager,
                ProcessPoolExecutor(
                    max_workers=workers,
                    mp_context=context,
                    initializer=die_with_parent,
                    initargs=(os.getpid(),),
                ) as pool,
                _stopped_on_error(pool),
            ):
                queue = manager.Queue()
                futures = {
                    pool.submit(
                        _worker, video, gps, out,
                        (projection.origin_lat, projection.origin_lon), options, queue,
                    ): video
                    for video, gps in pairs
                }  # fmt: skip
                pending = set(futures)
                while pending:
                    while not queue.empty():
                        show(*queue.get())
                    finished = {f for f in pending if f.done()}
                    for future in finished:
                        video = futures[future]
                        try:
                            result, raised = future.result()
                            _issue(raised)
                            results.extend(result.all_parts())
                            show(video.stem, "frames", 1, 1)
                        except City360Error as exc:
                            failures.append((video, exc))
                    pending -= finished
                    time.sleep(0.1)
        for sequence, gps in sequences:
            try:
                results.extend(
                    ingest_photos(
                        sequence.name, sequence.photos, gps, out, projection=projection,
                        options=options,
                    )
                )  # fmt: skip
            except City360Error as exc:
                failures.append((sequence.photos[0].parent, _hint_track(sequence, gps, exc)))


def describe_result(r: IngestResult) -> str:
    """One line of ``city360 ingest`` output for a trajectory written."""
    ratio = r.video_duration_s / r.elapsed_s if r.elapsed_s > 0 else float("inf")
    score = f", match {r.sync_score:.2f}" if r.sync_score is not None else ""
    line = (
        f"{r.trajectory_id}: {r.frame_count} frames {r.width}x{r.height}, "
        f"{r.length_m:.0f} m, clock offset {r.offset_s:+.2f} s ({r.sync_method}{score}), "
        f"{r.dropped_fixes} GPS fixes dropped"
        + (f" and {r.unusable_fixes} points without a fix left out" if r.unusable_fixes else "")
        + f", {ratio:.1f}x real time"
    )
    line += f"; source layout {r.layout}" + (
        ", stored as equirect" if r.layout != "equirect" else ""
    )
    if r.part is not None and r.source_range_s is not None:
        start_s, end_s = r.source_range_s
        line += (
            f"; part {r.part} of {r.source_video.name} (video {start_s:.1f}-{end_s:.1f} s), "
            "split at a GPS jump"
        )
    if r.dead_reckoned_s:
        spans = ", ".join(f"{a:.1f}-{b:.1f} s" for a, b in r.dead_reckoned_s)
        line += f"; dead-reckoned without GPS: video {spans}"
    return line


def register(app: typer.Typer) -> None:
    """Add ``city360 ingest`` to the main CLI."""

    @app.command("ingest")
    def ingest(
        videos: Annotated[
            list[Path],
            typer.Argument(
                help="360° equirect videos, folders of them, saved streams (a DASH .mpd or "
                "HLS .m3u8 beside its segments), or geotagged 360° photos (a folder or "
                "several .jpg: one photo sequence).",
                show_default=False,
            ),
        ],
        out: Annotated[Path, typer.Option("--out", help="City directory to add them to.")],
        gps: Annotated[
            list[Path] | None,
            typer.Option(
                "--gps",
                help="GPS tracks (.gpx, .csv, .nmea, GoPro/CAMM .mp4) or a folder of them, paired "
                "by stem; repeat --gps for several (.gpx files among the inputs count too).",
            ),
        ] = None,
        offset: Annotated[
            str | None,
            typer.Option(help="GPS minus camera clock, seconds, or 'auto' (from motion)."),
        ] = None,
        spacing_m: Annotated[float, typer.Option(help="Metres between kept frames.")] = 1.0,
        max_width: Annotated[int, typer.Option(help="Widest stored frame, pixels.")] = 3840,
        projection: Annotated[
            str | None,
            typer.Option(help="'equirect' to accept a video whose shape/metadata say otherwise."),
        ] = None,
        layout: Annotated[
            str,
            typer.Option(
                help="How the camera laid out the sphere: auto (from the file: .360 GoPro MAX, "
                ".insv dual fisheye, spherical metadata, else 2:1 equirect / 3:2 EAC), "
                "equirect, gopro-max, dual-fisheye, eac (YouTube 3x2), cubemap (3x2 c3x2)."
            ),
        ] = "auto",
        fisheye_fov: Annotated[
            float,
            typer.Option(help="Field of view of each dual-fisheye lens, degrees."),
        ] = DEFAULT_FISHEYE_FOV_DEG,
        workers: Annotated[
            int, typer.Option(help="Parallel ingest processes (default: CPU count).")
        ] = 0,
        overwrite: Annotated[bool, typer.Option(help="Replace existing trajectories.")] = False,
        pyramid: Annotated[
            bool,
            typer.Option(help="Also store half-width frame levels (frames_<width>.mp4)."),
        ] = True,
        dead_reckon: Annotated[
            bool,
            typer.Option(
                help="Keep a head or tail of a video without GPS fixes (up to 20 s or 30 m), "
                "posed by dead reckoning from the pictures' turns and the GPS speed at the "
                "track's edge (a car: 1-4 m; a walker: 8-13 m off). Default: dropped, with a "
                "warning."
            ),
        ] = False,
        osm: Annotated[
            Path | None,
            typer.Option(
                "--osm",
                help="OSM extract of the area (.osm): GPS dropouts (a tunnel, an urban canyon) "
                "are bridged along its streets where a route fits the track, instead of a "
                "curve that cuts the corners, and the frame poses are pulled across each "
                "street towards the line the walker keeps along it.",
            ),
        ] = None,
    ) -> None:
        """Ingest GPS-tagged 360° videos into a city directory (trajectories/<id>/)."""
        from city360.progress import console
        from city360.video_store.dual_fisheye import DualFisheye
        from city360.video_store.ingest import IngestOptions
        from city360.video_store.layouts import parse_layout
        from city360.video_store.reckon import ReckonParams

        if projection is not None and projection != "equirect":
            msg = f"--projection must be 'equirect', got {projection!r}"
            raise ConfigError(msg)
        if osm is not None and not osm.is_file():
            msg = (
                f"--osm {osm}: no such file; pass a local OSM extract of the area (.osm, "
                ".osm.bz2 or .osm.pbf), or leave --osm out"
            )
            raise InputFileError(msg)
        chosen_layout = parse_layout(layout)
        if projection and chosen_layout not in ("auto", "equirect"):
            msg = f"--projection equirect contradicts --layout {chosen_layout}; pass one of them"
            raise ConfigError(msg)
        options = IngestOptions(
            offset=parse_offset(offset),
            spacing_m=spacing_m,
            max_width=max_width,
            projection="equirect" if projection else None,
            layout=chosen_layout,
            fisheye=DualFisheye(fov_deg=fisheye_fov),
            overwrite=overwrite,
            reckon=ReckonParams(enabled=dead_reckon),
            pyramid=pyramid,
            osm=osm,
        )
        from city360.video_store.inputs import moved_tracks_notice, sort_inputs

        inputs = sort_inputs(videos, gps or [])
        if inputs.moved_tracks:
            console.print(moved_tracks_notice(inputs.moved_tracks), highlight=False, soft_wrap=True)
        sequences, tracks = pair_sequences(
            inputs.sequences, inputs.tracks, only_input=not inputs.videos
        )
        pairs = pair_inputs(inputs.videos, tracks) if inputs.videos or tracks else []
        batch_ids = check_trajectory_ids([video for video, _ in pairs], [s for s, _ in sequences])
        options = dataclasses.replace(options, batch_ids=batch_ids)
        if not pairs and not sequences:
            msg = "no video or photo given; pass one or more VIDEO files or a photo folder"
            raise ConfigError(msg)
        count = workers if workers > 0 else max(1, min(len(pairs), os.cpu_count() or 1))
        try:
            results, failures = run_ingest(pairs, out, options, workers=count, sequences=sequences)
        except IngestInterrupted as stop:
            kept = ", ".join(stop.finished) or "none"
            console.print(
                f"[yellow]interrupted by {stop.signal_name}[/]: finished trajectories kept "
                f"({kept}); the unfinished left nothing behind. Ingest the remaining videos "
                "with the same command without the finished ones (or add --overwrite)",
                highlight=False,
                soft_wrap=True,
            )
            raise typer.Exit(143 if stop.signal_name == "SIGTERM" else 130) from None
        for r in results:
            console.print(describe_result(r), highlight=False)
            for start_s, end_s in r.dropped_parts:
                console.print(
                    f"[yellow]warning:[/] {r.source_video}: dropped the part at video time "
                    f"{start_s:.1f}-{end_s:.1f} s between GPS jumps (under 2 frames or "
                    f"{options.spacing_m:g} m)",
                    highlight=False,
                )
        if len(failures) == 1 and not results:
            raise failures[0][1]
        for video, exc in failures:
            console.print(f"[bold red]error:[/] {video}: {exc}", highlight=False)
        if failures:
            raise typer.Exit(1)

    @app.command("pyramid")
    def pyramid_command(
        city: Annotated[Path, typer.Argument(help="A city directory with trajectories/.")],
        force: Annotated[bool, typer.Option(help="Rewrite levels that exist already.")] = False,
    ) -> None:
        """Store the frame pyramid of every trajectory (frames_<width>.mp4: half-width levels
        down to ~512 px), so small views decode small frames."""
        from city360.progress import console
        from city360.video_store.pyramid import build_city_pyramid

        written = build_city_pyramid(city, force=force)
        for path in written:
            console.print(f"wrote {path}", highlight=False)
        console.print(f"{len(written)} level files written in {city}", highlight=False)
