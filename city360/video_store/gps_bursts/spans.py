"""The GPS-time spans to mask: the runs taken, and on a track that bursts often each unpaired
step with its way back, looked for along the step (the package docstring).

Units: seconds (GPS clock), metres in the city CRS.
"""

from __future__ import annotations

import math

import numpy as np

from city360.video_store.gps_bursts.pairing import comes_back
from city360.video_store.gps_bursts.params import BurstParams, Run, Step
from city360.video_store.gps_bursts.step_test import StepProfile

__all__ = ["burst_spans", "bursts_often", "way_back_s"]


def way_back_s(profile: StepProfile, step: Step, params: BurstParams) -> float | None:
    """GPS time of the other edge of the burst ``step`` is one edge of, for a step no run of
    steps paired (:func:`.pairing.pair_steps`), or None.

    That edge is a step back along ``step``, so ``D`` there is tested along that one known
    direction (one degree of freedom, a far weaker edge passes than
    :func:`.step_test.peak_steps` takes): the probe within ``max_burst_s`` before or after
    ``step`` (more than ``2 gap_s`` from it) with the largest part of ``D`` pointing back
    along the step, squared over its variance, above ``way_back_chi2``; that part at least
    ``return_share`` of the step and ``min_step_m``, and ``D`` within 45 degrees of straight
    back. No length floor from the usual speed: a turn's lag does not point back along a
    step."""
    if params.way_back_chi2 is None:
        return None
    p = profile
    length = math.hypot(step.dx_m, step.dy_m)
    ux, uy = step.dx_m / length, step.dy_m / length
    back = -(p.dx_m * ux + p.dy_m * uy)
    across = np.abs(p.dx_m * uy - p.dy_m * ux)
    apart = np.abs(p.probe_s - step.t_s)
    with np.errstate(invalid="ignore"):
        score = np.where(np.isfinite(p.var_m2), back * np.abs(back) / p.var_m2, 0.0)
    ok = (
        (apart > 2 * params.gap_s)
        & (apart <= params.max_burst_s)
        & (back >= max(params.return_share * length, params.min_step_m))
        & (across <= back)
        & (score > params.way_back_chi2)
    )
    if not ok.any():
        return None
    return float(p.probe_s[int(np.argmax(np.where(ok, score, -1.0)))])


def bursts_often(runs: int, span_s: float, params: BurstParams) -> bool:
    """Whether a track of ``span_s`` seconds whose steps paired into ``runs`` bursts
    (:func:`.pairing.pair_steps`) bursts often enough for the way-back look (``way_back_min_runs``,
    ``way_back_min_per_min``)."""
    if params.way_back_chi2 is None:
        return False
    return runs >= params.way_back_min_runs and runs >= (
        params.way_back_min_per_min * span_s / 60.0
    )


def burst_spans(
    profile: StepProfile,
    steps: list[Step],
    runs: list[Run],
    params: BurstParams,
    *,
    way_back: bool,
    groups: list[int],
) -> list[tuple[float, float]]:
    """GPS-time spans ``(start, end)`` of the fixes to mask: each of ``runs``
    (:func:`.pairing.pair_steps`, from its first counted step to its last), then, with
    ``way_back`` (a track that bursts often, :func:`bursts_often`), each step left out of
    every run with its way back (:func:`way_back_s`), with ``gap_s`` of ramp each side.

    A way back that falls on an edge of a run taken (within ``gap_s + 0.5`` s, the
    neighbourhood a peak is the maximum of) is not used: a step near a burst that points
    back at that burst's edge is most often the stiff filters' echo of crossing it, or a
    burst whose own other edge is too weak, and pairing it with the taken edge would mask the
    good fixes between (Hamburg canyon seed 3, 187.5 s paired with 202.5 s).

    Unless that edge is *spare* (``spare_edges``): the run has three steps or more and comes
    back without it (:func:`_spare_edges`), and the unpaired step lies on the run's far side
    of it (before a spare first edge, after a spare last edge). Then the edge is the other
    burst's way back, which the stiff filters bent towards the next burst's fixes until only
    the longer run returned (Hamburg canyon seed 1: bursts at 46-65 and 69-84 s, the first's
    way back read as (3, -15) m for a true (12, -10) m; the run 62.5-83.5 s took it and the
    whole first burst was kept).

    ``groups`` (:func:`.gap_groups.gap_groups`): every reading of a run's first or last edge is that
    edge, in the run and not a way back for another step."""
    spans: list[tuple[float, float]] = []
    edges: list[tuple[float, int]] = []  # time, and -1 / +1 / 0: spare for a step before / after
    in_run = np.zeros(len(steps), bool)
    for run in runs:
        first, last = run.chosen[0], run.chosen[-1]
        spans.append((first.t_s - params.gap_s, last.t_s + params.gap_s))
        spare_first, spare_last = (
            _spare_edges(list(run.chosen), params) if params.spare_edges else (False, False)
        )
        # every reading of its edges is the run's (:func:`.gap_groups.gap_groups`)
        for k, g in enumerate(groups):
            if g in (groups[run.first], groups[run.last]):
                in_run[k] = True
                spare = spare_first if g == groups[run.first] else spare_last
                edges.append((steps[k].t_s, -int(spare) if g == groups[run.first] else int(spare)))
        in_run[run.first : run.last + 1] = True
    if not way_back:
        return spans
    near_s = params.gap_s + 0.5
    for k in np.flatnonzero(~in_run).tolist():
        other = way_back_s(profile, steps[k], params)
        if other is None:
            continue
        side = 1 if steps[k].t_s > other else -1
        if any(abs(other - edge) <= near_s and spare != side for edge, spare in edges):
            continue
        start_s, end_s = sorted((steps[k].t_s, other))
        spans.append((start_s - params.gap_s, end_s + params.gap_s))
    return spans


def _spare_edges(run: list[Step], params: BurstParams) -> tuple[bool, bool]:
    """Whether ``run`` (a run of steps that comes back) still comes back without its first
    step, and without its last: a run of two steps needs both its edges."""
    if len(run) < 3:
        return False, False
    return comes_back(run[1:], params), comes_back(run[:-1], params)
