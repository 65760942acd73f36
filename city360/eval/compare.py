"""Several runs on one page: ``city360 report RUN RUN [RUN ...]``.

A bar chart of each family's success rate and SPL per run (``plots.png`` beside the page),
then one table per measure (success rate, mean score, SPL, checkpoint coverage, tokens), a row
per (family, difficulty) and the family's overall, a column per run, labelled with the run id, the
agent, its ablations and its visual condition (from ``run_metadata.json``). Runs are compared
as they are: a run on another suite is marked, not refused, since comparing conditions of one
suite is the point and comparing suites may still be what a reader wants.

When the runs cover more than one visual condition (``city360 eval --condition night``), the
page opens with the conditions side by side: per family, success rate and SPL under each
condition, a column per (agent and ablations, condition), pooling the runs that share both;
each row is grouped by its own ``condition`` column (rows of older runs count as ``day``).
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from city360.errors import InputFileError
from city360.eval.results import EpisodeResult, read_results
from city360.eval.summary import DIFFICULTIES

__all__ = [
    "CONDITION_MEASURES",
    "MEASURES",
    "Measure",
    "RunColumn",
    "load_run",
    "write_comparison",
]


@dataclass(frozen=True, slots=True)
class Measure:
    """A number per episode (None: not measured for it) and how the page shows its mean."""

    name: str
    value: Callable[[EpisodeResult], float | None]
    digits: int = 2


def _coverage(result: EpisodeResult) -> float | None:
    value = result.extra.get("checkpoint_coverage")
    return float(value) if isinstance(value, int | float) else None


MEASURES: tuple[Measure, ...] = (
    Measure("success rate", lambda r: float(r.scored_success)),
    Measure("mean score", lambda r: r.evaluation_score if r.completed_by_answer else 0.0),
    Measure("SPL", lambda r: r.spl),
    Measure("checkpoint coverage", _coverage),
    Measure("tokens per episode", lambda r: float(r.input_tokens + r.output_tokens), 0),
)
"""What the comparison shows, in order."""

CONDITION_MEASURES: tuple[str, ...] = ("success rate", "SPL")
"""The measures of :data:`MEASURES` the conditions section shows side by side."""


@dataclass(frozen=True, slots=True)
class RunColumn:
    run_id: str
    label: str
    suite_hash: str
    results: tuple[EpisodeResult, ...]
    setup: str = ""
    """The agent and its ablations without the condition (the conditions section's key)."""
    condition: str = "day"


def _ablation_label(env_options: dict[str, Any]) -> str:
    parts = [] if env_options.get("map", True) else ["no-map"]
    if env_options.get("multiview"):
        parts.append("multi-view")
    if env_options.get("route_guidance"):
        parts.append("guidance")
    return "+".join(parts) or "full"


def agent_label(agent: Any) -> str:
    """A run's agent as a reader names it: ``random``, ``lmm:gpt-4o``, from
    ``run_metadata.json``'s ``agent`` (a dict; early runs wrote the name only)."""
    if not isinstance(agent, dict):
        return str(agent) if agent else "?"
    who = str(agent.get("kind") or "?")
    if agent.get("model"):
        who += f":{agent['model']}"
    return who


def load_run(run_dir: str | Path) -> RunColumn:
    """A run's rows and a label from its metadata (agent, model, ablations)."""
    folder = Path(run_dir)
    results_path = folder / "results.csv"
    if not results_path.is_file():
        msg = f"{results_path} not found; pass a run folder written by `city360 eval`"
        raise InputFileError(msg)
    meta_path = folder / "run_metadata.json"
    meta: dict[str, Any] = {}
    if meta_path.is_file():
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    agent = meta.get("agent") or {}
    if not isinstance(agent, dict):  # early runs wrote the agent's name only
        agent = {"kind": str(agent)}
    who = agent_label(agent)
    env_options = (meta.get("config") or {}).get("env_options") or {}
    views = (agent.get("options") or {}).get("views")
    looks = f"{_ablation_label(env_options)}{f', {views} views' if views else ''}"
    condition = str(meta.get("condition") or env_options.get("condition") or "day")
    setup = f"{who} ({looks})"
    label = setup if condition == "day" else f"{who} ({looks}, {condition})"
    return RunColumn(
        run_id=str(meta.get("run_id", folder.name)),
        label=label,
        suite_hash=str(meta.get("suite_hash", "")),
        results=tuple(read_results(results_path)),
        setup=setup,
        condition=condition,
    )


def _mean(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None and math.isfinite(v)]
    return sum(kept) / len(kept) if kept else None


def _rows(columns: Sequence[RunColumn]) -> list[tuple[str, str]]:
    families: list[str] = []
    for column in columns:
        for result in column.results:
            if result.task_type not in families:
                families.append(result.task_type)
    return [(f, d) for f in families for d in (*DIFFICULTIES, "all")]


def _table(measure: Measure, columns: Sequence[RunColumn]) -> str:
    head = "".join(f"<th>{html.escape(c.run_id)}<br><small>{html.escape(c.label)}</small></th>"
                   for c in columns)  # fmt: skip
    lines = [f"<h2>{html.escape(measure.name)}</h2><table><tr><th>family</th><th>level</th>{head}"]
    for family, level in _rows(columns):
        cells = []
        for column in columns:
            picked = [
                r
                for r in column.results
                if r.task_type == family and (level == "all" or r.difficulty == level)
            ]
            mean = _mean([measure.value(r) for r in picked])
            text = "–" if mean is None else f"{mean:.{measure.digits}f}"
            cells.append(
                f"<td>{text} <small>({len(picked)})</small></td>" if picked else "<td></td>"
            )
        style = " class='all'" if level == "all" else ""
        lines.append(
            f"<tr{style}><td>{html.escape(family)}</td><td>{level}</td>{''.join(cells)}</tr>"
        )
    return "".join(lines) + "</table>"


def _condition_groups(
    columns: Sequence[RunColumn],
) -> dict[tuple[str, str], list[EpisodeResult]]:
    """(setup, condition) -> the rows of every run with that setup under that condition."""
    groups: dict[tuple[str, str], list[EpisodeResult]] = {}
    for column in columns:
        for result in column.results:
            groups.setdefault((column.setup, result.condition or "day"), []).append(result)
    return dict(sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] != "day", kv[0][1])))


def _conditions_section(columns: Sequence[RunColumn]) -> str:
    """Success and SPL per family under each condition ('' when the runs share one)."""
    groups = _condition_groups(columns)
    if len({condition for _, condition in groups}) < 2:
        return ""
    families = [f for f, level in _rows(columns) if level == "all"]
    head = "".join(
        f"<th>{html.escape(condition)}<br><small>{html.escape(setup)}</small></th>"
        for setup, condition in groups
    )
    parts = ["<h2>conditions side by side</h2>"]
    for measure in (m for m in MEASURES if m.name in CONDITION_MEASURES):
        lines = [f"<h3>{html.escape(measure.name)}</h3><table><tr><th>family</th>{head}</tr>"]
        for family in [*families, "all families"]:
            cells = []
            for rows in groups.values():
                picked = [r for r in rows if family == "all families" or r.task_type == family]
                mean = _mean([measure.value(r) for r in picked])
                text = "–" if mean is None else f"{mean:.{measure.digits}f}"
                cells.append(f"<td>{text} <small>({len(picked)})</small></td>")
            style = " class='all'" if family == "all families" else ""
            lines.append(f"<tr{style}><td>{html.escape(family)}</td>{''.join(cells)}</tr>")
        parts.append("".join(lines) + "</table>")
    return "".join(parts)


_CSS = """body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:4px 8px}th{background:#f3f3f3}tr.all td{font-weight:bold}
small{color:#666}.warn{color:#b42318}"""


PLOT_MEASURES: tuple[str, ...] = ("success rate", "SPL")
"""The measures of :data:`MEASURES` the page's bar chart shows per family and run."""


def write_plots(columns: Sequence[RunColumn], path: Path) -> Path | None:
    """Grouped bars (a group per family, a bar per run) of :data:`PLOT_MEASURES`, one panel
    each, written to ``path`` (PNG); None when no run has rows."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    families = [f for f, d in _rows(columns) if d == "all"]
    if not families:
        return None
    measures = [m for m in MEASURES if m.name in PLOT_MEASURES]
    fig, axes = plt.subplots(
        len(measures), 1, figsize=(max(6.0, 1.1 * len(families) + 2), 2.6 * len(measures))
    )
    axes_list = list(axes) if len(measures) > 1 else [axes]
    width = 0.8 / max(1, len(columns))
    for ax, measure in zip(axes_list, measures, strict=True):
        for k, column in enumerate(columns):
            heights = []
            for family in families:
                mean = _mean([measure.value(r) for r in column.results if r.task_type == family])
                heights.append(math.nan if mean is None else mean)  # no rows: no bar
            xs = [i - 0.4 + width * (k + 0.5) for i in range(len(families))]
            ax.bar(xs, heights, width=width, label=f"{column.run_id}: {column.label}")
        ax.set_ylabel(measure.name)
        ax.set_ylim(0, 1.05)
        ax.set_xticks(range(len(families)))
        ax.set_xticklabels(families, rotation=20, ha="right", fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    axes_list[0].legend(  # above the bars, never over them
        fontsize=7, loc="lower left", bbox_to_anchor=(0.0, 1.02), ncol=min(3, len(columns))
    )
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def write_comparison(run_dirs: Sequence[str | Path], out_dir: str | Path) -> Path:
    """Write ``out_dir/index.html`` comparing ``run_dirs`` side by side; returns its path."""
    columns = [load_run(folder) for folder in run_dirs]
    hashes = {c.suite_hash for c in columns}
    warning = (
        "<p class='warn'>These runs are on different suites (suite hashes "
        f"{', '.join(sorted(h[:12] for h in hashes))}): cells compare different tasks.</p>"
        if len(hashes) > 1
        else ""
    )
    target = Path(out_dir)
    target.mkdir(parents=True, exist_ok=True)
    plot = write_plots(columns, target / "plots.png")
    figure = (
        f"<p><img src='{plot.name}' alt='success rate and SPL per family and run'></p>"
        if plot is not None
        else ""
    )
    body = figure + _conditions_section(columns) + "".join(_table(m, columns) for m in MEASURES)
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>city360: runs compared</title>"
        f"<style>{_CSS}</style></head><body><h1>{len(columns)} runs compared</h1>{warning}"
        f"{body}</body></html>"
    )
    path = target / "index.html"
    path.write_text(page, encoding="utf-8")
    return path
