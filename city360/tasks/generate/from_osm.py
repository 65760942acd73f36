"""Tasks for a real city, from its pose graph and the named places of its OSM extract.

The truth a real city can carry without anyone annotating it:

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

from collections.abc import Sequence
from typing import Any

from city360.errors import TaskError
from city360.geo import bearing_deg
from city360.synth.groundtruth import PoiTruth, ViewPose
from city360.tasks.generate.common import GenerationContext, GenerationReport
from city360.tasks.generate.from_truth import (
    PlacedPoi,
    landmark_tasks,
    localization_tasks,
    map_navigation_tasks,
    vln_tasks,
)
from city360.tasks.generate.vln_text import side_of
from city360.tasks.schema import Family, TaskBase

__all__ = ["OSM_FAMILIES", "POI_REACH_M", "generate_from_osm", "place_osm_pois"]

POI_REACH_M = 25.0
"""A POI further than this from every filmed segment is not a goal (its sign is not seen)."""

OSM_FAMILIES = (Family.LOCALIZATION, Family.LANDMARK_TEXT, Family.MAP_NAVIGATION, Family.VLN)

_NOT_CARRIED = {
    Family.LANDMARK_IMAGE: "needs a confirmed view of the place from the video",
    Family.OBJECT_COUNT: "OSM does not map every object along a street",
    Family.RELATIONAL: "OSM point positions do not give the order of facades",
}


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


def generate_from_osm(
    ctx: GenerationContext,
    pois: Sequence[Any],
    *,
    per_family: int = 25,
    families: Sequence[Family] | None = None,
    report: GenerationReport | None = None,
) -> list[TaskBase]:
    """Every family whose truth a real city's graph and OSM POIs carry (see module docstring)."""
    report = report if report is not None else GenerationReport()
    placed = place_osm_pois(ctx, pois)
    signs = [(p.poi.x_m, p.poi.y_m) for p in placed]
    junctions = [
        (ctx.graph.node_xy[node], node)
        for node in sorted(ctx.graph.nodes)
        if len(ctx.graph.out_segments(node)) >= 3
    ]
    tasks: list[TaskBase] = []
    for family in families or list(Family):
        if family in _NOT_CARRIED:
            report.notes.append(
                f"{family.value}: not generated for a real city; {_NOT_CARRIED[family]}"
            )
            report.made[family.value] = 0
            continue
        if family is Family.LOCALIZATION:
            made = localization_tasks(ctx, signs, per_family, report, source="osm")
        elif family is Family.LANDMARK_TEXT:
            made = landmark_tasks(ctx, placed, per_family, report, family=family)
        elif family is Family.MAP_NAVIGATION:
            made = map_navigation_tasks(ctx, junctions, per_family, report)
        else:
            made = vln_tasks(ctx, placed, per_family, report)
        report.made[family.value] = len(made)
        tasks.extend(made)
    return tasks
