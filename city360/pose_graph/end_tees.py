"""A video that ends where its street meets a street another pass walks: a T-junction (no OSM).

Junctions are found where passes cross or part (:mod:`city360.pose_graph.junctions`); the end
of a video casts no vote. Where a street is filmed by one video that starts or ends at the
street it meets, and that street is filmed by a single pass turning the corner between its
other two arms (one-way walks; a walk split at a stop), nothing crosses or parts: the turning
pass is one bend, the video's end a dead end 1-5 m beside it, and the T-junction is lost (the
unseen windows' one-way rows: Nerima N, Nerima SW, West Oakland).

:func:`end_tees` finds those ends: a track end that the build left as a dead end, lying within
``reach_m`` of another street's pass that runs on at least ``through_m`` either side of its
closest pose (a pass through the place, not a video that starts or ends beside this one), that
turns there by ``min_turn_deg`` or more (it turns the corner; a straight pass beside an end is
as often a street that stops a few metres short of another), and whose two ways out of there
both leave ``min_cross_deg`` or more from the way the end's street leaves (an end on the pass's
own street, or beside a parallel one, is no T). The junction goes on the pass at that closest
pose, the end's street running into it.

All positions are metres in the city CRS (x east, y north), headings degrees clockwise from
north.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from city360.geo import angle_diff_deg, bearing_deg
from city360.pose_graph.junction_merges import merge_close
from city360.pose_graph.segments import Segment, Street, street_of_segment
from city360.pose_graph.tracks import Track

__all__ = ["EndTeeParams", "end_tees"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class EndTeeParams:
    """Tuning of :func:`end_tees` (metres and degrees)."""

    reach_m: float = 8.0
    """A video end this close to another street's pass ends at that street (a sidewalk and
    the GPS error: 1-5 m on the unseen windows' one-way rows)."""
    through_m: float = 10.0
    """The pass runs on at least this far either side of its closest pose: a pass through the
    place, not a video that starts or ends beside this one (a walk split at a stop)."""
    arm_near_m: float = 2.0
    """The end's street direction is the chord from ``arm_far_m`` to this far before the end."""
    arm_far_m: float = 15.0
    min_cross_deg: float = 35.0
    """The end's street leaves the T at least this far from either way the pass leaves it."""
    min_turn_deg: float = 15.0
    """The pass turns at least this much there (from straight on): it turns the corner between
    the T's other two arms. A street that stops 4-6 m short of another, which a pass walks
    straight along, is a dead end in OSM and to the scorer (Helsinki, Kamppi): straight passes
    beside a video's end say nothing."""
    clearance_m: float = 8.0
    """No new junction this close to a junction the build has (it already serves the end)."""
    merge_m: float = 8.0
    """New junctions this close to each other are one (several videos ending at one T)."""
    ahead_reach_m: float | None = 10.0
    """A video end may lie up to this far from the pass (instead of ``reach_m``) when the
    pass's closest pose lies ahead of the end, within ``ahead_deg`` of the way the end's
    street points out through it: the video stopped short of the street it runs into (the old
    town's T (47.6, -21.3), one-way 10: the end 6.2 m short of the T, the turning pass 9.7 m
    off). The junction then moves off the pass toward the end until it lies ``ahead_join_m``
    from it, so the cut runs the end's street into it (a track end farther than the 8 m
    ``JunctionParams.junction_clearance_m`` from every junction stays a dead end). None:
    ``reach_m`` only. On since round thirty-five (branch old35): of 181 rows without OSM (120
    kept, 61 held-out) one better, none worse; 12 m made two worse (real dead ends 10.5 and
    11.6 m short of a turning pass)."""
    ahead_join_m: float = 7.0
    """Where a junction reached by ``ahead_reach_m`` goes: this far from the end, on the line
    from the pass's closest pose to it (metres; under the 8 m junction clearance)."""
    ahead_deg: float = 45.0
    """How far (deg) off the end's street heading the pass pose may lie for
    ``ahead_reach_m``."""
    near_junction_far_m: float | None = 8.0
    """Where the chords of ``arm_far_m`` see no T and a junction the build has lies within
    ``arm_far_m`` of the pass's closest pose, look again with the chords of the pass's two ways
    and of the end's street reaching only this far: past that junction the pass walks another
    street, so its long chord points along neither of the T's arms (the old town knot's
    (-19.5, 86.5), 11 m from the next junction: the pass's way there, chorded on past it, lay
    along the end's street, which bends back beside it). None: the long chords only. On since
    round thirty-four (branch knotc34): suite old town one-way 1 and held-out one-way+stops 8
    better, no row worse (120 kept twins, 31 held-out rows)."""


def _end_street_heading(
    track: Track, *, at_start: bool, params: EndTeeParams, far_m: float | None = None
) -> float | None:
    """Heading (deg) of the track's street pointing out through its end, or None when the
    track is too short to say. The chord runs ``arm_near_m`` .. ``far_m`` (default
    ``arm_far_m``) back from the end."""
    far_m = params.arm_far_m if far_m is None else far_m
    arc = track.arc_m
    if arc[-1] < params.arm_far_m:
        return None
    if at_start:
        near = int(np.searchsorted(arc, params.arm_near_m))
        far = int(np.searchsorted(arc, far_m))
    else:
        near = int(np.searchsorted(arc, arc[-1] - params.arm_near_m))
        far = int(np.searchsorted(arc, arc[-1] - far_m))
    inner, outer = track.xy[far], track.xy[near]
    if float(np.hypot(*(outer - inner))) < 0.5 * (far_m - params.arm_near_m):
        return None  # the walker milled about at the end: no street direction
    step = outer - inner
    return bearing_deg(float(step[0]), float(step[1]))


def _dead_end_segments(
    segments: Sequence[Segment], n_junctions: int
) -> list[tuple[int, int, bool]]:
    """(segment index, track, at_start) for each track end that the build left a dead end."""
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for i, seg in enumerate(segments):
        if seg.track not in first or seg.first_frame < segments[first[seg.track]].first_frame:
            first[seg.track] = i
        if seg.track not in last or seg.last_frame > segments[last[seg.track]].last_frame:
            last[seg.track] = i
    ends = [(i, k, True) for k, i in first.items() if segments[i].u >= n_junctions]
    ends += [(i, k, False) for k, i in last.items() if segments[i].v >= n_junctions]
    return ends


def end_tees(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    segments: Sequence[Segment],
    streets: Sequence[Street],
    params: EndTeeParams | None = None,
) -> FloatArray:
    """Positions (K, 2) of the T-junctions where a video's end meets another street's pass.

    ``segments`` and ``streets`` are the build's cut of ``tracks`` at ``junctions_xy`` (node
    indices below ``len(junctions_xy)`` are junctions, the rest dead ends). Returns new
    junctions only, none within ``clearance_m`` of ``junctions_xy``.
    """
    params = params or EndTeeParams()
    junctions_xy = np.asarray(junctions_xy, dtype=np.float64).reshape(-1, 2)
    street_of = street_of_segment(streets)
    found: list[FloatArray] = []
    for seg_index, k, at_start in _dead_end_segments(segments, len(junctions_xy)):
        track = tracks[k]
        heading = _end_street_heading(track, at_start=at_start, params=params)
        if heading is None:
            continue
        end_xy = track.xy[0] if at_start else track.xy[-1]
        best = _closest_pass(
            tracks, segments, street_of, end_xy, street_of.get(seg_index, -1), params, heading
        )
        if best is None:
            continue
        pass_xy, (pass_track, pass_frame), pass_arms = best
        tee = _three_ways(heading, pass_arms, params)
        far_m = params.near_junction_far_m
        if (
            not tee
            and far_m is not None
            and len(junctions_xy)
            and np.hypot(*(junctions_xy - pass_xy).T).min() < params.arm_far_m
        ):
            # another junction within the chords' reach: the T's arms measured short of it
            short_heading = _end_street_heading(
                track, at_start=at_start, params=params, far_m=far_m
            )
            short_arms = _pass_arms(tracks[pass_track], pass_frame, params, far_m=far_m)
            tee = short_heading is not None and _three_ways(short_heading, short_arms, params)
        if not tee:
            continue
        if len(junctions_xy) and np.hypot(*(junctions_xy - pass_xy).T).min() < params.clearance_m:
            continue
        gap = float(np.hypot(*(end_xy - pass_xy)))
        if gap > params.reach_m:  # reached by ahead_reach_m: move it within the clearance
            pass_xy = pass_xy + (end_xy - pass_xy) * (1.0 - params.ahead_join_m / gap)
        found.append(pass_xy)
    if not found:
        return np.zeros((0, 2))
    merged, _ = merge_close(np.asarray(found), np.ones(len(found), dtype=np.int64), params.merge_m)
    return np.asarray(merged, dtype=np.float64).reshape(-1, 2)


def _three_ways(heading: float, pass_arms: tuple[float, float], params: EndTeeParams) -> bool:
    """Whether an end's street (``heading``, deg, pointing out through the end) and a pass's
    two ways (``pass_arms``) make a T: the end's street leaves the T ``min_cross_deg`` or more
    from either way (an end on the pass's own street, or beside a parallel one, is no T), and
    the pass turns there by ``min_turn_deg`` or more (a straight pass beside an end is a
    street that stops short of another)."""
    arm = heading + 180.0  # the end's street leaves the T away from the end
    if any(abs(angle_diff_deg(arm, other)) < params.min_cross_deg for other in pass_arms):
        return False
    return 180.0 - abs(angle_diff_deg(*pass_arms)) >= params.min_turn_deg


def _closest_pass(
    tracks: Sequence[Track],
    segments: Sequence[Segment],
    street_of: dict[int, int],
    end_xy: FloatArray,
    end_street: int,
    params: EndTeeParams,
    heading: float,
) -> tuple[FloatArray, tuple[int, int], tuple[float, float]] | None:
    """The closest pose within ``reach_m`` of ``end_xy`` on a segment of another street whose
    track runs on ``through_m`` either side of it, its (track, frame), and the headings of its
    ways out of there (:func:`_pass_arms`). A pose ahead of the end (within ``ahead_deg`` of
    ``heading``, the end's street pointing out through the end) may lie up to
    ``ahead_reach_m`` away."""
    reach_m = max(params.reach_m, params.ahead_reach_m or 0.0)
    best: tuple[float, FloatArray, tuple[int, int], tuple[float, float]] | None = None
    for i, seg in enumerate(segments):
        if street_of.get(i, -2) == end_street:
            continue
        track = tracks[seg.track]
        xy = track.xy[seg.first_frame : seg.last_frame + 1]
        gaps = np.hypot(*(xy - end_xy).T)
        j = int(np.argmin(gaps))
        if gaps[j] > reach_m or (best is not None and gaps[j] >= best[0]):
            continue
        if gaps[j] > params.reach_m:
            step = xy[j] - end_xy
            off = angle_diff_deg(bearing_deg(float(step[0]), float(step[1])), heading)
            if abs(off) > params.ahead_deg:
                continue
        f = seg.first_frame + j
        arc = track.arc_m
        if arc[f] < params.through_m or arc[-1] - arc[f] < params.through_m:
            continue
        best = (float(gaps[j]), track.xy[f].copy(), (seg.track, f), _pass_arms(track, f, params))
    return None if best is None else (best[1], best[2], best[3])


def _pass_arms(
    track: Track, frame: int, params: EndTeeParams, *, far_m: float | None = None
) -> tuple[float, float]:
    """Headings (deg) of the two ways the track leaves the pose ``frame`` by: back along where
    it came from and on along where it goes (chords ``arm_near_m`` .. ``far_m`` out, default
    ``arm_far_m``)."""
    far_m = params.arm_far_m if far_m is None else far_m
    arc = track.arc_m
    here = track.xy[frame]
    arms = []
    for sign in (-1.0, 1.0):
        marks = arc[frame] + sign * np.array([params.arm_near_m, far_m])
        near, far = (int(np.clip(np.searchsorted(arc, m), 0, len(arc) - 1)) for m in marks)
        step = track.xy[far] - track.xy[near] if near != far else track.xy[far] - here
        arms.append(bearing_deg(float(step[0]), float(step[1])))
    return arms[0], arms[1]
