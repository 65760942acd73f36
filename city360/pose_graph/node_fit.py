"""Nodes moved to within reach of the edge ends that meet at them.

Every edge's first and last pose must lie within :data:`~city360.pose_graph.graph.NODE_TOLERANCE_M`
of its start and end node: the simulator jumps between the end of one edge and the start of the
next through the node, and :func:`~city360.pose_graph.graph.validate_graph` refuses a graph where
they lie further apart. A node usually stands where the passes' votes (or OSM) put it, close to
every end cut there. Under urban-canyon GPS a pass can run 15-20 m beside the junction it is
matched through (a burst or a drift at that moment), and its cut poses then lie beyond the
tolerance while the other passes' ends lie at the node. :func:`fit_nodes` moves such a node the
least distance along the line to the centre of the smallest circle around its ends, until every
end is within the tolerance; a node whose ends all lie within the tolerance keeps its place (so
OSM positions stay wherever the poses allow them).

Positions are local metres (x east, y north) of the city's projection.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt
import shapely

FloatArray = npt.NDArray[np.float64]

logger = logging.getLogger(__name__)

_BISECTIONS = 40
"""Halvings of the node-to-centre line when seeking the nearest place within reach (~1e-12)."""


def enclosing_centre(points_xy: FloatArray) -> tuple[FloatArray, float]:
    """Centre and radius (m) of the smallest circle holding ``points_xy`` (N, 2)."""
    if len(points_xy) == 1:
        return np.asarray(points_xy[0], dtype=np.float64), 0.0
    cloud = shapely.MultiPoint(np.asarray(points_xy, dtype=np.float64))
    radius = float(shapely.minimum_bounding_radius(cloud))
    centre = shapely.minimum_bounding_circle(cloud).centroid
    return np.array([centre.x, centre.y]), radius


def fit_node(node_xy: FloatArray, ends_xy: FloatArray, tolerance_m: float) -> FloatArray:
    """Where node ``node_xy`` should stand so that every end of ``ends_xy`` (N, 2) lies within
    ``tolerance_m``: itself when they already do, else the point nearest it on the line to the
    ends' enclosing centre that reaches them all. When no point reaches them all (the ends lie
    more than twice the tolerance apart) the centre is returned: the closest one can get."""
    node_xy = np.asarray(node_xy, dtype=np.float64)
    ends_xy = np.asarray(ends_xy, dtype=np.float64).reshape(-1, 2)
    if not len(ends_xy) or _reach(node_xy, ends_xy) <= tolerance_m:
        return node_xy
    centre, radius = enclosing_centre(ends_xy)
    if radius > tolerance_m:
        return centre
    near, far = 1.0, 0.0  # share of the way from the centre back to the node
    for _ in range(_BISECTIONS):
        mid = (near + far) / 2.0
        if _reach(centre + mid * (node_xy - centre), ends_xy) <= tolerance_m:
            far = mid
        else:
            near = mid
    return centre + far * (node_xy - centre)


def fit_nodes(
    nodes_xy: FloatArray,
    ends_of: Mapping[int, Sequence[FloatArray]],
    tolerance_m: float,
) -> FloatArray:
    """``nodes_xy`` (M, 2) with each node ``k`` of ``ends_of`` moved by :func:`fit_node` to
    reach the end poses cut at it (``ends_of[k]``: their positions). Returns a new array."""
    fitted = np.array(nodes_xy, dtype=np.float64, copy=True)
    for k, ends in ends_of.items():
        ends_xy = np.asarray(ends, dtype=np.float64).reshape(-1, 2)
        moved = fit_node(fitted[k], ends_xy, tolerance_m)
        shift = float(np.hypot(*(moved - fitted[k])))
        if shift > 0.0:
            logger.info(
                "node at (%.1f, %.1f) moved %.1f m to reach the %d edge ends cut at it",
                fitted[k, 0],
                fitted[k, 1],
                shift,
                len(ends_xy),
            )
            fitted[k] = moved
    return fitted


def _reach(xy: FloatArray, ends_xy: FloatArray) -> float:
    return float(np.hypot(*(ends_xy - xy).T).max())
