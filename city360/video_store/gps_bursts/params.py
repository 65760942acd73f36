"""The settings of the burst test and the values its stages pass on: steps and runs.

Units: seconds (GPS clock), metres in the city CRS.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BurstParams", "Run", "Step"]


@dataclass(frozen=True, slots=True)
class BurstParams:
    """Settings of the step test and of the pairing of steps into bursts (the package docstring)."""

    rounds: int = 2
    """How many times the step test is run again over the fixes not yet masked."""

    accel_sigma: float = 0.05
    """Process noise of the two filters, m²/s³: stiffer than the smoother's 0.6, so a 15 s
    burst is not followed as a detour within the time it lasts (its lag at a turn is what
    ``turn_lag_s`` allows for)."""
    gap_s: float = 1.5
    """Time left out each side of the instant tested (a burst ramps in over about 2 s),
    seconds."""
    step_chi2: float = 30.0
    """Test statistic (squared Mahalanobis length of ``D``, two degrees of freedom) a step
    must exceed; 30 is a chance of 3e-7 per instant for Gaussian noise."""
    min_step_m: float = 6.0
    """Shortest step that counts, metres (a smaller offset does not make a spur)."""
    turn_lag_s: float = 3.0
    """A step must also be longer than this many seconds of the usual speed around it: at a
    turn both filters lag the camera by about its speed times a second or two (a car's corner
    at 8 m/s gives 18 m), a walker's by a few metres."""
    max_burst_s: float = 45.0
    """Longest run of steps that is a burst (away and back), seconds."""
    way_back_chi2: float | None = 16.0
    """Test statistic (one degree of freedom: along the step) the way back of a step that no
    run of steps paired must pass (:func:`.spans.way_back_s`), on a track that bursts
    (``way_back_min_runs``); None: such a step is always left alone. 16 catches long canyon
    bursts while walking (Hamburg canyon twins 0.03-0.66 m better on 13 of 15 seeds); on a
    track that does not burst it would take a phone walker's two turn-backs 10 s apart, or an
    outlier after a dropout next to a corner, for a burst (Tokyo old town "wander" seed 0:
    street F1 without OSM 0.83 -> 0.74; docs/design-notes.md, round twelve, branches bursts2
    and bursts2gate)."""
    way_back_min_runs: int = 3
    """The way-back look runs only on a track (a piece between breaks) whose steps already
    paired into this many bursts or more in the first round, and at ``way_back_min_per_min``
    or more: a receiver that bursts (Hamburg canyon twins: 11-18 paired in 31 min; phone
    twins: 0 in every old-town and Hamburg twin, 1 in 644 min of Helsinki wander) has more
    bursts than its clear edges show, a receiver that does not has turn-backs instead."""
    way_back_min_per_min: float = 0.1
    """Paired bursts per minute of the track the way-back look needs (with
    ``way_back_min_runs``)."""
    return_share: float = 0.5
    """A run is back where it started when its steps add up to less than this share of its
    longest step (and to nothing significant)."""
    spare_edges: bool = True
    """Let an unpaired step's way back fall on a run's edge that the run does not need (it
    comes back without it) on the step's side (:func:`.spans.burst_spans`); False: never on any
    run's edge (the cleaner before round seventeen)."""
    chained_rivals: bool = True
    """A stronger rival does not take a run's last edge when the steps after the run start a
    returning run of their own that reaches the rival's end and the run closes better than the
    rival (:func:`.pairing.pair_steps`): two bursts with like offsets, whose rival is the
    first's way back with the second's way out; False: the rival margin alone (before round
    seventeen)."""
    fast_mps: float | None = 3.0
    """Usual speed from which a step is checked for a turn driven through
    (:func:`.turn_lags.off_turn_lags`), m/s: above a walker's, whose turn lag ``turn_lag_s`` covers;
    None: never (before round eighteen, a car with 1 Hz GPS lost 100-180 m of good fixes
    either side of every right-angle turn)."""
    lone_outliers: bool = True
    """Leave a fix that is off alone (away and back within one fix) out of the turn check's
    pairs (:func:`.turn_lags.off_turn_lags`); False: every fix near the step counts (before round
    twenty: one bad fix next to a car's corner kept the corner's lag as a burst edge)."""
    continuity_sigma: float = 3.0
    """How far (in sigmas of the difference of two fixes) two fixes near a step may lie beyond
    what the usual speed carries the camera, for the track to count as continuous there."""
    one_step_per_gap: bool = True
    """Peaks of the test whose probes share one of the two filters' fixes (no fix between
    them on that side: a dropout lies there) and point the same way are one edge read
    several times (:func:`.gap_groups.gap_groups`): a run of steps counts one of the readings, and
    the others are neither rivals nor steps of their own; False: each peak is a step of its
    own (before round eighteen)."""
    rival_margin: float = 1.5
    """How many times more significant (chi² of its weaker edge) a later run must be than a
    run to take that run's last edge from it (:func:`.pairing.pair_steps`). An echo of a real step
    had 0.13-0.63 of its chi² on the twins and tests looked at; runs of like strength (a stop
    with a 25 m burst every minute, where the good fixes between two bursts also look like a
    run that comes back) keep the time order."""


@dataclass(frozen=True, slots=True)
class Step:
    """A discontinuity of the track at GPS time ``t_s``: the fixes after it sit ``dx_m``,
    ``dy_m`` from the line through those before it; ``chi2`` its test statistic."""

    t_s: float
    dx_m: float
    dy_m: float
    chi2: float
    var_m2: float
    """Variance of ``dx_m`` (and of ``dy_m``), m²."""


@dataclass(frozen=True, slots=True)
class Run:
    """A run of steps taken as a burst: indices of its first and last step, and the steps it
    counts (one reading of each edge a dropout made several of, :func:`.gap_groups.gap_groups`)."""

    first: int
    last: int
    chosen: tuple[Step, ...]
