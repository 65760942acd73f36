"""Pull the passes of one street onto one centre line before junctions are sought.

Without OSM every junction, dead end and street is found from the poses, and each pass of a
street carries its own GPS bias of a few metres (a slowly varying offset, not white noise), so
two passes of one street run 2-5 m apart and the places where they part from the passes of a
cross street scatter over 10-15 m. This module is the *trace clarification* of Cao & Krumm
("From GPS traces to a routable road map", ACM GIS 2009): each pose is pulled, across its own
direction of travel, toward the poses of *other* passes nearby whose heading agrees or is
opposite (walkers film a street both ways, on one centre line), a little at a time; after a
few rounds the passes of a street lie on a common line, while poses of a cross street (heading
differs) exert no pull. Positions are metres east/north in the city CRS.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from city360.pose_graph.tracks import Track, make_track

__all__ = ["ClarifyParams", "clarify_tracks"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class ClarifyParams:
    """Parameters of :func:`clarify_tracks` (metres, degrees)."""

    radius_m: float = 5.0
    """Poses of other passes within this distance pull a pose."""
    sigma_m: float = 2.0
    """Gaussian width (metres) of the pull's weight over distance: near passes pull hardest."""
    same_line_deg: float = 20.0
    """A pose pulls only when its heading is within this of the other's, or of its opposite."""
    own_pass_m: float = 20.0
    """Poses of the same trajectory closer than this along it are the same pass (no pull)."""
    step: float = 0.5
    """Share of the weighted mean offset a pose moves per round."""
    rounds: int = 10
    max_shift_m: float = 6.0
    """No pose moves further than this from where it was measured."""


def _normals(heading_deg: FloatArray) -> FloatArray:
    """Unit vectors to the right of travel (east, north) for clockwise-from-north headings."""
    rad = np.radians(heading_deg)
    return np.column_stack([np.cos(rad), -np.sin(rad)])


def clarify_tracks(tracks: Sequence[Track], params: ClarifyParams | None = None) -> list[Track]:
    """The same tracks (same ids, frames and spacing) with positions pulled toward the common
    centre line of the passes of each street (see the module docstring)."""
    params = params or ClarifyParams()
    if len(tracks) == 0:
        return []
    sizes = [len(t) for t in tracks]
    owner = np.repeat(np.arange(len(tracks)), sizes)
    arc = np.concatenate([t.arc_m for t in tracks])
    measured = np.concatenate([t.xy for t in tracks])
    xy = measured.copy()
    heading = np.concatenate([t.heading_deg for t in tracks])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    for _ in range(params.rounds):
        pairs = cKDTree(xy).query_pairs(params.radius_m, output_type="ndarray")
        if len(pairs) == 0:
            break
        i, j = pairs[:, 0], pairs[:, 1]
        same_pass = (owner[i] == owner[j]) & (np.abs(arc[i] - arc[j]) < params.own_pass_m)
        turn = np.abs((heading[i] - heading[j] + 90.0) % 180.0 - 90.0)
        pulls = ~same_pass & (turn <= params.same_line_deg)
        gap = xy[j] - xy[i]
        weight = np.exp(-0.5 * (np.hypot(gap[:, 0], gap[:, 1]) / params.sigma_m) ** 2)
        # a pose's own pass weighs as much as one neighbouring pass: the weight of its own
        # nearby poses stands for "stay where you are"
        own = owner[i] == owner[j]
        own &= np.abs(arc[i] - arc[j]) < params.radius_m
        stay = np.ones(len(xy))
        np.add.at(stay, i[own], weight[own])
        np.add.at(stay, j[own], weight[own])
        normal = _normals(heading)
        ip, jp, wp, gp = i[pulls], j[pulls], weight[pulls], gap[pulls]
        across_i = np.einsum("ij,ij->i", gp, normal[ip])  # j seen from i, across i's travel
        across_j = -np.einsum("ij,ij->i", gp, normal[jp])
        pull = np.zeros(len(xy))
        total = np.zeros(len(xy))
        np.add.at(pull, ip, wp * across_i)
        np.add.at(pull, jp, wp * across_j)
        np.add.at(total, ip, wp)
        np.add.at(total, jp, wp)
        move = params.step * pull / (total + stay)
        xy = xy + move[:, None] * normal
        shift = xy - measured
        far = np.hypot(shift[:, 0], shift[:, 1])
        too_far = far > params.max_shift_m
        xy[too_far] = (
            measured[too_far] + shift[too_far] * (params.max_shift_m / far[too_far])[:, None]
        )
        heading = np.concatenate(
            [
                make_track("", xy[s : s + n], spacing_m=1.0, frame_count=n).heading_deg
                for s, n in zip(starts, sizes, strict=True)
            ]
        )
    return [
        make_track(t.id, xy[s : s + n], spacing_m=t.spacing_m, frame_count=t.frame_count, t_s=t.t_s)
        for t, s, n in zip(tracks, starts, sizes, strict=True)
    ]
