"""A fork whose two branches meet again at one junction: its node, kept and moved to the apex.

Without OSM, a street that forks into two branches which meet again at one junction (fresh
Bulevardi's Erottajankatu: from its fork (168.6, 91.5) a 45 m diagonal and a 64 m branch round
a corner, both to the Erottaja knot) gives the build a node with two streets: the stem, and
either the two branches grouped as one street (:func:`~city360.pose_graph.segments.
group_streets`, their mean gap under ``same_street_m``) or, when the votes put the node where
one walker's two passes cross 13-14 m up the branches, a loop from the node back to it. The
first kind is dissolved (every pass runs straight through), the second kept where the passes
crossed, an extra 13 m from the fork.

:func:`fork_apexes` reads the fork from the branches themselves: the line fitted to each
branch's passes in a window of metres out from the node (``fork_apex_near_m``); the two
lines cross at the apex, on the stem where the branches part (the median over the windows:
branches 15-20 degrees apart put the crossing 3-4 m along for a metre of noise across). The
branches must run ``fork_apex_wide_m`` apart somewhere, as a block's two sides do and two
passes of one street splayed by the phone do not (the kept twins' other candidates: 5.7-8.8
m), and leave the node ``fork_apex_deg`` .. ``fork_apex_max_deg`` apart, as a Y's do. See
:attr:`~city360.pose_graph.segments.SegmentParams.fork_apex_m` for the rows. With
``fork_apex_on_stem_m`` the apex is then put on the stem's line: the branches' two noisy lines
cross metres off it (Bulevardi wander+stops seed 1: 3.1 m east of the stem's passes). With
``fork_apex_parted`` a node of three streets whose two branches the build already holds as
two streets meeting again at one node is moved the same way (Bulevardi wander seed 9: the
node 10 m up the branches with its three streets, which no step moved).

All positions are metres in the city CRS (x east, y north).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import shapely

from city360.geo import principal_axis
from city360.pose_graph.segments import (
    Segment,
    SegmentParams,
    Street,
    part_lines_at,
    segment_polyline,
)
from city360.pose_graph.tracks import Track

__all__ = ["fork_apexes"]

FloatArray = npt.NDArray[np.float64]


def _branch_points(
    tracks: Sequence[Track],
    ends: Sequence[tuple[Segment, bool]],
    near_m: float,
    far_m: float,
) -> FloatArray:
    """Poses of each pass ``near_m`` .. ``far_m`` (metres of travel, at most 0.6 of the pass)
    from its end at the node; ``ends`` pairs a segment with whether it leaves the node (True)
    or arrives there."""
    points = []
    for seg, leaves in ends:
        track = tracks[seg.track]
        s0, s1 = float(track.arc_m[seg.first_frame]), float(track.arc_m[seg.last_frame])
        far = min(far_m, 0.6 * (s1 - s0))
        if far <= near_m:
            continue
        out = np.linspace(near_m, far, 12)
        points.append(track.point_at(s0 + out if leaves else s1 - out))
    return np.concatenate(points) if points else np.zeros((0, 2))


def fork_apexes(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    segments: Sequence[Segment],
    streets: Sequence[Street],
    dissolved: set[int],
    params: SegmentParams | None = None,
) -> dict[int, FloatArray]:
    """By node, where to put it: nodes of two streets whose second street is a fork's two
    branches meeting again (a loop from the node, or, among ``dissolved``, a street
    :func:`~city360.pose_graph.segments.part_two_lines` parts there into two lines), when the
    branches' lines cross at least ``fork_apex_deg`` apart within ``fork_apex_m`` of the
    node, on the side of its stem (the other street), and within ``fork_apex_stem_m`` of the
    stem's first pass; with :attr:`SegmentParams.fork_apex_parted` also nodes of three
    streets, two of them branches meeting again (:func:`_parted_branches`), each walked on
    through the node, their lines at most ``fork_apex_parted_max_deg`` apart. Empty when
    :attr:`SegmentParams.fork_apex_m` is None."""
    params = params or SegmentParams()
    reach = params.fork_apex_m
    if reach is None:
        return {}
    at_node: dict[int, list[Street]] = defaultdict(list)
    for street in streets:
        at_node[street.a].append(street)
        if street.b != street.a:
            at_node[street.b].append(street)
    lines_at = part_lines_at(tracks, segments, streets, params)
    apexes: dict[int, FloatArray] = {}
    for node in range(len(junctions_xy)):
        pair = at_node[node]
        parted_pair = _parted_branches(pair, node) if params.fork_apex_parted else None
        if parted_pair is not None:
            stem, fork_pair = parted_pair
            if not all(_walked_on(segments, pair, branch, node) for branch in fork_pair):
                continue  # a branch whose videos end at the node: its passes stop short there
            branches = [
                [(segments[i], segments[i].u == node) for i in (*line.forward, *line.backward)]
                for line in fork_pair
            ]
        elif len(pair) != 2:
            continue
        elif len(loops := [street for street in pair if street.a == street.b]) == 1:
            fork, stem = loops[0], next(s for s in pair if s.a != s.b)
            starts = [(segments[i], True) for i in fork.forward]
            starts += [(segments[i], False) for i in fork.backward]
            ends = [(segments[i], False) for i in fork.forward]
            ends += [(segments[i], True) for i in fork.backward]
            branches = [starts, ends]
        elif not loops and node in dissolved:
            parted = [s for s in pair if (s.id, node) in lines_at]
            if len(parted) != 1 or len(lines_at[(parted[0].id, node)]) != 2:
                continue
            stem = next(s for s in pair if s.id != parted[0].id)
            branches = [
                [(segments[i], segments[i].u == node) for i in (*line.forward, *line.backward)]
                for line in lines_at[(parted[0].id, node)]
            ]
        else:
            continue
        if _width_m(tracks, [[seg for seg, _ in ends] for ends in branches], params) < (
            params.fork_apex_wide_m
        ):
            continue
        max_deg = params.fork_apex_parted_max_deg if parted_pair else params.fork_apex_max_deg
        apex = _apex(tracks, junctions_xy[node], node, segments, stem, branches, params, max_deg)
        if apex is not None and float(np.hypot(*(apex - junctions_xy[node]))) <= reach:
            apexes[node] = apex
    return apexes


def _parted_branches(
    streets: Sequence[Street], node: int
) -> tuple[Street, tuple[Street, Street]] | None:
    """The stem and the two branches when ``node`` has three streets, two of them (no loop)
    joining it to one other node and the third going elsewhere: a fork whose branches the
    build already holds as two streets meeting again (:attr:`SegmentParams.fork_apex_parted`;
    each branch must also be walked on through it, :func:`_walked_on`)."""
    if len(streets) != 3 or any(street.a == street.b for street in streets):
        return None
    other = [street.b if street.a == node else street.a for street in streets]
    for k in range(3):
        rest = [j for j in range(3) if j != k]
        if other[rest[0]] == other[rest[1]] != other[k]:
            return streets[k], (streets[rest[0]], streets[rest[1]])
    return None


def _node_frames(segments: Sequence[Segment], street: Street, node: int) -> set[tuple[int, int]]:
    """(track, frame) where each pass of ``street`` is cut at ``node``."""
    return {
        (
            segments[i].track,
            segments[i].first_frame if segments[i].u == node else segments[i].last_frame,
        )
        for i in (*street.forward, *street.backward)
    }


def _walked_on(
    segments: Sequence[Segment], streets: Sequence[Street], branch: Street, node: int
) -> bool:
    """Some pass of ``branch`` goes on through ``node`` on its trajectory into another of
    ``streets`` (the node's streets)."""
    others: set[tuple[int, int]] = set()
    for street in streets:
        if street.id != branch.id:
            others |= _node_frames(segments, street, node)
    return bool(others & _node_frames(segments, branch, node))


def _width_m(
    tracks: Sequence[Track], branches: Sequence[Sequence[Segment]], params: SegmentParams
) -> float:
    """How far apart (metres) the branches' first passes run at most: the largest distance from
    a pose of one to the other. A loop's one pass is both branches: its two halves."""
    first = [ends[0] for ends in branches if ends]
    if len(first) != 2:
        return 0.0
    if first[0] == first[1]:
        seg = first[0]
        line = segment_polyline(tracks[seg.track], seg, 2 * params.polyline_samples)
        halves = [line[: len(line) // 2 + 1], line[len(line) // 2 :]]
    else:
        halves = [
            segment_polyline(tracks[seg.track], seg, 2 * params.polyline_samples) for seg in first
        ]
    return max(
        float(
            shapely.distance(
                shapely.points(halves[k][:, 0], halves[k][:, 1]), shapely.LineString(halves[1 - k])
            ).max()
        )
        for k in (0, 1)
    )


def _apex(
    tracks: Sequence[Track],
    node_xy: FloatArray,
    node: int,
    segments: Sequence[Segment],
    stem: Street,
    branches: Sequence[Sequence[tuple[Segment, bool]]],
    params: SegmentParams,
    max_deg: float,
) -> FloatArray | None:
    """Where the two branches' lines cross (the median over ``fork_apex_near_m`` of the
    windows where they cross ``fork_apex_deg`` .. ``max_deg`` apart, at least half
    of them), when that lies back down the stem from the node (or at it) and within
    ``fork_apex_stem_m`` of the stem's first pass; on the stem's line with
    ``fork_apex_on_stem_m``."""
    apexes: list[FloatArray] = []
    directions: list[FloatArray] = []
    windows = [
        (near_m, far_m)
        for near_m in (params.fork_apex_near_m, params.fork_apex_near_alt_m)
        for far_m in (params.fork_apex_far_m, params.fork_apex_far_alt_m)
    ]
    for near_m, far_m in windows:
        points = [_branch_points(tracks, ends, near_m, far_m) for ends in branches]
        if any(len(p) < 2 for p in points):
            continue
        (c0, d0), (c1, d1) = (principal_axis(p, away_from=node_xy) for p in points)
        sine = float(d0[0] * d1[1] - d0[1] * d1[0])
        if abs(sine) < np.sin(np.radians(params.fork_apex_deg)) or float(np.dot(d0, d1)) < (
            np.cos(np.radians(max_deg))
        ):
            continue  # near parallel, or wider than a fork's branches
        t0 = float((c1 - c0)[0] * d1[1] - (c1 - c0)[1] * d1[0]) / sine
        apexes.append(c0 + t0 * d0)
        directions.extend((d0, d1))
    if not apexes or 2 * len(apexes) < len(windows):
        return None
    # two branches 15-20 degrees apart: a metre of noise across a line moves the apex 3-4 m
    # along, and which window the noise falls in decides where; the median holds
    apex = np.median(np.array(apexes), axis=0)
    seg = segments[(*stem.forward, *stem.backward)[0]]
    stem_line = segment_polyline(tracks[seg.track], seg, params.polyline_samples)
    near_stem = float(shapely.distance(shapely.Point(apex), shapely.LineString(stem_line)))
    # back down the stem, not up the branches where the passes cross
    behind = all(float(np.dot(apex - node_xy, d)) <= 0.0 for d in directions)
    if not behind or near_stem > params.fork_apex_stem_m:
        return None
    if params.fork_apex_on_stem_m is None:
        return apex
    return _on_stem(tracks, node, segments, stem, apex, params.fork_apex_on_stem_m)


def _on_stem(
    tracks: Sequence[Track],
    node: int,
    segments: Sequence[Segment],
    stem: Street,
    apex: FloatArray,
    far_m: float,
) -> FloatArray:
    """``apex`` moved to its foot on the line fitted to the stem's passes' poses up to
    ``far_m`` metres of travel from the node (``apex`` as it is when they have too few)."""
    ends = [(segments[i], segments[i].u == node) for i in (*stem.forward, *stem.backward)]
    points = _branch_points(tracks, ends, 0.0, far_m)
    if len(points) < 2:
        return apex
    centre, direction = principal_axis(points)
    return centre + float(np.dot(apex - centre, direction)) * direction
