"""Cuts a track only grazes (:attr:`~city360.pose_graph.segments.SegmentParams.graze_m`): a
pass running 7-8 m beside a junction, inside the cut radius, on its way straight into or out
of another junction a few metres on. Used by :func:`~city360.pose_graph.segments.cut_tracks`.
All positions are metres in the city CRS, headings degrees clockwise from north.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from city360.geo import angle_diff_deg, bearing_deg

if TYPE_CHECKING:
    from city360.pose_graph.segments import SegmentParams
    from city360.pose_graph.tracks import Track

__all__ = ["ungrazed"]

FloatArray = npt.NDArray[np.float64]


def ungrazed(
    cuts_of: Sequence[Sequence[tuple[int, int]]],
    tracks: Sequence[Track],
    nodes_xy: FloatArray,
    n_junctions: int,
    params: SegmentParams,
) -> list[list[tuple[int, int]]]:
    """Per track, its ``cuts`` (sorted ``(frame, node)``) without those at a junction it only
    grazes (:attr:`SegmentParams.graze_m`): the cut next before or after it, within
    ``graze_reach_m`` of travel, is at another junction the track goes through (within
    ``graze_through_m``), the track runs straight from the one cut to the other and on
    past both, and ``graze_tracks`` tracks or more graze that junction so."""
    grazes = [
        _grazes(cuts, track, nodes_xy, n_junctions, params)
        for cuts, track in zip(cuts_of, tracks, strict=True)
    ]
    by_junction: dict[int, set[int]] = defaultdict(set)
    for t, (cuts, grazed) in enumerate(zip(cuts_of, grazes, strict=True)):
        for k in grazed:
            by_junction[cuts[k][1]].add(t)
    return [
        [
            cut
            for k, cut in enumerate(cuts)
            if k not in grazed or len(by_junction[cut[1]]) < params.graze_tracks
        ]
        for cuts, grazed in zip(cuts_of, grazes, strict=True)
    ]


def _grazes(
    cuts: Sequence[tuple[int, int]],
    track: Track,
    nodes_xy: FloatArray,
    n_junctions: int,
    params: SegmentParams,
) -> set[int]:
    """Indices into ``cuts`` (one track's, sorted) of the cuts at junctions the track grazes
    (see :func:`ungrazed`), whatever other tracks do."""
    if params.graze_m is None:
        return set()
    off = [
        float(np.hypot(*(track.xy[frame] - nodes_xy[node]))) if node < n_junctions else 0.0
        for frame, node in cuts
    ]

    def grazed(k: int, j: int) -> bool:
        (frame, node), (other_frame, other) = cuts[k], cuts[j]
        return (
            other < n_junctions
            and other != node
            and off[j] <= params.graze_through_m
            and abs(track.arc_m[other_frame] - track.arc_m[frame]) <= params.graze_reach_m
            and _runs_past(track, frame, other_frame, params.graze_reach_m)
            and abs(_turn_deg(track, frame, other_frame, params.graze_reach_m))
            <= params.graze_turn_deg
        )

    return {
        k
        for k, (_, node) in enumerate(cuts)
        if node < n_junctions
        and off[k] > params.graze_m
        and any(grazed(k, j) for j in (k - 1, k + 1) if 0 <= j < len(cuts))
    }


def _runs_past(track: Track, frame: int, other_frame: int, reach_m: float) -> bool:
    """Whether the track runs on ``reach_m`` of travel before the earlier of the two cuts and
    after the later: a video that starts or stops by the junctions is no street walked past
    them."""
    arc = track.arc_m
    first, last = min(frame, other_frame), max(frame, other_frame)
    return bool(arc[first] - arc[0] >= reach_m and arc[-1] - arc[last] >= reach_m)


def _turn_deg(track: Track, frame: int, other_frame: int, reach_m: float) -> float:
    """Degrees the track turns at ``frame`` on its way to or from ``other_frame``: between
    its chord to ``other_frame`` and its chord ``reach_m`` of travel the other way (0 when
    the track ends there)."""
    arc = track.arc_m
    if other_frame > frame:
        first = int(np.searchsorted(arc, arc[frame] - reach_m))
        legs = (track.xy[frame] - track.xy[first], track.xy[other_frame] - track.xy[frame])
        ends_there = first == frame
    else:
        last = min(int(np.searchsorted(arc, arc[frame] + reach_m)), len(arc) - 1)
        legs = (track.xy[frame] - track.xy[other_frame], track.xy[last] - track.xy[frame])
        ends_there = last == frame
    if ends_there:
        return 0.0
    return angle_diff_deg(bearing_deg(*legs[1]), bearing_deg(*legs[0]))
