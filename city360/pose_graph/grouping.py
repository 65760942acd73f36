"""Single-link groups: items joined by pairs, labelled by connected component."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

__all__ = ["linked_groups"]


def linked_groups(count: int, pairs: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """A group label (0, 1, ...) for each of ``count`` items, items linked by ``pairs`` (rows
    of two item indices, directly or through others) in one group; groups are numbered in the
    order of their lowest item."""
    if pairs.size == 0:
        return np.arange(count, dtype=np.int64)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(count, count))
    _, labels = connected_components(graph, directed=False)
    return labels.astype(np.int64)
