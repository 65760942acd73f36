from __future__ import annotations

import pytest

from city360.tasks.difficulty import (
    CountFeatures,
    LocalizationFeatures,
    RelationalFeatures,
    RouteFeatures,
    count_difficulty,
    difficulty_statistics,
    localization_difficulty,
    relational_difficulty,
    route_difficulty,
)
from city360.tasks.schema import Difficulty
from tests.tasks.helpers import as_task, vln_task

E, M, H = Difficulty.EASY, Difficulty.MEDIUM, Difficulty.HARD


@pytest.mark.parametrize(
    ("length_m", "decisions", "expected"),
    [(120.0, 1, E), (121.0, 1, M), (80.0, 2, M), (240.0, 3, M), (241.0, 0, H), (60.0, 4, H)],
)
def test_route_rules(length_m: float, decisions: int, expected: Difficulty) -> None:
    assert route_difficulty(RouteFeatures(length_m, decisions, 0, 10)) is expected


@pytest.mark.parametrize(
    ("landmark_m", "margin_m", "expected"),
    [(25.0, 15.0, E), (25.0, 5.0, M), (30.0, 15.0, M), (51.0, 15.0, H), (10.0, 0.0, H)],
)
def test_localization_rules(landmark_m: float, margin_m: float, expected: Difficulty) -> None:
    assert localization_difficulty(LocalizationFeatures(landmark_m, margin_m)) is expected


@pytest.mark.parametrize(
    ("count", "stretch_m", "expected"),
    [(0, 30.0, E), (2, 80.0, E), (3, 50.0, M), (2, 81.0, M), (6, 20.0, H), (1, 161.0, H)],
)
def test_count_rules(count: int, stretch_m: float, expected: Difficulty) -> None:
    assert count_difficulty(CountFeatures(count, stretch_m)) is expected


@pytest.mark.parametrize(("anchor_m", "expected"), [(30.0, E), (31.0, M), (100.0, M), (101.0, H)])
def test_relational_rules(anchor_m: float, expected: Difficulty) -> None:
    assert relational_difficulty(RelationalFeatures(anchor_m, "left_of")) is expected


def test_statistics_group_and_average() -> None:
    tasks = [
        as_task(vln_task(id="a", difficulty="Easy", meta={"length_m": 50.0, "steps": 6})),
        as_task(vln_task(id="b", difficulty="Easy", meta={"length_m": 70.0, "steps": 8})),
        as_task(vln_task(id="c", difficulty="Hard", meta={"length_m": 300.0, "steps": 34})),
    ]
    rows = difficulty_statistics(tasks)
    assert rows == [
        {"family": "VLN", "difficulty": "Easy", "n": 2, "length_m": 60.0, "steps": 7.0},
        {"family": "VLN", "difficulty": "Hard", "n": 1, "length_m": 300.0, "steps": 34.0},
    ]


def test_reference_profile_splits_routes_between_the_reference_means() -> None:
    from city360.tasks.difficulty import RouteFeatures, get_profile

    ref = get_profile("reference")
    assert ref.route(RouteFeatures(185.0, 5, 0, 20)) is Difficulty.EASY
    assert ref.route(RouteFeatures(186.0, 0, 0, 20)) is Difficulty.MEDIUM
    assert ref.route(RouteFeatures(298.0, 0, 0, 30)) is Difficulty.HARD
    assert ref.route_distance(Difficulty.HARD, RouteFeatures(340.0, 0, 0, 30)) == 7.0


def test_reference_profile_refuses_zero_counts() -> None:
    from city360.tasks.difficulty import CountFeatures, get_profile

    ref = get_profile("reference")
    assert ref.count(CountFeatures(0, 50.0)) is None
    assert ref.count(CountFeatures(4, 50.0)) is Difficulty.EASY
    assert ref.count(CountFeatures(4, 120.0)) is Difficulty.MEDIUM
    assert ref.count(CountFeatures(7, 50.0)) is Difficulty.HARD


def test_unknown_profile_names_the_known_ones() -> None:
    from city360.errors import ConfigError
    from city360.tasks.difficulty import get_profile

    with pytest.raises(ConfigError, match=r"expected one of default, reference\. Did you mean"):
        get_profile("referance")
