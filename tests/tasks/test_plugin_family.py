"""Done when: a family registered from inside the test suite, without touching city360/, runs
generate -> check -> eval -> results.csv like a built-in one (issue 15)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from city360.tasks.families import FamilySpec, get_family, register_family, unregister_family
from tests.tasks.nearest_sign import NAME, SPEC, NearestSignTask


@pytest.fixture
def nearest_sign() -> Iterator[FamilySpec]:
    spec = register_family(SPEC)
    try:
        yield spec
    finally:
        unregister_family(NAME)


def test_a_plugin_family_runs_generate_check_eval_results(
    nearest_sign: FamilySpec, built_city: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
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

    # worker processes start fresh: they find the family through CITY360_PLUGINS
    monkeypatch.setenv("CITY360_PLUGINS", "tests.tasks.nearest_sign_plugin")
    parallel = run_eval(
        EvalConfig(
            city_dir=built_city,
            suite_dir=folder,
            agent=AgentSpec(kind="oracle"),
            run_id="plugin-2-workers",
            output_root=tmp_path / "runs",
            workers=2,
        )
    )
    assert sorted(r.task_id for r in parallel.results) == sorted(r.task_id for r in rows)
    assert all(r.scored_success and r.status == "answered" for r in parallel.results)


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


def test_a_plugin_module_that_cannot_be_imported_names_it_and_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import city360.plugins as plugins
    from city360.errors import ConfigError

    monkeypatch.setattr(plugins, "_started", False)
    monkeypatch.setattr(plugins, "_loaded", [])
    monkeypatch.setenv("CITY360_PLUGINS", " tests.tasks.nearest_sign_plugin , mylab.nowhere ")
    assert plugins.plugin_modules() == ["tests.tasks.nearest_sign_plugin", "mylab.nowhere"]
    try:
        with pytest.raises(
            ConfigError,
            match=r"plugin module 'mylab.nowhere' named in \$CITY360_PLUGINS cannot be imported "
            r"\(ModuleNotFoundError: No module named 'mylab'\); install it, put its folder on "
            r"PYTHONPATH, or remove it from \$CITY360_PLUGINS",
        ):
            plugins.load_plugins()
        assert get_family(NAME).model is NearestSignTask  # the first module did register
    finally:
        unregister_family(NAME)
