"""A junction one of whose streets no pass leaves it by: a dead end beside a street (no OSM).

Two streets side by side, one of them a dead-end street whose end lies a few metres beside
the other (Helsinki Kamppi, the 30 m street ending at (-161, -17), 6.4-7.2 m from the
through street): the walkers who reach that end turn back there or start a video there, and
GPS brings the two streets 3-4 m together, so the passes of both cast a vote pile between
them and a junction is built of the through street's two halves and the dead-end street.

Every street of a real junction is reached from another of its streets by some pass, or
the videos of it start or end there or its walkers turn back there. What these rules read
(:func:`lone_arm_junctions`, on the junctions left after
:func:`~city360.pose_graph.apart.apart_junctions`): one street at the junction (the "lone"
street) that no pass leaves into another street there, reached there at least
:attr:`LoneArmParams.min_ends` times (U-turns, video ends), while at least two other streets
are linked by passes through the junction; and each way out along the lone street stays
within :attr:`LoneArmParams.beside_m` of the passes through the junction over its first
:attr:`LoneArmParams.reach_m`: it runs beside them. A fork's branch walked only from videos
that end at the fork leaves the trunk's passes (fresh Bulevardi (168, 94): 6.8-9.6 m off by
20 m), a T's stem meets them steeply; the dead-end street beside the through street stays
within 5.6 m of them (it runs 6-7 m from it, and its far end meets the same cross street).

Such a junction is dropped, and the passes through it are held uncut at any dead end within
:attr:`LoneArmParams.held_m` of travel of where they crossed it, in that cut and every later
one: without that, the dead-end street's end (3-7 m beside them by GPS) cuts them within
``SegmentParams.dead_end_pass_m`` and the junction is rebuilt there (Kamppi coverage with
stops 6: at (-159.4, -14.8)). With :attr:`LoneArmParams.single_end_off_m` a street met by
one video's end counts too when it runs beside the through passes from 10 m on, and dead
ends of three streets are read as junctions are (their passes held, nothing dropped). All
positions are metres in the city CRS.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from city360.geo import distance_to_polyline_m
from city360.pose_graph.segments import CutFilter, Segment, Street
from city360.pose_graph.tracks import Track

__all__ = ["LoneArmParams", "LoneArms", "lone_arm_junctions"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class LoneArmParams:
    """Tuning of :func:`lone_arm_junctions` (metres, counts)."""

    min_ends: int = 2
    """The lone street meets the junction at least this many times (a walker's U-turn there
    counts twice, a video's start or end once): a street walked back from there, not one
    video that ends at a junction (one-way walks' real junctions). Kamppi: one U-turn
    (coverage with stops 6), two video ends (wander 9). At 1, 8 rows of the 158 kept worse
    (Helsinki one-way 1 R 0.977 -> 0.969, Helsinki SE coverage 5 R 0.947 -> 0.895, ...)."""
    reach_m: float = 20.0
    """The lone street's ways out of the junction are read this far (metres of travel from
    where they are cut there), at every quarter of it."""
    beside_m: float = 6.0
    """... and at each of those points lie at most this far (metres) from some pass through
    the junction, read twice ``reach_m`` on from where it is cut there: a street that stays
    beside the others (Kamppi: 5.5-5.6 m at most), not a fork's branch that leaves them
    (fresh Bulevardi's fork (168, 94): 6.8-9.6 m by 20 m) or a stem that meets them steeply,
    which the scorer reads as a T (:mod:`city360.pose_graph.short_ends`)."""
    single_end_off_m: float | None = 3.0
    """A lone street met by one video's start or end alone (under ``min_ends``) counts too
    when its way out lies within :attr:`single_end_beside_m` of a pass through the node all
    along ``reach_m``, and at least this far (metres) from every such pass from half of
    ``reach_m`` on: it runs beside the through street from the node, neither on it nor away
    from it (a T's stem, a fork's branch of 20 degrees or more). The passes are read along
    their own streets only (to their next node). While set, dead ends of three streets are
    read too, by this test and by ``min_ends``' (a video's start or a walker's U-turn beside
    the pass cuts it within ``SegmentParams.dead_end_pass_m``): nothing is dropped there,
    the passes are held (Kamppi coverage with stops 14, a U-turn at (-161.1, -13.2)).
    Kamppi one-way 13: the votes' junction at the dead-end street's end (-161, -17), its way
    3.0-6.8 m beside the through pass from 5 m on. A way that runs on the pass for 10 m and
    then parts is not read: a true shallow fork's video end looks so (Helsinki SE one-way
    with stops 11 (138.2, -178.9), held-out Kaisaniemi wander 6 (109.5, -42.8)), and so does
    Kamppi one-way 7's dead end, which this leaves. None: only ``min_ends``."""
    single_end_beside_m: float = 7.0
    """The bound of ``beside_m`` for a lone street met once (see ``single_end_off_m``):
    Kamppi's dead-end street by one video's GPS, 6.6-6.8 m at most (one-way 13)."""
    held_m: float = 15.0
    """The passes through a dropped junction are not cut at a dead end within this many
    metres of travel of where they were cut at the junction (the dead-end street's end,
    3-7 m beside them by GPS)."""


@dataclass(frozen=True, slots=True)
class _End:
    """Where a segment of street ``street`` meets a node: track ``track`` at frame ``frame``,
    leaving the node toward increasing frames (``away`` +1) or decreasing (-1); ``other`` is
    the street of the same track's segment on the node's other side, None at a video's end."""

    street: int
    track: int
    frame: int
    away: int
    other: int | None
    far: int
    """The segment's frame at its other node."""


@dataclass(frozen=True, slots=True)
class LoneArms:
    """The junctions :func:`lone_arm_junctions` drops (``dropped``, one flag a junction) and
    the passes through them that no later cut may cut at a dead end (track, first frame,
    last frame)."""

    dropped: BoolArray
    passes: tuple[tuple[int, int, int], ...]

    def cut_filter(self, n_junctions: int) -> CutFilter:
        """A :data:`~city360.pose_graph.segments.CutFilter` for a cut with ``n_junctions``
        junctions: False for a frame of a held pass at a dead end (node id ``>=
        n_junctions``)."""
        held: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for track, first, last in self.passes:
            held[track].append((first, last))

        def may_cut(track: int, frames: IntArray, nodes: IntArray) -> BoolArray:
            allowed = np.ones(len(frames), dtype=bool)
            for first, last in held.get(track, ()):
                allowed &= ~((frames >= first) & (frames <= last) & (nodes >= n_junctions))
            return allowed

        return may_cut


def _ends_at(segments: Sequence[Segment], streets: Sequence[Street]) -> dict[int, list[_End]]:
    """Per node, the segment ends there."""
    street_of = {
        seg: street.id for street in streets for seg in (*street.forward, *street.backward)
    }
    departing = {(seg.track, seg.first_frame): i for i, seg in enumerate(segments)}
    arriving = {(seg.track, seg.last_frame): i for i, seg in enumerate(segments)}
    ends: dict[int, list[_End]] = defaultdict(list)
    for i, seg in enumerate(segments):
        if i not in street_of:
            continue
        for node, frame, away, other, far in (
            (seg.v, seg.last_frame, -1, departing, seg.first_frame),
            (seg.u, seg.first_frame, 1, arriving, seg.last_frame),
        ):
            next_seg = other.get((seg.track, frame))
            ends[node].append(
                _End(
                    street_of[i],
                    seg.track,
                    frame,
                    away,
                    None if next_seg is None else street_of.get(next_seg),
                    far,
                )
            )
    return ends


def _way_out(
    track: Track, end: _End, reach_m: float, marks: int, *, own: bool = False
) -> FloatArray:
    """Points (K, 2) of the way out of the node along ``end`` 's segment, from the cut to
    ``reach_m`` on in ``marks`` even steps of travel, those the video reaches (``own``: and
    those on the segment itself, not past its other node)."""
    arc = float(track.arc_m[end.frame])
    along = arc + end.away * reach_m * np.arange(marks + 1) / marks
    first, last = track.arc_m[0], track.arc_m[-1]
    if own:
        first, last = sorted((arc, float(track.arc_m[end.far])))
    along = along[(along >= first) & (along <= last)]
    return track.point_at(along).reshape(-1, 2)


def _lone_beside(
    tracks: Sequence[Track], ends: Sequence[_End], params: LoneArmParams
) -> list[_End] | None:
    """The passes through the junction (one end each) when one street among ``ends`` (those
    at one junction) is left by no pass into another and runs out beside a linked street
    (module docstring), else None."""
    streets = {end.street for end in ends}
    through = [end for end in ends if end.other is not None and end.other != end.street]
    linked = {end.street for end in through}
    lone = streets - linked
    if len(streets) < 3 or len(lone) != 1 or len(linked) < 2:
        return None
    (lone_street,) = lone
    reached = sum(end.street == lone_street for end in ends)
    single = reached < params.min_ends
    if single and (params.single_end_off_m is None or reached != 1):
        return None
    # a street met once is read against the passes' own streets only: past their next node
    # they may turn along a street beside the lone one (the through street itself, beside
    # the dead-end street that a pass down the cross street turns into, Kamppi seed 13)
    lines = [
        line
        for end in through
        if len(line := _way_out(tracks[end.track], end, 2 * params.reach_m, 8, own=single)) >= 2
    ]
    lone_ways = [
        _way_out(tracks[end.track], end, params.reach_m, 4)
        for end in ends
        if end.street == lone_street
    ]
    if not lines or not any(len(way) for way in lone_ways):
        return None
    gaps = [
        np.array([min(distance_to_polyline_m(point, line) for line in lines) for point in way])
        for way in lone_ways
    ]
    if single and params.single_end_off_m is not None:
        beside = all(
            len(gap) == 5
            and bool(np.all(gap <= params.single_end_beside_m))
            and bool(np.all(gap[2:] >= params.single_end_off_m))
            for gap in gaps
        )
    else:
        beside = all(bool(np.all(gap <= params.beside_m)) for gap in gaps)
    return through if beside else None


def lone_arm_junctions(
    tracks: Sequence[Track],
    junctions_xy: FloatArray,
    segments: Sequence[Segment],
    streets: Sequence[Street],
    params: LoneArmParams,
) -> LoneArms:
    """The junctions (rows of ``junctions_xy``, node ids ``0..len-1``) with one street no
    pass leaves them by, running out beside another of their streets (module docstring),
    and the passes through them."""
    n_junctions = len(np.asarray(junctions_xy).reshape(-1, 2))
    ends = _ends_at(segments, streets)
    dropped = np.zeros(n_junctions, dtype=bool)
    passes: list[tuple[int, int, int]] = []
    nodes = range(n_junctions)
    if params.single_end_off_m is not None:
        nodes = range(max([n_junctions - 1, *ends]) + 1)
    for node in nodes:
        through = _lone_beside(tracks, ends.get(node, []), params)
        if through is None:
            continue
        if node < n_junctions:
            dropped[node] = True
        for end in through:
            track = tracks[end.track]
            arc = float(track.arc_m[end.frame])
            first, last = np.searchsorted(track.arc_m, [arc - params.held_m, arc + params.held_m])
            passes.append((end.track, int(first), int(min(last, len(track) - 1))))
    return LoneArms(dropped, tuple(passes))
