"""``city360 bench --quick``: runs end to end and writes every required figure.

Figures are checked for presence and sanity only — finite and positive — never against a time
limit: speed targets are reported by the harness, not asserted here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

REQUIRED_KEYS = (
    "rotate_p50_ms",
    "e2p_p50_ms",
    "move_warm_p50_ms",
    "move_cold_p50_ms",
    "intra_decode_ms",
    "cold_get_p50_ms",
    "naive_move_p50_ms",
    "branch_p50_ms",
    "ingest_realtime_factor",
    "build_600_segments_s",
    "map_render_p50_ms",
    "episodes_per_s_1_worker",
    "episodes_per_s_2_workers",
    "env_peak_rss_mb",
    "vec_64_steps_per_s",
    "loop_64_steps_per_s",
    "one_env_steps_per_s",
    "vec_vs_loop",
    "vec_vs_one_env",
    "vec_64_peak_rss_mb",
    "pyramid_w_full_p50_ms",
    "pyramid_w_auto_p50_ms",
    "pyramid_w_10_p50_ms",
)
TARGET_NAMES = (
    "rotate_vs_e2p",
    "move_warm",
    "move_cold_vs_intra",
    "cold_get_vs_intra",
    "move_vs_naive",
    "ingest_realtime",
    "build_600",
    "location_map",
    "workers_scaling",
    "env_rss",
    "vec_throughput",
    "vec_vs_loop",
    "pyramid_w",
    "pyramid_psnr",
    "vec_rss",
)


@pytest.fixture(scope="module")
def quick_result(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, str]:
    from typer.testing import CliRunner

    from city360.cli import app

    root = tmp_path_factory.mktemp("bench")
    out = root / "bench.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CITY360_CACHE_DIR", str(root / "cache"))
        result = CliRunner().invoke(app, ["bench", "--quick", "--out", str(out)])
    if result.exit_code != 0:
        detail = result.output + (repr(result.exception) if result.exception else "")
        pytest.fail(f"city360 bench --quick exited {result.exit_code}:\n{detail}")
    return json.loads(out.read_text(encoding="utf-8")), result.output


@pytest.mark.slow
def test_quick_bench_writes_every_figure(quick_result: tuple[dict, str]) -> None:
    data, _ = quick_result
    for key in REQUIRED_KEYS:
        value = data[key]
        assert isinstance(value, int | float), key
        assert math.isfinite(value), key
        assert value > 0, key
    assert data["mode"] == "quick"
    assert data["build_segments"] > 0
    assert data["frame_size"] == [256, 128]


@pytest.mark.slow
def test_quick_bench_reports_machine_and_targets(quick_result: tuple[dict, str]) -> None:
    data, output = quick_result
    machine = data["machine"]
    assert machine["cpu_count"] >= 1
    assert machine["platform"]
    assert len(machine["load_average_1_5_15"]) == 3
    assert machine["versions"]["py360convert"]
    assert set(data["targets"]) == set(TARGET_NAMES)
    for name, check in data["targets"].items():
        assert isinstance(check["pass"], bool), name
        assert math.isfinite(check["value"]), name
    # the printed table names every target
    assert "W step p50, prefetch warm" in output
    assert "peak RSS of one Env" in output


def test_targets_pass_and_fail_on_given_figures() -> None:
    from city360.bench.report import evaluate_targets

    good = {
        "rotate_p50_ms": 1.0,
        "e2p_p50_ms": 10.0,
        "move_warm_p50_ms": 5.0,
        "move_cold_p50_ms": 30.0,
        "intra_decode_ms": 25.0,
        "cold_get_p50_ms": 26.0,
        "naive_move_p50_ms": 200.0,
        "ingest_realtime_factor": 3.0,
        "build_600_segments_s": 4.0,
        "map_render_p50_ms": 1.0,
        "episodes_per_s_1_worker": 1.0,
        "episodes_per_s_2_workers": 1.8,
        "env_peak_rss_mb": 900.0,
        "vec_64_steps_per_s": 2400.0,
        "loop_64_steps_per_s": 700.0,
        "pyramid_w_auto_p50_ms": 5.0,
        "pyramid_w_full_p50_ms": 10.0,
        "pyramid_auto_psnr_db": 38.0,
        "vec_64_peak_rss_mb": 900.0,
    }
    checks = evaluate_targets(good)
    assert all(c["pass"] for c in checks.values()), checks
    bad = {**good, "rotate_p50_ms": 4.0, "env_peak_rss_mb": 2000.0}
    checks = evaluate_targets(bad)
    assert checks["rotate_vs_e2p"]["pass"] is False
    assert checks["rotate_vs_e2p"]["value"] == pytest.approx(2.5)
    assert checks["env_rss"]["pass"] is False
    missing = evaluate_targets({k: v for k, v in good.items() if k != "map_render_p50_ms"})
    assert missing["location_map"]["pass"] is None


def test_training_targets_are_ratios_of_the_run() -> None:
    from city360.bench.report import evaluate_targets

    figures = {
        "vec_64_steps_per_s": 1800.0,
        "loop_64_steps_per_s": 900.0,
        "pyramid_w_auto_p50_ms": 9.0,
        "pyramid_w_full_p50_ms": 10.0,
        "pyramid_auto_psnr_db": float("inf"),  # the rule picked the full frames: same view
        "vec_64_peak_rss_mb": 2100.0,
    }
    checks = evaluate_targets(figures)
    assert checks["vec_throughput"]["pass"] is False
    assert checks["vec_vs_loop"]["value"] == pytest.approx(2.0)
    assert checks["vec_vs_loop"]["pass"] is False
    assert checks["pyramid_w"]["value"] == pytest.approx(0.9)
    assert checks["pyramid_w"]["pass"] is False
    assert checks["pyramid_psnr"]["pass"] is True
    assert checks["vec_rss"]["pass"] is False
    faster = {**figures, "vec_64_steps_per_s": 3000.0, "pyramid_w_auto_p50_ms": 5.0}
    checks = evaluate_targets(faster)
    assert checks["vec_throughput"]["pass"] is True
    assert checks["vec_vs_loop"]["pass"] is True
    assert checks["pyramid_w"]["pass"] is True


def test_grid_osm_has_the_streets_asked_for(tmp_path: Path) -> None:
    from city360.bench.osm import write_grid_osm

    path = write_grid_osm(tmp_path / "g.osm", cols=3, rows=2, spacing_m=30.0)
    text = path.read_text(encoding="utf-8")
    assert text.count('k="highway"') == 2 + 3 + 4  # streets, avenues, corner stubs
    assert text.count('k="building"') == 2
    street = write_grid_osm(tmp_path / "s.osm", cols=3, rows=1, spacing_m=10.0)
    assert street.read_text(encoding="utf-8").count('k="highway"') == 1
    with pytest.raises(ValueError, match="at least two junctions"):
        write_grid_osm(tmp_path / "x.osm", cols=1, rows=1)


def test_merged_throughput_suite_keeps_every_task_and_asset(built_suite: Path) -> None:
    from city360.bench.cities import _merge_suites
    from city360.tasks.suite import load_suite

    part = load_suite(built_suite)
    merged = _merge_suites([part, part])  # validates: unique ids, every asset found
    assert len(merged) == 2 * len(part)
    assert [t.id for t in merged.tasks[: len(part)]] == [f"s0-{t.id}" for t in part.tasks]
    assert len(merged.assets) == 2 * len(part.assets) > 0
    referenced = {
        value
        for task in merged.tasks
        for name, value in task.told
        if name in ("grid_map", "reference_image", "route_map")
    }
    assert referenced
    assert referenced <= set(merged.assets)
    assert merged.assets[f"assets/s1-{next(iter(part.assets)).removeprefix('assets/')}"]
