from __future__ import annotations

import pytest

from city360.errors import ConfigError
from city360.eval.metrics import (
    check_metric_name,
    coordinate_match,
    count_mean_relative_accuracy,
    exact_match_grid,
    fuzzy_match,
    parse_count,
    parse_grid_cell,
)


@pytest.mark.parametrize(
    ("answer", "cell"),
    [("x:2 y:3", (2, 3)), ("X: 2, Y: 3", (2, 3)), ("I think x=4 y=1.", (4, 1)), ("cell B3", None)],
)
def test_parse_grid_cell(answer: str, cell: tuple[int, int] | None) -> None:
    assert parse_grid_cell(answer) == cell


def test_exact_match_grid() -> None:
    assert exact_match_grid("x:2 y:3", (2, 3)).correct
    assert not exact_match_grid("x:3 y:2", (2, 3)).correct
    assert exact_match_grid("no idea", (2, 3)).score == 0.0


def test_coordinate_match_threshold_is_inclusive() -> None:
    assert coordinate_match(10.0, 10.0).correct
    assert not coordinate_match(10.01, 10.0).correct
    assert not coordinate_match(float("inf"), 20.0).correct
    with pytest.raises(ConfigError, match=r"`threshold_m` must be > 0, got 0"):
        coordinate_match(1.0, 0)


@pytest.mark.parametrize(
    ("answer", "expected", "score"),
    [
        ("10", 10, 1.0),
        ("11", 10, 0.8),  # 10 % off: passes θ = 0.50 ... 0.85 (strictly), fails 0.90, 0.95
        ("15", 10, 0.0),  # 50 % off: fails even θ = 0.50 because the inequality is strict
        ("14", 10, 0.2),  # 40 % off: passes θ = 0.50, 0.55
        ("There are seven trees.", 7, 1.0),
        ("0", 0, 1.0),
        ("1", 0, 0.0),
        ("many", 5, 0.0),
    ],
)
def test_count_mean_relative_accuracy(answer: str, expected: int, score: float) -> None:
    result = count_mean_relative_accuracy(answer, expected)
    assert result.score == pytest.approx(score)
    assert result.correct == (score == 1.0)


def test_parse_count_prefers_digits() -> None:
    assert parse_count("I counted 3 (three)") == 3.0
    assert parse_count("none") == 0.0


@pytest.mark.parametrize(
    "answer", ["3 or 4", "3-4", "3 – 4", "three or four", "between 2 and 5", "about 3/4"]
)
def test_parse_count_reads_no_count_from_a_hedged_answer(answer: str) -> None:
    assert parse_count(answer) is None


@pytest.mark.parametrize(
    ("answer", "count"),
    [("4", 4.0), ("There are 4 trees.", 4.0), ("4 (four)", 4.0), ("no benches", 0.0)],
)
def test_parse_count_still_reads_one_count(answer: str, count: float) -> None:
    assert parse_count(answer) == count


def test_fuzzy_match_offline_fallback_is_labelled() -> None:
    result = fuzzy_match("It is Café Ursula.", "Cafe Ursula")
    assert result.method == "offline-similarity"
    assert fuzzy_match("Kahvila Ursula", "Kahvila Ursula").correct
    assert fuzzy_match("the shop is Kahvila Ursula", "Kahvila Ursula").correct
    assert not fuzzy_match("Stockmann", "Kahvila Ursula").correct
    assert fuzzy_match("ファミリーマート", "ファミリーマート").correct


def test_fuzzy_match_uses_judge_when_given() -> None:
    calls: list[tuple[str, str, str]] = []

    def judge(question: str, answer: str, expected: str) -> bool:
        calls.append((question, answer, expected))
        return True

    result = fuzzy_match("the red one", "Stockmann", question="Which shop?", judge=judge)
    assert result.correct
    assert calls == [("Which shop?", "the red one", "Stockmann")]
    assert result.method == "llm-judge"


def test_unknown_metric_name_suggests() -> None:
    with pytest.raises(ConfigError, match="Did you mean 'exact_match'"):
        check_metric_name("exact_mach")
