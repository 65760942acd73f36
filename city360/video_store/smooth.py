"""The Kalman/RTS smoothers of ingest, in one place: a GPS track with and without a heading.

Both run a Kalman filter forward on a fine time grid, apply each fix at the grid step nearest
in time (:func:`nearest_steps`), ignore fixes whose innovation fails a chi-square gate
(:class:`_Gate`: at most three in a row, so a real turn is not gated out for ever) and then run
a Rauch-Tung-Striebel backward pass.

- :func:`rts_smooth` (used by :mod:`.clean`): constant velocity, state ``(p, v)`` per axis. The
  model has the same covariance on both axes, so one 2x2 covariance serves x and y and the loop
  runs on Python floats, several times faster than general matrices (or filterpy), with no new
  dependency; that is why it does not share the matrix code below.
- :func:`heading_aided_smooth` (used by ingest once the heading is known from the pictures):
  state ``(x, y, speed)``; between steps the camera moves ``speed * dt`` along the heading, so
  corners are followed exactly instead of cut and GPS noise across the street averages out.

Measurement noise: one ``sigma_m`` for every fix, or per fix (``meas_sigma_m``, metres, one
sigma per axis) when the receiver reported how good each fix is
(:func:`city360.video_store.gps.quality.horizontal_sigma_m`): a fix with HDOP 4 then pulls the
track a sixteenth as hard as one with HDOP 1, and the gate judges it by its own spread.

Units: seconds, metres (city CRS, x east, y north), m/s; headings degrees clockwise from north.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = [
    "CROSS_SIGMA_PER_MPS",
    "heading_aided_smooth",
    "nearest_steps",
    "reweighted_heading_aided_smooth",
    "robust_rts_smooth",
    "rts_smooth",
]

FloatArray = npt.NDArray[np.float64]

CROSS_SIGMA_PER_MPS = 0.15
"""Random-walk noise of position across the heading, per m/s of speed, metres per sqrt(s) per
m/s (:func:`heading_aided_smooth`'s ``cross_sigma_per_mps``). The pictures' heading is a few
degrees off for seconds at a time (the yaw reads turns short; its correction is smoothed over
40 m, and at a track's end it has nothing to catch up with), and an error of e radians moves
the camera sideways at ``speed * e``: 0.3 m/s for 2 degrees at 30 km/h, 0.05 m/s on foot. With
no noise for it the smoother held a car's track to that heading and away from ten fixes a
second (filmed SF route, seed 0, its last 5 s: 6.2 m aided against 3.2 m for the GPS alone).
Chosen on the filmed walk rows of seeds 0-4 (docs/design-notes.md, round twenty-one)."""

MAX_GATED_IN_A_ROW = 3
"""After this many gated-out fixes in a row the next fix is taken: the filter, not the GPS, is
then the one that is lost (a turn the constant model did not foresee)."""


def nearest_steps(t_s: FloatArray, meas_t_s: FloatArray) -> npt.NDArray[np.intp]:
    """Index of the grid time in ``t_s`` (sorted, seconds) nearest each of ``meas_t_s``."""
    n = t_s.shape[0]
    steps = np.clip(np.searchsorted(t_s, meas_t_s), 0, n - 1)
    before = np.clip(steps - 1, 0, n - 1)
    nearer_before = np.abs(t_s[before] - meas_t_s) < np.abs(t_s[steps] - meas_t_s)
    return np.where(nearer_before, before, steps)


class _Gate:
    """Chi-square innovation gate: a fix is rejected when its squared Mahalanobis distance
    exceeds ``dof * gate_sigma**2``, at most :data:`MAX_GATED_IN_A_ROW` times in a row."""

    __slots__ = ("limit", "misses", "rejected")

    def __init__(self, gate_sigma: float, *, dof: int) -> None:
        self.limit = dof * gate_sigma**2
        self.misses = 0
        self.rejected = 0

    def accept(self, d2: float) -> bool:
        if d2 > self.limit and self.misses < MAX_GATED_IN_A_ROW:
            self.misses += 1
            self.rejected += 1
            return False
        self.misses = 0
        return True


def rts_smooth(
    t_s: FloatArray,
    meas_t_s: FloatArray,
    meas_x: FloatArray,
    meas_y: FloatArray,
    *,
    sigma_m: float,
    accel_sigma: float,
    gate_sigma: float,
    meas_sigma_m: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, int]:
    """Constant-velocity Kalman filter + RTS smoother evaluated at ``t_s`` (sorted, covering
    the measurement times; measurements are applied at the grid step nearest in time).
    ``meas_sigma_m``: per-fix sigma (metres), else ``sigma_m`` for all.

    Returns smoothed ``x, y, vx, vy`` (metres, m/s) and the number of gated-out measurements.
    """
    n = t_s.shape[0]
    steps = nearest_steps(t_s, meas_t_s)
    sigmas = np.full(meas_t_s.shape[0], sigma_m) if meas_sigma_m is None else meas_sigma_m
    meas_at: dict[int, tuple[float, float, float]] = {}
    for k, step in enumerate(steps):
        meas_at.setdefault(int(step), (float(meas_x[k]), float(meas_y[k]), float(sigmas[k]) ** 2))
    r = float(sigmas[0]) ** 2
    q = accel_sigma
    gate = _Gate(gate_sigma, dof=2)
    # forward pass: state per axis (p, v); shared covariance [[a, b], [b, c]]
    fx = np.zeros((n, 2))
    fy = np.zeros((n, 2))
    fcov = np.zeros((n, 3))
    pcov = np.zeros((n, 3))  # predicted covariance at step k (prior), for the RTS gain
    first = meas_at.get(int(steps[0]), (float(meas_x[0]), float(meas_y[0]), r))
    px, vx, py, vy = first[0], 0.0, first[1], 0.0
    a, b, c = r, 0.0, 4.0  # 2 m/s velocity uncertainty at the start
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
            s = a + meas[2]
            ix, iy = meas[0] - px, meas[1] - py
            if gate.accept((ix * ix + iy * iy) / s):
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
    return sx[:, 0], sy[:, 0], sx[:, 1], sy[:, 1], gate.rejected


RAYLEIGH_MEDIAN = math.sqrt(2.0 * math.log(2.0))
"""Median of the distance of a 2D Gaussian point (sigma 1 per axis) from its mean."""


def robust_rts_smooth(
    t_s: FloatArray,
    meas_t_s: FloatArray,
    meas_x: FloatArray,
    meas_y: FloatArray,
    *,
    sigma_m: float,
    accel_sigma: float,
    gate_sigma: float,
    meas_sigma_m: FloatArray | None = None,
    passes: int = 2,
    huber_k: float = 3.0,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, int]:
    """:func:`rts_smooth`, then ``passes`` more runs with each fix's sigma reweighted on its
    residual to the previous pass's track (iteratively reweighted least squares, Huber
    weights). A fix's residual ``r`` is its distance from the track over its own sigma; the
    scale is the median ``r`` over :data:`RAYLEIGH_MEDIAN` (what the sigma per axis is once
    the smoother has taken the slow part of the error: often well under the assumed sigma),
    leaving out fixes pinned to one place by a stop (their residuals are the same and tell
    nothing of the noise). A fix beyond ``huber_k`` scales gets its sigma multiplied by
    ``r / (huber_k * scale)``, so an outlier under the innovation gate (a 3 m receiver's gate
    lets 20 m through), or the ramp of a burst the step test missed, pulls the track by far
    less. Same returns as :func:`rts_smooth` (gated count of the last pass)."""
    base = np.full(meas_t_s.shape[0], sigma_m) if meas_sigma_m is None else meas_sigma_m
    sx, sy, vx, vy, gated = rts_smooth(
        t_s,
        meas_t_s,
        meas_x,
        meas_y,
        sigma_m=sigma_m,
        accel_sigma=accel_sigma,
        gate_sigma=gate_sigma,
        meas_sigma_m=base,
    )
    if meas_t_s.shape[0] < 5:
        return sx, sy, vx, vy, gated
    steps = nearest_steps(t_s, meas_t_s)
    same = (np.diff(meas_x) == 0.0) & (np.diff(meas_y) == 0.0)
    moving = ~(np.concatenate([[False], same]) | np.concatenate([same, [False]]))
    for _ in range(passes):
        residual = np.hypot(meas_x - sx[steps], meas_y - sy[steps]) / base
        scale = (
            max(float(np.median(residual[moving])) / RAYLEIGH_MEDIAN, 1e-6)
            if moving.sum() >= 5
            else 1.0
        )
        factor = np.maximum(1.0, residual / (huber_k * scale))
        sx, sy, vx, vy, gated = rts_smooth(
            t_s,
            meas_t_s,
            meas_x,
            meas_y,
            sigma_m=sigma_m,
            accel_sigma=accel_sigma,
            gate_sigma=gate_sigma,
            meas_sigma_m=base * factor,
        )
    return sx, sy, vx, vy, gated


def heading_aided_smooth(
    t_s: FloatArray,
    heading_deg: FloatArray,
    meas_t_s: FloatArray,
    meas_x: FloatArray,
    meas_y: FloatArray,
    *,
    sigma_m: float,
    speed_sigma: float = 0.3,
    drift_sigma: float = 0.15,
    gate_sigma: float = 4.0,
    meas_sigma_m: FloatArray | None = None,
    speed_mps: FloatArray | None = None,
    speed_meas_sigma: float = 1.0,
    cross_sigma_per_mps: float = CROSS_SIGMA_PER_MPS,
    still: npt.NDArray[np.bool_] | None = None,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Smoothed ``(x, y, speed)`` at grid times ``t_s`` (sorted, seconds) given the heading
    there (degrees, unwrapped) and the fixes ``meas_*`` (same clock, metres); ``meas_sigma_m``
    per-fix sigma (metres), else ``sigma_m`` for all.

    ``speed_sigma``: random-walk noise of speed, m/s per sqrt(s); ``drift_sigma``: random-walk
    noise of position beyond the heading model, m per sqrt(s); ``cross_sigma_per_mps``: more of
    it across the heading, in proportion to the speed (:data:`CROSS_SIGMA_PER_MPS`), for the
    heading's own error.

    ``speed_mps`` (optional, one per grid time, NaN for none): a speed to hold the speed
    state to, with ``speed_meas_sigma`` (m/s) at every grid step; ingest gives the GPS-only
    smoothing's speed. Without it the speed is free: where fixes the burst test missed lag
    behind the walker, it went negative to follow them (-0.7 m/s, walking backwards facing
    forwards), and across the masked burst after them the track dead-reckoned 28 m behind
    (filmed Hamburg canyon twin, seed 1, 46-85 s), where the GPS-only bridge was 12 m off.

    ``still`` (optional, one per grid time): True where the step from the previous grid time
    to this one stands still; such a step moves the position neither along the heading nor
    by any noise, so a still stretch gets one position, the fixes' mean over it. Ingest marks
    the stretches where the GPS-only smoothing stands between two kept frames: the fixes
    creep there (12 m over a canyon walker's 85 s stop), and a track that followed them would
    leap between the only two frames kept across the stop.
    """
    n = t_s.shape[0]
    steps = nearest_steps(t_s, meas_t_s)
    inside = (meas_t_s >= t_s[0] - 1.0) & (meas_t_s <= t_s[-1] + 1.0)
    sigmas = np.full(meas_t_s.shape[0], sigma_m) if meas_sigma_m is None else meas_sigma_m
    meas_at: dict[int, FloatArray] = {}
    for row in np.flatnonzero(inside).tolist():
        meas_at.setdefault(
            int(steps[row]), np.array([meas_x[row], meas_y[row], float(sigmas[row]) ** 2])
        )
    heading = np.radians(heading_deg)
    h = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    first = meas_at[min(meas_at)] if meas_at else np.array([0.0, 0.0, sigma_m**2])
    z = np.array([first[0], first[1], 1.0])
    p = np.diag([first[2], first[2], 1.0])
    zs = np.zeros((n, 3))
    ps = np.zeros((n, 3, 3))
    zp = np.zeros((n, 3))
    pp = np.zeros((n, 3, 3))
    fs = np.zeros((n, 3, 3))
    gate = _Gate(gate_sigma, dof=2)
    for k in range(n):
        f = np.eye(3)
        if k > 0:
            dt = t_s[k] - t_s[k - 1]
            mid = 0.5 * (heading[k] + heading[k - 1])
            q = np.diag([drift_sigma**2 * dt, drift_sigma**2 * dt, speed_sigma**2 * dt])
            standing = still is not None and bool(still[k])
            if standing:
                q[0, 0] = q[1, 1] = 0.0  # the position carries over as it is
            else:
                f[0, 2], f[1, 2] = dt * np.sin(mid), dt * np.cos(mid)
            if cross_sigma_per_mps > 0.0 and not standing:  # a heading error moves it sideways
                across = np.array([np.cos(mid), -np.sin(mid)])  # unit vector, right of heading
                q[:2, :2] += (cross_sigma_per_mps * abs(z[2])) ** 2 * dt * np.outer(across, across)
            z = f @ z
            p = f @ p @ f.T + q
        fs[k] = f
        zp[k], pp[k] = z, p
        meas = meas_at.get(k)
        if meas is not None:
            s = h @ p @ h.T + np.eye(2) * meas[2]
            innovation = meas[:2] - h @ z
            d2 = float(innovation @ np.linalg.solve(s, innovation))
            if gate.accept(d2):
                gain = p @ h.T @ np.linalg.inv(s)
                z = z + gain @ innovation
                p = (np.eye(3) - gain @ h) @ p
        if speed_mps is not None and np.isfinite(speed_mps[k]):
            spread = p[2, 2] + speed_meas_sigma**2
            gain_v = p[:, 2] / spread
            z = z + gain_v * (speed_mps[k] - z[2])
            p = p - np.outer(gain_v, p[2, :])
        zs[k], ps[k] = z, p
    smooth = zs.copy()
    for k in range(n - 2, -1, -1):
        gain = ps[k] @ fs[k + 1].T @ np.linalg.inv(pp[k + 1])
        smooth[k] = zs[k] + gain @ (smooth[k + 1] - zp[k + 1])
    return smooth[:, 0], smooth[:, 1], smooth[:, 2]


def reweighted_heading_aided_smooth(
    t_s: FloatArray,
    heading_deg: FloatArray,
    meas_t_s: FloatArray,
    meas_x: FloatArray,
    meas_y: FloatArray,
    *,
    sigma_m: float,
    meas_sigma_m: FloatArray | None = None,
    passes: int = 3,
    cauchy_k: float = 1.0,
    window: int = 2,
    gate_sigma: float = 4.0,
    speed_mps: FloatArray | None = None,
    speed_meas_sigma: float = 1.0,
    cross_sigma_per_mps: float = CROSS_SIGMA_PER_MPS,
    still: npt.NDArray[np.bool_] | None = None,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """:func:`heading_aided_smooth`, then ``passes`` more runs with each fix's sigma
    reweighted on the previous pass's residuals (iteratively reweighted least squares with a
    Cauchy loss, the Student-t of one degree of freedom). The keyword arguments after
    ``window`` are :func:`heading_aided_smooth`'s, passed on unchanged.

    An urban-canyon burst the cleaning kept is a run of fixes 10-30 m off the walk in one
    direction; each alone passes the innovation gate (a 5 m receiver's 4-sigma gate lets
    28 m through), so the smoother followed them. One fix's residual says little under 5 m
    of noise; a run's says more: a fix's residual here is the mean residual vector of itself
    and the ``window`` fixes each side (a burst's run points one way, noise averages out),
    over the fix's own sigma, ``u``. Its sigma is multiplied by ``sqrt(1 + (u /
    cauchy_k)^2)``, so a run of fixes that leaps off the path the pictures' heading draws
    pulls the track less with every pass.

    Same returns as :func:`heading_aided_smooth` (the last pass)."""
    base = np.full(meas_t_s.shape[0], sigma_m) if meas_sigma_m is None else meas_sigma_m

    def run(sigmas: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        return heading_aided_smooth(
            t_s,
            heading_deg,
            meas_t_s,
            meas_x,
            meas_y,
            sigma_m=sigma_m,
            meas_sigma_m=sigmas,
            gate_sigma=gate_sigma,
            speed_mps=speed_mps,
            speed_meas_sigma=speed_meas_sigma,
            cross_sigma_per_mps=cross_sigma_per_mps,
            still=still,
        )

    x, y, speed = run(base)
    if meas_t_s.shape[0] <= 2 * window + 1:
        return x, y, speed
    steps = nearest_steps(t_s, meas_t_s)
    kernel = np.full(2 * window + 1, 1.0 / (2 * window + 1))
    for _ in range(passes):
        run_x = np.convolve(meas_x - x[steps], kernel, mode="same")
        run_y = np.convolve(meas_y - y[steps], kernel, mode="same")
        u = np.hypot(run_x, run_y) / base
        x, y, speed = run(base * np.sqrt(1.0 + (u / cauchy_k) ** 2))
    return x, y, speed
