"""A shallow fork's branch cut at a T a few metres down the fork is left uncut there (no OSM)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from city360.pose_graph.segments import Segment, Street, cut_tracks, group_streets
from city360.pose_graph.stolen_branches import UncutPass, UncutPasses, stolen_branches
from city360.pose_graph.tracks import Track
from tests.pose_graph.walks import polyline_track

_NO_DEAD_ENDS = np.empty((0, 2))


def _cut(
    tracks: list[Track], junctions_xy: np.ndarray, uncut: UncutPasses | None = None
) -> tuple[list[Segment], list[Street], Counter[int]]:
    """The tracks cut at ``junctions_xy`` (no dead ends), their streets, streets per node."""
    may_cut = uncut.cut_filter(junctions_xy) if uncut is not None else None
    segments = cut_tracks(tracks, junctions_xy, [], may_cut=may_cut)
    streets, _ = group_streets(tracks, segments)
    return segments, streets, Counter(n for s in streets for n in {s.a, s.b})


def _fork_before_a_tee(seed: int, part_deg: float) -> tuple[list[Track], np.ndarray]:
    """Helsinki (423, -416) and the T (437, -415): a street from the west forks at the origin
    into one running on east and a branch leaving ``part_deg`` south of east; 10 m on, a side
    street from the north meets the eastern one at a T. The junctions as the build has them:
    one at the fork (an end-tee or a stop there) and the T, pulled 2 m toward the branch, whose
    pass comes within the cut radius of it; then the streets' far ends."""
    dx, dy = 70.0 * np.cos(np.radians(part_deg)), -70.0 * np.sin(np.radians(part_deg))
    tracks = [
        polyline_track([(-90.0, 0.0), (0.0, 0.0), (dx, dy)], f"west and down the branch {seed}"),
        polyline_track([(10.0, 90.0), (10.0, 0.0), (-90.0, 0.0)], f"down and west {seed}"),
        polyline_track([(90.0, 0.0), (10.0, 0.0), (10.0, 90.0)], f"east and up {seed}"),
    ]
    ends = [(-90.0, 0.0), (dx, dy), (10.0, 90.0), (90.0, 0.0)]
    return tracks, np.array([(0.0, 0.0), (10.0, -2.0), *ends])


@pytest.mark.parametrize("seed", range(4))
def test_a_branch_cut_at_the_tee_is_left_uncut_there(seed: int) -> None:
    tracks, junctions_xy = _fork_before_a_tee(seed, 35.0)
    segments, streets, streets_at = _cut(tracks, junctions_xy)
    # main's cut: the fork has two streets (no junction), the T four (the branch stolen)
    assert (streets_at[0], streets_at[1]) == (2, 4)
    uncut = stolen_branches(tracks, junctions_xy, _NO_DEAD_ENDS, segments, streets)
    assert [p.track for p in uncut.passes] == [0]
    _, _, streets_at = _cut(tracks, junctions_xy, uncut)
    assert (streets_at[0], streets_at[1]) == (3, 3)


@pytest.mark.parametrize("seed", range(3))
def test_a_street_running_on_through_the_junction_stays_cut(seed: int) -> None:
    # a branch leaving at 12 degrees passes within 0.5-2 m of the junction 10 m on: it goes
    # through it (parts from the stem's line by 2-5 degrees, under `min_part_deg`)
    tracks, junctions_xy = _fork_before_a_tee(seed, 12.0)
    segments, streets, _ = _cut(tracks, junctions_xy)
    uncut = stolen_branches(tracks, junctions_xy, _NO_DEAD_ENDS, segments, streets)
    assert not uncut


def test_the_cut_filter_holds_a_pass_only_at_its_own_junction() -> None:
    uncut = UncutPasses((UncutPass(3, 10, 20, 5.0, 5.0),), np.empty((0, 2)))
    may_cut = uncut.cut_filter(np.array([[0.0, 0.0], [5.0, 5.0]]))
    frames = np.array([9, 10, 15, 20, 21, 15])
    nodes = np.array([1, 1, 1, 1, 1, 0])
    assert may_cut(3, frames, nodes).tolist() == [True, False, False, False, True, True]
    assert may_cut(2, frames, nodes).all()
    gone = uncut.cut_filter(np.array([[0.0, 0.0], [5.5, 5.0]]))
    assert gone(3, frames, nodes).all()
