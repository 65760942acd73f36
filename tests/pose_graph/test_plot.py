"""``plot_graph``: the picture's legend names what it draws, and only that."""

from __future__ import annotations

from pathlib import Path

import networkx as nx

from city360.pose_graph.graph import PoseGraph
from city360.pose_graph.plot import plot_graph


def _one_street(filmed_back: bool) -> PoseGraph:
    """Two dead ends 40 m apart joined by one street: filmed both ways when ``filmed_back``
    (two primary edges), else filmed one way (a primary edge and its ``reverse`` edge)."""
    graph = nx.MultiDiGraph()
    for n, x in ((0, 0.0), (1, 40.0)):
        graph.add_node(n, kind="dead_end", x_m=x, y_m=0.0, lat=0.0, lon=0.0, degree=1)
    for a, b, reverse in ((0, 1, False), (1, 0, not filmed_back)):
        graph.add_edge(
            a,
            b,
            key=f"s0{'r' if reverse else ''}{a}",
            trajectory="walk_000",
            first_frame=0,
            last_frame=1,
            reverse=reverse,
            length_m=40.0,
            start_heading_deg=0.0,
            end_heading_deg=0.0,
            heading_profile_deg=[],
            twin=None,
            street=0,
            primary=True,
            transitions=[],
        )
    return PoseGraph(graph)


def test_the_legend_names_only_the_kinds_of_street_drawn(tmp_path: Path) -> None:
    """A city filmed one way only showed "street filmed both ways" in its legend, drawn from an
    empty set of lines (issue 17, round twenty-one: newuser4 saw it on `info --plot`)."""
    one_way = plot_graph(_one_street(filmed_back=False), tmp_path / "one_way.svg")
    text = one_way.read_text(encoding="utf-8")
    assert "filmed one way" in text
    assert "street filmed both ways" not in text

    both = plot_graph(_one_street(filmed_back=True), tmp_path / "both.svg")
    text = both.read_text(encoding="utf-8")
    assert "street filmed both ways" in text
    assert "filmed one way" not in text
