"""Dead ends from trajectories alone (:mod:`city360.pose_graph.dead_ends`): U-turns, peeks,
side steps and video ends away from every junction."""

from __future__ import annotations

import numpy as np
import pytest

from city360.pose_graph.dead_ends import DeadEndEvent, find_dead_ends, group_dead_ends
from city360.pose_graph.junction_params import JunctionParams
from city360.pose_graph.tracks import Track, make_track
from tests.pose_graph.walks import noisy_walk


def test_uturn_is_a_dead_end() -> None:
    there = noisy_walk([(0, 0), (80, 0)], "a", noise_m=0.0).xy
    back = np.add(there[::-1][1:], [0.0, 1.5])  # 1.5 m to the side on the way back
    xy = np.concatenate([there, back])
    track = make_track("uturn", xy, spacing_m=1.0, frame_count=len(xy))
    dead_xy, events = find_dead_ends([track], np.zeros((0, 2)))
    far_end = [k for k, d in enumerate(dead_xy) if d[0] > 50]
    assert len(far_end) == 1
    (event,) = events[far_end[0]]
    assert event.frame == pytest.approx(80, abs=3)


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
    from city360.pose_graph.junction_params import JunctionParams
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
    from city360.pose_graph.junction_params import JunctionParams
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
    from city360.pose_graph.junction_params import JunctionParams
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
    from city360.pose_graph.junction_params import JunctionParams
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
    from city360.pose_graph.junction_params import JunctionParams
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


@pytest.mark.parametrize("seed", [2, 3])
def test_a_side_step_off_the_through_line_is_a_spur_end_with_side_step_off_m(seed: int) -> None:
    """Unseen Kamppi coverage 5, walk_000 at (82.5, -101.3): a walker on the through street
    steps 6 m into an 8.4 m stub, turns back and rejoins the street 8 m on. The ways in and
    out part 4 m from the apex, under ``spur_min_m``, so the U-turn was a step into a stub
    and out, no dead end, and the stub's junction was dropped. The apex lies 6 m off the
    line between the track 12 m either side; milling about at a stop turns back on it."""
    from dataclasses import replace

    from city360.pose_graph.junction_params import JunctionParams
    from city360.pose_graph.track_turns import _parting, _uturn_frames
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
    from city360.pose_graph.junction_params import JunctionParams
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


@pytest.mark.parametrize("seed", range(3))
def test_dead_ends_from_turns_found_once_equal_those_found_afresh(seed: int) -> None:
    # a build finds each track's turns once (find_turns) and cuts at other junctions each
    # time: the dead ends are those find_dead_ends finds from the tracks alone
    from city360.pose_graph.track_turns import find_turns
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


def test_a_turn_back_beside_a_pile_of_its_own_votes_ends_with_turn_pile_share() -> None:
    """A path runs east along y = 0; a walker comes north up to 4 m short of it and turns
    back (Kaisaniemi's spur, whose end lies 4.0 m beside the park path). Its legs' crossings
    with the path pile at (0, 0), 4 m from the apex, inside the 8 m clearance: no dead end.
    With ``turn_pile_share`` every vote of that pile is the turning pass's, so the apex
    ends a dead end."""
    path = noisy_walk([(-50, 0), (50, 0)], "p", noise_m=0.0)
    there = noisy_walk([(0, -40), (0, -4)], "w", noise_m=0.0).xy
    back = np.add(there[::-1][1:], [0.5, 0.0])
    walk = np.concatenate([there, back])
    turning = make_track("turn", walk, spacing_m=1.0, frame_count=len(walk))
    pile = np.array([[0.0, 0.0]])

    def apex_ends(params: JunctionParams) -> bool:
        dead_xy, _ = find_dead_ends([path, turning], pile, params, short_spurs=True)
        return bool(len(dead_xy)) and bool((np.hypot(*(dead_xy - [0.0, -4.0]).T) < 2.0).any())

    assert not apex_ends(JunctionParams())
    assert apex_ends(JunctionParams(turn_pile_share=1.0))
    assert not apex_ends(JunctionParams(turn_pile_share=1.0, turn_pile_min_m=5.0))


def test_a_turn_back_along_the_piles_street_stays_eaten_with_turn_pile_cross_deg() -> None:
    """A walker comes north to a path along y = 0, turns east along it, turns back 7 m on
    and goes back south (Kaisaniemi one-way 2 at (-55.1, -94.5)): every vote of the pile at
    (0, 0) is its pass's too, but its way into the apex runs along the path's passes, so
    with ``turn_pile_cross_deg`` the apex stays inside the junction's clearance."""
    path = noisy_walk([(-50, 0), (50, 0)], "p", noise_m=0.0)
    there = noisy_walk([(0, -40), (0, 0), (7, 0)], "w", noise_m=0.0).xy
    back = np.add(there[::-1][1:], [0.0, -0.5])
    walk = np.concatenate([there, back])
    turning = make_track("turn", walk, spacing_m=1.0, frame_count=len(walk))
    pile = np.array([[0.0, 0.0]])

    def apex_ends(params: JunctionParams) -> bool:
        dead_xy, _ = find_dead_ends([path, turning], pile, params, short_spurs=True)
        return bool(len(dead_xy)) and bool((np.hypot(*(dead_xy - [6.0, 0.0]).T) < 2.0).any())

    pass_m = 22.0  # its leg's samples up to 19 m of travel from the apex cast the votes
    assert not apex_ends(JunctionParams())
    assert not apex_ends(JunctionParams(turn_pile_share=1.0, turn_pile_reach_m=pass_m))
    assert apex_ends(
        JunctionParams(turn_pile_share=1.0, turn_pile_reach_m=pass_m, turn_pile_cross_deg=None)
    )
