"""Urban-canyon bursts, told from GPS fixes alone: the track steps away, stays, steps back.

In a street canyon a receiver may lock on a reflection from a facade: for 5-30 s its fixes sit
10-30 m off the true path in one direction, reached and left within a second or two. A
constant-velocity smoother follows such a burst (a 20 m detour over 15 s is an ordinary walk to
it: 15 fixes agree), and the pose graph takes the detour for a spur and invents a junction.

What a walker (or a car) cannot do is *step*: however sharply it turns, its position is
continuous. So at every instant ``t`` a stiff constant-velocity Kalman filter run forward over
the fixes up to ``t - gap_s`` and another run backward over those from ``t + gap_s`` are both
carried to ``t`` (a two-filter test: each filter gates lone outliers). At a corner the two meet
near the corner (velocity changes, position does not); at a burst's start or end they miss each
other by the burst's offset. Their difference ``D(t)`` is tested against its variance (both
filters' position variance, with the fixes' noise estimated robustly by
:func:`.step_test.fix_noise_m`): a *step* is a local maximum of the test statistic above
``step_chi2`` (two degrees of freedom) that is at least ``min_step_m`` long and longer than
``turn_lag_s`` of the usual speed (the filters lag a fast camera at a turn).

A burst is a run of steps, within ``max_burst_s``, whose vectors add up to nothing (away and
back, possibly through a second burst: away, across, back): the fixes between its first and
last step (with ``gap_s`` of ramp each side) are outliers. A step that is never undone is left
alone: that is the receiver finding itself elsewhere, a break :func:`..jumps.find_jumps` decides.
On a track that bursts often (``way_back_min_runs``: a receiver in an urban canyon), a step no
run pairs gets one more look for its way back: the other edge of a burst points back along
the step, so ``D`` is tested along that known direction (one degree of freedom), which lets
a far weaker edge through than the two-degree test does (a long burst's way back, under
correlated noise, is often 10-13 m at chi² 15-25). The edge of a run already paired is not
such a way back (it is another burst's).

A dropout makes the test read one edge several times (on either side of the gap one filter
sees the same fixes at every probe): such readings are one edge, of which a run of steps
counts one (``one_step_per_gap``).

The test is run again (``rounds``) over the fixes not yet masked: when bursts come nearly back
to back the filters are still off from one when the next starts and miss its edges, which
stand out once the first burst's fixes are out.

Units: seconds (GPS clock), metres in the city CRS.
"""

from __future__ import annotations

from city360.video_store.gps_bursts.mask import burst_mask, find_steps
from city360.video_store.gps_bursts.params import BurstParams, Step
from city360.video_store.gps_bursts.step_test import fix_noise_m

__all__ = ["BurstParams", "Step", "burst_mask", "find_steps", "fix_noise_m"]
