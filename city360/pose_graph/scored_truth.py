"""The part of a twin's ground truth its videos filmed: what a build of it is scored against.

A twin filmed along a route (``synth --route``) or by long random walks (``--pattern
wander``) films some of its window's streets; the others cannot be in its pose graph, so its
junctions and streets are scored against the streets the camera passed along
(:func:`filmed_truth`). A twin filmed street by street (``coverage``, ``one-way``) is scored
against all of them. The accuracy suite and ``city360 score`` read the truth here, so a kept
twin scores the same from either.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from city360.errors import CityFormatError
from city360.synth.groundtruth import Junction, StreetEdge

if TYPE_CHECKING:
    from city360.synth.groundtruth import SceneTruth

__all__ = [
    "PATTERNS_FILMING_EVERYTHING",
    "filmed_truth",
    "films_everything",
    "true_paths",
    "truth_to_score",
]

FloatArray = npt.NDArray[np.float64]

_EARTH_RADIUS_M = 6_371_008.8

PATTERNS_FILMING_EVERYTHING = frozenset({"coverage", "one-way"})
"""``synth --pattern`` values that film every street of the window (without ``--route``)."""


def films_everything(*, pattern: str, route: bool) -> bool:
    """Whether a twin filmed with ``pattern`` (and along a GPX ``route`` or not) filmed every
    street of its window."""
    return not route and pattern in PATTERNS_FILMING_EVERYTHING


def filmed_truth(
    truth: SceneTruth,
    paths_xy: FloatArray | Sequence[FloatArray],
    *,
    radius_m: float = 6.0,
    share: float = 0.8,
) -> SceneTruth:
    """``truth`` with only the streets the camera filmed, from ``paths_xy``: the true camera
    path of each video in time order ((N, 2) metres, city CRS; one array is one video).

    - A street ``share`` of whose length lies within ``radius_m`` of a path is kept whole.
    - A street walked from one of its ends part way and back, or from an end to where a video
      starts or stops, is kept up to the farthest point reached (:func:`_walked_reach`): the
      filmed part is, to anyone who uses the graph, a dead-end street, and its junction is
      a junction. A reach under ``2 * radius_m`` is not counted: a path that only passes the
      street's end comes that close.
    - Every other street is left out: a walk through a district films a few of its streets,
      and the others cannot be in its pose graph.

    A clipped street ends at a new dead-end junction (degree 1) at the point reached; its
    latitude and longitude come from the truth's own junctions (:func:`_latlon_of`)."""
    from scipy.spatial import cKDTree

    paths = [paths_xy] if isinstance(paths_xy, np.ndarray) else list(paths_xy)
    paths = [np.asarray(p, np.float64).reshape(-1, 2) for p in paths if len(p)]
    if not paths:
        return truth.model_copy(update={"streets": []})
    tree = cKDTree(np.concatenate(paths))
    next_id = max((j.id for j in truth.junctions), default=-1) + 1
    kept: list[StreetEdge] = []
    ends: list[Junction] = []
    for street in truth.streets:
        line = np.asarray(street.polyline_xy, np.float64)
        arc = _arc(line)
        marks = np.linspace(0.0, arc[-1], max(2, int(arc[-1]) + 1))
        near = np.isfinite(tree.query(_at_arc(line, arc, marks), distance_upper_bound=radius_m)[0])
        if near.mean() >= share:
            kept.append(street)
            continue
        from_u, from_v = _walked_reach(line, paths, radius_m=radius_m)
        for reach, tail in ((from_u, False), (from_v, True)):
            if reach < 2 * radius_m or reach >= arc[-1] - radius_m:
                continue
            piece = _clip(line, arc, arc[-1] - reach if tail else 0.0, arc[-1] if tail else reach)
            x_m, y_m = (piece[0] if tail else piece[-1]).tolist()
            lat, lon = _latlon_of(truth, x_m, y_m)
            ends.append(Junction(id=next_id, x_m=x_m, y_m=y_m, lat=lat, lon=lon, degree=1))
            u, v = (next_id, street.v) if tail else (street.u, next_id)
            polyline = [(float(x), float(y)) for x, y in piece]
            length_m = float(_arc(piece)[-1])
            kept.append(
                street.model_copy(
                    update={"u": u, "v": v, "length_m": length_m, "polyline_xy": polyline}
                )
            )
            next_id += 1
    return truth.model_copy(update={"streets": kept, "junctions": [*truth.junctions, *ends]})


def _walked_reach(
    line: FloatArray, paths: Sequence[FloatArray], *, radius_m: float
) -> tuple[float, float]:
    """How far along ``line`` (metres from its first point, and from its last) a path goes in
    from that end and comes back out at the same end, or starts or stops on the way.

    A visit is a run of consecutive path points within ``radius_m`` of the line. It counts for
    an end when both of its own ends project within ``radius_m`` of that end of the line, or
    one does and the other is the first or last point of its path (a video that starts or
    stops in the street). A visit that enters at one end and leaves at the other, or leaves
    sideways, counts for neither."""
    import shapely

    polyline = shapely.LineString(line)
    length = polyline.length
    reach_u = reach_v = 0.0
    for path in paths:
        points = shapely.points(path)
        distance = shapely.distance(polyline, points)
        along = shapely.line_locate_point(polyline, points)
        near = np.flatnonzero(distance <= radius_m)
        if not len(near):
            continue
        breaks = np.flatnonzero(np.diff(near) > 1) + 1
        for run in np.split(near, breaks):
            first, last = float(along[run[0]]), float(along[run[-1]])
            open_first, open_last = run[0] == 0, run[-1] == len(path) - 1
            sides = (first, open_first), (last, open_last)
            if any(a <= radius_m for a, _ in sides) and all(
                a <= radius_m or is_open for a, is_open in sides
            ):
                reach_u = max(reach_u, float(along[run].max()))
            if any(a >= length - radius_m for a, _ in sides) and all(
                a >= length - radius_m or is_open for a, is_open in sides
            ):
                reach_v = max(reach_v, length - float(along[run].min()))
    return reach_u, reach_v


def _arc(line: FloatArray) -> FloatArray:
    """Cumulative length (metres) at each vertex of ``line``, from 0."""
    return np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(line, axis=0).T))])


def _at_arc(line: FloatArray, arc: FloatArray, marks: FloatArray) -> FloatArray:
    """The points (N, 2) of ``line`` at the distances ``marks`` along it (metres)."""
    return np.column_stack([np.interp(marks, arc, line[:, 0]), np.interp(marks, arc, line[:, 1])])


def _clip(line: FloatArray, arc: FloatArray, start_m: float, stop_m: float) -> FloatArray:
    """The part of ``line`` between ``start_m`` and ``stop_m`` along it, with its vertices."""
    inside = (arc > start_m) & (arc < stop_m)
    marks = np.concatenate([[start_m], arc[inside], [stop_m]])
    return _at_arc(line, arc, marks)


def _latlon_of(truth: SceneTruth, x_m: float, y_m: float) -> tuple[float, float]:
    """Latitude and longitude (degrees) of the city-CRS point (``x_m``, ``y_m``): the affine
    map that fits the truth's junctions (a local plane over a district: centimetres), or,
    with fewer than three junctions to fit, an east-north offset from the nearest one."""
    xy = np.array([(j.x_m, j.y_m) for j in truth.junctions], np.float64).reshape(-1, 2)
    latlon = np.array([(j.lat, j.lon) for j in truth.junctions], np.float64).reshape(-1, 2)
    design = np.column_stack([xy, np.ones(len(xy))])
    if len(xy) >= 3 and np.linalg.matrix_rank(design) == 3:
        coef = np.linalg.lstsq(design, latlon, rcond=None)[0]
        lat, lon = np.array([x_m, y_m, 1.0]) @ coef
        return float(lat), float(lon)
    if not len(xy):
        msg = "the truth has no junctions to place a clipped street's end by"
        raise CityFormatError(msg)
    k = int(np.argmin(np.hypot(xy[:, 0] - x_m, xy[:, 1] - y_m)))
    lat0, lon0 = latlon[k]
    lat = lat0 + math.degrees((y_m - xy[k, 1]) / _EARTH_RADIUS_M)
    lon = lon0 + math.degrees((x_m - xy[k, 0]) / (_EARTH_RADIUS_M * math.cos(math.radians(lat0))))
    return float(lat), float(lon)


def true_paths(city: Path, truth: SceneTruth) -> list[FloatArray]:
    """The true camera positions (N, 2), metres in the city CRS, of each video of the twin at
    ``city`` in time order, from ``groundtruth/poses/<video>.csv``."""
    from city360.synth.groundtruth import read_true_poses

    return [
        read_true_poses(city / "groundtruth" / "poses" / f"{v.name}.csv")[:, 2:4]
        for v in truth.videos
    ]


def truth_to_score(city_dir: str | Path) -> tuple[SceneTruth, bool]:
    """The ground truth a build of the twin at ``city_dir`` is scored against, and whether it
    is the filmed part only (see the module docstring). The twin's filming is read from its
    ``city.json``: a ``route`` source, and ``build.synth.pattern`` (without a ``city.json``,
    every street)."""
    from city360.city import CityDir
    from city360.synth.groundtruth import SceneTruth

    city = CityDir(city_dir)
    truth = SceneTruth.load(city.groundtruth_dir / "scene.json")
    if not city.manifest_path.is_file():  # a truth written by hand: nothing says how it was filmed
        return truth, False
    manifest = city.read_manifest()
    route = any(source.kind == "route" for source in manifest.sources)
    pattern = str(manifest.build.get("synth", {}).get("pattern", "coverage"))
    if films_everything(pattern=pattern, route=route):
        return truth, False
    return filmed_truth(truth, true_paths(city.root, truth)), True
