"""Which passes make a part of a vote pile: the evidence that a part is a junction of its own.

:func:`city360.pose_graph.vote_piles._peaks` parts a vote pile at its density peaks
(``JunctionParams.split_peaks_m``). Most parts stand at a second true junction, but some
stand beside one: two passes that run close past a crossing, or along a bent street, meet
at a slant and pile a few hundred votes 9-20 m from any junction (Helsinki wander seed 1 at
(-465.3, -296.9) and (-473.1, -300.5): two passes and one). A true junction is a place
where passes go different ways: some pass by along one street and others along another, or
turn there. :func:`part_test` reads that from the passes themselves.

Two peaks of one pile closer than ``split_peaks_m`` (two true junctions 8-10 m apart pile
their votes 7 m apart: the passes between them pull the piles together) are parted only on
:func:`pair_test`: each peak has passes that leave it along a street no pass leaves the
other along. One junction whose votes spread has the same streets at both of its tops; a
knot has different ones.

A pass is one visit of one trajectory: its samples near a place, parted where the arc
between two of them jumps by more than ``pass_separation_m`` (the walker came back).
Positions are metres in the city frame; headings degrees clockwise from north.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from city360.pose_graph.tracks import Track, TrackSamples

if TYPE_CHECKING:
    from city360.pose_graph.junction_params import JunctionParams

__all__ = ["own_arms_deg", "pair_test", "part_test", "route_spread_deg"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def _pass_labels(owner: IntArray, arc: FloatArray, separation_m: float) -> IntArray:
    """A pass id (0..P-1) for each sample (``owner``, ``arc``): samples of one track whose
    arcs, sorted, follow each other within ``separation_m`` are one pass."""
    order = np.lexsort((arc, owner))
    new = np.ones(len(order), dtype=bool)
    if len(order) > 1:
        new[1:] = (np.diff(owner[order]) != 0) | (np.diff(arc[order]) > separation_m)
    labels = np.empty(len(order), dtype=np.int64)
    labels[order] = np.cumsum(new) - 1
    return labels


def _axial(a_deg: FloatArray, b_deg: FloatArray) -> FloatArray:
    """Axial angle (0..90 degrees) between headings: a street has no direction."""
    return np.abs(np.mod(a_deg - b_deg + 90.0, 180.0) - 90.0)


def route_spread_deg(
    tracks: Sequence[Track],
    samples: TrackSamples,
    tree: cKDTree,
    centre: FloatArray,
    *,
    radius_m: float,
    leg_m: float,
    separation_m: float,
) -> float:
    """How far apart (0..90 degrees) the ways of two passes by ``centre`` are: each pass
    within ``radius_m`` comes in along one leg and leaves along another (its chords from
    ``leg_m`` before its closest sample to it, and on to ``leg_m`` after); two passes' ways
    differ by the larger angle between their legs, paired the closer way. Passes along one
    street, straight or round one bend, give about 0, however much the street bends; a pass
    along a street and one crossing it or turning off, the angle between the streets.
    Chords, not sample headings: a walker cutting a corner heads along the street it joins
    at its closest sample already."""
    xy, _, owner, arc = samples
    near = np.asarray(tree.query_ball_point(centre, radius_m), dtype=np.int64)
    if near.size == 0:
        return 0.0
    labels = _pass_labels(owner[near], arc[near], separation_m)
    gaps = np.hypot(*(xy[near] - centre).T)
    ways: list[tuple[float, float]] = []
    for label in np.unique(labels):
        closest = int(near[labels == label][np.argmin(gaps[labels == label])])
        track = tracks[int(owner[closest])]
        here = float(arc[closest])
        ends = track.point_at(np.asarray([here - leg_m, here, here + leg_m]))
        legs = [
            float(np.degrees(np.arctan2(*(b - a))))
            for a, b in ((ends[0], ends[1]), (ends[1], ends[2]))
            if np.hypot(*(b - a)) > 0.25 * leg_m  # a track's end: no leg there
        ]
        if legs:
            ways.append((legs[0], legs[-1]))
    if len(ways) < 2:
        return 0.0
    way = np.asarray(ways)
    inn, out = way[:, 0], way[:, 1]
    straight = np.maximum(_axial(inn[:, None], inn[None, :]), _axial(out[:, None], out[None, :]))
    crossed = np.maximum(_axial(inn[:, None], out[None, :]), _axial(out[:, None], inn[None, :]))
    return float(np.minimum(straight, crossed).max())


def part_test(
    tracks: Sequence[Track],
    samples: TrackSamples,
    params: JunctionParams,
    radius_m: float,
) -> Callable[[FloatArray], bool]:
    """A test for a part of a vote pile, given its median: a junction of its own when the
    ways of the passes within ``radius_m`` of it differ by ``params.split_ways_deg`` or more
    (:func:`route_spread_deg` with legs of ``params.split_leg_m``)."""
    tree = cKDTree(samples[0])

    def test(centre: FloatArray) -> bool:
        spread = route_spread_deg(
            tracks,
            samples,
            tree,
            centre,
            radius_m=radius_m,
            leg_m=params.split_leg_m,
            separation_m=params.pass_separation_m,
        )
        return spread >= params.split_ways_deg

    return test


def own_arms_deg(
    tracks: Sequence[Track],
    samples: TrackSamples,
    tree: cKDTree,
    centre: FloatArray,
    other: FloatArray,
    *,
    radius_m: float,
    leg_m: float,
    clear_m: float,
    separation_m: float,
    axis_deg: float,
) -> FloatArray:
    """The arms (A,) of the passes by ``centre``, as headings in degrees leaving it, that
    do not lead to ``other``.

    Each pass within ``radius_m`` of ``centre`` gives its two legs, from its closest sample
    back ``leg_m`` and on ``leg_m``, turned to point away from ``centre``; a leg that comes
    within ``clear_m`` of ``other``, or runs within ``axis_deg`` (axially) of the line from
    ``centre`` to ``other``, is left out: the link between the two and the street running on
    through both are shared, whatever the place is."""
    xy, _, owner, arc = samples
    near = np.asarray(tree.query_ball_point(centre, radius_m), dtype=np.int64)
    if near.size == 0:
        return np.zeros(0)
    labels = _pass_labels(owner[near], arc[near], separation_m)
    gaps = np.hypot(*(xy[near] - centre).T)
    axis = float(np.degrees(np.arctan2(*(other - centre))))
    arms: list[float] = []
    for label in np.unique(labels):
        closest = int(near[labels == label][np.argmin(gaps[labels == label])])
        track = tracks[int(owner[closest])]
        here = float(arc[closest])
        ends = track.point_at(np.asarray([here - leg_m, here, here + leg_m]))
        for end, lo, hi in ((ends[0], here - leg_m, here), (ends[2], here, here + leg_m)):
            if np.hypot(*(end - ends[1])) <= 0.25 * leg_m:
                continue  # a track's end: no leg there
            leg = track.xy[(track.arc_m >= lo) & (track.arc_m <= hi)]
            if np.hypot(*(np.vstack([leg, end]) - other).T).min() < clear_m:
                continue  # a leg by the other: it tells nothing of which is which
            arm = float(np.degrees(np.arctan2(*(end - ends[1]))))
            if _axial(np.asarray(arm), np.asarray(axis)) >= axis_deg:
                arms.append(arm % 360.0)
    return np.asarray(arms, dtype=np.float64)


def pair_test(
    tracks: Sequence[Track], samples: TrackSamples, params: JunctionParams
) -> Callable[[FloatArray, FloatArray], bool]:
    """A test for two peaks of one vote pile closer than ``params.split_peaks_m``: two
    junctions when each has an arm (:func:`own_arms_deg`, legs ending
    ``params.split_close_clear_m`` or more from the other) that turns
    ``params.split_close_arm_deg`` or more from every arm of the other."""
    tree = cKDTree(samples[0])

    def arms(centre: FloatArray, other: FloatArray) -> FloatArray:
        return own_arms_deg(
            tracks,
            samples,
            tree,
            centre,
            other,
            radius_m=params.split_crossed_m or 3.0,
            leg_m=params.split_leg_m,
            clear_m=params.split_close_clear_m,
            separation_m=params.pass_separation_m,
            axis_deg=params.split_ways_deg,
        )

    def apart(a_arms: FloatArray, b_arms: FloatArray) -> bool:
        turn = np.abs(np.mod(a_arms[:, None] - b_arms[None, :] + 180.0, 360.0) - 180.0)
        return bool((turn.min(axis=1) >= params.split_close_arm_deg).any())

    def test(a: FloatArray, b: FloatArray) -> bool:
        a_arms, b_arms = arms(a, b), arms(b, a)
        if a_arms.size == 0 or b_arms.size == 0:
            return False
        return apart(a_arms, b_arms) and apart(b_arms, a_arms)

    return test
