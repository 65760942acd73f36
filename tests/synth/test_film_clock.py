"""The filming estimate is measured on the first frames, after set-up, and extrapolated."""

from __future__ import annotations

import pytest

from city360.synth.film_clock import FilmingClock, format_duration, planned_makespan


class FakeClock:
    def __init__(self) -> None:
        self.now_s = 100.0

    def __call__(self) -> float:
        return self.now_s


def test_the_estimate_extrapolates_the_rate_after_set_up() -> None:
    clock = FakeClock()
    filming = FilmingClock(total_frames=1000, workers=2, calibration_s=10.0, clock=clock)
    clock.now_s += 6.0  # spawning, unpickling, building renderers
    filming.ready()
    assert filming.advance(2) is None  # one warm-up frame each: the window opens here
    for _ in range(40):  # 4 frames a second for 10 s
        clock.now_s += 0.25
        line = filming.advance(1)
    assert line == (
        "estimate: 4 min 00 s more to film the remaining 958 of 1,000 frames (measured "
        "4.0 frames/s on 2 workers over 40 frames in 10 s, after 6 s of set-up)"
    )
    assert filming.advance(1) is None  # said once
    assert filming.summary() == "filmed 43 frames in 16 s (2.7 frames/s on 2 workers)"


def test_no_estimate_before_enough_frames_and_seconds_or_before_ready() -> None:
    clock = FakeClock()
    filming = FilmingClock(total_frames=100, workers=1, calibration_s=10.0, clock=clock)
    clock.now_s += 30.0
    assert filming.advance(50) is None  # not ready: set-up frames do not calibrate
    filming.ready()
    filming.advance(1)
    clock.now_s += 5.0
    assert filming.advance(30) is None  # 30 frames but only 5 s
    clock.now_s += 5.0
    assert filming.advance(19) is None  # the last frames: nothing left to estimate
    assert filming.done == 100


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.4, "0 s"), (59.4, "59 s"), (65, "1 min 05 s"), (3725, "1 h 02 min")],
)
def test_durations_read_like_a_person_says_them(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


def test_few_long_videos_leave_the_last_one_to_a_single_worker() -> None:
    assert planned_makespan([400, 400, 400, 400, 400], 2) == 1200
    assert planned_makespan([500, 300, 200, 100], 2) == 600
    assert planned_makespan([], 2) == 0
    clock = FakeClock()
    filming = FilmingClock(
        total_frames=2000, workers=2, makespan_frames=1200, calibration_s=10.0, clock=clock
    )
    filming.ready()
    filming.advance(2)
    clock.now_s += 10.0
    line = filming.advance(40)  # 4 frames/s, 2 a second per worker; the busiest has 1179 left
    assert line is not None
    assert line.startswith("estimate: 9 min 50 s more to film the remaining 1,958 of 2,000")
