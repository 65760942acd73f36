"""Spans where the camera stood still held at one place before a build without OSM."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from city360.geo import LocalProjection
from city360.pose_graph.build import BuildParams, build_from_tracks
from city360.pose_graph.dwell import hold_still_spans, still_spans
from city360.pose_graph.tracks import Track, make_track

FloatArray = npt.NDArray[np.float64]

WALK_MPS = 1.3


def _creep(rng: np.random.Generator, steps: int, radius_m: float) -> FloatArray:
    """A fix creeping one metre at a time in a wandering direction, kept within ``radius_m``
    of where it started (canyon GPS while the camera stands still)."""
    heading = rng.uniform(0.0, 2.0 * np.pi)
    points = [np.zeros(2)]
    for _ in range(steps):
        heading += rng.normal(0.0, 1.2)
        step = np.array([np.cos(heading), np.sin(heading)])
        if np.hypot(*(points[-1] + step)) > radius_m:
            heading += np.pi
            step = -step
        points.append(points[-1] + step)
    return np.array(points[1:])


def _street_with_a_long_stop(seed: int) -> Track:
    """60 m along a street (y = 0), a 15-minute stop 3 m beside it whose fix creeps over 60 m
    in a 5 m knot, then 60 m on along the street."""
    rng = np.random.default_rng(seed)
    walk_in = np.column_stack([np.arange(-60.0, 0.0), np.zeros(60)])
    knot = _creep(rng, 60, 5.0) + np.array([0.0, 3.0])
    walk_out = np.column_stack([np.arange(1.0, 61.0), np.zeros(60)])
    xy = np.concatenate([walk_in, knot, walk_out]) + rng.normal(0.0, 0.3, (180, 2))
    t_in = np.arange(60) / WALK_MPS
    t_knot = t_in[-1] + 15.0 * np.arange(1, 61)
    t_out = t_knot[-1] + np.arange(1, 61) / WALK_MPS
    t_s = np.concatenate([t_in, t_knot, t_out])
    return make_track(f"stop{seed}", xy, spacing_m=1.0, frame_count=len(xy), t_s=t_s)


def test_a_long_creeping_stop_beside_a_street_builds_no_junction() -> None:
    projection = LocalProjection(35.7356, 139.6522)
    with_junction = []
    for seed in range(8):
        graph = build_from_tracks([_street_with_a_long_stop(seed)], projection).graph
        kinds = [data["kind"] for _, data in graph.nodes(data=True)]
        if "junction" in kinds:
            with_junction.append(seed)
    assert with_junction == []


def test_without_holding_the_stop_the_knot_votes_a_junction() -> None:
    # the knot alone is what makes the false junction (the test above would pass vacuously
    # if no knot ever voted one)
    projection = LocalProjection(35.7356, 139.6522)
    params = BuildParams(hold_still=False)
    junctions = 0
    for seed in range(8):
        graph = build_from_tracks([_street_with_a_long_stop(seed)], projection, params=params).graph
        junctions += sum(data["kind"] == "junction" for _, data in graph.nodes(data=True))
    assert junctions > 0


def test_the_stop_is_one_span_held_at_its_median() -> None:
    track = _street_with_a_long_stop(1)
    assert still_spans(track) == [(59, 119)]
    (held,) = hold_still_spans([track])
    assert held.id == track.id
    assert held.frame_count == track.frame_count
    assert held.t_s is not None
    assert np.array_equal(held.t_s, track.t_s)
    centre = np.median(track.xy[59:120], axis=0)
    np.testing.assert_array_equal(held.xy[59:120], np.broadcast_to(centre, (61, 2)))
    np.testing.assert_array_equal(held.xy[:59], track.xy[:59])
    np.testing.assert_array_equal(held.xy[120:], track.xy[120:])


@pytest.mark.parametrize(
    ("step_s", "reason"),
    [(2.0, "a pause of two seconds per metre is walking slowly"), (1.0 / WALK_MPS, "walking")],
)
def test_walking_is_no_still_span(step_s: float, reason: str) -> None:
    xy = np.column_stack([np.arange(40.0), np.zeros(40)])
    track = make_track("walk", xy, spacing_m=1.0, frame_count=40, t_s=np.arange(40) * step_s)
    assert still_spans(track) == [], reason


def test_a_slow_creep_far_from_its_median_is_a_walk_not_a_stop() -> None:
    # 30 m at 0.1 m/s: every step is still, but the poses spread 15 m from their median
    xy = np.column_stack([np.arange(31.0), np.zeros(31)])
    track = make_track("creep", xy, spacing_m=1.0, frame_count=31, t_s=np.arange(31) * 10.0)
    assert still_spans(track) == []


def test_a_track_without_times_has_no_still_span() -> None:
    xy = np.zeros((20, 2))
    assert still_spans(make_track("no clock", xy, spacing_m=1.0, frame_count=20)) == []
