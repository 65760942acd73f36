"""Done when: a family registered from inside the test suite, without touching city360/, runs
generate -> check -> eval -> results.csv like a built-in one (issue 15)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, Literal

import pytest
from pydantic import Field

from city360.tasks.families import FamilySpec, get_family, register_family, unregister_family
from city360.tasks.schema import Metric, MetricName, TaskBase, Told, Truth

NAME = "NearestSign"


class NearestSignTold(Told):
    within_m: int = Field(gt=0, description="the sign is at most this far from the start")


class NearestSignTruth(Truth):
    answer: str = Field(min_length=1)
    poi_id: str

    def expected(self) -> str:
        return self.answer


class NearestSignTask(TaskBase):
    EXPECTED_METRIC: ClassVar[str | None] = MetricName.FUZZY_MATCH
    PROMPT_TEMPLATE: ClassVar[str] = (
        "Look around where you stand. Which place has its sign nearest to you (within "
        "{within_m} m)?"
    )
    ANSWER_FORMAT: ClassVar[str] = "ANSWER with the name of the place, as its sign shows it"
    family: Literal["NearestSign"] = "NearestSign"
    told: NearestSignTold
    truth: NearestSignTruth
    metric: Metric = Metric(name=MetricName.FUZZY_MATCH)


def _nearest(pois: Any, x: float, y: float) -> tuple[Any, float]:
    return min(((p, math.hypot(p.x_m - x, p.y_m - y)) for p in pois), key=lambda pd: pd[1])


def _generate(ctx: Any, source: Any, n: int, report: Any) -> list[TaskBase]:
    """From the city's ground truth: random starts, the POI nearest to each."""
    pois = [p.poi for p in source.placed]
    tasks: list[TaskBase] = []
    for k in range(n * 4):
        seg, offset = ctx.random_start()
        x, y = ctx.graph.position(seg, offset)
        poi, distance = _nearest(pois, x, y)
        if distance > 60.0:
            report.reject(NAME, "no sign near the start")
            continue
        tasks.append(
            NearestSignTask.model_validate(
                {
                    "id": f"near-{len(tasks) + 1:03d}",
                    "difficulty": "Easy",
                    "start": ctx.start_pose(seg, offset),
                    "told": {"within_m": 60},
                    "truth": {"answer": poi.name, "poi_id": poi.id},
                    "step_limit": ctx.step_limit,
                    "meta": {"distance_m": round(distance, 1), "attempt": k},
                }
            )
        )
        if len(tasks) == n:
            break
    return tasks


def _check(task: TaskBase, checker: Any) -> list[Any]:
    from city360.tasks.check import CheckIssue

    if checker.truth is None:
        checker.skip("nearest signs: no ground truth")
        return []
    names = {p.id: p.name for p in checker.truth_pois()}
    truth = task.truth
    if not isinstance(truth, NearestSignTruth) or names.get(truth.poi_id) != truth.answer:
        return [CheckIssue(task.id, "truth.answer", "the answer is not that place's name")]
    return []


@pytest.fixture
def nearest_sign() -> Iterator[FamilySpec]:
    spec = register_family(
        FamilySpec(model=NearestSignTask, short="near", from_truth=_generate, check=_check)
    )
    try:
        yield spec
    finally:
        unregister_family(NAME)


def test_a_plugin_family_runs_generate_check_eval_results(
    nearest_sign: FamilySpec, built_city: Path, tmp_path: Path
) -> None:
    from city360.eval.results import read_results
    from city360.eval.runner import AgentSpec, EvalConfig, run_eval
    from city360.tasks.generate.run import check_suite, generate_suite
    from city360.tasks.suite import load_suite, save_suite
    from tests.tasks.helpers import PlainImages

    suite, report = generate_suite(
        built_city, per_family=3, seed=2, families=[NAME], images=PlainImages()
    )
    assert report.made == {NAME: 3}
    folder = save_suite(suite, tmp_path / "suite")
    stored = json.loads((folder / "suite.json").read_text(encoding="utf-8"))
    assert {t["family"] for t in stored["tasks"]} == {NAME}

    loaded = load_suite(folder)  # the registry parses the plugin's tasks from suite.json
    assert all(isinstance(t, NearestSignTask) for t in loaded.tasks)
    assert loaded.statistics() == {NAME: {"Easy": 3}}
    assert loaded.select(NAME) == loaded.tasks
    view = loaded.tasks[0].agent_view()
    assert "within 60 m" in view.prompt
    assert view.answer_format == nearest_sign.answer_format
    assert loaded.tasks[0].truth.answer not in view.model_dump_json()

    checked = check_suite(loaded, built_city)
    assert checked.ok, checked.issues
    assert checked.checked == 3

    outcome = run_eval(
        EvalConfig(
            city_dir=built_city,
            suite_dir=folder,
            agent=AgentSpec(kind="oracle"),
            run_id="plugin",
            output_root=tmp_path / "runs",
        )
    )
    rows = read_results(outcome.run_dir / "results.csv")
    assert [r.task_type for r in rows] == [NAME] * 3
    assert all(r.scored_success and r.evaluation_metric == "fuzzy_match" for r in rows)
    wrong = run_eval(
        EvalConfig(
            city_dir=built_city,
            suite_dir=folder,
            agent=AgentSpec(
                kind="tests.agents.user_agents:AnswerAtOnce", options={"answer": "Nowhere"}
            ),
            run_id="plugin-wrong",
            output_root=tmp_path / "runs",
        )
    )
    assert not any(r.scored_success for r in wrong.results)


def test_the_plugin_is_gone_after_the_test() -> None:
    from city360.errors import TaskError

    with pytest.raises(TaskError, match="unknown task family 'NearestSign'"):
        get_family(NAME)


def test_an_unregistered_family_in_suite_json_names_the_task_and_field(tmp_path: Path) -> None:
    from city360.errors import TaskError
    from city360.tasks.suite import load_suite
    from tests.tasks.helpers import localization_task

    raw = {**localization_task(), "family": NAME, "id": "near-001"}
    (tmp_path / "suite.json").write_text(
        json.dumps({"name": "s", "city": "c", "tasks": [raw]}), encoding="utf-8"
    )
    with pytest.raises(TaskError, match=r"task 'near-001': field 'family': unknown task family"):
        load_suite(tmp_path)
