"""``city360 cities``: the packaged cities, whether each is built, its size and where it lives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

__all__ = ["cities_status", "register"]


def _size_bytes(root: Path) -> int:
    if not root.is_dir():
        return 0
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def _graph_stats(root: Path) -> dict[str, Any] | None:
    """What the build made, from ``city.json`` ``stats.pose_graph``: nodes, junctions,
    segments and metres of street; None when the city is not built or has no such record."""
    try:
        manifest = json.loads((root / "city.json").read_text(encoding="utf-8"))
        graph = manifest["stats"]["pose_graph"]
        return {
            "nodes": int(graph["nodes"]),
            "junctions": int(graph["junctions"]),
            "segments": int(graph["segments"]),
            "length_m": float(graph["total_length_m"]),
        }
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _graph_line(graph: dict[str, Any]) -> str:
    return (
        f"built: {graph['nodes']} nodes ({graph['junctions']} junctions), "
        f"{graph['segments']} segments, {graph['length_m'] / 1000:.1f} km of streets"
    )


def cities_status() -> list[dict[str, Any]]:
    """One row per packaged city: name, description, built (graph and standard suite present),
    what the build made (``graph``: nodes, junctions, segments, length_m; None when not built),
    size on disk (bytes), its cache directory and older cached builds (other versions/inputs)."""
    from city360.cities import SUITE_NAME, all_cities, city_cache_dir

    rows = []
    for city in all_cities():
        root = city_cache_dir(city)
        built = (root / "graph.json").is_file() and (
            root / "tasks" / SUITE_NAME / "suite.json"
        ).is_file()
        stale = sorted(
            str(p) for p in root.parent.glob(f"{city.name}-*") if p.is_dir() and p != root
        )
        rows.append(
            {
                "name": city.name,
                "description": city.description,
                "built": built,
                "graph": _graph_stats(root) if built else None,
                "size_bytes": _size_bytes(root),
                "path": str(root),
                "stale_builds": stale,
            }
        )
    return rows


def cities_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False,
) -> None:
    """List the packaged cities: built and cached or not, size on disk, where each lives.

    Any command taking CITY_DIR also takes one of these names and builds it on first use.
    """
    from rich.table import Table

    from city360.progress import console

    rows = cities_status()
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table(title="packaged cities", expand=False)
    table.add_column("name", no_wrap=True)
    table.add_column("built", no_wrap=True)
    table.add_column("size", justify="right", no_wrap=True)
    table.add_column("where / what", overflow="fold")
    for row in rows:
        what = row["description"]
        if row["graph"] is not None:
            what = f"{what}\n{_graph_line(row['graph'])}"
        table.add_row(
            row["name"],
            "yes" if row["built"] else "no",
            _human(row["size_bytes"]) if row["size_bytes"] else "-",
            f"{row['path']}\n[dim]{what}[/]",
        )
    console.print(table)
    stale = [p for row in rows for p in row["stale_builds"]]
    if stale:
        console.print(f"{len(stale)} older cached build(s) can be deleted: {', '.join(stale)}")


def register(app: typer.Typer) -> None:
    app.command("cities")(cities_command)
