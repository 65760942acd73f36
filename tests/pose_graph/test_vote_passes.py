"""The ways of the passes by a part of a parted vote pile (``JunctionParams.split_crossed_m``,
:mod:`city360.pose_graph.vote_passes`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy.spatial import cKDTree

from city360.pose_graph.junction_params import JunctionParams
from city360.pose_graph.junctions import find_junction_parts, find_junctions
from city360.pose_graph.tracks import Track, sample_tracks
from city360.pose_graph.vote_passes import own_arms_deg, route_spread_deg
from tests.pose_graph.test_vote_peaks import _crossings, _walk

PEAKS = JunctionParams(split_peaks_m=8.0, split_crossed_m=None)
WAYS = replace(PEAKS, split_crossed_m=3.0)


def _bend_by_crossing(seed: int, *, bend_x_m: float = 10.0, bend_deg: float = 60.0) -> list[Track]:
    """An east-west street walked both ways by three walkers each, bending ``bend_deg`` to
    the south-east at ``bend_x_m``; a street crossing it at x = 0, walked both ways, and
    walkers turning there."""
    rng = np.random.default_rng(seed)
    turn = np.radians(bend_deg)
    far = (bend_x_m + 60.0 * np.cos(turn), -60.0 * np.sin(turn))
    east = [(-60.0, 0.0), (bend_x_m, 0.0), far]
    routes: dict[str, list[tuple[float, float]]] = {
        "main-east": east,
        "main-west": east[::-1],
        "main-east-2": east,
        "main-west-2": east[::-1],
        "main-east-3": east,
        "main-west-3": east[::-1],
        "cross-north": [(0.0, -50.0), (0.0, 50.0)],
        "cross-south": [(0.0, 50.0), (0.0, -50.0)],
        "west-north": [(-50.0, 0.0), (0.0, 0.0), (0.0, 50.0)],
        "north-east": [(0.0, 50.0), (0.0, 0.0), (bend_x_m, 0.0), far],
    }
    return [_walk(points, name, rng) for name, points in routes.items()]


@pytest.mark.parametrize("seed", [1, 2])
def test_a_bend_whose_votes_join_a_crossings_pile_is_not_parted_out(seed: int) -> None:
    """The bend's votes (passes of one street, before and after it) join the crossing's
    pile; the pile has two tops, and parting it makes the bend a junction. Every pass by
    the bend goes one way, round it: the part goes back."""
    tracks = _bend_by_crossing(seed)
    assert len(find_junctions(tracks, without_osm=True)[0]) == 1
    assert len(find_junctions(tracks, PEAKS, without_osm=True)[0]) == 2
    junctions, _ = find_junctions(tracks, WAYS, without_osm=True)
    assert len(junctions) == 1
    assert np.hypot(*junctions[0]) < 2.5


@pytest.mark.parametrize("seed", [0, 2])
def test_two_crossings_10_m_apart_stay_two_with_the_ways_test(seed: int) -> None:
    tracks = _crossings([0.0] * 4, [10.0] * 4, seed)
    parted, _ = find_junctions(tracks, WAYS, without_osm=True)
    assert len(parted) == 2
    west, east = sorted(parted.tolist())
    assert np.hypot(west[0] - 0.0, west[1]) < 2.5
    assert np.hypot(east[0] - 10.0, east[1]) < 2.5


def _spread(tracks: list[Track], centre: tuple[float, float]) -> float:
    samples = sample_tracks(tracks, 1.0)
    return route_spread_deg(
        tracks,
        samples,
        cKDTree(samples[0]),
        np.asarray(centre),
        radius_m=3.0,
        leg_m=8.0,
        separation_m=30.0,
    )


def test_passes_round_one_bend_go_one_way_and_a_crossing_two() -> None:
    tracks = _bend_by_crossing(1)
    main = [t for t in tracks if t.id.startswith("main")]
    assert _spread(main, (10.0, 0.0)) < 25.0  # each turns 60 degrees, all the same way
    assert _spread(tracks, (0.0, 0.0)) > 60.0
    assert _spread(tracks, (200.0, 0.0)) == 0.0  # no pass there


def test_the_ways_test_is_on_by_default_with_split_peaks() -> None:
    params = JunctionParams()
    assert params.split_peaks_m == 8.0
    assert params.split_crossed_m == 3.0
    assert params.split_ways_deg == params.min_angle_deg
    tracks = _bend_by_crossing(1)
    assert len(find_junctions(tracks, params, without_osm=True)[0]) == 1


CLOSE = replace(JunctionParams(), split_close_m=6.5)
UNCLOSE = replace(JunctionParams(), split_close_m=None)


def _knot(gap_m: float, seed: int) -> list[Track]:
    """Two junctions ``gap_m`` apart on an east-west street: a side street leaves the west
    one (x = 0) to the north, another the east one (x = ``gap_m``) to the south (a knot, as
    Erottaja's on fresh Bulevardi); the street walked both ways, walkers turning at each
    junction and through the link between them."""
    rng = np.random.default_rng(seed)
    b = gap_m
    routes: dict[str, list[tuple[float, float]]] = {
        "main-east": [(-60, 0), (60, 0)],
        "main-west": [(60, 0), (-60, 0)],
        "main-east-2": [(-60, 0), (60, 0)],
        "west-north": [(-50, 0), (0, 0), (0, 50)],
        "north-west": [(0, 50), (0, 0), (-50, 0)],
        "north-east": [(0, 50), (0, 0), (50, 0)],
        "east-south": [(50, 0), (b, 0), (b, -50)],
        "south-east": [(b, -50), (b, 0), (50, 0)],
        "south-west": [(b, -50), (b, 0), (-50, 0)],
        "north-south": [(0, 50), (0, 0), (b, 0), (b, -50)],
        "south-north": [(b, -50), (b, 0), (0, 0), (0, 50)],
    }
    return [_walk(points, name, rng) for name, points in routes.items()]


@pytest.mark.parametrize(("gap_m", "seed"), [(8.7, 2), (8.0, 1), (8.0, 4)])
def test_a_knot_whose_vote_tops_stand_under_8_m_apart_is_parted_by_its_passes(
    gap_m: float, seed: int
) -> None:
    """The votes of the two junctions pile into one cluster whose tops stand under
    ``split_peaks_m`` apart: one junction without ``split_close_m``. The passes by the west
    top leave it north, those by the east top south: two junctions, one at each."""
    tracks = _knot(gap_m, seed)
    assert len(find_junctions(tracks, UNCLOSE, without_osm=True)[0]) == 1
    parted, _ = find_junctions(tracks, CLOSE, without_osm=True)
    assert len(parted) == 2
    west, east = sorted(parted.tolist())
    assert np.hypot(west[0] - 0.0, west[1]) < 2.5
    assert np.hypot(east[0] - gap_m, east[1]) < 2.5


@pytest.mark.parametrize("seed", range(6))
def test_close_tops_whose_passes_take_the_same_streets_stay_one(seed: int) -> None:
    """Crossings at x = 0 and 8 m whose side streets both run north and south: the passes
    by each top leave it along the same streets, so ``split_close_m`` adds no parting (the
    rows it leaves one stay one, whatever the crossings are)."""
    tracks = _crossings([0.0] * 4, [8.0] * 4, seed)
    assert len(find_junctions(tracks, CLOSE, without_osm=True)[0]) == len(
        find_junctions(tracks, UNCLOSE, without_osm=True)[0]
    )
    wide = _crossings([0.0, 2.9, 5.7, 8.6], [1.4, 4.3, 7.1, 10.0], seed)
    assert len(find_junctions(wide, CLOSE, without_osm=True)[0]) == 1


def test_own_arms_leave_out_the_link_and_the_legs_to_the_other_top() -> None:
    tracks = _knot(8.7, 2)
    samples = sample_tracks(tracks, 1.0)
    tree = cKDTree(samples[0])
    west, east = np.asarray([0.0, 0.0]), np.asarray([8.7, 0.0])
    kw = {"radius_m": 3.0, "leg_m": 8.0, "clear_m": 5.0, "separation_m": 30.0, "axis_deg": 25.0}
    west_arms = own_arms_deg(tracks, samples, tree, west, east, **kw)
    east_arms = own_arms_deg(tracks, samples, tree, east, west, **kw)
    assert west_arms.size
    assert east_arms.size
    assert np.all(np.abs(np.mod(west_arms + 180.0, 360.0) - 180.0) < 30.0)  # north
    assert np.all(np.abs(east_arms - 180.0) < 30.0)  # south


def test_split_close_is_on_by_default() -> None:
    params = JunctionParams()
    assert params.split_close_m == 6.5
    assert params.split_close_clear_m == 5.0
    assert params.split_close_arm_deg == 45.0
    assert len(find_junctions(_knot(8.7, 2), params, without_osm=True)[0]) == 2


def test_the_parts_of_a_pile_parted_at_close_tops_are_flagged() -> None:
    """``find_junction_parts`` flags the parts of piles parted at tops under
    ``split_peaks_m`` apart (what ``split_parts_apart`` keeps apart after refine), not those
    of piles parted as before."""
    _, _, parted, close = find_junction_parts(_knot(8.7, 2), CLOSE, without_osm=True)
    assert parted.tolist() == [True, True]
    assert close.tolist() == [True, True]
    _, _, parted, close = find_junction_parts(
        _crossings([0.0] * 4, [10.0] * 4, 0), CLOSE, without_osm=True
    )
    assert parted.tolist() == [True, True]
    assert not close.any()
