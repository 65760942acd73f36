"""A dead end beside another street, its way in running parallel to it: not cut there (no OSM).

Without OSM every pass that comes within :attr:`~city360.pose_graph.segments.SegmentParams.
dead_end_pass_m` (4 m) of a dead end is cut there (:func:`~city360.pose_graph.segments.
cut_tracks`): the dead end is taken for a video that starts or stops in the middle of the
street the pass walks, and every video of that street must share the node. A footpath park
also has paths that end a few metres beside another path, running nearly parallel to it: the
walker goes to the end and turns back, or a video starts there. GPS brings the passes of the
other path 2-3 m from that end; cut there, the dead end takes the other path's two halves and
its own path, and is built a junction of three streets where the truth has a dead end (fresh
Kaisaniemi, the path along y = -125 that ends at (-87.3, -125.8), 4.6 m beside the main path:
extras in coverage 0, wander 2, wander with stops 0).

What tells the two apart is the dead end's own way in and out, followed back
:attr:`BesideEndParams.tail_m` from a walker's U-turn there: on the street the pass walks,
they stay on that street's line; on a path beside it, they run beside the pass's line,
:attr:`BesideEndParams.beside_m` or more off it, at :attr:`BesideEndParams.parallel_deg` or
less to it. Only U-turns 12 m or more from every junction are read so (a video's end, or a
turn at a junction not yet built, may be a shallow fork's branch), and these guards leave
out Kaisaniemi's three ends themselves (a video's start and end; U-turns whose way out
drifts back to the main path); the rule acts on two other such turn-backs of the kept
twins (design notes, round thirty-four, kais34). A path that runs into the other street
(a T whose stem ends short of the street) meets it steeply and stays cut, as the scorer
reads it (:mod:`city360.pose_graph.short_ends`). All positions are metres in the city CRS,
headings degrees.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from city360.geo import angle_diff_deg, bearing_deg, distance_to_polyline_m
from city360.pose_graph.dead_ends import DeadEndEvent
from city360.pose_graph.segments import CutFilter
from city360.pose_graph.tracks import Track

__all__ = ["BesideEndParams", "beside_end_filter"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class BesideEndParams:
    """Tuning of :func:`beside_end_filter` (metres, degrees)."""

    tail_m: float = 10.0
    """The dead end's way in is followed back this far (metres of travel) from the end."""
    beside_m: float = 4.0
    """The way in's far point lies at least this far from the pass's line (metres): two
    paths side by side (Kaisaniemi's 4.6-6 m), not one street walked with GPS noise (1-2 m)."""
    off_m: float = 2.0
    """... and the dead end itself and each way's far point lie at least this far off the
    pass's line: a video's end on the street (tokyo coverage 2, a walk's two videos meeting
    at a junction 0.7 m off a pass) or a U-turn whose way out runs back along the pass
    (Helsinki coverage with stops 0, 1.5 m) is not beside it. Kaisaniemi's ends: 2.1-3.0 m
    off, their ways 2.9-6.1 m."""
    clear_m: float | None = 12.0
    """... and only a dead end at least this far (metres) from every junction of the cut: a
    walker turning back or a video ending near a junction the votes have not placed yet
    (Helsinki wander with stops 0, a video's end 2 m from the true (-72.2, -544.4)) is no
    path beside another. Kaisaniemi's path end: 11.2-16.1 m from the nearest junction.
    None: not asked."""
    turns_only: bool = True
    """Only a dead end where every video turns back (a U-turn), none where a video starts
    or ends: a walker who turns back says the path ends there, a video's end says nothing
    about the street beyond it (old town one-way with stops seed 6: a video ending 0.6 m
    from the true junction (-19.5, 86.5) on a shallow fork's branch, 12 m or more from
    every junction built then; Helsinki wander with stops 0 likewise at (-72.2, -544.4)).
    False: video ends too (fresh Kaisaniemi coverage 0's end beside the main path is one)."""
    parallel_deg: float = 20.0
    """... and each way runs within this many degrees (axial) of the pass's direction, from
    ``tail_m`` to half of it from the end: a path beside the other, not one that leaves it
    at a fork (a shallow fork's branch leaves at 25-45 degrees; Kaisaniemi's path runs 6
    degrees off the main path)."""


def _tails(
    tracks: Sequence[Track], events: Sequence[DeadEndEvent], tail_m: float
) -> list[FloatArray]:
    """Per way into the dead end (back along the way in to a video's end, on along the way
    out of a video's start, both for a U-turn): its points (2, 2) ``tail_m`` and half of it
    from the end (metres of travel), none when the video is shorter. The half-way point
    leaves out the walker's turn, which rounds the way's last metres."""
    tails = []
    for event in events:
        track = tracks[event.track]
        arc = float(track.arc_m[event.frame])
        for side in (-1.0, 1.0):
            reach = arc + side * tail_m
            if track.arc_m[0] <= reach <= track.arc_m[-1]:
                tails.append(track.point_at(np.array([reach, arc + side * tail_m / 2])))
    return tails


def _turns_back(tracks: Sequence[Track], event: DeadEndEvent) -> bool:
    """Whether ``event`` is a U-turn (neither the video's first frame nor its last)."""
    return 0 < event.frame < len(tracks[event.track]) - 1


def _beside(
    track: Track, frame: int, end_xy: FloatArray, tails: Sequence[FloatArray], p: BesideEndParams
) -> bool:
    """Whether the pass of ``track`` at ``frame`` runs beside the dead end at ``end_xy``:
    every way into it (``tails``, see :func:`_tails`) runs at ``parallel_deg`` or less to
    the pass's line, the
    end and each way lie ``off_m`` or more off it, and the ways ``beside_m`` or more on
    average."""
    if not tails:
        return False
    arc = float(track.arc_m[frame])
    marks = np.linspace(arc - 2 * p.tail_m, arc + 2 * p.tail_m, 21)
    marks = marks[(marks >= track.arc_m[0]) & (marks <= track.arc_m[-1])]
    if len(marks) < 2:
        return False
    line = track.point_at(marks)
    chord = line[-1] - line[0]
    if not np.any(chord):
        return False
    pass_deg = bearing_deg(chord[0], chord[1])
    for far, mid in tails:
        way = mid - far
        if not np.any(way):
            return False
        turn = abs(angle_diff_deg(bearing_deg(way[0], way[1]), pass_deg))
        if min(turn, 180.0 - turn) > p.parallel_deg:
            return False
    offsets = [distance_to_polyline_m(far, line) for far, _ in tails]
    if min(offsets) < p.off_m or distance_to_polyline_m(end_xy, line) < p.off_m:
        return False
    # a U-turn's way out drifts back towards the other path: the ways' mean offset
    return float(np.mean(offsets)) >= p.beside_m


def beside_end_filter(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    dead_end_xy: FloatArray,
    dead_ends: Sequence[Sequence[DeadEndEvent]],
    params: BesideEndParams,
) -> CutFilter:
    """A cut filter (:data:`~city360.pose_graph.segments.CutFilter`) that refuses to cut a
    pass at a dead end (node id ``len(junctions_xy) + k``) it runs beside (module
    docstring); junctions are always allowed."""
    ends_xy = np.asarray(dead_end_xy, dtype=np.float64).reshape(-1, 2)
    junctions = np.asarray(junctions_xy, dtype=np.float64).reshape(-1, 2)
    n_junctions = len(junctions)
    tails = [
        _tails(tracks, events, params.tail_m)
        if not params.turns_only or all(_turns_back(tracks, event) for event in events)
        else []
        for events in dead_ends
    ]
    if params.clear_m is not None and n_junctions:
        clear = cKDTree(junctions).query(ends_xy)[0] >= params.clear_m
        tails = [tail if ok else [] for tail, ok in zip(tails, clear, strict=True)]

    def may_cut(track: int, frames: IntArray, nodes: IntArray) -> npt.NDArray[np.bool_]:
        allowed = np.ones(len(frames), dtype=bool)
        for i, (frame, node) in enumerate(zip(frames, nodes, strict=True)):
            k = int(node) - n_junctions
            if 0 <= k < len(ends_xy):
                allowed[i] = not _beside(tracks[track], int(frame), ends_xy[k], tails[k], params)
        return allowed

    return may_cut
