"""Under ``--protocol reference`` every validator case that follows from the reference's code
scores what the reference scores (GitHub 360MM-Team/360CityArena:
python/src/cityarena/tasks/validators.py, runner/agent_server.py); the default protocol differs
exactly where the README's "default vs reference" table says."""

from __future__ import annotations

import pytest

from city360.errors import ConfigError
from city360.eval.metrics import ScoringContext, expected_answer, score_answer
from city360.eval.protocols import (
    DEFAULT_PROTOCOL,
    REFERENCE_PROTOCOL,
    get_protocol,
    protocol_differences,
)
from city360.eval.stopping import ReferenceStopMonitor, StopConfig, StopReason
from tests.eval.scoring_tasks import scoring_task

REFERENCE = ScoringContext(REFERENCE_PROTOCOL.scoring)
DEFAULT = ScoringContext(DEFAULT_PROTOCOL.scoring)


_task = scoring_task


# Localization: validate_localization_grid_answer. The truth cell (3, 4) is x:2 y:3 counted
# from 0, the reference's numbering on its grid map and in the answer.
GRID_CASES = [
    ("x:2 y:3", 1.0, 0.0),
    ("X:2 Y:3", 1.0, 0.0),  # lower-cased before matching
    ("x: 2   y: 3", 1.0, 0.0),
    ("x:2\ny:3", 1.0, 0.0),  # \s+ takes a newline
    ("I am at x:2 y:3.", 1.0, 0.0),  # searched anywhere
    ("x:02 y:03", 1.0, 0.0),
    ("x:2 y:3 or x:0 y:0", 1.0, 0.0),  # the first match counts
    ("x:2,y:3", 0.0, 0.0),  # needs whitespace before y
    ("x:2, y:3", 0.0, 0.0),
    ("x=2 y=3", 0.0, 0.0),
    ("x:3 y:4", 0.0, 1.0),  # the same cell counted from 1: ours, not the reference's
    ("x:1 y:3", 0.0, 0.0),
    ("", 0.0, 0.0),
    ("cell C4", 0.0, 0.0),
]


@pytest.mark.parametrize(("answer", "reference", "default"), GRID_CASES)
def test_grid_cells(answer: str, reference: float, default: float) -> None:
    task = _task("exact_match", cell=(3, 4))
    assert score_answer(task, answer, None, REFERENCE).score == reference
    assert score_answer(task, answer, None, DEFAULT).score == default


def test_expected_cell_is_written_in_the_protocols_numbering() -> None:
    task = _task("exact_match", cell=(3, 4))
    assert expected_answer(task, REFERENCE_PROTOCOL.scoring) == "x:2 y:3"
    assert expected_answer(task, DEFAULT_PROTOCOL.scoring) == "x:3 y:4"


# Navigation: validate_location_answer, epsilon 20 (MapNavigation) or 10, `distance < epsilon`.
COORDINATE_CASES = [
    (10.0, 9.99, 1.0, 1.0),
    (10.0, 10.0, 0.0, 1.0),  # the reference is strict; the default inclusive
    (10.0, 10.01, 0.0, 0.0),
    (20.0, 19.999, 1.0, 1.0),
    (20.0, 20.0, 0.0, 1.0),
    (20.0, 0.0, 1.0, 1.0),
    (10.0, None, 0.0, 0.0),  # no position: fails
]


@pytest.mark.parametrize(("threshold", "distance", "reference", "default"), COORDINATE_CASES)
def test_coordinates(
    threshold: float, distance: float | None, reference: float, default: float
) -> None:
    task = _task("coordinate_match", threshold_m=threshold)
    assert score_answer(task, "", distance, REFERENCE).score == reference
    assert score_answer(task, "", distance, DEFAULT).score == default


# Counting: validate_counting_answer. The whole stripped answer must be a finite Decimal; MRA
# over θ = 0.50 ... 0.95 with a strict inequality; is_correct = exact equality.
COUNT_CASES = [
    ("10", 10, 1.0, True, 1.0),
    ("8", 10, 0.6, False, 0.6),  # the reference's own test
    ("eight", 10, 0.0, False, 0.6),  # its own test: no number words (ours reads them)
    ("11", 10, 0.8, False, 0.8),
    ("9.5", 10, 0.9, False, 0.9),  # 5 % off fails θ = 0.95 (strict)
    ("14", 10, 0.2, False, 0.2),
    ("15", 10, 0.0, False, 0.0),
    ("-10", 10, 0.0, False, 0.0),
    ("10.0", 10, 1.0, True, 1.0),
    (" 10 ", 10, 1.0, True, 1.0),
    ("+10", 10, 1.0, True, 1.0),
    ("1e1", 10, 1.0, True, 0.0),  # Decimal reads exponents; our first-number reader sees 1
    ("1_0", 10, 1.0, True, 0.0),  # Decimal reads digit separators
    ("There are 10.", 10, 0.0, False, 1.0),
    ("There are ten.", 10, 0.0, False, 1.0),
    ("3 or 4", 3, 0.0, False, 0.0),  # ours reads no count from a hedge either (was 3)
    ("NaN", 10, 0.0, False, 0.0),
    ("Infinity", 10, 0.0, False, 0.0),
    ("", 10, 0.0, False, 0.0),
    ("0", 0, 1.0, True, 1.0),  # a true 0 needs an exact 0
    ("0.0", 0, 1.0, True, 1.0),
    ("1", 0, 0.0, False, 0.0),
    ("none", 0, 0.0, False, 1.0),
]


@pytest.mark.parametrize(("answer", "truth", "reference", "correct", "default"), COUNT_CASES)
def test_counts(answer: str, truth: int, reference: float, correct: bool, default: float) -> None:
    task = _task("count_mra", count=truth)
    verdict = score_answer(task, answer, None, REFERENCE)
    assert verdict.score == pytest.approx(reference)
    assert verdict.correct is correct
    assert score_answer(task, answer, None, DEFAULT).score == pytest.approx(default)


# Relational: validate_with_llm. The judge's verdict decides; the offline fallback (ours, for
# runs without a judge) is conservative in both protocols.
@pytest.mark.parametrize(
    ("answer", "score"),
    [
        ("Agebaka", 1.0),
        ("agebaka.", 1.0),
        ("The store is Agebaka", 1.0),
        ("Not Agebaka", 0.0),
        ("It is not Agebaka", 0.0),
        ("It isn't Agebaka", 0.0),
        ("Agebaka or Kin no Kura", 0.0),
        ("Agebaka is next to Kin no Kura", 0.0),
        ("Kin no Kura", 0.0),
        ("", 0.0),
    ],
)
def test_offline_names_are_conservative(answer: str, score: float) -> None:
    task = _task("fuzzy_match", answer="Agebaka")
    for context in (REFERENCE, DEFAULT):
        verdict = score_answer(task, answer, None, context)
        assert (verdict.score, verdict.method) == (score, "offline-similarity")


def test_a_negation_word_inside_the_name_is_kept() -> None:
    task = _task("fuzzy_match", answer="Kin no Kura")
    assert score_answer(task, "Kin no Kura", None, REFERENCE).score == 1.0


def test_the_judge_decides_when_there_is_one() -> None:
    calls: list[tuple[str, str, str]] = []

    class Judge:
        name = "llm-judge:test:model"

        def __call__(self, question: str, answer: str, expected: str) -> bool:
            calls.append((question, answer, expected))
            return answer == "Agebaka shop"

    task = _task("fuzzy_match", answer="Agebaka")
    context = ScoringContext(REFERENCE_PROTOCOL.scoring, Judge())
    verdict = score_answer(task, "Agebaka shop", None, context)
    assert (verdict.score, verdict.method) == (1.0, "llm-judge:test:model")
    assert score_answer(task, "Not Agebaka", None, context).score == 0.0
    assert calls[0] == ("What is left of it?", "Agebaka shop", "Agebaka")


# Stop rules: AgentServer.early_stopping and _handle_request.
def _monitor(**kwargs: object) -> ReferenceStopMonitor:
    return ReferenceStopMonitor(StopConfig(**kwargs))  # type: ignore[arg-type]


def test_reference_step_limit_counts_successful_decisions_and_lets_answer_50_through() -> None:
    monitor = _monitor(step_limit=50)
    for k in range(49):
        assert monitor.before("A" if k % 2 else "D", 0, 0, None) is None
    for _ in range(10):  # unusable replies are not steps
        assert monitor.before(None, 0, 0, None) is None
    assert (monitor.steps, monitor.requests) == (49, 59)
    answering = _monitor(step_limit=50)
    for k in range(49):
        answering.before("A" if k % 2 else "D", 0, 0, None)
    assert answering.before("ANSWER", 0, 0, None) is None  # its test_answer_on_step_50
    assert monitor.before("W", 0, 0, None) is StopReason.STEP_LIMIT  # test_nonanswer_on_step_50


def test_reference_stagnation_fires_on_the_21st_identical_decision() -> None:
    monitor = _monitor()
    for _ in range(20):
        assert monitor.before("D", 5.0, 5.0, None) is None
    assert monitor.before("D", 5.0, 5.0, None) is StopReason.STAGNATION
    broken = _monitor()
    for _ in range(15):
        broken.before("D", 5.0, 5.0, None)
    broken.before(None, 5.0, 5.0, None)  # an unusable reply resets the count
    for _ in range(20):
        assert broken.before("D", 5.0, 5.0, None) is None
    moving = _monitor()
    for k in range(30):  # moving 0.05 m or more each time is not standing still
        assert moving.before("W", 0.05 * k, 0.0, None) is None


def test_reference_away_from_goal_resets_on_a_rotation_and_uses_a_margin() -> None:
    monitor = _monitor(away_from_goal=True, away_steps=5)
    distances = [100.0, 101.0, 102.0, 103.0, 104.0]
    for distance in distances:
        assert monitor.before("W", 0, distance, distance) is None
    assert monitor.before("W", 0, 105.0, 105.0) is StopReason.AWAY_FROM_GOAL
    rotating = _monitor(away_from_goal=True, away_steps=5)
    for distance in [100.0, 101.0, 102.0, 103.0, 104.0]:
        rotating.before("W", 0, distance, distance)
    assert rotating.before("D", 0, 104.0, 104.0) is None  # a rotation resets the streak
    for distance in [105.0, 106.0, 107.0, 108.0]:
        assert rotating.before("W", 0, distance, distance) is None
    margin = _monitor(away_from_goal=True, away_steps=1)
    margin.before("W", 0, 0, 10.0)
    assert margin.before("W", 0, 0, 10.05) is None  # not more than 0.05 m further
    assert margin.before("W", 0, 0, 10.2) is StopReason.AWAY_FROM_GOAL


def test_default_protocol_keeps_city360_rules() -> None:
    assert get_protocol("default") is DEFAULT_PROTOCOL
    assert (DEFAULT_PROTOCOL.fallback, REFERENCE_PROTOCOL.fallback) == ("S", "nothing")
    assert (DEFAULT_PROTOCOL.max_output_tokens, REFERENCE_PROTOCOL.max_output_tokens) == (
        1024,
        8192,
    )
    for protocol in (DEFAULT_PROTOCOL, REFERENCE_PROTOCOL):
        assert not protocol.shows_map("Localization")
        assert protocol.shows_map("MapNavigation")
    with pytest.raises(ConfigError, match=r"unknown protocol 'refrence'.*Did you mean 'reference'"):
        get_protocol("refrence")


def test_readme_table_lists_every_difference() -> None:
    from pathlib import Path

    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("default vs reference") :]
    for rule, _, _ in protocol_differences(DEFAULT_PROTOCOL, REFERENCE_PROTOCOL):
        assert f"`{rule}`" in table, rule


# End to end on the built suite: every family under both protocols.
NAVIGATION = ("LandmarkSearchText", "LandmarkSearchImage", "MapNavigation", "VLN")


@pytest.fixture(scope="module")
def oracle_runs(built_city, built_suite, tmp_path_factory):
    from city360.eval.runner import AgentSpec, EvalConfig, run_eval

    out = tmp_path_factory.mktemp("protocol-runs")
    return {
        name: run_eval(
            EvalConfig(
                city_dir=built_city,
                suite_dir=built_suite,
                agent=AgentSpec(kind="oracle"),
                output_root=out,
                run_id=f"oracle-{name}",
                protocol=name,
            )
        )
        for name in ("default", "reference")
    }


@pytest.mark.parametrize("name", ["default", "reference"])
def test_the_oracle_solves_the_suite_under_each_protocol(oracle_runs, name: str) -> None:
    import json

    from city360.eval.results import read_results

    outcome = oracle_runs[name]
    assert outcome.status == "complete"
    failures = [(r.task_id, r.status, r.message) for r in outcome.results if not r.scored_success]
    assert failures == []
    metadata = json.loads((outcome.run_dir / "run_metadata.json").read_text(encoding="utf-8"))
    assert metadata["protocol"] == get_protocol(name).as_metadata()
    rows = read_results(outcome.run_dir / "results.csv")
    assert {r.protocol for r in rows} == {name}
    header = (outcome.run_dir / "results.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("timestamp,run_id,experiment_id,task_id,task_type,")


@pytest.mark.parametrize("name", ["default", "reference"])
def test_the_oracle_scores_spl_one_on_every_task_it_solves(oracle_runs, name: str) -> None:
    navigation = [r for r in oracle_runs[name].results if r.task_type in NAVIGATION]
    assert navigation
    assert [(r.task_id, r.spl) for r in navigation if r.spl != 1.0] == []


def test_reference_answers_read_as_the_reference_writes_them(oracle_runs) -> None:
    import csv

    path = oracle_runs["reference"].run_dir / "results.csv"
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    by_type = {row["task_type"]: row for row in rows}
    assert set(by_type) == {
        "Localization",
        "LandmarkSearchWithLanguage",
        "LandmarkSearchWithImage",
        "MapNavigation",
        "LanguageGuidedNavigation",
        "Counting",
        "RelationalSpatialReasoning",
        "Errand",  # city360's own family: no reference name
    }
    assert {row["status"] for row in rows} == {"ANSWER"}
    assert by_type["Counting"]["evaluation_metric"] == "mean_relative_accuracy"
    cell = by_type["Localization"]["user_answer"]
    assert cell == by_type["Localization"]["expected"]
    assert min(int(part[2:]) for part in cell.split()) >= 0  # counted from 0
    vln = by_type["LanguageGuidedNavigation"]
    assert vln["expected"].startswith("x:")
    assert len(vln["user_answer"].split()) == 2
    assert float(vln["distance_to_goal"]) < float(vln["validation_threshold"])
    assert by_type["RelationalSpatialReasoning"]["evaluation_method"] == "offline-similarity"


def test_the_lmm_reply_budget_is_the_protocols_unless_the_user_sets_one() -> None:
    from city360.eval.runner import _with_protocol_limits
    from city360.eval.specs import AgentSpec

    lmm = AgentSpec(kind="lmm", provider="openai", model="m")
    assert _with_protocol_limits(lmm, REFERENCE_PROTOCOL).options == {
        "max_output_tokens": 8192,
        "reply_reader": "reference",
    }
    assert _with_protocol_limits(lmm, DEFAULT_PROTOCOL).options == {
        "max_output_tokens": 1024,
        "reply_reader": "tolerant",
    }
    mine = AgentSpec(kind="lmm", options={"max_output_tokens": 300, "reply_reader": "tolerant"})
    assert _with_protocol_limits(mine, REFERENCE_PROTOCOL).options == {
        "max_output_tokens": 300,
        "reply_reader": "tolerant",
    }
    assert _with_protocol_limits(AgentSpec(kind="oracle"), REFERENCE_PROTOCOL).options == {}
