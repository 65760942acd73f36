"""One edge read several times across a dropout: which steps are readings of one edge."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from city360.video_store.gps_bursts.params import BurstParams, Step

__all__ = ["gap_groups"]


FloatArray = npt.NDArray[np.float64]


def gap_groups(steps: list[Step], fix_t_s: FloatArray, params: BurstParams) -> list[int]:
    """A group number for each of ``steps`` (in time order): consecutive steps pointing the
    same way whose probes share one filter's fixes (:func:`_share_a_filter`) are one group,
    one edge read several times; with ``one_step_per_gap`` off each step is its own group.

    In a dropout one side of the test sees the same fixes at every probe and only the other
    filter's extrapolation across the gap moves ``D``, so the test finds a peak on either side
    of the gap and in it, each a different reading of one step (Hamburg canyon seed 18: a
    burst's way back in a 6.6 s dropout read at 1476 and 1481 s as 52 and 38 m; the run
    through both did not come back, and the second with the next burst's way out masked the
    good fixes between and kept both bursts). Which reading is nearest the truth depends on
    where in the gap the step fell, so :func:`.pairing.pair_steps` lets a run use any one of them.
    Steps pointing apart are left apart: an echo is not the step it follows."""
    groups: list[int] = []
    for k, step in enumerate(steps):
        if k and params.one_step_per_gap:
            last = steps[k - 1]
            same_way = last.dx_m * step.dx_m + last.dy_m * step.dy_m > 0.0
            if same_way and _share_a_filter(last.t_s, step.t_s, fix_t_s, params.gap_s):
                groups.append(groups[-1])
                continue
        groups.append(k)
    return groups


def _share_a_filter(first_s: float, second_s: float, fix_t_s: FloatArray, gap_s: float) -> bool:
    """Whether the test at ``first_s`` and at ``second_s`` (GPS seconds, increasing) runs its
    forward or its backward filter over the same fixes (:func:`gap_groups`)."""
    forward = np.count_nonzero((fix_t_s > first_s - gap_s) & (fix_t_s <= second_s - gap_s))
    backward = np.count_nonzero((fix_t_s >= first_s + gap_s) & (fix_t_s < second_s + gap_s))
    return forward == 0 or backward == 0
