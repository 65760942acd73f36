"""The agent registry and users' own agents (``--agent mypkg.mod:MyAgent``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from city360.agents.registry import (
    agent_metadata,
    all_agent_kinds,
    build_agent_from_path,
    get_agent_kind,
    parse_agent_options,
)
from city360.errors import ConfigError
from city360.eval.agent_factory import AGENT_KINDS, preflight_agent
from city360.eval.runner import AgentSpec
from tests.agents.user_agents import AnswerAtOnce

MODULE = "tests.agents.user_agents"


def test_built_in_kinds_are_registered() -> None:
    assert {k.name for k in all_agent_kinds()} >= set(AGENT_KINDS)
    with pytest.raises(ConfigError, match=r"unknown agent 'oracel'.*Did you mean 'oracle'"):
        get_agent_kind("oracel")


def test_agent_options_parse_json_else_text() -> None:
    options = parse_agent_options(["depth=3", "name=plain text", "xs=[1, 2]", "flag=true"])
    assert options == {"depth": 3, "name": "plain text", "xs": [1, 2], "flag": True}
    with pytest.raises(ConfigError, match="must look like KEY=VALUE"):
        parse_agent_options(["depth"])


def test_a_user_class_builds_with_its_options() -> None:
    agent = build_agent_from_path(f"{MODULE}:AnswerAtOnce", {"answer": "x:2 y:3"})
    assert isinstance(agent, AnswerAtOnce)
    assert agent.answer == "x:2 y:3"


def test_a_module_that_does_not_import_names_the_path_the_error_and_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        preflight_agent(AgentSpec(kind="nosuchpkg.agents:Mine"), city_dir=tmp_path)
    text = str(caught.value)
    assert "cannot import the module of agent 'nosuchpkg.agents:Mine'" in text
    assert "No module named 'nosuchpkg'" in text
    assert "PYTHONPATH" in text


def test_a_missing_attribute_suggests_a_close_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"has no attribute 'AnswerAtOnse'.*'AnswerAtOnce'"):
        preflight_agent(AgentSpec(kind=f"{MODULE}:AnswerAtOnse"), city_dir=tmp_path)


def test_a_path_without_a_class_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"must look like 'package\.module:ClassName'"):
        preflight_agent(AgentSpec(kind=f"{MODULE}:"), city_dir=tmp_path)


def test_not_a_class_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a function, not a class"):
        preflight_agent(AgentSpec(kind=f"{MODULE}:not_a_class"), city_dir=tmp_path)


def test_a_class_without_act_breaks_the_protocol(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"does not follow the Agent protocol: it has no act\(\)"):
        preflight_agent(AgentSpec(kind=f"{MODULE}:NoAct"), city_dir=tmp_path)


def test_an_option_the_constructor_rejects_names_its_signature(tmp_path: Path) -> None:
    spec = AgentSpec(kind=f"{MODULE}:Strict", options={"width": 3})
    with pytest.raises(ConfigError) as caught:
        preflight_agent(spec, city_dir=tmp_path)
    text = str(caught.value)
    assert "rejected its options (width)" in text
    assert "unexpected keyword argument 'width'" in text
    assert "takes (*, depth=1)" in text
    with pytest.raises(ConfigError, match="rejected its options"):
        build_agent_from_path(spec.kind, spec.options)


def test_metadata_records_the_path_and_hides_secrets() -> None:
    spec = AgentSpec(
        kind=f"{MODULE}:AnswerAtOnce",
        options={"answer": "x:1 y:1", "openai_key": "abc", "auth_token": "t", "Password": "p"},
    )
    meta = agent_metadata(spec)
    assert meta["path"] == f"{MODULE}:AnswerAtOnce"
    assert meta["options"] == {
        "answer": "x:1 y:1", "openai_key": "***", "auth_token": "***", "Password": "***"
    }  # fmt: skip
    assert agent_metadata(AgentSpec(kind="oracle"))["path"] is None


def test_eval_runs_a_user_agent_in_two_worker_processes(
    built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    from city360.eval.results import read_results
    from city360.eval.runner import EvalConfig, run_eval
    from city360.tasks.suite import load_suite

    suite = load_suite(built_suite)
    tasks = [t for t in suite.tasks if t.family == "Localization"]
    answers = {t.id: t.expected_answer() for t in tasks}
    path = f"{MODULE}:AnswerAtOnce"
    outcome = run_eval(
        EvalConfig(
            city_dir=built_city,
            suite_dir=built_suite,
            agent=AgentSpec(kind=path, options={"answers": answers, "api_key": "sk-secret"}),
            select="Localization",
            workers=2,
            run_id="user-agent",
            output_root=tmp_path,
        )
    )
    assert outcome.status == "complete"
    rows = read_results(outcome.run_dir / "results.csv")
    assert sorted(r.task_id for r in rows) == sorted(answers)
    assert all(r.scored_success and r.agent == path for r in rows)
    metadata = json.loads((outcome.run_dir / "run_metadata.json").read_text(encoding="utf-8"))
    assert metadata["agent"]["path"] == path
    assert metadata["agent"]["options"]["api_key"] == "***"
    assert "sk-secret" not in (outcome.run_dir / "run_metadata.json").read_text(encoding="utf-8")
