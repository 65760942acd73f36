"""Clean a raw GPS track into a smooth, metric trajectory on the GPS clock.

Steps, each because real receivers do it to us:

1. keep usable fixes (:func:`~city360.video_store.gps.track.validate_track`);
2. project to the city's metric CRS (x east, y north, metres);
3. drop impossible jumps: a fix reached *and* left faster than ``max_speed_mps`` is a spike;
   then every fix of a span where the camera stood still (told by how far the fixes get over a
   minute, :mod:`.stationary`: drift and canyon bursts fool a speed test) is moved to the
   span's median point, so a stop is one place however the noise wandered;
4. a constant-velocity Kalman filter on a fine time grid with a chi-square innovation gate
   (rejects the outliers the speed gate misses), then a Rauch–Tung–Striebel backward pass;
5. across a gap in the fixes longer than ``max_gap_s`` (a logger paused, a dead spot, a
   stop indoors) the smoothed track runs straight from the last fix before to the first fix
   after: a constant-velocity smoother left to itself carries the last velocity into the gap
   and back, and invented a 100 m excursion in 21 minutes without fixes on a real walk;
6. heading from the smoothed velocity; spans slower than ``stationary_speed_mps`` for at least
   ``stationary_min_s`` are collapsed to one point holding the heading they were entered with,
   so standing still neither adds distance nor spins the view.

The smoother lives in :mod:`.smooth` with the heading-aided one ingest uses later.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from city360.errors import GpsError
from city360.geo import LocalProjection
from city360.video_store.gps.track import GpsTrack, validate_track
from city360.video_store.smooth import rts_smooth
from city360.video_store.stationary import StationaryParams, pin_stationary

__all__ = ["CleanParams", "SmoothTrack", "clean_track", "drop_speed_spikes"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class CleanParams:
    """Cleaning settings. Defaults suit a walking or driving camera with phone-grade GPS."""

    max_speed_mps: float = 45.0
    """Speed no camera reaches; a fix that needs it both ways is dropped."""
    gps_sigma_m: float = 3.0
    """Horizontal GPS noise (one sigma, per axis), metres."""
    accel_sigma: float = 0.6
    """Process noise: spectral density of acceleration, m²/s³ (how sharply the camera turns)."""
    gate_sigma: float = 4.0
    """Innovation gate (Mahalanobis distance) beyond which a fix is an outlier."""
    grid_hz: float = 10.0
    """Rate of the smoothed output, Hz."""
    stationary_speed_mps: float = 0.25
    stationary_min_s: float = 2.0
    max_gap_s: float = 10.0
    """Fixes further apart in time than this are joined by a straight line, seconds."""
    stationary: StationaryParams = field(default_factory=StationaryParams)
    """The window test for standing still from the fixes (its radius is at least 2.5
    ``gps_sigma_m``)."""


@dataclass(frozen=True, slots=True)
class SmoothTrack:
    """A smoothed metric track on the GPS clock.

    ``t_s``: POSIX seconds (GPS clock), increasing; ``x_m``/``y_m``: metres in the city CRS;
    ``speed_mps``; ``heading_deg``: travel direction clockwise from north, unwrapped (may leave
    [0, 360) so that it interpolates linearly). ``dropped`` counts fixes rejected as outliers.
    """

    t_s: FloatArray
    x_m: FloatArray
    y_m: FloatArray
    speed_mps: FloatArray
    heading_deg: FloatArray
    dropped: int
    meas_t_s: FloatArray
    """The fixes that survived the speed gate: GPS time and metres (for later refinement)."""
    meas_x_m: FloatArray
    meas_y_m: FloatArray

    @property
    def start_s(self) -> float:
        return float(self.t_s[0])

    @property
    def end_s(self) -> float:
        return float(self.t_s[-1])

    def sample(self, t_s: npt.ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``(x_m, y_m, heading_deg in [0, 360))`` at GPS times ``t_s`` (clamped to the span)."""
        t = np.asarray(t_s, np.float64)
        x = np.interp(t, self.t_s, self.x_m)
        y = np.interp(t, self.t_s, self.y_m)
        heading = np.mod(np.interp(t, self.t_s, self.heading_deg), 360.0)
        return x, y, heading


def drop_speed_spikes(
    t_s: FloatArray, x_m: FloatArray, y_m: FloatArray, max_speed_mps: float
) -> npt.NDArray[np.bool_]:
    """Mask of fixes to keep: False for a fix reached from the previous kept fix and left to
    the next one both faster than ``max_speed_mps`` (a lone jump and back)."""
    n = t_s.shape[0]
    keep = np.ones(n, bool)
    prev = 0
    for i in range(1, n - 1):
        dt_in = t_s[i] - t_s[prev]
        dt_out = t_s[i + 1] - t_s[i]
        v_in = math.hypot(x_m[i] - x_m[prev], y_m[i] - y_m[prev]) / dt_in
        v_out = math.hypot(x_m[i + 1] - x_m[i], y_m[i + 1] - y_m[i]) / dt_out
        v_skip = math.hypot(x_m[i + 1] - x_m[prev], y_m[i + 1] - y_m[prev]) / (dt_in + dt_out)
        if v_in > max_speed_mps and v_out > max_speed_mps and v_skip <= max_speed_mps:
            keep[i] = False
        else:
            prev = i
    return keep


def _collapse_stationary(
    t_s: FloatArray,
    x: FloatArray,
    y: FloatArray,
    speed: FloatArray,
    heading: FloatArray,
    params: CleanParams,
) -> None:
    """In place: freeze position and heading over long slow spans."""
    slow = speed < params.stationary_speed_mps
    n = slow.shape[0]
    k = 0
    while k < n:
        if not slow[k]:
            k += 1
            continue
        end = k
        while end < n and slow[end]:
            end += 1
        if t_s[end - 1] - t_s[k] >= params.stationary_min_s:
            span = slice(k, end)
            x[span] = x[span].mean()
            y[span] = y[span].mean()
            speed[span] = 0.0
            if k > 0:
                held = heading[k - 1]
            elif end < n:
                held = heading[end]
            else:
                held = heading[k]
            heading[span] = held
        k = end


def _bridge_gaps(
    grid: FloatArray,
    t_meas: FloatArray,
    x: FloatArray,
    y: FloatArray,
    vx: FloatArray,
    vy: FloatArray,
    max_gap_s: float,
) -> None:
    """In place: straight lines at constant speed across gaps of more than ``max_gap_s``
    between fixes (see the module docstring)."""
    for k in np.flatnonzero(np.diff(t_meas) > max_gap_s):
        t_a, t_b = float(t_meas[k]), float(t_meas[k + 1])
        a = int(np.searchsorted(grid, t_a, side="left"))
        b = min(int(np.searchsorted(grid, t_b, side="right")) - 1, grid.shape[0] - 1)
        if b - a < 2:
            continue
        share = (grid[a : b + 1] - grid[a]) / max(grid[b] - grid[a], 1e-9)
        x[a : b + 1] = x[a] + share * (x[b] - x[a])
        y[a : b + 1] = y[a] + share * (y[b] - y[a])
        duration = max(grid[b] - grid[a], 1e-9)
        vx[a + 1 : b] = (x[b] - x[a]) / duration
        vy[a + 1 : b] = (y[b] - y[a]) / duration


def clean_track(
    track: GpsTrack, projection: LocalProjection, *, params: CleanParams | None = None
) -> SmoothTrack:
    """Validate, project, de-spike, smooth and derive heading (see the module docstring)."""
    params = params or CleanParams()
    usable = validate_track(track)
    x, y = projection.to_xy(usable.lat, usable.lon)
    keep = drop_speed_spikes(usable.t_s, x, y, params.max_speed_mps)
    spikes = int((~keep).sum())
    t_meas, x, y = usable.t_s[keep], x[keep], y[keep]
    standing = params.stationary
    radius = max(standing.radius_m, 2.5 * params.gps_sigma_m)
    if radius != standing.radius_m:
        standing = dataclasses.replace(standing, radius_m=radius)
    x, y, _ = pin_stationary(t_meas, x, y, standing)
    span_s = float(t_meas[-1] - t_meas[0])
    grid_n = max(2, math.ceil(span_s * params.grid_hz) + 1)
    grid = np.linspace(t_meas[0], t_meas[-1], grid_n)
    sx, sy, vx, vy, gated = rts_smooth(
        grid,
        t_meas,
        x,
        y,
        sigma_m=params.gps_sigma_m,
        accel_sigma=params.accel_sigma,
        gate_sigma=params.gate_sigma,
    )
    if not (np.all(np.isfinite(sx)) and np.all(np.isfinite(sy))):
        msg = f"GPS track {track.source}: smoothing diverged; check the track for bad values"
        raise GpsError(msg)
    _bridge_gaps(grid, t_meas, sx, sy, vx, vy, params.max_gap_s)
    speed = np.hypot(vx, vy)
    heading = np.degrees(np.arctan2(vx, vy))
    _collapse_stationary(grid, sx, sy, speed, heading, params)
    heading = np.degrees(np.unwrap(np.radians(heading)))
    return SmoothTrack(
        grid,
        sx,
        sy,
        speed,
        heading,
        dropped=spikes + gated,
        meas_t_s=t_meas,
        meas_x_m=x,
        meas_y_m=y,
    )
