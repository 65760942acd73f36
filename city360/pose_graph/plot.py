"""A picture of a pose graph over its map (matplotlib, headless).

The city's base map (``city360.maps``, which carries its own OSM credit) or else the streets of
the OSM extract underneath, every pose as a faint trace, filmed edges in blue, streets that
exist only as ``reverse`` edges (filmed one way) in orange, junctions as red dots, dead ends as
black squares, links as small grey dots. Axes are metres in the city CRS. OSM data is credited
as its licence asks.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from city360._atomic import atomic_write_bytes
from city360.pose_graph.graph import PoseGraph
from city360.pose_graph.osm_match import OsmStreets
from city360.pose_graph.tracks import Track
from city360.types import Image

__all__ = ["plot_graph"]

_ATTRIBUTION = "Streets © OpenStreetMap contributors"


def plot_graph(
    pose_graph: PoseGraph,
    out: str | Path,
    *,
    tracks: Sequence[Track] = (),
    osm: OsmStreets | None = None,
    basemap: tuple[Image, tuple[float, float, float, float]] | None = None,
    title: str = "",
    dpi: int = 150,
) -> Path:
    """Draw ``pose_graph`` to an image file (PNG/SVG/PDF by suffix), written atomically.

    ``basemap`` is an RGB raster with its extent ``(x_min, y_min, x_max, y_max)`` in metres
    (``city360.maps.CityMap``), drawn underneath; without it the OSM streets (if given) are.
    """
    import io

    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.collections import LineCollection
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 8))
    ax = fig.add_subplot(1, 1, 1)
    if basemap is not None:
        image, (x_min, y_min, x_max, y_max) = basemap
        ax.imshow(image, extent=(x_min, x_max, y_min, y_max), origin="upper", zorder=0)
    elif osm is not None:
        lines = [osm.samples_xy[osm.sample_edge == k] for k in range(len(osm.edge_nodes))]
        ax.add_collection(LineCollection(lines, colors="#cccccc", linewidths=3.0, zorder=1))
    for track in tracks:
        ax.plot(track.xy[:, 0], track.xy[:, 1], color="#9db4d0", linewidth=0.4, zorder=2)
    graph = pose_graph.graph
    by_id = {t.id: t for t in tracks}
    filmed_ways: dict[int, int] = {}
    for edge in pose_graph.edges():
        if edge.primary and not edge.reverse:
            filmed_ways[edge.street] = filmed_ways.get(edge.street, 0) + 1
    drawn: set[int] = set()
    filmed_lines: list[npt.NDArray[np.float64]] = []
    reverse_lines: list[npt.NDArray[np.float64]] = []
    for edge in pose_graph.edges():
        if edge.street in drawn or not edge.primary:
            continue
        drawn.add(edge.street)
        filmed_by = by_id.get(edge.trajectory)
        if filmed_by is not None:
            segment = filmed_by.xy[edge.first_frame : edge.last_frame + 1]
        else:
            u, v = graph.nodes[edge.u], graph.nodes[edge.v]
            segment = np.array([(u["x_m"], u["y_m"]), (v["x_m"], v["y_m"])])
        (filmed_lines if filmed_ways.get(edge.street, 0) == 2 else reverse_lines).append(segment)
    if filmed_lines:
        ax.add_collection(
            LineCollection(
                filmed_lines,
                colors="#1f5fbf",
                linewidths=1.6,
                zorder=3,
                label="street filmed both ways",
            )
        )
    if reverse_lines:
        ax.add_collection(
            LineCollection(
                reverse_lines,
                colors="#e08a1e",
                linewidths=1.6,
                zorder=3,
                label="filmed one way (+ reverse edge)",
            )
        )
    styles = {
        "junction": ("#d62728", "o", 22.0),
        "dead_end": ("black", "s", 18.0),
        "link": ("#777777", ".", 14.0),
    }
    for kind, (color, marker, size) in styles.items():
        pts = np.array(
            [[d["x_m"], d["y_m"]] for _, d in graph.nodes(data=True) if d["kind"] == kind]
        ).reshape(-1, 2)
        if len(pts):
            ax.scatter(
                pts[:, 0],
                pts[:, 1],
                zorder=4,
                label=f"{kind} ({len(pts)})",
                color=color,
                marker=marker,
                s=size,
            )
    ax.set_aspect("equal")
    ax.autoscale_view()
    ax.set_xlabel("x (m, east)")
    ax.set_ylabel("y (m, north)")
    ax.set_title(title or f"pose graph: {graph.number_of_nodes()} nodes, {len(drawn)} streets")
    ax.legend(loc="upper right", fontsize=7)
    if osm is not None and basemap is None:
        ax.text(
            0.99,
            0.01,
            _ATTRIBUTION,
            transform=ax.transAxes,
            ha="right",
            va="bottom",
            fontsize=7,
            color="#555555",
        )
    buffer = io.BytesIO()
    target = Path(out)
    fig.savefig(buffer, format=target.suffix.lstrip(".") or "png", dpi=dpi, bbox_inches="tight")
    return atomic_write_bytes(target, buffer.getvalue())
