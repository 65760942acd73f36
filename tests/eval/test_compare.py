"""``city360 report RUN RUN ...``: runs side by side on one page (issue 19)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from city360.errors import InputFileError
from city360.eval.compare import load_run, write_comparison
from city360.eval.results import EpisodeResult, ResultsWriter


def _run(
    root: Path,
    run_id: str,
    *,
    success: bool,
    env_options: dict[str, object],
    condition: str = "day",
) -> Path:
    folder = root / run_id
    with ResultsWriter(folder / "results.csv") as writer:
        writer.append(
            EpisodeResult(
                task_id="map-001",
                task_type="MapNavigation",
                difficulty="Easy",
                status="answered",
                scored_success=success,
                completed_by_answer=True,
                evaluation_metric="coordinate_match",
                evaluation_score=float(success),
                spl=1.0 if success else 0.0,
                condition=condition,
                input_tokens=100,
                output_tokens=20,
            )
        )
        writer.append(
            EpisodeResult(
                task_id="err-001",
                task_type="Errand",
                difficulty="Hard",
                status="answered",
                scored_success=False,
                completed_by_answer=True,
                evaluation_metric="errand_match",
                spl=0.0,
                condition=condition,
                extra={"checkpoint_coverage": 0.25 if not success else 0.75},
            )
        )
    meta = {
        "run_id": run_id,
        "suite_hash": "abc",
        "agent": {"kind": "lmm", "model": "m1", "options": {}},
        "config": {"env_options": {**env_options, "condition": condition}},
        "condition": condition,
    }
    (folder / "run_metadata.json").write_text(json.dumps(meta), encoding="utf-8")
    return folder


def test_three_runs_on_one_page(tmp_path: Path) -> None:
    runs = [
        _run(tmp_path, "full", success=True, env_options={"map": True}),
        _run(tmp_path, "nomap", success=False, env_options={"map": False}),
        _run(tmp_path, "guided", success=True, env_options={"map": True, "route_guidance": True}),
    ]
    page = write_comparison(runs, tmp_path / "compare").read_text(encoding="utf-8")
    assert "3 runs compared" in page
    assert "lmm:m1 (no-map)" in page
    assert "lmm:m1 (guidance)" in page
    for measure in ("success rate", "SPL", "checkpoint coverage", "tokens per episode"):
        assert f"<h2>{measure}</h2>" in page
    assert "<td>0.25 <small>(1)</small></td>" in page  # Errand coverage of the no-map run
    assert "different suites" not in page
    assert "conditions side by side" not in page  # all three ran in daylight
    plot = tmp_path / "compare" / "plots.png"
    assert "<img src='plots.png'" in page
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_plot_draws_each_runs_bars_per_family(tmp_path: Path) -> None:
    import cv2

    from city360.eval.compare import load_run, write_plots

    good = load_run(_run(tmp_path, "good", success=True, env_options={"map": True}))
    bad = load_run(_run(tmp_path, "bad", success=False, env_options={"map": True}))
    both = write_plots([good, bad], tmp_path / "both.png")
    only_bad = write_plots([bad], tmp_path / "bad.png")
    assert both is not None
    assert only_bad is not None
    # a run that succeeds draws bars where the failing one draws none: more ink
    ink_both = int((cv2.imread(str(both), cv2.IMREAD_GRAYSCALE) < 200).sum())
    ink_bad = int((cv2.imread(str(only_bad), cv2.IMREAD_GRAYSCALE) < 200).sum())
    assert ink_both > ink_bad


def test_conditions_side_by_side_pool_runs_of_one_setup(tmp_path: Path) -> None:
    runs = [
        _run(tmp_path, "day-a", success=True, env_options={"map": True}),
        _run(tmp_path, "night-a", success=False, env_options={"map": True}, condition="night"),
        _run(tmp_path, "night-b", success=True, env_options={"map": True}, condition="night"),
    ]
    page = write_comparison(runs, tmp_path / "compare").read_text(encoding="utf-8")
    section = page.split("<h2>conditions side by side</h2>")[1].split("<h2>")[0]
    success = section.split("<h3>SPL</h3>")[0]
    # MapNavigation: day 1 of 1, night 1 of 2 (the two night runs pooled into one column)
    cells = "<td>1.00 <small>(1)</small></td><td>0.50 <small>(2)</small></td>"
    assert f"<td>MapNavigation</td>{cells}" in success
    assert section.count("<th>") == 2 * 3  # family + day + night, in both tables
    assert "lmm:m1 (full, night)" in page


def test_a_folder_without_results_says_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="pass a run folder written by `city360 eval`"):
        load_run(tmp_path)
