"""One directed segment of the street graph, with its frames and polyline in traversal order.

The length rule is written once, here (:func:`scaled_offsets`): a segment's frames are placed
along it in proportion to the distance between their poses, scaled so that the last one is at
exactly ``length_m``, the graph's length, which is what task start offsets and the controller's
offsets are measured in. The simulator and the task walker read the same arrays.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from city360.geo import bearing_deg
from city360.streets.moves import offered
from city360.streets.values import Transition

__all__ = ["Segment", "scaled_offsets", "twin_offset_m"]


def scaled_offsets(xy: npt.NDArray[np.float64], length_m: float) -> npt.NDArray[np.float64]:
    """Metres along a polyline ``xy`` (K, 2) at each of its points, scaled so the last is
    exactly ``length_m``; a polyline of no length is spread evenly over ``length_m``."""
    steps = np.hypot(*np.diff(xy, axis=0).T)
    arc = np.concatenate([[0.0], np.cumsum(steps)])
    out = np.linspace(0.0, length_m, len(xy)) if arc[-1] <= 0 else arc * (length_m / arc[-1])
    out[-1] = length_m  # exactly: an offset equal to length_m is the segment's end
    return out


@dataclass(frozen=True, slots=True, eq=False)
class Segment:
    """A directed segment (graph edge) from node ``u`` to node ``v``.

    ``frames[k]`` is the trajectory frame shown ``cum_m[k]`` metres after the segment's start
    (-1 for a hand-made graph without frames, whose ``trajectory`` is then ``""``); ``xy[k]``
    (= ``x_m[k]``, ``y_m[k]``) its position in city metres; ``travel_deg[k]`` the travel
    heading there (degrees clockwise from north; a ``reverse`` segment plays frames backwards,
    so it is the filmed heading + 180);
    ``camera_deg[k]`` the bearing of the frame's centre column (filmed heading + the camera's
    yaw offset), which the renderer subtracts from an absolute view bearing. ``transitions``
    are all the file lists; ``choices`` the ones LEFT/UP/RIGHT take
    (:func:`city360.streets.moves.offered`).
    """

    id: str
    u: int
    v: int
    trajectory: str
    first_frame: int | None
    last_frame: int | None
    reverse: bool
    length_m: float
    twin: str | None
    transitions: tuple[Transition, ...]
    frames: npt.NDArray[np.int64]
    cum_m: npt.NDArray[np.float64]
    xy: npt.NDArray[np.float64]
    travel_deg: npt.NDArray[np.float64]
    camera_deg: npt.NDArray[np.float64]
    choices: tuple[Transition, ...] = field(default=(), repr=False)
    _arc: tuple[float, ...] = field(default=(), repr=False)
    _x: tuple[float, ...] = field(default=(), repr=False)
    _y: tuple[float, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "choices", offered(self.transitions))
        # Plain tuples make the scalar interpolation of position() (the oracle's inner loop)
        # several times faster than numpy on single values.
        object.__setattr__(self, "_arc", tuple(self.cum_m.tolist()))
        object.__setattr__(self, "_x", tuple(self.xy[:, 0].tolist()))
        object.__setattr__(self, "_y", tuple(self.xy[:, 1].tolist()))

    def __repr__(self) -> str:
        return f"Segment({self.id!r}, {self.u}->{self.v}, length_m={self.length_m:.2f})"

    @property
    def x_m(self) -> npt.NDArray[np.float64]:
        """East coordinates of the frames, metres."""
        return self.xy[:, 0]

    @property
    def y_m(self) -> npt.NDArray[np.float64]:
        """North coordinates of the frames, metres."""
        return self.xy[:, 1]

    @property
    def walk_m(self) -> float:
        """Walkable length: offsets run from 0 to this (= ``length_m``)."""
        return self.length_m

    @property
    def is_intersection(self) -> bool:
        """True when arriving at the end offers a real choice: more than one way on, not
        counting a U-turn."""
        return sum(not t.uturn for t in self.choices) > 1

    def branch(self, label: str) -> Transition | None:
        """The transition the action ``label`` (LEFT/UP/RIGHT) takes, or None."""
        for transition in self.choices:
            if transition.label == label:
                return transition
        return None

    def index_at(self, offset_m: float) -> int:
        """Position in :attr:`frames` of the frame nearest ``offset_m`` (clamped to the ends)."""
        arc = self._arc
        k = bisect.bisect_left(arc, offset_m)
        if k <= 0:
            return 0
        if k >= len(arc):
            return len(arc) - 1
        return k if arc[k] - offset_m < offset_m - arc[k - 1] else k - 1

    def position(self, offset_m: float) -> tuple[float, float]:
        """(x_m, y_m) at ``offset_m`` along the polyline (clamped to its ends)."""
        arc, xs, ys = self._arc, self._x, self._y
        offset = min(max(offset_m, 0.0), self.length_m)
        k = bisect.bisect_right(arc, offset)
        if k <= 0:
            return xs[0], ys[0]
        if k >= len(arc):
            return xs[-1], ys[-1]
        span = arc[k] - arc[k - 1]
        t = (offset - arc[k - 1]) / span if span > 0 else 0.0
        return xs[k - 1] + t * (xs[k] - xs[k - 1]), ys[k - 1] + t * (ys[k] - ys[k - 1])

    def heading(self, offset_m: float, *, probe_m: float = 3.0) -> float:
        """Travel heading of the polyline (degrees clockwise from north) at ``offset_m``,
        measured over ``probe_m`` metres."""
        lo = max(0.0, min(offset_m - probe_m / 2, self.length_m - probe_m))
        hi = min(self.length_m, lo + probe_m)
        x0, y0 = self.position(lo)
        x1, y1 = self.position(hi)
        return bearing_deg(x1 - x0, y1 - y0)

    def project(self, x_m: float, y_m: float) -> tuple[float, float]:
        """(offset_m, distance_m) of the polyline point nearest to (x_m, y_m)."""
        a = self.xy[:-1]
        d = self.xy[1:] - a
        seg_len2 = np.maximum((d**2).sum(axis=1), 1e-12)
        t = np.clip(((np.array([x_m, y_m]) - a) * d).sum(axis=1) / seg_len2, 0.0, 1.0)
        nearest = a + d * t[:, None]
        dist = np.hypot(nearest[:, 0] - x_m, nearest[:, 1] - y_m)
        k = int(np.argmin(dist))
        offset = self.cum_m[k] + t[k] * (self.cum_m[k + 1] - self.cum_m[k])
        return float(offset), float(dist[k])

    def nearest_index(self, x_m: float, y_m: float) -> int:
        """Position in :attr:`frames` of the frame nearest to (x_m, y_m)."""
        return int(np.argmin(np.hypot(self.xy[:, 0] - x_m, self.xy[:, 1] - y_m)))


def twin_offset_m(segment: Segment, twin: Segment, offset_m: float) -> float:
    """Offset (metres) on ``twin`` where W facing backwards walks on from ``offset_m`` on
    ``segment``: the twin's frame nearest to the frame shown at ``offset_m``, so the picture
    does not jump. The controller turns round with this rule and the oracle plans with it."""
    k = segment.index_at(offset_m)
    nearest = twin.nearest_index(float(segment.x_m[k]), float(segment.y_m[k]))
    return float(twin.cum_m[nearest])
