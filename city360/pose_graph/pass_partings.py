"""Junctions where two passes that walked one path together part onto two paths.

The crossing votes of :mod:`city360.pose_graph.junctions` need two passes whose local
headings differ by ``min_angle_deg`` (25 degrees) or more within ``pair_radius_m`` of each
other. At a shallow fork of footpaths (20-40 degrees) the smoothed passes curve from one
path onto the other: near the fork their headings differ by a few degrees, and where they
differ by enough the passes lie too far apart to vote (fresh Kaisaniemi, true (-45.2,
-121.4) and (-54.2, -93.4): the nearest pile 10-16 m off).

This module reads the fork from the passes' lines instead. Two passes (of different tracks,
or of one track ``pass_separation_m`` apart along it) part at a sample where they lie within
``together_m`` of each other, heading the same way or opposite ways, and

- ``back_m`` of travel before it they were still within ``came_m`` of each other (they came
  along one path), and
- ``ahead_m`` of travel after it each lies ``part_m`` or more off the other's local line,
  read from ``ahead_m`` behind the pair to ``2 * ahead_m`` on (they went on along two
  paths: neither video merely ended, and neither walker turned back along the path they
  shared; read farther behind, the line reaches a knot's other paths).

The parting point is where the first pass, walking on, first lies more than ``together_m``
off the other's line. Parting points of ``min_pairs`` or more pairs of tracks within
``cluster_m`` of each other are a junction, at their median. A T crossed at 90 degrees
gives partings too, beside the junction its votes make; the merge of junction candidates
(``merge_m``) joins them.

All positions are metres in the city CRS (x east, y north), headings degrees clockwise from
north.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from city360.pose_graph.grouping import linked_groups
from city360.pose_graph.tracks import Track

__all__ = ["PartingParams", "pass_partings"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class PartingParams:
    """Tuning of :func:`pass_partings` (metres, degrees)."""

    step_m: float = 1.0
    """Samples of each track are taken every this many metres of travel."""
    together_m: float = 2.0
    """Two passes within this many metres of each other walk one path."""
    align_deg: float = 20.0
    """... and their headings lie within this many degrees (axial, 0..90) of each other."""
    back_m: float = 10.0
    """Metres of travel before the sample over which the two passes came together ..."""
    came_m: float = 3.0
    """... still within this many metres of each other there."""
    ahead_m: float = 20.0
    """Metres of travel after the sample at which the two passes have parted ..."""
    part_m: float = 8.0
    """... each this many metres or more off the other's line (two footpaths 5-7 m apart
    that the scorer keeps as one street part by less)."""
    cluster_m: float = 4.0
    """Parting points this close are one fork."""
    min_pairs: int = 2
    """Distinct pairs of tracks a fork's parting points need."""
    pass_separation_m: float = 30.0
    """Two samples of one track are different passes when this far apart along it."""
    clear_m: float | None = 6.0
    """A fork counts only this many metres or more from every junction the crossing votes,
    spurs and corners found (the rule is for forks they never see): at a T crossed at 90
    degrees the parting point lies a few metres past the junction, down the street the
    passes part onto, and merged into it moves it (Helsinki coverage seed 2, true (314.4,
    733.1): lost; Helsinki wander+stops seed 1: a parting between true (314.4, 733.1) and
    (314.9, 751.1) merged both). The Kaisaniemi forks the votes miss lie 7.5-15 m from the
    nearest found junction. On 120 kept twins without OSM (round thirty-six, branch
    kais36), in P, R and F1, with the other's line read only ahead of the pair: None
    (every fork counts) 7 rows better, 4 worse, 1 mixed; 10 m 1 better; 8 m 3 better;
    6 m 4 better, none worse (but a walker's U-turn beside a pass read as a fork). With
    the line read behind the pair too (this module): 6 m 3 better, none worse."""


def _points(tracks: Sequence[Track], owner: IntArray, arc: FloatArray) -> FloatArray:
    """Position (K, 2) of each track ``owner`` at ``arc`` metres of travel (clipped to the
    track)."""
    out = np.zeros((len(arc), 2))
    for k in np.unique(owner):
        mine = owner == k
        track = tracks[int(k)]
        out[mine] = track.point_at(np.clip(arc[mine], 0.0, track.length_m))
    return out


def _gap_to(
    tracks: Sequence[Track],
    points: FloatArray,
    owner: IntArray,
    arc: FloatArray,
    sign: FloatArray,
    reach_m: float,
    step_m: float,
    *,
    back_m: float = 1.0,
) -> FloatArray:
    """Distance (K, U) of each of ``points`` (K, U, 2) to the local line of track ``owner``
    (K,): its poses from ``arc`` to ``arc + sign * reach_m`` (K,) metres of travel, and
    from ``back_m`` before ``arc``."""
    offsets = np.arange(-back_m, reach_m + 1e-9, step_m)
    line = np.zeros((len(arc), len(offsets), 2))
    for k in np.unique(owner):
        mine = owner == k
        track = tracks[int(k)]
        at = arc[mine][:, None] + sign[mine][:, None] * offsets[None, :]
        line[mine] = track.point_at(np.clip(at, 0.0, track.length_m))
    diff = points[:, :, None, :] - line[:, None, :, :]
    return np.asarray(np.hypot(diff[..., 0], diff[..., 1]).min(axis=2), dtype=np.float64)


def pass_partings(tracks: Sequence[Track], params: PartingParams) -> FloatArray:
    """Junction positions (J, 2), metres: the forks where passes that came along one path
    part onto two (module docstring)."""
    xy_l, head_l, owner_l, arc_l = [], [], [], []
    for k, track in enumerate(tracks):
        if track.length_m < params.back_m + params.ahead_m:
            continue
        arcs = np.arange(params.back_m, track.length_m - params.ahead_m + 1e-9, params.step_m)
        xy_l.append(track.point_at(arcs))
        head_l.append(np.interp(arcs, track.arc_m, np.unwrap(track.heading_deg, period=360.0)))
        owner_l.append(np.full(len(arcs), k, dtype=np.int64))
        arc_l.append(arcs)
    if len(xy_l) < 1:
        return np.zeros((0, 2))
    xy = np.concatenate(xy_l)
    heading = np.concatenate(head_l)
    owner = np.concatenate(owner_l)
    arc = np.concatenate(arc_l)
    pairs = cKDTree(xy).query_pairs(params.together_m, output_type="ndarray")
    if pairs.size == 0:
        return np.zeros((0, 2))
    # both orders: the parting is read walking on along the first pass of the pair
    pairs = np.concatenate([pairs, pairs[:, ::-1]])
    i, j = pairs[:, 0], pairs[:, 1]
    other = (owner[i] != owner[j]) | (np.abs(arc[i] - arc[j]) > params.pass_separation_m)
    turn = np.mod(heading[j] - heading[i] + 180.0, 360.0) - 180.0
    axial = np.abs(np.mod(turn + 90.0, 180.0) - 90.0)
    keep = other & (axial <= params.align_deg)
    i, j = i[keep], j[keep]
    sign = np.where(np.abs(turn[keep]) <= 90.0, 1.0, -1.0)
    back_i = _points(tracks, owner[i], arc[i] - params.back_m)
    back_j = _points(tracks, owner[j], arc[j] - sign * params.back_m)
    came = np.hypot(*(back_i - back_j).T) <= params.came_m
    i, j, sign = i[came], j[came], sign[came]
    ahead_i = _points(tracks, owner[i], arc[i] + params.ahead_m)
    ahead_j = _points(tracks, owner[j], arc[j] + sign * params.ahead_m)
    wide = np.hypot(*(ahead_i - ahead_j).T) >= params.part_m
    i, j, sign = i[wide], j[wide], sign[wide]
    if len(i) == 0:
        return np.zeros((0, 2))
    reach = 2.0 * params.ahead_m
    # each pass's far point off the other's local line: they went two ways, not one ended
    # behind the pair too: a walker who turns back comes back along the shared path
    off_i = _gap_to(
        tracks, ahead_i[wide][:, None, :], owner[j], arc[j], sign, reach, 1.0, back_m=params.ahead_m
    )
    off_j = _gap_to(
        tracks,
        ahead_j[wide][:, None, :],
        owner[i],
        arc[i],
        np.ones(len(i)),
        reach,
        1.0,
        back_m=params.ahead_m,
    )
    parted = (off_i[:, 0] >= params.part_m) & (off_j[:, 0] >= params.part_m)
    i, j, sign = i[parted], j[parted], sign[parted]
    if len(i) == 0:
        return np.zeros((0, 2))
    # one sample a run: the last together sample before the passes part
    order = np.lexsort((arc[i], owner[j], owner[i]))
    i, j, sign = i[order], j[order], sign[order]
    last = np.ones(len(i), dtype=bool)
    last[:-1] = (
        (owner[i][1:] != owner[i][:-1])
        | (owner[j][1:] != owner[j][:-1])
        | (arc[i][1:] - arc[i][:-1] > 2.0 * params.step_m)
    )
    i, j, sign = i[last], j[last], sign[last]
    steps = np.arange(0.0, params.ahead_m + 1e-9, params.step_m)
    walk = np.stack([_points(tracks, owner[i], arc[i] + s) for s in steps], axis=1)  # (K, U, 2)
    gaps = _gap_to(tracks, walk, owner[j], arc[j], sign, reach, 1.0)
    first = np.argmax(gaps > params.together_m, axis=1)
    where = walk[np.arange(len(i)), first]
    pair_key = np.sort(np.column_stack([owner[i], owner[j]]), axis=1)
    return _forks(where, pair_key, params)


def _forks(points: FloatArray, pair_key: IntArray, params: PartingParams) -> FloatArray:
    """Median (J, 2) of each group of parting ``points`` within ``cluster_m`` (single link)
    that ``min_pairs`` distinct pairs of tracks (``pair_key`` (K, 2)) gave."""
    if len(points) == 0:
        return np.zeros((0, 2), dtype=np.float64)
    pairs = cKDTree(points).query_pairs(params.cluster_m, output_type="ndarray")
    labels = linked_groups(len(points), pairs)
    found = []
    for label in np.unique(labels):
        members = labels == label
        distinct = {tuple(p) for p in pair_key[members].tolist()}
        if len(distinct) >= params.min_pairs:
            found.append(np.median(points[members], axis=0))
    return np.asarray(found, dtype=np.float64).reshape(-1, 2)
