"""Render the base map once per city: layers drawn with matplotlib (Agg) onto a raster whose
pixels are exactly the cells of a :class:`~city360.maps.geotransform.GeoTransform`.

The axes fill the whole figure and their limits are the raster's outer edges in metres, so
data coordinates land on the pixels the geotransform says (no margins, no aspect
adjustment). Streets are white on an OSM-like background (so tests and people can tell them
apart), widths follow the street class in metres, and names are written along the streets in
DejaVu Sans, falling back to Noto Sans CJK for Japanese names and skipping a name neither font
can write.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np

from city360.errors import RenderError
from city360.maps.draw import _charset, font_path, stamp_attribution
from city360.maps.geotransform import GeoTransform
from city360.maps.layers import MapLayers, StreetLine
from city360.types import Image

__all__ = ["BACKGROUND_RGB", "STREET_RGB", "render_basemap", "street_width_m"]

BACKGROUND_RGB = (242, 239, 233)
STREET_RGB = (255, 255, 255)
_CASING_RGB = (170, 165, 160)
_BUILDING_RGB = (217, 208, 201)
_BUILDING_EDGE_RGB = (196, 182, 171)
_PARK_RGB = (200, 240, 200)
_WATER_RGB = (170, 211, 223)
_LABEL_RGB = (60, 60, 60)
_DPI = 100

_WIDTH_M = {
    "trunk": 16.0,
    "primary": 14.0,
    "secondary": 12.0,
    "tertiary": 10.0,
    "residential": 8.0,
    "unclassified": 8.0,
    "living_street": 6.0,
    "pedestrian": 6.0,
    "road": 8.0,
    "service": 5.0,
    "footway": 2.5,
    "path": 2.5,
    "cycleway": 2.5,
    "steps": 2.5,
    "track": 3.0,
}
_DEFAULT_WIDTH_M = 6.0
_MIN_WIDTH_PX = 3.0
"""Streets are never thinner than this, so a far-zoomed map still shows them."""
LABEL_SPACING_M = 250.0
"""Along one named street, labels repeat at most this often."""


def street_width_m(highway: str) -> float:
    """Drawn width of a street of class ``highway`` (``"primary_link"`` counts as primary)."""
    return _WIDTH_M.get(highway.removesuffix("_link"), _DEFAULT_WIDTH_M)


def _rgb(color: tuple[int, int, int]) -> tuple[float, float, float]:
    return (color[0] / 255, color[1] / 255, color[2] / 255)


def render_basemap(
    layers: MapLayers,
    transform: GeoTransform,
    *,
    labels: bool = True,
    attribution: bool = True,
) -> Image:
    """Draw ``layers`` onto the raster ``transform`` describes; RGB uint8 (H, W, 3)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.collections import LineCollection, PatchCollection
    from matplotlib.figure import Figure
    from shapely.plotting import patch_from_polygon

    width, height = transform.width, transform.height
    figure = Figure(figsize=(width / _DPI, height / _DPI), dpi=_DPI)
    canvas = FigureCanvasAgg(figure)
    figure.patch.set_facecolor(_rgb(BACKGROUND_RGB))
    axes = figure.add_axes((0.0, 0.0, 1.0, 1.0))
    axes.set_axis_off()
    axes.set_facecolor(_rgb(BACKGROUND_RGB))
    x_min, y_min, x_max, y_max = transform.extent_m
    axes.set_xlim(x_min, x_max)
    axes.set_ylim(y_min, y_max)

    for polygons, face, edge in (
        (layers.water, _WATER_RGB, None),
        (layers.parks, _PARK_RGB, None),
        (layers.buildings, _BUILDING_RGB, _BUILDING_EDGE_RGB),
    ):
        patches = [patch_from_polygon(p) for p in polygons if not p.is_empty]
        if patches:
            axes.add_collection(
                PatchCollection(
                    patches,
                    facecolor=_rgb(face),
                    edgecolor=_rgb(edge) if edge else "none",
                    linewidth=0.6 if edge else 0.0,
                    antialiased=True,
                    zorder=1 if edge is None else 2,
                )
            )

    streets = sorted(layers.streets, key=lambda s: street_width_m(s.highway))
    segments = [s.points for s in streets if len(s.points) >= 2]
    if segments:
        widths_px = [
            max(_MIN_WIDTH_PX, street_width_m(s.highway) / transform.metres_per_px)
            for s in streets
            if len(s.points) >= 2
        ]
        casing = [(w + 2.0) * 72.0 / _DPI for w in widths_px]
        fill = [w * 72.0 / _DPI for w in widths_px]
        for line_widths, color, z in ((casing, _CASING_RGB, 3), (fill, STREET_RGB, 4)):
            axes.add_collection(
                LineCollection(
                    segments,
                    linewidths=line_widths,
                    colors=[_rgb(color)],
                    capstyle="round",
                    joinstyle="round",
                    antialiased=True,
                    zorder=z,
                )
            )
    if labels:
        _label_streets(axes, layers.streets, transform)

    canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba())
    if rgba.shape[:2] != (height, width):
        msg = f"matplotlib drew {rgba.shape[1]}x{rgba.shape[0]} px for a {width}x{height} map"
        raise RenderError(msg)
    image: Image = np.ascontiguousarray(rgba[:, :, :3])
    return stamp_attribution(image) if attribution else image


def _label_font(name: str) -> str | None:
    """A font family that has every glyph of ``name``, or None to skip the label."""
    codes = {ord(ch) for ch in name if not ch.isspace()}
    for family in ("DejaVu Sans", "Noto Sans CJK JP"):
        path = font_path(family)
        if path is not None and codes <= _charset(path):
            return family
    return None


def _label_streets(axes: Any, streets: list[StreetLine], transform: GeoTransform) -> None:
    from matplotlib import patheffects
    from shapely import affinity
    from shapely.geometry import box

    size_px = 12
    placed: dict[str, list[tuple[float, float]]] = defaultdict(list)
    boxes: list[Any] = []
    by_length = sorted((s for s in streets if s.name), key=lambda s: -s.length_m)
    for street in by_length:
        text_m = _text_width_em(street.name) * size_px * transform.metres_per_px
        if street.length_m < max(text_m * 1.2, 30.0):
            continue
        family = _label_font(street.name)
        if family is None:
            continue
        x, y, angle = _midpoint(street.points)
        if any(math.hypot(x - px, y - py) < LABEL_SPACING_M for px, py in placed[street.name]):
            continue
        half_h = 0.7 * size_px * transform.metres_per_px
        outline = affinity.rotate(
            box(x - text_m / 2, y - half_h, x + text_m / 2, y + half_h), angle, origin=(x, y)
        )
        if any(outline.intersects(other) for other in boxes):
            continue  # labels never overlap: the longer street keeps its place
        boxes.append(outline)
        placed[street.name].append((x, y))
        axes.text(
            x,
            y,
            street.name,
            rotation=angle,
            rotation_mode="anchor",
            ha="center",
            va="center",
            fontsize=size_px * 72.0 / _DPI,
            family=family,
            color=_rgb(_LABEL_RGB),
            zorder=6,
            clip_on=True,
            path_effects=[patheffects.withStroke(linewidth=2.5, foreground="white")],
        )


def _text_width_em(text: str) -> float:
    """Approximate width of ``text`` in ems: CJK glyphs are square, Latin ones ~0.6 em."""
    import unicodedata

    return sum(1.0 if unicodedata.east_asian_width(ch) in "WF" else 0.6 for ch in text)


def _midpoint(points: np.ndarray) -> tuple[float, float, float]:
    """The point halfway along ``points`` and the text angle there (degrees, kept upright)."""
    steps = np.hypot(*np.diff(points, axis=0).T)
    cumulative = np.concatenate([[0.0], np.cumsum(steps)])
    half = cumulative[-1] / 2
    k = int(np.clip(np.searchsorted(cumulative, half) - 1, 0, len(steps) - 1))
    t = (half - cumulative[k]) / steps[k] if steps[k] > 0 else 0.0
    x, y = points[k] + t * (points[k + 1] - points[k])
    dx, dy = points[k + 1] - points[k]
    angle = math.degrees(math.atan2(dy, dx))
    if angle > 90:
        angle -= 180
    elif angle <= -90:
        angle += 180
    return float(x), float(y), angle
