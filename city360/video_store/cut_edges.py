"""Kept fixes at the edges of a run of fixes the cleaning cut (a canyon burst).

Units: seconds on the GPS clock.

A burst of canyon fixes ramps in and out: its first and last fixes already lean its way, and
the burst test (:mod:`.gps_bursts`) places the run's ends from steps between noisy fixes, so
it can keep a fix of the burst next to the cut run, or a fix or two left between two cut runs
of one burst. The heading-aided smoother bridges the cut with the pictures' heading and is
pinned at both ends to the fixes there: a kept fix that leans 10-20 m pulls the whole bridge.
:func:`beside_cuts` finds those fixes so the smoother can leave them out.
"""

from __future__ import annotations

import itertools

import numpy as np
import numpy.typing as npt

from city360.video_store.clean import SmoothTrack

__all__ = ["beside_cuts", "with_cut_fixes"]

FloatArray = npt.NDArray[np.float64]


def beside_cuts(
    meas_t_s: FloatArray,
    cut_t_s: FloatArray,
    *,
    min_cut: int = 3,
    ramp: int = 0,
    island: int = 0,
) -> npt.NDArray[np.bool_]:
    """Mask of the kept fixes (``meas_t_s``, sorted GPS seconds) at the edges of a run of at
    least ``min_cut`` cut fixes (``cut_t_s``): the ``ramp`` kept fixes next to each end of
    such a run, and every run of at most ``island`` kept fixes with such a cut run on both
    sides. Runs are taken in time order over the kept and cut fixes together, so a dropout
    (no fix at all) does not part them."""
    out = np.zeros(meas_t_s.shape[0], bool)
    if meas_t_s.shape[0] == 0 or cut_t_s.shape[0] == 0 or (ramp <= 0 and island <= 0):
        return out
    times = np.concatenate([meas_t_s, cut_t_s])
    is_cut = np.concatenate([np.zeros(meas_t_s.shape[0], bool), np.ones(cut_t_s.shape[0], bool)])
    order = np.argsort(times, kind="stable")
    is_cut = is_cut[order]
    # kept row k of the merged order -> its index in meas_t_s (stable sort keeps their order)
    kept_rows = np.flatnonzero(~is_cut)
    marked = np.zeros(is_cut.shape[0], bool)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], is_cut.astype(np.int8), [0]])))
    runs = [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]
    long_runs = [(a, b) for a, b in runs if b - a >= min_cut]
    for a, b in long_runs:
        marked[max(a - ramp, 0) : a] = True
        marked[b : b + ramp] = True
    for (_, b), (a, _) in itertools.pairwise(long_runs):
        if 0 < a - b <= island and not is_cut[b:a].any():
            marked[b:a] = True
    marked &= ~is_cut
    out[np.searchsorted(kept_rows, np.flatnonzero(marked))] = True
    return out


def with_cut_fixes(
    smooth: SmoothTrack,
    back: npt.NDArray[np.bool_],
    t_s: FloatArray,
    x_m: FloatArray,
    y_m: FloatArray,
    sigma_m: FloatArray | None,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray | None]:
    """The fixes ``(t_s, x_m, y_m, sigma_m)`` with the cut fixes ``back`` (a mask over
    ``smooth``'s cut fixes) put back, in time order; a cut fix without a recorded sigma gets
    the largest sigma of the fixes given."""
    if smooth.cut_x_m is None or smooth.cut_y_m is None or smooth.cut_t_s is None:
        return t_s, x_m, y_m, sigma_m
    t = np.concatenate([t_s, smooth.cut_t_s[back]])
    order = np.argsort(t, kind="stable")
    x = np.concatenate([x_m, smooth.cut_x_m[back]])[order]
    y = np.concatenate([y_m, smooth.cut_y_m[back]])[order]
    if sigma_m is None:
        return t[order], x, y, None
    cut_sigma = (
        np.full(int(back.sum()), float(sigma_m.max(initial=0.0)))
        if smooth.cut_sigma_m is None
        else smooth.cut_sigma_m[back]
    )
    return t[order], x, y, np.concatenate([sigma_m, cut_sigma])[order]
