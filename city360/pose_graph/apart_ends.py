"""A video's end that cut a pass beside it, read again once their junction is dropped (no OSM).

A video that starts (or ends) a few metres beside another walker's pass cuts that pass
within ``SegmentParams.dead_end_pass_m``: the dead end is taken to lie on the pass's street.
While both then run on to one junction as one street, nothing says otherwise. When
:func:`~city360.pose_graph.apart.apart_junctions` drops that junction as two streets side by
side, the video and the pass were never on one street: the video's end now parts them, and
the dead end becomes a node of three streets that no true junction stands at (Helsinki
Kamppi one-way 7: walk_002 starts 0.5 m off walk_001's line at the 30 m dead-end street's
end (-163.4, -13.6), runs with walk_001 to (-153.8, -7.1) and parts there; that junction is
dropped, and the dead end of three is scored 30 m from any true junction).

What tells the two apart is what the video does at the dropped junction: beside the pass,
it leaves there by another street than the pass (Kamppi: walk_002 down the dead-end street,
walk_001 along the through street); on the pass's street, it goes on with the pass (the old
town's held-out coverage 6, a video ending at (-125.9, 5.5) on the street the pass and it
share past the junction dropped at (-117.3, 9.5)), and the cut stands.

:func:`apart_end_passes` lists those passes so that the cuts after the drop leave them uncut
at a dead end near where they were cut (as
:attr:`~city360.pose_graph.lone_arms.LoneArms.passes` are held;
:attr:`~city360.pose_graph.apart.ApartParams.dead_end_held_m`). Positions are metres in the
city CRS.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from city360.pose_graph.segments import Segment, Street
from city360.pose_graph.tracks import Track

__all__ = ["apart_end_passes"]

BoolArray = npt.NDArray[np.bool_]


def apart_end_passes(
    tracks: Sequence[Track],
    segments: Sequence[Segment],
    streets: Sequence[Street],
    dropped: BoolArray,
    *,
    held_m: float,
) -> tuple[tuple[int, int, int], ...]:
    """The passes (track, first frame, last frame) to hold uncut at dead ends once the
    junctions flagged in ``dropped`` (J,) are gone.

    Read on the cut the junctions were dropped from (``segments`` and ``streets`` of
    :func:`~city360.pose_graph.segments.cut_tracks` / ``group_streets``; nodes ``0 .. J-1``
    are the junctions, the rest dead ends): a street from a dropped junction to a dead end,
    holding a video that ends at the dead end and a pass that goes on through it into
    another street (not a walker's turn-back there), the two leaving the junction by
    different streets: they parted there. That pass is held over ``held_m`` metres of travel
    either side of where it was cut there. Where the video goes on with the pass, it ended
    on the pass's street and the pass is cut there as before.
    """
    n_junctions = len(dropped)
    gone = {int(node) for node in np.flatnonzero(dropped)}
    if not gone:
        return ()
    # per (track, frame) where a segment starts or ends: the street the track goes on by
    street_of = {i: street.id for street in streets for i in (*street.forward, *street.backward)}
    starts = {(seg.track, seg.first_frame): street_of.get(i) for i, seg in enumerate(segments)}
    ends = {(seg.track, seg.last_frame): street_of.get(i) for i, seg in enumerate(segments)}
    held: list[tuple[int, int, int]] = []
    for street in streets:
        if street.a in gone and street.b >= n_junctions:
            dead_end = street.b
        elif street.b in gone and street.a >= n_junctions:
            dead_end = street.a
        else:
            continue
        ended: set[int | None] = set()  # the streets the videos ending here go on by
        through = []
        for i in (*street.forward, *street.backward):
            seg = segments[i]
            if seg.u == dead_end:
                frame, other = seg.first_frame, ends
                beyond = starts.get((seg.track, seg.last_frame))
            else:
                frame, other = seg.last_frame, starts
                beyond = ends.get((seg.track, seg.first_frame))
            if (seg.track, frame) not in other:
                ended.add(beyond)
            elif other[seg.track, frame] not in (None, street.id):
                through.append((seg.track, frame, beyond))  # not a walker's turn-back
        ended.discard(None)
        for track, frame, beyond in through:
            if not ended or beyond is None or beyond in ended:
                continue  # the video goes on with the pass: it ended on the pass's street
            arc = tracks[track].arc_m
            first, last = np.searchsorted(arc, [arc[frame] - held_m, arc[frame] + held_m])
            held.append((track, int(first), int(min(last, len(arc) - 1))))
    return tuple(held)
