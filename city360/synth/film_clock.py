"""How long filming will take: measured on the first frames of the run itself, never assumed.

A machine's speed is not a constant city360 could ship (a GPU, llvmpipe on 2 cores, other jobs
sharing them), so :class:`FilmingClock` times the first frames the real filming produces (at
least :data:`CALIBRATION_FRAMES_PER_WORKER` per worker and :data:`CALIBRATION_MIN_S` seconds,
from when every worker has its renderer and a first frame) and extrapolates that rate (frames
per second of wall time, all workers together) over the frames left. Measuring inside the run
costs nothing extra and sees what an estimate made beforehand would miss: how well the workers
share the cores (one llvmpipe process already keeps more than one core busy, so N workers are
not N times faster).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

__all__ = [
    "CALIBRATION_FRAMES_PER_WORKER",
    "CALIBRATION_MIN_S",
    "FilmingClock",
    "format_duration",
    "planned_makespan",
]

CALIBRATION_FRAMES_PER_WORKER = 20
"""Frames per worker timed, at least, before the estimate is printed."""
CALIBRATION_MIN_S = 10.0
"""Seconds of filming timed, at least, before the estimate is printed: over fewer, the first
frames' warm-up (shader compilation, caches) and a neighbour's burst weigh too much."""


def planned_makespan(frames: Sequence[int], workers: int) -> int:
    """Frames the busiest of ``workers`` films when videos of ``frames`` frames each are
    handed out in this order to whichever worker has the least work (equal speeds)."""
    loads = [0] * max(1, workers)
    for count in frames:
        loads[loads.index(min(loads))] += count
    return max(loads)


def format_duration(seconds: float) -> str:
    """``seconds`` for people: ``"45 s"``, ``"3 min 05 s"``, ``"1 h 02 min"``."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


@dataclass(slots=True)
class FilmingClock:
    """Counts filmed frames and turns the first ones into an estimate of the time left.

    ``total_frames`` is every frame to film, ``workers`` the processes filming them and
    ``makespan_frames`` the frames the busiest worker films (:func:`planned_makespan`; default
    an even share): with few videos the last ones run on fewer workers than the rest. Call
    :meth:`ready` when every worker can render (scene and renderer built), :meth:`advance` as
    frames are encoded; :meth:`advance` returns the estimate line once, when calibration ends.
    ``clock`` (seconds, monotonic) is replaceable for tests.
    """

    total_frames: int
    workers: int
    makespan_frames: int = 0
    """0: ``total_frames / workers``."""
    calibration_frames: int = 0
    """0: :data:`CALIBRATION_FRAMES_PER_WORKER` x ``workers``."""
    calibration_s: float = CALIBRATION_MIN_S
    clock: Callable[[], float] = time.monotonic
    done: int = field(default=0, init=False)
    _started_s: float = field(default=0.0, init=False)
    _ready_at: int | None = field(default=None, init=False)
    _window_s: float | None = field(default=None, init=False)
    _done_at_window: int = field(default=0, init=False)
    _estimated: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        if self.calibration_frames <= 0:
            self.calibration_frames = CALIBRATION_FRAMES_PER_WORKER * max(1, self.workers)
        if self.makespan_frames <= 0:
            self.makespan_frames = -(-self.total_frames // max(1, self.workers))
        self._started_s = self.clock()

    def ready(self) -> None:
        """Every worker has its renderer: calibration starts once each has filmed a frame."""
        if self._ready_at is None:
            self._ready_at = self.done

    def advance(self, frames: int = 1) -> str | None:
        """Count ``frames`` more filmed frames; the estimate line when calibration just ended."""
        self.done += frames
        if self._estimated or self._ready_at is None:
            return None
        now = self.clock()
        if self._window_s is None:
            if self.done - self._ready_at >= self.workers:  # about one warm-up frame each
                self._window_s, self._done_at_window = now, self.done
            return None
        measured = self.done - self._done_at_window
        took_s = now - self._window_s
        if (
            measured < self.calibration_frames
            or took_s < self.calibration_s
            or self.done >= self.total_frames
        ):
            return None
        self._estimated = True
        rate = measured / max(took_s, 1e-9)
        # the busiest worker has filmed about an even share so far and films at rate / workers
        left_frames = max(self.makespan_frames - self.done / self.workers, 0.0)
        left_s = left_frames * self.workers / rate
        return (
            f"estimate: {format_duration(left_s)} more to film the remaining "
            f"{self.total_frames - self.done:,} of {self.total_frames:,} frames "
            f"(measured {rate:.1f} frames/s on {self.workers} "
            f"worker{'s' if self.workers != 1 else ''} over {measured} frames in "
            f"{format_duration(took_s)}, after {format_duration(self._window_s - self._started_s)}"
            " of set-up)"
        )

    def summary(self) -> str:
        """What filming took: frames, wall time and the overall rate."""
        elapsed = self.clock() - self._started_s
        rate = self.done / elapsed if elapsed > 0 else 0.0
        return (
            f"filmed {self.done:,} frames in {format_duration(elapsed)} "
            f"({rate:.1f} frames/s on {self.workers} worker{'s' if self.workers != 1 else ''})"
        )
