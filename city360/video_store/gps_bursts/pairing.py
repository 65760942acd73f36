"""Steps paired into runs that come back: the bursts whose both edges the step test found.

Units: seconds (GPS clock), metres in the city CRS.
"""

from __future__ import annotations

import itertools
import math

from city360.video_store.gps_bursts.params import BurstParams, Run, Step

__all__ = ["MAX_READING_CHOICES", "closure", "comes_back", "pair_steps"]


MAX_READING_CHOICES = 64
"""Most combinations of readings :func:`_closest_readings` tries for one run."""


def comes_back(run: list[Step], params: BurstParams) -> bool:
    """Whether the steps of ``run`` add up to nothing: back where the track started."""
    total_x = sum(s.dx_m for s in run)
    total_y = sum(s.dy_m for s in run)
    total = math.hypot(total_x, total_y)
    longest = max(math.hypot(s.dx_m, s.dy_m) for s in run)
    var = sum(s.var_m2 for s in run)
    return total <= params.return_share * longest and total * total / var < params.step_chi2


def closure(run: list[Step]) -> float:
    """How far a run of steps ends from where it started, as a share of its longest step."""
    total = math.hypot(sum(s.dx_m for s in run), sum(s.dy_m for s in run))
    return total / max(math.hypot(s.dx_m, s.dy_m) for s in run)


def pair_steps(steps: list[Step], params: BurstParams, *, groups: list[int]) -> list[Run]:
    """The runs of ``steps`` taken as bursts (:class:`Run`).

    A candidate is a run of consecutive steps within ``max_burst_s`` that comes back
    (:func:`comes_back`); its strength is the smaller test statistic of its first and last step
    (the two edges a burst must have). Runs are taken in time order, each the shortest
    candidate from its first step, unless a candidate ``rival_margin`` times stronger starts at
    one of the run's later steps and ends beyond it (it needs the run's last edge) and is not
    beaten itself in the same way: then the first step is left alone and the stronger run gets
    its turn (a stronger run inside the run is masked with it). Without that rule the stiff
    filters' echo of a burst (after crossing one, a filter overshoots for several seconds,
    which the test reads as a step of 20-40 m) paired with the first edge of the next burst
    and left that burst's far edge unpaired (Hamburg canyon seed 2: 244 s took 252.5 s, 979.5 s took
    1007.5 s; 25 s of good fixes dropped and bursts of 22-37 m kept).

    A rival does not count (``chained_rivals``) when the steps after the run start a run of
    their own that reaches the rival's last step, and the run comes back closer than the rival
    (:func:`closure`): two bursts with like offsets, where the first's way back and the
    second's way out also add up to nothing (Hamburg canyon seed 12: the rival 1093.5-1128 s,
    chi² 68, took the way back of the burst 1075-1094 s, whose way out just after a dropout
    had chi² 37; 26 good fixes masked and both bursts kept). An echo's partner leaves no such
    run after it, and a run that closes worse than its rival (seed 8: a correlated excursion
    at 673 s against the burst at 680-700 s) still yields.

    ``groups`` (:func:`.gap_groups.gap_groups`): the steps of one group are
    readings of one edge across a dropout. A run starts and ends at one reading of its first
    and last group and counts one reading of each group between (the one that brings it back
    closest); the other readings of its first group are not rivals, and an edge's strength is
    that of its most significant reading.
    """
    next_group = [len(steps)] * len(steps)  # first step of the next group
    for k in range(len(steps) - 2, -1, -1):
        next_group[k] = k + 1 if groups[k + 1] != groups[k] else next_group[k + 1]
    # an edge read several times is as significant as its best reading
    best_reading: dict[int, float] = {}
    for step, g in zip(steps, groups, strict=True):
        best_reading[g] = max(best_reading.get(g, 0.0), step.chi2)
    edge_chi2 = [best_reading[g] for g in groups]
    # first step: (last step, strength, the steps the run counts)
    runs: dict[int, list[tuple[int, float, tuple[Step, ...]]]] = {}
    for k in range(len(steps)):
        for m in range(next_group[k], len(steps)):
            if steps[m].t_s - steps[k].t_s > params.max_burst_s:
                break
            chosen = _closest_readings(steps, groups, k, m)
            if comes_back(list(chosen), params):
                runs.setdefault(k, []).append((m, min(edge_chi2[k], edge_chi2[m]), chosen))
    wins: dict[tuple[int, int], bool] = {}

    def counted(k: int, m: int) -> list[Step]:
        """The steps run k..m counts."""
        return list(next(c for m2, _, c in runs[k] if m2 == m))

    def chained(k: int, m: int, k2: int, m2: int) -> bool:
        """Whether the steps after run k..m start a run of their own reaching step m2 (then
        run k..m and that run explain every step the rival k2..m2 would, and more) and run
        k..m comes back closer than the rival does (:func:`closure`)."""
        after = runs.get(next_group[m], [])[:1]
        return any(m3 >= m2 for m3, _, _ in after) and closure(counted(k, m)) <= closure(
            counted(k2, m2)
        )

    def beaten(k: int, m: int, strength: float) -> bool:
        """Whether a stronger run that would itself be taken needs the last edge of run k..m
        (rivals are strictly stronger, so the recursion ends)."""
        for k2 in range(next_group[k], m + 1):
            for m2, other, _ in runs.get(k2, []):
                if m2 > m and groups[m2] != groups[m] and other > params.rival_margin * strength:
                    if params.chained_rivals and chained(k, m, k2, m2):
                        continue
                    if (k2, m2) not in wins:
                        wins[k2, m2] = not beaten(k2, m2, other)
                    if wins[k2, m2]:
                        return True
        return False

    taken: list[Run] = []
    k = 0
    while k < len(steps):
        if k not in runs:
            k += 1
            continue
        m, strength, chosen = runs[k][0]
        if beaten(k, m, strength):
            k += 1
            continue
        taken.append(Run(k, m, chosen))
        k = next_group[m]
    return taken


def _closest_readings(steps: list[Step], group: list[int], k: int, m: int) -> tuple[Step, ...]:
    """The steps a run from step ``k`` to step ``m`` counts: those two, and of each group
    between one reading, chosen so that the run ends nearest where it started (every
    combination while there are at most :data:`MAX_READING_CHOICES`, else the most
    significant reading of each group)."""
    between: list[list[Step]] = []
    for j in range(k + 1, m):
        if group[j] in (group[k], group[m]):
            continue
        if between and group[j] == group[j - 1]:
            between[-1].append(steps[j])
        else:
            between.append([steps[j]])
    choices = math.prod(len(readings) for readings in between)
    if choices > MAX_READING_CHOICES:
        between = [[max(readings, key=lambda s: s.chi2)] for readings in between]
    best: tuple[Step, ...] = ()
    best_total = math.inf
    for middle in itertools.product(*between):
        run = (steps[k], *middle, steps[m])
        total = math.hypot(sum(s.dx_m for s in run), sum(s.dy_m for s in run))
        if total < best_total:
            best, best_total = run, total
    return best
