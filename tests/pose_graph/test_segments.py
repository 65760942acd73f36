"""Grouping segments between the same two nodes into streets (``group_streets``)."""

from __future__ import annotations

from city360.pose_graph.segments import Segment, SegmentParams, group_streets
from tests.pose_graph.walks import polyline_track


def _small_block() -> tuple[list, list[Segment]]:
    """Two junctions 45 m apart joined by a straight street and by a street bent at a
    corner 12 m off the straight one (a small block whose third corner is a bend: the
    Erottaja knot of the fresh Helsinki Bulevardi window, round twenty-nine); one pass each,
    both from node 0 to node 1. The two lines are under ``same_street_m`` apart on average."""
    straight = polyline_track([(0.0, 0.0), (0.0, 45.0)], "straight")
    bent = polyline_track([(0.0, 0.0), (12.0, 22.0), (0.0, 45.0)], "bent")
    tracks = [straight, bent]
    segments = [Segment(i, 0, 1, 0, len(t.xy) - 1) for i, t in enumerate(tracks)]
    return tracks, segments


def test_two_mapped_streets_between_the_same_nodes_stay_two_with_mapped_apart() -> None:
    tracks, segments = _small_block()
    mapped = {0: 19, 1: 20}  # the OSM street each pass walks

    streets, street_of = group_streets(
        tracks,
        segments,
        SegmentParams(mapped_apart=True),
        mapped_street=lambda seg: mapped[seg.track],
    )

    assert len(streets) == 2
    assert street_of[0] != street_of[1]


def test_two_mapped_streets_under_same_street_m_are_one_street_without_mapped_apart() -> None:
    tracks, segments = _small_block()
    mapped = {0: 19, 1: 20}

    streets, _ = group_streets(
        tracks, segments, SegmentParams(), mapped_street=lambda seg: mapped[seg.track]
    )

    assert len(streets) == 1


def test_passes_of_one_mapped_street_stay_one_street_with_mapped_apart() -> None:
    tracks, segments = _small_block()

    streets, _ = group_streets(
        tracks, segments, SegmentParams(mapped_apart=True), mapped_street=lambda seg: 19
    )

    assert len(streets) == 1


def test_an_unmapped_pass_groups_by_its_gap_with_mapped_apart() -> None:
    tracks, segments = _small_block()
    mapped = {0: 19, 1: -1}

    streets, _ = group_streets(
        tracks,
        segments,
        SegmentParams(mapped_apart=True),
        mapped_street=lambda seg: mapped[seg.track],
    )

    assert len(streets) == 1
