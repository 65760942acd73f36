"""Errand, the eighth family: generate -> check -> eval; coverage and success (issue 19)."""

from __future__ import annotations

from pathlib import Path

import pytest

from city360.eval.metrics import ScoringContext, errand_match, score_answer
from city360.tasks.families import get_family
from city360.tasks.families.errand import COVERAGE_KEY, NAME, CheckpointCoverage, ErrandTask


def test_errand_is_a_built_in_family() -> None:
    spec = get_family(NAME)
    assert spec.model is ErrandTask
    assert spec.navigation
    assert spec.metric == "errand_match"
    assert spec.progress is not None


def test_errand_match_needs_every_place_in_order() -> None:
    assert errand_match(3.0, 10.0, 1.0).correct
    assert not errand_match(3.0, 10.0, 0.5).correct
    assert not errand_match(30.0, 10.0, 1.0).correct
    missing = errand_match(3.0, 10.0, None)
    assert not missing.correct
    assert missing.message.startswith("no checkpoint coverage recorded")


@pytest.fixture(scope="module")
def errand_suite(built_city: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from city360.tasks.generate.run import check_suite, generate_suite
    from city360.tasks.suite import load_suite, save_suite
    from tests.tasks.helpers import PlainImages

    suite, report = generate_suite(
        built_city, per_family=3, seed=3, families=[NAME], images=PlainImages()
    )
    assert report.made == {NAME: 3}, report
    folder = save_suite(suite, tmp_path_factory.mktemp("errand") / "suite")
    loaded = load_suite(folder)
    checked = check_suite(loaded, built_city)
    assert checked.ok, checked.issues
    return folder


def test_generated_errands_tell_the_places_in_order(errand_suite: Path) -> None:
    from city360.tasks.suite import load_suite

    for task in load_suite(errand_suite).tasks:
        assert isinstance(task, ErrandTask)
        names = [stop.name for stop in task.truth.waypoints]
        assert task.told.places == names
        assert task.truth.goal == task.truth.waypoints[-1].goal
        prompt = task.agent_view().prompt
        assert all(name in prompt for name in names)
        assert f"{task.truth.goal.x_m}" not in prompt
        coverage = CheckpointCoverage(task)
        for stop in task.truth.waypoints[::-1]:  # out of order: only the first counts
            coverage.update(stop.goal.x_m, stop.goal.y_m)
        assert coverage.values()[COVERAGE_KEY] == pytest.approx(1 / len(names))
        far = score_answer(task, "", 0.0, ScoringContext(progress=coverage.values()))
        assert not far.correct


def test_the_oracle_runs_every_errand_and_one_stop_covers_one_place(
    errand_suite: Path, built_city: Path, tmp_path: Path
) -> None:
    from city360.eval.runner import AgentSpec, EvalConfig, run_eval
    from city360.tasks.suite import load_suite

    tasks = {t.id: t for t in load_suite(errand_suite).tasks}
    oracle = run_eval(
        EvalConfig(
            city_dir=built_city,
            suite_dir=errand_suite,
            agent=AgentSpec(kind="oracle"),
            run_id="errand-oracle",
            output_root=tmp_path / "runs",
        )
    )
    assert len(oracle.results) == 3
    for row in oracle.results:
        assert row.scored_success, row.message
        assert row.extra[COVERAGE_KEY] == 1.0
        assert row.spl == 1.0
    first = run_eval(
        EvalConfig(
            city_dir=built_city,
            suite_dir=errand_suite,
            agent=AgentSpec(
                kind="tests.tasks.errand_agents:FirstStopOnly",
                options={"city_dir": str(built_city)},
            ),
            run_id="errand-first",
            output_root=tmp_path / "runs",
        )
    )
    for row in first.results:
        places = len(tasks[row.task_id].truth.waypoints)
        assert row.completed_by_answer
        assert not row.scored_success
        assert row.extra[COVERAGE_KEY] == pytest.approx(1 / places, abs=1e-6)
        assert "checkpoint coverage" in row.message
