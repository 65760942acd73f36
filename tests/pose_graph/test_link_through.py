"""A short link in the middle of a street through a staggered pair: its end headings from the
street through it (``BuildParams.link_through_m``)."""

from __future__ import annotations

import pytest

from city360.geo import LocalProjection, angle_diff_deg
from city360.pose_graph import PoseGraph, build_from_tracks
from city360.pose_graph.build import BuildParams, _EdgeSpec, _through_short_links
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


_Geometry = dict[str, tuple[float, float, float, list[float]]]


def _pair(
    *, second_link: bool = False, east_arm: bool = True
) -> tuple[list[_EdgeSpec], _Geometry, dict[int, float], dict[int, float]]:
    """Streets of a staggered pair, by hand: node 0 (a T, an arm west) and node 1 (a T, an
    arm east) joined by a 7 m link built at 30 deg; the street through runs at 0 deg.
    Returns specs, geometry and each street's heading out of its ``a`` and into its ``b``."""
    # street: (a, b, heading deg, length m)
    streets = [(2, 0, 0.0, 60.0), (3, 0, 90.0, 60.0), (0, 1, 30.0, 7.0), (1, 4, 0.0, 60.0)]
    if east_arm:
        streets.append((1, 5, 90.0, 60.0))
    if second_link:
        streets.append((0, 1, 50.0, 9.0))
    specs = [
        _EdgeSpec(f"s{i}", a, b, i, 0, 1, False, i, True, True)
        for i, (a, b, _, _) in enumerate(streets)
    ]
    geometry: _Geometry = {
        f"s{i}": (length, h, h, []) for i, (_, _, h, length) in enumerate(streets)
    }
    out_of_a = {i: h for i, (_, _, h, _) in enumerate(streets)}
    return specs, geometry, out_of_a, dict(out_of_a)


@pytest.mark.parametrize(
    ("link_m", "second_link", "east_arm", "expected_deg"),
    [
        (12.0, False, False, 30.0),  # node 1 only breaks the street: no pair
        (12.0, True, False, 30.0),
        (12.0, True, True, 30.0),  # two streets join the pair: a knot of its own
        (None, False, True, 30.0),
        (6.0, False, True, 30.0),  # the link is longer than that
        (12.0, False, True, 0.0),
    ],
)
def test_the_street_through_a_pair_only_between_two_junctions_joined_once(
    link_m: float | None, second_link: bool, east_arm: bool, expected_deg: float
) -> None:
    specs, geometry, out_of_a, into_b = _pair(second_link=second_link, east_arm=east_arm)
    _through_short_links(specs, geometry, out_of_a, into_b, BuildParams(link_through_m=link_m))
    assert out_of_a[2] == pytest.approx(expected_deg, abs=1e-6)
    assert into_b[2] == pytest.approx(expected_deg, abs=1e-6)
