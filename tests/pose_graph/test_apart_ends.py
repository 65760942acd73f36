"""A video's end that cut a pass beside it, the two running on to a junction that is then
dropped as two streets side by side: the pass is held uncut there (no OSM)."""

from __future__ import annotations

from collections import Counter

import numpy as np

from city360.pose_graph.apart import ApartParams
from city360.pose_graph.apart_ends import apart_end_passes
from city360.pose_graph.build import BuildParams, _cut
from city360.pose_graph.lone_arms import LoneArms
from city360.pose_graph.segments import Street
from city360.pose_graph.tracks import Track
from tests.pose_graph.walks import polyline_track

# Kamppi one-way 7: a video starts 0.5 m off the through pass at the dead-end street's end,
# runs on the pass's line for 10 m by GPS, then parts from it along the dead-end street
# (5.5 m beside the through street) to where that street bends down to the cross street
_START = (-30.0, -0.5)
_PARTING = (-18.0, -1.0)  # where the votes put the junction that apart_junctions drops
_VIDEO = [_START, (-20.0, -0.5), (-14.0, -5.5), (-8.0, -5.5), (0.0, -12.0), (0.0, -60.0)]
_JUNCTIONS = np.array([[0.0, 0.0], [0.0, -12.0]])
_HELD_M = 8.0


def _tracks() -> list[Track]:
    """The through street along y = 0 walked once, the cross street along x = 0 walked both
    ways, and the video from the dead-end street's end."""
    return [
        polyline_track([(-80.0, 0.0), (80.0, 0.0)], "through, once"),
        polyline_track([(0.0, 60.0), (0.0, -60.0)], "cross south"),
        polyline_track([(0.0, -60.0), (0.0, 60.0)], "cross north"),
        polyline_track(_VIDEO, "a video from the dead-end street's end"),
    ]


def _streets_at(
    junctions_xy: np.ndarray, dead_xy: np.ndarray, streets: list[Street], point: tuple[float, float]
) -> int:
    """How many street ends meet at the node nearest ``point`` (within 5 m), 0 when none."""
    nodes = np.concatenate([junctions_xy.reshape(-1, 2), dead_xy.reshape(-1, 2)])
    gaps = np.hypot(*(nodes - np.asarray(point)).T)
    if gaps.min() > 5.0:
        return 0
    ends = Counter(end for street in streets for end in (street.a, street.b))
    return ends[int(gaps.argmin())]


def _with_parting() -> tuple[list[Track], tuple]:
    tracks = _tracks()
    with_parting = np.concatenate([_JUNCTIONS, [_PARTING]])
    return tracks, _cut(tracks, with_parting, BuildParams())


def test_the_pass_the_video_start_cut_is_held_once_their_junction_is_dropped() -> None:
    tracks, (dead_xy, junctions_xy, segments, streets, _) = _with_parting()
    # the video's start cuts the pass: a dead end of two streets, one of them to the parting
    assert _streets_at(junctions_xy, dead_xy, streets, _START) == 2
    dropped = np.array([False, False, True])
    held = apart_end_passes(tracks, segments, streets, dropped, held_m=_HELD_M)
    assert {track for track, _, _ in held} == {0}
    # the old build: with the parting dropped, the video's start parts the pass in three
    dead_xy, junctions_xy, _, streets, _ = _cut(tracks, _JUNCTIONS, BuildParams())
    assert _streets_at(junctions_xy, dead_xy, streets, _START) == 3
    lone = LoneArms(np.zeros(0, dtype=bool), held)
    dead_xy, junctions_xy, _, streets, _ = _cut(tracks, _JUNCTIONS, BuildParams(), lone=lone)
    assert _streets_at(junctions_xy, dead_xy, streets, _START) == 1


def test_a_video_that_goes_on_with_the_pass_holds_nothing() -> None:
    """A video that starts on the pass's street and runs on along it past the dropped
    junction (the old town's held-out coverage 6 at (-125.9, 5.5)): it ended on that street,
    so the pass is cut there as before."""
    tracks = [*_tracks()[:3], polyline_track([_START, (80.0, -0.5)], "a video along the pass")]
    with_parting = np.concatenate([_JUNCTIONS, [_PARTING]])
    _, _, segments, streets, _ = _cut(tracks, with_parting, BuildParams())
    dropped = np.array([False, False, True])
    assert apart_end_passes(tracks, segments, streets, dropped, held_m=_HELD_M) == ()


def test_nothing_is_held_while_the_junction_stays() -> None:
    tracks, (_, _, segments, streets, _) = _with_parting()
    kept = np.zeros(3, dtype=bool)
    assert apart_end_passes(tracks, segments, streets, kept, held_m=_HELD_M) == ()


def test_video_ends_that_no_pass_goes_on_through_hold_nothing() -> None:
    """The cross street's T dropped instead: its streets run to the videos' own ends (the
    dead ends at x = 80 and y = +-60), which no other pass goes on through."""
    tracks, (_, _, segments, streets, _) = _with_parting()
    dropped = np.array([True, False, False])
    assert apart_end_passes(tracks, segments, streets, dropped, held_m=_HELD_M) == ()


def test_the_rule_is_on_by_default() -> None:
    assert ApartParams().dead_end_held_m == 8.0
