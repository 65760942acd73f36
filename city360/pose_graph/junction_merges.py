"""Junction candidates merged into junctions: points closer than ``merge_m`` become one at
their weighted mean, nearest pairs first, except where the parts of a parted vote pile must
stay apart (:attr:`~city360.pose_graph.junction_params.JunctionParams.split_parts_apart`,
``split_every_part_apart_m``) or a candidate without votes stands far from every pile
(``root_apart_m``). :func:`~city360.pose_graph.junctions.find_junction_parts` merges the vote
piles with the spur roots, corner meets and partings here; the build merges again after
refine's moves. Positions are metres in the city CRS.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.spatial import cKDTree

from city360.pose_graph.grouping import linked_groups
from city360.pose_graph.junction_params import JunctionParams

__all__ = ["JunctionParts", "merge_close", "merge_found", "merge_parts_held"]

FloatArray = npt.NDArray[np.float64]


JunctionParts = tuple[
    FloatArray, npt.NDArray[np.int64], npt.NDArray[np.bool_], npt.NDArray[np.bool_]
]
"""Junctions (J, 2) in metres, their vote support (J,), and per junction whether it is a part
of a vote pile parted at its peaks and whether that pile was parted at a peak under
``split_peaks_m`` from another (:func:`~city360.pose_graph.junctions.find_junction_parts`)."""


def merge_close(
    points: FloatArray, weights: npt.NDArray[np.int64], radius_m: float
) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """Merge points closer than ``radius_m`` (transitively) into their weighted mean."""
    if len(points) == 0:
        return points, weights
    pairs = cKDTree(points).query_pairs(radius_m, output_type="ndarray")
    labels = linked_groups(len(points), pairs)
    return _weighted_means(points, weights, labels)


def merge_parts_held(
    points: FloatArray,
    is_part: npt.NDArray[np.bool_],
    radius_m: float,
    *,
    other_parts: npt.NDArray[np.bool_] | None = None,
    other_floor_m: float = 0.0,
) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """:func:`merge_close` (each point weighing one), nearest pairs first, except that two
    points flagged ``is_part`` (parts of parted vote piles) never end in one junction
    (:attr:`JunctionParams.split_parts_apart`). ``other_parts`` (parts of piles parted
    otherwise) are held apart from any part too, but only at a pair ``other_floor_m`` metres
    apart or more (:attr:`JunctionParams.split_every_part_apart_m`).

    Returns the merged junctions, and the pairs (P, 2) of them (indices into the first) that
    only the ``other_floor_m`` floor held apart: without ``other_parts`` they would have been
    joined (:attr:`JunctionParams.split_held_part_streets`)."""
    if len(points) == 0:
        return points, np.zeros((0, 2), dtype=np.int64)
    group = np.where(is_part, 0, -1).astype(np.int64)
    ones = np.ones(len(points), dtype=np.int64)
    held: list[tuple[int, int]] = []
    centres, _, _, _ = _merge_apart(
        points,
        ones,
        group,
        radius_m,
        loose_parts=other_parts,
        loose_floor_m=other_floor_m,
        loose_held=held,
    )
    return centres, np.asarray(held, dtype=np.int64).reshape(-1, 2)


def _root(parent: npt.NDArray[np.int64], k: int) -> int:
    """The root of ``k`` in the union-find forest ``parent`` (path halving). :func:`_merge_apart`
    picks each union by its own tests, nearest pairs first, which a connected-components call
    cannot express."""
    while parent[k] != k:
        parent[k] = parent[parent[k]]
        k = int(parent[k])
    return k


def _weighted_means(
    points: FloatArray, weights: npt.NDArray[np.int64], labels: npt.NDArray[np.int64]
) -> tuple[FloatArray, npt.NDArray[np.int64]]:
    """Each label's weighted mean point (labels 0..K-1) and total weight."""
    count = int(labels.max()) + 1
    w = weights.astype(np.float64)
    total = np.bincount(labels, weights=w, minlength=count)
    mx = np.bincount(labels, weights=w * points[:, 0], minlength=count) / total
    my = np.bincount(labels, weights=w * points[:, 1], minlength=count) / total
    return np.column_stack([mx, my]), total.astype(np.int64)


def _merge_apart(
    points: FloatArray,
    weights: npt.NDArray[np.int64],
    group: npt.NDArray[np.int64],
    radius_m: float,
    close_groups: frozenset[int] = frozenset(),
    *,
    loose_parts: npt.NDArray[np.bool_] | None = None,
    loose_floor_m: float = 0.0,
    loose_held: list[tuple[int, int]] | None = None,
) -> JunctionParts:
    """:func:`merge_close`, nearest pairs first, except that two parts of one parted vote
    cluster (the same ``group``, not -1) never end in one junction: a spur root or a corner
    meet between two crossings 10 m apart joins the nearer one and no longer chains both.
    ``loose_parts`` (parts of piles parted otherwise) are held apart from any part too, at a
    pair ``loose_floor_m`` metres apart or more; ``loose_held``, if given, receives the pairs
    of junctions (indices into the centres) that only this held apart. Also returns, per
    junction, whether a part of ``group`` is in it, and whether a part of one of
    ``close_groups`` is."""
    pairs = cKDTree(points).query_pairs(radius_m, output_type="ndarray")
    parent = np.arange(len(points))
    groups: list[set[int]] = [{int(g)} if g >= 0 else set() for g in group]
    any_part = None if loose_parts is None else (group >= 0) | loose_parts
    loose_pairs: list[tuple[int, int]] = []

    if pairs.size:
        gaps = np.hypot(*(points[pairs[:, 0]] - points[pairs[:, 1]]).T)
        order = np.argsort(gaps, kind="stable")
        for (a, b), gap in zip(pairs[order], gaps[order], strict=True):
            ra, rb = _root(parent, int(a)), _root(parent, int(b))
            if ra == rb or groups[ra] & groups[rb]:
                continue
            if any_part is not None and any_part[ra] and any_part[rb] and gap >= loose_floor_m:
                loose_pairs.append((ra, rb))
                continue
            parent[rb] = ra
            groups[ra] |= groups[rb]
            if any_part is not None:
                any_part[ra] |= any_part[rb]
    roots = [_root(parent, k) for k in range(len(points))]
    labels = np.unique(roots, return_inverse=True)[1]
    centres, support = _weighted_means(points, weights, labels.astype(np.int64))
    parted = np.zeros(len(centres), dtype=bool)
    parted[labels[np.array([bool(groups[r]) for r in roots])]] = True
    close = np.zeros(len(centres), dtype=bool)
    close[labels[np.array([bool(groups[r] & close_groups) for r in roots])]] = True
    if loose_held is not None:
        for a, b in loose_pairs:
            ra, rb = _root(parent, a), _root(parent, b)
            if ra != rb and not groups[ra] & groups[rb]:
                pair = sorted((int(labels[ra]), int(labels[rb])))
                if tuple(pair) not in loose_held:
                    loose_held.append((pair[0], pair[1]))
    return centres, support, parted, close


def merge_found(
    centres: FloatArray,
    support: npt.NDArray[np.int64],
    group: npt.NDArray[np.int64],
    born: npt.NDArray[np.bool_],
    roots: FloatArray,
    params: JunctionParams,
    *,
    apart: npt.NDArray[np.bool_] | None = None,
) -> JunctionParts:
    """The vote piles (``centres``, ``support``, ``group``, ``born`` as
    :func:`~city360.pose_graph.vote_piles.cluster_piles` gives them) and ``roots`` (spur
    roots, corner meets, partings; each weighing ``min_support``) merged within ``merge_m``,
    as :func:`~city360.pose_graph.junctions.find_junction_parts` returns them. ``apart`` (per
    root): roots kept out of that merge, merged only among themselves and flagged, with the
    pile nearest each, as born of a close-topped pile (:attr:`JunctionParams.root_apart_m`)."""
    roots = roots.reshape(-1, 2)
    if apart is None or not apart.any() or not len(centres):
        return _merge_with_roots(centres, support, group, born, roots, params)
    merged = _merge_with_roots(centres, support, group, born, roots[~apart], params)
    return _roots_held_apart(merged, roots[apart], params)


def _merge_with_roots(
    centres: FloatArray,
    support: npt.NDArray[np.int64],
    group: npt.NDArray[np.int64],
    born: npt.NDArray[np.bool_],
    roots: FloatArray,
    params: JunctionParams,
) -> JunctionParts:
    """:func:`merge_found` without ``root_apart_m``: every candidate within ``merge_m``
    merges (transitively), parts of one parted pile never into one."""
    if len(roots):
        centres = np.concatenate([centres.reshape(-1, 2), roots])
        support = np.concatenate([support, np.full(len(roots), params.min_support, dtype=np.int64)])
        group = np.concatenate([group, np.full(len(roots), -1, dtype=np.int64)])
    if (group >= 0).any():
        close_groups = frozenset(int(g) for g in group[: len(born)][born])
        return _merge_apart(centres, support, group, params.merge_m, close_groups)
    centres, support = merge_close(centres, support, params.merge_m)
    return centres, support, np.zeros(len(centres), dtype=bool), np.zeros(len(centres), dtype=bool)


def _roots_held_apart(
    merged: JunctionParts,
    far_roots: FloatArray,
    params: JunctionParams,
) -> JunctionParts:
    """``merged`` (:func:`_merge_with_roots`) with ``far_roots`` (roots farther than
    ``root_apart_m`` from every vote pile) merged among themselves and added; each added
    junction within ``merge_m`` of a merged one is flagged, with the nearest such, as born
    of a close-topped pile, so that refine's post-move merge holds the two apart
    (:attr:`JunctionParams.root_apart_m`)."""
    centres, support, parted, close = merged
    ones = np.full(len(far_roots), params.min_support, dtype=np.int64)
    added, added_support = merge_close(far_roots, ones, params.merge_m)
    gap, nearest = cKDTree(centres.reshape(-1, 2)).query(added)
    beside = gap < params.merge_m
    close = close.copy()
    close[nearest[beside]] = True
    return (
        np.concatenate([centres.reshape(-1, 2), added]),
        np.concatenate([support, added_support]),
        np.concatenate([parted, np.zeros(len(added), dtype=bool)]),
        np.concatenate([close, beside]),
    )
