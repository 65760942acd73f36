"""The scorer on hand-made truths and built graphs (positions in metres, city CRS)."""

from __future__ import annotations

import math

import networkx as nx
import pytest

from city360.geo import bearing_deg
from city360.pose_graph import score as score_module
from city360.pose_graph.graph import PoseGraph
from city360.pose_graph.score import Score, score
from city360.pose_graph.transitions import Choice, transitions_for
from city360.synth.groundtruth import Junction, SceneTruth, StreetEdge

# Two T-junctions 7 m apart on a north-south street (a staggered crossing): the street between
# them is shorter than the 8 m matching tolerance, so the truth reads them as one place.
STAGGERED_NODES = {
    1: (0.0, 0.0),  # T-junction, arm to the west
    2: (0.0, 7.0),  # T-junction, arm to the east
    10: (-60.0, 0.0),
    11: (0.0, -60.0),
    12: (60.0, 7.0),
    13: (0.0, 67.0),
}
STAGGERED_STREETS = [(1, 2), (1, 10), (1, 11), (2, 12), (2, 13)]


def _truth(nodes: dict[int, tuple[float, float]], streets: list[tuple[int, int]]) -> SceneTruth:
    degree = {n: sum(n in s for s in streets) for n in nodes}
    junctions = [
        Junction(id=n, x_m=x, y_m=y, lat=0.0, lon=0.0, degree=degree[n])
        for n, (x, y) in nodes.items()
    ]
    edges = []
    for u, v in streets:
        (ux, uy), (vx, vy) = nodes[u], nodes[v]
        length = ((vx - ux) ** 2 + (vy - uy) ** 2) ** 0.5
        edges.append(StreetEdge(u=u, v=v, length_m=length, polyline_xy=[nodes[u], nodes[v]]))
    return SceneTruth(seed=0, junctions=junctions, streets=edges, pois=[], objects=[], videos=[])


def _built(nodes: dict[int, tuple[float, float]], streets: list[tuple[int, int]]) -> PoseGraph:
    """A built pose graph with one street (both directions) per pair in ``streets``, each as
    long as the straight line between its ends."""
    graph = nx.MultiDiGraph()
    for n, (x, y) in nodes.items():
        degree = sum(n in s for s in streets)
        kind = "junction" if degree >= 3 else "dead_end"
        graph.add_node(n, kind=kind, x_m=x, y_m=y, lat=0.0, lon=0.0, degree=degree)
    for street, (u, v) in enumerate(streets):
        (ux, uy), (vx, vy) = nodes[u], nodes[v]
        length = ((vx - ux) ** 2 + (vy - uy) ** 2) ** 0.5
        for a, b, reverse in ((u, v, False), (v, u, True)):
            graph.add_edge(
                a,
                b,
                key=f"s{street}{'r' if reverse else ''}",
                trajectory="walk_000",
                first_frame=0,
                last_frame=1,
                reverse=reverse,
                length_m=length,
                start_heading_deg=0.0,
                end_heading_deg=0.0,
                heading_profile_deg=[],
                twin=None,
                street=street,
                primary=True,
                transitions=[],
            )
    return PoseGraph(graph)


def test_a_build_that_resolves_a_staggered_pair_is_not_penalised() -> None:
    """Built junctions 1-2 m from each of the two true T-junctions 7 m apart: one place in
    the truth's reading, so no extra junction and every street found."""
    truth = _truth(STAGGERED_NODES, STAGGERED_STREETS)
    built = dict(STAGGERED_NODES)
    built[1], built[2] = (1.0, 0.5), (-0.5, 8.0)
    result = score(_built(built, STAGGERED_STREETS), truth)
    assert result.true_junctions == 1
    assert (result.junction_precision, result.junction_recall) == (1.0, 1.0)
    assert result.edge_f1 == pytest.approx(1.0)
    assert not result.extra_streets


def test_a_build_that_joins_a_staggered_pair_scores_the_same() -> None:
    """One built crossing between the two T-junctions: the truth's own reading."""
    truth = _truth(STAGGERED_NODES, STAGGERED_STREETS)
    built = {n: xy for n, xy in STAGGERED_NODES.items() if n != 2}
    built[1] = (0.0, 3.5)
    streets = [(1, 10), (1, 11), (1, 12), (1, 13)]
    result = score(_built(built, streets), truth)
    assert (result.junction_precision, result.junction_recall) == (1.0, 1.0)
    assert result.edge_f1 == pytest.approx(1.0)


def test_a_junction_built_twice_where_the_truth_has_one_is_still_an_extra() -> None:
    """Two built junctions 6 m apart at one true crossing: only a pair the truth itself
    contracted is read as one place."""
    nodes = {1: (0.0, 0.0), 10: (-60.0, 0.0), 11: (0.0, -60.0), 12: (60.0, 0.0), 13: (0.0, 60.0)}
    truth = _truth(nodes, [(1, 10), (1, 11), (1, 12), (1, 13)])
    built = {**nodes, 1: (0.0, -3.0), 2: (0.0, 3.0)}
    built[12], built[13] = (60.0, 3.0), (0.0, 60.0)
    result = score(_built(built, [(1, 2), (1, 10), (1, 11), (2, 12), (2, 13)]), truth)
    assert result.junction_recall == 1.0
    assert result.junction_precision == 0.5
    assert result.extra_streets


def test_a_built_junction_that_matches_a_true_one_is_never_read_into_a_pair() -> None:
    """A contracted pair 6 m apart and a third junction 9 m on: the built junction between
    them is nearer the pair's second half than its own true junction is far, and still
    counts for the third junction."""
    nodes = {
        1: (0.0, 0.0),
        2: (0.0, 6.0),
        3: (0.0, 15.0),
        10: (-60.0, 0.0),
        11: (0.0, -60.0),
        12: (60.0, 6.0),
        13: (-60.0, 15.0),
        14: (0.0, 75.0),
    }
    truth = _truth(nodes, [(1, 2), (1, 10), (1, 11), (2, 12), (2, 3), (3, 13), (3, 14)])
    built = {n: xy for n, xy in nodes.items() if n != 2}
    built[1], built[3] = (0.0, 0.5), (0.0, 11.0)
    result = score(_built(built, [(1, 10), (1, 11), (1, 12), (1, 3), (3, 13), (3, 14)]), truth)
    assert result.true_junctions == 2
    assert (result.junction_precision, result.junction_recall) == (1.0, 1.0)


# A crossing at (0, 0) and, 30 m up its northern arm, a 5 m true stub to the east: shorter
# than the 8 m matching tolerance, so the truth contracts it and its T is a bend.
STUB_NODES = {
    1: (0.0, 0.0),
    2: (0.0, 30.0),  # the T of the short stub
    3: (5.0, 30.0),  # the stub's dead end
    10: (-60.0, 0.0),
    11: (0.0, -60.0),
    12: (60.0, 0.0),
    13: (0.0, 90.0),
}
STUB_STREETS = [(1, 10), (1, 11), (1, 12), (1, 2), (2, 3), (2, 13)]


def _figures(result: Score) -> tuple[float, float, float, float, float]:
    return (
        result.junction_precision,
        result.junction_recall,
        result.edge_precision,
        result.edge_recall,
        result.edge_f1,
    )


def test_a_built_stub_the_truth_would_contract_makes_no_junction() -> None:
    """The built graph has the true 5 m stub (5.5 m, its T 0.7 m off): read as the truth reads
    it, the T is a bend, so no extra junction and no extra street."""
    truth = _truth(STUB_NODES, STUB_STREETS)
    built = {**STUB_NODES, 2: (0.5, 30.5), 3: (6.0, 30.5)}
    result = score(_built(built, STUB_STREETS), truth)
    assert result.true_junctions == 1
    assert _figures(result) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert result.contracted_stubs == ["built street 2-3 at (0.5, 30.5) (6.0, 30.5), 5.5 m"]


def test_a_true_stub_built_longer_than_the_tolerance_is_read_as_the_truth_reads_it() -> None:
    """The 5 m true stub built 9 m long (its end 4 m past the true end): the truth's decision,
    taken on the true length, holds for the street that stands for it."""
    truth = _truth(STUB_NODES, STUB_STREETS)
    result = score(_built({**STUB_NODES, 3: (9.0, 30.0)}, STUB_STREETS), truth)
    assert _figures(result) == (1.0, 1.0, 1.0, 1.0, 1.0)


@pytest.mark.parametrize(
    ("at", "tip"),
    [
        (2, (-6.0, 30.0)),  # at the true stub's T, the other way
        (2, (-20.0, 30.0)),
        (1, (4.0, 4.0)),  # at the crossing, between two arms
        (99, (5.0, -30.0)),  # at a bend of the southern street (node 99 splits it)
        (1, (5.0, 0.5)),  # along the crossing's eastern arm: a second street there
    ],
)
def test_a_junk_stub_is_never_rewarded(at: int, tip: tuple[float, float]) -> None:
    """A made-up stub anywhere but where the truth dropped one costs as it always did: no
    figure comes out better than the build without it, and at least one worse."""
    truth = _truth(STUB_NODES, STUB_STREETS)
    nodes = {**STUB_NODES, 99: (0.0, -30.0), 98: tip}
    streets = [s for s in STUB_STREETS if s != (1, 11)] + [(1, 99), (99, 11)]
    clean = _figures(score(_built(nodes, [*streets, (2, 3)]), truth))
    junk = _figures(score(_built(nodes, [*streets, (2, 3), (at, 98)]), truth))
    assert all(j <= c for j, c in zip(junk, clean, strict=True))
    assert junk != clean


def test_a_second_stub_where_the_truth_dropped_one_changes_nothing() -> None:
    """Two built stubs standing for the one dropped true stub (two passes ending 5 m and 7 m
    up it): both are read as the truth reads the place, neither helps nor costs."""
    truth = _truth(STUB_NODES, STUB_STREETS)
    nodes = {**STUB_NODES, 4: (7.0, 31.0)}
    twice = score(_built(nodes, [*STUB_STREETS, (2, 4)]), truth)
    assert _figures(twice) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert len(twice.contracted_stubs) == 2


def test_a_true_stub_of_the_tolerance_or_longer_built_short_keeps_its_junction() -> None:
    """A true 10 m stub built 6 m long (a walk turning before the mapped end): the truth keeps
    the stub, so the built one is that street and its T a junction, as before."""
    nodes = {**STUB_NODES, 3: (10.0, 30.0)}
    truth = _truth(nodes, STUB_STREETS)
    assert truth.streets[4].length_m == 10.0
    result = score(_built({**nodes, 3: (6.0, 30.0)}, STUB_STREETS), truth)
    assert result.true_junctions == 2
    assert _figures(result) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert not result.contracted_stubs


def test_a_built_stub_stands_for_the_nearest_true_stub() -> None:
    """Two true stubs off one crossing, 7 m (dropped by the truth) and 11.7 m (kept) long, the
    built stub's end within 8 m of both ends and nearer the kept one's: it is the kept street,
    found, not read as the dropped one (the Helsinki one-way 1 place (-456, -464))."""
    nodes = {
        1: (0.0, 0.0),
        2: (-6.5, -2.5),  # the 7 m stub's end
        3: (-9.5, 6.8),  # the 11.7 m stub's end
        10: (60.0, 0.0),
        11: (0.0, -60.0),
    }
    streets = [(1, 2), (1, 3), (1, 10), (1, 11)]
    truth = _truth(nodes, streets)
    built = {1: (0.5, 0.0), 4: (-7.0, 3.0), 10: (60.0, 0.0), 11: (0.0, -60.0)}
    result = score(_built(built, [(1, 4), (1, 10), (1, 11)]), truth)
    assert not result.contracted_stubs
    assert result.edge_precision == 1.0
    assert (result.junction_precision, result.junction_recall) == (1.0, 1.0)


# Two streets that cross at (0, 0) with no node there (the map lacks the shared node), and a
# T-junction 40 m up the north-south one.
CROSSING_NODES = {
    1: (0.0, 40.0),  # T-junction, arm to the east
    10: (-60.0, 0.0),
    11: (60.0, 0.0),
    13: (0.0, -60.0),
    14: (0.0, 100.0),
    15: (40.0, 40.0),
}
CROSSING_STREETS = [(10, 11), (13, 1), (1, 14), (1, 15)]


def test_a_built_crossing_where_the_map_lacks_its_node_is_no_invented_junction() -> None:
    """The build makes the crossing the picture shows (1 m off): read with the crossing, so
    the junction matches it and the four streets out of it are found."""
    truth = _truth(CROSSING_NODES, CROSSING_STREETS)
    built = {**CROSSING_NODES, 2: (1.0, 0.5)}
    streets = [(2, 10), (2, 11), (2, 13), (2, 1), (1, 14), (1, 15)]
    result = score(_built(built, streets), truth)
    assert result.true_junctions == 2
    assert _figures(result) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert result.read_crossings == ["true streets crossing at (0.0, 0.0), no node in the map"]


def test_a_build_that_follows_the_map_at_a_crossing_without_node_scores_as_before() -> None:
    """The streets built past each other with no junction (as the map draws them): the
    map's reading, nothing missed."""
    truth = _truth(CROSSING_NODES, CROSSING_STREETS)
    result = score(_built(CROSSING_NODES, CROSSING_STREETS), truth)
    assert result.true_junctions == 1
    assert _figures(result) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert not result.read_crossings


@pytest.mark.parametrize("at", [(30.0, 0.0), (0.0, -12.0)])
def test_a_junction_built_away_from_the_crossing_is_still_an_extra(
    at: tuple[float, float],
) -> None:
    """A made-up crossing 12 m or more from where the streets cross costs as it did."""
    truth = _truth(CROSSING_NODES, CROSSING_STREETS)
    built = {**CROSSING_NODES, 2: at, 3: (at[0], at[1] - 20.0), 4: (at[0], at[1] + 20.0)}
    streets = [(2, 10), (2, 11), (2, 3), (2, 4), (13, 1), (1, 14), (1, 15)]
    result = score(_built(built, streets), truth)
    assert (result.junction_precision, result.junction_recall) == (0.5, 1.0)


def test_streets_crossing_beside_a_true_node_are_not_read_as_a_crossing() -> None:
    """Where the two lines cross within 8 m of a true node (here a bend 5 m away), the map has
    a node to say what is there: a built junction at the crossing stays an extra."""
    nodes = {**CROSSING_NODES, 16: (5.0, 0.0)}
    truth = _truth(nodes, [(10, 16), (16, 11), (13, 1), (1, 14), (1, 15)])
    built = {**CROSSING_NODES, 2: (1.0, 0.5)}
    streets = [(2, 10), (2, 11), (2, 13), (2, 1), (1, 14), (1, 15)]
    result = score(_built(built, streets), truth)
    assert (result.junction_precision, result.junction_recall) == (0.5, 1.0)


# Three true junctions in a row, 7 m and 6 m apart: the truth reads them as one place, placed
# at the one with most streets (node 1, a crossing), 13 m from the third.
CHAIN_NODES = {
    1: (0.0, 0.0),
    2: (7.0, 0.0),
    3: (13.0, 0.0),
    10: (-60.0, 0.0),
    11: (0.0, 60.0),
    12: (0.0, -60.0),
    13: (7.0, 60.0),
    14: (73.0, 0.0),
    15: (13.0, -60.0),
}
CHAIN_STREETS = [(1, 2), (2, 3), (1, 10), (1, 11), (1, 12), (2, 13), (3, 14), (3, 15)]


@pytest.mark.parametrize("at", [(12.5, 0.5), (7.5, -0.5)])
def test_a_junction_built_at_another_junction_of_a_contracted_place_stands_for_it(
    at: tuple[float, float],
) -> None:
    """One built junction 0.7 m from the place's third true junction (12.5 m from the place's
    own position) or at its second: it stands at the place, no miss and no extra."""
    truth = _truth(CHAIN_NODES, CHAIN_STREETS)
    built = {n: xy for n, xy in CHAIN_NODES.items() if n not in (1, 2, 3)}
    built[1] = at
    streets = [(1, n) for n in (10, 11, 12, 13, 14, 15)]
    result = score(_built(built, streets), truth)
    assert result.true_junctions == 1
    assert (result.junction_precision, result.junction_recall) == (1.0, 1.0)


def test_a_junction_built_past_a_contracted_place_is_still_an_extra() -> None:
    """9 m past the place's far true junction: no true junction of the place is within 8 m."""
    truth = _truth(CHAIN_NODES, CHAIN_STREETS)
    built = {n: xy for n, xy in CHAIN_NODES.items() if n not in (1, 2, 3)}
    built[1] = (22.0, 0.0)
    streets = [(1, n) for n in (10, 11, 12, 13, 14, 15)]
    result = score(_built(built, streets), truth)
    assert (result.junction_precision, result.junction_recall) == (0.0, 0.0)


def _truth_of_lines(
    nodes: dict[int, tuple[float, float]], lines: list[list[tuple[float, float]]]
) -> SceneTruth:
    """A truth whose streets are the polylines ``lines``, each from one node of ``nodes`` to
    another (its first and last points)."""
    where = {xy: n for n, xy in nodes.items()}
    ends = [(where[line[0]], where[line[-1]]) for line in lines]
    degree = {n: sum(n in e for e in ends) for n in nodes}
    junctions = [
        Junction(id=n, x_m=x, y_m=y, lat=0.0, lon=0.0, degree=degree[n])
        for n, (x, y) in nodes.items()
    ]
    edges = [
        StreetEdge(u=u, v=v, length_m=0.0, polyline_xy=line)
        for (u, v), line in zip(ends, lines, strict=True)
    ]
    return SceneTruth(seed=0, junctions=junctions, streets=edges, pois=[], objects=[], videos=[])


def _side_by_side(gap_m: float, run_m: float) -> SceneTruth:
    """A bend at (0, 0) whose two streets run west ``gap_m`` apart (from 3 m on) for
    ``run_m``, then part to dead ends 40 m on (Kamppi's carriageways joined at one end)."""
    half = gap_m / 2
    nodes = {1: (0.0, 0.0), 10: (-run_m - 30.0, -25.0), 11: (-run_m - 30.0, 25.0)}
    north = [(0.0, 0.0), (-3.0, half), (-run_m, half), nodes[11]]
    south = [(0.0, 0.0), (-3.0, -half), (-run_m, -half), nodes[10]]
    return _truth_of_lines(nodes, [south, north])


# The build walks both lines as one: a stub from the bend to where the lines part, a junction.
ONE_STREET_NODES = {1: (0.5, 0.0), 2: (-16.5, 0.3), 10: (-46.0, -25.0), 11: (-46.0, 25.0)}
ONE_STREET = [(2, 1), (2, 10), (2, 11)]


def test_two_lines_2_m_apart_built_as_one_street_are_read_as_one() -> None:
    """Lines 2 m apart for 16 m (no GPS parts them): the build's junction where they part
    and its stub to the bend are the truth's reading, every figure 1.0 (main: P 0)."""
    result = score(_built(ONE_STREET_NODES, ONE_STREET), _side_by_side(2.0, 16.0))
    assert result.true_junctions == 1
    assert _figures(result) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert result.read_side_by_side == [
        "true streets side by side from (0.0, 0.0) for 18.5 m (at most 3.9 m apart), "
        "parting at (-17.8, 0.0)"
    ]


def test_a_build_that_keeps_two_close_lines_apart_scores_as_before() -> None:
    """The build draws the bend as the map does (no junction): the map's reading, 1.0."""
    built = {1: (0.5, 0.0), 10: (-46.0, -25.0), 11: (-46.0, 25.0)}
    result = score(_built(built, [(1, 10), (1, 11)]), _side_by_side(2.0, 16.0))
    assert result.true_junctions == 0
    assert _figures(result) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert not result.read_side_by_side


@pytest.mark.parametrize("gap_m", [6.0, 8.0, 12.0, 20.0])
def test_two_streets_apart_enough_to_film_stay_two(gap_m: float) -> None:
    """Streets 6-8 m apart, and a one-way pair 12-20 m apart: a build that merges them into
    one street with a junction where they part is still wrong (an extra junction)."""
    result = score(_built(ONE_STREET_NODES, ONE_STREET), _side_by_side(gap_m, 16.0))
    assert not result.read_side_by_side
    assert result.true_junctions == 0
    assert result.junction_precision == 0.0


def test_a_hairpin_whose_arms_touch_for_6_m_reads_a_5_m_built_stub_as_none() -> None:
    """A V whose arms lie within 4 m for their last 6.5 m (Kamppi (73, 142): 8 m): the
    build's fork with a 5 m stub to the tip is a stub under 8 m, contracted as the truth's own
    would be: no junction, nothing extra (main: P 0)."""
    built = {1: (0.5, 0.0), 2: (-5.0, 0.5), 10: (-34.0, -25.0), 11: (-34.0, 25.0)}
    result = score(_built(built, ONE_STREET), _side_by_side(2.0, 4.0))
    assert [line.split(" for ")[1][:5] for line in result.read_side_by_side] == ["6.5 m"]
    assert result.true_junctions == 0
    assert result.contracted_stubs
    assert (result.junction_precision, result.junction_recall) == (1.0, 1.0)
    assert result.edge_f1 == 1.0


def _built_with_turns(
    nodes: dict[int, tuple[float, float]], streets: list[tuple[int, int]]
) -> PoseGraph:
    """:func:`_built` with each edge's headings along its straight line and the transitions
    the build's policy offers at its end (every other street leaving there)."""
    pose_graph = _built(nodes, streets)
    graph = pose_graph.graph
    for u, v, data in graph.edges(data=True):
        (ux, uy), (vx, vy) = nodes[u], nodes[v]
        data["start_heading_deg"] = data["end_heading_deg"] = bearing_deg(vx - ux, vy - uy)
    for _, v, data in graph.edges(data=True):
        choices = [
            Choice(key, out["start_heading_deg"])
            for _, _, key, out in graph.out_edges(v, keys=True, data=True)
            if out["street"] != data["street"]
        ]
        data["transitions"] = [
            tr.to_json() for tr in transitions_for(data["end_heading_deg"], choices)
        ]
    return PoseGraph(graph)


def test_turns_at_a_place_built_as_two_junctions_are_judged_through_both() -> None:
    """The staggered pair built as its two junctions: arriving at either, each turn is taken
    straight on then turning, turning then straight on, or by a jog (LEFT then RIGHT: the
    truth's one place reads UP). Every turn is right (it was judged at one junction only)."""
    truth = _truth(STAGGERED_NODES, STAGGERED_STREETS)
    result = score(_built_with_turns(STAGGERED_NODES, STAGGERED_STREETS), truth)
    assert result.turns_total == 12
    assert result.turn_accuracy == 1.0, result.wrong_turns


def test_a_route_through_a_two_junction_place_whose_turns_do_not_add_up_is_wrong() -> None:
    """The staggered pair with the turn from the street between its junctions onto the east
    arm labelled LEFT (it is a right turn): from the south that route reads UP then LEFT,
    not RIGHT; from the west LEFT then LEFT, not the jog's UP. Two turns wrong."""
    truth = _truth(STAGGERED_NODES, STAGGERED_STREETS)
    pose_graph = _built_with_turns(STAGGERED_NODES, STAGGERED_STREETS)
    connector = pose_graph.graph.edges[1, 2, "s0"]
    for tr in connector["transitions"]:
        if tr["edge"] == "s3":  # onto the east arm, 2 -> 12
            tr["label"] = "LEFT"
    result = score(PoseGraph(pose_graph.graph), truth)
    assert result.turns_right == result.turns_total - 2
    assert sorted(w.split(" should be ")[1] for w in result.wrong_turns) == ["RIGHT", "UP"]


def test_turns_at_one_built_junction_need_the_label_of_the_truth() -> None:
    """A plain crossing: its 12 turns right as built; one mislabelled transition costs one."""
    nodes = {1: (0.0, 0.0), 10: (-60.0, 0.0), 11: (0.0, -60.0), 12: (60.0, 0.0), 13: (0.0, 60.0)}
    streets = [(1, 10), (1, 11), (1, 12), (1, 13)]
    truth = _truth(nodes, streets)
    pose_graph = _built_with_turns(nodes, streets)
    assert score(pose_graph, truth).turn_accuracy == 1.0
    from_south = pose_graph.graph.edges[11, 1, "s1r"]
    for tr in from_south["transitions"]:
        if tr["edge"] == "s2":  # east: a right turn
            tr["label"] = "UP"
    result = score(PoseGraph(pose_graph.graph), truth)
    assert result.turns_right == result.turns_total - 1 == 11


# A fork: a street from the south (10) meets two arms leaving north-east 18 degrees apart
# (bearings 10 and 28 degrees, Bulevardi's fork at 17.8), and a street to the west (13).
FORK_NODES = {
    1: (0.0, 0.0),
    10: (0.0, -60.0),
    11: (60.0 * math.sin(math.radians(10.0)), 60.0 * math.cos(math.radians(10.0))),
    12: (60.0 * math.sin(math.radians(28.0)), 60.0 * math.cos(math.radians(28.0))),
    13: (-60.0, 0.0),
}
FORK_STREETS = [(1, 10), (1, 11), (1, 12), (1, 13)]


def test_an_edge_along_one_arm_of_a_fork_is_not_judged_as_arriving_along_the_other() -> None:
    """Both arms of an 18-degree fork built, every transition as the policy labels it: every
    turn right. (Judged against both arms, the edge from one arm was asked for the other
    arm's labels, and its turns came out wrong.)"""
    truth = _truth(FORK_NODES, FORK_STREETS)
    result = score(_built_with_turns(FORK_NODES, FORK_STREETS), truth)
    assert result.turns_total > 0
    assert result.turn_accuracy == 1.0, result.wrong_turns


def test_a_fork_built_as_one_arm_is_judged_for_both() -> None:
    """The build draws the fork's two arms as one street along the first: the truth's second
    arm has no built edge nearest to it, so the one edge is judged for both, as before."""
    truth = _truth(FORK_NODES, FORK_STREETS)
    merged = score(_built_with_turns(FORK_NODES, [(1, 10), (1, 11), (1, 13)]), truth)
    apart = score(_built_with_turns(FORK_NODES, FORK_STREETS), truth)
    assert merged.turns_total == apart.turns_total
    assert merged.turns_right < merged.turns_total


def test_a_long_street_between_a_places_two_junctions_is_not_followed_through_it() -> None:
    """The staggered pair built as its two junctions, but the street between them is 60 m
    long (it goes round a block): a route along it leaves the place there. The 6 turns from
    one T's side arm to the other T's arms are wrong; the 4 taken at one T stay right, and
    so do the 2 straight on along the through street (the long street leaves heading the
    true way out). Followed through (as before), all 12 were right."""
    truth = _truth(STAGGERED_NODES, STAGGERED_STREETS)
    pose_graph = _built_with_turns(STAGGERED_NODES, STAGGERED_STREETS)
    pose_graph.graph.edges[1, 2, "s0"]["length_m"] = 60.0
    pose_graph.graph.edges[2, 1, "s0r"]["length_m"] = 60.0
    result = score(PoseGraph(pose_graph.graph), truth)
    assert result.turns_total == 12
    assert result.turns_right == 6, result.wrong_turns


# A north-south street with a T at node 1 (arm east to 12) and a street from the east (13)
# that ends at node 2, ``gap`` m short of the north-south street at y = 20 (Kalevankatu).
SHORT_END_NODES = {
    1: (0.0, -30.0),
    10: (0.0, -60.0),
    11: (0.0, 60.0),
    12: (60.0, -30.0),
    13: (60.0, 20.0),
}


def _short_end(gap_m: float) -> SceneTruth:
    nodes = {**SHORT_END_NODES, 2: (gap_m, 20.0)}
    return _truth(nodes, [(10, 1), (1, 11), (1, 12), (13, 2)])


# The build meets the north-south street there: a T at (0.5, 20.3).
BUILT_TEE_NODES = {**SHORT_END_NODES, 3: (0.5, 20.3)}
BUILT_TEE = [(10, 1), (1, 12), (1, 3), (3, 11), (3, 13)]


@pytest.fixture
def read_short_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(score_module, "READ_SHORT_ENDS", True)


@pytest.mark.usefixtures("read_short_ends")
def test_a_tee_built_where_a_street_stops_5_m_short_is_the_truths_reading() -> None:
    """A street that stops 5.2 m short of another (the twin's carriageways touch; no GPS parts
    them): the build's T there is read as a true T, every figure 1.0 (off: P 0.5)."""
    result = score(_built(BUILT_TEE_NODES, BUILT_TEE), _short_end(5.2))
    assert result.true_junctions == 2
    assert _figures(result) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert result.read_short_ends == [
        "true dead end at (5.2, 20.0) 5.2 m short of a street, read as a T at (0.0, 20.0)"
    ]


def test_a_tee_built_where_a_street_stops_short_is_an_extra_with_the_switch_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(score_module, "READ_SHORT_ENDS", False)
    result = score(_built(BUILT_TEE_NODES, BUILT_TEE), _short_end(5.2))
    assert (result.junction_precision, result.junction_recall) == (0.5, 1.0)
    assert not result.read_short_ends


@pytest.mark.usefixtures("read_short_ends")
def test_a_build_that_keeps_the_dead_end_scores_as_drawn() -> None:
    """The build leaves the end a dead end (as with OSM): the map's reading, 1.0."""
    built = {**SHORT_END_NODES, 2: (4.5, 20.5)}
    result = score(_built(built, [(10, 1), (1, 11), (1, 12), (13, 2)]), _short_end(5.2))
    assert result.true_junctions == 1
    assert _figures(result) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert not result.read_short_ends


@pytest.mark.usefixtures("read_short_ends")
def test_a_street_that_stops_7_m_short_stays_a_dead_end() -> None:
    """6.8 m short (Helsinki (280.5, 168.4)): the T the build makes is still an extra."""
    result = score(_built(BUILT_TEE_NODES, BUILT_TEE), _short_end(6.8))
    assert not result.read_short_ends
    assert (result.junction_precision, result.junction_recall) == (0.5, 1.0)


def test_a_place_built_as_two_junctions_reads_each_at_the_true_junction_it_stands_by() -> None:
    """Two true junctions 4.5 m apart, one place (T1 at the origin with four streets, T2 east
    of it with three). The build makes one junction 0.6 m from T2 (5.1 m from T1, so it
    matches the place) and another 7.2 m west of T1 (11.7 m from T2), joined by a street.
    Each stands by its own true junction: one place, no extra. Before, the first was taken to
    stand at T1, the place's position, and the second counted as an extra."""
    truth = _truth(
        {1: (0.0, 0.0), 2: (4.5, 0.0), 10: (-60.0, 0.0), 11: (0.0, -60.0), 13: (0.0, 60.0),
         12: (64.5, 0.0), 14: (4.5, -60.0)},
        [(1, 2), (1, 10), (1, 11), (1, 13), (2, 12), (2, 14)],
    )  # fmt: skip
    built = _built(
        {101: (-7.2, 0.0), 102: (5.1, 0.0), 10: (-60.0, 0.0), 11: (0.0, -60.0),
         13: (0.0, 60.0), 12: (64.5, 0.0), 14: (4.5, -60.0)},
        [(101, 102), (101, 10), (101, 11), (101, 13), (102, 12), (102, 14)],
    )  # fmt: skip
    result = score(built, truth)
    assert result.extra_junctions == []
    assert result.junction_precision == result.junction_recall == 1.0


# A knot of three footpath nodes joined by ways of 5-6 m (one place in the truth's reading),
# each with a long arm out, and a fourth way from node 2 round to node 3: Kaisaniemi's
# theatre lanes (round thirty-one).
KNOT_NODES = {1: (0.0, 0.0), 2: (6.0, 0.0), 3: (3.0, 5.0), 10: (-60.0, 0.0)}
KNOT_NODES |= {11: (66.0, 0.0), 12: (3.0, 65.0)}
KNOT_ARMS = [[(0.0, 0.0), (6.0, 0.0)], [(0.0, 0.0), (3.0, 5.0)]]
KNOT_ARMS += [[(0.0, 0.0), (-60.0, 0.0)], [(6.0, 0.0), (66.0, 0.0)], [(3.0, 5.0), (3.0, 65.0)]]


def _knot_with_way(via: tuple[float, float]) -> SceneTruth:
    return _truth_of_lines(KNOT_NODES, [*KNOT_ARMS, [(6.0, 0.0), via, (3.0, 5.0)]])


def _knot_built() -> PoseGraph:
    """One junction at the knot, its three arms out."""
    built = {1: (3.0, 2.0), 10: (-60.0, 0.0), 11: (66.0, 0.0), 12: (3.0, 65.0)}
    return _built(built, [(1, 10), (1, 11), (1, 12)])


@pytest.fixture
def drop_place_loops(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(score_module, "DROP_PLACE_LOOPS", True)


@pytest.mark.usefixtures("drop_place_loops")
def test_a_way_inside_a_contracted_place_is_no_street_of_the_truth() -> None:
    """The fourth way runs 11.4 m round by (8, 6), never over 8 m from a node of the knot: it
    lies inside the one place, so the build's one junction with three arms is the whole truth
    (before: a true street from the place to itself that no build makes, street F1 0.857)."""
    result = score(_knot_built(), _knot_with_way((8.0, 6.0)))
    assert result.true_junctions == 1
    assert _figures(result) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert not result.missing_streets


def test_a_way_inside_a_place_stays_a_loop_with_the_switch_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(score_module, "DROP_PLACE_LOOPS", False)
    result = score(_knot_built(), _knot_with_way((8.0, 6.0)))
    assert result.edge_recall == pytest.approx(0.75)
    assert len(result.missing_streets) == 1


@pytest.mark.usefixtures("drop_place_loops")
def test_a_loop_that_leaves_the_place_stays_a_true_street() -> None:
    """Round by (30, 30), 20 m and more from the knot: a loop a walk can film, still missed."""
    result = score(_knot_built(), _knot_with_way((30.0, 30.0)))
    assert result.edge_recall == pytest.approx(0.75)
    assert len(result.missing_streets) == 1


def _knot_built_with_loop(length_m: float) -> PoseGraph:
    """:func:`_knot_built` with a street from the junction to itself, ``length_m`` long along
    its walks (a walk out along one lane of the knot and back by another)."""
    built = _knot_built()
    graph = built.graph
    for reverse in (False, True):
        graph.add_edge(
            1,
            1,
            key=f"s9{'r' if reverse else ''}",
            **{**graph.edges[1, 10, "s0"], "street": 9, "length_m": length_m, "reverse": reverse},
        )
    return PoseGraph(graph)


@pytest.mark.usefixtures("drop_place_loops")
def test_a_built_loop_at_the_junction_of_the_place_goes_with_the_true_loop() -> None:
    """The truth's way round the knot is dropped as inside the place; the build's 12 m street
    from the knot's junction to itself (never over 6 m from it) is the same thing read from
    the other side, dropped too: every figure 1.0 (the truth's side alone: an extra street,
    street F1 0.857)."""
    result = score(_knot_built_with_loop(12.0), _knot_with_way((8.0, 6.0)))
    assert _figures(result) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert not result.extra_streets


@pytest.mark.usefixtures("drop_place_loops")
def test_a_long_built_loop_at_the_place_stays_an_extra_street() -> None:
    """A 40 m loop from the knot's junction may run 20 m out of the place: a street of its
    own (a turn-back mid-street built as a loop), extra as before."""
    result = score(_knot_built_with_loop(40.0), _knot_with_way((8.0, 6.0)))
    assert result.edge_recall == 1.0
    assert result.edge_precision == pytest.approx(0.75)
    assert len(result.extra_streets) == 1


def test_a_built_loop_at_the_place_matches_the_true_loop_with_the_switch_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(score_module, "DROP_PLACE_LOOPS", False)
    result = score(_knot_built_with_loop(12.0), _knot_with_way((8.0, 6.0)))
    assert _figures(result)[2] == 1.0
    assert not result.missing_streets


def _side_by_side_with_stub(run_m: float) -> SceneTruth:
    """:func:`_side_by_side` (lines 2 m apart) whose bend also has a 5 m stub east to a dead
    end (Helsinki's Arkadiankatu (-482.0, -53.5): two ways 1.4 m apart for 8 m from a junction
    whose third street is a 7 m stub to the window's edge)."""
    plain = _side_by_side(2.0, run_m)
    stub_end = Junction(id=20, x_m=5.0, y_m=0.0, lat=0.0, lon=0.0, degree=1)
    bend = next(j for j in plain.junctions if j.id == 1)
    junctions = [j for j in plain.junctions if j.id != 1]
    junctions += [Junction(id=1, x_m=0.0, y_m=0.0, lat=0.0, lon=0.0, degree=3), stub_end]
    assert bend.degree == 2
    stub = StreetEdge(u=1, v=20, length_m=5.0, polyline_xy=[(0.0, 0.0), (5.0, 0.0)])
    return SceneTruth(
        seed=0,
        junctions=junctions,
        streets=[*plain.streets, stub],
        pois=[],
        objects=[],
        videos=[],
    )


def test_two_lines_out_of_a_junction_of_a_short_stub_are_read_where_they_part() -> None:
    """The stub is under 8 m, so the reduction contracts it and the junction is a bend of the
    two close lines: the build's junction where they part, its stub running on past the bend
    to the stub's end, is the truth's reading, every figure 1.0 (before: no reading at a node
    of three streets, P 0)."""
    built = {1: (4.5, 0.0), 2: (-16.5, 0.3), 10: (-46.0, -25.0), 11: (-46.0, 25.0)}
    result = score(_built(built, ONE_STREET), _side_by_side_with_stub(16.0))
    assert len(result.read_side_by_side) == 1
    assert result.true_junctions == 1
    assert _figures(result) == (1.0, 1.0, 1.0, 1.0, 1.0)


def test_a_bend_left_by_a_parting_reading_is_no_junction_for_a_built_stub() -> None:
    """Lines 2 m apart for 10 m: they part about 12 m from the junction of the stub. A build
    whose junction stands 7.5 m from the true junction and 4.5 m from the parting, with a stub
    to the stub's end, matches the parting's junction; its stub does not stand for the true
    stub (whose junction the reading made a bend) and the junction is kept (before: dropped
    with the stub, R 0)."""
    built = {1: (4.5, 0.0), 2: (-7.5, 0.3), 10: (-36.0, -25.0), 11: (-36.0, 25.0)}
    result = score(_built(built, ONE_STREET), _side_by_side_with_stub(10.0))
    assert len(result.read_side_by_side) == 1
    assert result.true_junctions == 1
    assert (result.junction_precision, result.junction_recall) == (1.0, 1.0)
    assert not result.contracted_stubs


# The chain of three true junctions (one place) built as three junctions, one by each, joined
# in a row: the third (0.5 m from its true junction, 13.5 m from the place's position) is
# joined to the place's built junction only through the second (Kaisaniemi's footpath tangle
# around (-25, -130), round thirty-two).
CHAIN_BUILT = {n: xy for n, xy in CHAIN_NODES.items() if n not in (1, 2, 3)}
CHAIN_BUILT |= {1: (0.5, 0.5), 2: (7.5, -0.5), 3: (13.5, 0.5)}


@pytest.mark.parametrize("reading", ["junctions", "all"])
def test_a_place_built_as_a_chain_of_junctions_has_no_invented_one(
    monkeypatch: pytest.MonkeyPatch, reading: str
) -> None:
    """Each built junction stands by its own true junction of the place: none is invented
    (before: the third counted as an extra, precision 0.5)."""
    monkeypatch.setattr(score_module, "READ_PLACE_CHAINS", reading)
    result = score(_built(CHAIN_BUILT, CHAIN_STREETS), _truth(CHAIN_NODES, CHAIN_STREETS))
    assert result.true_junctions == 1
    assert (result.junction_precision, result.junction_recall) == (1.0, 1.0)
    assert result.extra_junctions == []


def test_the_streets_of_a_chain_are_read_as_built_with_junctions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ "junctions" leaves the streets as the direct reading scores them: the third junction's
    two streets and the one joining it are extras, its 13.5 m from the place leaves it no
    true node to stand for."""
    monkeypatch.setattr(score_module, "READ_PLACE_CHAINS", "junctions")
    result = score(_built(CHAIN_BUILT, CHAIN_STREETS), _truth(CHAIN_NODES, CHAIN_STREETS))
    assert result.edge_recall == pytest.approx(4 / 6)
    assert len(result.extra_streets) == 3


def test_the_streets_of_a_chain_are_read_through_the_place_with_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ "all" merges the third junction into the place as the second is: every street found."""
    monkeypatch.setattr(score_module, "READ_PLACE_CHAINS", "all")
    result = score(_built(CHAIN_BUILT, CHAIN_STREETS), _truth(CHAIN_NODES, CHAIN_STREETS))
    assert _figures(result) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert not result.extra_streets


@pytest.mark.parametrize("reading", [None, "junctions", "all"])
def test_a_junction_chained_past_a_place_is_still_an_extra(
    monkeypatch: pytest.MonkeyPatch, reading: str | None
) -> None:
    """The third built 9 m past its true junction (22 m from the place): no true junction of
    the place within 8 m, so an extra, whichever reading."""
    monkeypatch.setattr(score_module, "READ_PLACE_CHAINS", reading)
    built = {**CHAIN_BUILT, 3: (22.0, 0.5)}
    result = score(_built(built, CHAIN_STREETS), _truth(CHAIN_NODES, CHAIN_STREETS))
    assert (result.junction_precision, result.junction_recall) == (0.5, 1.0)


def test_a_chain_counts_an_extra_with_the_reading_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(score_module, "READ_PLACE_CHAINS", None)
    result = score(_built(CHAIN_BUILT, CHAIN_STREETS), _truth(CHAIN_NODES, CHAIN_STREETS))
    assert (result.junction_precision, result.junction_recall) == (0.5, 1.0)
