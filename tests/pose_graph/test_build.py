"""Building walk cities (pose-only): accuracy against their ground truth, and graph structure."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from city360.city import CityDir
from city360.geo import angle_diff_deg
from city360.pose_graph import PoseGraph, build_city, load_graph
from city360.pose_graph.build import (
    _held_apart,
    _held_pairs_to_rejoin,
    _parts_shifted,
    _rejoin_pairs,
)
from city360.pose_graph.junction_params import JunctionParams
from city360.pose_graph.junctions import FloatArray
from city360.pose_graph.score import score
from city360.pose_graph.segments import Street
from city360.pose_graph.tracks import Track
from city360.synth.groundtruth import SceneTruth


def _truth(city: Path) -> SceneTruth:
    return SceneTruth.load(city / "groundtruth" / "scene.json")


Built = dict[str, tuple[Path, PoseGraph]]


@pytest.mark.parametrize("name", ["both", "one", "both+osm", "one+osm"])
def test_graph_matches_the_true_street_graph(built_walks: Built, name: str) -> None:
    city, pose_graph = built_walks[name]
    result = score(pose_graph, _truth(city))
    assert result.junction_precision >= 0.95
    assert result.junction_recall >= 0.95
    assert result.edge_f1 >= 0.95
    assert result.turns_total > 100
    assert result.wrong_turns == []
    assert len(pose_graph.components()) == 1


def test_stats_are_recorded_in_the_manifest(
    built_walks: Built, walk_templates: dict[str, Path]
) -> None:
    city, _ = built_walks["both+osm"]
    manifest = CityDir(city).read_manifest()
    stats = manifest.stats["pose_graph"]
    assert stats["connected_components"] == 1
    assert stats["junctions"] == 16
    assert stats["osm_coverage"] > 0.95
    assert stats["mean_branching_degree"] == pytest.approx(
        2 * stats["streets"] / stats["nodes"], abs=1e-3
    )
    build = manifest.build["pose_graph"]
    assert build["osm"] == "map/extract.osm"  # kept inside the city, cropped
    assert build["osm_original"] == str(walk_templates["osm"].resolve())
    assert build["require_frames"] is False


def test_each_street_has_one_primary_edge_per_direction_and_twins(
    built_walks: Built,
) -> None:
    _, pose_graph = built_walks["both"]
    for street, edges in pose_graph.streets().items():
        primaries = [e for e in edges if e.primary]
        assert len(primaries) == 2, street
        a, b = primaries
        assert (a.u, a.v) == (b.v, b.u)
        assert a.twin == b.id
        assert b.twin == a.id
        assert not a.reverse
        assert not b.reverse  # filmed both ways: no reverse edge needed


def test_streets_filmed_one_way_get_reverse_edges(built_walks: Built) -> None:
    _, pose_graph = built_walks["one"]
    reverse = [e for e in pose_graph.edges() if e.reverse]
    assert reverse
    for edge in reverse:
        twin = pose_graph.edge(edge.twin)  # type: ignore[arg-type]
        assert not twin.reverse
        assert (twin.first_frame, twin.last_frame, twin.trajectory) == (
            edge.first_frame,
            edge.last_frame,
            edge.trajectory,
        )
        assert list(edge.frames()) == list(reversed(twin.frames()))
        assert abs(((edge.start_heading_deg - twin.end_heading_deg) % 360) - 180) < 1e-6
    # every street can be walked both ways
    for edges in pose_graph.streets().values():
        assert len([e for e in edges if e.primary]) == 2


def test_up_continues_the_same_video_where_it_runs_straight_through(
    built_walks: Built,
) -> None:
    _, pose_graph = built_walks["both"]
    checked = 0
    for edge in pose_graph.edges():
        for nxt in pose_graph.out_edges(edge.v, primary_only=False):
            same_video = nxt.trajectory == edge.trajectory and not nxt.reverse and not edge.reverse
            if not same_video or nxt.first_frame != edge.last_frame or nxt.street == edge.street:
                continue
            if abs(angle_diff_deg(nxt.start_heading_deg, edge.end_heading_deg)) < 20:
                checked += 1
                offered = [t for t in edge.transitions if t.edge == nxt.id]
                assert [(t.label, t.rank) for t in offered] == [("UP", 0)], edge.id
    assert checked >= 8


def test_uturn_offered_at_dead_ends_only(built_walks: Built) -> None:
    _, pose_graph = built_walks["both"]
    for edge in pose_graph.edges():
        kind = pose_graph.node(edge.v).kind
        uturns = [t for t in edge.transitions if t.uturn]
        if kind == "dead_end":
            assert [t.edge for t in edge.transitions] == [edge.twin]
            assert uturns[0].label == "UP"
        else:
            assert not uturns
            assert edge.transitions


def test_round_trip_gives_the_same_graph(built_walks: Built) -> None:
    city, pose_graph = built_walks["one"]
    loaded = load_graph(city, require_frames=False)
    assert loaded == pose_graph
    assert loaded.to_node_link() == pose_graph.to_node_link()
    assert list(loaded.edges()) == list(pose_graph.edges())
    assert list(loaded.nodes()) == list(pose_graph.nodes())


def test_rebuild_is_deterministic(walk_city: Callable[[str], Path], built_walks: Built) -> None:
    city = walk_city("both")
    assert build_city(city, require_frames=False) == built_walks["both"][1]


def test_a_lone_loop_around_a_block_is_one_node_and_a_loop(tmp_path: Path) -> None:
    # the corners are bends, not junctions: only the corner where the video starts and ends
    # stays, as a link with a loop street
    from tests.pose_graph.walks import grid_streets, write_city

    square = grid_streets(columns=2, rows=2, block_m=80.0, jitter_m=0.0)
    city = write_city(tmp_path / "loop", square, [[0, 1, 3, 2, 0]])
    pose_graph = build_city(city.root, require_frames=False)
    assert pose_graph.graph.number_of_nodes() == 1
    (node,) = pose_graph.nodes()
    assert node.kind == "link"
    forward = [e for e in pose_graph.edges() if not e.reverse]
    assert forward
    assert all(e.u == e.v == node.id for e in pose_graph.edges())
    # each direction can go round again
    for edge in pose_graph.edges():
        assert [t.edge for t in edge.transitions if not t.uturn] == [edge.id]


def test_junctions_moved_together_from_over_merge_m_apart_are_held_where_they_were() -> None:
    # old town coverage+stops 0's knot: two parts 8.005 m apart, one pulled 5.6 m towards the
    # other by its arms to it; a third pair already 5 m apart may close in
    before = np.array([[-34.2, 81.5], [-26.7, 78.7], [0.0, 0.0], [5.0, 0.0]])
    moved = np.array([[-28.6, 81.5], [-27.1, 79.4], [1.0, 0.0], [4.0, 0.0]])
    held = _held_apart(before, moved, 8.0)
    assert np.allclose(held[:2], before[:2])
    assert np.allclose(held[2:], moved[2:])


def _held_knot() -> tuple[FloatArray, list[Street], npt.NDArray[np.int64]]:
    """Fresh Helsinki coverage+stops 3's held pair (-454.3, -291.2) / (-455.9, -285.9), the
    second with the link and one street; the Erottaja pair, three streets each; and old town
    wander 6's pair (-35.5, 82.8) / (-33.1, 89.2), whose street from the west (node 14)
    ends at both."""
    junctions = np.array(
        [
            [-454.3, -291.2],
            [-455.9, -285.9],
            [142.6, 132.7],
            [151.3, 132.7],
            [-35.5, 82.8],
            [-33.1, 89.2],
        ]
    )
    ends = [(0, 1), (0, 6), (0, 7), (1, 8), (2, 3), (2, 9), (2, 10), (3, 11), (3, 12)]
    ends += [(4, 5), (4, 13), (4, 14), (5, 14), (5, 15)]
    streets = [Street(i, a, b, (i,), ()) for i, (a, b) in enumerate(ends)]
    return junctions, streets, np.array([[0, 1], [2, 3], [4, 5]])


def test_a_held_pair_with_a_part_of_two_streets_is_put_back_as_one() -> None:
    junctions, streets, held = _held_knot()
    thin = JunctionParams(split_held_part_streets=True, split_held_shared_ends=False)
    rejoin = _held_pairs_to_rejoin(junctions, streets, held, thin)
    assert rejoin.tolist() == [True, False, False]
    rejoined = _rejoin_pairs(junctions, held[rejoin])
    assert len(rejoined) == 5
    assert np.allclose(rejoined[:4], junctions[2:])
    assert np.allclose(rejoined[4], [-455.1, -288.55])
    off = JunctionParams(split_held_part_streets=False, split_held_shared_ends=False)
    assert not _held_pairs_to_rejoin(junctions, streets, held, off).any()


def test_a_held_pair_that_one_street_reaches_at_both_parts_is_put_back_as_one() -> None:
    junctions, streets, held = _held_knot()
    shared = JunctionParams(split_held_part_streets=False, split_held_shared_ends=True)
    assert _held_pairs_to_rejoin(junctions, streets, held, shared).tolist() == [
        False,
        False,
        True,
    ]


def test_the_held_pair_guards_defaults() -> None:
    params = JunctionParams()
    assert params.split_held_part_streets is True
    assert params.split_held_shared_ends is True


@pytest.mark.parametrize("shift_m", [0.0, 3.0])
def test_a_part_of_a_parted_pile_moves_at_most_split_part_shift_m(shift_m: float) -> None:
    # fresh Kaisaniemi wander+stops 1: the part (-31.8, -82.0), 4 m from a true junction,
    # moved 8.4 m north by its arms' lines; a junction that is no part moves as far as refine
    # takes it
    before = np.array([[-31.8, -82.0], [0.0, 0.0]])
    moved = np.array([[-32.3, -73.6], [6.0, 8.0]])
    parts = np.array([[-31.8, -82.0], [40.0, 40.0]])
    shifted = _parts_shifted(before, moved, parts, shift_m)
    step = shifted[0] - before[0]
    assert np.hypot(*step) == pytest.approx(shift_m)
    if shift_m:
        assert np.allclose(step / np.hypot(*step), (moved[0] - before[0]) / 8.415, atol=0.01)
    assert np.allclose(shifted[1], moved[1])
    assert np.allclose(_parts_shifted(before, moved, np.zeros((0, 2)), shift_m), moved)


def test_each_tracks_turns_are_found_once_per_build(
    walk_city: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a build cuts its tracks many times; each track's U-turns, peeks and side steps depend
    # on the track alone, so they are found once, not at every cut nor again for the spurs'
    # roots
    from city360.pose_graph import build, track_turns

    side_steps: Counter[int] = Counter()
    peeks: Counter[int] = Counter()
    cuts: list[int] = []
    find_side_steps, find_peeks = track_turns._side_steps, track_turns._peeks
    find_dead_ends = build.find_dead_ends

    def counted_side_steps(track: Track, params: JunctionParams) -> list[tuple[int, FloatArray]]:
        side_steps[id(track)] += 1
        return find_side_steps(track, params)

    def counted_peeks(track: Track, params: JunctionParams, found: Sequence[int]) -> list[int]:
        peeks[id(track)] += 1
        return find_peeks(track, params, found)

    def counted_dead_ends(*args: Any, **kwargs: Any) -> tuple[FloatArray, list[list[Any]]]:
        cuts.append(1)
        return find_dead_ends(*args, **kwargs)

    monkeypatch.setattr(track_turns, "_side_steps", counted_side_steps)
    monkeypatch.setattr(track_turns, "_peeks", counted_peeks)
    monkeypatch.setattr(build, "find_dead_ends", counted_dead_ends)
    build_city(walk_city("both"), require_frames=False)
    assert len(cuts) > 1
    assert side_steps
    assert set(side_steps.values()) == {1}
    assert set(peeks.values()) == {1}
