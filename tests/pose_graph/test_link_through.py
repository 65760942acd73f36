"""A short link in the middle of a street through a staggered pair: its end headings from the
street through it (``BuildParams.link_through_m``)."""

from __future__ import annotations

import pytest

from city360.geo import LocalProjection, angle_diff_deg
from city360.pose_graph import PoseGraph, build_from_tracks
from city360.pose_graph.build import BuildParams
from city360.pose_graph.tracks import Track
from tests.pose_graph.walks import polyline_track

_PROJECTION = LocalProjection(35.74, 139.67)


def _tracks(walks: list[list[tuple[float, float]]]) -> list[Track]:
    tracks = []
    for i, points in enumerate(walks):
        tracks.append(polyline_track(points, f"w{i} out"))
        tracks.append(polyline_track(points[::-1], f"w{i} back"))
    return tracks


def _staggered_pair_jogged(cut_m: float) -> list[Track]:
    """A north-south street with a T at (0, 0) (a side street west) and one at (0, 10) (a
    side street east). Walkers jog between the side streets and cut the 10 m link on a
    slant, ``cut_m`` either side of the centre line; others walk the main street or turn
    into one side street."""
    main = [(0.0, -70.0), (0.0, 80.0)]
    jog = [(-60.0, 0.0), (-cut_m, 0.0), (cut_m, 10.0), (60.0, 10.0)]
    west_south = [(-60.0, 0.0), (0.0, 0.0), (0.0, -70.0)]
    east_north = [(60.0, 10.0), (0.0, 10.0), (0.0, 80.0)]
    return _tracks([main, jog, west_south, east_north, jog])


def _link(graph: PoseGraph) -> tuple[int, int]:
    junctions = sorted((n.y_m, n.id) for n in graph.nodes() if n.kind == "junction")
    assert len(junctions) == 2
    (_, south), (_, north) = junctions
    return south, north


@pytest.mark.parametrize("link_m", [12.0, None])
def test_a_link_cut_on_a_slant_takes_the_street_through_it(link_m: float | None) -> None:
    # old town wander 39 without OSM: walkers jogging across a staggered pair's 7 m link
    # walked it at 30 deg, so the street straight on beyond it read as LEFT
    graph = build_from_tracks(
        _staggered_pair_jogged(5.0), _PROJECTION, params=BuildParams(link_through_m=link_m)
    )
    south, north = _link(graph)
    (link,) = [e for e in graph.edges() if e.u == south and e.v == north and e.primary]
    (onward,) = [
        t
        for t in link.transitions
        if abs(angle_diff_deg(graph.edge(t.edge).start_heading_deg, 0.0)) < 20
    ]
    if link_m is None:
        assert abs(angle_diff_deg(link.end_heading_deg, 0.0)) > 25
        assert onward.label == "LEFT"
    else:
        assert abs(angle_diff_deg(link.end_heading_deg, 0.0)) < 10
        assert abs(angle_diff_deg(link.start_heading_deg, 0.0)) < 10
        assert onward.label == "UP"


def test_a_jog_with_no_street_through_it_keeps_its_own_heading() -> None:
    # west street, 10 m north, east street, and a street south at the first corner: nothing
    # leaves the north corner straight on from the link, so the link is a bend of its own
    west = [(-60.0, 0.0), (0.0, 0.0), (0.0, 10.0), (60.0, 10.0)]
    south = [(0.0, -70.0), (0.0, 0.0), (-60.0, 0.0)]
    south_east = [(0.0, -70.0), (0.0, 10.0), (60.0, 10.0)]
    tracks = _tracks([west, south, south_east, west])
    built = [
        build_from_tracks(tracks, _PROJECTION, params=BuildParams(link_through_m=m))
        for m in (None, 12.0)
    ]
    links = []
    for graph in built:
        ends = [n.id for n in graph.nodes() if n.kind in ("junction", "link")]
        links.append(
            sorted(
                (e.start_heading_deg, e.end_heading_deg)
                for e in graph.edges()
                if e.u in ends and e.v in ends and e.length_m < 15
            )
        )
    assert links[0] == links[1]
