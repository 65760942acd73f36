"""A fast camera's dropout bridged by a curve as long as its speed says (:mod:`.clean`, step 5).

Across a gap in the fixes the constant-velocity smoother draws a cubic between its two end
states. A car that turns inside the gap drives further than that cubic: it holds its heading
into the corner, turns, and leaves, while the cubic spreads the turn over the whole gap and
cuts the corner. The speed the fixes on both sides of the gap show says how long the path
really was. When the smoother's bridge is clearly shorter than that, it is replaced by the
curve that has

- the smoothed positions and headings at both ends of the gap,
- the length ``speed * duration`` (the mean of the one-sided chord speeds before and after),
- a heading that runs from the one end's to the other's plus the smallest cubic bump
  ``u (1 - u) (c0 + c1 u)`` (``u``: share of the length) that lands it on the far end.

Poses keep a speed that changes linearly from the one side's to the other's. A straight
street's gap keeps the smoother's bridge (its length fits the speed), and so does a walker's
(:attr:`GapArcParams.min_speed_mps`): at 1.4 m/s a few seconds' gap is a few metres, and a
walker may stop inside it. Measured on the SF camera twins (design notes, round twenty-nine,
branch sfcam29).

Units: seconds (GPS clock), metres in the city CRS (x east, y north), m/s; headings in
radians clockwise from north inside this module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.optimize import least_squares

__all__ = ["GapArcParams", "arc_bridge", "stretch_gaps"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class GapArcParams:
    """When a gap's bridge is redrawn as long as the speed says (:func:`stretch_gaps`)."""

    min_gap_s: float = 3.0
    """Gaps between kept fixes shorter than this keep the smoother's bridge, seconds."""
    speed_window_s: float = 5.0
    """The speed on each side is the chord over the fixes within this many seconds of the
    gap, seconds (3 s read the SF car's speed up to 0.7 m/s off)."""
    min_speed_mps: float = 4.0
    """The piece's usual moving speed (:func:`.usual_speed.usual_speed_mps`) and both sides'
    speeds must be at least this fast (a vehicle), m/s: a walker's gap is metres long, and a
    walker may stop in it (Hamburg phone and canyon twins got worse without it). The usual
    speed too, because a canyon receiver's burst beside a walker's gap reads 4-6 m/s over 5 s
    (Hamburg canyon seed 8, 398-408 s: 3.033 -> 3.151 m, junction P 1 -> 0 without it)."""
    min_shortfall: float = 0.15
    """The smoother's bridge must be shorter than ``speed * duration`` by at least this share
    of it: the speeds are read from a few seconds of noisy fixes (at 5 % and 10 % the SF car's
    seed 5 redrew a gap it had bridged well, 2.296 -> 2.448 m)."""


def arc_bridge(
    start_xy: tuple[float, float],
    end_xy: tuple[float, float],
    start_heading: float,
    end_heading: float,
    length_m: float,
    *,
    samples: int = 401,
) -> tuple[FloatArray, FloatArray, FloatArray] | None:
    """``(s_m, x_m, y_m)``: a curve ``length_m`` long from ``start_xy`` heading
    ``start_heading`` to ``end_xy`` heading ``end_heading`` (radians clockwise from north),
    sampled at ``samples`` arc lengths ``s_m``; None when no such curve of the family lands
    within 1 % of the length of ``end_xy`` (the length is shorter than the chord, or the turn
    cannot be made in it)."""
    u = np.linspace(0.0, 1.0, samples)
    turn = (end_heading - start_heading + math.pi) % (2.0 * math.pi) - math.pi
    dx, dy = end_xy[0] - start_xy[0], end_xy[1] - start_xy[1]
    step = length_m / (samples - 1)

    def curve(bump: FloatArray) -> tuple[FloatArray, FloatArray]:
        heading = start_heading + turn * u + u * (1.0 - u) * (bump[0] + bump[1] * u)
        east, north = np.sin(heading), np.cos(heading)
        x = np.concatenate([[0.0], np.cumsum(0.5 * (east[1:] + east[:-1]) * step)])
        y = np.concatenate([[0.0], np.cumsum(0.5 * (north[1:] + north[:-1]) * step)])
        return x, y

    def misses(bump: FloatArray) -> FloatArray:
        x, y = curve(bump)
        # the small pull towards no bump picks the gentlest of the curves that land
        return np.array([x[-1] - dx, y[-1] - dy, 0.01 * bump[0], 0.01 * bump[1]])

    bump = least_squares(misses, np.zeros(2)).x
    x, y = curve(bump)
    if math.hypot(x[-1] - dx, y[-1] - dy) > 0.01 * length_m:
        return None
    # the last centimetres of the miss, spread along the curve
    x += u * (dx - x[-1])
    y += u * (dy - y[-1])
    return u * length_m, start_xy[0] + x, start_xy[1] + y


def _side_speed_mps(t_s: FloatArray, x_m: FloatArray, y_m: FloatArray) -> float | None:
    """Chord speed from the first to the last of these fixes, m/s (None for under 2 fixes)."""
    if t_s.shape[0] < 2 or t_s[-1] <= t_s[0]:
        return None
    return math.hypot(x_m[-1] - x_m[0], y_m[-1] - y_m[0]) / float(t_s[-1] - t_s[0])


def stretch_gaps(
    grid: FloatArray,
    t_meas: FloatArray,
    x_meas: FloatArray,
    y_meas: FloatArray,
    x: FloatArray,
    y: FloatArray,
    vx: FloatArray,
    vy: FloatArray,
    params: GapArcParams,
    *,
    max_gap_s: float,
    usual_mps: float,
) -> list[tuple[float, float]]:
    """In place on the smoothed track (``grid`` times, seconds; ``x``, ``y`` metres; ``vx``,
    ``vy`` m/s): every gap of ``params.min_gap_s`` to ``max_gap_s`` between the kept fixes
    (``t_meas``, ``x_meas``, ``y_meas``) whose bridge is too short for the speed on both sides
    is redrawn by :func:`arc_bridge` (module docstring); ``usual_mps``: the piece's usual moving
    speed, m/s. Returns the GPS-time spans ``(last fix before, first fix after)`` of the gaps
    redrawn."""
    redrawn: list[tuple[float, float]] = []
    if usual_mps < params.min_speed_mps:
        return redrawn
    steps = np.diff(t_meas)
    for k in np.flatnonzero((steps >= params.min_gap_s) & (steps <= max_gap_s)):
        t_a, t_b = float(t_meas[k]), float(t_meas[k + 1])
        before = (t_meas >= t_a - params.speed_window_s) & (t_meas <= t_a)
        after = (t_meas >= t_b) & (t_meas <= t_b + params.speed_window_s)
        speed_a = _side_speed_mps(t_meas[before], x_meas[before], y_meas[before])
        speed_b = _side_speed_mps(t_meas[after], x_meas[after], y_meas[after])
        if speed_a is None or speed_b is None:
            continue
        if min(speed_a, speed_b) < params.min_speed_mps:
            continue
        a = int(np.argmin(np.abs(grid - t_a)))
        b = int(np.argmin(np.abs(grid - t_b)))
        if b - a < 2:
            continue
        duration = float(grid[b] - grid[a])
        length = 0.5 * (speed_a + speed_b) * duration
        bridged = float(np.hypot(np.diff(x[a : b + 1]), np.diff(y[a : b + 1])).sum())
        if bridged > (1.0 - params.min_shortfall) * length:
            continue
        arc = arc_bridge(
            (float(x[a]), float(y[a])),
            (float(x[b]), float(y[b])),
            math.atan2(float(vx[a]), float(vy[a])),
            math.atan2(float(vx[b]), float(vy[b])),
            length,
        )
        if arc is None:
            continue
        s_m, arc_x, arc_y = arc
        elapsed = grid[a : b + 1] - grid[a]
        progress = speed_a * elapsed + 0.5 * (speed_b - speed_a) * elapsed**2 / duration
        progress *= length / progress[-1]
        x[a : b + 1] = np.interp(progress, s_m, arc_x)
        y[a : b + 1] = np.interp(progress, s_m, arc_y)
        vx[a + 1 : b] = np.gradient(x[a : b + 1], grid[a : b + 1])[1:-1]
        vy[a + 1 : b] = np.gradient(y[a : b + 1], grid[a : b + 1])[1:-1]
        redrawn.append((t_a, t_b))
    return redrawn
