"""Junction candidates merged into junctions (:mod:`city360.pose_graph.junction_merges`):
parts of parted vote piles held apart, the floor's held pairs, roots far from every pile."""

from __future__ import annotations

import numpy as np
import pytest

from city360.pose_graph.junction_merges import (
    merge_close,
    merge_found,
    merge_parts_held,
)
from city360.pose_graph.junction_params import JunctionParams


def test_parts_of_parted_piles_are_never_merged_into_one() -> None:
    """Two parts 7 m apart (a knot's junctions, moved together by refine) and a junction
    between them: ``merge_close`` makes one junction of the three; ``merge_parts_held``
    keeps the parts two and merges the third into the nearer."""
    points = np.array([[0.0, 0.0], [7.0, 0.0], [2.0, 1.0]])
    merged, _ = merge_close(points, np.ones(3, dtype=np.int64), 8.0)
    assert len(merged) == 1
    kept, _ = merge_parts_held(points, np.array([True, True, False]), 8.0)
    assert len(kept) == 2
    west, east = sorted(kept.tolist())
    np.testing.assert_allclose(west, [1.0, 0.5])
    np.testing.assert_allclose(east, [7.0, 0.0])
    alone, _ = merge_parts_held(points, np.array([True, False, False]), 8.0)
    assert len(alone) == 1


def test_split_parts_apart_is_on_by_default() -> None:
    assert JunctionParams().split_parts_apart is True


def test_parts_of_piles_parted_otherwise_are_held_apart_above_the_floor() -> None:
    """Parts of piles parted at peaks ``split_peaks_m`` apart (``other_parts``) moved by
    refine 7 m apart (each at its own true junction, held-out old town wander 6) and 4.7 m
    apart (one true junction, suite Helsinki wander 1): without ``other_parts`` both pairs
    merge, as on main; with a floor of 5 m the 7 m pair stays two and the 4.7 m pair merges;
    with a floor of 0 both stay two."""
    far = np.array([[0.0, 0.0], [7.0, 0.0]])
    near = np.array([[100.0, 0.0], [104.7, 0.0]])
    points = np.concatenate([far, near])
    none = np.zeros(4, dtype=bool)
    every = np.ones(4, dtype=bool)
    assert len(merge_parts_held(points, none, 8.0)[0]) == 2
    assert len(merge_parts_held(points, none, 8.0, other_parts=every, other_floor_m=0.0)[0]) == 4
    floored = merge_parts_held(points, none, 8.0, other_parts=every, other_floor_m=5.0)[0]
    assert sorted(floored[:, 0].tolist()) == pytest.approx([0.0, 7.0, 102.35])


def test_parts_of_close_topped_piles_stay_apart_under_the_floor() -> None:
    """The floor is for parts of piles parted otherwise: two parts of piles parted at close
    tops (``is_part``) stay apart however close refine brings them, as before; a part
    under the floor from them merges into one."""
    points = np.array([[0.0, 0.0], [4.0, 0.0], [2.0, 3.0]])
    held = np.array([True, True, False])
    other = np.array([False, False, True])
    kept = merge_parts_held(points, held, 8.0, other_parts=other, other_floor_m=5.0)[0]
    assert len(kept) == 2


def test_the_pairs_only_the_floor_held_apart_are_named() -> None:
    """``merge_parts_held`` names the pairs of junctions the floor alone kept from merging
    (indices into its junctions): the 7 m pair of "other" parts, not the two close-topped
    parts 4 m apart (held whatever the floor) nor the 4.7 m pair under the floor (merged)."""
    points = np.array(
        [[0.0, 0.0], [7.0, 0.0], [100.0, 0.0], [104.7, 0.0], [200.0, 0.0], [204.0, 0.0]]
    )
    close = np.array([False, False, False, False, True, True])
    other = ~close
    centres, held = merge_parts_held(points, close, 8.0, other_parts=other, other_floor_m=5.0)
    assert len(centres) == 5
    assert held.shape == (1, 2)
    assert sorted(centres[held[0], 0].tolist()) == pytest.approx([0.0, 7.0])
    _, none = merge_parts_held(points, close, 8.0)
    assert none.shape == (0, 2)


def test_split_every_part_apart_m_is_5_m_by_default() -> None:
    assert JunctionParams().split_every_part_apart_m == 5.0


def _pile_and_roots(
    roots: list[tuple[float, float]], root_apart_m: float | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A vote pile of 800 at (0, 0) and ``roots`` (spur roots, corners, partings), merged;
    those farther than ``root_apart_m`` from it kept apart."""
    points = np.asarray(roots, dtype=np.float64)
    apart = None if root_apart_m is None else np.hypot(*points.T) > root_apart_m
    return merge_found(
        np.array([[0.0, 0.0]]),
        np.array([800], dtype=np.int64),
        np.array([-1], dtype=np.int64),
        np.array([False]),
        points,
        JunctionParams(),
        apart=apart,
    )


def test_a_root_far_from_every_pile_stays_a_junction_held_apart_with_root_apart_m() -> None:
    """A knot's shallow fork the votes never see: its corner meet 7 m from the other
    junction's pile (fresh Kaisaniemi, (-58.0, -109.8) beside the pile at (-52.2, -105.7)).
    Without ``root_apart_m`` the pile swallows it (one junction, at the pile: the root
    weighs ``min_support``); with 6 m it stays a junction of its own, and it and the pile
    are flagged so that refine's post-move merge holds them apart."""
    merged, support, _, close = _pile_and_roots([(7.0, 0.0)], None)
    assert len(merged) == 1
    assert not close.any()
    centres, support, parted, close = _pile_and_roots([(7.0, 0.0)], 6.0)
    np.testing.assert_allclose(centres, [[0.0, 0.0], [7.0, 0.0]])
    assert support.tolist() == [800, JunctionParams().min_support]
    assert close.tolist() == [True, True]
    assert not parted.any()


def test_roots_near_a_pile_merge_into_it_and_far_ones_merge_among_themselves() -> None:
    """A root 4 m from the pile merges into it as before; two roots 6.5 and 9 m out merge
    with each other only."""
    centres, support, _, close = _pile_and_roots([(4.0, 0.0), (6.5, 0.0), (9.0, 0.0)], 6.0)
    assert len(centres) == 2
    np.testing.assert_allclose(centres[1], [7.75, 0.0])
    assert support[1] == 2 * JunctionParams().min_support
    assert close.tolist() == [True, True]


def test_root_apart_m_is_off_by_default() -> None:
    assert JunctionParams().root_apart_m is None
