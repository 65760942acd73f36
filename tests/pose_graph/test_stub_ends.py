"""A video that starts or ends inside a short stub ends at the stub's own dead end (no OSM)."""

from __future__ import annotations

import numpy as np
import pytest

from city360.geo import LocalProjection
from city360.pose_graph import build_from_tracks
from city360.pose_graph.build import BuildParams
from city360.pose_graph.stub_ends import StubEndParams, stub_ends
from city360.pose_graph.tracks import Track
from tests.pose_graph.walks import polyline_track

_AT_THE_TEE = np.array([[0.0, 0.0]])
_ON = StubEndParams()


def _junctions(tracks: list[Track], params: BuildParams | None = None) -> np.ndarray:
    graph = build_from_tracks(tracks, LocalProjection(60.17, 24.94), params=params).graph
    return np.array(
        [[d["x_m"], d["y_m"]] for _, d in graph.nodes(data=True) if d["kind"] == "junction"]
    ).reshape(-1, 2)


def _stub_walked_out_of(seed: int) -> list[Track]:
    """Helsinki (-229, -399) and (202, -822): a through street east-west walked by one video;
    a 9 m stub leaves it northwards at the origin, and the next video starts 6.8 m up the stub
    (a walk split at a stop there), walks out of it and turns east."""
    return [
        polyline_track([(-90.0, 0.0), (90.0, 0.0)], f"through {seed}"),
        polyline_track([(-2.0, 6.5), (0.0, 0.0), (90.0, -1.0)], f"out of the stub {seed}"),
    ]


@pytest.mark.parametrize("seed", range(4))
def test_a_video_starting_up_a_short_stub_keeps_the_stub_and_its_tee(seed: int) -> None:
    junctions = _junctions(_stub_walked_out_of(seed), BuildParams(stub_end_params=_ON))
    assert len(junctions) == 1
    assert np.hypot(*junctions[0]) < 3.0


@pytest.mark.parametrize("seed", range(4))
def test_with_the_rule_off_the_stub_and_its_tee_are_lost(seed: int) -> None:
    # main's build (e30a539): the start is 6-7 m from the junction, inside the 8 m clearance,
    # so no dead end, no stub street, and the junction with two streets is dropped
    assert len(_junctions(_stub_walked_out_of(seed), BuildParams(stub_end_params=None))) == 0


def test_the_rule_is_on_by_default() -> None:
    # the scorer reads a built stub standing for a true one under 8 m as the truth does, so
    # the stubs it builds there cost nothing any more (round nineteen)
    assert BuildParams().stub_end_params == StubEndParams()


@pytest.mark.parametrize("seed", range(3))
def test_the_start_up_the_stub_is_named(seed: int) -> None:
    tracks = _stub_walked_out_of(seed)
    assert stub_ends(tracks, _AT_THE_TEE) == {(1, 0): StubEndParams().clearance_m}


@pytest.mark.parametrize("seed", range(3))
def test_a_video_ending_past_a_junction_it_walked_straight_through_is_no_stub(seed: int) -> None:
    # a video that stops 6.5 m past a crossing on the street it walked is the junction's
    tracks = [
        polyline_track([(-90.0, 0.0), (90.0, 0.0)], f"east-west {seed}"),
        polyline_track([(0.0, -90.0), (0.0, 6.5)], f"north, stopping past the crossing {seed}"),
    ]
    assert stub_ends(tracks, _AT_THE_TEE) == {}


@pytest.mark.parametrize("seed", range(3))
def test_a_stub_end_beside_another_pass_is_no_stub(seed: int) -> None:
    # another video walks past 2 m from the end: the end is a start on that street, and a dead
    # end there would cut that pass
    tracks = [
        *_stub_walked_out_of(seed),
        polyline_track([(-2.0, 90.0), (-2.0, 8.5), (-30.0, 8.5)], f"past the end {seed}"),
    ]
    assert (1, 0) not in stub_ends(tracks, _AT_THE_TEE)


def test_ends_out_of_the_window_are_left_to_the_dead_end_finder() -> None:
    # nearer than `clearance_m` an end is the junction's; from `reach_m` on a dead end already
    tracks = [
        polyline_track([(-90.0, 0.0), (90.0, 0.0)], "through"),
        polyline_track([(0.0, 3.0), (0.0, 0.0), (90.0, -1.0)], "from 3 m up"),
        polyline_track([(0.0, 12.0), (0.0, 0.0), (-90.0, -1.0)], "from 12 m up"),
    ]
    assert stub_ends(tracks, _AT_THE_TEE) == {}
