from __future__ import annotations

import numpy as np
import pytest

from city360.pose_graph.junctions import (
    DeadEndEvent,
    JunctionParams,
    find_dead_ends,
    find_junctions,
    group_dead_ends,
    merge_close,
    merge_found,
    merge_parts_apart,
)
from city360.pose_graph.segments import cut_tracks, group_streets
from city360.pose_graph.tracks import Track, make_track


def _line(
    start: tuple[float, float], end: tuple[float, float], name: str, *, noise: float = 0.3
) -> Track:
    rng = np.random.default_rng(sum(map(ord, name)))
    a, b = np.asarray(start, float), np.asarray(end, float)
    n = int(np.hypot(*(b - a))) + 1
    xy = a + np.linspace(0.0, 1.0, n)[:, None] * (b - a) + rng.normal(0, noise, (n, 2))
    return make_track(name, xy, spacing_m=1.0, frame_count=n)


def test_crossing_tracks_make_one_junction_at_the_crossing() -> None:
    tracks = [_line((-60, 0), (60, 0), "ew"), _line((3, -60), (3, 60), "sn")]
    junctions, _ = find_junctions(tracks)
    assert junctions.shape == (1, 2)
    assert np.hypot(*(junctions[0] - [3.0, 0.0])) < 2.0


def test_track_ending_short_of_another_is_a_t_junction() -> None:
    # the stem stops 6 m before the bar: GPS never shows them touching
    tracks = [_line((-60, 0), (60, 0), "bar"), _line((0, 70), (0, 6), "stem")]
    junctions, _ = find_junctions(tracks)
    assert junctions.shape == (1, 2)
    assert np.hypot(*junctions[0]) < 3.0


def test_same_street_both_directions_is_no_junction() -> None:
    tracks = [_line((0, 0), (100, 10), "there"), _line((100, 12), (0, 2), "back")]
    junctions, _ = find_junctions(tracks)
    assert len(junctions) == 0


def test_opposite_passes_merge_into_one_street_with_two_directions() -> None:
    tracks = [
        _line((-60, 0), (60, 0), "ew"),
        _line((60, 2), (-60, 2), "we"),
        _line((0, -60), (0, 60), "sn"),
    ]
    junctions, _ = find_junctions(tracks)
    dead_xy, events = find_dead_ends(tracks, junctions)
    assert len(junctions) == 1
    assert len(dead_xy) == 4  # the four open ends
    segments = cut_tracks(tracks, junctions, events)
    streets, _ = group_streets(tracks, segments)
    assert len(streets) == 4
    both_ways = [s for s in streets if s.forward and s.backward]
    assert len(both_ways) == 2  # east and west arms were filmed both ways


def test_uturn_is_a_dead_end() -> None:
    there = _line((0, 0), (80, 0), "a", noise=0.0).xy
    back = np.add(there[::-1][1:], [0.0, 1.5])  # 1.5 m to the side on the way back
    xy = np.concatenate([there, back])
    track = make_track("uturn", xy, spacing_m=1.0, frame_count=len(xy))
    dead_xy, events = find_dead_ends([track], np.zeros((0, 2)))
    far_end = [k for k, d in enumerate(dead_xy) if d[0] > 50]
    assert len(far_end) == 1
    (event,) = events[far_end[0]]
    assert event.frame == pytest.approx(80, abs=3)


def test_two_videos_the_same_way_are_one_street_direction() -> None:
    tracks = [
        _line((-60, 0), (60, 0), "first"),
        _line((-60, 1.5), (60, 1.0), "second"),
        _line((0, -60), (0, 60), "cross"),
    ]
    junctions, _ = find_junctions(tracks)
    dead_xy, events = find_dead_ends(tracks, junctions)
    segments = cut_tracks(tracks, junctions, events, dead_end_xy=dead_xy)
    streets, _ = group_streets(tracks, segments)
    assert len(streets) == 4
    east_west = [s for s in streets if len(s.forward) + len(s.backward) == 2]
    assert len(east_west) == 2  # both videos of each arm share one street, one direction
    for street in east_west:
        assert sorted((len(street.forward), len(street.backward))) == [0, 2]


@pytest.mark.parametrize("gap_m", [3.0, 6.0])
def test_staggered_crossing_a_few_metres_apart_is_one_junction(gap_m: float) -> None:
    """Side streets meeting a main street a few metres apart make one node, never a walkable
    segment of a few metres between two junctions (shorter than a W step)."""
    tracks = [
        _line((-60, 0), (60, 0), "main"),
        _line((0, 60), (0, 1), "north"),
        _line((gap_m, -60), (gap_m, -1), "south"),
    ]
    junctions, _ = find_junctions(tracks)
    assert junctions.shape == (1, 2)
    assert -1.0 < junctions[0][0] < gap_m + 1.0


def test_milling_about_at_the_end_of_filming_makes_no_loop_streets() -> None:
    from city360.pose_graph.segments import SegmentParams

    # along a street to its end at (0, 0), then three 31 m circles of GPS jitter through it
    angle = np.linspace(0.0, 6 * np.pi, 94)
    circles = np.column_stack([5.0 * np.sin(angle), 5.0 - 5.0 * np.cos(angle)])
    approach = np.column_stack([np.linspace(-60.0, 0.0, 61)[:-1], np.zeros(60)])
    xy = np.concatenate([approach, circles])
    track = make_track("stands", xy, spacing_m=1.0, frame_count=len(xy))
    junctions = np.array([[0.0, 0.0]])  # where the loops start and end
    dead_xy, events = find_dead_ends([track], junctions)
    loops = SegmentParams(loop_reach_m=0.0)
    with_loops = cut_tracks([track], junctions, events, loops, dead_end_xy=dead_xy)
    assert any(s.u == s.v for s in with_loops)  # the rule is what removes them
    segments = cut_tracks([track], junctions, events, dead_end_xy=dead_xy)
    assert not any(s.u == s.v for s in segments)


@pytest.mark.parametrize("across_m", [0.0, 6.0])
def test_a_spur_walked_back_on_its_other_sidewalk_is_a_dead_end_with_its_root(
    across_m: float,
) -> None:
    """Up a side street on one sidewalk and back on the other, ``across_m`` away: the ways in
    and out keep that gap all along the spur, so they are together until its root (70 m back
    from the tip); round eight read 6 m as parting at once ("stepped into a stub and out along
    another street") and lost the dead end: the pass became a loop at the spur's base."""
    from city360.pose_graph.junctions import JunctionParams, spur_roots
    from tests.pose_graph.walks import noisy_walk

    corners = [(-100.0, 0.0), (0.0, 0.0), (0.0, 70.0), (across_m, 70.0), (across_m, 2.0)]
    # smoothed poses: white noise of 0.2 m (0.5 m lengthens the arc a third and blurs the turn)
    track = noisy_walk([*corners, (100.0, 2.0)], f"spur-{across_m}", noise_m=0.2)
    (root,) = spur_roots([track], JunctionParams())
    assert np.hypot(root[0] - across_m / 2, root[1]) < 6.0  # at the side street's base
    dead_xy, _ = find_dead_ends([track], np.asarray([root]), JunctionParams())
    assert any(np.hypot(x - across_m / 2, y - 70.0) < 6.0 for x, y in dead_xy)  # and its tip


def test_a_spur_whose_sidewalks_drift_apart_keeps_its_root_at_the_base() -> None:
    """The loop walk of the accuracy tests (seed 0): back on the other sidewalk, the gap the
    ways keep is 3.5-5 m in the spur's upper half and 6-7 m in its lower half (GPS noise,
    clarification pulling part of it onto one line). The last point within the gap's median
    lay halfway up the spur, so the root was put there (37 m from the tip, 30 m short of the
    base): a two-way "junction" that refinement dropped, and the base was lost (junction
    recall 0 without OSM)."""
    from city360.pose_graph.junctions import JunctionParams, spur_roots
    from tests.pose_graph.walks import noisy_walk

    corners = [(-100.0, 0.0), (0.0, 0.0), (0.0, 70.0), (4.5, 70.0), (4.5, 36.0), (7.0, 34.0)]
    track = noisy_walk([*corners, (7.0, 2.0), (100.0, 2.0)], "spur-drift", noise_m=0.2)
    (root,) = spur_roots([track], JunctionParams())
    assert np.hypot(root[0] - 3.5, root[1]) < 6.0  # at the side street's base, not halfway up


def test_dead_end_events_linked_by_pairs_are_one_dead_end_at_their_mean() -> None:
    """Events 0-2 linked through 1 are one dead end at their mean; event 3, named by no pair,
    is one of its own; dead ends come in the order of their first event. No pairs at all:
    every event its own dead end."""
    events = [DeadEndEvent(0, k, float(10 * k), 0.0) for k in range(4)]
    points = np.array([[0.0, 0.0], [4.0, 0.0], [8.0, 3.0], [50.0, 50.0]])
    pairs = np.array([[1, 2], [0, 1]], dtype=np.int64)
    centres, grouped = group_dead_ends(events, points, pairs)
    assert centres == pytest.approx(np.array([[4.0, 1.0], [50.0, 50.0]]))
    assert grouped == [events[:3], [events[3]]]
    centres, grouped = group_dead_ends(events, points, np.zeros((0, 2), dtype=np.int64))
    assert centres == pytest.approx(points)
    assert grouped == [[e] for e in events]


@pytest.mark.parametrize("seed", range(4))
def test_a_peek_into_a_short_stub_is_a_junction_and_a_dead_end(seed: int) -> None:
    """A walk up a street turns 6.5 m into a short stub, turns back and walks on up the
    street (Helsinki wander seed 0 at (483.1, 340.2)). The 10 m U-turn window reaches past
    the junction onto both ends of the street, whose headings differ by only ~110°, so no
    U-turn was found: no spur root, no dead end, the stub and its junction lost.
    ``peek_window_m`` finds the U-turn with a 6 m window."""
    from city360.geo import LocalProjection
    from city360.pose_graph.build import BuildParams, build_from_tracks
    from city360.pose_graph.junctions import JunctionParams
    from tests.pose_graph.walks import noisy_walk

    corners = [(0.0, -90.0), (0.0, -2.0), (2.0, 0.5), (6.5, 1.0), (3.0, 1.2), (0.0, 3.0)]
    peek = noisy_walk([*corners, (0.0, 90.0)], f"peek {seed}", noise_m=0.3)

    def nodes(junctions: JunctionParams, kind: str) -> np.ndarray:
        params = BuildParams(junctions=junctions)
        graph = build_from_tracks([peek], LocalProjection(60.17, 24.94), params=params).graph
        xy = [[d["x_m"], d["y_m"]] for _, d in graph.nodes(data=True) if d["kind"] == kind]
        return np.asarray(xy, np.float64).reshape(-1, 2)

    assert len(nodes(JunctionParams(peek_window_m=None), "junction")) == 0
    peeks = JunctionParams(peek_window_m=6.0)
    (junction,) = nodes(peeks, "junction")
    assert np.hypot(*junction) < 3.0
    dead_ends = nodes(peeks, "dead_end")
    assert np.hypot(dead_ends[:, 0] - 6.5, dead_ends[:, 1] - 1.0).min() < 1.5


def test_a_turn_back_short_of_peek_reach_is_no_peek() -> None:
    """A walker who turns back 4 m from where the ways in and out part milled about (a stop
    in the old town coverage+stops seed 0 at (-95.5, 27.3): 3.7 m, a junction 72 m from any
    true one); one who steps into a stub turns back 4.6-6.6 m from it."""
    from city360.pose_graph.junctions import JunctionParams
    from tests.pose_graph.walks import noisy_walk

    corners = [(0.0, -90.0), (0.0, -2.0), (2.0, 0.5), (4.0, 1.0), (1.0, 1.2), (0.0, 3.0)]
    walk = noisy_walk([*corners, (0.0, 90.0)], "peek 0", noise_m=0.3)

    def dead_ends(reach_m: float) -> np.ndarray:
        params = JunctionParams(peek_window_m=6.0, peek_reach_m=reach_m, peek_root_m=None)
        xy, _ = find_dead_ends([walk], np.zeros((0, 2)), params, short_spurs=True)
        return xy[np.hypot(xy[:, 0] - 4.0, xy[:, 1] - 1.0) < 2.0]

    assert len(dead_ends(0.0)) == 1
    assert len(dead_ends(4.5)) == 0


def test_a_peek_far_from_every_junction_is_no_dead_end_with_peek_root_m() -> None:
    """A peek's apex is the end of a stub only while the stub has its junction: with the
    junction where its ways part dropped (Helsinki wander seed 33 at (499.4, 69.3)), the
    apex alone split the street it was walked beside."""
    from city360.pose_graph.junctions import JunctionParams
    from tests.pose_graph.walks import noisy_walk

    corners = [(0.0, -90.0), (0.0, -2.0), (2.0, 0.5), (6.5, 1.0), (3.0, 1.2), (0.0, 3.0)]
    walk = noisy_walk([*corners, (0.0, 90.0)], "peek 0", noise_m=0.3)

    def dead_ends(junctions_xy: np.ndarray, root_m: float | None) -> np.ndarray:
        params = JunctionParams(peek_window_m=6.0, peek_root_m=root_m)
        xy, _ = find_dead_ends([walk], junctions_xy, params, short_spurs=True)
        return xy[np.hypot(xy[:, 0] - 6.5, xy[:, 1] - 1.0) < 2.0]

    far = np.array([[0.0, 40.0]])
    assert len(dead_ends(far, None)) == 1
    assert len(dead_ends(far, 12.0)) == 0
    assert len(dead_ends(np.array([[0.5, 0.5]]), 12.0)) == 1


def test_a_peek_walked_at_a_stops_pace_is_no_dead_end_with_peek_pace() -> None:
    """One-way+stops seed 33 at (-75.4, -547.1): a walker stopped at a junction, milled
    about 5 m off it and walked on, 2.9 times slower than the video's median pace there; the
    peeks into stubs of the Helsinki twins are walked at 1.4-1.7 times."""
    from city360.pose_graph.junctions import JunctionParams
    from tests.pose_graph.walks import noisy_walk

    corners = [(0.0, -90.0), (0.0, -2.0), (2.0, 0.5), (6.5, 1.0), (3.0, 1.2), (0.0, 3.0)]
    walk = noisy_walk([*corners, (0.0, 90.0)], "peek 0", noise_m=0.3)
    apex = int(np.argmin(np.hypot(walk.xy[:, 0] - 6.5, walk.xy[:, 1] - 1.0)))

    def dead_ends(seconds_per_m_at_apex: float) -> np.ndarray:
        pace = np.full(len(walk.xy) - 1, 0.7)
        pace[apex - 10 : apex + 10] = seconds_per_m_at_apex
        t_s = np.concatenate([[0.0], np.cumsum(pace * np.diff(walk.arc_m))])
        timed = make_track(walk.id, walk.xy, spacing_m=1.0, frame_count=len(walk.xy), t_s=t_s)
        params = JunctionParams(peek_window_m=6.0, peek_pace=2.5, peek_root_m=None)
        xy, _ = find_dead_ends([timed], np.zeros((0, 2)), params, short_spurs=True)
        return xy[np.hypot(xy[:, 0] - 6.5, xy[:, 1] - 1.0) < 2.0]

    assert len(dead_ends(1.2)) == 1
    assert len(dead_ends(2.1)) == 0


@pytest.mark.parametrize("seed", range(3))
def test_a_turn_back_just_past_a_junction_on_a_street_walked_on_is_no_dead_end(seed: int) -> None:
    """A walker comes along a street through a junction, walks 7 m on, turns back and leaves
    south at the junction (Helsinki wander seed 1, walk_060 at (-439.0, -40.6), 6.4 m past
    the junction at (-433.1, -42.8)). The ways part 7 m from the apex, so it is a spur's end
    that needs only ``spur_min_m`` (5 m) from the junction: a dead end mid-street that took
    the junction's streets. With ``spur_street_on_m`` another pass along that street at the
    apex and 12 m beyond it says the street goes on: no dead end. Without that pass (a stub
    ends there) the apex stays a dead end."""
    from city360.pose_graph.junctions import JunctionParams
    from tests.pose_graph.walks import noisy_walk

    corners = [(80.0, 0.0), (-7.0, 0.0), (0.0, -0.5), (0.0, -80.0)]
    turner = noisy_walk(corners, f"turner {seed}", noise_m=0.3)
    street = noisy_walk([(-80.0, 1.0), (80.0, 1.0)], f"street {seed}", noise_m=0.3)
    junction = np.array([[0.0, 0.0]])

    def dead_ends(tracks: list, street_on_m: float | None) -> np.ndarray:
        params = JunctionParams(spur_street_on_m=street_on_m)
        xy, _ = find_dead_ends(tracks, junction, params, short_spurs=True)
        return xy[np.hypot(xy[:, 0] + 7.0, xy[:, 1]) < 3.0]

    assert len(dead_ends([turner, street], None)) == 1
    assert len(dead_ends([turner, street], 12.0)) == 0
    assert len(dead_ends([turner], 12.0)) == 1


def _kinked(name: str, y_m: float, toward: float, *, reverse: bool = False) -> Track:
    """A straight pass along y = ``y_m`` whose GPS swings 2.5 m ``toward`` (+1 north, -1
    south) and back over 12 m around x = 0: its local heading turns 23 degrees each way."""
    x = np.arange(-60.0, 60.5, 1.0)
    if reverse:
        x = x[::-1]
    xy = np.column_stack([x, y_m + toward * 2.5 * np.clip(1.0 - np.abs(x) / 6.0, 0.0, None)])
    return make_track(name, xy, spacing_m=1.0, frame_count=len(x))


def test_passes_on_streets_side_by_side_cast_no_votes_with_vote_chord_m() -> None:
    """Two parallel streets 8 m apart, one pass each, whose GPS swings toward each other
    at the same place (unseen Kamppi coverage camera 6 near (-147, -4)): the local headings
    differ by up to 45 degrees, so the passes voted for a junction between the streets.
    Their chords over 8 m either way run side by side 4 m or more apart: with
    ``vote_chord_m`` they cast no votes. A crossing keeps its votes."""
    from dataclasses import replace

    from city360.pose_graph.junctions import JunctionParams, crossing_votes

    side_by_side = [_kinked("north", 0.0, -1.0), _kinked("south", -8.0, 1.0, reverse=True)]
    local = JunctionParams(vote_chord_m=None)
    chords = replace(local, vote_chord_m=8.0)
    assert len(crossing_votes(side_by_side, local, without_osm=True)) > 20
    assert len(crossing_votes(side_by_side, chords, without_osm=True)) == 0
    assert len(crossing_votes(side_by_side, chords)) > 20  # with OSM: the local headings

    crossing = [_line((-60, 0), (60, 0), "ew"), _line((3, -60), (3, 60), "sn")]
    before = len(crossing_votes(crossing, local, without_osm=True))
    assert len(crossing_votes(crossing, chords, without_osm=True)) == before > 0
    assert JunctionParams().vote_chord_m is None


def test_parts_of_parted_piles_are_never_merged_into_one() -> None:
    """Two parts 7 m apart (a knot's junctions, moved together by refine) and a junction
    between them: ``merge_close`` makes one junction of the three; ``merge_parts_apart``
    keeps the parts two and merges the third into the nearer."""
    points = np.array([[0.0, 0.0], [7.0, 0.0], [2.0, 1.0]])
    merged, _ = merge_close(points, np.ones(3, dtype=np.int64), 8.0)
    assert len(merged) == 1
    kept = merge_parts_apart(points, np.array([True, True, False]), 8.0)
    assert len(kept) == 2
    west, east = sorted(kept.tolist())
    np.testing.assert_allclose(west, [1.0, 0.5])
    np.testing.assert_allclose(east, [7.0, 0.0])
    alone = merge_parts_apart(points, np.array([True, False, False]), 8.0)
    assert len(alone) == 1


def test_split_parts_apart_is_on_by_default() -> None:
    assert JunctionParams().split_parts_apart is True


def test_parts_of_piles_parted_otherwise_are_held_apart_above_the_floor() -> None:
    """Parts of piles parted at peaks ``split_peaks_m`` apart (``other_parts``) moved by
    refine 7 m apart (each at its own true junction, held-out old town wander 6) and 4.7 m
    apart (one true junction, suite Helsinki wander 1): without ``other_parts`` both pairs
    merge, as on main; with a floor of 5 m the 7 m pair stays two and the 4.7 m pair merges;
    with a floor of 0 both stay two."""
    far = np.array([[0.0, 0.0], [7.0, 0.0]])
    near = np.array([[100.0, 0.0], [104.7, 0.0]])
    points = np.concatenate([far, near])
    none = np.zeros(4, dtype=bool)
    every = np.ones(4, dtype=bool)
    assert len(merge_parts_apart(points, none, 8.0)) == 2
    assert len(merge_parts_apart(points, none, 8.0, other_parts=every, other_floor_m=0.0)) == 4
    floored = merge_parts_apart(points, none, 8.0, other_parts=every, other_floor_m=5.0)
    assert sorted(floored[:, 0].tolist()) == pytest.approx([0.0, 7.0, 102.35])


def test_parts_of_close_topped_piles_stay_apart_under_the_floor() -> None:
    """The floor is for parts of piles parted otherwise: two parts of piles parted at close
    tops (``is_part``) stay apart however close refine brings them, as before; a part
    under the floor from them merges into one."""
    points = np.array([[0.0, 0.0], [4.0, 0.0], [2.0, 3.0]])
    held = np.array([True, True, False])
    other = np.array([False, False, True])
    kept = merge_parts_apart(points, held, 8.0, other_parts=other, other_floor_m=5.0)
    assert len(kept) == 2


def test_split_every_part_apart_m_is_off_by_default() -> None:
    assert JunctionParams().split_every_part_apart_m is None


@pytest.mark.parametrize("seed", [2, 3])
def test_a_side_step_off_the_through_line_is_a_spur_end_with_side_step_off_m(seed: int) -> None:
    """Unseen Kamppi coverage 5, walk_000 at (82.5, -101.3): a walker on the through street
    steps 6 m into an 8.4 m stub, turns back and rejoins the street 8 m on. The ways in and
    out part 4 m from the apex, under ``spur_min_m``, so the U-turn was a step into a stub
    and out, no dead end, and the stub's junction was dropped. The apex lies 6 m off the
    line between the track 12 m either side; milling about at a stop turns back on it."""
    from dataclasses import replace

    from city360.pose_graph.junctions import JunctionParams, _parting, _uturn_frames
    from tests.pose_graph.walks import noisy_walk

    step = noisy_walk(
        [(90.0, 0.0), (0.0, 0.0), (-3.0, 6.5), (-7.0, 0.0), (-90.0, 0.0)],
        f"step {seed}",
        noise_m=0.3,
    )
    mill = noisy_walk(
        [(90.0, 0.0), (-2.0, 0.0), (2.0, 0.3), (-1.0, 0.6), (-90.0, 0.0)],
        f"mill {seed}",
        noise_m=0.3,
    )
    junction = np.array([[0.0, 0.0]])
    (apex,) = _uturn_frames(step, replace(JunctionParams(), uturn_window_m=6.0))
    parting = _parting(step, apex, JunctionParams())
    assert parting is not None
    assert parting[0] < JunctionParams().spur_min_m

    def dead_ends(track: Track, off_m: float | None) -> np.ndarray:
        params = JunctionParams(side_step_off_m=off_m)
        xy, _ = find_dead_ends([track], junction, params, short_spurs=True)
        return xy[np.hypot(xy[:, 0] + 3.0, xy[:, 1] - 6.5) < 2.0]

    assert JunctionParams().side_step_off_m == 4.0
    assert len(dead_ends(step, None)) == 0
    assert len(dead_ends(step, 4.0)) == 1
    assert len(dead_ends(step, 8.0)) == 0
    far, _ = find_dead_ends(
        [step], np.array([[40.0, 0.0]]), JunctionParams(side_step_off_m=4.0), short_spurs=True
    )
    assert np.hypot(far[:, 0] + 3.0, far[:, 1] - 6.5).min() > 2.0  # no junction: no side street
    mill_ends, _ = find_dead_ends(
        [mill], junction, JunctionParams(side_step_off_m=4.0), short_spurs=True
    )
    assert np.hypot(*mill_ends.T).min() > 10.0


def test_a_side_steps_tip_needs_only_side_step_clear_m() -> None:
    """Kamppi coverage camera seed 10, walk_000 at (83.1, -102.0): a peek 6 m into the stub
    whose apex lay 5.4 m from the voted junction, then 4.8 m once refine moved it 0.7 m: under
    ``spur_min_m``, the dead end and so the stub and its junction were lost. A side step's tip
    needs only ``side_step_clear_m``."""
    from city360.pose_graph.junctions import JunctionParams
    from tests.pose_graph.walks import noisy_walk

    corners = [(0.0, -90.0), (0.0, -2.0), (2.0, 0.5), (6.5, 1.0), (3.0, 1.2), (0.0, 3.0)]
    walk = noisy_walk([*corners, (0.0, 90.0)], "peek 0", noise_m=0.3)
    junction = np.array([[1.8, 0.0]])

    def dead_ends(off_m: float | None) -> np.ndarray:
        params = JunctionParams(peek_root_m=None, side_step_off_m=off_m)
        xy, _ = find_dead_ends([walk], junction, params, short_spurs=True)
        return xy[np.hypot(xy[:, 0] - 6.5, xy[:, 1] - 1.0) < 2.0]

    assert len(dead_ends(None)) == 0
    assert len(dead_ends(4.0)) == 1


def _side_step(seed: int) -> Track:
    """A walker on a through street along y = 0 who steps 6.5 m into a stub at x = 0 (tip
    near (-3, 6.5)) and rejoins the street 7 m on (unseen Kamppi coverage 5, walk_000)."""
    from tests.pose_graph.walks import noisy_walk

    return noisy_walk(
        [(90.0, 0.0), (0.0, 0.0), (-3.0, 6.5), (-7.0, 0.0), (-90.0, 0.0)],
        f"step {seed}",
        noise_m=0.3,
    )


@pytest.mark.parametrize("seed", [2, 3])
def test_a_side_steps_junction_lies_on_the_walkers_line(seed: int) -> None:
    """Unseen Kamppi wander+stops camera 5, tips at (-56.0, -110.1) and (-4.3, 109.4): walkers
    turning back round a junction's corner leave their line 6.1-6.4 m, but their junction
    lies beside the tip, 5.0-6.1 m off that line, not on it where a side street leaves the
    through street. With ``side_step_line_m`` such a tip is no side step."""
    step = _side_step(seed)

    def dead_ends(junction: tuple[float, float], line_m: float | None) -> np.ndarray:
        params = JunctionParams(side_step_off_m=4.0, side_step_line_m=line_m)
        xy, _ = find_dead_ends([step], np.array([junction]), params, short_spurs=True)
        return xy[np.hypot(xy[:, 0] + 3.0, xy[:, 1] - 6.5) < 2.0]

    assert JunctionParams().side_step_line_m == 3.0
    beside = (2.0, 5.0)  # 5 m off the walker's line, 5.2 m from the tip
    assert len(dead_ends(beside, None)) == 1
    assert len(dead_ends(beside, 3.0)) == 0
    assert len(dead_ends((0.5, 0.5), 3.0)) == 1  # on the line: the stub's junction


@pytest.mark.parametrize("seed", [2, 3])
def test_a_side_steps_junction_moves_to_the_tips_foot(seed: int) -> None:
    """Unseen Kamppi coverage 5: votes at (87.3, -106.3), 1.7 m from the foot of walk_000's
    tip on its line (85.7, -106.9), and a second pile where the walker comes out of the stub;
    the stub was cut to that pile, 8.3 m from the true junction. ``side_step_feet`` moves the
    side step's junction to the foot; a junction off the line or far away stays."""
    from city360.pose_graph.junctions import side_step_feet

    step = _side_step(seed)
    voted = np.array([[1.5, 0.5], [-9.0, -0.5], [40.0, 0.0]])
    on = JunctionParams(side_step_off_m=4.0)
    placed = side_step_feet([step], voted, on)
    assert np.hypot(placed[0, 0] + 3.0, placed[0, 1]) < 1.0
    np.testing.assert_array_equal(placed[1:], voted[1:])
    off = JunctionParams(side_step_off_m=None)
    np.testing.assert_array_equal(side_step_feet([step], voted, off), voted)
    unmoved = side_step_feet(
        [step], voted, JunctionParams(side_step_off_m=4.0, side_step_foot=False)
    )
    np.testing.assert_array_equal(unmoved, voted)
    assert JunctionParams().side_step_foot is True


@pytest.mark.parametrize("seed", range(3))
def test_dead_ends_from_turns_found_once_equal_those_found_afresh(seed: int) -> None:
    # a build finds each track's turns once (find_turns) and cuts at other junctions each
    # time: the dead ends are those find_dead_ends finds from the tracks alone
    from city360.pose_graph.junctions import find_turns
    from tests.pose_graph.walks import noisy_walk

    step = noisy_walk(
        [(90.0, 0.0), (0.0, 0.0), (-3.0, 6.5), (-7.0, 0.0), (-90.0, 0.0)],
        f"step {seed}",
        noise_m=0.3,
    )
    spur = noisy_walk(
        [(0.0, -60.0), (0.0, 0.0), (0.0, 30.0), (0.0, 0.0)], f"spur {seed}", noise_m=0.3
    )
    params = JunctionParams()
    turns = find_turns([step, spur], params)
    for junctions_xy in (np.zeros((0, 2)), np.array([[0.0, 0.0]]), np.array([[40.0, 0.0]])):
        for short_spurs in (False, True):
            afresh = find_dead_ends([step, spur], junctions_xy, params, short_spurs=short_spurs)
            once = find_dead_ends(
                [step, spur], junctions_xy, params, short_spurs=short_spurs, turns=turns
            )
            assert np.array_equal(afresh[0], once[0])
            assert afresh[1] == once[1]
    with pytest.raises(ValueError, match="`turns` were found for 2 tracks with other params"):
        find_dead_ends([step, spur], np.zeros((0, 2)), JunctionParams(merge_m=9.0), turns=turns)


def _pile_and_roots(
    roots: list[tuple[float, float]], root_apart_m: float | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A vote pile of 800 at (0, 0) and ``roots`` (spur roots, corners, partings), merged;
    those farther than ``root_apart_m`` from it kept apart."""
    points = np.asarray(roots, dtype=np.float64)
    apart = None if root_apart_m is None else np.hypot(*points.T) > root_apart_m
    return merge_found(
        np.array([[0.0, 0.0]]),
        np.array([800], dtype=np.int64),
        np.array([-1], dtype=np.int64),
        np.array([False]),
        points,
        JunctionParams(),
        apart=apart,
    )


def test_a_root_far_from_every_pile_stays_a_junction_held_apart_with_root_apart_m() -> None:
    """A knot's shallow fork the votes never see: its corner meet 7 m from the other
    junction's pile (fresh Kaisaniemi, (-58.0, -109.8) beside the pile at (-52.2, -105.7)).
    Without ``root_apart_m`` the pile swallows it (one junction, at the pile: the root
    weighs ``min_support``); with 6 m it stays a junction of its own, and it and the pile
    are flagged so that refine's post-move merge holds them apart."""
    merged, support, _, close = _pile_and_roots([(7.0, 0.0)], None)
    assert len(merged) == 1
    assert not close.any()
    centres, support, parted, close = _pile_and_roots([(7.0, 0.0)], 6.0)
    np.testing.assert_allclose(centres, [[0.0, 0.0], [7.0, 0.0]])
    assert support.tolist() == [800, JunctionParams().min_support]
    assert close.tolist() == [True, True]
    assert not parted.any()


def test_roots_near_a_pile_merge_into_it_and_far_ones_merge_among_themselves() -> None:
    """A root 4 m from the pile merges into it as before; two roots 6.5 and 9 m out merge
    with each other only."""
    centres, support, _, close = _pile_and_roots([(4.0, 0.0), (6.5, 0.0), (9.0, 0.0)], 6.0)
    assert len(centres) == 2
    np.testing.assert_allclose(centres[1], [7.75, 0.0])
    assert support[1] == 2 * JunctionParams().min_support
    assert close.tolist() == [True, True]


def test_root_apart_m_is_off_by_default() -> None:
    assert JunctionParams().root_apart_m is None


def test_a_root_on_one_street_leaves_two_ways_and_at_a_fork_three() -> None:
    """``root_apart_ways`` reads the ways the passes leave a far root by: a street walked
    both ways through it is two (a walker's turn-back beside a junction), a pass turning
    off it north makes three (a fork's arms)."""
    from city360.pose_graph.junctions import _ways

    params = JunctionParams()
    street = [_line((-40, 0), (40, 0), "east"), _line((40, 0.5), (-40, 0.5), "west")]
    assert _ways(street, np.array([0.0, 0.0]), params) == 2
    fork = _line((-40, 0), (0, 0), "in")
    turned = make_track(
        "turned",
        np.concatenate([fork.xy, np.column_stack([np.zeros(40), np.arange(1.0, 41.0)])]),
        spacing_m=1.0,
        frame_count=len(fork.xy) + 40,
    )
    assert _ways([*street, turned], np.array([0.0, 0.0]), params) == 3
