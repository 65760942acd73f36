"""The procedural 3D twin of an OSM extract: geometry for the renderer plus its ground truth.

API (used by ``film``/``pipeline``; changes are listed here first):

- :func:`build_scene` ``(*, streets, buildings, pois, projection, seed, parks=(), water=(),
  min_pois_per_km=10.0) -> Scene`` — deterministic for a seed. Additions to the agreed
  signature (all optional): ``parks``/``water`` (``OsmData.parks``/``.water``, drawn on the
  ground and kept free of procedural buildings) and ``min_pois_per_km``.
- :class:`Scene`: ``poi_truths()``, ``object_truths()`` as agreed; also ``junction_truths()``
  and ``street_truths()`` (the street graph as :mod:`city360.synth.groundtruth` models, edges
  named ``(u, v)`` with ``u <= v``), ``dynamic_boxes(t_s)`` (moving pedestrians and vehicles
  at time ``t_s``), and the vertex arrays and textures that
  :class:`city360.synth.render.EquirectRenderer` draws. A scene pickles (for worker
  processes).
- Street node ids must be integers (they are the junction ids); a :class:`ConfigError` says
  so otherwise.

Frames: metres in the city CRS, x east, y north, z up from the street surface; bearings in
degrees clockwise from north. Street edges are named ``(u, v)`` with ``u <= v`` (the street
graph's node ids, which are the junction ids); offsets run from ``u``; "left"/"right" are as
seen walking from ``u`` to ``v``.

What the scene contains: real building footprints (cut back where they reach into a street)
and procedural ones filling the gaps along every street; roads sized by ``highway`` class with
sidewalks, zebra crossings at junctions of three or more streets and centre lines on wide
roads; a signboard with its name on the facade beside every POI, on the side of its nearest
street (names invented, seeded, where OSM has none or too few POIs); trees, benches, bins,
bollards, vending machines and traffic lights; pedestrians walking the sidewalks and vehicles
driving on the right, both pure functions of time; a sky with a sun.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import networkx as nx
import numpy as np
import numpy.typing as npt
from shapely.geometry import Polygon

from city360.errors import ConfigError
from city360.geo import LocalProjection, bearing_deg
from city360.synth import _layout, _meshes
from city360.synth._names import SHOP_KINDS, invent_name
from city360.synth._streets import Street, street_list
from city360.synth.groundtruth import Junction, ObjectTruth, PoiTruth, StreetEdge, ViewPose
from city360.synth.signs import SIGN_STYLES, SignAtlas, build_sign_atlas, has_cjk

__all__ = ["OBJECT_KINDS", "BuildingLike", "PoiLike", "Scene", "build_scene"]

F32 = npt.NDArray[np.float32]

OBJECT_KINDS: tuple[str, ...] = _meshes.OBJECT_KINDS
"""Kinds of countable street objects a scene may contain."""

MAX_SIGN_WIDTH_M = 7.2
_STYLE_WEIGHTS = np.array([0.2, 0.14, 0.14, 0.14, 0.1, 0.1, 0.1, 0.08])


class BuildingLike(Protocol):
    """What :func:`build_scene` reads from a building (``city360.maps.osm.Building``)."""

    @property
    def footprint(self) -> Polygon: ...
    @property
    def height_m(self) -> float | None: ...
    @property
    def levels(self) -> int | None: ...


class PoiLike(Protocol):
    """What :func:`build_scene` reads from a POI (``city360.maps.osm.Poi``)."""

    @property
    def osm_id(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def x_m(self) -> float: ...
    @property
    def y_m(self) -> float: ...


@dataclass(frozen=True, slots=True)
class _Shop:
    id: str
    name: str
    kind: str
    invented: bool
    x_m: float
    y_m: float


@dataclass(frozen=True, eq=False)
class Scene:
    """Everything the renderer draws and everything true about it (see module docstring)."""

    projection: LocalProjection
    seed: int
    streets: nx.MultiGraph = field(repr=False)
    extent: tuple[float, float, float, float]
    """(min x, min y, max x, max y) of the street network, metres."""
    ground: F32 = field(repr=False)
    ground_layers: npt.NDArray[np.uint8] = field(repr=False)
    """Paint layer of each ground triangle; layers are drawn in increasing order."""
    walls: F32 = field(repr=False)
    signs: F32 = field(repr=False)
    boxes: F32 = field(repr=False)
    sign_atlas: SignAtlas = field(repr=False)
    window_tiles: npt.NDArray[np.uint8] = field(repr=False)
    sun_direction: tuple[float, float, float]
    """Unit vector towards the sun (x east, y north, z up)."""
    _pois: tuple[PoiTruth, ...] = field(repr=False)
    _objects: tuple[ObjectTruth, ...] = field(repr=False)
    _movers: _Movers = field(repr=False)
    building_count: int = 0

    def poi_truths(self) -> list[PoiTruth]:
        """Every POI that got a signboard, with where to stand to read it."""
        return list(self._pois)

    def object_truths(self) -> list[ObjectTruth]:
        """Every countable street object (static; moving people and cars are not counted)."""
        return list(self._objects)

    def junction_truths(self) -> list[Junction]:
        """Every street-graph node (id = the graph's node id)."""
        out = []
        for node in sorted(self.streets.nodes, key=_node_order):
            data = self.streets.nodes[node]
            lat, lon = self.projection.to_latlon(data["x_m"], data["y_m"])
            out.append(
                Junction(
                    id=int(node),
                    x_m=float(data["x_m"]),
                    y_m=float(data["y_m"]),
                    lat=float(lat),
                    lon=float(lon),
                    degree=int(self.streets.degree(node)),
                )
            )
        return out

    def street_truths(self) -> list[StreetEdge]:
        """Every street edge (u <= v) with its centreline from u to v."""
        return [
            StreetEdge(
                u=int(s.u),
                v=int(s.v),
                length_m=s.length_m,
                name=s.name,
                polyline_xy=[(float(x), float(y)) for x, y in s.polyline],
            )
            for s in street_list(self.streets)
        ]

    @property
    def dynamic_box_count(self) -> int:
        return self._movers.box_count

    def dynamic_boxes(self, t_s: float) -> F32:
        """Box instances (``_meshes`` box format) of pedestrians and vehicles at ``t_s`` s."""
        return self._movers.boxes_at(t_s)

    def __repr__(self) -> str:
        return (
            f"Scene(seed={self.seed}, streets={self.streets.number_of_edges()}, "
            f"buildings={self.building_count}, pois={len(self._pois)}, "
            f"objects={len(self._objects)}, movers={self._movers.count})"
        )


def _node_order(node: Hashable) -> tuple[int, Any]:
    return (0, node) if isinstance(node, int) else (1, str(node))


def build_scene(
    *,
    streets: nx.MultiGraph,
    buildings: Sequence[BuildingLike],
    pois: Sequence[PoiLike],
    projection: LocalProjection,
    seed: int,
    parks: Sequence[Polygon] = (),
    water: Sequence[Polygon] = (),
    min_pois_per_km: float = 10.0,
) -> Scene:
    """Build the scene for a street graph (``city360.maps.osm.OsmData.streets``) and its layers.

    ``min_pois_per_km``: when the extract has fewer POIs than this per kilometre of street,
    invented shops (seeded names, ``invented_name=True``) make up the difference. Raises
    :class:`~city360.errors.ConfigError` for an empty street graph or a negative density.
    """
    if min_pois_per_km < 0:
        msg = f"`min_pois_per_km` must be >= 0, got {min_pois_per_km}"
        raise ConfigError(msg)
    rngs = {name: np.random.default_rng([seed, i]) for i, name in enumerate(
        ("buildings", "names", "signs", "objects", "boxes", "movers", "sky"))}  # fmt: skip
    street_objs = street_list(streets)
    every = np.concatenate([s.polyline for s in street_objs])
    extent = (
        float(every[:, 0].min()),
        float(every[:, 1].min()),
        float(every[:, 0].max()),
        float(every[:, 1].max()),
    )
    plans = _layout.plan_buildings(street_objs, buildings, [*parks, *water], rngs["buildings"])
    shops = _shops(street_objs, pois, min_pois_per_km, projection, rngs["names"])
    style_rng = rngs["signs"]
    styles = [SIGN_STYLES[int(style_rng.choice(len(SIGN_STYLES), p=_STYLE_WEIGHTS))] for _ in shops]
    atlas = build_sign_atlas([shop.name for shop in shops], styles=styles)
    widths = [min(e.aspect * _layout.SIGN_HEIGHT_M, MAX_SIGN_WIDTH_M) for e in atlas.entries]
    sign_plans = _layout.place_signs(
        street_objs, [(s.x_m, s.y_m) for s in shops], widths, plans, rngs["signs"]
    )
    japanese = sum(has_cjk(s.name) for s in shops) > len(shops) / 3
    object_plans = _layout.place_objects(
        street_objs, sign_plans, rngs["objects"], vending_weight=0.22 if japanese else 0.08
    )
    clearance = _layout.junction_clearance(street_objs)
    degree = {node: int(d) for node, d in streets.degree()}
    ground, ground_layers = _meshes.ground_mesh(
        street_objs, clearance, degree, parks, water, extent
    )
    return Scene(
        projection=projection,
        seed=seed,
        streets=streets,
        extent=extent,
        ground=ground,
        ground_layers=ground_layers,
        walls=_meshes.wall_mesh(plans),
        signs=_meshes.sign_mesh(sign_plans, atlas, [p.poi_index for p in sign_plans]),
        boxes=_meshes.box_instances(object_plans, sign_plans, rngs["boxes"]),
        sign_atlas=atlas,
        window_tiles=_meshes.window_texture(),
        sun_direction=_sun(rngs["sky"]),
        _pois=tuple(_poi_truths(shops, sign_plans, projection)),
        _objects=tuple(_object_truths(object_plans, projection)),
        _movers=_Movers.create(street_objs, clearance, rngs["movers"]),
        building_count=len(plans),
    )


def _sun(rng: np.random.Generator) -> tuple[float, float, float]:
    azimuth = math.radians(float(rng.uniform(110.0, 250.0)))
    elevation = math.radians(float(rng.uniform(32.0, 55.0)))
    return (
        math.cos(elevation) * math.sin(azimuth),
        math.cos(elevation) * math.cos(azimuth),
        math.sin(elevation),
    )


def _shops(
    streets: Sequence[Street],
    pois: Sequence[PoiLike],
    min_pois_per_km: float,
    projection: LocalProjection,
    rng: np.random.Generator,
) -> list[_Shop]:
    """The extract's POIs (unnamed ones get invented names) plus invented ones if too few."""
    named = [str(p.name or "").strip() for p in pois]
    taken = {n for n in named if n}
    if taken:
        japanese = sum(has_cjk(n) for n in taken) >= len(taken) / 3
    else:
        japanese = 24.0 <= projection.origin_lat <= 46.0 and 122.0 <= projection.origin_lon <= 154.0
    shops: list[_Shop] = []
    for poi, name in zip(pois, named, strict=True):
        kind = str(poi.kind or "shop=yes")
        element = getattr(poi, "element", "node")
        shops.append(
            _Shop(
                id=f"osm-{element}-{poi.osm_id}",
                name=name or invent_name(kind, rng, japanese=japanese, taken=taken),
                kind=kind,
                invented=not name,
                x_m=float(poi.x_m),
                y_m=float(poi.y_m),
            )
        )
    total_km = sum(s.length_m for s in streets) / 1000.0
    wanted = math.ceil(total_km * min_pois_per_km)
    lengths = np.array([s.length_m for s in streets])
    for k in range(max(0, wanted - len(shops))):
        street = streets[int(rng.choice(len(streets), p=lengths / lengths.sum()))]
        offset = float(rng.uniform(0.2, 0.8)) * street.length_m
        side = 1 if rng.random() < 0.5 else -1
        x, y = street.offset_point(offset, side * (street.building_line_m + 2.0))
        kind = SHOP_KINDS[int(rng.integers(len(SHOP_KINDS)))]
        shops.append(
            _Shop(
                id=f"invented-{k:04d}",
                name=invent_name(kind, rng, japanese=japanese, taken=taken),
                kind=kind,
                invented=True,
                x_m=float(x),
                y_m=float(y),
            )
        )
    return shops


def _poi_truths(
    shops: Sequence[_Shop], signs: Sequence[_layout.SignPlan], projection: LocalProjection
) -> list[PoiTruth]:
    out = []
    for sign in signs:
        shop = shops[sign.poi_index]
        street = sign.street
        x, y, heading = street.point_at(sign.offset_m)
        lat, lon = projection.to_latlon(x, y)
        sign_lat, sign_lon = projection.to_latlon(*sign.centre_xy)
        view = ViewPose(
            x_m=x,
            y_m=y,
            lat=float(lat),
            lon=float(lon),
            heading_deg=heading,
            look_bearing_deg=bearing_deg(sign.centre_xy[0] - x, sign.centre_xy[1] - y),
            edge=(int(street.u), int(street.v)),
            offset_m=sign.offset_m,
        )
        out.append(
            PoiTruth(
                id=shop.id,
                name=shop.name,
                kind=shop.kind,
                invented_name=shop.invented,
                x_m=sign.centre_xy[0],
                y_m=sign.centre_xy[1],
                lat=float(sign_lat),
                lon=float(sign_lon),
                facade_normal_deg=sign.facade_normal_deg,
                street_side="left" if sign.side > 0 else "right",
                view=view,
            )
        )
    return out


def _object_truths(
    objects: Sequence[_layout.ObjectPlan], projection: LocalProjection
) -> list[ObjectTruth]:
    if not objects:
        return []
    xy = np.array([o.xy for o in objects])
    lats, lons = projection.to_latlon(xy[:, 0], xy[:, 1])
    return [
        ObjectTruth(
            id=f"obj-{i:05d}",
            kind=o.kind,
            x_m=o.xy[0],
            y_m=o.xy[1],
            lat=float(lats[i]),
            lon=float(lons[i]),
            edge=(int(o.street.u), int(o.street.v)),
        )
        for i, o in enumerate(objects)
    ]


_SAMPLE_M = 0.5
_TURN_M = 4.0
_SHIRTS = ((0.75, 0.15, 0.15), (0.15, 0.30, 0.65), (0.90, 0.85, 0.70), (0.20, 0.20, 0.22),
           (0.25, 0.55, 0.35), (0.85, 0.55, 0.15), (0.55, 0.35, 0.60))  # fmt: skip
_CARS = ((0.85, 0.85, 0.86), (0.12, 0.12, 0.14), (0.60, 0.08, 0.08), (0.15, 0.25, 0.50),
         (0.50, 0.52, 0.55), (0.92, 0.92, 0.90))  # fmt: skip
# parts per mover kind: (forward offset, z centre, full size (w, l, h)), colour slot
_PED_PARTS = (((0.0, 0.43, (0.36, 0.24, 0.86)), "legs"),
              ((0.0, 1.18, (0.46, 0.28, 0.64)), "body"),
              ((0.0, 1.64, (0.22, 0.24, 0.26)), "skin"))  # fmt: skip
_CAR_PARTS = (((0.0, 0.62, (1.8, 4.3, 0.76)), "body"),
              ((-0.25, 1.28, (1.6, 2.2, 0.56)), "glass"))  # fmt: skip


@dataclass(frozen=True, eq=False)
class _Movers:
    """Pedestrians (pacing a sidewalk back and forth) and vehicles (driving a street to its end
    in the right-hand lane and back in the other), as pure functions of time."""

    points: npt.NDArray[np.float64]
    tangents: npt.NDArray[np.float64]
    first: npt.NDArray[np.int64]
    samples: npt.NDArray[np.int64]
    start: npt.NDArray[np.float64]
    span: npt.NDArray[np.float64]
    phase: npt.NDArray[np.float64]
    speed: npt.NDArray[np.float64]
    lateral: npt.NDArray[np.float64]
    is_vehicle: npt.NDArray[np.bool_]
    colours: npt.NDArray[np.float32]
    """(count, 3 parts, 3) RGB per part."""

    @property
    def count(self) -> int:
        return len(self.speed)

    @property
    def box_count(self) -> int:
        return 3 * self.count

    @classmethod
    def create(
        cls, streets: Sequence[Street], clearance: dict[Hashable, float], rng: np.random.Generator
    ) -> _Movers:
        tables: list[tuple[np.ndarray, np.ndarray]] = []
        rows: dict[str, list[Any]] = defaultdict(list)
        first = 0
        for street in streets:
            lo = clearance.get(street.u, 0.0)
            span = street.length_m - lo - clearance.get(street.v, 0.0)
            if span < 10.0:
                continue
            points, tangents = street.resample(_SAMPLE_M)
            tables.append((points, tangents))
            people = int(rng.poisson(span / 45.0))
            cars = (
                0 if street.paved_only or street.road_half_m < 4.0 else int(rng.poisson(span / 90))
            )
            for k in range(people + cars):
                vehicle = k >= people
                if vehicle:
                    lateral = street.road_half_m / 2
                    speed = float(rng.uniform(4.0, 8.0))
                    colours = [_CARS[int(rng.integers(len(_CARS)))], (0.15, 0.18, 0.22)]
                    colours.append(colours[1])
                else:
                    side = 1 if rng.random() < 0.5 else -1
                    inner = street.sidewalk_m if street.sidewalk_m > 0 else street.road_half_m
                    lateral = side * (street.building_line_m - inner * float(rng.uniform(0.3, 0.7)))
                    speed = float(rng.uniform(1.0, 1.5))
                    shirt = _SHIRTS[int(rng.integers(len(_SHIRTS)))]
                    colours = [(0.18, 0.18, 0.25), shirt, (0.80, 0.62, 0.50)]
                rows["first"].append(first)
                rows["samples"].append(len(points))
                rows["start"].append(lo)
                rows["span"].append(span)
                rows["phase"].append(float(rng.uniform(0.0, 2 * span)))
                rows["speed"].append(speed)
                rows["lateral"].append(lateral)
                rows["vehicle"].append(vehicle)
                rows["colours"].append(colours)
            first += len(points)
        points = np.concatenate([t[0] for t in tables]) if tables else np.zeros((0, 2))
        tangents = np.concatenate([t[1] for t in tables]) if tables else np.zeros((0, 2))
        return cls(
            points=points,
            tangents=tangents,
            first=np.asarray(rows["first"], np.int64),
            samples=np.asarray(rows["samples"], np.int64),
            start=np.asarray(rows["start"], np.float64),
            span=np.asarray(rows["span"], np.float64),
            phase=np.asarray(rows["phase"], np.float64),
            speed=np.asarray(rows["speed"], np.float64),
            lateral=np.asarray(rows["lateral"], np.float64),
            is_vehicle=np.asarray(rows["vehicle"], bool),
            colours=np.asarray(rows["colours"], np.float32).reshape(-1, 3, 3),
        )

    def boxes_at(self, t_s: float) -> F32:
        n = self.count
        out = np.zeros((3 * n, 10), np.float32)
        if n == 0:
            return out
        travelled = np.mod(self.phase + self.speed * float(t_s), 2 * self.span)
        outbound = travelled < self.span
        along = np.where(outbound, travelled, 2 * self.span - travelled)
        offset = self.start + along
        index_f = offset / _SAMPLE_M
        i = np.clip(np.floor(index_f).astype(np.int64), 0, self.samples - 2)
        frac = np.clip(index_f - i, 0.0, 1.0)[:, None]
        at = self.first + i
        centre = self.points[at] * (1 - frac) + self.points[at + 1] * frac
        tangent = self.tangents[at]
        # vehicles keep right: right of travel u->v is -left; coming back it is +left. Within
        # _TURN_M of either end they swing across through the centreline (a U-turn), so the
        # path stays continuous.
        to_turn = np.minimum(along, self.span - along)
        swing = np.clip(to_turn / _TURN_M, 0.0, 1.0)
        lane = np.where(outbound, -1.0, 1.0) * self.lateral * swing
        lateral = np.where(self.is_vehicle, lane, self.lateral)
        left = np.stack([-tangent[:, 1], tangent[:, 0]], axis=1)
        base = centre + lateral[:, None] * left
        # heading: pedestrians turn on the spot; vehicles turn left through 180 degrees over
        # the U-turn (bearing falls by 90 degrees at its middle)
        street_yaw = np.arctan2(tangent[:, 0], tangent[:, 1])
        turned = 0.5 * np.pi * (1.0 - swing) * self.is_vehicle
        near_end = self.span - along < along
        yaw = np.where(
            outbound,
            street_yaw + np.where(near_end, -turned, turned),
            street_yaw - np.pi + np.where(near_end, turned, -turned),
        )
        direction = np.stack([np.sin(yaw), np.cos(yaw)], axis=1)
        for part in range(3):
            rows = out[part::3]
            for kind_is_vehicle, parts in ((False, _PED_PARTS), (True, _CAR_PARTS)):
                mask = self.is_vehicle == kind_is_vehicle
                if part >= len(parts):
                    # vehicles have two parts: the third box is a zero-size placeholder
                    rows[mask, :3] = np.column_stack([base[mask], np.zeros(mask.sum())])
                    continue
                (forward, z, (w, length, h)), _ = parts[part]
                xy = base[mask] + forward * direction[mask]
                rows[mask, 0:2] = xy
                rows[mask, 2] = z
                rows[mask, 3:6] = (w / 2, length / 2, h / 2)
                rows[mask, 6] = yaw[mask]
                rows[mask, 7:10] = self.colours[mask, part]
        # a walking bob so people read as moving even far away
        bob = 0.03 * np.abs(np.sin(travelled * math.pi / 0.75))
        out[0::3, 2] += np.where(self.is_vehicle, 0.0, bob)
        out[1::3, 2] += np.where(self.is_vehicle, 0.0, bob)
        out[2::3, 2] += np.where(self.is_vehicle, 0.0, bob)
        return out
