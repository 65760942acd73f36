"""Junctions where two passes turn corners at one place onto different streets.

Two walks that each turn at a crossing, one from the west to the north and the other from the
east to the south, touch only at the crossing: no part of one runs along or across the other.
The crossing votes of :mod:`city360.pose_graph.junctions` need two passes on different streets
within ``pair_radius_m`` of each other, and the smoothed GPS cuts both corners, on opposite
sides, so the arms that could vote lie 3-5 m apart and cast a few votes, short of a cluster
(Helsinki east (60.5, 85.3) in the unseen one-way seed 7: 16 votes within 5 m).

Each turn of a pass is read as a corner: the line it arrives on, the line it leaves on and the
point where they meet (not the cut corner the poses took). Two corners of different passes
whose points lie within ``meet_m`` of each other and whose arms leave in at least three
directions (two of them apart by ``distinct_deg`` or more) are a junction: the streets of the
two turns meet there. A bend filmed twice has two arms, however often it is filmed.

Positions are metres in the city CRS, headings degrees clockwise from north.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from city360.geo import angle_diff_deg
from city360.pose_graph.tracks import Track

__all__ = ["Corner", "CornerParams", "corner_meets", "find_corners"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class CornerParams:
    """Tuning of :func:`corner_meets` (metres, degrees)."""

    meet_m: float = 8.0
    """Largest distance between two corners' points for them to be one junction."""
    near_m: float = 4.0
    """The arms are read from this far from the apex (past the cut corner) ..."""
    far_m: float = 16.0
    """... to this far: chords of 12 m either side."""
    min_turn_deg: float = 60.0
    """Smallest turn between the arrival and departure chords that is a corner."""
    max_turn_deg: float = 135.0
    """Larger turns are U-turns (dead ends: :mod:`city360.pose_graph.junctions`)."""
    distinct_deg: float = 45.0
    """Two arms this far apart in direction are different streets."""
    pass_separation_m: float = 30.0
    """Two corners of one track are different passes when this far apart along it."""


@dataclass(frozen=True, slots=True)
class Corner:
    """A turn of track ``track`` at arc ``arc_m``: the point ``xy`` where its arrival and
    departure lines meet, and the headings ``arms_deg`` of its two arms seen from that point
    (back along the arrival, on along the departure)."""

    track: int
    arc_m: float
    xy: tuple[float, float]
    arms_deg: tuple[float, float]


def _turn(a_deg: float, b_deg: float) -> float:
    """Unsigned angle between headings ``a_deg`` and ``b_deg``, 0-180 degrees."""
    return abs(angle_diff_deg(b_deg, a_deg))


def _headings(a: FloatArray, b: FloatArray) -> FloatArray:
    """Headings (K,) from points ``a`` (K, 2) to ``b``, degrees clockwise from north."""
    d = b - a
    return np.degrees(np.arctan2(d[:, 0], d[:, 1])) % 360.0


def _meeting_point(p: FloatArray, p_deg: float, q: FloatArray, q_deg: float) -> FloatArray | None:
    """Where the line through ``p`` along ``p_deg`` meets the one through ``q`` along ``q_deg``
    (None when they are near parallel)."""
    u = np.array([np.sin(np.radians(p_deg)), np.cos(np.radians(p_deg))])
    v = np.array([np.sin(np.radians(q_deg)), np.cos(np.radians(q_deg))])
    cross = u[0] * v[1] - u[1] * v[0]
    if abs(cross) < 0.2:
        return None
    w = q - p
    t = (w[0] * v[1] - w[1] * v[0]) / cross
    return p + t * u


def find_corners(tracks: Sequence[Track], params: CornerParams) -> list[Corner]:
    """Every corner of ``tracks``: at each metre of arc, the arrival chord (``far_m`` to
    ``near_m`` before) and the departure chord (``near_m`` to ``far_m`` after); a corner where
    they turn by ``min_turn_deg`` to ``max_turn_deg`` and by the most within ``near_m``."""
    corners: list[Corner] = []
    for k, track in enumerate(tracks):
        if track.length_m < 2.0 * params.far_m:
            continue
        arcs = np.arange(params.far_m, track.length_m - params.far_m + 1e-9, 1.0)
        a0, a1 = track.point_at(arcs - params.far_m), track.point_at(arcs - params.near_m)
        b0, b1 = track.point_at(arcs + params.near_m), track.point_at(arcs + params.far_m)
        h_in, h_out = _headings(a0, a1), _headings(b0, b1)
        turns = np.abs((h_out - h_in + 180.0) % 360.0 - 180.0)
        window = int(params.near_m)
        for i, turn in enumerate(turns):
            if not params.min_turn_deg <= turn <= params.max_turn_deg:
                continue
            around = turns[max(0, i - window) : i + window + 1]
            if turn < around.max() or (turn == around.max() and i > 0 and turns[i - 1] == turn):
                continue
            point = _meeting_point(a1[i], float(h_in[i]), b0[i], float(h_out[i]))
            if point is None:
                continue
            corners.append(
                Corner(
                    track=k,
                    arc_m=float(arcs[i]),
                    xy=(float(point[0]), float(point[1])),
                    arms_deg=(float((h_in[i] + 180.0) % 360.0), float(h_out[i])),
                )
            )
    return corners


def _directions(arms: Sequence[float], distinct_deg: float) -> int:
    """How many of ``arms`` (headings) point different ways: greedy groups within
    ``distinct_deg`` of their first arm."""
    groups: list[float] = []
    for arm in arms:
        if all(_turn(arm, g) >= distinct_deg for g in groups):
            groups.append(arm)
    return len(groups)


def corner_meets(tracks: Sequence[Track], params: CornerParams) -> FloatArray:
    """Junction positions (J, 2), metres: the mean point of each pair of corners of different
    passes within ``meet_m`` whose four arms leave in three or more directions."""
    corners = find_corners(tracks, params)
    if len(corners) < 2:
        return np.zeros((0, 2))
    points = np.array([c.xy for c in corners])
    found = []
    for i, j in cKDTree(points).query_pairs(params.meet_m):
        a, b = corners[i], corners[j]
        if a.track == b.track and abs(a.arc_m - b.arc_m) < params.pass_separation_m:
            continue
        if _directions([*a.arms_deg, *b.arms_deg], params.distinct_deg) < 3:
            continue
        found.append((points[i] + points[j]) / 2.0)
    return np.asarray(found).reshape(-1, 2)
