"""Piles of crossing votes: DBSCAN-style clusters (core points with enough neighbours,
connected components over core points), each dense cluster's median a junction, and the
parting of one pile at its peaks (``split_peaks_m``) where two junctions' votes run together.

Votes and centres are metres in the city CRS; :mod:`city360.pose_graph.junctions` casts the
votes and reads the piles.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from city360.pose_graph.grouping import linked_groups

__all__ = ["cluster_centres", "cluster_piles"]

FloatArray = npt.NDArray[np.float64]


def _weighted_median(values: FloatArray, weights: FloatArray) -> float:
    order = np.argsort(values)
    cumulative = np.cumsum(weights[order])
    return float(values[order][np.searchsorted(cumulative, 0.5 * cumulative[-1])])


def cluster_centres(
    points: FloatArray,
    *,
    eps_m: float,
    min_votes: int,
    min_support: int,
    cell_m: float = 0.5,
    split_peaks_m: float | None = None,
    split_saddle: float = 0.5,
    split_share: float = 0.0,
    split_part_votes: int = 0,
) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """DBSCAN-like clustering of ``points``: returns cluster medians (C, 2) and sizes (C,).

    Votes pile up by the thousand at busy junctions, so they are first binned into
    ``cell_m`` cells (weight = votes in the cell). Core cells have at least ``min_votes`` votes
    within ``eps_m``; clusters are connected components of core cells; clusters with fewer than
    ``min_support`` votes in core cells are noise. Centres are per-axis weighted medians.
    With ``split_peaks_m`` a cluster is first parted at its density peaks (:func:`_peaks`).
    """
    centres, support, _, _ = cluster_piles(
        points,
        eps_m=eps_m,
        min_votes=min_votes,
        min_support=min_support,
        cell_m=cell_m,
        split_peaks_m=split_peaks_m,
        split_saddle=split_saddle,
        split_share=split_share,
        split_part_votes=split_part_votes,
    )
    return centres, support


def cluster_piles(
    points: FloatArray,
    *,
    eps_m: float,
    min_votes: int,
    min_support: int,
    cell_m: float,
    split_peaks_m: float | None,
    split_saddle: float,
    split_share: float,
    split_part_votes: int,
    part_test: Callable[[FloatArray], bool] | None = None,
    close_m: float | None = None,
    close_test: Callable[[FloatArray, FloatArray], bool] | None = None,
) -> tuple[FloatArray, npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """:func:`cluster_centres`, and for each centre the cluster it was parted from (-1: a
    whole cluster) and whether that cluster was parted at a peak under ``split_peaks_m``
    from another (``close_m``). ``part_test``: given the median of a part of a parted
    cluster, whether it may stay apart (all but the largest part are asked). ``close_m``,
    ``close_test``: peaks from ``close_m`` to ``split_peaks_m`` apart that ``close_test``
    (given the two peak cells' positions) passes part the cluster too (:func:`_peaks`)."""
    empty = (
        np.zeros((0, 2)),
        np.zeros(0, dtype=np.int64),
        np.zeros(0, dtype=np.int64),
        np.zeros(0, dtype=bool),
    )
    if len(points) == 0:
        return empty
    cell = np.floor(points / cell_m).astype(np.int64)
    cell -= cell.min(axis=0)
    key = cell[:, 0] * (int(cell[:, 1].max()) + 1) + cell[:, 1]  # 1-D keys sort far faster
    _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    weight = counts.astype(np.float64)
    centres = np.column_stack(
        [
            np.bincount(inverse, weights=points[:, 0]) / weight,
            np.bincount(inverse, weights=points[:, 1]) / weight,
        ]
    )
    pairs = cKDTree(centres).query_pairs(eps_m, output_type="ndarray")
    density = weight.copy()
    if pairs.size:
        np.add.at(density, pairs[:, 0], weight[pairs[:, 1]])
        np.add.at(density, pairs[:, 1], weight[pairs[:, 0]])
    core = density >= min_votes
    if not core.any():
        return empty
    core_pairs = pairs[core[pairs[:, 0]] & core[pairs[:, 1]]] if pairs.size else pairs
    labels = linked_groups(len(centres), core_pairs)
    whole = labels.copy()

    def median(cells: npt.NDArray[np.int64]) -> FloatArray:
        return np.asarray(
            [
                _weighted_median(centres[cells, 0], weight[cells]),
                _weighted_median(centres[cells, 1], weight[cells]),
            ]
        )

    close_born: set[int] = set()
    if split_peaks_m is not None:
        labels, close_born = _peaks(
            centres,
            density,
            core,
            labels,
            apart_m=split_peaks_m,
            saddle=split_saddle,
            weight=weight,
            min_support=min_support,
            share=split_share,
            part_votes=split_part_votes,
            stays=None if part_test is None else lambda cells: part_test(median(cells)),
            close_m=close_m,
            close_test=close_test,
        )
    found, support, group, born = [], [], [], []
    for label in np.unique(labels[core]):
        members = core & (labels == label)
        total = float(weight[members].sum())
        if total < min_support:
            continue
        origin = int(whole[members][0])
        parted = split_peaks_m is not None and bool(
            (core & (whole == origin) & (labels != label)).any()
        )
        group.append(origin if parted else -1)
        born.append(parted and origin in close_born)
        found.append(median(np.flatnonzero(members)))
        support.append(int(total))
    if not found:
        return empty
    return (
        np.asarray(found),
        np.asarray(support, dtype=np.int64),
        np.asarray(group, dtype=np.int64),
        np.asarray(born, dtype=bool),
    )


def _peaks(
    centres: FloatArray,
    density: FloatArray,
    core: npt.NDArray[np.bool_],
    labels: npt.NDArray[np.int64],
    *,
    apart_m: float,
    saddle: float,
    weight: FloatArray,
    min_support: int,
    share: float,
    part_votes: int,
    step_m: float = 0.5,
    stays: Callable[[npt.NDArray[np.int64]], bool] | None = None,
    close_m: float | None = None,
    close_test: Callable[[FloatArray, FloatArray], bool] | None = None,
) -> tuple[npt.NDArray[np.int64], set[int]]:
    """Cluster ``labels`` of the vote cells (``centres``, ``density``: votes within the
    cluster radius, ``core``) with each cluster parted at its density peaks.

    A peak is a core cell whose density is the highest of its cluster's cells within half
    of ``apart_m`` and that lies ``apart_m`` or more from every higher peak of its cluster.
    It parts the cluster only when the density along the straight line to the nearest higher
    peak falls under ``saddle`` times its own somewhere (cells missing there count 0): two
    crossings 10 m apart pile their votes at each, with fewer between (the passes from one
    to the other), while one wide crossing's votes rise to one top however far they spread.
    Each core cell then goes to its nearest peak; a part under ``min_support`` or
    ``part_votes`` votes, or under ``share`` of the largest part's, goes back to the others;
    so does, smallest first, a part other than the largest whose cells ``stays`` rejects.

    With ``close_m`` and ``close_test`` a cell from ``close_m`` to ``apart_m`` from its
    nearest higher peak is a peak too when ``close_test`` (its position, the higher peak's)
    says the passes there make two junctions; it must be the highest cell within half of
    ``close_m`` (its partner's flank reaches nearer). Also returns the labels of the
    clusters parted with such a peak.
    """
    out = labels.copy()
    close_born: set[int] = set()
    tree = cKDTree(centres)
    reach = 0.5 * apart_m
    close = close_m is not None and close_test is not None and close_m < apart_m
    for label in np.unique(labels[core]):
        members = np.flatnonzero(core & (labels == label))
        if len(members) < 2:
            continue
        spread = centres[members] - centres[members].mean(axis=0)
        if float(np.hypot(*spread.T).max()) < 0.5 * (close_m if close and close_m else apart_m):
            continue
        order = members[np.argsort(-density[members], kind="stable")]
        member_set = np.zeros(len(centres), dtype=bool)
        member_set[members] = True
        peaks: list[int] = []
        by_close: set[int] = set()
        for cell in order:
            if density[cell] <= 0:
                break
            near = [k for k in tree.query_ball_point(centres[cell], reach) if member_set[k]]
            flank = bool(density[near].max() > density[cell])  # on a higher cell's flank
            if flank and not close:
                continue
            if not peaks:
                if not flank:
                    peaks.append(int(cell))
                continue
            gaps = np.hypot(*(centres[peaks] - centres[cell]).T)
            higher = peaks[int(np.argmin(gaps))]
            near_top = bool(gaps.min() < apart_m or flank)
            if near_top:
                if close_test is None or close_m is None or gaps.min() < close_m:
                    continue
                near = [
                    k for k in tree.query_ball_point(centres[cell], 0.5 * close_m) if member_set[k]
                ]
                if density[near].max() > density[cell]:
                    continue
                if not close_test(centres[cell], centres[higher]):
                    continue
            if _valley(centres, density, member_set, tree, cell, higher, step_m) < (
                saddle * density[cell]
            ):
                peaks.append(int(cell))
                if near_top:
                    by_close.add(int(cell))
        if len(peaks) < 2:
            continue
        while len(peaks) > 1:
            offsets = centres[members, None, :] - centres[peaks][None, :, :]
            nearest = np.argmin(np.hypot(offsets[..., 0], offsets[..., 1]), axis=1)
            votes = np.bincount(nearest, weights=weight[members], minlength=len(peaks))
            weakest = int(np.argmin(votes))
            if votes[weakest] < max(min_support, part_votes, share * votes.max()):
                peaks.pop(weakest)
                continue
            if stays is None:
                break
            largest = int(np.argmax(votes))
            lone = [
                k
                for k in np.argsort(votes, kind="stable").tolist()
                if k != largest and not stays(members[nearest == k])
            ]
            if not lone:
                break
            peaks.pop(lone[0])
        if len(peaks) < 2:
            continue
        first = int(out.max()) + 1
        out[members] = first + nearest
        if by_close & set(peaks):
            close_born.add(int(label))
    return out, close_born


def _valley(
    centres: FloatArray,
    density: FloatArray,
    member_set: npt.NDArray[np.bool_],
    tree: cKDTree,
    a: int,
    b: int,
    step_m: float,
) -> float:
    """Lowest density of the cluster's cells along the line from cell ``a`` to cell ``b``
    (the densest cell within ``step_m`` of each point on it; none there: 0)."""
    length = float(np.hypot(*(centres[b] - centres[a])))
    low = float(min(density[a], density[b]))
    for t in np.arange(step_m, length, step_m) / length:
        point = centres[a] + t * (centres[b] - centres[a])
        near = [k for k in tree.query_ball_point(point, step_m) if member_set[k]]
        low = min(low, float(density[near].max()) if near else 0.0)
    return low
