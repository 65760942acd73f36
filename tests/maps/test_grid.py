"""The localization grid: x:i from the west, y:j from the north."""

from __future__ import annotations

import pytest

from city360.errors import ConfigError
from city360.maps.grid import MapGrid, format_cell, parse_cell


@pytest.fixture
def grid() -> MapGrid:
    return MapGrid(0.0, 0.0, 500.0, 250.0)  # 5 x 5 cells of 100 m x 50 m


@pytest.mark.parametrize(
    ("x_m", "y_m", "expected"),
    [
        (10.0, 240.0, "x:1 y:1"),  # north-west corner cell
        (490.0, 10.0, "x:5 y:5"),  # south-east
        (490.0, 240.0, "x:5 y:1"),  # north-east
        (10.0, 10.0, "x:1 y:5"),  # south-west
        (250.0, 125.0, "x:3 y:3"),  # centre
        (150.0, 160.0, "x:2 y:2"),
        (100.0, 200.0, "x:2 y:2"),  # on an inner line: the cell east / south of it
        (500.0, 0.0, "x:5 y:5"),  # on the outer south-east corner
        (0.0, 250.0, "x:1 y:1"),
    ],
)
def test_cell_of_known_points(grid: MapGrid, x_m: float, y_m: float, expected: str) -> None:
    assert grid.label_of(x_m, y_m) == expected
    assert format_cell(*grid.cell_of(x_m, y_m)) == expected


def test_cell_bounds_and_centre_agree(grid: MapGrid) -> None:
    for i in range(1, 6):
        for j in range(1, 6):
            x, y = grid.cell_centre(i, j)
            assert grid.cell_of(x, y) == (i, j)
    assert grid.cell_bounds(2, 1) == (100.0, 200.0, 200.0, 250.0)


def test_outside_point(grid: MapGrid) -> None:
    with pytest.raises(ConfigError, match=r"outside the grid area .* pass clip=True"):
        grid.cell_of(-1.0, 10.0)
    assert grid.cell_of(-1.0, 10.0, clip=True) == (1, 5)
    assert grid.cell_of(900.0, 900.0, clip=True) == (5, 1)


def test_distance_to_grid_line(grid: MapGrid) -> None:
    assert grid.distance_to_grid_line_m(150.0, 125.0) == pytest.approx(25.0)
    assert grid.distance_to_grid_line_m(103.0, 125.0) == pytest.approx(3.0)


@pytest.mark.parametrize("text", ["x:2 y:4", "X:2 Y:4", " x=2, y=4 ", "x: 2 y: 4"])
def test_parse_cell(text: str) -> None:
    assert parse_cell(text) == (2, 4)


def test_parse_cell_rejects_other_text() -> None:
    with pytest.raises(ConfigError, match=r"grid cell '2,4' must read 'x:i y:j'"):
        parse_cell("2,4")


@pytest.mark.parametrize(
    ("args", "message"),
    [((0, 0, 10, 10, 0), "between 1 and 26"), ((0, 0, 0, 10, 5), "non-empty rectangle")],
)
def test_bad_grid(args: tuple[float, float, float, float, int], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        MapGrid(*args)


def test_round_trip_dict(grid: MapGrid) -> None:
    assert MapGrid.from_dict(grid.to_dict()) == grid
    assert grid.with_n(3).n == 3
