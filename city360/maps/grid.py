"""The localization grid: the exploration area cut into N x N cells, answered as ``x:i y:j``.

``i`` is the column counted from 1 at the WEST edge, ``j`` the row counted from 1 at the NORTH
edge, so the top-left cell of a north-up map is ``x:1 y:1`` and the bottom-right ``x:N y:N``.
A point on an inner grid line belongs to the cell east / south of it; a point on the outer
east or south edge to the last cell.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from city360.errors import ConfigError

__all__ = ["DEFAULT_GRID_N", "MapGrid", "format_cell", "parse_cell"]

DEFAULT_GRID_N = 5
"""Cells per side of the localization grid unless a task or the CLI says otherwise."""

_CELL_RE = re.compile(r"^\s*x\s*[:=]\s*(\d+)\s*[, ]?\s*y\s*[:=]\s*(\d+)\s*$", re.IGNORECASE)


def format_cell(i: int, j: int) -> str:
    """``(2, 4) -> "x:2 y:4"``, the answer format of the localization task."""
    return f"x:{i} y:{j}"


def parse_cell(text: str) -> tuple[int, int]:
    """``"x:2 y:4"`` (also ``"x=2, y=4"``, any case and spacing) -> ``(2, 4)``."""
    match = _CELL_RE.match(text)
    if match is None:
        msg = f"grid cell {text!r} must read 'x:i y:j', e.g. 'x:2 y:4'"
        raise ConfigError(msg)
    return int(match.group(1)), int(match.group(2))


@dataclass(frozen=True, slots=True)
class MapGrid:
    """An ``n`` x ``n`` grid over the rectangle ``x_min_m..x_max_m`` x ``y_min_m..y_max_m``
    (city-CRS metres, x east, y north). Cells are ``(x_max_m - x_min_m) / n`` wide and
    ``(y_max_m - y_min_m) / n`` tall."""

    x_min_m: float
    y_min_m: float
    x_max_m: float
    y_max_m: float
    n: int = DEFAULT_GRID_N

    def __post_init__(self) -> None:
        if not 1 <= self.n <= 26:
            msg = f"grid size `n` must be between 1 and 26, got {self.n}"
            raise ConfigError(msg)
        values = (self.x_min_m, self.y_min_m, self.x_max_m, self.y_max_m)
        if not all(math.isfinite(v) for v in values) or not (
            self.x_max_m > self.x_min_m and self.y_max_m > self.y_min_m
        ):
            msg = f"grid area must be a non-empty rectangle, got x {values[0::2]} y {values[1::2]}"
            raise ConfigError(msg)

    @property
    def cell_width_m(self) -> float:
        return (self.x_max_m - self.x_min_m) / self.n

    @property
    def cell_height_m(self) -> float:
        return (self.y_max_m - self.y_min_m) / self.n

    def contains(self, x_m: float, y_m: float) -> bool:
        return self.x_min_m <= x_m <= self.x_max_m and self.y_min_m <= y_m <= self.y_max_m

    def cell_of(self, x_m: float, y_m: float, *, clip: bool = False) -> tuple[int, int]:
        """The cell ``(i, j)`` holding the point; ``i`` from the west, ``j`` from the north.

        A point outside the area raises :class:`ConfigError` unless ``clip=True``, which
        returns the nearest cell.
        """
        if not self.contains(x_m, y_m) and not clip:
            msg = (
                f"point ({x_m:.1f}, {y_m:.1f}) m is outside the grid area "
                f"x {self.x_min_m:.1f}..{self.x_max_m:.1f}, "
                f"y {self.y_min_m:.1f}..{self.y_max_m:.1f} m; pass clip=True for the nearest cell"
            )
            raise ConfigError(msg)
        i = math.floor((x_m - self.x_min_m) / self.cell_width_m) + 1
        j = math.floor((self.y_max_m - y_m) / self.cell_height_m) + 1
        return min(max(i, 1), self.n), min(max(j, 1), self.n)

    def label_of(self, x_m: float, y_m: float, *, clip: bool = False) -> str:
        """The answer string ``"x:i y:j"`` of the cell holding the point."""
        return format_cell(*self.cell_of(x_m, y_m, clip=clip))

    def cell_bounds(self, i: int, j: int) -> tuple[float, float, float, float]:
        """``(x_min, y_min, x_max, y_max)`` metres of cell ``(i, j)``."""
        if not (1 <= i <= self.n and 1 <= j <= self.n):
            msg = f"cell ({i}, {j}) is outside a {self.n}x{self.n} grid (cells count from 1)"
            raise ConfigError(msg)
        x_min = self.x_min_m + (i - 1) * self.cell_width_m
        y_max = self.y_max_m - (j - 1) * self.cell_height_m
        return x_min, y_max - self.cell_height_m, x_min + self.cell_width_m, y_max

    def cell_centre(self, i: int, j: int) -> tuple[float, float]:
        x_min, y_min, x_max, y_max = self.cell_bounds(i, j)
        return (x_min + x_max) / 2, (y_min + y_max) / 2

    def distance_to_grid_line_m(self, x_m: float, y_m: float) -> float:
        """Distance from the point to the nearest line of the grid (inner or outer), metres."""
        fx = (x_m - self.x_min_m) / self.cell_width_m
        fy = (self.y_max_m - y_m) / self.cell_height_m
        dx = abs(fx - round(fx)) * self.cell_width_m
        dy = abs(fy - round(fy)) * self.cell_height_m
        return min(dx, dy)

    def to_dict(self) -> dict[str, Any]:
        return {
            "x_min_m": self.x_min_m,
            "y_min_m": self.y_min_m,
            "x_max_m": self.x_max_m,
            "y_max_m": self.y_max_m,
            "n": self.n,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MapGrid:
        return cls(
            x_min_m=float(data["x_min_m"]),
            y_min_m=float(data["y_min_m"]),
            x_max_m=float(data["x_max_m"]),
            y_max_m=float(data["y_max_m"]),
            n=int(data.get("n", DEFAULT_GRID_N)),
        )

    def with_n(self, n: int) -> MapGrid:
        return MapGrid(self.x_min_m, self.y_min_m, self.x_max_m, self.y_max_m, n)
