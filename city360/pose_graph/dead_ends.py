"""Dead ends found from trajectories alone, given the junctions.

Dead ends are where a trajectory turns back (a U-turn apex: the travel direction a few metres
before and after differs by more than ``uturn_deg``, :mod:`city360.pose_graph.track_turns`) or
starts/ends away from every junction. Candidates from several trajectories within
``dead_end_merge_m`` become one node. A build cuts its tracks at each step's junctions, so
this runs once a cut, reading the turns found once a build
(:class:`~city360.pose_graph.track_turns.TurnFindings`).

All positions are metres in the city CRS.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from city360.pose_graph.grouping import linked_groups
from city360.pose_graph.junction_params import JunctionParams
from city360.pose_graph.track_turns import (
    Parting,
    TurnFindings,
    passes_along,
    side_step_roots,
    turns_for,
)
from city360.pose_graph.tracks import Track

__all__ = ["DeadEndEvent", "find_dead_ends", "group_dead_ends", "own_pile_shares"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class DeadEndEvent:
    """Frame ``frame`` of trajectory ``track`` (index into the track list) ends at a dead end."""

    track: int
    frame: int
    x_m: float
    y_m: float


def _parted_near(parting: Parting | None, junctions_xy: FloatArray, params: JunctionParams) -> bool:
    """Whether a junction lies within ``peek_root_m`` of where the ways into and out of a
    U-turn part (``parting``, :func:`~city360.pose_graph.track_turns._parting`)."""
    if parting is None or len(junctions_xy) == 0 or params.peek_root_m is None:
        return False
    gap = np.hypot(*(np.asarray(junctions_xy).reshape(-1, 2) - parting[1]).T).min()
    return bool(gap <= params.peek_root_m)


def find_dead_ends(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    params: JunctionParams | None = None,
    *,
    short_spurs: bool = False,
    end_clearance: Mapping[tuple[int, int], float] | None = None,
    turns: TurnFindings | None = None,
) -> tuple[FloatArray, list[list[DeadEndEvent]]]:
    """Dead-end nodes (D, 2) and, per node, the trajectory frames that end there.

    Candidates are U-turn apexes (not those where the ways in and out part within
    ``junction_clearance_m``: a step into a stub and out along another street) and trajectory ends
    farther than ``junction_clearance_m`` from every junction; candidates within
    ``dead_end_merge_m`` of each other are one dead end.

    With ``short_spurs`` (builds without OSM) a U-turn whose ways part ``spur_min_m`` or more
    from its apex is the end of a spur and needs only ``spur_min_m`` from every junction: a
    walker turns back 5-8 m into a 9-12 m stub (GPS and the turn round off its end), and with
    the 8 m clearance the stub's end, its street and so its junction were lost (four of
    Helsinki seed 0's misses, one in the old town). With OSM the map says where stubs are.

    ``end_clearance`` (``{(track index, frame): metres}``) gives some track ends a clearance
    of their own instead of ``junction_clearance_m`` (a video that starts or ends inside a
    short stub: :func:`city360.pose_graph.stub_ends.stub_ends`).

    ``turns`` (:func:`find_turns` of the same tracks and ``params``) saves finding each
    track's U-turns, peeks and side steps again: a build cuts its tracks many times.
    """
    params = params or JunctionParams()
    end_clearance = end_clearance or {}
    turns = turns_for(tracks, params, turns)
    events: list[DeadEndEvent] = []
    clearance: list[float] = []
    spur_ends: list[bool] = []
    turn_apex: list[bool] = []  # a U-turn's or peek's apex, not a track's end
    partings: dict[tuple[int, int], tuple[float, tuple[float, float]]] = {}
    for k, (track, found) in enumerate(zip(tracks, turns.turns, strict=True)):
        spurs = set()
        kept = []
        peeks = list(found.peeks) if short_spurs else []
        if peeks and params.peek_root_m is not None:
            peeks = [f for f in peeks if _parted_near(found.partings[f], junctions_xy, params)]
        for f in [*found.uturns, *peeks]:
            parting = found.partings[f]
            if parting is not None:
                partings[(k, f)] = parting
                if short_spurs and parting[0] >= params.spur_min_m:
                    spurs.add(f)
                elif parting[0] < params.junction_clearance_m:
                    continue  # stepped into a stub and out along another street
            kept.append(f)
        frames = {0, len(track) - 1, *kept}
        steps = (
            [tip for tip, _, _ in side_step_roots(track, junctions_xy, params, found.side_steps)]
            if short_spurs
            else []
        )
        for f in sorted(frames | set(steps)):
            if f not in frames:
                parting = found.partings[f]
                if parting is not None:
                    partings[(k, f)] = parting
            events.append(DeadEndEvent(k, f, float(track.xy[f, 0]), float(track.xy[f, 1])))
            spur_ends.append(f in spurs or f in steps)
            turn_apex.append(f in kept)
            if f in steps:
                clearance.append(params.side_step_clear_m)
            elif f in spurs:
                clearance.append(params.spur_min_m)
            else:
                clearance.append(end_clearance.get((k, f), params.junction_clearance_m))
    if not events:
        return np.zeros((0, 2)), []
    pts = np.asarray([[e.x_m, e.y_m] for e in events])
    if len(junctions_xy):
        dist, nearest = cKDTree(junctions_xy).query(pts)
        keep = dist > np.asarray(clearance)
        if short_spurs and params.spur_street_on_m is not None:
            near_spur = keep & np.asarray(spur_ends) & (dist <= params.junction_clearance_m)
            on = _streets_on(tracks, events, near_spur, params, params.spur_street_on_m, turns)
            keep &= ~_turned_past(events, on, partings, junctions_xy[nearest], params)
        if short_spurs and params.turn_pile_share is not None:
            asked = ~keep & np.asarray(turn_apex) & (dist <= params.junction_clearance_m)
            asked &= dist >= params.turn_pile_min_m
            shares = own_pile_shares(tracks, events, asked, junctions_xy[nearest], params, turns)
            keep |= asked & (shares >= params.turn_pile_share)
        events = [e for e, k in zip(events, keep, strict=True) if k]
        pts = pts[keep]
    if not events:
        return np.zeros((0, 2)), []
    pairs = cKDTree(pts).query_pairs(params.dead_end_merge_m, output_type="ndarray")
    return group_dead_ends(events, pts, pairs)


def _streets_on(
    tracks: Sequence[Track],
    events: Sequence[DeadEndEvent],
    asked: npt.NDArray[np.bool_],
    params: JunctionParams,
    reach_m: float,
    turns: TurnFindings,
) -> npt.NDArray[np.bool_]:
    """Per event, whether it is ``asked`` and another pass runs along the walker's street at
    the event's frame and ``reach_m`` beyond it, in the direction the walker came
    (:func:`~city360.pose_graph.track_turns.passes_along`): a turn back mid-street, not the
    end of a spur. The tracks' samples and their tree are ``turns``'."""
    on = np.zeros(len(events), dtype=bool)
    if not asked.any():
        return on
    samples, tree = turns.samples, turns.tree
    for n in np.flatnonzero(asked).tolist():
        event = events[n]
        track = tracks[event.track]
        at_arc = float(track.arc_m[event.frame])
        way = track.xy[event.frame] - track.point_at(at_arc - params.uturn_window_m)
        length = float(np.hypot(*way))
        if length == 0.0:
            continue
        way /= length
        came_deg = float(np.degrees(np.arctan2(way[0], way[1])))
        apex = track.xy[event.frame]
        on[n] = all(
            passes_along(tree, samples, point, event.track, at_arc, came_deg, params)
            for point in (apex, apex + reach_m * way)
        )
    return on


def own_pile_shares(
    tracks: Sequence[Track],
    events: Sequence[DeadEndEvent],
    asked: npt.NDArray[np.bool_],
    piles_xy: FloatArray,
    params: JunctionParams,
    turns: TurnFindings,
) -> npt.NDArray[np.float64]:
    """Per event (0 where not ``asked``), the share of the crossing votes within
    ``turn_pile_radius_m`` of its pile (``piles_xy``, one row per event, metres) that a pair
    with one sample on the event's own pass casts (its track, within ``turn_pile_reach_m`` of
    travel of its frame; :attr:`JunctionParams.turn_pile_share`). The votes are cast as
    :func:`~city360.pose_graph.junctions.crossing_votes` casts them from the samples near the
    pile (``turns``' samples), without its side-by-side and mid-street filters. With
    ``turn_pile_cross_deg`` the share is 0 where the walker's way into the apex (its last
    ``turn_pile_came_m``) runs within that angle (the median) of the other passes of those
    votes: it walked along their street and turned back past its junction."""
    shares = np.zeros(len(events), dtype=np.float64)
    xy, heading, owner, arc = turns.samples
    radius = params.turn_pile_radius_m
    for n in np.flatnonzero(asked).tolist():
        pile = piles_xy[n]
        near = np.asarray(
            turns.tree.query_ball_point(pile, radius + params.extrapolate_m), dtype=np.int64
        )
        if len(near) < 2:
            continue
        pairs = cKDTree(xy[near]).query_pairs(params.pair_radius_m, output_type="ndarray")
        if not len(pairs):
            continue
        i, j = near[pairs[:, 0]], near[pairs[:, 1]]
        other = (owner[i] != owner[j]) | (np.abs(arc[i] - arc[j]) > params.pass_separation_m)
        axial = np.abs(np.mod(heading[i] - heading[j] + 90.0, 180.0) - 90.0)
        votes = other & (axial >= params.min_angle_deg)
        i, j = i[votes], j[votes]
        hi, hj = np.radians(heading[i]), np.radians(heading[j])
        ui = np.column_stack([np.sin(hi), np.cos(hi)])
        uj = np.column_stack([np.sin(hj), np.cos(hj)])
        cross = ui[:, 0] * uj[:, 1] - ui[:, 1] * uj[:, 0]
        gap = xy[j] - xy[i]
        t = (gap[:, 0] * uj[:, 1] - gap[:, 1] * uj[:, 0]) / cross
        s = (gap[:, 0] * ui[:, 1] - gap[:, 1] * ui[:, 0]) / cross
        meet = xy[i] + t[:, None] * ui
        inside = (
            (np.abs(t) <= params.extrapolate_m)
            & (np.abs(s) <= params.extrapolate_m)
            & (np.hypot(*(meet - pile).T) <= radius)
        )
        if not inside.any():
            continue
        event = events[n]
        at_arc = float(tracks[event.track].arc_m[event.frame])
        ends = np.concatenate([i[inside], j[inside]])
        own = (owner[ends] == event.track) & (
            np.abs(arc[ends] - at_arc) <= params.turn_pile_reach_m
        )
        shares[n] = float(own.reshape(2, -1).any(axis=0).mean())
        if params.turn_pile_cross_deg is None or not (~own).any():
            continue
        track = tracks[event.track]
        way = track.xy[event.frame] - track.point_at(at_arc - params.turn_pile_came_m)
        if not np.hypot(*way) > 0.0:
            continue
        came_deg = np.degrees(np.arctan2(way[0], way[1]))
        across = np.abs(np.mod(heading[ends[~own]] - came_deg + 90.0, 180.0) - 90.0)
        if float(np.median(across)) < params.turn_pile_cross_deg:
            shares[n] = 0.0  # walked along the pile's street to turn back: a corner
    return shares


def _turned_past(
    events: Sequence[DeadEndEvent],
    asked: npt.NDArray[np.bool_],
    partings: Mapping[tuple[int, int], tuple[float, tuple[float, float]]],
    nearest_xy: FloatArray,
    params: JunctionParams,
) -> npt.NDArray[np.bool_]:
    """Per event, whether it is ``asked`` and its ways in and out part (``partings``, from
    :func:`~city360.pose_graph.track_turns._parting`, by (track, frame)) within
    ``spur_min_m`` of the junction nearest to it (``nearest_xy``, one row per event, metres),
    ``junction_clearance_m`` to twice that from it: the walker came through that junction
    and turned back just past it. Ways that part closer to the apex walked into a short stub
    and out (its end: Helsinki Bulevardi wander+stops seed 1 at (152.3, -6.6), 4.2 m from a
    true junction the votes missed). A walker who came up the street from farther (the ways
    part short of the junction, or far back) turned at the junction itself (Helsinki SE
    wander+stops camera seed 5 at (138.9, -181.4), 2.6 m from the true junction the votes put
    8 m off) or milled about."""
    past = np.zeros(len(events), dtype=bool)
    for n in np.flatnonzero(asked).tolist():
        parting = partings.get((events[n].track, events[n].frame))
        if parting is None or not (
            params.junction_clearance_m <= parting[0] <= 2.0 * params.junction_clearance_m
        ):
            continue  # a peek into a short stub (its end), or a walk back from far
        past[n] = bool(np.hypot(*(nearest_xy[n] - parting[1])) <= params.spur_min_m)
    return past


def group_dead_ends(
    events: Sequence[DeadEndEvent], points_xy: FloatArray, pairs: npt.NDArray[np.int64]
) -> tuple[FloatArray, list[list[DeadEndEvent]]]:
    """``events`` (at ``points_xy``, metres in the city CRS, one row each) linked by ``pairs``
    (rows of two event indices) into dead ends: ``(centres, grouped)``, each dead end's mean
    point and its events, dead ends in the order of their first event. An event no pair
    names is a dead end of its own."""
    labels = linked_groups(len(points_xy), pairs)
    count = int(labels.max()) + 1
    centres = np.asarray([points_xy[labels == c].mean(axis=0) for c in range(count)])
    grouped: list[list[DeadEndEvent]] = [[] for _ in range(count)]
    for event, label in zip(events, labels, strict=True):
        grouped[label].append(event)
    return centres, grouped
