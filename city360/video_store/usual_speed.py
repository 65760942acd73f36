"""How fast the camera usually moves, read from its GPS fixes: three readings, one per question.

They differ by design, and each caller needs its own:

- :func:`usual_speed_mps` (cleaning, :mod:`.clean`): one speed for a whole piece of track,
  for the smoother's process noise and the end-fix allowance. 10 s chords, stops left out
  (fixes pinned to a stop, and chords no faster than ``moving_mps``): a walk's long stop
  must not pull a walker's speed to 0.
- :func:`chord_speed_about_mps` (the burst test's turn check, :mod:`.gps_bursts.turn_lags`):
  the speed about one instant, over the fixes within :data:`USUAL_SPEED_S`. 5 s chords
  (:data:`CHORD_S`): a 10 s chord reads a car slow across the corner it turns, and the check
  is about that corner. Stops count: a step next to a stop is judged at the speed there.
- :func:`median_step_speed_mps` (the burst test's length floor,
  :mod:`.gps_bursts.step_test`): the median speed between consecutive fixes about each
  instant. No noise is taken out: a walker's 1 Hz fixes move at their noise (4-5 m/s at 3 m),
  which sets the floor above a walker's turn lag, as the floor was tuned.

The first two share :func:`chord_speeds_mps`. A fourth reading stays where it is used:
:func:`.jumps.find_jumps` compares a step with the median of the steps about it, that step
itself left out (and the steps either side on a sparse logger).

Units: seconds (GPS clock), metres in the city CRS, m/s.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = [
    "CHORD_S",
    "USUAL_SPEED_CHORD_S",
    "USUAL_SPEED_S",
    "chord_speed_about_mps",
    "chord_speeds_mps",
    "median_step_speed_mps",
    "usual_speed_mps",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]


def chord_speeds_mps(
    t_s: FloatArray, x_m: FloatArray, y_m: FloatArray, *, chord_s: float, sigma_m: float
) -> tuple[IntArray, FloatArray]:
    """``(first, speed)``: for each fix ``first`` that has a fix at least ``chord_s`` seconds
    later, the speed (m/s) along the chord to the first such fix, with the two fixes' noise
    taken out: ``sqrt(max(0, d² - 4 sigma_m²)) / dt`` (``sigma_m`` one-axis noise, metres).
    Consecutive fixes would measure the noise instead (a 1 Hz receiver standing still moves
    4 m/s between them)."""
    ahead = np.searchsorted(t_s, t_s + chord_s, side="left")
    first = np.flatnonzero(ahead < t_s.shape[0])
    j = ahead[first]
    d2 = (x_m[j] - x_m[first]) ** 2 + (y_m[j] - y_m[first]) ** 2
    speed = np.sqrt(np.maximum(0.0, d2 - 4.0 * sigma_m**2)) / (t_s[j] - t_s[first])
    return first, speed


USUAL_SPEED_CHORD_S = 10.0
"""Baseline of the chords :func:`usual_speed_mps` measures speed over, seconds."""


def usual_speed_mps(
    t_s: FloatArray, x_m: FloatArray, y_m: FloatArray, sigma_m: float, *, moving_mps: float
) -> float:
    """The usual moving speed of a piece of track, m/s: the speed over the chord from each fix
    not pinned to a stop (equal to its neighbour) to the first fix at least
    :data:`USUAL_SPEED_CHORD_S` later, with the two fixes' noise taken out
    (:func:`chord_speeds_mps`, ``sigma_m`` one-axis noise, metres); the median of those faster
    than ``moving_mps`` (a walk's long stop would make it 0), 0 if none is."""
    same = (np.diff(x_m) == 0.0) & (np.diff(y_m) == 0.0)
    pinned = np.concatenate([[False], same]) | np.concatenate([same, [False]])
    first, speed = chord_speeds_mps(t_s, x_m, y_m, chord_s=USUAL_SPEED_CHORD_S, sigma_m=sigma_m)
    speed = speed[~pinned[first]]
    moving = speed[speed > moving_mps]
    return float(np.median(moving)) if moving.shape[0] else 0.0


USUAL_SPEED_S = 30.0
"""Half-width of the window about an instant that :func:`median_step_speed_mps` and
:func:`chord_speed_about_mps` read the speed over, seconds."""


def median_step_speed_mps(
    t_s: FloatArray, x_m: FloatArray, y_m: FloatArray, at_s: FloatArray
) -> FloatArray:
    """Median speed between consecutive fixes within :data:`USUAL_SPEED_S` of each ``at_s``
    (m/s; a few bursts do not move a median; 0 where no two fixes are that near)."""
    speed = np.hypot(np.diff(x_m), np.diff(y_m)) / np.maximum(np.diff(t_s), 1e-3)
    mid = 0.5 * (t_s[1:] + t_s[:-1])
    low = np.searchsorted(mid, at_s - USUAL_SPEED_S, side="left")
    high = np.searchsorted(mid, at_s + USUAL_SPEED_S, side="right")
    out = np.zeros(at_s.shape[0])
    for k, (a, b) in enumerate(zip(low.tolist(), high.tolist(), strict=True)):
        if b > a:
            out[k] = float(np.median(speed[a:b]))
    return out


CHORD_S = 5.0
"""Baseline of the chords :func:`chord_speed_about_mps` measures a speed over, seconds: between
consecutive fixes a walker's 1 Hz fixes move at their noise (4-5 m/s at 3 m), not his pace;
a chord much longer than this reads a car slow across the corner it turns (10 s: 6.5 of 8.3
m/s), and the corner's lag then looks like a step."""


def chord_speed_about_mps(
    t_s: FloatArray, x_m: FloatArray, y_m: FloatArray, at_s: float, sigma_m: float
) -> float:
    """The camera's speed about ``at_s``, m/s: the median over the fixes within
    :data:`USUAL_SPEED_S` of it of the speed along the chord to the first fix :data:`CHORD_S`
    later among them (:func:`chord_speeds_mps`, ``sigma_m`` one-axis noise, metres); 0 when
    no such chord exists."""
    near = np.flatnonzero(np.abs(t_s - at_s) <= USUAL_SPEED_S)
    if near.shape[0] < 2:
        return 0.0
    _, speed = chord_speeds_mps(t_s[near], x_m[near], y_m[near], chord_s=CHORD_S, sigma_m=sigma_m)
    if speed.shape[0] == 0:
        return 0.0
    return float(np.median(speed))
