"""The issue's targets as ratios of figures measured in one run, and the table that shows them.

Targets are reported (pass/fail), never asserted: this machine is shared and noisy, so only
side-by-side ratios mean much, and a miss is something to profile, not a failing test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["TARGETS", "Target", "evaluate_targets", "render_table"]


@dataclass(frozen=True, slots=True)
class Target:
    """One row of the issue's target table: ``value(figures)`` compared with ``limit``."""

    name: str
    figure: str
    rule: str
    value: Callable[[dict[str, Any]], float]
    limit: float
    at_least: bool
    unit: str

    def check(self, figures: dict[str, Any]) -> dict[str, Any]:
        try:
            value = float(self.value(figures))
        except (KeyError, TypeError, ZeroDivisionError):
            return {"figure": self.figure, "rule": self.rule, "value": None, "pass": None}
        passed = value >= self.limit if self.at_least else value <= self.limit
        return {
            "figure": self.figure,
            "rule": self.rule,
            "value": round(value, 3),
            "unit": self.unit,
            "limit": self.limit,
            "pass": bool(passed),
        }


TARGETS: tuple[Target, ...] = (
    Target(
        "rotate_vs_e2p",
        "rotate step p50",
        ">= 5x faster than py360convert e2p on the same frame",
        lambda f: f["e2p_p50_ms"] / f["rotate_p50_ms"],
        5.0,
        True,
        "x",
    ),
    Target(
        "move_warm",
        "W step p50, prefetch warm",
        "<= 10 ms",
        lambda f: f["move_warm_p50_ms"],
        10.0,
        False,
        "ms",
    ),
    Target(
        "move_cold_vs_intra",
        "W step p50, cold",
        "<= 1.5x one intra-frame decode",
        lambda f: f["move_cold_p50_ms"] / f["intra_decode_ms"],
        1.5,
        False,
        "x",
    ),
    Target(
        "cold_get_vs_intra",
        "FrameStore cold get p50",
        "<= 1.5x one intra-frame decode",
        lambda f: f["cold_get_p50_ms"] / f["intra_decode_ms"],
        1.5,
        False,
        "x",
    ),
    Target(
        "move_vs_naive",
        "W step p50 (warm) vs the naive pipeline",
        ">= 10x faster",
        lambda f: f["naive_move_p50_ms"] / f["move_warm_p50_ms"],
        10.0,
        True,
        "x",
    ),
    Target(
        "ingest_realtime",
        "ingest, 30 fps H.264 clip",
        ">= 2x real time",
        lambda f: f["ingest_realtime_factor"],
        2.0,
        True,
        "x",
    ),
    Target(
        "build_600",
        "pose-graph build, >= 600 segments",
        "<= 10 s",
        lambda f: f["build_600_segments_s"],
        10.0,
        False,
        "s",
    ),
    Target(
        "location_map",
        "location map p50",
        "<= 2 ms",
        lambda f: f["map_render_p50_ms"],
        2.0,
        False,
        "ms",
    ),
    Target(
        "workers_scaling",
        "oracle episodes/s, 2 workers vs 1",
        ">= 1.6x",
        lambda f: f["episodes_per_s_2_workers"] / f["episodes_per_s_1_worker"],
        1.6,
        True,
        "x",
    ),
    Target(
        "env_rss",
        "peak RSS of one Env",
        "<= 1.5 GiB",
        lambda f: f["env_peak_rss_mb"],
        1536.0,
        False,
        "MiB",
    ),
    Target(
        "vec_throughput",
        "vector env (sync), 64 envs, 84x84, random legal actions",
        ">= 2,000 steps/s",
        lambda f: f["vec_64_steps_per_s"],
        2000.0,
        True,
        "steps/s",
    ),
    Target(
        "vec_vs_loop",
        "that vector env vs 64 plain envs in a Python loop",
        ">= 3x the steps/s",
        lambda f: f["vec_64_steps_per_s"] / f["loop_64_steps_per_s"],
        3.0,
        True,
        "x",
    ),
    Target(
        "pyramid_w",
        "cold W at 640x480/90°, level the pyramid picks vs full frames",
        "<= 0.6x the time",
        lambda f: f["pyramid_w_auto_p50_ms"] / f["pyramid_w_full_p50_ms"],
        0.6,
        False,
        "x",
    ),
    Target(
        "pyramid_psnr",
        "that view vs the full frames' view",
        ">= 35 dB PSNR",
        lambda f: f["pyramid_auto_psnr_db"],
        35.0,
        True,
        "dB",
    ),
    Target(
        "vec_rss",
        "peak RSS of the 64-env vector env",
        "<= 2 GiB",
        lambda f: f["vec_64_peak_rss_mb"],
        2048.0,
        False,
        "MiB",
    ),
)


def evaluate_targets(figures: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every target's value and pass/fail (None when a figure is missing)."""
    return {target.name: target.check(figures) for target in TARGETS}


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


def render_table(result: dict[str, Any]) -> Any:
    """Two rich tables: every measured figure (p50/p95/n) and the targets with pass/fail."""
    from rich.console import Group
    from rich.table import Table

    figures = Table(title=f"city360 bench ({result['mode']})", show_lines=False)
    for column in ("figure", "p50", "p95", "cpu p50", "n", "unit"):
        figures.add_column(column, justify="left" if column == "figure" else "right")
    for row in result["rows"]:
        figures.add_row(
            row["figure"],
            _fmt(row.get("p50")),
            _fmt(row.get("p95")),
            _fmt(row.get("cpu_p50")),
            _fmt(row.get("n")),
            row.get("unit", ""),
        )
    targets = Table(title="targets (ratios of this run)")
    for column in ("figure", "target", "measured", "pass"):
        targets.add_column(column, justify="left" if column in ("figure", "target") else "right")
    for check in result["targets"].values():
        verdict = {True: "[green]pass[/]", False: "[red]FAIL[/]", None: "-"}[check["pass"]]
        measured = "-" if check["value"] is None else f"{check['value']:,.2f} {check['unit']}"
        targets.add_row(check["figure"], check["rule"], measured, verdict)
    return Group(figures, targets)
