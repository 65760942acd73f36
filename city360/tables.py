"""Rich tables that stay readable in a narrow terminal (80 columns and less).

A wide table whose columns would be squeezed below their content (rich then folds a number into
one character per line) is shown instead as a vertical layout: the key columns, then one cell
listing every other non-empty value as ``name value`` lines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

__all__ = ["fits", "records_table"]


def fits(table: Table, console: Console) -> bool:
    """Whether ``table`` shows at its natural width (no column squeezed) on ``console``."""
    unbounded = console.options.update_width(100_000)  # measure the natural width, unclamped
    return Measurement.get(console, unbounded, table).maximum <= console.width


def records_table(
    rows: Sequence[Mapping[str, Any]],
    keys: Sequence[str],
    *,
    title: str,
    key_columns: int,
    console: Console,
) -> Table:
    """One row per record with one column per key when that fits ``console``; otherwise the
    first ``key_columns`` keys as columns and the rest stacked in one ``values`` column."""
    wide = Table(title=title, expand=False)
    for i, key in enumerate(keys):
        wide.add_column(
            key.replace("_", " "), justify="left" if i < key_columns else "right", no_wrap=True
        )
    for row in rows:
        wide.add_row(*[_text(row.get(key)) for key in keys])
    if fits(wide, console):
        return wide
    narrow = Table(title=title, expand=False)
    for key in keys[:key_columns]:
        narrow.add_column(key.replace("_", " "), no_wrap=True)
    narrow.add_column("values", overflow="fold")
    for row in rows:
        stacked = "\n".join(
            f"{key.replace('_', ' ')} {_text(row[key])}"
            for key in keys[key_columns:]
            if row.get(key) not in (None, "")
        )
        narrow.add_row(*[_text(row.get(key)) for key in keys[:key_columns]], stacked)
    return narrow


def _text(value: Any) -> str:
    return "" if value is None else str(value)
