"""Tasks for a real city, from its pose graph and the named places of its OSM extract.

The truth a real city can carry without anyone annotating it (each family says so in its
module: ``FamilySpec.from_osm``, or ``osm_note`` for why not):

- Localization: the grid cell of a start on the graph is exact.
- Map navigation: routes between junctions of the graph are exact.
- Landmark search (text) and VLN: an OSM POI with a unique name within ``POI_REACH_M`` of a
  filmed street gives a goal: the point of the graph nearest to it, facing the way the
  segment runs, its street side from the geometry.

Not generated, and said so in the report: Landmark search (image) needs a view of the place
taken from the video, which the simulator's renderer can produce once a person has confirmed the
sign is visible; Object count needs every object on a stretch, which OSM does not map (a
street's trees and benches are rarely all there); Relational reasoning needs the order of
facades along a street, which OSM point positions do not give reliably.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from city360.errors import TaskError
from city360.geo import bearing_deg
from city360.synth.groundtruth import PoiTruth, ViewPose
from city360.tasks.generate.common import GenerationContext, GenerationReport
from city360.tasks.generate.sources import GenerationSource, PlacedPoi, generate_tasks
from city360.tasks.generate.vln_text import side_of
from city360.tasks.schema import TaskBase

__all__ = ["POI_REACH_M", "generate_from_osm", "osm_families", "osm_source", "place_osm_pois"]

POI_REACH_M = 25.0
"""A POI further than this from every filmed segment is not a goal (its sign is not seen)."""


def osm_families() -> list[str]:
    """Names of the registered families a real city can carry (they have ``from_osm``)."""
    from city360.tasks.families import all_families

    return [spec.name for spec in all_families() if spec.from_osm is not None]


def place_osm_pois(ctx: GenerationContext, pois: Sequence[Any]) -> list[PlacedPoi]:
    """OSM POIs (``city360.maps.osm.Poi``) with a unique name near a filmed segment, each with
    a view pose at the nearest point of the graph."""
    names: dict[str, int] = {}
    for poi in pois:
        key = str(poi.name).strip().casefold()
        names[key] = names.get(key, 0) + 1
    placed = []
    for poi in pois:
        name = str(poi.name).strip()
        if not name or names[name.casefold()] != 1:
            continue
        try:
            seg_id, offset, dist = ctx.graph.locate(float(poi.x_m), float(poi.y_m))
        except TaskError:
            continue
        if dist > POI_REACH_M:
            continue
        seg = ctx.graph.segment(seg_id)
        vx, vy = seg.position(offset)
        heading = seg.heading(offset)
        look = bearing_deg(poi.x_m - vx, poi.y_m - vy) if dist > 0.1 else heading
        lat, lon = ctx.latlon(vx, vy)
        truth = PoiTruth(
            id=f"osm-{poi.element}-{poi.osm_id}",
            name=name,
            kind=str(poi.kind),
            invented_name=False,
            x_m=float(poi.x_m),
            y_m=float(poi.y_m),
            lat=float(poi.lat),
            lon=float(poi.lon),
            facade_normal_deg=(look + 180.0) % 360.0,
            street_side=side_of(heading, poi.x_m - vx, poi.y_m - vy),
            view=ViewPose(
                x_m=vx,
                y_m=vy,
                lat=lat,
                lon=lon,
                heading_deg=heading,
                look_bearing_deg=look,
                edge=(seg.u, seg.v),
                offset_m=offset,
            ),
        )
        placed.append(PlacedPoi(truth, seg_id, offset))
    return placed


def osm_source(
    ctx: GenerationContext, pois: Sequence[Any], *, kind: str = "osm"
) -> GenerationSource:
    """What the generators read from a real city: its graph's junctions and its OSM places.

    ``kind`` names where the places came from: ``"osm"`` (the city's extract) or ``"graph"``
    (a city built without OSM: no places, only its own graph). Tasks carry it as
    ``meta.source``.
    """
    placed = place_osm_pois(ctx, pois)
    junctions = [
        (ctx.graph.node_xy[node], node)
        for node in sorted(ctx.graph.nodes)
        if len(ctx.graph.out_segments(node)) >= 3
    ]
    return GenerationSource(
        kind=kind,
        placed=placed,
        signs=[(p.poi.x_m, p.poi.y_m) for p in placed],
        junctions=junctions,
    )


def generate_from_osm(
    ctx: GenerationContext,
    pois: Sequence[Any],
    *,
    per_family: int = 25,
    families: Sequence[str] | None = None,
    report: GenerationReport | None = None,
    on_family: Callable[[str], None] | None = None,
    kind: str = "osm",
) -> list[TaskBase]:
    """Every family whose truth a real city's graph and OSM POIs carry (``FamilySpec.from_osm``;
    the others are named in the report's notes with the reason). ``kind`` as in
    :func:`osm_source`."""
    return generate_tasks(
        ctx,
        osm_source(ctx, pois, kind=kind),
        per_family=per_family,
        families=families,
        report=report,
        on_family=on_family,
    )
