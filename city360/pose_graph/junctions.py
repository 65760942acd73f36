"""Junctions found from trajectories alone.

A junction is where passes along different streets meet. Every pair of track samples closer
than ``pair_radius_m`` (:class:`~city360.pose_graph.junction_params.JunctionParams`) that
belongs to different passes (another trajectory, or the same trajectory more than
``pass_separation_m`` further along) and runs at clearly different axial headings (a street has
no preferred direction, so 10° and 190° are the same street) votes for the point where the two
local direction lines intersect. That covers crossings, near-approaches that never touch
because of GPS noise, turns, and T-junctions where a trajectory starts or ends short of another
(the vote may lie up to ``extrapolate_m`` beyond the samples). Votes are clustered
DBSCAN-style and each dense cluster's median becomes a junction
(:mod:`city360.pose_graph.vote_piles`). Passes along the same street, in the same or opposite
direction, vote for nothing: they are merged into one street later
(:mod:`city360.pose_graph.segments`).

The roots of out-and-back spurs (:func:`~city360.pose_graph.track_turns.spur_roots`) and,
without OSM, the places where two passes' corners meet or where passes that came along one
path part (:mod:`city360.pose_graph.corner_meets`, :mod:`city360.pose_graph.pass_partings`)
join the vote piles' centres; junctions closer than ``merge_m`` are merged
(:mod:`city360.pose_graph.junction_merges`). Tuning:
:class:`~city360.pose_graph.junction_params.JunctionParams`; dead ends:
:mod:`city360.pose_graph.dead_ends`.

All positions are metres in the city CRS; all work is vectorised over samples with
``scipy.spatial.cKDTree`` and ``scipy.sparse.csgraph``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from city360.pose_graph.corner_meets import corner_meets
from city360.pose_graph.junction_merges import JunctionParts, merge_found
from city360.pose_graph.junction_params import JunctionParams
from city360.pose_graph.pass_partings import pass_partings
from city360.pose_graph.track_turns import (
    TurnFindings,
    passes_along,
    spur_roots,
    uturn_stretches,
)
from city360.pose_graph.tracks import Track, TrackSamples, sample_tracks
from city360.pose_graph.vote_passes import pair_test, part_test
from city360.pose_graph.vote_piles import cluster_centres, cluster_piles

__all__ = ["crossing_votes", "find_junction_parts", "find_junctions", "mid_street_turns"]

FloatArray = npt.NDArray[np.float64]


def crossing_votes(
    tracks: Sequence[Track], params: JunctionParams, *, without_osm: bool = False
) -> FloatArray:
    """Intersection points (V, 2) of the direction lines of nearby samples on different
    streets; dense where streets meet."""
    return _cast_votes(tracks, params, without_osm=without_osm)[0]


def _chords(
    tracks: Sequence[Track],
    owner: npt.NDArray[np.int64],
    arc: FloatArray,
    reach_m: float,
) -> tuple[FloatArray, FloatArray]:
    """Each sample's chord on its own track, from ``reach_m`` of travel before it to
    ``reach_m`` after it (cut short at the track's ends): its midpoint (S, 2) and its unit
    direction (S, 2), both in metres east/north."""
    mid = np.zeros((len(arc), 2))
    way = np.zeros((len(arc), 2))
    for k, track in enumerate(tracks):
        mine = owner == k
        if not mine.any():
            continue
        ends = []
        for shift in (-reach_m, reach_m):
            at = np.clip(arc[mine] + shift, track.arc_m[0], track.arc_m[-1])
            ends.append(
                np.column_stack([np.interp(at, track.arc_m, track.xy[:, c]) for c in (0, 1)])
            )
        mid[mine] = 0.5 * (ends[0] + ends[1])
        way[mine] = ends[1] - ends[0]
    length = np.hypot(*way.T)
    way = way / np.where(length > 0, length, 1.0)[:, None]
    return mid, way


def _side_by_side(
    tracks: Sequence[Track],
    samples: TrackSamples,
    pairs: npt.NDArray[np.int64],
    params: JunctionParams,
    *,
    chord_m: float,
) -> npt.NDArray[np.bool_]:
    """Which sample ``pairs`` (P,) lie on two passes that run side by side: their chords
    (``chord_m`` of travel either way) within ``min_angle_deg`` of each other and the one's
    midpoint ``vote_apart_m`` or more off the other's line."""
    _, _, owner, arc = samples
    mid, way = _chords(tracks, owner, arc, chord_m)
    i, j = pairs[:, 0], pairs[:, 1]
    cos = np.abs(np.sum(way[i] * way[j], axis=1))
    parallel = cos >= np.cos(np.radians(params.min_angle_deg))
    gap = mid[j] - mid[i]
    off = np.abs(way[i, 0] * gap[:, 1] - way[i, 1] * gap[:, 0])
    return parallel & (off >= params.vote_apart_m)


def _cast_votes(
    tracks: Sequence[Track], params: JunctionParams, *, without_osm: bool = False
) -> tuple[FloatArray, TrackSamples]:
    """:func:`crossing_votes` (V, 2) and the samples that cast them
    (:func:`~city360.pose_graph.tracks.sample_tracks`)."""
    samples = sample_tracks(tracks, params.sample_step_m)
    xy, heading, owner, arc = samples
    pairs = cKDTree(xy).query_pairs(params.pair_radius_m, output_type="ndarray")
    if pairs.size == 0:
        return np.zeros((0, 2)), samples
    i, j = pairs[:, 0], pairs[:, 1]
    other_pass = (owner[i] != owner[j]) | (np.abs(arc[i] - arc[j]) > params.pass_separation_m)
    axial = np.abs(np.mod(heading[i] - heading[j] + 90.0, 180.0) - 90.0)
    keep = other_pass & (axial >= params.min_angle_deg)
    if without_osm and params.vote_chord_m is not None:
        keep[keep] &= ~_side_by_side(
            tracks, samples, pairs[keep], params, chord_m=params.vote_chord_m
        )
    if params.quiet_turn_backs:
        keep = _loud_turns(tracks, samples, pairs, keep, params)
    return _votes(samples, pairs[keep], params), samples


def _votes(
    samples: TrackSamples,
    pairs: npt.NDArray[np.int64],
    params: JunctionParams,
) -> FloatArray:
    """Where the direction lines of each pair of ``samples`` meet (V, 2), those within
    ``extrapolate_m`` of both samples."""
    points, ok = _meets(samples, pairs, params)
    return points[ok]


def _meets(
    samples: TrackSamples,
    pairs: npt.NDArray[np.int64],
    params: JunctionParams,
) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """Where the direction lines of each pair of ``samples`` meet (P, 2), and whether that
    lies within ``extrapolate_m`` of both samples (P,)."""
    xy, heading, _, _ = samples
    i, j = pairs[:, 0], pairs[:, 1]
    hi, hj = np.radians(heading[i]), np.radians(heading[j])
    ui = np.column_stack([np.sin(hi), np.cos(hi)])
    uj = np.column_stack([np.sin(hj), np.cos(hj)])
    cross = ui[:, 0] * uj[:, 1] - ui[:, 1] * uj[:, 0]
    w = xy[j] - xy[i]
    t = (w[:, 0] * uj[:, 1] - w[:, 1] * uj[:, 0]) / cross
    s = (w[:, 0] * ui[:, 1] - w[:, 1] * ui[:, 0]) / cross
    ok = (np.abs(t) <= params.extrapolate_m) & (np.abs(s) <= params.extrapolate_m)
    points = np.asarray(xy[i] + t[:, None] * ui, dtype=np.float64).reshape(-1, 2)
    return points, ok


def mid_street_turns(
    tracks: Sequence[Track],
    samples: TrackSamples,
    params: JunctionParams,
) -> npt.NDArray[np.int64]:
    """For each of the voting ``samples`` (positions, headings, owning track, arc length, as
    :func:`crossing_votes` takes them) the U-turn mid-street it lies in (0, 1, ... in the
    order found; -1: none): a U-turn (:func:`~city360.pose_graph.track_turns.uturn_stretches`)
    beyond whose apex, ``turn_back_reach_m`` on in the direction the walker came, another pass
    runs along the same street (within ``turn_back_near_m`` of that point, heading within
    ``min_angle_deg`` of that direction, either way). A U-turn at the end of a street or of a
    spur has no such pass and keeps its votes: there the turn may be all that tells a stub
    from the street it leaves."""
    xy, heading, owner, arc = samples
    turning = np.full(len(xy), -1, dtype=np.int64)
    tree: cKDTree | None = None
    for k, track in enumerate(tracks):
        stretches = uturn_stretches(track, params)
        apexes = track.xy[[(first + stop - 1) // 2 for first, stop in stretches]]
        for n, (first, stop) in enumerate(stretches):
            if track.arc_m[stop - 1] - track.arc_m[first] > params.turn_back_max_m:
                continue
            apex = (first + stop - 1) // 2
            if params.turn_back_alone and len(stretches) > 1:
                gaps = np.hypot(*(np.delete(apexes, n, axis=0) - track.xy[apex]).T)
                if gaps.min() <= params.turn_back_reach_m:
                    continue  # turning back and forth: milling about at a stop
            # the way the walker came, measured before the turn began
            came_from = track.point_at(float(track.arc_m[first]) - params.uturn_window_m)
            way = track.xy[first] - came_from
            length = float(np.hypot(*way))
            if length == 0.0:
                continue
            way /= length
            came_deg = np.degrees(np.arctan2(way[0], way[1]))
            if params.turn_back_same_street:
                # the way the walker went, measured after the turn ended: back along the
                # street it came on, or off along another (a sharp corner at a junction)
                went = track.point_at(float(track.arc_m[stop - 1]) + params.uturn_window_m)
                went = went - track.xy[stop - 1]
                if np.hypot(*went) > 0.0:
                    went_deg = np.degrees(np.arctan2(went[0], went[1]))
                    if _axial_deg(went_deg, came_deg) >= params.min_angle_deg:
                        continue
            if tree is None:
                tree = cKDTree(xy)
            # passes along the street at the apex and beyond it: the street goes on
            if not all(
                passes_along(
                    tree, (xy, heading, owner, arc), point, k, track.arc_m[apex], came_deg, params
                )
                for point in (track.xy[apex], track.xy[apex] + params.turn_back_reach_m * way)
            ):
                continue
            if params.turn_back_clear_m > 0:
                # another street within reach: the turn's votes may be that junction's
                close = np.asarray(
                    tree.query_ball_point(track.xy[apex], params.turn_back_clear_m), np.int64
                )
                # any other pass, the walker's own too (a route walk crosses its street
                # once, on another pass of the same video)
                other = (owner[close] != k) | (
                    np.abs(arc[close] - track.arc_m[apex]) > params.pass_separation_m
                )
                close = close[other]
                across = np.abs(np.mod(heading[close] - came_deg + 90.0, 180.0) - 90.0)
                if (across >= params.min_angle_deg).any():
                    continue
            mine = (owner == k) & (arc >= track.arc_m[first]) & (arc <= track.arc_m[stop - 1])
            turning[mine] = int(turning.max()) + 1
    return turning


def _axial_deg(a_deg: float, b_deg: float) -> float:
    """Angle between two lines of bearings ``a_deg`` and ``b_deg``, 0..90 degrees."""
    return float(abs(np.mod(a_deg - b_deg + 90.0, 180.0) - 90.0))


def _loud_turns(
    tracks: Sequence[Track],
    samples: TrackSamples,
    pairs: npt.NDArray[np.int64],
    voting: npt.NDArray[np.bool_],
    params: JunctionParams,
) -> npt.NDArray[np.bool_]:
    """Which of the sample ``pairs`` may still vote (``voting``: those that would): all but
    those of a U-turn mid-street (:func:`mid_street_turns`) whose votes (their median) lie
    farther than ``merge_m`` from every junction the other votes make. A turn next to a
    junction adds its votes to that junction's (Helsinki wander seed 2: a walker turning back
    6 m short of a T between two Ts 15 m apart; without its votes one of them was lost)."""
    turning = mid_street_turns(tracks, samples, params)
    i, j = pairs[:, 0], pairs[:, 1]
    turn = np.maximum(turning[i], turning[j])
    quiet = voting & (turn >= 0)
    if not quiet.any():
        return voting
    others = _votes(samples, pairs[voting & (turn < 0)], params)
    centres, _ = cluster_centres(
        others,
        eps_m=params.cluster_eps_m,
        min_votes=params.cluster_min_votes,
        min_support=params.min_support,
    )
    keep = voting.copy()
    for label in np.unique(turn[quiet]):
        mine = quiet & (turn == label)
        votes = _votes(samples, pairs[mine], params)
        if len(votes) and len(centres):
            where = np.median(votes, axis=0)
            if float(np.hypot(*(centres - where).T).min()) <= params.merge_m:
                continue  # beside a junction: its votes are that junction's
        keep &= ~mine
    return keep


def find_junctions(
    tracks: Sequence[Track], params: JunctionParams | None = None, *, without_osm: bool = False
) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """Junction positions (J, 2) in metres and their vote support (J,): see
    :func:`find_junction_parts`."""
    centres, support, _, _ = find_junction_parts(tracks, params, without_osm=without_osm)
    return centres, support


def find_junction_parts(
    tracks: Sequence[Track],
    params: JunctionParams | None = None,
    *,
    without_osm: bool = False,
    turns: TurnFindings | None = None,
) -> JunctionParts:
    """Junction positions (J, 2) in metres and their vote support (J,), from poses alone:
    clusters of crossing votes and the roots of out-and-back spurs
    (:func:`~city360.pose_graph.track_turns.spur_roots`, each counted with ``min_support``);
    ``without_osm`` (the build without a map) also the places where two passes' corners meet
    (``params.corners``); and for each junction whether it is a part of a vote pile parted at
    its peaks (``params.split_peaks_m``), and whether that pile was parted at a peak under
    ``split_peaks_m`` from another (``params.split_close_m``). ``turns``
    (:func:`~city360.pose_graph.track_turns.find_turns` of the same tracks and ``params``)
    holds the spurs' U-turns when found already."""
    params = params or JunctionParams()
    votes, samples = _cast_votes(tracks, params, without_osm=without_osm)
    split = params.split_peaks_m if without_osm else None
    test = None
    if split is not None and params.split_crossed_m is not None:
        test = part_test(tracks, samples, params, params.split_crossed_m)
    centres, support, group, born = cluster_piles(
        votes,
        eps_m=params.cluster_eps_m,
        min_votes=params.cluster_min_votes,
        min_support=params.min_support,
        cell_m=0.5,
        split_peaks_m=split,
        split_saddle=params.split_saddle,
        split_share=params.split_share,
        split_part_votes=params.split_part_votes,
        part_test=test,
        close_m=params.split_close_m if split is not None else None,
        close_test=(
            pair_test(tracks, samples, params)
            if split is not None and params.split_close_m is not None
            else None
        ),
    )
    roots = spur_roots(tracks, params, peeks=without_osm, turns=turns)
    if without_osm and params.corners is not None:
        roots = np.concatenate([roots.reshape(-1, 2), corner_meets(tracks, params.corners)])
    if without_osm and params.partings is not None:
        forks = pass_partings(tracks, params.partings)
        clear_m = params.partings.clear_m
        found = np.concatenate([centres.reshape(-1, 2), roots.reshape(-1, 2)])
        if clear_m is not None and len(forks) and len(found):
            forks = forks[cKDTree(found).query(forks)[0] >= clear_m]
        roots = np.concatenate([roots.reshape(-1, 2), forks])
    roots = roots.reshape(-1, 2)
    apart = np.zeros(len(roots), dtype=bool)
    if without_osm and params.root_apart_m is not None and len(roots) and len(centres):
        apart = cKDTree(centres.reshape(-1, 2)).query(roots)[0] > params.root_apart_m
        for k in np.flatnonzero(apart):
            apart[k] = _ways(tracks, roots[k], params) >= params.root_apart_ways
    return merge_found(centres, support, group, born, roots, params, apart=apart)


def _ways(tracks: Sequence[Track], point: FloatArray, params: JunctionParams) -> int:
    """How many ways the passes within ``root_way_reach_m`` of ``point`` leave it: the
    directed bearings from ``point`` of each pass's positions ``root_way_leg_m`` on and back
    from its nearest sample, grouped where consecutive bearings lie under ``root_way_deg``
    apart (:attr:`JunctionParams.root_apart_ways`)."""
    bearings: list[float] = []
    for track in tracks:
        gap = np.hypot(*(track.xy - point).T)
        near = np.flatnonzero(gap < params.root_way_reach_m)
        if not len(near):
            continue
        runs = np.split(
            near, np.flatnonzero(np.diff(track.arc_m[near]) > params.root_way_leg_m) + 1
        )
        for run in runs:
            arc = float(track.arc_m[run[np.argmin(gap[run])]])
            for way in (arc + params.root_way_leg_m, arc - params.root_way_leg_m):
                if 0.0 <= way <= track.length_m:
                    east, north = track.point_at(way) - point
                    bearings.append(float(np.degrees(np.arctan2(east, north)) % 360.0))
    if not bearings:
        return 0
    ordered = np.sort(bearings)
    gaps = np.diff(np.append(ordered, ordered[0] + 360.0))
    return max(int((gaps >= params.root_way_deg).sum()), 1)
