"""Where things stand: building footprints, shop signs and street objects, all seeded.

Everything here is plain geometry in metres (x east, y north); meshes are made elsewhere
(:mod:`city360.synth._meshes`). Each function draws only from the generator it is given, in a
fixed order, so a seed fixes the layout.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import shapely
from shapely.geometry import LineString, Polygon
from shapely.geometry.base import BaseGeometry
from shapely.geometry.polygon import orient
from shapely.prepared import prep
from shapely.strtree import STRtree

from city360.synth._streets import Street

__all__ = [
    "BuildingPlan",
    "ObjectPlan",
    "SignPlan",
    "junction_clearance",
    "place_objects",
    "place_signs",
    "plan_buildings",
]

logger = logging.getLogger(__name__)

FLOOR_HEIGHT_M = 3.2
SIGN_HEIGHT_M = 0.9
"""Signboard height; its width follows the text (board aspect ratio)."""
SIGN_BOTTOM_M = 2.7
"""Height of a signboard's lower edge above the sidewalk (above a shop door)."""
_MIN_FOOTPRINT_M2 = 12.0
_SIGN_GAP_M = 1.0
_RAY_REACH_M = 25.0
_SLIDES_M = tuple(sorted((float(d) for d in range(-20, 21)), key=abs))
"""How far (metres) a sign may slide along its street to find a facade that backs it whole."""
"""How far behind the sidewalk a facade may stand and still carry a sign."""


@dataclass(frozen=True, slots=True)
class BuildingPlan:
    """One building: a counter-clockwise footprint, height, wall tint and window style."""

    footprint: Polygon
    height_m: float
    tint: tuple[float, float, float]
    style: int
    procedural: bool


@dataclass(frozen=True, slots=True)
class SignPlan:
    """A signboard on the facade beside ``street`` at ``offset_m`` on ``side``."""

    poi_index: int
    street: Street
    offset_m: float
    side: int
    """+1 left of travel u -> v, -1 right."""
    lateral_m: float
    """Distance of the board's face from the centreline, metres."""
    width_m: float
    centre_xy: tuple[float, float]
    facade_normal_deg: float
    """Bearing the board faces, towards the street."""


@dataclass(frozen=True, slots=True)
class ObjectPlan:
    """A street object of ``kind`` at ``xy`` facing ``yaw_deg`` (bearing), on ``street``."""

    kind: str
    xy: tuple[float, float]
    yaw_deg: float
    street: Street


WALL_TINTS: tuple[tuple[float, float, float], ...] = (
    (0.86, 0.82, 0.74),
    (0.78, 0.74, 0.70),
    (0.70, 0.45, 0.36),
    (0.90, 0.88, 0.84),
    (0.62, 0.64, 0.66),
    (0.82, 0.72, 0.56),
    (0.55, 0.50, 0.47),
    (0.93, 0.90, 0.80),
    (0.68, 0.74, 0.78),
    (0.80, 0.62, 0.50),
)
"""Facade colours (linear-ish RGB 0-1) a building may get."""


def junction_clearance(streets: Sequence[Street]) -> dict[Hashable, float]:
    """Per node: how far from it along a street the crossing streets' sidewalks reach, metres."""
    reach: dict[Hashable, float] = defaultdict(float)
    degree: dict[Hashable, int] = defaultdict(int)
    for street in streets:
        for node in (street.u, street.v):
            reach[node] = max(reach[node], street.building_line_m)
            degree[node] += 1
    return {node: (reach[node] + 1.0 if degree[node] > 1 else 0.0) for node in reach}


def street_corridor(streets: Sequence[Street], *, extra_m: float = 0.0) -> BaseGeometry:
    """Union of every street's road + sidewalk band (+ ``extra_m``), metres."""
    bands = [s.line.buffer(s.building_line_m + extra_m, quad_segs=4) for s in streets]
    return shapely.union_all(bands)


def _height(raw_height: float | None, levels: int | None, rng: np.random.Generator) -> float:
    if raw_height is not None and 2.5 <= raw_height <= 400:
        return float(raw_height)
    if levels is not None and 0 < levels < 120:
        return float(levels) * FLOOR_HEIGHT_M + 0.6
    return float(rng.integers(2, 7)) * FLOOR_HEIGHT_M + 0.6


def plan_buildings(
    streets: Sequence[Street],
    buildings: Sequence[object],
    obstacles: Sequence[Polygon],
    rng: np.random.Generator,
) -> list[BuildingPlan]:
    """Real footprints clipped off the streets, then procedural lots filling the gaps.

    Real footprints that reach into a road or sidewalk are cut back to the building line (the
    camera walks the centreline, so a wall there would block it); pieces under 12 m² are
    dropped. Procedural lots line both sides of every street that has a sidewalk, set back
    0.3-1.5 m from it, wherever they meet no street, building, park or water.
    """
    corridor = street_corridor(streets)
    plans: list[BuildingPlan] = []
    for building in buildings:
        footprint = getattr(building, "footprint", None)
        if not isinstance(footprint, Polygon) or footprint.is_empty:
            continue
        clipped = footprint.buffer(0).difference(corridor)
        parts = [clipped] if isinstance(clipped, Polygon) else list(getattr(clipped, "geoms", []))
        height = _height(
            getattr(building, "height_m", None), getattr(building, "levels", None), rng
        )
        for part in parts:
            if isinstance(part, Polygon) and part.area >= _MIN_FOOTPRINT_M2:
                plans.append(_plan(part, height, rng, procedural=False))
    blockers: list[BaseGeometry] = [p.footprint for p in plans] + [
        o for o in obstacles if o.is_valid and not o.is_empty
    ]
    grid = _Grid(blockers)
    prepared_corridor = prep(corridor.buffer(0.2))
    clearance = junction_clearance(streets)
    for street in streets:
        if street.paved_only and street.length_m < 30:
            continue
        start = clearance.get(street.u, 0.0)
        end = street.length_m - clearance.get(street.v, 0.0)
        for side in (1, -1):
            offset = start + float(rng.uniform(0.0, 3.0))
            while offset < end - 4.0:
                frontage = float(rng.uniform(7.0, 16.0))
                depth = float(rng.uniform(9.0, 16.0))
                setback = float(rng.uniform(0.3, 1.5))
                centre = offset + frontage / 2
                lot = _lot(street, centre, side, frontage, depth, street.building_line_m + setback)
                offset += frontage + float(rng.choice([0.0, 0.0, 0.6, 1.5]))
                if lot is None or prepared_corridor.intersects(lot) or grid.hits(lot):
                    continue
                height = float(rng.integers(2, 8)) * FLOOR_HEIGHT_M + 0.6
                plan = _plan(lot, height, rng, procedural=True)
                plans.append(plan)
                grid.add(plan.footprint)
    return plans


def _plan(
    footprint: Polygon, height: float, rng: np.random.Generator, *, procedural: bool
) -> BuildingPlan:
    tint = WALL_TINTS[int(rng.integers(len(WALL_TINTS)))]
    return BuildingPlan(
        footprint=orient(Polygon(footprint.exterior), 1.0),
        height_m=height,
        tint=tint,
        style=int(rng.integers(4)),
        procedural=procedural,
    )


def _lot(
    street: Street, centre: float, side: int, frontage: float, depth: float, front_m: float
) -> Polygon | None:
    point, tangent = street.frame_at(centre)
    normal = side * np.array([-tangent[1], tangent[0]])
    a = point + normal * front_m - tangent * frontage / 2
    b = point + normal * front_m + tangent * frontage / 2
    lot = Polygon([a, b, b + normal * depth, a + normal * depth])
    return lot if lot.is_valid else None


class _Grid:
    """A 25 m hash grid of polygons for incremental overlap tests."""

    cell = 25.0

    def __init__(self, polygons: Sequence[BaseGeometry]) -> None:
        self.cells: dict[tuple[int, int], list[BaseGeometry]] = defaultdict(list)
        for polygon in polygons:
            self.add(polygon)

    def _keys(self, geom: BaseGeometry) -> list[tuple[int, int]]:
        x0, y0, x1, y1 = geom.bounds
        c = self.cell
        return [
            (i, j)
            for i in range(math.floor(x0 / c), math.floor(x1 / c) + 1)
            for j in range(math.floor(y0 / c), math.floor(y1 / c) + 1)
        ]

    def add(self, geom: BaseGeometry) -> None:
        for key in self._keys(geom):
            self.cells[key].append(geom)

    def hits(self, geom: BaseGeometry) -> bool:
        return any(
            other.intersects(geom) for key in self._keys(geom) for other in self.cells.get(key, ())
        )


def _free_offset(
    wanted: float, width: float, lo: float, hi: float, taken: list[tuple[float, float]]
) -> float | None:
    """The offset nearest ``wanted`` in [lo, hi] whose interval misses every taken one.

    Works on the free gaps between taken intervals, so a crowded street side costs one sort.
    """
    half = width / 2 + _SIGN_GAP_M / 2
    first, last = lo + half, hi - half  # admissible board centres
    if first > last:
        first = last = (lo + hi) / 2
    free: list[tuple[float, float]] = []
    cursor = first
    for start, end in sorted((a - half, b + half) for a, b in taken):
        if end <= cursor:
            continue
        if start > last:
            break
        if start >= cursor:
            free.append((cursor, start))
        cursor = end
    if cursor <= last:
        free.append((cursor, last))
    best: float | None = None
    for start, end in free:
        candidate = min(max(wanted, start), min(end, last))
        if best is None or abs(candidate - wanted) < abs(best - wanted):
            best = candidate
    return best


def place_signs(
    streets: Sequence[Street],
    poi_xy: Sequence[tuple[float, float]],
    widths_m: Sequence[float],
    buildings: list[BuildingPlan],
    rng: np.random.Generator,
) -> list[SignPlan]:
    """Snap each POI to its nearest street and hang its sign on the facade on that side.

    The board is centred where the POI projects onto the street (moved along the street as
    little as needed to clear junction sidewalks and other signs on the same side, and up to
    20 m to find one flat facade behind the board's whole width), parallel to the street and
    facing it, just in front of the nearest facade behind the sidewalk (probed with rays at
    the board's ends and centre). Where no facade stands within reach, a small
    kiosk building is added behind the sidewalk to carry it. POIs that cannot be placed (a
    street side already full) are left out and logged.
    """
    tree = STRtree([s.line for s in streets])
    clearance = junction_clearance(streets)
    taken: dict[tuple[int, int], list[tuple[float, float]]] = defaultdict(list)
    plans: list[SignPlan] = []
    footprints = STRtree([b.footprint for b in buildings]) if buildings else None
    corridor = prep(street_corridor(streets, extra_m=-0.3))
    for index, ((x, y), width) in enumerate(zip(poi_xy, widths_m, strict=True)):
        street = streets[int(tree.query_nearest(shapely.Point(x, y))[0])]
        offset, lateral = street.locate(x, y)
        side = 1 if lateral > 0 else -1
        lo = clearance.get(street.u, 0.0)
        hi = street.length_m - clearance.get(street.v, 0.0)
        reach = street.building_line_m + _RAY_REACH_M
        slot: float | None = None
        wall: float | None = None
        fallback: tuple[float, float] | None = None
        tried: set[float] = set()
        for delta in _SLIDES_M:
            candidate = _free_offset(offset + delta, width, lo, hi, taken[(street.index, side)])
            if candidate is None or round(candidate, 2) in tried:
                continue
            tried.add(round(candidate, 2))
            middle = _ray_hit(street, candidate, side, reach, buildings, footprints)
            if middle is None:
                continue
            ends = [
                _ray_hit(street, candidate + along, side, reach, buildings, footprints)
                for along in (-width / 2 - 0.2, width / 2 + 0.2)
            ]
            found = [middle, *(h for h in ends if h is not None)]
            if len(found) == 3 and max(found) - min(found) < 1.5:
                slot, wall = candidate, min(found)  # one flat facade behind the whole board
                break
            if found and fallback is None:
                fallback = (candidate, min(found))
        if slot is None and fallback is not None:
            slot, wall = fallback
        if slot is None:
            slot = _free_offset(offset, width, lo, hi, taken[(street.index, side)])
            if slot is None:
                logger.debug("no room for sign %d on street %d side %d", index, street.index, side)
                continue
        if wall is not None:
            wall = max(wall - 0.12, street.road_half_m + 0.5)
        else:
            front = street.building_line_m + 0.5
            kiosk = _lot(street, slot, side, width + 0.5, 6.0, front)
            if (
                kiosk is None
                or corridor.intersects(kiosk)
                or _overlaps(kiosk, buildings, footprints)
            ):
                logger.debug("no facade for sign %d on street %d", index, street.index)
                continue
            buildings.append(_plan(kiosk, 2 * FLOOR_HEIGHT_M + 0.6, rng, procedural=True))
            wall = front - 0.12
        taken[(street.index, side)].append((slot - width / 2, slot + width / 2))
        point, tangent = street.frame_at(slot)
        normal = side * np.array([-tangent[1], tangent[0]])
        centre = point + normal * wall
        facing = -normal
        plans.append(
            SignPlan(
                poi_index=index,
                street=street,
                offset_m=slot,
                side=side,
                lateral_m=wall,
                width_m=width,
                centre_xy=(float(centre[0]), float(centre[1])),
                facade_normal_deg=math.degrees(math.atan2(facing[0], facing[1])) % 360.0,
            )
        )
    return plans


def _ray_hit(
    street: Street,
    offset: float,
    side: int,
    reach: float,
    buildings: list[BuildingPlan],
    tree: STRtree | None,
) -> float | None:
    """Distance from the centreline to the first building wall across the street side.

    ``tree`` indexes the first buildings; any appended after it was built (kiosks) are
    tested one by one.
    """
    indexed = 0 if tree is None else len(tree.geometries)
    point, tangent = street.frame_at(offset)
    normal = side * np.array([-tangent[1], tangent[0]])
    start = point + normal * (street.road_half_m + 0.3)
    ray = LineString([start, point + normal * reach])
    best: float | None = None
    candidates = [] if tree is None else [int(i) for i in tree.query(ray)]
    for i in [*candidates, *range(indexed, len(buildings))]:
        hit = buildings[i].footprint.exterior.intersection(ray)
        if hit.is_empty:
            continue
        for coords in _points(hit):
            distance = float(np.dot(np.asarray(coords) - point, normal))
            best = distance if best is None else min(best, distance)
    return best


def _overlaps(polygon: Polygon, buildings: list[BuildingPlan], tree: STRtree | None) -> bool:
    """True when ``polygon`` shares area with any building (indexed ones through ``tree``);
    touching walls are fine, as in a row of shops."""
    indexed = 0 if tree is None else len(tree.geometries)
    near = [] if tree is None else [int(i) for i in tree.query(polygon)]
    return any(
        buildings[i].footprint.intersection(polygon).area > 0.01
        for i in [*near, *range(indexed, len(buildings))]
    )


def _points(geom: BaseGeometry) -> list[tuple[float, float]]:
    if hasattr(geom, "geoms"):
        return [c for g in geom.geoms for c in _points(g)]
    return [(float(x), float(y)) for x, y in geom.coords]


_OBJECT_WEIGHTS: dict[str, float] = {
    "tree": 0.34,
    "bench": 0.12,
    "bin": 0.12,
    "bollard": 0.12,
    "vending_machine": 0.12,
    "": 0.18,  # nothing at this spot
}


def place_objects(
    streets: Sequence[Street],
    signs: Sequence[SignPlan],
    rng: np.random.Generator,
    *,
    vending_weight: float = 0.12,
) -> list[ObjectPlan]:
    """Traffic lights at junction crossings, then trees, benches, bins, bollards and vending
    machines along sidewalks every 6-14 m, clear of crossings and of the space in front of
    signboards (so a tree never hides a sign from the street)."""
    clearance = junction_clearance(streets)
    degree: dict[Hashable, int] = defaultdict(int)
    for street in streets:
        degree[street.u] += 1
        degree[street.v] += 1
    objects: list[ObjectPlan] = []
    blocked: dict[tuple[int, int], list[tuple[float, float]]] = defaultdict(list)
    for sign in signs:
        half = sign.width_m / 2 + 2.5
        blocked[(sign.street.index, sign.side)].append((sign.offset_m - half, sign.offset_m + half))
    weights = dict(_OBJECT_WEIGHTS, vending_machine=vending_weight)
    kinds = list(weights)
    probabilities = np.array([weights[k] for k in kinds])
    probabilities /= probabilities.sum()
    for street in streets:
        curb = street.road_half_m + 0.5
        # traffic lights: where the street meets a junction, on the right of the approach
        if not street.paved_only and street.length_m > 12:
            for node, side in ((street.u, 1), (street.v, -1)):
                if degree[node] < 3:
                    continue
                reach = min(max(clearance.get(node, 0.0) - 0.5, 2.0), street.length_m / 2)
                at = reach if node == street.u else street.length_m - reach
                xy = street.offset_point(at, side * curb)
                _, _, heading = street.point_at(at)
                # the signal faces the traffic arriving at the junction
                facing = heading if node == street.u else (heading + 180.0) % 360.0
                objects.append(ObjectPlan("traffic_light", _xy(xy), facing, street))
        lo = clearance.get(street.u, 0.0) + 1.0
        hi = street.length_m - clearance.get(street.v, 0.0) - 1.0
        for side in (1, -1):
            offset = lo + float(rng.uniform(1.0, 6.0))
            while offset < hi:
                kind = kinds[int(rng.choice(len(kinds), p=probabilities))]
                spot = offset
                offset += float(rng.uniform(6.0, 14.0))
                if not kind or any(a <= spot <= b for a, b in blocked[(street.index, side)]):
                    continue
                if kind == "vending_machine" and street.sidewalk_m >= 1.5:
                    lateral = street.building_line_m - 0.45
                elif kind == "bench" and street.sidewalk_m >= 2.0:
                    lateral = street.road_half_m + street.sidewalk_m * 0.55
                else:
                    lateral = curb if street.sidewalk_m > 0 else street.road_half_m + 0.8
                xy = street.offset_point(spot, side * lateral)
                _, _, heading = street.point_at(spot)
                facing = (heading - 90.0 * side) % 360.0  # towards the street
                objects.append(ObjectPlan(kind, _xy(xy), facing, street))
    return objects


def _xy(point: np.ndarray) -> tuple[float, float]:
    return float(point[0]), float(point[1])
