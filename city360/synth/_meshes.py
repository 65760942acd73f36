"""Vertex arrays for the renderer, built once per scene (float32, metres, z up).

Formats (one row per vertex or instance, all float32):

- ground: ``x y z nx ny nz r g b``; drawn in order with the depth test always passing (later
  layers paint over earlier: parks, water, sidewalks, roads, markings), which is safe
  because from above the street nothing hides behind the ground.
- walls: ``x y z nx ny along_m height_m r g b style`` (non-indexed triangles).
- signs: ``x y z s t page`` (non-indexed triangles; ``t`` counts atlas rows from the top).
- boxes (instances): ``cx cy cz hx hy hz yaw_rad r g b``; ``yaw_rad`` is the bearing the box's
  local +y (its front) faces, local +x is its right. :func:`expand_boxes` turns them into the
  ground's ``x y z nx ny nz r g b`` triangle format for drawing.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np
import numpy.typing as npt
import shapely
from shapely.geometry import Polygon

from city360.synth._layout import SIGN_BOTTOM_M, SIGN_HEIGHT_M, BuildingPlan, ObjectPlan, SignPlan
from city360.synth._streets import Street
from city360.synth.signs import SignAtlas

__all__ = [
    "BOX_FLOATS",
    "box_instances",
    "expand_boxes",
    "ground_mesh",
    "sign_mesh",
    "unit_cube",
    "wall_mesh",
    "window_texture",
]

F32 = npt.NDArray[np.float32]
BOX_FLOATS = 10

PARK_RGB = (0.33, 0.52, 0.27)
WATER_RGB = (0.22, 0.38, 0.55)
SIDEWALK_RGB = (0.66, 0.65, 0.62)
PAVING_RGB = (0.70, 0.64, 0.56)
ASPHALT_RGB = (0.23, 0.23, 0.25)
MARKING_RGB = (0.90, 0.90, 0.88)


def _triangles_xy(points: npt.NDArray[np.float64], z: float, rgb: Sequence[float]) -> F32:
    """(N*3, 2) triangle corners -> ground rows at height ``z``, normal up."""
    out = np.empty((len(points), 9), np.float32)
    out[:, :2] = points
    out[:, 2] = z
    out[:, 3:6] = (0.0, 0.0, 1.0)
    out[:, 6:] = rgb
    return out


def _quads(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Corners (M, 2) of quads a-b-c-d (in order round) -> (M*6, 2) triangle corners."""
    return np.stack([a, b, c, a, c, d], axis=1).reshape(-1, a.shape[-1])


def _ribbon(street: Street, half_width: float) -> np.ndarray:
    """Triangles covering ``half_width`` either side of the centreline, with round joints."""
    p = street.polyline
    seg = np.diff(p, axis=0)
    length = np.maximum(np.hypot(seg[:, 0], seg[:, 1]), 1e-9)
    normal = np.stack([-seg[:, 1], seg[:, 0]], axis=1) / length[:, None] * half_width
    tris = [_quads(p[:-1] - normal, p[1:] - normal, p[1:] + normal, p[:-1] + normal)]
    # round joints at both ends (they fill the junction) and where the street bends; a
    # nearly straight joint needs none
    unit = seg / length[:, None]
    bends = np.flatnonzero(np.einsum("ij,ij->i", unit[:-1], unit[1:]) < math.cos(math.radians(4)))
    joints = [0, *(bends + 1).tolist(), len(p) - 1]
    tris.extend(_disc(p[i], half_width) for i in joints)
    return np.concatenate(tris)


def _disc(centre: np.ndarray, radius: float, sides: int = 12) -> np.ndarray:
    angles = np.linspace(0.0, 2 * math.pi, sides + 1)
    ring = centre + radius * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    return np.stack([np.repeat(centre[None], sides, 0), ring[:-1], ring[1:]], axis=1).reshape(-1, 2)


def _polygon_triangles(polygon: Polygon) -> np.ndarray:
    parts = shapely.constrained_delaunay_triangles(polygon)
    coords = [np.asarray(t.exterior.coords)[:3] for t in getattr(parts, "geoms", [])]
    return np.concatenate(coords) if coords else np.empty((0, 2))


def ground_mesh(
    streets: Sequence[Street],
    clearance: dict[Hashable, float],
    degree: dict[Hashable, int],
    parks: Sequence[Polygon],
    water: Sequence[Polygon],
    extent: tuple[float, float, float, float],
) -> tuple[F32, npt.NDArray[np.uint8]]:
    """Parks, water, sidewalks, roads and road markings, back to front.

    Returns the rows and each triangle's paint layer (1 parks ... 5 markings): a renderer
    that reorders triangles must keep the layers in this order. ``extent`` is unused
    (terrain comes from the sky shader) and kept for callers.
    """
    # bare terrain is not drawn: the sky shader paints everything below the horizon that no
    # surface covers in the terrain colour, which costs nothing where streets are drawn anyway
    layers: list[tuple[int, F32]] = []
    for layer, polygons, rgb in ((1, parks, PARK_RGB), (2, water, WATER_RGB)):
        for polygon in polygons:
            if isinstance(polygon, Polygon) and polygon.is_valid and not polygon.is_empty:
                layers.append((layer, _triangles_xy(_polygon_triangles(polygon), 0.0, rgb)))
    for street in streets:
        if street.paved_only:
            layers.append((3, _triangles_xy(_ribbon(street, street.road_half_m), 0, PAVING_RGB)))
        elif street.sidewalk_m > 0:
            ribbon = _ribbon(street, street.building_line_m)
            layers.append((3, _triangles_xy(ribbon, 0.0, SIDEWALK_RGB)))
    for street in streets:
        if not street.paved_only:
            layers.append((4, _triangles_xy(_ribbon(street, street.road_half_m), 0, ASPHALT_RGB)))
    for street in streets:
        if street.paved_only:
            continue
        marks = [_centre_dashes(street, clearance)]
        for node, at_start in ((street.u, True), (street.v, False)):
            if degree.get(node, 0) >= 3:
                marks.append(_zebra(street, clearance.get(node, 0.0), at_start=at_start))
        layers.append((5, _triangles_xy(np.concatenate(marks), 0.0, MARKING_RGB)))
    if not layers:
        return np.empty((0, 9), np.float32), np.empty(0, np.uint8)
    rows = np.concatenate([array for _, array in layers])
    layer_of = np.concatenate(
        [np.full(len(array) // 3, layer, np.uint8) for layer, array in layers]
    )
    return rows, layer_of


def _zebra(street: Street, clearance: float, *, at_start: bool) -> np.ndarray:
    """A 3 m zebra crossing just outside the junction box, stripes along the street."""
    band = 3.0
    if street.length_m < 2 * (clearance + band):
        return np.empty((0, 2))
    middle = clearance + band / 2 if at_start else street.length_m - clearance - band / 2
    point, tangent = street.frame_at(middle)
    normal = np.array([-tangent[1], tangent[0]])
    width = 2 * street.road_half_m - 0.6
    count = max(1, int(width // 1.0))
    lateral = (np.arange(count) - (count - 1) / 2) * (width / count)
    centres = point + lateral[:, None] * normal
    along, across = tangent * band / 2, normal * 0.25
    return _quads(centres - along - across, centres + along - across,
                  centres + along + across, centres - along + across)  # fmt: skip


def _centre_dashes(street: Street, clearance: dict[Hashable, float]) -> np.ndarray:
    """Dashed white centre line (3 m dash, 3 m gap) on carriageways at least 8 m wide."""
    if street.road_half_m < 4.0:
        return np.empty((0, 2))
    start = clearance.get(street.u, 0.0) + 3.5
    end = street.length_m - clearance.get(street.v, 0.0) - 3.5
    offsets = np.arange(start, end - 3.0, 6.0)
    if len(offsets) == 0:
        return np.empty((0, 2))
    a = np.array([street.frame_at(s) for s in offsets])  # (M, 2, 2): point, tangent
    b = np.array([street.frame_at(s + 3.0)[0] for s in offsets])
    normal = np.stack([-a[:, 1, 1], a[:, 1, 0]], axis=1) * 0.08
    return _quads(a[:, 0] - normal, b - normal, b + normal, a[:, 0] + normal)


def wall_mesh(buildings: Sequence[BuildingPlan]) -> F32:
    """Extruded outer walls of every building (roofs are never seen from 1.6 m and are left
    out). ``along_m`` runs round the footprint so windows continue across corners."""
    rows: list[np.ndarray] = []
    for plan in buildings:
        ring = np.asarray(plan.footprint.exterior.coords, np.float64)
        p0, p1 = ring[:-1], ring[1:]
        seg = p1 - p0
        length = np.hypot(seg[:, 0], seg[:, 1])
        keep = length > 1e-3
        p0, p1, seg, length = p0[keep], p1[keep], seg[keep], length[keep]
        if len(length) == 0:
            continue
        along0 = np.concatenate([[0.0], np.cumsum(length)[:-1]])
        along1 = along0 + length
        normal = np.stack([seg[:, 1], -seg[:, 0]], axis=1) / length[:, None]  # outward (CCW)
        h = plan.height_m
        corners = [(p0, along0, 0.0), (p1, along1, 0.0), (p1, along1, h),
                   (p0, along0, 0.0), (p1, along1, h), (p0, along0, h)]  # fmt: skip
        block = np.empty((len(length), 6, 11), np.float32)
        for k, (point, along, z) in enumerate(corners):
            block[:, k, 0:2] = point
            block[:, k, 2] = z
            block[:, k, 3:5] = normal
            block[:, k, 5] = along
            block[:, k, 6] = z
            block[:, k, 7:10] = plan.tint
            block[:, k, 10] = plan.style
        rows.append(block.reshape(-1, 11))
    return np.concatenate(rows) if rows else np.empty((0, 11), np.float32)


def sign_mesh(signs: Sequence[SignPlan], atlas: SignAtlas, entry_of: Sequence[int]) -> F32:
    """One textured quad per sign, facing the street; ``entry_of[i]`` is sign i's atlas entry."""
    rows = np.empty((len(signs), 6, 6), np.float32)
    for i, sign in enumerate(signs):
        entry = atlas.entries[entry_of[i]]
        facing = math.radians(sign.facade_normal_deg)
        # a viewer facing the board looks along -normal; their right is (-cos f, sin f)
        right = np.array([-math.cos(facing), math.sin(facing)]) * sign.width_m / 2
        centre = np.asarray(sign.centre_xy)
        left_xy, right_xy = centre - right, centre + right
        z0, z1 = SIGN_BOTTOM_M, SIGN_BOTTOM_M + SIGN_HEIGHT_M
        bl = (*left_xy, z0, entry.u0, entry.v1)
        br = (*right_xy, z0, entry.u1, entry.v1)
        tr = (*right_xy, z1, entry.u1, entry.v0)
        tl = (*left_xy, z1, entry.u0, entry.v0)
        for k, corner in enumerate((bl, br, tr, bl, tr, tl)):
            rows[i, k, :5] = corner
            rows[i, k, 5] = entry.page
    return rows.reshape(-1, 6)


# street objects as boxes: (x, y, z) centre offset in the object's frame, full size, rgb, yaw+
_Part = tuple[tuple[float, float, float], tuple[float, float, float], tuple[float, float, float]]
_VENDING_RGB = ((0.80, 0.10, 0.10), (0.12, 0.30, 0.75), (0.93, 0.93, 0.93), (0.10, 0.50, 0.30))
_PARTS: dict[str, list[_Part]] = {
    "tree": [
        ((0, 0, 1.3), (0.32, 0.32, 2.6), (0.36, 0.25, 0.16)),
        ((0, 0, 3.7), (2.8, 2.8, 2.6), (0.24, 0.44, 0.20)),
    ],
    "bench": [
        ((0, 0, 0.45), (1.7, 0.45, 0.08), (0.55, 0.36, 0.20)),
        ((0, -0.22, 0.75), (1.7, 0.06, 0.42), (0.55, 0.36, 0.20)),
        ((-0.7, 0, 0.22), (0.08, 0.42, 0.45), (0.15, 0.15, 0.15)),
        ((0.7, 0, 0.22), (0.08, 0.42, 0.45), (0.15, 0.15, 0.15)),
    ],
    "bin": [
        ((0, 0, 0.43), (0.5, 0.5, 0.86), (0.16, 0.36, 0.22)),
        ((0, 0, 0.89), (0.56, 0.56, 0.06), (0.10, 0.10, 0.10)),
    ],
    "bollard": [
        ((0, 0, 0.45), (0.2, 0.2, 0.9), (0.20, 0.20, 0.22)),
        ((0, 0, 0.78), (0.22, 0.22, 0.1), (0.92, 0.92, 0.90)),
    ],
    "traffic_light": [
        ((0, 0, 1.7), (0.14, 0.14, 3.4), (0.38, 0.38, 0.40)),
        ((0, 0.05, 3.0), (0.42, 0.3, 1.05), (0.10, 0.10, 0.10)),
        ((0, 0.21, 3.32), (0.26, 0.04, 0.26), (1.00, 0.12, 0.10)),
        ((0, 0.21, 3.0), (0.26, 0.04, 0.26), (0.35, 0.28, 0.06)),
        ((0, 0.21, 2.68), (0.26, 0.04, 0.26), (0.06, 0.28, 0.14)),
    ],
    "vending_machine": [
        ((0, 0, 0.925), (1.0, 0.75, 1.85), (0.0, 0.0, 0.0)),  # body takes the machine's colour
        ((0, 0.38, 1.25), (0.82, 0.04, 0.85), (0.82, 0.88, 0.95)),
        ((0, 0.38, 0.35), (0.7, 0.04, 0.22), (0.10, 0.10, 0.10)),
    ],
}
OBJECT_KINDS = tuple(sorted(_PARTS))


def box_instances(
    objects: Sequence[ObjectPlan], signs: Sequence[SignPlan], rng: np.random.Generator
) -> F32:
    """Static boxes: every street object's parts, and a dark backing plate behind each sign."""
    rows: list[tuple[float, ...]] = []
    for obj in objects:
        yaw = math.radians(obj.yaw_deg)
        forward = np.array([math.sin(yaw), math.cos(yaw)])
        right = np.array([math.cos(yaw), -math.sin(yaw)])
        colour = _VENDING_RGB[int(rng.integers(len(_VENDING_RGB)))]
        for (dx, dy, z), (sx, sy, sz), rgb in _PARTS[obj.kind]:
            xy = np.asarray(obj.xy) + dx * right + dy * forward
            part_rgb = colour if rgb == (0.0, 0.0, 0.0) else rgb
            rows.append((*xy, z, sx / 2, sy / 2, sz / 2, yaw, *part_rgb))
        if obj.kind == "tree":  # a second canopy turned 45 degrees rounds the crown
            rows.append((*obj.xy, 4.0, 1.1, 1.1, 1.6, yaw + math.pi / 4, 0.20, 0.40, 0.18))
    for sign in signs:
        yaw = math.radians(sign.facade_normal_deg)
        back = np.asarray(sign.centre_xy) - 0.06 * np.array([math.sin(yaw), math.cos(yaw)])
        z = SIGN_BOTTOM_M + SIGN_HEIGHT_M / 2
        rows.append((*back, z, sign.width_m / 2 + 0.06, 0.05, SIGN_HEIGHT_M / 2 + 0.06, yaw,
                     0.12, 0.12, 0.13))  # fmt: skip
    return np.asarray(rows, np.float32).reshape(-1, BOX_FLOATS)


def expand_boxes(rows: F32) -> F32:
    """Box instances -> a flat triangle list ``x y z nx ny nz r g b`` (36 vertices a box).

    llvmpipe runs each instance of an instanced draw almost as a separate draw call, so many
    small boxes are far cheaper as one plain vertex array.
    """
    cube = unit_cube()
    count = len(rows)
    if count == 0:
        return np.empty((0, 9), np.float32)
    yaw = rows[:, 6:7]
    right = np.concatenate([np.cos(yaw), -np.sin(yaw)], axis=1)[:, None, :]
    front = np.concatenate([np.sin(yaw), np.cos(yaw)], axis=1)[:, None, :]
    local = cube[None, :, :3] * rows[:, None, 3:6]
    out = np.empty((count, len(cube), 9), np.float32)
    out[..., 0:2] = rows[:, None, 0:2] + local[..., 0:1] * right + local[..., 1:2] * front
    out[..., 2] = rows[:, None, 2] + local[..., 2]
    normal = cube[None, :, 3:6]
    out[..., 3:5] = normal[..., 0:1] * right + normal[..., 1:2] * front
    out[..., 5] = np.broadcast_to(normal[..., 2], (count, len(cube)))
    out[..., 6:9] = rows[:, None, 7:10]
    return out.reshape(-1, 9)


def unit_cube() -> F32:
    """36 vertices ``x y z nx ny nz`` of the cube [-1, 1]^3, outward normals."""
    faces = []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            normal = np.zeros(3)
            normal[axis] = sign
            u_axis, v_axis = [a for a in range(3) if a != axis]
            corners = []
            for du, dv in ((-1, -1), (1, -1), (1, 1), (-1, -1), (1, 1), (-1, 1)):
                p = np.zeros(3)
                p[axis], p[u_axis], p[v_axis] = sign, du, dv
                corners.append(np.concatenate([p, normal]))
            faces.extend(corners)
    return np.asarray(faces, np.float32)


def window_texture(tile_px: int = 64) -> npt.NDArray[np.uint8]:
    """RGBA facade tiles: 4 styles across, ground floor (row 0) and upper floors (row 1).

    Each tile is one window bay of one storey, drawn top-down. Alpha 255 is wall (the shader
    multiplies it by the building's tint), alpha 0 is glass (its own colour). The shader maps a
    wall's (along_m / bay width, height_m / floor height) into the tile of its style and floor.
    """
    n = tile_px
    image = np.zeros((2 * n, 4 * n, 4), np.uint8)
    rows = np.arange(n)[:, None] / n
    glass = np.zeros((n, n, 3))
    glass[..., 0] = 0.22 + 0.20 * rows
    glass[..., 1] = 0.29 + 0.22 * rows
    glass[..., 2] = 0.36 + 0.24 * rows
    windows = {  # style -> list of (x0, y0, x1, y1) window rectangles in tile fractions
        0: [(0.22, 0.20, 0.78, 0.70)],
        1: [(0.06, 0.28, 0.94, 0.62)],
        2: [(0.12, 0.18, 0.42, 0.72), (0.58, 0.18, 0.88, 0.72)],
        3: [(0.30, 0.10, 0.70, 0.80)],
    }
    shopfront = [(0.06, 0.30, 0.94, 1.0)]
    for style, rects in windows.items():
        for floor, boxes in ((0, shopfront), (1, rects)):
            tile = np.ones((n, n, 4))
            tile[..., :3] = 0.93
            tile[int(0.94 * n) :, :, :3] = 0.80  # a ledge line at each floor's foot
            for x0, y0, x1, y1 in boxes:
                a, b, c, d = (round(v * n) for v in (y0, y1, x0, x1))
                tile[max(a - 2, 0) : b + 2, max(c - 2, 0) : d + 2, :3] = 0.55  # frame
                tile[a:b, c:d, :3] = glass[a:b, c:d]
                tile[a:b, c:d, 3] = 0.0
            image[floor * n : (floor + 1) * n, style * n : (style + 1) * n] = np.round(tile * 255)
    return image
