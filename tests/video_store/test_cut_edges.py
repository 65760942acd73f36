"""Kept fixes at the edges of a run of cut ones (:mod:`city360.video_store.cut_edges`)."""

from __future__ import annotations

import numpy as np

from city360.video_store.cut_edges import beside_cuts, with_cut_fixes


def _split(cut: set[int], n: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """Kept and cut GPS times of ``n`` fixes at 1 Hz, the ``cut`` ones left out."""
    t = np.arange(float(n))
    is_cut = np.isin(np.arange(n), sorted(cut))
    return t[~is_cut], t[is_cut]


def test_nothing_is_marked_with_both_counts_zero() -> None:
    kept, cut = _split({5, 6, 7, 8})
    assert not beside_cuts(kept, cut).any()


def test_the_ramp_marks_the_kept_fixes_next_to_each_end_of_a_long_cut_run() -> None:
    kept, cut = _split({10, 11, 12, 13, 20})  # 20 alone is under min_cut
    marked = kept[beside_cuts(kept, cut, ramp=2)]
    np.testing.assert_array_equal(marked, [8.0, 9.0, 14.0, 15.0])


def test_an_island_between_two_long_cut_runs_is_marked_and_a_wider_one_is_not() -> None:
    kept, cut = _split({5, 6, 7, 9, 10, 11, 20, 21, 22, 25, 26, 27})
    np.testing.assert_array_equal(kept[beside_cuts(kept, cut, island=1)], [8.0])
    np.testing.assert_array_equal(kept[beside_cuts(kept, cut, island=2)], [8.0, 23.0, 24.0])


def test_an_island_beside_a_short_cut_run_is_not_marked() -> None:
    kept, cut = _split({5, 6, 8, 9, 10})
    assert not beside_cuts(kept, cut, island=1).any()


def test_a_dropout_does_not_part_a_kept_fix_from_the_cut_run_beside_it() -> None:
    kept = np.array([0.0, 1.0, 2.0, 9.0, 10.0])  # no fix at all over 3-5 s
    cut = np.array([6.0, 7.0, 8.0])
    np.testing.assert_array_equal(kept[beside_cuts(kept, cut, ramp=1)], [2.0, 9.0])


def test_with_cut_fixes_puts_the_chosen_cut_fixes_back_in_time_order() -> None:
    from city360.video_store.clean import SmoothTrack

    kept_t = np.array([0.0, 1.0, 5.0])
    smooth = SmoothTrack(
        t_s=kept_t,
        x_m=kept_t,
        y_m=kept_t,
        speed_mps=kept_t,
        heading_deg=kept_t,
        dropped=3,
        meas_t_s=kept_t,
        meas_x_m=kept_t,
        meas_y_m=kept_t,
        cut_t_s=np.array([2.0, 3.0, 4.0]),
        cut_x_m=np.array([20.0, 30.0, 40.0]),
        cut_y_m=np.array([-2.0, -3.0, -4.0]),
    )
    back = np.array([False, True, True])
    t, x, y, sigma = with_cut_fixes(smooth, back, kept_t, kept_t, kept_t, np.array([3.0, 4.0, 5.0]))
    np.testing.assert_array_equal(t, [0.0, 1.0, 3.0, 4.0, 5.0])
    np.testing.assert_array_equal(x, [0.0, 1.0, 30.0, 40.0, 5.0])
    np.testing.assert_array_equal(y, [0.0, 1.0, -3.0, -4.0, 5.0])
    assert sigma is not None
    np.testing.assert_array_equal(sigma, [3.0, 4.0, 5.0, 5.0, 5.0])  # unknown: the largest
