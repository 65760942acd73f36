"""What a track alone says about turning back (:mod:`city360.pose_graph.track_turns`): the
roots of out-and-back spurs and the feet of side steps."""

from __future__ import annotations

import numpy as np
import pytest

from city360.pose_graph.dead_ends import find_dead_ends
from city360.pose_graph.junction_params import JunctionParams
from city360.pose_graph.tracks import Track


@pytest.mark.parametrize("across_m", [0.0, 6.0])
def test_a_spur_walked_back_on_its_other_sidewalk_is_a_dead_end_with_its_root(
    across_m: float,
) -> None:
    """Up a side street on one sidewalk and back on the other, ``across_m`` away: the ways in
    and out keep that gap all along the spur, so they are together until its root (70 m back
    from the tip); round eight read 6 m as parting at once ("stepped into a stub and out along
    another street") and lost the dead end: the pass became a loop at the spur's base."""
    from city360.pose_graph.junction_params import JunctionParams
    from city360.pose_graph.track_turns import spur_roots
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
    from city360.pose_graph.junction_params import JunctionParams
    from city360.pose_graph.track_turns import spur_roots
    from tests.pose_graph.walks import noisy_walk

    corners = [(-100.0, 0.0), (0.0, 0.0), (0.0, 70.0), (4.5, 70.0), (4.5, 36.0), (7.0, 34.0)]
    track = noisy_walk([*corners, (7.0, 2.0), (100.0, 2.0)], "spur-drift", noise_m=0.2)
    (root,) = spur_roots([track], JunctionParams())
    assert np.hypot(root[0] - 3.5, root[1]) < 6.0  # at the side street's base, not halfway up


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
    from city360.pose_graph.track_turns import side_step_feet

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


@pytest.mark.parametrize("peeks", [False, True])
def test_spur_roots_from_turns_found_once_equal_those_found_afresh(peeks: bool) -> None:
    # a build finds each track's turns once (find_turns) and reads the spurs' roots from them
    from city360.pose_graph.track_turns import find_turns, spur_roots
    from tests.pose_graph.walks import noisy_walk

    spur = noisy_walk(
        [(-100.0, 0.0), (0.0, 0.0), (0.0, 40.0), (0.0, 2.0), (100.0, 2.0)], "spur", noise_m=0.2
    )
    peek = noisy_walk(
        [(0.0, -90.0), (0.0, 0.0), (-6.0, 0.0), (0.0, 0.0), (0.0, 90.0)], "peek", noise_m=0.3
    )
    params = JunctionParams()
    turns = find_turns([spur, peek], params)
    afresh = spur_roots([spur, peek], params, peeks=peeks)
    assert len(afresh)
    assert np.array_equal(afresh, spur_roots([spur, peek], params, peeks=peeks, turns=turns))
    with pytest.raises(ValueError, match="`turns` were found for 2 tracks with other params"):
        spur_roots([spur, peek], JunctionParams(merge_m=9.0), turns=turns)
