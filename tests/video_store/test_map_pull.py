"""Frame poses pulled across the matched way towards the walker's line
(:mod:`city360.video_store.map_pull`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from city360.errors import ConfigError
from city360.geo import LocalProjection
from city360.video_store.ingest import IngestOptions
from city360.video_store.map_pull import MapPullParams, pull_across

PROJECTION = LocalProjection(53.56, 9.96)
PULL = MapPullParams(enabled=True, strength=1.0, walker_stray_m=0.0)


def _extract(path: Path, ways: list[list[tuple[float, float]]]) -> Path:
    """An OSM file of residential ``ways`` (metres, x east, y north); equal points are one node."""
    ids: dict[tuple[float, float], int] = {}
    for way in ways:
        for point in way:
            ids.setdefault(point, len(ids) + 1)
    lines = ["<?xml version='1.0' encoding='UTF-8'?>", "<osm version='0.6'>"]
    for (x, y), node in ids.items():
        lat, lon = PROJECTION.to_latlon(np.array([x]), np.array([y]))
        lines.append(f"<node id='{node}' lat='{lat[0]:.8f}' lon='{lon[0]:.8f}' version='1'/>")
    for k, way in enumerate(ways, start=100):
        refs = "".join(f"<nd ref='{ids[p]}'/>" for p in way)
        lines.append(f"<way id='{k}' version='1'>{refs}<tag k='highway' v='residential'/></way>")
    path.write_text("\n".join([*lines, "</osm>", ""]))
    return path


def _straight_street(path: Path) -> Path:
    """A street east along y = 0 from x = -100 to 200 m, with side streets north at x = 0
    and x = 100: three ways, walked straight through two junctions."""
    street = [[(-100.0, 0.0), (0.0, 0.0)], [(0.0, 0.0), (100.0, 0.0)], [(100.0, 0.0), (200.0, 0.0)]]
    return _extract(path, [*street, [(0.0, 0.0), (0.0, 60.0)], [(100.0, 0.0), (100.0, 60.0)]])


def test_a_slow_drift_across_a_straight_street_is_pulled_back_to_the_walkers_line(
    tmp_path: Path,
) -> None:
    """A walker 2 m right of the centre line, walking east past two side streets, whose poses
    drift 3 m to either side and back over 150 m (a canyon's slow GPS error). Each of the
    three ways alone holds about half a swing of the drift, so its median is off by it; the
    three as one stretch hold two swings, whose median is the walker's line. The pull puts
    the poses back on it, the place along the street unchanged."""
    osm = _straight_street(tmp_path / "street.osm")
    x = np.arange(-95.0, 196.0, 1.0)
    y = -2.0 + 3.0 * np.sin(2 * np.pi * (x + 95.0) / 145.0)
    pulled_x, pulled_y = pull_across(x, y, osm=osm, projection=PROJECTION, params=PULL)
    inner = (x > -85.0) & (x < 185.0)
    before = float(np.sqrt(np.mean((y[inner] + 2.0) ** 2)))
    after = float(np.sqrt(np.mean((pulled_y[inner] + 2.0) ** 2)))
    assert after < 0.3 * before, (before, after)
    assert np.max(np.abs(pulled_x - x)) < 0.05  # across the street only


def test_ways_met_at_a_turn_are_stretches_of_their_own(tmp_path: Path) -> None:
    """With no straight-on junction (``straight_deg`` 0) every way is a stretch of its own:
    its median takes the drift with it, and the walker's line is not found."""
    osm = _straight_street(tmp_path / "street.osm")
    x = np.arange(-95.0, 196.0, 1.0)
    y = -2.0 + 3.0 * np.sin(2 * np.pi * (x + 95.0) / 145.0)
    apart = MapPullParams(enabled=True, strength=1.0, straight_deg=0.0, walker_stray_m=0.0)
    _, pulled_y = pull_across(x, y, osm=osm, projection=PROJECTION, params=apart)
    inner = (x > -85.0) & (x < 185.0)
    assert float(np.sqrt(np.mean((pulled_y[inner] + 2.0) ** 2))) > 1.0


def test_the_pull_fades_to_nothing_at_a_corner(tmp_path: Path) -> None:
    """An L of two ways meeting at (100, 0) at a right angle, walked 3 m right of the centre line
    with a 2 m swing: mid-way poses move, the pose level with the corner stays (the pull
    fades over ``node_clear_m``): there the way's normal turns and the walker may be on
    either street."""
    osm = _extract(
        tmp_path / "corner.osm", [[(0.0, 0.0), (100.0, 0.0)], [(100.0, 0.0), (100.0, 100.0)]]
    )
    leg = np.arange(0.0, 100.0, 1.0)
    swing = 2.0 * np.sin(2 * np.pi * leg / 50.0)
    x = np.concatenate([leg, np.full(100, 103.0) + swing])
    y = np.concatenate([-3.0 + swing, leg])
    x[99], y[99] = 99.8, -3.0  # level with the corner, 3 m to its side
    pulled_x, pulled_y = pull_across(x, y, osm=osm, projection=PROJECTION, params=PULL)
    moved = np.hypot(pulled_x - x, pulled_y - y)
    assert moved[99] < 0.2, moved[95:105]
    assert moved[[12, 37, 162, 187]].min() > 1.0, moved[[12, 37, 162, 187]]


def test_a_walk_off_the_map_keeps_its_poses(tmp_path: Path) -> None:
    osm = _straight_street(tmp_path / "street.osm")
    x = np.arange(0.0, 100.0, 1.0)
    y = np.full(100, 400.0) + np.sin(x / 10.0)
    pulled_x, pulled_y = pull_across(x, y, osm=osm, projection=PROJECTION, params=PULL)
    assert np.array_equal(pulled_x, x)
    assert np.array_equal(pulled_y, y)


def test_the_pull_is_on_by_default_and_off_when_switched_off(tmp_path: Path) -> None:
    osm = _straight_street(tmp_path / "street.osm")
    x = np.arange(-95.0, 196.0, 1.0)
    y = 3.0 * np.sin(x / 20.0)
    assert IngestOptions().map_pull.enabled
    off = MapPullParams(enabled=False)
    pulled_x, pulled_y = pull_across(x, y, osm=osm, projection=PROJECTION, params=off)
    assert np.array_equal(pulled_y, y)
    assert np.array_equal(pulled_x, x)


def test_a_strength_beyond_one_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"`strength` must be in \[0, 1\], got 1.5"):
        MapPullParams(strength=1.5)


def test_poses_that_stray_no_further_than_a_walker_are_left_where_they_are(
    tmp_path: Path,
) -> None:
    """A phone's GPS follows the walker closely: poses 0.7 m RMS about their line, less than
    a walker's own stray (``walker_stray_m`` 1 m), are left where they are (pulled onto the
    line, the Hamburg phone walk of seed 0 was 1.839 -> 1.949 m off at its kept frames);
    poses 2.1 m RMS about it (a canyon's) are still pulled."""
    osm = _straight_street(tmp_path / "street.osm")
    x = np.arange(-95.0, 196.0, 1.0)
    wave = np.sin(2 * np.pi * (x + 95.0) / 145.0)
    careful = MapPullParams(enabled=True, strength=1.0, walker_stray_m=1.0)
    for amplitude, moves in ((1.0, False), (3.0, True)):
        y = -2.0 + amplitude * wave
        _, pulled_y = pull_across(x, y, osm=osm, projection=PROJECTION, params=careful)
        assert (np.max(np.abs(pulled_y - y)) > 0.5) == moves, amplitude
