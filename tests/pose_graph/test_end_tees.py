"""A video that ends beside another street's pass ends at a T-junction (builds without OSM)."""

from __future__ import annotations

import numpy as np
import pytest

from city360.errors import GraphBuildError
from city360.geo import LocalProjection
from city360.pose_graph import build_from_tracks
from city360.pose_graph.build import BuildParams
from city360.pose_graph.dead_ends import find_dead_ends
from city360.pose_graph.end_tees import EndTeeParams, end_tees
from city360.pose_graph.segments import cut_tracks, group_streets
from city360.pose_graph.tracks import Track
from tests.pose_graph.walks import noisy_walk, polyline_track


def _junctions(tracks: list[Track], params: BuildParams | None = None) -> np.ndarray:
    graph = build_from_tracks(tracks, LocalProjection(35.74, 139.67), params=params).graph
    return np.array(
        [[d["x_m"], d["y_m"]] for _, d in graph.nodes(data=True) if d["kind"] == "junction"]
    ).reshape(-1, 2)


def _tee_walked_once() -> list[Track]:
    """A T at the origin, arms south, west and east, each filmed once (a one-way walk split at
    a stop): one video comes up the south arm and turns west; the next starts 6 m from the
    corner (4.5 m beside its street) and walks the east arm. Nothing crosses, nothing parts,
    and the start is farther than `dead_end_pass_m` (4 m) from the pass."""
    return [
        polyline_track([(0.0, -90.0), (0.0, 0.0), (-90.0, 0.0)], "south then west"),
        polyline_track([(4.5, 4.5), (90.0, 4.5)], "east"),
    ]


def test_a_video_starting_beside_a_turning_pass_starts_at_a_tee() -> None:
    # nerima-n one-way+stops 8 (-23, -30) and (-28, 70), oakland-east one-way+stops 8
    # (-212, 35): the end was a dead end 1-5 m beside the turning pass, the T lost
    junctions = _junctions(_tee_walked_once())
    assert len(junctions) == 1
    assert np.hypot(*junctions[0]) < 4.0


def test_with_the_rule_off_the_two_videos_share_no_junction() -> None:
    with pytest.raises(GraphBuildError, match="the 2 trajectories share no junction"):
        _junctions(_tee_walked_once(), BuildParams(end_tee_params=None))


def test_the_same_tee_walked_with_the_video_ending_there_is_found_too() -> None:
    tracks = [
        polyline_track([(0.0, -90.0), (0.0, 0.0), (-90.0, 0.0)], "south then west"),
        polyline_track([(90.0, 4.5), (4.5, 4.5)], "east arm, back to the corner"),
    ]
    junctions = _junctions(tracks)
    assert len(junctions) == 1
    assert np.hypot(*junctions[0]) < 4.0


def test_a_walk_split_at_a_stop_makes_no_junction() -> None:
    # the next video starts where the last ended: neither runs on past the other's end
    tracks = [
        polyline_track([(0.0, -90.0), (0.0, 0.0)], "to the stop"),
        polyline_track([(1.0, 1.0), (1.0, 90.0)], "from the stop"),
    ]
    assert len(_junctions(tracks)) == 0


def test_a_video_ending_beside_a_pass_on_a_parallel_way_makes_no_junction() -> None:
    # the end's street runs the way the pass does: no third street meets it there
    tracks = [
        polyline_track([(-90.0, 0.0), (90.0, 0.0)], "along the street"),
        polyline_track([(-90.0, 5.0), (10.0, 5.0)], "along its other sidewalk, stopping"),
    ]
    assert len(_junctions(tracks)) == 0


def test_a_street_that_stops_short_beside_a_straight_pass_stays_a_dead_end() -> None:
    # Helsinki (-202, -381), Kamppi (114, -88): OSM ends the street 5-7 m short of the road the
    # pass walks straight along; the rule needs a pass that turns the corner
    tracks = [
        polyline_track([(-90.0, 0.0), (90.0, 0.0)], "along the road"),
        polyline_track([(0.0, -90.0), (0.0, -7.5)], "up the street that stops short"),
        polyline_track([(-90.0, 1.0), (-40.0, 1.0), (-40.0, -60.0)], "turning off the road"),
    ]
    junctions = _junctions(tracks)
    assert len(junctions) == 1
    assert np.hypot(*(junctions[0] - (-40.0, 0.0))) < 4.0


_KNOT_B = (-8.1, -7.5)  # the knot's next junction, 11 m south-west of the T at the origin
_KNOT_A = (-16.3, -4.2)


def _tee_beside_a_knot() -> list[Track]:
    """The old town knot's C (-19.5, 86.5) moved to the origin: one pass comes in from the
    east-south-east, turns at the T for B 11 m south-west and turns again there for A; a
    video comes from the west along a street that bends 6 m before the T and ends 4.5 m
    beside it. The chords 15 m out run past B, along the end's street."""
    end = np.array([-2.0, 4.0])
    bend = end - 6.0 * np.array([np.sin(np.radians(117.0)), np.cos(np.radians(117.0))])
    far = bend - 60.0 * np.array([np.sin(np.radians(70.0)), np.cos(np.radians(70.0))])
    return [
        noisy_walk(
            [(60.0, -34.0), (0.0, 0.0), _KNOT_B, _KNOT_A, (-90.0, -4.2)], "pass", noise_m=0.2
        ),
        noisy_walk([tuple(far), tuple(bend), tuple(end)], "end", noise_m=0.2),
    ]


def _tees_at(tracks: list[Track], junctions: np.ndarray, params: EndTeeParams) -> np.ndarray:
    dead_xy, events = find_dead_ends(tracks, junctions)
    segments = cut_tracks(tracks, junctions, events, dead_end_xy=dead_xy)
    streets, _ = group_streets(tracks, segments)
    return end_tees(tracks, junctions, segments, streets, params)


def test_a_tee_11_m_from_another_junction_is_found_with_short_chords() -> None:
    # held-out old town one-way+stops 8: (-19.5, 86.5) was missed, the end left a dead end
    tees = _tees_at(_tee_beside_a_knot(), np.array([_KNOT_B, _KNOT_A]), EndTeeParams())
    assert len(tees) == 1
    assert np.hypot(*tees[0]) < 2.0


def test_with_the_short_chords_off_the_tee_beside_a_knot_is_lost() -> None:
    params = EndTeeParams(near_junction_far_m=None)
    assert len(_tees_at(_tee_beside_a_knot(), np.array([_KNOT_B, _KNOT_A]), params)) == 0


def test_without_a_junction_within_the_chords_reach_the_long_chords_decide() -> None:
    # the same tracks with the knot's junctions far off: nothing says the chords run past one
    far = np.array([[-90.0, -40.0]])
    assert len(_tees_at(_tee_beside_a_knot(), far, EndTeeParams())) == 0


def _tee_stopped_short() -> list[Track]:
    """The T at the origin walked once as in `_tee_walked_once`, but the video on the east arm
    stops 9 m short of the corner, 9.2 m from the turning pass (farther than `reach_m`, 8 m),
    its street pointing at the corner."""
    return [
        polyline_track([(0.0, -90.0), (0.0, 0.0), (-90.0, 0.0)], "south then west"),
        polyline_track([(90.0, 2.0), (9.0, 2.0)], "east arm, stopping short"),
    ]


def test_a_video_stopping_short_of_a_turning_pass_ahead_ends_at_a_tee() -> None:
    # held-out old town one-way 10 (47.6, -21.3): the end 6.2 m short of the T, 9.7 m from the
    # turning pass; the junction goes 7 m from the end so that its street runs into it
    junctions = _junctions(_tee_stopped_short())
    assert len(junctions) == 1
    assert np.hypot(*junctions[0]) < 4.0


def test_with_the_ahead_reach_off_the_video_stopping_short_stays_a_dead_end() -> None:
    params = BuildParams(end_tee_params=EndTeeParams(ahead_reach_m=None))
    with pytest.raises(GraphBuildError, match="the 2 trajectories share no junction"):
        _junctions(_tee_stopped_short(), params)


def test_a_pass_beside_but_not_ahead_of_a_stopped_video_is_out_of_reach() -> None:
    # an end 9.2 m east of the corner, its video coming down from the north: the pass lies
    # abeam (90 degrees off the end's heading), not ahead, so it stays out of reach, though
    # the end's street crosses both of the pass's ways
    tracks = [
        polyline_track([(0.0, -90.0), (0.0, 0.0), (-90.0, 0.0)], "south then west"),
        polyline_track([(9.2, 90.0), (9.2, 0.0)], "south beside it, stopping"),
    ]
    with pytest.raises(GraphBuildError, match="the 2 trajectories share no junction"):
        _junctions(tracks)
    found = _junctions(tracks, BuildParams(end_tee_params=EndTeeParams(ahead_deg=180.0)))
    assert len(found) == 1  # without the heading guard it would be joined
