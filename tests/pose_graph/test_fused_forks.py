"""A junction built down a shallow fork's branches moves to the node at the fork (no OSM)."""

from __future__ import annotations

import numpy as np
import pytest

from city360.geo import LocalProjection
from city360.pose_graph import build_from_tracks
from city360.pose_graph.build import BuildParams
from city360.pose_graph.fused_forks import FusedForkParams
from city360.pose_graph.tracks import Track
from tests.pose_graph.walks import polyline_track


def _junctions(tracks: list[Track], params: BuildParams | None = None) -> np.ndarray:
    graph = build_from_tracks(tracks, LocalProjection(60.17, 24.94), params=params).graph
    return np.array(
        [[d["x_m"], d["y_m"]] for _, d in graph.nodes(data=True) if d["kind"] == "junction"]
    ).reshape(-1, 2)


def _shallow_fork(seed: int) -> list[Track]:
    """A street from the east forks at the origin into two branches 7 degrees either side of
    west; 25 m out they bend away from each other (north-west, south-west). One video walks
    the stem and the northern branch; the next starts at the fork (a walk split at a stop
    there) and walks the southern branch. The branches run 3-7 m apart for their first 25 m:
    one street to the grouping, and no votes until they bend."""
    return [
        polyline_track([(90.0, 0.0), (0.0, 0.0), (-25.0, 3.0), (-70.0, 20.0)], f"north {seed}"),
        polyline_track([(0.0, -1.0), (-25.0, -4.0), (-70.0, -20.0)], f"south {seed}"),
    ]


@pytest.mark.parametrize("seed", range(4))
def test_a_shallow_fork_gets_its_junction_at_the_fork(seed: int) -> None:
    # Helsinki (-228, -130), (-23, -597), (423, -416), (339, 276): built 9-26 m down the
    # branches where their passes part, a two-street node left at the fork itself
    junctions = _junctions(_shallow_fork(seed))
    assert len(junctions) == 1
    assert np.hypot(*junctions[0]) < 3.0


@pytest.mark.parametrize("seed", range(4))
def test_with_the_rule_off_the_junction_stays_where_the_branches_part(seed: int) -> None:
    junctions = _junctions(_shallow_fork(seed), BuildParams(fork_params=None))
    assert len(junctions) == 1
    assert np.hypot(*junctions[0]) > 8.0


def _tee_with_a_stop_on_its_stem(seed: int) -> list[Track]:
    """A T at the origin (stem from the south, arms west and east); one video ends 12 m down
    the stem, the next starts there and turns west; a third walks up the stem and turns
    east. The stem's passes go on into both arms, at right angles: a T, not a fork."""
    return [
        polyline_track([(0.0, -90.0), (0.0, -12.0)], f"to the stop {seed}"),
        polyline_track([(0.5, -11.5), (0.0, 0.0), (-90.0, 0.0)], f"from the stop, west {seed}"),
        polyline_track([(0.0, -90.0), (0.0, 0.0), (90.0, 0.0)], f"up and east {seed}"),
    ]


@pytest.mark.parametrize("seed", range(3))
def test_a_tee_with_a_stop_on_its_stem_keeps_its_junction(seed: int) -> None:
    junctions = _junctions(_tee_with_a_stop_on_its_stem(seed))
    assert len(junctions) == 1
    assert np.hypot(*junctions[0]) < 3.0


def _wide_y_with_a_stop_on_its_stem(seed: int, half_deg: float) -> list[Track]:
    """A Y at the origin, stem from the south, branches ``half_deg`` either side of north; a
    walk split at a stop 15 m down the stem. The votes find this Y where it is."""
    dx, dy = 60.0 * np.sin(np.radians(half_deg)), 60.0 * np.cos(np.radians(half_deg))
    return [
        polyline_track([(0.0, -90.0), (0.0, -15.0)], f"to the stop {seed}"),
        polyline_track([(0.5, -14.5), (0.0, 0.0), (dx, dy)], f"from the stop, right {seed}"),
        polyline_track([(0.0, -90.0), (0.0, 0.0), (-dx, dy)], f"up and left {seed}"),
    ]


@pytest.mark.parametrize("seed", range(3))
def test_a_wide_y_with_a_stop_on_its_stem_keeps_its_junction(seed: int) -> None:
    # the old town (33, 69) and Tokyo (-75, -232): branches 30-49 degrees off the stem
    junctions = _junctions(_wide_y_with_a_stop_on_its_stem(seed, 40.0))
    assert len(junctions) == 1
    assert np.hypot(*junctions[0]) < 3.0


def test_a_narrow_y_with_a_stop_on_its_stem_is_moved_to_the_stop() -> None:
    # the rule's known limit: a Y whose branches leave 25 degrees either side of the stem
    # looks from the stop like a fork fused up to where the votes found it
    tracks = _wide_y_with_a_stop_on_its_stem(0, 25.0)
    assert np.hypot(*_junctions(tracks, BuildParams(fork_params=None))[0]) < 3.0
    moved = _junctions(tracks, BuildParams(fork_params=FusedForkParams()))
    assert len(moved) == 1
    assert 12.0 < np.hypot(*moved[0]) < 18.0


_APEX = BuildParams(fork_params=FusedForkParams(apex_cross_deg=20.0))


@pytest.mark.parametrize("half_deg", [20.0, 25.0])
def test_a_narrow_y_with_a_stop_on_its_stem_keeps_its_junction_with_apex_cross_deg(
    half_deg: float,
) -> None:
    # fresh Bulevardi wander+stops seed 2 (148.5, -5.1): its branches' lines meet at the Y,
    # not back at the stop; with the test off the junction goes to the stop (above)
    tracks = _wide_y_with_a_stop_on_its_stem(0, half_deg)
    off = _junctions(tracks, BuildParams(fork_params=FusedForkParams()))
    assert np.hypot(*off[0]) > 12.0
    kept = _junctions(tracks, _APEX)
    assert len(kept) == 1
    assert np.hypot(*kept[0]) < 3.0


@pytest.mark.parametrize("seed", range(2))
def test_a_shallow_fork_still_gets_its_junction_at_the_fork_with_apex_cross_deg(
    seed: int,
) -> None:
    # its branches' lines cross at 14 degrees, too shallow to say where they meet
    junctions = _junctions(_shallow_fork(seed), _APEX)
    assert len(junctions) == 1
    assert np.hypot(*junctions[0]) < 3.0


def _fork_above_a_tee(seed: int) -> list[Track]:
    """A cross street along y = 0 with a T at the origin; its stem runs north and forks 7 m
    up into a nearly straight branch (6 degrees east of north) and one 14 degrees west of
    north that bends west 27 m up. One video comes along the cross street, up the stem and
    the straight branch; the next walks down the bent branch and ends at the fork, 7 m from
    the T: inside ``junction_clearance_m``, so no dead end is left there (Helsinki
    (339.5, 275.7): walk_004 ends 3 m from the fork, 6.5 m from the junction below it)."""
    return [
        polyline_track(
            [(-90.0, 0.0), (0.0, 0.0), (0.0, 7.0), (2.0, 27.0), (4.0, 120.0)],
            f"up the straight branch {seed}",
        ),
        polyline_track([(-60.0, 45.0), (-5.0, 27.0), (0.0, 7.0)], f"down the bent branch {seed}"),
        polyline_track([(90.0, 0.0), (-90.0, 0.0)], f"along the cross street {seed}"),
    ]


_AT_VIDEO_ENDS = BuildParams(fork_params=FusedForkParams(video_ends=True))


@pytest.mark.parametrize("seed", range(6))
def test_a_fork_where_a_video_ends_near_a_tee_gets_its_junction_with_video_ends(
    seed: int,
) -> None:
    junctions = _junctions(_fork_above_a_tee(seed), _AT_VIDEO_ENDS)
    assert len(junctions) == 2
    to_fork = np.hypot(junctions[:, 0], junctions[:, 1] - 7.0)
    to_tee = np.hypot(junctions[:, 0], junctions[:, 1])
    assert to_fork.min() < 2.0
    assert to_tee.min() < 2.0


@pytest.mark.parametrize("seed", range(6))
def test_without_video_ends_the_fork_stays_where_the_branches_part(seed: int) -> None:
    junctions = _junctions(_fork_above_a_tee(seed), BuildParams())
    assert len(junctions) == 2
    assert np.hypot(junctions[:, 0], junctions[:, 1] - 7.0).min() > 6.0


def _tee_above_a_tee(seed: int) -> list[Track]:
    """The same cross street and T; 20 m up the stem a second T, arms east and west. A video
    walks down from the west arm and ends 7 m above the lower T."""
    return [
        polyline_track(
            [(-90.0, 0.0), (0.0, 0.0), (0.0, 20.0), (90.0, 20.0)], f"up and east {seed}"
        ),
        polyline_track([(-90.0, 20.0), (0.0, 20.0), (0.0, 7.0)], f"down from the west {seed}"),
        polyline_track([(90.0, 0.0), (-90.0, 0.0)], f"along the cross street {seed}"),
    ]


@pytest.mark.parametrize("seed", range(3))
def test_a_tee_above_a_video_end_keeps_its_junction_with_video_ends(seed: int) -> None:
    junctions = _junctions(_tee_above_a_tee(seed), _AT_VIDEO_ENDS)
    assert len(junctions) == 2
    assert np.hypot(junctions[:, 0], junctions[:, 1] - 20.0).min() < 3.0


def test_video_ends_is_a_switch_off_by_default() -> None:
    assert FusedForkParams().video_ends is False


def _narrow_y_with_a_turn_back_on_its_stem(seed: int, back_m: float) -> list[Track]:
    """A Y at the origin, stem from the south, branches 20 degrees either side of north; two
    walkers come up the stem and turn back ``back_m`` below the Y (no video ends there), two
    more walk up the stem into each branch. The votes find this Y where it is."""
    dx, dy = 60.0 * np.sin(np.radians(20.0)), 60.0 * np.cos(np.radians(20.0))
    return [
        polyline_track([(0.0, -90.0), (0.0, -back_m), (0.3, -90.0)], f"turns back {seed}"),
        polyline_track([(0.3, -90.0), (0.0, -back_m), (0.0, -90.0)], f"turns too {seed}"),
        polyline_track([(0.0, -90.0), (0.0, 0.0), (dx, dy)], f"up and right {seed}"),
        polyline_track([(0.0, -90.0), (0.0, 0.0), (-dx, dy)], f"up and left {seed}"),
    ]


_TURN_BACK = BuildParams(fork_params=FusedForkParams(turn_back_stem_m=20.0))


@pytest.mark.parametrize("seed", range(3))
def test_a_narrow_y_keeps_its_junction_with_a_turn_back_far_down_its_stem(seed: int) -> None:
    # fresh Bulevardi wander+stops seed 2 (148.5, -5.1): two walkers turned back 24.7 m below
    # the Y; without the limit its junction went to where they turned
    tracks = _narrow_y_with_a_turn_back_on_its_stem(seed, 24.0)
    moved = _junctions(tracks, BuildParams(fork_params=FusedForkParams(turn_back_stem_m=None)))
    assert len(moved) == 1
    assert np.hypot(*moved[0]) > 20.0
    kept = _junctions(tracks, _TURN_BACK)
    assert len(kept) == 1
    assert np.hypot(*kept[0]) < 3.0


def test_turn_back_stem_m_is_20_m_by_default() -> None:
    assert FusedForkParams().turn_back_stem_m == 20.0
