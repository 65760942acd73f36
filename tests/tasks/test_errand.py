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


def test_tasks_check_proves_an_errand_with_its_tour_not_one_walk_to_the_last_place(
    errand_suite: Path, built_city: Path
) -> None:
    """Found on a West Oakland twin: ``tasks check`` rejected freshly generated errands ("goal
    unreachable") because it walked from the start to the last place without ever turning
    round, while the tour (and the oracle agent) turn round to reach a place behind."""
    from city360.streets import StreetGraph
    from city360.tasks.check import check_tasks
    from city360.tasks.suite import load_suite
    from city360.tasks.tour import oracle_tour
    from city360.tasks.walk import oracle_walk

    graph = StreetGraph.from_city(built_city)
    task = load_suite(errand_suite).tasks[0]
    assert isinstance(task, ErrandTask)
    # the longest street with a twin: start near its end, two places behind the start
    seg = max(
        (s for s in graph.segments.values() if graph.turned_round(s.id, 1.0)),
        key=lambda s: s.length_m,
    )
    assert seg.length_m > 38.0
    start_offset = seg.length_m - 2.0

    def stop_at(offset: float, name: str) -> dict[str, object]:
        x, y = seg.position(offset)
        goal = task.truth.goal.model_copy(update={"x_m": float(x), "y_m": float(y)})
        return {"name": name, "landmark_id": name, "goal": goal}

    stops = [stop_at(start_offset - 13.0, task.told.places[0]),
             stop_at(start_offset - 33.0, task.told.places[1])]  # fmt: skip
    truth = task.truth.model_validate(
        {**task.truth.model_dump(), "waypoints": stops, "goal": stops[-1]["goal"]}
    )
    told = task.told.model_copy(update={"places": [s["name"] for s in stops]})
    start = task.start.model_copy(update={"segment": seg.id, "offset_m": start_offset})
    goals = [(s.goal.x_m, s.goal.y_m) for s in truth.waypoints]
    tour = oracle_tour(graph, (seg.id, start_offset), goals, 10.0, step_limit=99)
    assert tour.reachable
    assert tour.turns >= 1
    behind = task.model_copy(
        update={"start": start, "truth": truth, "told": told, "step_limit": tour.steps}
    )
    straight = oracle_walk(
        graph, (seg.id, start_offset), goals[-1], 10.0, step_limit=int(tour.steps or 0)
    )
    assert not straight.reachable  # the old check's verdict
    report = check_tasks([behind], graph)
    assert report.ok, report.issues
    assert report.oracle_steps[behind.id] == tour.steps
    tight = behind.model_copy(update={"step_limit": int(tour.steps or 0) - 1})
    (issue,) = check_tasks([tight], graph).issues
    assert issue.field.startswith("truth.waypoints")


def test_tasks_check_plans_each_errand_tour_once(
    errand_suite: Path, built_city: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tasks check`` proves an errand with its tour (the family's plan) and then checks the
    same tour names every place: one tour per task, not two."""
    import city360.tasks.tour as tour_module
    from city360.streets import StreetGraph
    from city360.tasks.check import check_tasks
    from city360.tasks.suite import load_suite

    calls: list[str] = []
    real_tour = tour_module.oracle_tour

    def counting_tour(*args: object, **kwargs: object) -> object:
        calls.append("tour")
        return real_tour(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(tour_module, "oracle_tour", counting_tour)
    graph = StreetGraph.from_city(built_city)
    tasks = load_suite(errand_suite).tasks[:3]
    report = check_tasks(tasks, graph)
    assert report.ok, report.issues
    assert len(calls) == len(tasks)
    longer = [t.model_copy(update={"step_limit": t.step_limit + 1}) for t in tasks]
    check_tasks(longer, graph)  # other inputs: planned again
    assert len(calls) == 2 * len(tasks)
