"""Aggregate a run's episodes into scores by family and difficulty."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from city360.eval.metrics import OFFLINE_METHOD
from city360.eval.results import EpisodeResult

__all__ = [
    "DIFFICULTIES",
    "CellScore",
    "RunSummary",
    "print_summary",
    "summarize",
    "summary_as_json",
]

DIFFICULTIES = ("Easy", "Medium", "Hard")


@dataclass(frozen=True, slots=True)
class CellScore:
    """Scores of the episodes in one (family, difficulty) cell.

    ``mean_score`` averages ``evaluation_score`` over all episodes, counting an episode that did
    not end with ANSWER as 0 (only answered episodes score); ``success_rate`` is the share of
    scored successes.
    """

    episodes: int
    mean_score: float
    success_rate: float


@dataclass(frozen=True, slots=True)
class RunSummary:
    cells: dict[tuple[str, str], CellScore]
    families: dict[str, CellScore]
    overall: CellScore
    stop_reasons: dict[str, int]
    infrastructure_failures: int
    offline_scored: int = 0
    """Answers scored by the offline name matcher because no LLM judge was given."""


def _cell(results: Sequence[EpisodeResult]) -> CellScore:
    if not results:
        return CellScore(0, 0.0, 0.0)
    scores = [r.evaluation_score if r.completed_by_answer else 0.0 for r in results]
    return CellScore(
        episodes=len(results),
        mean_score=sum(scores) / len(results),
        success_rate=sum(r.scored_success for r in results) / len(results),
    )


def summarize(results: Iterable[EpisodeResult]) -> RunSummary:
    """Scores by (family, difficulty), by family and overall; stop-reason counts.

    Episodes that failed for infrastructure reasons (provider down) are counted apart and left
    out of the scores, so an outage does not read as an agent's failure.
    """
    all_results = list(results)
    agent_results = [r for r in all_results if r.status != "infrastructure_error"]
    by_cell: dict[tuple[str, str], list[EpisodeResult]] = defaultdict(list)
    by_family: dict[str, list[EpisodeResult]] = defaultdict(list)
    for result in agent_results:
        by_cell[(result.task_type, result.difficulty)].append(result)
        by_family[result.task_type].append(result)
    return RunSummary(
        cells={key: _cell(value) for key, value in sorted(by_cell.items())},
        families={key: _cell(value) for key, value in sorted(by_family.items())},
        overall=_cell(agent_results),
        stop_reasons=dict(Counter(r.status for r in all_results).most_common()),
        infrastructure_failures=len(all_results) - len(agent_results),
        offline_scored=sum(r.evaluation_method == OFFLINE_METHOD for r in all_results),
    )


def print_summary(summary: RunSummary, *, title: str = "city360 results") -> None:
    """Print a rich table: family rows × difficulty columns, mean score (successes/episodes)."""
    from rich.table import Table

    from city360.progress import console

    table = Table(title=title)
    table.add_column("family")
    for difficulty in DIFFICULTIES:
        table.add_column(difficulty, justify="right")
    table.add_column("all", justify="right", style="bold")
    for family, overall in summary.families.items():
        cells = []
        for difficulty in DIFFICULTIES:
            cell = summary.cells.get((family, difficulty))
            cells.append(_fmt(cell) if cell else "–")
        table.add_row(family, *cells, _fmt(overall))
    table.add_row("all", "", "", "", _fmt(summary.overall), style="bold")
    console.print(table)
    reasons = ", ".join(f"{k}: {v}" for k, v in summary.stop_reasons.items())
    console.print(f"episodes ended by: {reasons}")
    if summary.offline_scored:
        console.print(
            f"[yellow]{summary.offline_scored} answer(s) scored offline[/] (name matcher, not an "
            "LLM judge; not comparable with the reference): pass --judge-provider and "
            "--judge-model"
        )
    if summary.infrastructure_failures:
        console.print(
            f"[yellow]{summary.infrastructure_failures} episode(s) failed for infrastructure "
            "reasons and are not scored[/]"
        )


def summary_as_json(summary: RunSummary) -> dict[str, Any]:
    """The summary as plain JSON values: ``cells`` keyed ``"Family/Difficulty"``, ``families``,
    ``overall`` (each ``episodes``, ``mean_score``, ``success_rate``) and the counts."""

    def cell(score: CellScore) -> dict[str, Any]:
        return {
            "episodes": score.episodes,
            "mean_score": score.mean_score,
            "success_rate": score.success_rate,
        }

    return {
        "cells": {f"{fam}/{level}": cell(c) for (fam, level), c in summary.cells.items()},
        "families": {fam: cell(c) for fam, c in summary.families.items()},
        "overall": cell(summary.overall),
        "stop_reasons": dict(summary.stop_reasons),
        "infrastructure_failures": summary.infrastructure_failures,
        "offline_scored": summary.offline_scored,
    }


def _fmt(cell: CellScore) -> str:
    return f"{cell.mean_score:.2f} ({round(cell.success_rate * cell.episodes)}/{cell.episodes})"
