"""A dead end beside another street, its way in parallel to it, does not cut that street's
passes (no OSM)."""

from __future__ import annotations

import numpy as np

from city360.pose_graph.beside_ends import BesideEndParams, beside_end_filter
from city360.pose_graph.build import BuildParams
from city360.pose_graph.dead_ends import DeadEndEvent
from city360.pose_graph.segments import cut_tracks
from city360.pose_graph.tracks import Track
from tests.pose_graph.walks import polyline_track


def _cut_at_end(
    tracks: list[Track], end: tuple[float, float], *, rule: bool, turn: bool = True
) -> bool:
    """Whether the first track, cut at junctions at x = -60 and 60 m, is also cut at a dead
    end at ``end``, where the last track turns back (``turn``) or starts."""
    last = tracks[-1]
    frame = int(np.hypot(*(last.xy - end).T).argmin()) if turn else 0
    events = [[DeadEndEvent(len(tracks) - 1, frame, *end)]]
    end_xy = np.array([end])
    junctions_xy = np.array([[-60.0, 0.0], [60.0, 0.0]])
    rule_params = BesideEndParams()
    may_cut = beside_end_filter(tracks, junctions_xy, end_xy, events, rule_params) if rule else None
    segments = cut_tracks(tracks, junctions_xy, events, dead_end_xy=end_xy, may_cut=may_cut)
    return sum(seg.track == 0 for seg in segments) > 1


_MAIN = [(-80.0, 0.0), (80.0, 0.0)]


def test_a_pass_beside_a_parallel_end_is_not_cut() -> None:
    """Fresh Kaisaniemi (-87.3, -125.8): a footpath walked to its end 3.5 m beside the main
    path and back, 6 degrees off it; the main path's pass comes within 4 m of the end."""
    tracks = [
        polyline_track(_MAIN, "main"),
        polyline_track([(30.0, 7.0), (-10.0, 3.5), (30.0, 7.5)], "beside, out and back"),
    ]
    assert _cut_at_end(tracks, (-10.0, 3.5), rule=False)
    assert not _cut_at_end(tracks, (-10.0, 3.5), rule=True)


def test_a_video_starting_beside_the_street_still_cuts_it() -> None:
    tracks = [
        polyline_track(_MAIN, "main"),
        polyline_track([(-10.0, 3.0), (30.0, 9.0)], "beside, a video's start"),
    ]
    assert _cut_at_end(tracks, (-10.0, 3.0), rule=True, turn=False)


def test_a_walker_turning_back_on_the_street_still_cuts_it() -> None:
    tracks = [
        polyline_track(_MAIN, "main"),
        polyline_track([(80.0, 1.0), (-10.0, 1.0), (80.0, 1.5)], "turns back on the street"),
    ]
    assert _cut_at_end(tracks, (-10.0, 1.0), rule=True)


def test_a_path_running_into_the_street_still_cuts_it() -> None:
    tracks = [
        polyline_track(_MAIN, "main"),
        polyline_track([(-10.0, 60.0), (-10.0, 3.0), (-10.5, 60.0)], "a T's stem ending short"),
    ]
    assert _cut_at_end(tracks, (-10.0, 3.0), rule=True)


def test_the_rule_is_on_by_default() -> None:
    assert BuildParams().beside_end_params == BesideEndParams()
