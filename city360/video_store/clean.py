"""Clean a raw GPS track into a smooth, metric trajectory on the GPS clock.

Steps, each because real receivers do it to us:

1. keep usable fixes (:func:`~city360.video_store.gps.track.validate_track`);
2. project to the city's metric CRS (x east, y north, metres);
3. drop impossible jumps: a fix reached *and* left faster than ``max_speed_mps`` is a spike;
4. a constant-velocity Kalman filter on a fine time grid with a chi-square innovation gate
   (rejects the outliers the speed gate misses), then a Rauch–Tung–Striebel backward pass;
5. heading from the smoothed velocity; spans slower than ``stationary_speed_mps`` for at least
   ``stationary_min_s`` are collapsed to one point holding the heading they were entered with,
   so standing still neither adds distance nor spins the view.

The smoother is ~80 lines of numpy rather than filterpy: the constant-velocity model has the
same covariance on both axes, so one 2x2 covariance serves x and y and the loop runs on
Python floats, several times faster than filterpy's general matrices, with no new dependency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from city360.errors import GpsError
from city360.geo import LocalProjection
from city360.video_store.gps.track import GpsTrack, validate_track

__all__ = ["CleanParams", "SmoothTrack", "clean_track", "drop_speed_spikes", "rts_smooth"]

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


def rts_smooth(
    t_s: FloatArray,
    meas_t_s: FloatArray,
    meas_x: FloatArray,
    meas_y: FloatArray,
    *,
    sigma_m: float,
    accel_sigma: float,
    gate_sigma: float,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, int]:
    """Constant-velocity Kalman filter + RTS smoother evaluated at ``t_s`` (sorted, covering
    the measurement times; measurements are applied at the grid step nearest in time).

    Returns smoothed ``x, y, vx, vy`` (metres, m/s) and the number of gated-out measurements.
    """
    n = t_s.shape[0]
    steps = np.clip(np.searchsorted(t_s, meas_t_s), 0, n - 1)
    before = np.clip(steps - 1, 0, n - 1)
    nearer_before = np.abs(t_s[before] - meas_t_s) < np.abs(t_s[steps] - meas_t_s)
    steps = np.where(nearer_before, before, steps)
    meas_at: dict[int, tuple[float, float]] = {}
    for k, step in enumerate(steps):
        meas_at.setdefault(int(step), (float(meas_x[k]), float(meas_y[k])))
    r = sigma_m**2
    q = accel_sigma
    gate2 = gate_sigma**2
    # forward pass: state per axis (p, v); shared covariance [[a, b], [b, c]]
    fx = np.zeros((n, 2))
    fy = np.zeros((n, 2))
    fcov = np.zeros((n, 3))
    pcov = np.zeros((n, 3))  # predicted covariance at step k (prior), for the RTS gain
    first = meas_at.get(int(steps[0]), (float(meas_x[0]), float(meas_y[0])))
    px, vx, py, vy = first[0], 0.0, first[1], 0.0
    a, b, c = r, 0.0, 4.0  # 2 m/s velocity uncertainty at the start
    rejected = 0
    misses = 0
    for k in range(n):
        if k > 0:
            dt = t_s[k] - t_s[k - 1]
            px, py = px + vx * dt, py + vy * dt
            a, b, c = (
                a + 2 * b * dt + c * dt * dt + q * dt**3 / 3,
                b + c * dt + q * dt * dt / 2,
                c + q * dt,
            )
        pcov[k] = (a, b, c)
        meas = meas_at.get(k)
        if meas is not None:
            s = a + r
            ix, iy = meas[0] - px, meas[1] - py
            if (ix * ix + iy * iy) / s > 2 * gate2 and misses < 3:
                rejected += 1
                misses += 1
            else:
                misses = 0
                kp, kv = a / s, b / s
                px, vx = px + kp * ix, vx + kv * ix
                py, vy = py + kp * iy, vy + kv * iy
                a, b, c = (1 - kp) * a, (1 - kp) * b, c - kv * b
        fx[k] = (px, vx)
        fy[k] = (py, vy)
        fcov[k] = (a, b, c)
    # backward pass (Rauch–Tung–Striebel)
    sx = fx.copy()
    sy = fy.copy()
    for k in range(n - 2, -1, -1):
        dt = t_s[k + 1] - t_s[k]
        a, b, c = fcov[k]
        pa, pb, pc = pcov[k + 1]
        # gain G = P_k F^T (P_{k+1|k})^-1, F = [[1, dt], [0, 1]]
        m00, m01, m10, m11 = a + b * dt, b, b + c * dt, c
        det = pa * pc - pb * pb
        if det <= 1e-12:
            continue
        i00, i01, i11 = pc / det, -pb / det, pa / det
        g00 = m00 * i00 + m01 * i01
        g01 = m00 * i01 + m01 * i11
        g10 = m10 * i00 + m11 * i01
        g11 = m10 * i01 + m11 * i11
        for f, s_ in ((fx, sx), (fy, sy)):
            pred_p = f[k, 0] + f[k, 1] * dt
            pred_v = f[k, 1]
            dp, dv = s_[k + 1, 0] - pred_p, s_[k + 1, 1] - pred_v
            s_[k, 0] = f[k, 0] + g00 * dp + g01 * dv
            s_[k, 1] = f[k, 1] + g10 * dp + g11 * dv
    return sx[:, 0], sy[:, 0], sx[:, 1], sy[:, 1], rejected


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
