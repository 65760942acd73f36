"""A video that starts or ends inside a short stub: its end is the stub's dead end (no OSM).

A track's end becomes a dead end only when it lies ``junction_clearance_m`` (8 m) or more
from every junction (:func:`city360.pose_graph.dead_ends.find_dead_ends`): an end nearer than
that is taken to be the junction's own (a video that stops a few metres past a crossing).
Where the video starts (or ends) 5-8 m up an 8-12 m stub and walks out of it, round the
corner at the junction and on along another street, the end is dropped, the piece up the
stub is no street, the junction is left with two streets and is dropped too (Helsinki
(-229, -399) and (202, -822): a stub filmed by nothing else).

:func:`stub_ends` finds those ends: a track end ``clearance_m`` to ``reach_m`` from its
nearest junction, whose track comes within ``root_m`` of that junction within ``back_m`` of
the end (the root of the stub), turns there by at least ``min_turn_deg`` from straight on
(the end piece leaves the junction along its own arm, not along the street the track goes
on by; a video that stops a few metres past a junction it walked straight through is the
junction's), and that no other pass comes within ``alone_m`` of (a stub walked by this
video alone: an end beside a street others walk is a start or stop on that street, and a
dead end there would cut their passes). Such an end needs only ``clearance_m`` from every
junction to be a dead end.

On by default since round nineteen (``BuildParams.stub_end_params``; None turns it off).
The shape it looks for is also that of a true stub shorter than 8 m whose tip a video starts
or ends at (Nerima SE (-149, -5), Kamppi (-140, -170)); the scorer reads such a built stub as
the truth reads the stub it stands for (contracted, :mod:`city360.pose_graph.score`), so it
costs nothing there. What it still gets wrong: a walk that starts a few metres off a through
street beside a bend, read as a stub (old town wander+stops 0, street F1 0.754 -> 0.743;
design notes, round nineteen).

All positions are metres in the city CRS (x east, y north), headings degrees clockwise from
north.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from city360.geo import angle_diff_deg, bearing_deg
from city360.pose_graph.tracks import Track

__all__ = ["StubEndParams", "stub_ends"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class StubEndParams:
    """Tuning of :func:`stub_ends` (metres and degrees)."""

    clearance_m: float = 5.0
    """A stub's end needs only this from every junction to be a dead end (as a U-turn's
    apex in a spur, ``JunctionParams.spur_min_m``)."""
    reach_m: float = 8.0
    """Ends this far or farther from every junction are dead ends already
    (``JunctionParams.junction_clearance_m``)."""
    back_m: float = 15.0
    """The stub's root (the track's closest pose to the junction) lies within this arc of
    the end: a stub is short."""
    root_m: float = 4.0
    """... and at most this far from the junction: the track goes through it."""
    onward_m: float = 10.0
    """The way on from the root is the chord to the pose this far along the track."""
    min_turn_deg: float = 40.0
    """The track turns at least this much at the root (from straight on): the end piece is
    an arm of its own."""
    alone_m: float = 4.0
    """No other pass comes this close to the end (``SegmentParams.dead_end_pass_m``: a
    pass that near would be cut at the new dead end)."""


def stub_ends(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    params: StubEndParams | None = None,
) -> dict[tuple[int, int], float]:
    """The track ends inside short stubs: ``{(track index, frame): clearance_m}``.

    ``frame`` is 0 (the start) or the last frame; the value is the clearance from every
    junction the end needs to be a dead end (:attr:`StubEndParams.clearance_m`).
    """
    params = params or StubEndParams()
    junctions_xy = np.asarray(junctions_xy, dtype=np.float64).reshape(-1, 2)
    if not len(junctions_xy) or not tracks:
        return {}
    junction_tree = cKDTree(junctions_xy)
    owner = np.concatenate([np.full(len(t.xy), k) for k, t in enumerate(tracks)])
    pose_tree = cKDTree(np.concatenate([t.xy for t in tracks]))
    found: dict[tuple[int, int], float] = {}
    for k, track in enumerate(tracks):
        if len(track.xy) < 2:
            continue
        for at_start in (True, False):
            frame = 0 if at_start else len(track.xy) - 1
            end_xy = track.xy[frame]
            gap, j = junction_tree.query(end_xy)
            if not params.clearance_m < gap < params.reach_m:
                continue
            if _is_stub(track, frame, junctions_xy[int(j)], at_start=at_start, params=params):
                near = pose_tree.query_ball_point(end_xy, params.alone_m)
                if all(owner[i] == k for i in near):
                    found[(k, frame)] = params.clearance_m
    return found


def _is_stub(
    track: Track,
    frame: int,
    junction_xy: FloatArray,
    *,
    at_start: bool,
    params: StubEndParams,
) -> bool:
    """Whether the track's end at ``frame`` is a stub off the junction: it reaches the
    junction within ``back_m`` and turns there by ``min_turn_deg`` or more."""
    arc = track.arc_m
    if at_start:
        piece = np.flatnonzero(arc <= arc[0] + params.back_m)
    else:
        piece = np.flatnonzero(arc >= arc[-1] - params.back_m)
    gaps = np.hypot(*(track.xy[piece] - junction_xy).T)
    root = int(piece[int(np.argmin(gaps))])
    if gaps.min() > params.root_m:
        return False
    onward_arc = arc[root] + (params.onward_m if at_start else -params.onward_m)
    if not arc[0] <= onward_arc <= arc[-1]:
        return False  # the track ends soon after the root too: no way on to judge by
    onward = int(np.clip(np.searchsorted(arc, onward_arc), 0, len(arc) - 1))
    root_xy = track.xy[root]
    end_step = track.xy[frame] - root_xy
    on_step = track.xy[onward] - root_xy
    if min(float(np.hypot(*end_step)), float(np.hypot(*on_step))) < 1e-6:
        return False
    between = abs(
        angle_diff_deg(
            bearing_deg(float(end_step[0]), float(end_step[1])),
            bearing_deg(float(on_step[0]), float(on_step[1])),
        )
    )
    return 180.0 - between >= params.min_turn_deg
