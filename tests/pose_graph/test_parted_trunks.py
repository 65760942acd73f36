"""Two streets that leave one node together and part far from it: the junction where they
part (no OSM)."""

from __future__ import annotations

import numpy as np
import pytest

from city360.pose_graph.parted_trunks import PartedTrunkParams, parted_trunks
from city360.pose_graph.segments import Segment, Street
from city360.pose_graph.tracks import Track
from tests.pose_graph.walks import polyline_track


def _frame(track: Track, x: float, y: float) -> int:
    return int(np.argmin(np.hypot(track.xy[:, 0] - x, track.xy[:, 1] - y)))


def _trunk_then_fork(
    seed: int, branch: tuple[float, float], fork_x: float = -30.0
) -> tuple[list[Track], np.ndarray, np.ndarray, list[Segment], list[Street]]:
    """A walker's turning point ``N`` at the origin (a dead end of the cut) with a street east
    of it; west of it one way runs to a fork at (``fork_x``, 0) that the votes missed, where
    one branch goes on west to junction A (-50, 0) and the other turns to junction B at
    ``branch``. Three passes each way. Nodes: junctions A 0, B 1; dead ends N 2, E 3 (40, 0)."""
    tracks: list[Track] = []
    segments: list[Segment] = []
    east, to_a, to_b = [], [], []
    for k in range(3):
        west = polyline_track([(40.0, 0.0), (0.0, 0.0), (fork_x, 0.0), (-50.0, 0.0)], f"a{seed}{k}")
        tracks.append(west)
        n = _frame(west, 0.0, 0.0)
        segments.append(Segment(len(tracks) - 1, 3, 2, 0, n))
        east.append(len(segments) - 1)
        segments.append(Segment(len(tracks) - 1, 2, 0, n, len(west) - 1))
        to_a.append(len(segments) - 1)
        turn = polyline_track([(0.0, 0.0), (fork_x, 0.0), branch], f"b{seed}{k}")
        tracks.append(turn)
        segments.append(Segment(len(tracks) - 1, 2, 1, 0, len(turn) - 1))
        to_b.append(len(segments) - 1)
    streets = [
        Street(0, 2, 3, (), tuple(east)),
        Street(1, 0, 2, (), tuple(to_a)),
        Street(2, 1, 2, (), tuple(to_b)),
    ]
    junctions = np.array([[-50.0, 0.0], branch])
    dead = np.array([[0.0, 0.0], [40.0, 0.0]])
    return tracks, junctions, dead, segments, streets


@pytest.mark.parametrize("seed", range(4))
def test_two_streets_on_one_way_out_of_a_node_meet_a_junction_where_they_part(seed: int) -> None:
    # tokyo-oldtown wander seed 5 without OSM: a walker turns back at (7.4, 71.1), 28 m east
    # of the T (-19.5, 86.5) that the votes missed; its passes run on to the knot's two parts
    found = parted_trunks(*_trunk_then_fork(seed, (-30.0, -25.0)))
    assert found.shape == (1, 2)
    assert np.hypot(found[0, 0] + 30.0, found[0, 1]) < 4.0


@pytest.mark.parametrize("seed", range(4))
def test_a_shallow_fork_drifting_apart_is_no_parting(seed: int) -> None:
    # branches 15 degrees apart: fused_forks' case, whose junction belongs at the node
    branch = (-30.0 - 25.0 * np.cos(np.radians(15.0)), -25.0 * np.sin(np.radians(15.0)))
    assert len(parted_trunks(*_trunk_then_fork(seed, branch))) == 0


@pytest.mark.parametrize("seed", range(4))
def test_a_parting_near_the_node_is_its_own_arm(seed: int) -> None:
    assert len(parted_trunks(*_trunk_then_fork(seed, (-5.0, -25.0), fork_x=-5.0))) == 0


@pytest.mark.parametrize("seed", range(2))
def test_a_parting_at_a_node_of_the_cut_adds_nothing(seed: int) -> None:
    tracks, junctions, dead, segments, streets = _trunk_then_fork(seed, (-30.0, -25.0))
    # a node of the cut already at the fork (a dead end no street of these reaches)
    with_fork = np.concatenate([dead, [[-31.0, 1.0]]])
    assert len(parted_trunks(tracks, junctions, with_fork, segments, streets)) == 0
    assert len(parted_trunks(tracks, junctions, dead, segments, streets)) == 1


def test_the_rule_is_tunable_by_its_trunk_length() -> None:
    found = parted_trunks(*_trunk_then_fork(0, (-30.0, -25.0)), PartedTrunkParams(min_trunk_m=40.0))
    assert len(found) == 0


def test_from_a_junction_only_when_asked_and_never_from_a_shallow_fork() -> None:
    # the same streets with N a junction of the cut (junctions A 0, B 1, N 2; dead end E 3)
    tracks, junctions, dead, segments, streets = _trunk_then_fork(0, (-30.0, -25.0))
    with_n = np.concatenate([junctions, dead[:1]])
    assert len(parted_trunks(tracks, with_n, dead[1:], segments, streets)) == 0
    anywhere = PartedTrunkParams(dead_ends_only=False)
    assert len(parted_trunks(tracks, with_n, dead[1:], segments, streets, anywhere)) == 1
    # a junction fused_forks put at a fork: its branches leave it together by design
    # (Helsinki (-229, -130) and (340, 278) without OSM)
    found = parted_trunks(tracks, with_n, dead[1:], segments, streets, anywhere, forks_xy=dead[:1])
    assert len(found) == 0
