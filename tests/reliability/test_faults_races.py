"""Faults and races of round thirteen (branch ``faults``): a full disk while an episode writes its
step log, a suite or city changed under a run, two writers replacing one folder."""

from __future__ import annotations

import csv
import json
import os
import shutil
import threading
from pathlib import Path

import pytest

import city360.tasks.suite as suite_module
import city360.viewer.authoring as authoring
from city360._atomic import atomic_dir
from city360.city import CityDir, file_sha256
from city360.errors import CityFormatError, ConfigError, InputsChangedError, OutputError
from city360.eval.episode import EpisodeWorker
from city360.eval.results import RESULT_COLUMNS, EpisodeResult, ResultsWriter, StepLogWriter
from city360.eval.runner import AgentSpec, EvalConfig, run_eval
from city360.eval.specs import WorkerSpec
from city360.streets import StreetGraph
from city360.tasks.suite import Suite
from city360.viewer.authoring import SuiteEditor, VerifiedTask

DEV_FULL = Path("/dev/full")
"""Linux's always-full device: every write to it fails with ENOSPC."""


@pytest.mark.skipif(not DEV_FULL.exists(), reason="needs /dev/full (Linux)")
def test_a_step_log_on_a_full_disk_fails_once_and_closes_quietly() -> None:
    log = StepLogWriter(DEV_FULL)
    with pytest.raises(OutputError, match=r"cannot write /dev/full: No space left on device; the"):
        log.write({"step": 1, "action": "W"})
    log.close()  # the lines still buffered must not raise a second, raw OSError
    log.close()


@pytest.mark.skipif(not DEV_FULL.exists(), reason="needs /dev/full (Linux)")
def test_results_on_a_full_disk_fail_once_and_close_quietly(tmp_path: Path) -> None:
    writer = ResultsWriter(tmp_path / "results.csv")
    # the disk fills after the header: the writer's file now writes to /dev/full
    writer._handle.close()
    writer._handle = open(DEV_FULL, "w", encoding="utf-8", newline="")  # noqa: SIM115
    writer._writer = csv.DictWriter(writer._handle, fieldnames=RESULT_COLUMNS)
    with pytest.raises(OutputError, match=r"results\.csv: No space left on device; the disk is"):
        writer.append(EpisodeResult("t", "VLN", "Easy", "answered"))
    writer.close()
    writer.close()


# --- a suite or city changed under a run ----------------------------------------------------


def _city_copy(city: Path, into: Path) -> Path:
    """A city whose graph.json and city.json are its own; the rest links to ``city``."""
    into.mkdir()
    for item in city.iterdir():
        if item.name in ("graph.json", "city.json"):
            shutil.copy2(item, into / item.name)
        else:
            (into / item.name).symlink_to(item)
    return into


def _oracle(city: Path, suite: Path, out: Path, **kw: object) -> EvalConfig:
    return EvalConfig(
        city_dir=city,
        suite_dir=suite,
        agent=AgentSpec(kind="oracle"),
        output_root=out,
        **{"select": "loc-001", **kw},  # type: ignore[arg-type]
    )


def test_a_resume_after_the_city_was_rebuilt_is_refused(
    built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    city = _city_copy(built_city, tmp_path / "city")
    run_eval(_oracle(city, built_suite, tmp_path / "out", run_id="r"))
    metadata = json.loads((tmp_path / "out" / "r" / "run_metadata.json").read_text())
    assert metadata["graph_sha256"] == file_sha256(city / "graph.json")
    # a rebuild: the same graph written again, other bytes (a build with other parameters)
    graph = json.loads((city / "graph.json").read_text())
    (city / "graph.json").write_text(json.dumps(graph, indent=1))
    with pytest.raises(
        ConfigError,
        match=r"cannot resume 'r': .*city graph\.json sha256 \w{12} → \w{12} \(the city was "
        r"rebuilt since the run started\)",
    ):
        run_eval(_oracle(city, built_suite, tmp_path / "out", run_id="r", resume=True))


def test_a_suite_saved_while_a_run_starts_is_not_run_under_the_old_hash(
    built_city: Path, built_suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite_dir = tmp_path / "suite"
    shutil.copytree(built_suite, suite_dir)
    real_load = suite_module.load_suite
    reads: list[Path] = []

    def load_then_edit(folder: Path) -> Suite:
        suite = real_load(folder)
        reads.append(Path(folder))
        if len(reads) == 1:  # the run has read it; the viewer saves an edit before the worker
            data = json.loads((suite_dir / "suite.json").read_text())
            data["tasks"] = data["tasks"][1:]  # a task deleted in the viewer
            (suite_dir / "suite.json").write_text(json.dumps(data))
        return suite

    monkeypatch.setattr(suite_module, "load_suite", load_then_edit)
    with pytest.raises(
        InputsChangedError,
        match=r"suite\.json changed while the run was starting \(suite hash \w{12} -> \w{12}\); "
        r"stop editing the suite during a run and start a new run",
    ):
        run_eval(_oracle(built_city, suite_dir, tmp_path / "out", run_id="s", select=None))
    metadata = json.loads((tmp_path / "out" / "s" / "run_metadata.json").read_text())
    assert metadata["status"] == "failed"
    assert not (tmp_path / "out" / "s" / "results.csv").read_text().count("\n") > 1


def test_a_worker_refuses_a_city_rebuilt_after_the_run_recorded_it(
    built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    spec = WorkerSpec(
        city_dir=str(built_city),
        suite_dir=str(built_suite),
        run_dir=str(tmp_path / "run"),
        agent={"kind": "oracle"},
        env_options={"map": False},
        stop={},
        graph_sha256="0" * 64,
    )
    with (
        EpisodeWorker(spec) as worker,
        pytest.raises(
            InputsChangedError,
            match=r"graph\.json changed while the run was starting \(the city was ",
        ),
    ):
        worker.run("loc-001", 0)


# --- two writers of one folder ----------------------------------------------------------------


def test_replacing_a_folder_never_leaves_it_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "suite"
    with atomic_dir(target) as tmp:
        (tmp / "suite.json").write_text("old")
    present: list[bool] = []
    real_replace = os.replace

    def watched(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        real_replace(src, dst)
        present.append((target / "suite.json").is_file())  # what a reader (a viewer) sees

    monkeypatch.setattr(os, "replace", watched)
    with atomic_dir(target, replace=True) as tmp:
        (tmp / "suite.json").write_text("new")
    assert all(present)
    assert (target / "suite.json").read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["suite"]


def _editor(city: Path, suite_dir: Path) -> SuiteEditor:
    manifest = CityDir(city).read_manifest()
    return SuiteEditor(
        suite_dir,
        city,
        graph=StreetGraph.open(city),
        projection=manifest.projection,
        city_name=manifest.name,
        move_m=(2.0, 5.0, 10.0),
    )


def test_two_viewers_saving_one_suite_keep_both_tasks(
    built_city: Path, built_suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite_dir = tmp_path / "suite"
    shutil.copytree(built_suite, suite_dir)
    first, second = _editor(built_city, suite_dir), _editor(built_city, suite_dir)
    template = first.load().tasks[0]

    def verified(task_id: str) -> VerifiedTask:
        return VerifiedTask(template.model_copy(update={"id": task_id}), {}, [])

    real_save = authoring.save_suite
    other: list[threading.Thread] = []

    def save_while_the_other_viewer_saves(suite: Suite, folder: Path, **kw: bool) -> Path:
        if not other:  # the first viewer read the suite; the second saves before it writes
            other.append(threading.Thread(target=second.save, args=(verified("second"),)))
            other[0].start()
            other[0].join(timeout=1.0)  # returns at once without a lock; blocks with one
        return real_save(suite, folder, **kw)

    monkeypatch.setattr(authoring, "save_suite", save_while_the_other_viewer_saves)
    first.save(verified("first"))
    other[0].join(timeout=30)
    ids = {t.id for t in suite_module.load_suite(suite_dir).tasks}
    assert {"first", "second"} <= ids


# --- a build that fails after its work ---------------------------------------------------------


def test_a_build_failing_in_its_statistics_leaves_graph_and_manifest_as_they_were(
    built_city: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from city360.pose_graph import stats
    from city360.pose_graph.build import build_city

    city = _city_copy(built_city, tmp_path / "city")
    before = {name: (city / name).read_bytes() for name in ("graph.json", "city.json")}

    def killed(*args: object, **kwargs: object) -> dict[str, object]:
        raise KeyboardInterrupt("SIGTERM")  # what `kill` raises in a CLI command

    monkeypatch.setattr(stats, "graph_stats", killed)
    with pytest.raises(KeyboardInterrupt):
        build_city(city)  # without OSM: another graph than the one on disk
    assert {name: (city / name).read_bytes() for name in before} == before


def test_eval_on_a_truncated_graph_fails_before_writing_a_run_folder(
    built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    city = _city_copy(built_city, tmp_path / "city")
    graph = (city / "graph.json").read_bytes()
    (city / "graph.json").write_bytes(graph[: len(graph) // 2])
    with pytest.raises(CityFormatError, match=r"graph\.json: not valid JSON .*rebuild it with"):
        run_eval(_oracle(city, built_suite, tmp_path / "out", run_id="t"))
    assert not (tmp_path / "out" / "t").exists()  # the same --run-id works once it is rebuilt
