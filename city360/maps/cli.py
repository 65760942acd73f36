"""``city360 map``: draw a city's map for people (plain, gridded, route or landmark)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from city360.progress import console

if TYPE_CHECKING:
    from city360.maps.citymap import CityMap

__all__ = ["map_command", "parse_point", "register"]


def _check_on_map(citymap: CityMap, x_m: float, y_m: float, text: str, *, what: str) -> None:
    """Refuse a point off the base map (city metres): there is nothing to draw around it, and
    a route to it asked for a raster thousands of metres per pixel."""
    import math

    from city360.errors import ConfigError

    x_min, y_min, x_max, y_max = citymap.transform.extent_m
    off_m = math.hypot(max(x_min - x_m, 0.0, x_m - x_max), max(y_min - y_m, 0.0, y_m - y_max))
    if off_m == 0.0:
        return
    lat, lon = citymap.projection.to_latlon([x_min, x_max], [y_min, y_max])
    msg = (
        f"{what} {text!r} lies outside the city's map, {off_m / 1000:.1f} km beyond its edge "
        f"(the map covers {float(lat[0]):.5f},{float(lon[0]):.5f},{float(lat[1]):.5f},"
        f"{float(lon[1]):.5f} S,W,N,E); give a place in the city or a graph node id"
    )
    raise ConfigError(msg)


def parse_point(citymap: CityMap, text: str, *, what: str) -> tuple[float, float]:
    """``"lat,lon"`` (degrees) or a ``graph.json`` node id -> city metres ``(x_m, y_m)``."""
    from city360.errors import ConfigError
    from city360.streets import StreetGraph

    if "," in text:
        try:
            lat, lon = (float(v) for v in text.split(","))
        except ValueError:
            msg = f"{what} {text!r} must be a graph node id or 'lat,lon' in degrees"
            raise ConfigError(msg) from None
        if not (-90 <= lat <= 90 and -180 <= lon <= 180):
            msg = f"{what} {text!r}: lat must be in [-90, 90] and lon in [-180, 180]"
            raise ConfigError(msg)
        x_m, y_m = citymap.projection.to_xy(lat, lon)
        _check_on_map(citymap, float(x_m), float(y_m), text, what=what)
        return float(x_m), float(y_m)
    try:
        node_id = int(text)
    except ValueError:
        msg = f"{what} {text!r} must be a graph node id or 'lat,lon' in degrees"
        raise ConfigError(msg) from None
    if citymap.root is None or not (citymap.root / "graph.json").is_file():
        msg = f"{what} {text!r} is a node id but the city has no graph.json; give 'lat,lon'"
        raise ConfigError(msg)
    nodes = StreetGraph.open(citymap.root).node_xy
    if node_id not in nodes:
        known = sorted(nodes)
        msg = (
            f"{what}: node {node_id} is not in {citymap.root / 'graph.json'} "
            f"(ids {known[0]}..{known[-1]}, {len(known)} nodes); give a node id or 'lat,lon'"
        )
        raise ConfigError(msg)
    return nodes[node_id]


def map_command(
    city_dir: Annotated[Path, typer.Argument(help="A city directory (city.json).")],
    out: Annotated[Path, typer.Option("--out", help="Image to write (.png or .jpg).")],
    grid: Annotated[
        int | None,
        typer.Option(
            "--grid", help="Draw an N x N localization grid (labels x:i y:j).", show_default=False
        ),
    ] = None,
    route: Annotated[
        tuple[str, str] | None,
        typer.Option(
            "--route",
            help="Start and goal (node ids or lat,lon): BLUE and RED markers.",
            show_default=False,
        ),
    ] = None,
    landmark: Annotated[
        str | None,
        typer.Option("--landmark", help="Mark a place (node id or lat,lon).", show_default=False),
    ] = None,
    label: Annotated[
        str | None,
        typer.Option("--label", help="Text beside the landmark marker.", show_default=False),
    ] = None,
    location: Annotated[
        str | None,
        typer.Option(
            "--location",
            help="Draw the agent's location map at this place (node id "
            "or lat,lon), with --heading.",
            show_default=False,
        ),
    ] = None,
    heading: Annotated[
        float, typer.Option("--heading", help="Heading for --location, degrees from north.")
    ] = 0.0,
    osm: Annotated[
        Path | None,
        typer.Option(
            "--osm",
            help="OSM extract to draw (default: map/extract.osm, else the city's own streets).",
            show_default=False,
        ),
    ] = None,
    network: Annotated[
        str | None,
        typer.Option(
            "--network",
            help="OSM streets to draw: street, street+service, walk, all (default: the city's "
            "recorded choice, else what it was built on, at least walk). Recorded in city.json.",
            show_default=False,
        ),
    ] = None,
    size: Annotated[int, typer.Option("--size", help="Longest side of the image, pixels.")] = 800,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Redraw the cached base map.")] = False,
) -> None:
    """Draw the map of CITY_DIR; the base map is cached in CITY_DIR/map/."""
    from PIL import Image as PilImage

    from city360._atomic import atomic_write_bytes
    from city360.cities import resolve_city
    from city360.city import CityDir
    from city360.errors import ConfigError
    from city360.maps.citymap import CityMap, _png, map_network, record_map_network
    from city360.maps.grid import DEFAULT_GRID_N
    from city360.progress import make_progress

    city_dir = resolve_city(str(city_dir))

    suffix = out.suffix.lower()
    if suffix not in {".png", ".jpg", ".jpeg"}:
        msg = f"--out {out} must end in .png or .jpg"
        raise ConfigError(msg)
    if sum(x is not None for x in (grid, route, landmark, location)) > 1:
        msg = "choose one of --grid, --route, --landmark and --location per image"
        raise ConfigError(msg)
    if network is not None:
        map_network(city_dir, network)  # an unknown name is refused first
        if osm is None and CityDir(city_dir).osm_source() is None:
            msg = (
                f"--network {network} chooses which OSM streets the map draws, but "
                f"{city_dir} has no OSM extract (no map/extract.osm, no OSM source in "
                "city.json), so its map draws the city's own walks: pass --osm FILE "
                "(.osm, .osm.bz2 or .osm.pbf of the city's area), or leave out --network"
            )
            raise ConfigError(msg)
        record_map_network(city_dir, network)
    with make_progress(transient=True) as progress:
        task = progress.add_task("drawing the base map", total=None)
        citymap = CityMap.open(
            city_dir, osm=osm, rebuild=rebuild, grid_n=grid or DEFAULT_GRID_N, network=network
        )
        progress.update(task, total=1, completed=1)
    if route is not None:
        start = parse_point(citymap, route[0], what="--route start")
        goal = parse_point(citymap, route[1], what="--route goal")
        image = citymap.route_map(start, goal, size_px=size)
    elif landmark is not None:
        x_m, y_m = parse_point(citymap, landmark, what="--landmark")
        image = citymap.landmark_map(x_m, y_m, size_px=size, label=label)
    elif location is not None:
        x_m, y_m = parse_point(citymap, location, what="--location")
        image = citymap.location_map(x_m, y_m, heading, size_px=size)
    elif grid is not None:
        image = citymap.grid_map(n=grid, size_px=size)
    else:
        image = citymap.area_map(size_px=size)
    if suffix == ".png":
        atomic_write_bytes(out, _png(image))
    else:
        import io

        buffer = io.BytesIO()
        PilImage.fromarray(image).save(buffer, format="JPEG", quality=92)
        atomic_write_bytes(out, buffer.getvalue())
    console.print(
        f"wrote {out} ({image.shape[1]}x{image.shape[0]} px); base map {citymap.root}/map/ "
        f"({citymap.meta.layers['source']} layers"
        + (
            f", {citymap.meta.layers['network']} network"
            if "network" in citymap.meta.layers
            else ""
        )
        + f", {citymap.transform.metres_per_px} m/px)"
    )


def register(app: typer.Typer) -> None:
    app.command("map")(map_command)
