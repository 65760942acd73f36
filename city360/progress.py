"""Progress bars for long steps (rich), one look across the package."""

from __future__ import annotations

import os
import sys

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

__all__ = ["RateColumn", "console", "make_progress"]

console = Console(stderr=True)
"""Where progress and status go: stderr, so stdout stays clean for data."""


class RateColumn(ProgressColumn):
    """``12.3 frames/s`` for a task added with a ``unit`` field (``add_task(..., unit=
    "frames")``); empty for the others."""

    def render(self, task: Task) -> Text:
        unit = task.fields.get("unit")
        if not unit or task.speed is None:
            return Text("")
        return Text(f"{task.speed:.1f} {unit}/s", style="progress.data.speed")


def make_progress(*, transient: bool = False) -> Progress:
    """A rich Progress with description, bar, count, rate (tasks with a ``unit``), elapsed
    and remaining time.

    Disabled when ``CITY360_NO_PROGRESS`` is set or stderr is not a terminal under pytest,
    so logs stay readable.
    """
    disable = bool(os.environ.get("CITY360_NO_PROGRESS")) or (
        "pytest" in sys.modules and not sys.stderr.isatty()
    )
    return Progress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=transient,
        disable=disable,
    )
