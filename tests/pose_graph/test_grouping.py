"""Single-link groups (:mod:`city360.pose_graph.grouping`)."""

from __future__ import annotations

import numpy as np

from city360.pose_graph.grouping import linked_groups


def test_items_linked_directly_or_through_others_share_a_group() -> None:
    # 0-2 through 1, 3 alone, 4-5; groups numbered in the order of their lowest item
    pairs = np.array([[5, 4], [2, 1], [0, 1]], dtype=np.int64)
    assert linked_groups(6, pairs).tolist() == [0, 0, 0, 1, 2, 2]


def test_items_no_pair_names_are_groups_of_their_own() -> None:
    assert linked_groups(3, np.zeros((0, 2), dtype=np.int64)).tolist() == [0, 1, 2]
