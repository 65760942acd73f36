"""A true dead end that stops a few metres short of another street (Kalevankatu's east end)."""

from __future__ import annotations

import numpy as np
import pytest

from city360.pose_graph.short_ends import ShortEnd, join_short_end, short_ends

# A north-south street (10 - 11) and a street from the east (13) ending at node 2, ``gap`` m
# short of it at y = 20; node 1 a T at y = -30 with its arm to the east.
NODES = {1: (0.0, -30.0), 10: (0.0, -60.0), 11: (0.0, 60.0), 12: (60.0, -30.0), 13: (60.0, 20.0)}


def _streets(end: tuple[float, float]) -> list[tuple[int, int, np.ndarray]]:
    def line(*points: tuple[float, float]) -> np.ndarray:
        return np.array(points, dtype=np.float64)

    return [
        (10, 1, line(NODES[10], NODES[1])),
        (1, 11, line(NODES[1], NODES[11])),
        (1, 12, line(NODES[1], NODES[12])),
        (13, 2, line(NODES[13], (30.0, end[1]), end)),
    ]


def test_a_dead_end_5_m_short_of_a_street_it_runs_into_is_found() -> None:
    """Kalevankatu's shape: 5.2 m short, square on; the foot on the street 50 m from node 1."""
    found = short_ends(_streets((5.2, 20.0)), {**NODES, 2: (5.2, 20.0)}, 8.0)
    assert [(f.node, f.end, f.foot) for f in found] == [(2, (5.2, 20.0), (0.0, 20.0))]
    assert found[0].gap_m == pytest.approx(5.2)


@pytest.mark.parametrize(
    ("end", "why"),
    [
        ((6.8, 20.0), "farther than a camera's picture joins them"),
        ((0.2, 20.0), "on the street: a node the map lacks"),
        ((5.0, -26.0), "beside node 1: a stub's end"),
    ],
)
def test_ends_read_as_drawn(end: tuple[float, float], why: str) -> None:
    assert short_ends(_streets(end), {**NODES, 2: end}, 8.0) == [], why


def test_an_end_running_beside_a_street_is_not_short_of_it() -> None:
    """A street that comes in parallel, 5 m beside the other (Simonkatu's shape, 6.9 m): no T."""
    streets = _streets((5.0, 20.0))
    streets[3] = (13, 2, np.array([(5.0, 50.0), (5.0, 20.0)]))
    assert short_ends(streets, {**NODES, 2: (5.0, 20.0), 13: (5.0, 50.0)}, 8.0) == []


def test_the_reading_joins_the_end_to_a_new_node_at_the_foot() -> None:
    short = ShortEnd(2, (5.2, 20.0), (0.0, 20.0), 5.2)
    joined = join_short_end(_streets((5.2, 20.0)), short, -1)
    u, v, line = joined[-1]
    assert (u, v) == (2, -1)
    assert line.tolist() == [[5.2, 20.0], [0.0, 20.0]]
