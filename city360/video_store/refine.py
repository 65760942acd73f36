"""Positions from GPS fixes and a known heading: a heading-aided Kalman/RTS smoother.

Once the heading is known well (:mod:`.heading`, from the pictures), the only unknowns along
the way are how fast the camera moved and a slow drift of the whole path. State
``(x, y, speed)``; between steps the camera moves ``speed * dt`` along the heading. Corners are
then followed exactly instead of cut, and GPS noise across the street averages out over many
fixes. Fixes failing a chi-square gate are ignored, as in :mod:`.clean`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["heading_aided_smooth"]

FloatArray = npt.NDArray[np.float64]


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
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Smoothed ``(x, y, speed)`` at grid times ``t_s`` (sorted, seconds) given the heading
    there (degrees, unwrapped) and the fixes ``meas_*`` (same clock, metres).

    ``speed_sigma``: random-walk noise of speed, m/s per sqrt(s); ``drift_sigma``: random-walk
    noise of position beyond the heading model, m per sqrt(s).
    """
    n = t_s.shape[0]
    steps = np.clip(np.searchsorted(t_s, meas_t_s), 0, n - 1)
    before = np.clip(steps - 1, 0, n - 1)
    nearer_before = np.abs(t_s[before] - meas_t_s) < np.abs(t_s[steps] - meas_t_s)
    steps = np.where(nearer_before, before, steps)
    inside = (meas_t_s >= t_s[0] - 1.0) & (meas_t_s <= t_s[-1] + 1.0)
    meas_at: dict[int, FloatArray] = {}
    for row in np.flatnonzero(inside).tolist():
        meas_at.setdefault(int(steps[row]), np.array([meas_x[row], meas_y[row]]))
    heading = np.radians(heading_deg)
    r = np.eye(2) * sigma_m**2
    h = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    first = meas_at[min(meas_at)] if meas_at else np.zeros(2)
    z = np.array([first[0], first[1], 1.0])
    p = np.diag([sigma_m**2, sigma_m**2, 1.0])
    zs = np.zeros((n, 3))
    ps = np.zeros((n, 3, 3))
    zp = np.zeros((n, 3))
    pp = np.zeros((n, 3, 3))
    fs = np.zeros((n, 3, 3))
    gate2 = 2 * gate_sigma**2
    misses = 0
    for k in range(n):
        f = np.eye(3)
        if k > 0:
            dt = t_s[k] - t_s[k - 1]
            mid = 0.5 * (heading[k] + heading[k - 1])
            f[0, 2], f[1, 2] = dt * np.sin(mid), dt * np.cos(mid)
            q = np.diag([drift_sigma**2 * dt, drift_sigma**2 * dt, speed_sigma**2 * dt])
            z = f @ z
            p = f @ p @ f.T + q
        fs[k] = f
        zp[k], pp[k] = z, p
        meas = meas_at.get(k)
        if meas is not None:
            s = h @ p @ h.T + r
            innovation = meas - h @ z
            d2 = float(innovation @ np.linalg.solve(s, innovation))
            if d2 > gate2 and misses < 3:
                misses += 1
            else:
                misses = 0
                gain = p @ h.T @ np.linalg.inv(s)
                z = z + gain @ innovation
                p = (np.eye(3) - gain @ h) @ p
        zs[k], ps[k] = z, p
    smooth = zs.copy()
    for k in range(n - 2, -1, -1):
        gain = ps[k] @ fs[k + 1].T @ np.linalg.inv(pp[k + 1])
        smooth[k] = zs[k] + gain @ (smooth[k + 1] - zp[k + 1])
    return smooth[:, 0], smooth[:, 1], smooth[:, 2]
