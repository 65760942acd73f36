"""Progress bars for long steps (rich), one look across the package."""

from __future__ import annotations

import os
import sys

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

__all__ = ["console", "make_progress"]

console = Console(stderr=True)
"""Where progress and status go: stderr, so stdout stays clean for data."""


def make_progress(*, transient: bool = False) -> Progress:
    """A rich Progress with description, bar, count, elapsed and remaining time.

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
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=transient,
        disable=disable,
    )
