"""What a walker's own track says about turning back, whatever the junctions: U-turns, peeks
into stubs, side steps, where the ways into and out of each part, and the roots of
out-and-back spurs.

A walk that turns back at the end of a spur (into a side street and out again) films the spur
twice but along one street, so it casts no crossing votes where the spur leaves the street it
came from (:mod:`city360.pose_graph.junctions`), and a spur shorter than half of
``pass_separation_m`` is one pass to the voting. Its root is found from the U-turn instead
(:func:`spur_roots`): from the apex the way in and the way out are followed backwards together;
where they part (more than ``spur_split_m``) is the junction the spur leaves. Without OSM, a
walker who steps 5-7 m into a short stub and walks on (a "peek") turns less than ``uturn_deg``
over ``uturn_window_m``, which reaches back past the junction; such U-turns are also sought with
the shorter ``peek_window_m`` (:func:`_peeks`). A walker who steps off a walk that goes on
through, into a side street and back, makes a side step (:func:`_side_steps`).

These depend on the tracks and :class:`~city360.pose_graph.junction_params.JunctionParams`
alone, so a build finds them once (:func:`find_turns`) and every cut of it reads them.
Positions are metres in the city CRS, frames index a track's poses.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from city360.pose_graph.junction_params import JunctionParams
from city360.pose_graph.tracks import Track, TrackSamples, sample_tracks

__all__ = [
    "Parting",
    "TrackTurns",
    "TurnFindings",
    "find_turns",
    "passes_along",
    "side_step_feet",
    "side_step_roots",
    "spur_roots",
    "turns_for",
    "uturn_stretches",
]

FloatArray = npt.NDArray[np.float64]


def passes_along(
    tree: cKDTree,
    samples: TrackSamples,
    point: FloatArray,
    track: int,
    apex_arc_m: float,
    bearing: float,
    params: JunctionParams,
) -> bool:
    """Whether another pass than track ``track``'s around ``apex_arc_m`` runs within
    ``turn_back_near_m`` of ``point`` along ``bearing`` (within ``min_angle_deg``, either
    way)."""
    _, heading, owner, arc = samples
    near = np.asarray(tree.query_ball_point(point, params.turn_back_near_m), np.int64)
    if not near.size:
        return False
    other = (owner[near] != track) | (np.abs(arc[near] - apex_arc_m) > params.pass_separation_m)
    axial = np.abs(np.mod(heading[near] - bearing + 90.0, 180.0) - 90.0)
    return bool((other & (axial < params.min_angle_deg)).any())


def spur_roots(
    tracks: Sequence[Track],
    params: JunctionParams | None = None,
    *,
    peeks: bool = False,
    turns: TurnFindings | None = None,
) -> FloatArray:
    """Roots (R, 2) of out-and-back spurs: where the way into a U-turn (or, with ``peeks``, a
    peek) and the way out of it, followed back from the apex, part by more than
    ``spur_split_m``; ``turns`` (:func:`find_turns` of the same tracks and ``params``) holds
    the U-turns and partings when found already.

    A walk that retraces its way to where it started (or to its end) has no root. The root is
    placed where the two ways were last within half of ``spur_split_m`` (they part at about
    twice the rate they walk away from the spur when they leave it in opposite directions).
    """
    params = params or JunctionParams()
    turns = turns_for(tracks, params, turns)
    roots: list[tuple[float, float]] = []
    for found in turns.turns:
        for apex in [*found.uturns, *(found.peeks if peeks else ())]:
            parting = found.partings[apex]
            if parting is None or parting[0] < params.spur_min_m:
                continue
            roots.append(parting[1])
    return np.asarray(roots, np.float64).reshape(-1, 2)


def _parting(
    track: Track, apex: int, params: JunctionParams
) -> tuple[float, tuple[float, float]] | None:
    """Where the ways into and out of the U-turn at frame ``apex``, followed back from it
    together, part: (distance from the apex along the track in metres, the point midway
    between the two ways there), or None when they never part (retraced to the track's start
    or end, or too short to tell)."""
    arc = track.arc_m
    reach = min(arc[apex] - arc[0], arc[-1] - arc[apex])
    if reach < params.spur_split_m:
        return None
    s = np.arange(0.0, reach, params.sample_step_m)
    inbound = np.column_stack([np.interp(arc[apex] - s, arc, track.xy[:, k]) for k in (0, 1)])
    outbound = np.column_stack([np.interp(arc[apex] + s, arc, track.xy[:, k]) for k in (0, 1)])
    gap = np.hypot(*(outbound - inbound).T)
    apart = np.flatnonzero(gap > params.spur_split_m)
    if apart.size == 0:
        return None  # retraced all the way: a dead end, no side street
    # together: within half of spur_split_m, or within the gap the ways keep along the spur
    # (walked out on one sidewalk and back on the other, 5-6 m apart) when that is wider
    level = max(0.5 * params.spur_split_m, float(np.median(gap[: apart[0]])))
    together = np.flatnonzero(gap[: apart[0]] <= min(level, params.spur_split_m))
    if together.size == 0:
        return None
    root = int(together[-1])
    if (apart[0] - 1 - root) * params.sample_step_m >= params.sidewalks_m:
        # the last point within that gap was far from where the ways part: they kept 5-7 m
        # apart under noise (the median is exceeded by half the samples of a spur) and part
        # where they first exceed spur_split_m
        root = int(apart[0]) - 1
    mid = 0.5 * (inbound[root] + outbound[root])
    return float(s[root]), (float(mid[0]), float(mid[1]))


def uturn_stretches(track: Track, params: JunctionParams) -> list[tuple[int, int]]:
    """Frame ranges ``[first, stop)`` of U-turns: the travel direction ``uturn_window_m``
    before and after differs by more than ``uturn_deg`` on every frame of the range."""
    n = len(track)
    if n < 3 or track.length_m < 2 * params.uturn_window_m:
        return []
    arc = track.arc_m
    back = np.clip(np.searchsorted(arc, arc - params.uturn_window_m), 0, n - 1)
    ahead = np.clip(np.searchsorted(arc, arc + params.uturn_window_m), 0, n - 1)
    d_in = track.xy - track.xy[back]
    d_out = track.xy[ahead] - track.xy
    norm = np.hypot(*d_in.T) * np.hypot(*d_out.T)
    cos = np.einsum("ij,ij->i", d_in, d_out) / np.where(norm > 0, norm, 1.0)
    flag = (norm > 0) & (cos < np.cos(np.radians(params.uturn_deg)))
    if not flag.any():
        return []
    edges = np.diff(flag.astype(np.int8), prepend=0, append=0)
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return [(int(a), int(b)) for a, b in zip(starts, stops, strict=True)]


def _uturn_frames(track: Track, params: JunctionParams) -> list[int]:
    """Apex frames of U-turns (:func:`uturn_stretches`): the middle of each stretch."""
    arc = track.arc_m
    apexes = []
    for a, b in uturn_stretches(track, params):
        mid_arc = 0.5 * (arc[a] + arc[b - 1])
        apexes.append(int(a + np.argmin(np.abs(arc[a:b] - mid_arc))))
    return apexes


def _peeks(track: Track, params: JunctionParams, found: Sequence[int]) -> list[int]:
    """Apexes of U-turns found with ``peek_window_m`` and not with ``uturn_window_m`` (none
    within that window of one of ``found``, the track's :func:`_uturn_frames`) whose ways
    part ``spur_min_m`` or more from them, at ``peek_reach_m`` or more from the apex."""
    if params.peek_window_m is None:
        return []
    known = np.asarray(found, np.int64)
    arc = track.arc_m
    peeks = []
    for apex in _uturn_frames(track, replace(params, uturn_window_m=params.peek_window_m)):
        if known.size and np.abs(arc[known] - arc[apex]).min() < params.uturn_window_m:
            continue
        parting = _parting(track, apex, params)
        if parting is None or parting[0] < params.spur_min_m:
            continue
        if np.hypot(*(track.xy[apex] - parting[1])) < params.peek_reach_m:
            continue
        if params.peek_pace is None or _pace(track, apex, parting[0]) < params.peek_pace:
            peeks.append(apex)
    return peeks


def _side_steps(track: Track, params: JunctionParams) -> list[tuple[int, FloatArray]]:
    """Tips of U-turns (``uturn_window_m``, ``peek_window_m`` or ``side_step_window_m``)
    stepped off a walk that goes on through: the track ``side_step_legs_m`` of travel either
    side lies ``side_step_chord_m`` or more apart, the U-turn's point farthest off the line
    between those points (within ``side_step_window_m`` of travel of its apex) lies
    ``side_step_off_m`` or more off it, walked under ``peek_pace`` (see
    ``JunctionParams.side_step_off_m``). Each as (tip frame, the two points (2, 2): the
    walker's line)."""
    if params.side_step_off_m is None:
        return []
    arc = track.arc_m
    legs = params.side_step_legs_m
    apexes: set[int] = set()
    for window in (params.uturn_window_m, params.peek_window_m, params.side_step_window_m):
        if window is not None:
            apexes |= set(_uturn_frames(track, replace(params, uturn_window_m=window)))
    tips: list[tuple[int, FloatArray]] = []
    for apex in sorted(apexes):
        if arc[apex] - arc[0] < legs or arc[-1] - arc[apex] < legs:
            continue
        ends = np.asarray(
            [[np.interp(arc[apex] + s, arc, track.xy[:, k]) for k in (0, 1)] for s in (-legs, legs)]
        )
        if float(np.hypot(*(ends[1] - ends[0]))) < params.side_step_chord_m:
            continue
        lo = int(np.searchsorted(arc, arc[apex] - params.side_step_window_m))
        hi = int(np.searchsorted(arc, arc[apex] + params.side_step_window_m, side="right"))
        off = _off_line(ends, track.xy[lo:hi])
        tip = lo + int(np.argmax(off))
        if not params.side_step_off_m <= off.max() <= params.side_step_deep_m:
            continue
        if tips and arc[tip] - arc[tips[-1][0]] < params.side_step_window_m:
            continue  # the same U-turn found with another window
        if params.peek_pace is None or _pace(track, tip, 5.0) < params.peek_pace:
            tips.append((tip, ends))
    return tips


def _off_line(ends: FloatArray, xy: FloatArray) -> FloatArray:
    """Metres each point of ``xy`` (N, 2) lies off the line through ``ends`` (2, 2)."""
    chord = ends[1] - ends[0]
    rel = xy.reshape(-1, 2) - ends[0]
    return np.abs(chord[0] * rel[:, 1] - chord[1] * rel[:, 0]) / float(np.hypot(*chord))


def _foot(ends: FloatArray, xy: FloatArray) -> FloatArray:
    """The point of the line through ``ends`` (2, 2) nearest ``xy`` (2,)."""
    chord = ends[1] - ends[0]
    along = float(np.dot(xy - ends[0], chord) / np.dot(chord, chord))
    return np.asarray(ends[0] + along * chord, dtype=float)


def side_step_roots(
    track: Track,
    junctions_xy: FloatArray,
    params: JunctionParams,
    side_steps: Sequence[tuple[int, FloatArray]] | None = None,
) -> list[tuple[int, int, FloatArray]]:
    """The side steps of ``track`` (``side_steps``, found by :func:`_side_steps` when None)
    whose nearest junction lies within ``side_step_root_m`` of the tip and
    ``side_step_line_m`` of the walker's line: (tip frame, that junction's index, the tip's
    foot on the walker's line)."""
    junctions_xy = junctions_xy.reshape(-1, 2)
    if not len(junctions_xy):
        return []
    roots = []
    for tip, ends in _side_steps(track, params) if side_steps is None else side_steps:
        gap = np.hypot(*(junctions_xy - track.xy[tip]).T)
        near = int(np.argmin(gap))
        if gap[near] > params.side_step_root_m:
            continue
        line_m = params.side_step_line_m
        if line_m is not None and _off_line(ends, junctions_xy[near])[0] > line_m:
            continue  # the junction beside the tip: a turn back round its corner
        roots.append((tip, near, _foot(ends, track.xy[tip])))
    return roots


def side_step_feet(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    params: JunctionParams,
    *,
    turns: TurnFindings | None = None,
) -> FloatArray:
    """``junctions_xy`` (J, 2) with each side step's junction moved to the foot of its tip
    on the walker's line (see ``JunctionParams.side_step_foot``); unchanged when
    ``side_step_off_m`` or ``side_step_foot`` is off. A junction claimed by several steps
    goes to the mean of their feet. ``turns`` (:func:`find_turns` of the same tracks and
    ``params``) holds the side steps when found already."""
    placed = np.asarray(junctions_xy, dtype=float).reshape(-1, 2).copy()
    if params.side_step_off_m is None or not params.side_step_foot or not len(placed):
        return placed
    feet: dict[int, list[FloatArray]] = defaultdict(list)
    for k, track in enumerate(tracks):
        steps = turns.turns[k].side_steps if turns is not None else None
        for _tip, near, foot in side_step_roots(track, junctions_xy, params, steps):
            feet[near].append(foot)
    for near, points in feet.items():
        placed[near] = np.mean(points, axis=0)
    return placed


def _pace(track: Track, apex: int, reach_m: float) -> float:
    """Seconds per metre within ``reach_m`` of travel either side of ``apex`` over the
    video's median seconds per metre."""
    arc, t_s = track.arc_m, track.t_s
    if t_s is None:
        return 0.0  # no times: no evidence of a stop
    step = np.diff(arc)
    moving = step > 0
    if not moving.any():
        return 0.0
    median = float(np.median(np.diff(t_s)[moving] / step[moving]))
    lo = int(np.searchsorted(arc, arc[apex] - reach_m))
    hi = int(min(np.searchsorted(arc, arc[apex] + reach_m), len(arc) - 1))
    if arc[hi] <= arc[lo] or median <= 0:
        return 0.0
    return float((t_s[hi] - t_s[lo]) / (arc[hi] - arc[lo]) / median)


Parting = tuple[float, tuple[float, float]]
"""Where the ways into and out of a U-turn part (:func:`_parting`): metres of travel from the
apex, and the point (m) midway between the two ways there."""


@dataclass(frozen=True, slots=True)
class TrackTurns:
    """What :func:`~city360.pose_graph.dead_ends.find_dead_ends` reads from one track alone,
    whatever the junctions: its U-turn apexes (frames, :func:`_uturn_frames`), its peeks
    (:func:`_peeks`), its side steps (:func:`_side_steps`: tip frame and the walker's line,
    (2, 2) m) and where the ways of each of those part (:func:`_parting`, by frame; None
    where they never part)."""

    uturns: tuple[int, ...]
    peeks: tuple[int, ...]
    side_steps: tuple[tuple[int, FloatArray], ...]
    partings: Mapping[int, Parting | None]


@dataclass(frozen=True, slots=True)
class TurnFindings:
    """The track-only part of :func:`~city360.pose_graph.dead_ends.find_dead_ends` for one
    set of tracks and params, found once (:func:`find_turns`) and read by every cut of a
    build: each track's turns, and the samples every ``sample_step_m`` metres
    (:func:`~city360.pose_graph.tracks.sample_tracks`) with their k-d tree."""

    params: JunctionParams
    turns: tuple[TrackTurns, ...]
    samples: TrackSamples
    tree: cKDTree


def find_turns(tracks: Sequence[Track], params: JunctionParams | None = None) -> TurnFindings:
    """Each track's U-turns, peeks, side steps and their partings, and the tracks' samples:
    what :func:`~city360.pose_graph.dead_ends.find_dead_ends` needs that depends on the
    tracks and ``params`` alone, so a build that cuts its tracks many times finds it once."""
    params = params or JunctionParams()
    turns = []
    for track in tracks:
        uturns = _uturn_frames(track, params)
        peeks = _peeks(track, params, uturns)
        steps = _side_steps(track, params)
        frames = {*uturns, *peeks, *(tip for tip, _ in steps)}
        partings = {f: _parting(track, f, params) for f in sorted(frames)}
        turns.append(TrackTurns(tuple(uturns), tuple(peeks), tuple(steps), partings))
    samples = sample_tracks(tracks, params.sample_step_m)
    return TurnFindings(params, tuple(turns), samples, cKDTree(samples[0]))


def turns_for(
    tracks: Sequence[Track], params: JunctionParams, turns: TurnFindings | None
) -> TurnFindings:
    """``turns`` when they were found for ``tracks`` with ``params``, found now when None.

    Raises:
        ValueError: ``turns`` were found for other tracks or other params.
    """
    if turns is None:
        return find_turns(tracks, params)
    if turns.params != params or len(turns.turns) != len(tracks):
        msg = (
            f"`turns` were found for {len(turns.turns)} tracks with other params; expected "
            f"{len(tracks)} tracks with {params}"
        )
        raise ValueError(msg)
    return turns
