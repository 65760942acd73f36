"""GPS error processes shared by the cleaning tests."""

from __future__ import annotations

import numpy as np


def gauss_markov(rng: np.random.Generator, n: int, tau_s: float, sigma_m: float) -> np.ndarray:
    """(n, 2) first-order Gauss-Markov error at 1 Hz, ``sigma_m`` per axis, ``tau_s`` seconds."""
    keep = np.exp(-1.0 / tau_s)
    steps = rng.normal(0.0, sigma_m * np.sqrt(1.0 - keep**2), (n, 2))
    out = np.empty((n, 2))
    out[0] = rng.normal(0.0, sigma_m, 2)
    for k in range(1, n):
        out[k] = keep * out[k - 1] + steps[k]
    return out
