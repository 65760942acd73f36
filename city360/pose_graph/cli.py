"""``city360 build`` and ``city360 info``: make a city's pose graph and describe it."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from city360.errors import City360Error
from city360.progress import console

if TYPE_CHECKING:
    from city360.city import CityDir
    from city360.pose_graph.provenance import BuiltGraph
    from city360.types import Image

__all__ = ["accuracy_command", "build_command", "info_command", "register", "score_command"]


def build_command(
    city_dir: Annotated[Path, typer.Argument(help="City directory with trajectories/.")],
    osm: Annotated[
        Path | None,
        typer.Option(
            "--osm",
            help="OSM extract (.osm, .osm.bz2, .osm.pbf) of the same area; its crop to the "
            "city is kept in the city as map/extract.osm for maps, tasks and info.",
            show_default=False,
        ),
    ] = None,
    osm_network: Annotated[
        str,
        typer.Option(
            "--osm-network",
            help="OSM ways to match the walk against: auto (the network it is on: street, "
            "else street+service, else walk, else all), street, street+service, walk or all.",
        ),
    ] = "auto",
    osm_squares: Annotated[
        bool | None,
        typer.Option(
            "--osm-squares/--no-osm-squares",
            help="Whether the matched OSM ways include the outlines of walkable squares and "
            "the ways across them (default: as the network says; walk and all include them). "
            "--no-osm-squares for a twin synthesized without them.",
            show_default=False,
        ),
    ] = None,
    pose_only: Annotated[
        bool,
        typer.Option("--pose-only", help="Accept trajectories without frames.mp4."),
    ] = False,
) -> None:
    """Cut the city's trajectories into a branching pose graph and write graph.json."""
    from city360.pose_graph.build import build_city
    from city360.progress import make_progress

    if osm is None and osm_network != "auto":
        _refuse_network_without_osm(city_dir, f"--osm-network {osm_network}")
    if osm is None and osm_squares is not None:
        flag = "--osm-squares" if osm_squares else "--no-osm-squares"
        _refuse_network_without_osm(city_dir, flag)

    steps = 6 if osm is not None else 4
    with make_progress(transient=True) as progress:
        task = progress.add_task("building pose graph", total=steps)
        done = [-1]

        def on_step(name: str) -> None:
            done[0] += 1
            progress.update(task, description=name, completed=done[0])

        try:
            pose_graph = build_city(
                city_dir,
                osm_path=osm,
                osm_network=osm_network,
                osm_squares=osm_squares,
                require_frames=not pose_only,
                on_step=on_step,
            )
        except City360Error:
            _say_previous_graph_kept(city_dir)
            raise
        progress.update(task, completed=steps)
    from city360.city import CityDir

    stats = CityDir(city_dir).read_manifest().stats.get("pose_graph", {})
    console.print(f"wrote {CityDir(city_dir).graph_path}: {pose_graph}")
    _print_stats(stats)
    kept = CityDir(city_dir).osm_extract_path
    if osm is None and kept.is_file():  # a rebuild after adding a walk dropped OSM unsaid
        console.print(
            f"[yellow]note:[/] built without OSM; the city keeps the crop of an earlier "
            f"extract: `city360 build {city_dir} --osm {kept}` matches the walks against it",
            markup=True,
            highlight=False,
            soft_wrap=True,
        )


def _refuse_network_without_osm(city_dir: Path, flag: str) -> None:
    """``--osm-network`` and ``--osm-squares`` (``flag``, as typed) choose the OSM ways of
    ``--osm`` to match; alone they were ignored, and a city built with ``--osm`` was rebuilt
    without its extract, without a word."""
    from city360.city import CityDir
    from city360.errors import ConfigError

    kept = CityDir(city_dir).osm_extract_path
    where = (
        f"this city keeps its crop of the last one: --osm {kept}"
        if kept.is_file()
        else "the extract of the city's area (.osm, .osm.bz2 or .osm.pbf)"
    )
    msg = (
        f"{flag} chooses which ways of the OSM extract the walk is "
        f"matched against, so it needs --osm FILE: pass {where}"
    )
    raise ConfigError(msg)


def _say_previous_graph_kept(city_dir: Path) -> None:
    """After a failed build: say that the previous ``graph.json`` (if any) is still there and
    which build it is, so that ``score``, ``tasks`` or the viewer reading it surprise nobody.

    Printed, not raised as a warning: under ``-W error`` a warning would take the build
    error's place."""
    from city360.city import CityDir
    from city360.pose_graph.provenance import read_built_graph

    try:
        previous = read_built_graph(CityDir(city_dir))
    except City360Error:
        return  # the build error is the one to read; a broken old graph adds nothing
    if previous is not None:
        console.print(
            f"[yellow]note:[/] the build failed; the previous {previous.describe()} is left "
            "as it was",
            markup=True,
            highlight=False,
            soft_wrap=True,
        )


def _warn_if_stale(city: CityDir) -> tuple[BuiltGraph | None, list[str]]:
    """Read which build made ``city``'s graph.json and warn (:class:`StaleGraphWarning`) once
    per way the city's trajectories have moved on since; returns both."""
    from city360.pose_graph.provenance import StaleGraphWarning, read_built_graph, stale_reasons

    built = read_built_graph(city)
    stale = stale_reasons(city, built) if built is not None else []
    for reason in stale:
        warnings.warn(
            f"{city.graph_path} is out of date ({reason}); rebuild it first: "
            f"`city360 build {city.root}`",
            StaleGraphWarning,
            stacklevel=1,
        )
    return built, stale


def _print_stats(stats: dict[str, object]) -> None:
    from rich.table import Table

    table = Table(show_header=False, box=None)
    for key, value in stats.items():
        table.add_row(key.replace("_", " "), str(value))
    console.print(table)


def info_command(
    city_dir: Annotated[Path, typer.Argument(help="A built city directory.")],
    osm: Annotated[
        Path | None,
        typer.Option(
            "--osm",
            help="OSM extract for street coverage (default: the city's own, map/extract.osm, "
            "kept there by `build --osm`).",
            show_default=False,
        ),
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot",
            help="Also draw the graph over the map into this image file.",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
    pose_only: Annotated[
        bool, typer.Option("--pose-only", help="Accept trajectories without frames.mp4.")
    ] = False,
) -> None:
    """Nodes, edges, mean branching degree, connected components, length, OSM coverage, and
    the visual conditions the city was filmed under."""
    from city360.cities import resolve_city
    from city360.city import CityDir
    from city360.pose_graph.graph import load_graph
    from city360.pose_graph.stats import graph_stats
    from city360.pose_graph.tracks import load_tracks

    city_dir = resolve_city(str(city_dir))

    city = CityDir(city_dir)
    _warn_if_stale(city)  # first: a graph the city moved past may not load at all
    pose_graph = load_graph(city, require_frames=not pose_only)
    manifest, tracks = load_tracks(city, require_frames=not pose_only)
    osm_path = osm or city.osm_source()
    streets = None
    if osm_path is not None:
        from city360.pose_graph.osm_match import load_streets

        built = manifest.build.get("pose_graph", {})
        network = built.get("osm_network") or "street"
        squares = built.get("osm_squares")  # None: as the network says
        streets = load_streets(osm_path, manifest.projection, network=network, squares=squares)
    stats = graph_stats(pose_graph, osm=streets, tracks=tracks)
    stats["conditions"] = ", ".join(city.condition_names())  # `eval --condition` takes these
    if as_json:
        typer.echo(json.dumps(stats, indent=2))
    else:
        console.print(f"{city.graph_path}: {pose_graph}")
        _print_stats(stats)
    if plot is not None:
        from city360.pose_graph.plot import plot_graph

        plot_graph(
            pose_graph,
            plot,
            tracks=tracks,
            osm=streets,
            basemap=_basemap(city, osm_path),
            title=manifest.name,
        )
        console.print(f"wrote {plot}")


def _basemap(
    city: CityDir, osm_path: Path | None
) -> tuple[Image, tuple[float, float, float, float]] | None:
    """The city's base map and its extent in metres, or None (then plain streets are drawn)."""
    from city360.errors import City360Error
    from city360.maps.citymap import CityMap

    try:
        citymap = CityMap.open(city.root, osm=osm_path)
    except City360Error as exc:
        console.print(f"no base map ({exc}); drawing streets only")
        return None
    return citymap.image, citymap.transform.extent_m


def score_command(
    city_dir: Annotated[Path, typer.Argument(help="A synthetic city, built (graph.json).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    """Score the built pose graph against the city's ground truth (synth cities only):
    junction precision/recall within 8 m, street precision/recall/F1, turn accuracy. A twin
    filmed along a route or by wandering is scored against the streets it filmed, as the
    accuracy suite scores it."""
    from city360.city import CityDir
    from city360.pose_graph.graph import load_graph
    from city360.pose_graph.score import score, score_city
    from city360.pose_graph.scored_truth import truth_to_score

    city = CityDir(city_dir)
    built, stale = _warn_if_stale(city)  # first: a graph the city moved past may not load
    result = score_city(city_dir)  # checks the truth and the graph, naming what is missing
    truth, filmed_only = truth_to_score(city.root)
    if filmed_only:
        result = score(load_graph(city, require_frames=False), truth)
    figures = {
        "junction_precision": round(result.junction_precision, 4),
        "junction_recall": round(result.junction_recall, 4),
        "street_precision": round(result.edge_precision, 4),
        "street_recall": round(result.edge_recall, 4),
        "street_f1": round(result.edge_f1, 4),
        "turn_accuracy": round(result.turn_accuracy, 4),
        "turns_scored": result.turns_total,
    }
    graph_info = {
        "path": str(city.graph_path),
        "truth": f"the {len(truth.streets)} streets filmed" if filmed_only else "every street",
        "written_utc": built.written_utc.isoformat() if built else None,
        "osm": built.osm if built else None,
        "trajectories": len(built.trajectories) if built else None,
        "stale": stale,
    }
    if as_json:
        payload = {
            **figures,
            "graph": graph_info,
            "missed_junctions": result.missed_junctions,
            "extra_junctions": result.extra_junctions,
            "missing_streets": result.missing_streets,
            "extra_streets": result.extra_streets,
            "contracted_stubs": result.contracted_stubs,
            "read_crossings": result.read_crossings,
            "read_side_by_side": result.read_side_by_side,
            "read_short_ends": result.read_short_ends,
        }
        typer.echo(json.dumps(payload, indent=2))  # stdout, for pipes; warnings go to stderr
        return
    if built is not None:
        console.print(f"scored {built.describe()}", highlight=False, soft_wrap=True)
    if filmed_only:
        console.print(
            f"against the {len(truth.streets)} true streets the twin's videos filmed (it was "
            "filmed along a route or by wandering, not street by street)",
            highlight=False,
            soft_wrap=True,
        )
    for key, value in figures.items():
        console.print(f"{key:20s} {value}", highlight=False)
    for line in result.missed_junctions[:10]:
        console.print(f"junction missed: {line}", highlight=False, soft_wrap=True)
    for line in result.extra_junctions[:10]:
        console.print(f"junction extra:  {line}", highlight=False, soft_wrap=True)
    for line in result.missing_streets[:10]:
        console.print(f"missing: {line}", highlight=False)
    for line in result.extra_streets[:10]:
        console.print(f"extra:   {line}", highlight=False)
    for line in result.contracted_stubs[:10]:
        console.print(f"read as a true stub under 8 m: {line}", highlight=False, soft_wrap=True)
    for line in result.read_crossings[:10]:
        console.print(f"read as a crossing: {line}", highlight=False, soft_wrap=True)
    for line in result.read_side_by_side[:10]:
        console.print(f"read as one street: {line}", highlight=False, soft_wrap=True)
    for line in result.read_short_ends[:10]:
        console.print(f"read as a T: {line}", highlight=False, soft_wrap=True)


def accuracy_command(
    quick: Annotated[
        bool, typer.Option("--quick", help="One seed of two small areas (seconds).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON.")] = False,
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="Folder holding osm/ (default $CITY360_SHARED_DATA, else ../shared/data).",
            show_default=False,
        ),
    ] = None,
    keep: Annotated[
        Path | None,
        typer.Option("--keep", help="Keep the twins in this folder.", show_default=False),
    ] = None,
    area: Annotated[
        list[str] | None,
        typer.Option(
            "--area",
            help="Only the cases of this area (repeatable); also the areas of the unseen "
            "and fresh windows (accuracy.UNSEEN, accuracy.FRESH), which the default run "
            "leaves out.",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[
        list[int] | None,
        typer.Option("--seed", help="Only these seeds (repeatable).", show_default=False),
    ] = None,
    film: Annotated[
        bool,
        typer.Option(
            "--film",
            help="Film the twins along real walks with pictures and ingest them as a user "
            "would (slower); their rows then also report the ingested poses' RMSE.",
        ),
    ] = False,
    rows_file: Annotated[
        Path | None,
        typer.Option(
            "--rows",
            help="Print the tables of a saved `--json` output instead of running the suite.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Run the accuracy suite: pose-only synth twins of real OSM areas (several seeds each),
    ingested from their GPS, built with and without OSM, scored against the truth; prints a
    table and exits 1 when a row misses the targets (see city360/pose_graph/accuracy.py).
    With --film the twins along real walks are filmed and ingested from their videos."""
    from city360.pose_graph.accuracy import (
        FRESH,
        PATTERNS,
        QUICK,
        SUITE,
        UNSEEN,
        WALKS,
        AccuracyRow,
        format_table,
        read_rows,
        run_suite,
        select_cases,
        summary_table,
    )

    def show(row: AccuracyRow) -> None:
        if not as_json:
            console.print(
                f"{row.area} seed {row.seed} {row.pattern} ({row.capture}) "
                f"{'with' if row.osm else 'without'} OSM: "
                f"junctions P {row.junction_precision:.3f} R {row.junction_recall:.3f}, "
                f"street F1 {row.street_f1:.3f}, RMSE {row.position_rmse_m:.2f} m"
                + (
                    ""
                    if row.ingested_rmse_m is None
                    else f" (ingested frames {row.ingested_rmse_m:.2f} m, GPS-only there "
                    f"{row.gps_rmse_at_frames_m:.2f} m)"
                ),
                highlight=False,
            )

    if rows_file is not None:
        rows = read_rows(rows_file)
    else:
        pool = QUICK if quick else SUITE + WALKS + PATTERNS + ((*UNSEEN, *FRESH) if area else ())
        cases = select_cases(pool, areas=area, seeds=seed)
        rows = run_suite(cases, data_dir=data, work_dir=keep, on_row=show, film=film)
    if as_json:
        typer.echo(json.dumps([r.to_json() for r in rows], indent=2))
    else:
        typer.echo(format_table(rows))
        typer.echo("")
        typer.echo(summary_table(rows))
    missed = [r for r in rows if not r.meets_targets]
    if missed and not as_json:
        console.print(f"{len(missed)} of {len(rows)} rows miss the targets", highlight=False)
    if missed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("accuracy")(accuracy_command)
    app.command("build")(build_command)
    app.command("info")(info_command)
    app.command("score")(score_command)
