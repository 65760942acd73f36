"""What every benchmark shares: repeated timing with percentiles, and the machine's facts."""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Timing", "machine_info", "time_calls", "timing_of"]


@dataclass(frozen=True, slots=True)
class Timing:
    """Durations of repeated calls in milliseconds: wall clock, and the CPU time this process
    spent in them (all its threads), which a loaded machine inflates far less."""

    samples_ms: tuple[float, ...]
    cpu_samples_ms: tuple[float, ...] = ()

    @property
    def n(self) -> int:
        return len(self.samples_ms)

    @property
    def p50_ms(self) -> float:
        return float(np.percentile(self.samples_ms, 50))

    @property
    def p95_ms(self) -> float:
        return float(np.percentile(self.samples_ms, 95))

    @property
    def mean_ms(self) -> float:
        return float(np.mean(self.samples_ms))

    @property
    def cpu_p50_ms(self) -> float | None:
        return float(np.percentile(self.cpu_samples_ms, 50)) if self.cpu_samples_ms else None

    def to_json(self) -> dict[str, float | int | None]:
        return {
            "n": self.n,
            "p50_ms": round(self.p50_ms, 3),
            "p95_ms": round(self.p95_ms, 3),
            "mean_ms": round(self.mean_ms, 3),
            "min_ms": round(min(self.samples_ms), 3),
            "cpu_p50_ms": None if self.cpu_p50_ms is None else round(self.cpu_p50_ms, 3),
        }


def timing_of(samples_s: list[float], cpu_s: list[float] | None = None) -> Timing:
    """A :class:`Timing` from wall (and optionally CPU) durations in seconds (at least one)."""
    if not samples_s:
        msg = "no samples to summarise"
        raise ValueError(msg)
    return Timing(tuple(1000.0 * s for s in samples_s), tuple(1000.0 * s for s in cpu_s or ()))


def time_calls(
    call: Callable[[int], Any],
    repeats: int,
    *,
    before: Callable[[int], Any] | None = None,
    warmup: int = 1,
) -> Timing:
    """Time ``call(k)`` for k in 0..repeats-1 (after ``warmup`` untimed calls); ``before(k)``
    runs untimed before each timed call (to drop caches, wait for prefetch, ...)."""
    for k in range(warmup):
        if before is not None:
            before(-1 - k)
        call(-1 - k)
    samples, cpu = [], []
    for k in range(repeats):
        if before is not None:
            before(k)
        cpu_started = time.process_time()
        started = time.perf_counter()
        call(k)
        samples.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)
    return timing_of(samples, cpu)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(module: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(module)
    except PackageNotFoundError:
        return None


def machine_info() -> dict[str, Any]:
    """CPU count and model, platform, Python and library versions, load average now."""
    from city360 import __version__

    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = []
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 1
    return {
        "cpu_count": os.cpu_count(),
        "cpu_usable": usable,
        "cpu_model": _cpu_model(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "load_average_1_5_15": load,
        "versions": {
            "city360": __version__,
            **{
                name: _version(name)
                for name in (
                    "numpy",
                    "av",
                    "opencv-python-headless",
                    "moderngl",
                    "py360convert",
                    "networkx",
                )
            },
        },
    }
