"""A walk on footpaths matched against the OSM network it is on (issue 17, item e)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from city360.city import CityDir, CityManifest
from city360.errors import OsmError
from city360.geo import LocalProjection
from city360.pose_graph.build import build_city
from city360.pose_graph.osm_match import AUTO_NETWORKS, NETWORK_SHARE_SLACK, choose_network
from city360.pose_graph.tracks import Track, load_tracks
from tests.pose_graph.walks import ORIGIN, write_trajectory

# a 2 x 2 block grid of residential streets (block 90 m) with a footway through the middle
# of each column of blocks, crossing the middle street
STREETS = [
    [(0, 0), (180, 0)], [(0, 90), (180, 90)], [(0, 180), (180, 180)],
    [(0, 0), (0, 180)], [(90, 0), (90, 180)], [(180, 0), (180, 180)],
    # beyond the filmed area (an extract's outermost nodes are cut by its own bounds)
    [(-60, -60), (240, -60)], [(240, -60), (240, 240)], [(240, 240), (-60, 240)],
    [(-60, 240), (-60, -60)], [(0, 0), (-60, -60)], [(180, 180), (240, 240)],
]  # fmt: skip
FOOTWAYS = [[(45, 0), (45, 180)], [(135, 0), (135, 180)]]


def _write_osm(path: Path, *, shift_m: float = 0.0) -> Path:
    projection = LocalProjection(*ORIGIN)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<osm version="0.6" generator="tests">']
    ids: dict[tuple[float, float], int] = {}

    def node(x: float, y: float) -> int:
        key = (float(x) + shift_m, float(y))
        if key not in ids:
            ids[key] = len(ids) + 1
            lat, lon = projection.to_latlon(*key)
            lines.append(
                f'  <node id="{ids[key]}" version="1" lat="{float(lat):.9f}" '
                f'lon="{float(lon):.9f}"/>'
            )
        return ids[key]

    ways = []
    for highway, lines_xy in (("residential", STREETS), ("footway", FOOTWAYS)):
        for a, b in lines_xy:
            steps = np.linspace(
                0.0, 1.0, max(2, round(np.hypot(b[0] - a[0], b[1] - a[1]) / 15) + 1)
            )
            refs = [node(a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])) for t in steps]
            ways.append((refs, highway))
    for k, (refs, highway) in enumerate(ways):
        lines.append(f'  <way id="{k + 1}" version="1">')
        lines += [f'    <nd ref="{r}"/>' for r in refs]
        lines.append(f'    <tag k="highway" v="{highway}"/>')
        lines.append("  </way>")
    lines.append("</osm>")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


FOOTPATH_WALK = ((45, 2), (45, 180), (135, 180), (135, 2))
"""Up the western footway, east along the top street, down the eastern footway: 2/3 of the
walk on footways."""
STREET_WALK = ((2, 90), (180, 90), (180, 178))
"""Along the middle street and up the eastern one: every pose on a residential street."""


def _footpath_city(
    root: Path, walk: tuple[tuple[int, int], ...] = FOOTPATH_WALK, *, seed: int = 0
) -> CityDir:
    """A city with one trajectory through the corners ``walk`` (metres)."""
    projection = LocalProjection(*ORIGIN)
    corners = np.array(walk, float)
    parts = [
        np.linspace(a, b, int(np.hypot(*(b - a))) + 1)[:-1] for a, b in itertools.pairwise(corners)
    ]
    xy = np.concatenate([*parts, corners[-1:]])
    xy += np.random.default_rng(seed).normal(0, 0.5, xy.shape)
    city = CityDir(root)
    south, west = projection.to_latlon(-50, -50)
    north, east = projection.to_latlon(230, 230)
    city.write_manifest(
        CityManifest(
            name="footpaths", crs=projection.proj4, origin_lat=ORIGIN[0], origin_lon=ORIGIN[1],
            bbox=(float(south), float(west), float(north), float(east)),
        )
    )  # fmt: skip
    write_trajectory(city, "walk", xy, projection)
    return city


def test_footpath_walk_builds_on_the_walk_network(tmp_path: Path) -> None:
    city = _footpath_city(tmp_path / "city")
    osm = _write_osm(tmp_path / "area.osm")
    build_city(city, osm_path=osm, require_frames=False)
    record = city.read_manifest().build["pose_graph"]
    assert record["osm_network"] == "walk"


def test_forced_street_network_names_the_cause(tmp_path: Path) -> None:
    city = _footpath_city(tmp_path / "city")
    osm = _write_osm(tmp_path / "area.osm")
    with pytest.raises(OsmError, match="covers the trajectories' area, but only"):
        build_city(city, osm_path=osm, osm_network="street", require_frames=False)


def test_extract_elsewhere_says_so(tmp_path: Path) -> None:
    city = _footpath_city(tmp_path / "city")
    osm = _write_osm(tmp_path / "far.osm", shift_m=5000.0)
    with pytest.raises(OsmError, match="does not cover the city"):
        build_city(city, osm_path=osm, require_frames=False)


def _count_matched_poses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Poses map-matched (one entry per track matched), counted at the Viterbi."""
    from city360.pose_graph import map_match

    counted: list[int] = []
    viterbi = map_match._viterbi

    def counting(osm: object, track: Track, candidates: object) -> object:
        counted.append(len(track))
        return viterbi(osm, track, candidates)  # type: ignore[arg-type]

    monkeypatch.setattr(map_match, "_viterbi", counting)
    return counted


def test_a_street_walk_is_map_matched_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Choosing the network matched the walk against street, walk and all, then street again
    to check it and once more to build (five passes; Helsinki builds took 50-100 s). The
    street network's share reaches every other network's bound, so one pass does it all."""
    city = _footpath_city(tmp_path / "city", STREET_WALK, seed=1)
    osm = _write_osm(tmp_path / "area.osm")
    counted = _count_matched_poses(monkeypatch)
    build_city(city, osm_path=osm, require_frames=False)
    record = city.read_manifest().build["pose_graph"]
    assert record["osm_network"] == "street"
    poses = sum(len(t) for t in load_tracks(city, require_frames=False)[1])
    assert sum(counted) == poses


def test_a_footpath_walk_matches_only_the_networks_it_must(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    city = _footpath_city(tmp_path / "city")
    osm = _write_osm(tmp_path / "area.osm")
    counted = _count_matched_poses(monkeypatch)
    build_city(city, osm_path=osm, require_frames=False)
    assert city.read_manifest().build["pose_graph"]["osm_network"] == "walk"
    poses = sum(len(t) for t in load_tracks(city, require_frames=False)[1])
    # street is ruled out by its bound (its streets are 45 m from the footways), walk is
    # matched, all is ruled out by walk's share; the build reuses walk's matches
    assert sum(counted) == poses


@pytest.mark.parametrize("seed", range(40))
def test_choose_network_makes_the_choice_of_matching_every_network(seed: int) -> None:
    rng = np.random.default_rng(seed)
    names = AUTO_NETWORKS
    shares = {n: float(rng.choice([rng.uniform(0, 1), rng.uniform(0.9, 1)])) for n in names}
    bounds = {n: min(1.0, shares[n] + float(rng.choice([0, rng.uniform(0, 0.2)]))) for n in names}
    best = max(shares.values())
    expected = next(n for n in names if shares[n] >= best - NETWORK_SHARE_SLACK)
    matched: list[str] = []

    def share_of(name: str) -> float:
        matched.append(name)
        return shares[name]

    chosen, known = choose_network(names, bounds, share_of)
    assert chosen == expected
    assert len(matched) == len(set(matched))
    assert known == {n: shares[n] for n in matched}
