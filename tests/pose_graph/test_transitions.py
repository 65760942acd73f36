from __future__ import annotations

import pytest

from city360.pose_graph.transitions import Choice, assign_labels, natural_label, transitions_for


@pytest.mark.parametrize(
    ("turn", "label"), [(0.0, "UP"), (29.0, "UP"), (-30.0, "UP"), (31.0, "RIGHT"), (-95.0, "LEFT")]
)
def test_natural_labels(turn: float, label: str) -> None:
    assert natural_label(turn) == label


def test_plain_crossing_gets_one_of_each() -> None:
    assert assign_labels([-88.0, 3.0, 91.0]) == [("LEFT", 0), ("UP", 0), ("RIGHT", 0)]


def test_two_lefts_are_told_apart() -> None:
    # a bear-left and a hard left with nothing straight on: the bear-left becomes UP
    assert assign_labels([-100.0, -45.0, 90.0]) == [("LEFT", 0), ("UP", 0), ("RIGHT", 0)]


def test_fork_without_straight_on() -> None:
    assert assign_labels([-35.0, 35.0]) == [("LEFT", 0), ("RIGHT", 0)]


def test_more_than_three_choices_rank_the_extra_one() -> None:
    labels = assign_labels([-90.0, -45.0, 0.0, 90.0])
    assert labels == [("LEFT", 0), ("LEFT", 1), ("UP", 0), ("RIGHT", 0)]


def test_two_sharp_rights_never_become_up() -> None:
    assert assign_labels([100.0, 150.0]) == [("RIGHT", 0), ("RIGHT", 1)]


def test_transitions_measure_signed_turns_from_the_end_heading() -> None:
    out = transitions_for(350.0, [Choice("a", 80.0), Choice("b", 260.0), Choice("c", 355.0)])
    by_edge = {t.edge: t for t in out}
    assert by_edge["a"].label == "RIGHT"
    assert by_edge["a"].turn_deg == pytest.approx(90.0)
    assert by_edge["b"].label == "LEFT"
    assert by_edge["b"].turn_deg == pytest.approx(-90.0)
    assert by_edge["c"].label == "UP"
    assert [t.label for t in out] == ["LEFT", "UP", "RIGHT"]


def test_uturn_only_where_nothing_else_is() -> None:
    back = Choice("back", 180.0)
    assert transitions_for(0.0, [Choice("on", 5.0)], uturn=back)[0].edge == "on"
    (only,) = transitions_for(0.0, [], uturn=back)
    assert (only.edge, only.label, only.uturn, only.turn_deg) == ("back", "UP", True, 180.0)
    assert transitions_for(0.0, [], uturn=None) == []
