"""``city360 eval --condition``: the same suite under a visual condition, recorded and compared."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from city360.errors import ConditionMissingError
from city360.eval.compare import write_comparison
from city360.eval.runner import AgentSpec, EvalConfig, run_eval
from tests.fixtures.built import NIGHT, run_cli

FAMILY = "MapNavigation"
"""The tasks each run here plays (a few navigation episodes of the built suite)."""


def _eval(city: Path, suite: Path, root: Path, run_id: str, *condition: str) -> Path:
    run_cli(
        "eval",
        str(city),
        "--suite",
        str(suite),
        "--agent",
        "oracle",
        "--tasks",
        FAMILY,
        *condition,
        "--output-root",
        str(root),
        "--run-id",
        run_id,
        "--no-report",
    )
    return root / run_id


def _rows(run_dir: Path) -> list[dict[str, str]]:
    with open(run_dir / "results.csv", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def day_and_night_runs(
    night_city: Path, built_suite: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("condition-runs")
    day = _eval(night_city, built_suite, root, "day")
    night = _eval(night_city, built_suite, root, "night", "--condition", NIGHT)
    return day, night


def test_the_same_suite_runs_under_the_condition_and_records_it(
    day_and_night_runs: tuple[Path, Path],
) -> None:
    day, night = day_and_night_runs
    day_rows, night_rows = _rows(day), _rows(night)
    assert [r["task_id"] for r in night_rows] == [r["task_id"] for r in day_rows]
    assert len(night_rows) > 0
    assert {r["condition"] for r in day_rows} == {"day"}
    assert {r["condition"] for r in night_rows} == {NIGHT}
    # the oracle walks the graph: the same episodes, only the pictures differ
    assert [r["scored_success"] for r in night_rows] == [r["scored_success"] for r in day_rows]
    meta = json.loads((night / "run_metadata.json").read_text(encoding="utf-8"))
    assert meta["condition"] == NIGHT
    assert meta["config"]["env_options"]["condition"] == NIGHT
    assert (
        meta["suite_hash"]
        == json.loads((day / "run_metadata.json").read_text(encoding="utf-8"))["suite_hash"]
    )


def test_a_missing_condition_is_refused_with_the_list(
    night_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    config = EvalConfig(
        city_dir=night_city,
        suite_dir=built_suite,
        agent=AgentSpec(kind="oracle"),
        select=FAMILY,
        output_root=tmp_path,
        run_id="fog",
        condition="fog",
    )
    with pytest.raises(
        ConditionMissingError, match=r"has no condition 'fog'; it has day, night\. Add it with"
    ):
        run_eval(config)
    assert not (tmp_path / "fog").exists()  # refused before a run folder was made


def test_the_report_puts_conditions_side_by_side(
    day_and_night_runs: tuple[Path, Path], tmp_path: Path
) -> None:
    page = write_comparison(day_and_night_runs, tmp_path / "compare").read_text(encoding="utf-8")
    assert "<h2>conditions side by side</h2>" in page
    section = page.split("<h2>conditions side by side</h2>")[1].split("<h2>")[0]
    assert "<h3>success rate</h3>" in section
    assert "<h3>SPL</h3>" in section
    heads = section.split("</tr>")[0]
    assert heads.index("day<br>") < heads.index(f"{NIGHT}<br>")
    assert f"<td>{FAMILY}</td>" in section
    assert "oracle (full, night)" in page  # the run's own column says its condition
