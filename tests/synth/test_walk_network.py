"""The streets generated around a recorded walk: a walk that comes back to a street it walked
(an out-and-back spur, a loop round a block, a crossing of its own path) walks that street
again, so the junctions it passes are junctions of the truth (round eight's generator drew the
whole walk as one street, with no junction on it at all)."""

from __future__ import annotations

import datetime as dt
import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy.ndimage import gaussian_filter1d

from city360.geo import LocalProjection
from city360.synth.walk_network import walk_network_osm, walked_streets


def _walk(*corners: tuple[float, float], step_m: float = 1.0) -> np.ndarray:
    """Points ``step_m`` apart along the straight legs between ``corners`` (metres)."""
    legs = []
    for a, b in itertools.pairwise(corners):
        start, end = np.array(a, float), np.array(b, float)
        count = max(2, int(np.hypot(*(end - start)) / step_m))
        legs += [start + (end - start) * t for t in np.linspace(0.0, 1.0, count, endpoint=False)]
    return np.array([*legs, np.array(corners[-1], float)])


def _gps(points: np.ndarray, seed: int) -> np.ndarray:
    """``points`` under 3 m of slowly wandering GPS error, simplified as the generator does."""
    import shapely

    rng = np.random.default_rng(seed)
    error = np.column_stack(
        [gaussian_filter1d(rng.normal(0.0, 1.0, len(points)), 8) * 3 * np.sqrt(8) for _ in (0, 1)]
    )
    line = shapely.LineString(points + error).simplify(4.0, preserve_topology=False)
    return np.asarray(line.coords)


def _nodes(streets: list[np.ndarray]) -> Counter[tuple[float, float]]:
    """How many street ends meet at each end point."""
    return Counter(
        (round(float(p[0]), 3), round(float(p[1]), 3)) for s in streets for p in (s[0], s[-1])
    )


def _near(nodes: Counter[tuple[float, float]], degree: int, x: float, y: float) -> bool:
    return any(d == degree and np.hypot(nx - x, ny - y) < 8.0 for (nx, ny), d in nodes.items())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_out_and_back_spur_is_a_junction_and_a_dead_end(seed: int) -> None:
    # up a side street on one sidewalk, back on the other 6 m away, then on
    walk = _walk((0, 0), (100, 0), (100, 70), (106, 68), (106, 4), (200, 4))
    nodes = _nodes(walked_streets(_gps(walk, seed)))
    assert [d for d in nodes.values() if d >= 3] == [3]
    assert _near(nodes, 3, 100.0, 0.0)  # the spur's base
    assert _near(nodes, 1, 100.0, 70.0)  # its tip: a dead end


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_walk_crossing_its_own_path_makes_a_four_way_junction(seed: int) -> None:
    walk = _walk((0, 0), (200, 0), (200, 100), (100, 100), (100, -100))
    nodes = _nodes(walked_streets(_gps(walk, seed)))
    assert [d for d in nodes.values() if d >= 3] == [4]
    assert _near(nodes, 4, 100.0, 0.0)


def test_a_loop_round_a_block_closes_at_its_corner() -> None:
    walk = _walk((0, 0), (100, 0), (100, 100), (0, 100), (0, 0), (0, -80))
    streets = walked_streets(_gps(walk, 0))
    nodes = _nodes(streets)
    assert [d for d in nodes.values() if d >= 3] == [3]
    assert _near(nodes, 3, 0.0, 0.0)
    assert all(not np.array_equal(s[0], s[-1]) for s in streets)  # no street ends where it starts


def test_a_walk_that_never_comes_back_is_its_own_path() -> None:
    walk = _gps(_walk((0, 0), (100, 0), (100, 100), (250, 120)), 0)
    (street,) = walked_streets(walk)
    assert np.array_equal(street, walk)


def test_the_osm_of_a_walk_with_a_spur_has_its_junction(tmp_path: Path) -> None:
    from city360.maps.osm import load_osm

    walk = _walk((0, 0), (100, 0), (100, 70), (106, 68), (106, 4), (200, 4), step_m=1.4)
    projection = LocalProjection(53.5605, 9.9610)
    lat, lon = projection.to_latlon(walk[:, 0], walk[:, 1])
    start = dt.datetime(2024, 5, 1, 10, tzinfo=dt.UTC)
    points = "\n".join(
        f'<trkpt lat="{a:.7f}" lon="{b:.7f}"><time>'
        f"{(start + dt.timedelta(seconds=k)).strftime('%Y-%m-%dT%H:%M:%SZ')}</time></trkpt>"
        for k, (a, b) in enumerate(zip(lat, lon, strict=True))
    )
    gpx = tmp_path / "spur.gpx"
    gpx.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<gpx version="1.1" creator="test" '
        f'xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>\n{points}\n'
        "</trkseg></trk></gpx>\n"
    )
    osm = walk_network_osm(gpx, tmp_path / "spur.osm")
    streets = load_osm(osm, projection=projection).streets
    degree = {n: d for n, d in streets.degree()}

    def degree_near(x: float, y: float) -> list[int]:
        return [
            degree[n]
            for n, data in streets.nodes(data=True)
            if np.hypot(data["x_m"] - x, data["y_m"] - y) < 8.0
        ]

    assert max(degree_near(100.0, 0.0)) == 3  # the spur's base is a junction
    assert degree_near(100.0, 70.0) == [1]  # its tip a dead end
