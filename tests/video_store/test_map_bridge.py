"""GPS gaps bridged along the mapped streets (:mod:`city360.video_store.map_bridge`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from city360.errors import City360Error
from city360.geo import LocalProjection
from city360.video_store.clean import CleanParams, SmoothTrack, clean_track
from city360.video_store.gap_arcs import GapArcParams
from city360.video_store.gps.track import GpsTrack
from city360.video_store.map_bridge import (
    MapBridgeParams,
    StreetRoutes,
    bridge_gaps,
    gaps_to_bridge,
    load_street_routes,
)
from city360.video_store.map_pull import MapPullParams
from tests.fixtures.videos import SyntheticWalk

PROJECTION = LocalProjection(37.77, -122.42)
T0 = 1.7e9


def _streets(*lines: list[tuple[float, float]]) -> StreetRoutes:
    """A network of the given polylines (metres); ends closer than 0.5 m share a node."""
    graph = nx.MultiGraph()
    nodes: list[tuple[float, float]] = []

    def node(point: tuple[float, float]) -> int:
        for index, known in enumerate(nodes):
            if np.hypot(known[0] - point[0], known[1] - point[1]) < 0.5:
                return index
        nodes.append(point)
        return len(nodes) - 1

    for line in lines:
        u, v = node(line[0]), node(line[-1])
        length = float(np.hypot(*np.diff(np.asarray(line), axis=0).T).sum())
        graph.add_edge(u, v, polyline_xy=line, from_node=u, length_m=length)
    return StreetRoutes.from_streets(graph)


def _drive(
    path: list[tuple[float, float]],
    speed_mps: float,
    dropout_s: tuple[float, float],
    seed: int,
    params: CleanParams | None = None,
) -> tuple[SmoothTrack, np.ndarray, np.ndarray]:
    """A 1 Hz GPS track (1 m noise) along ``path`` at ``speed_mps`` with no fix inside
    ``dropout_s`` (seconds from the start); the cleaned track, the true times and positions
    (10 Hz); ``params``: the cleaning's (its defaults when None)."""
    line = np.asarray(path, np.float64)
    arc = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(line, axis=0).T))])
    t = np.arange(0.0, arc[-1] / speed_mps, 0.1)
    true = np.column_stack(
        [np.interp(t * speed_mps, arc, line[:, 0]), np.interp(t * speed_mps, arc, line[:, 1])]
    )
    fix_t = np.arange(0.0, t[-1], 1.0)
    fix_t = fix_t[(fix_t <= dropout_s[0]) | (fix_t >= dropout_s[1])]
    rng = np.random.default_rng(seed)
    x = np.interp(fix_t, t, true[:, 0]) + rng.normal(0.0, 1.0, fix_t.shape)
    y = np.interp(fix_t, t, true[:, 1]) + rng.normal(0.0, 1.0, fix_t.shape)
    lat, lon = PROJECTION.to_latlon(x, y)
    track = GpsTrack.from_columns(Path("drive.gpx"), "gpx", T0 + fix_t, lat, lon)
    return clean_track(track, PROJECTION, params=params), T0 + t, true


def _gap_error(smooth: SmoothTrack, t: np.ndarray, true: np.ndarray, span: tuple[float, float]):
    inside = (t >= T0 + span[0]) & (t <= T0 + span[1])
    x, y, _ = smooth.sample(t[inside])
    return np.hypot(x - true[inside, 0], y - true[inside, 1])


CORNER = [(0.0, 0.0), (0.0, 200.0), (-200.0, 200.0)]
"""North 200 m, then a left turn west 200 m (25 s each at 8 m/s)."""


@pytest.mark.parametrize("gap_arcs", [None, GapArcParams()])
def test_a_dropout_through_a_turn_is_bridged_along_the_streets(
    gap_arcs: GapArcParams | None,
) -> None:
    """SF camera seed 2's shape: a car at 8 m/s loses the fix 8 s through a left turn; the
    smoother's curve cuts the corner, the route along the streets does not. With the
    cleaning's ``gap_arcs`` the gap is first redrawn as long as the speed says (4.2 m off at
    most here); the route still replaces it."""
    routes = _streets([(0.0, 0.0), (0.0, 200.0)], [(0.0, 200.0), (-200.0, 200.0)])
    params = CleanParams(gap_arcs=gap_arcs)
    smooth, t, true = _drive(CORNER, 8.0, (21.0, 29.0), seed=2, params=params)
    before = _gap_error(smooth, t, true, (21.0, 29.0))
    bridged, spans = bridge_gaps(smooth, routes)
    after = _gap_error(bridged, t, true, (21.0, 29.0))
    assert before.max() > (8.0 if gap_arcs is None else 4.0)  # the curve cuts the corner
    assert len(spans) == 1
    assert spans[0][0] <= T0 + 21.0
    assert spans[0][1] >= T0 + 29.0
    assert after.max() < 3.0
    assert np.sqrt((after**2).mean()) < (0.5 if gap_arcs is None else 0.8) * np.sqrt(
        (before**2).mean()
    )


def test_the_sidewalk_side_of_the_track_is_kept_round_the_corner() -> None:
    """A walker 5 m right of the centre line (on the inside of a right turn's corner) is
    placed 5 m right of it through the gap, not on the centre line, and by arc length along
    that inside path (10 m shorter than the centre line round the corner)."""
    inside = [(5.0, 0.0), (5.0, 115.0), (120.0, 115.0)]  # north, then right turn east
    routes = _streets([(0.0, 0.0), (0.0, 120.0)], [(0.0, 120.0), (120.0, 120.0)])
    smooth, t, true = _drive(inside, 1.4, (68.0, 96.0), seed=4)
    before = _gap_error(smooth, t, true, (68.0, 96.0))
    bridged, spans = bridge_gaps(smooth, routes)
    assert spans
    after = _gap_error(bridged, t, true, (68.0, 96.0))
    assert before.max() > 10.0  # the curve cuts the corner's 28 s
    assert after.max() < 4.5
    assert np.sqrt((after**2).mean()) < 0.35 * np.sqrt((before**2).mean())


def test_a_gap_on_a_straight_street_keeps_the_smoothers_curve() -> None:
    routes = _streets([(0.0, 0.0), (0.0, 300.0)])
    smooth, _, _ = _drive([(3.0, 0.0), (3.0, 300.0)], 8.0, (10.0, 18.0), seed=1)
    bridged, spans = bridge_gaps(smooth, routes)
    assert spans == []
    assert bridged is smooth


def test_a_gap_the_cleaning_redrew_as_an_arc_takes_the_route_where_they_agree() -> None:
    """An arc of ``CleanParams.gap_arcs`` is a guess with no side of the street of its own: a
    route that fits replaces it even within ``min_disagreement_m`` of it."""
    routes = _streets([(0.0, 0.0), (0.0, 300.0)])
    smooth, _, _ = _drive([(3.0, 0.0), (3.0, 300.0)], 8.0, (10.0, 18.0), seed=1)
    guessed = dataclasses.replace(smooth, arc_gaps_s=tuple(gaps_to_bridge(smooth)))
    assert guessed.arc_gaps_s
    assert bridge_gaps(guessed, routes)[1] == list(guessed.arc_gaps_s)


def test_a_gap_far_from_every_street_keeps_the_smoothers_curve() -> None:
    routes = _streets([(500.0, 0.0), (500.0, 200.0), (300.0, 200.0)])
    smooth, _, _ = _drive(CORNER, 8.0, (21.0, 29.0), seed=2)
    assert bridge_gaps(smooth, routes)[1] == []


def test_a_route_far_longer_than_the_track_travelled_is_not_taken() -> None:
    """The map joins the gap's ends only by a 700 m detour: the track did not drive it in 8 s."""
    detour = [(0.0, 160.0), (300.0, 160.0), (300.0, 500.0), (-40.0, 500.0), (-40.0, 200.0)]
    routes = _streets([(0.0, 0.0), (0.0, 160.0)], detour, [(-40.0, 200.0), (-200.0, 200.0)])
    smooth, _, _ = _drive(CORNER, 8.0, (19.0, 27.0), seed=3)  # through a block the map lacks
    assert bridge_gaps(smooth, routes, MapBridgeParams())[1] == []


def test_a_route_back_through_a_street_end_is_not_taken() -> None:
    """The gap's start is on a short street whose end the track has passed; a route through
    that end and back doubles back, which a camera moving on at both ends did not do."""
    routes = _streets(
        [(0.0, 0.0), (0.0, 100.0)],
        [(0.0, 100.0), (0.0, 106.0)],  # a 6 m stub on
        [(0.0, 100.0), (-120.0, 100.0)],
    )
    smooth, _, _ = _drive([(0.0, 0.0), (0.0, 104.0)], 1.4, (60.0, 68.0), seed=5)
    assert bridge_gaps(smooth, routes)[1] == []


def test_a_missing_extract_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "area.osm"
    with pytest.raises(City360Error, match=r"area\.osm"):
        load_street_routes(missing, PROJECTION)


def test_ingest_names_a_missing_osm_extract_before_any_work(
    synthetic_walk: SyntheticWalk, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from city360.cli import app

    city = tmp_path / "city"
    args = [
        "ingest", str(synthetic_walk.video), "--gps", str(synthetic_walk.gpx),
        "--osm", str(tmp_path / "district.osm"), "--out", str(city),
    ]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code != 0
    assert "district.osm: no such file" in str(result.exception or result.output)
    assert not city.exists()


def test_ingest_with_an_extract_bridges_along_its_streets(
    synthetic_walk: SyntheticWalk, tmp_path: Path
) -> None:
    """The walk has no gap: ingest with ``osm`` and the pull across the street off
    (``map_pull``, :mod:`city360.video_store.map_pull`) keeps the same poses."""
    from city360.city import CityDir
    from city360.video_store.ingest import IngestOptions, ingest_video

    lat, lon = synthetic_walk.projection.to_latlon(np.array([-50.0, 150.0]), np.array([0.0, 0.0]))
    extract = tmp_path / "area.osm"
    extract.write_text(
        "<?xml version='1.0' encoding='UTF-8'?>\n<osm version='0.6'>\n"
        f"<node id='1' lat='{lat[0]:.7f}' lon='{lon[0]:.7f}' version='1'/>\n"
        f"<node id='2' lat='{lat[1]:.7f}' lon='{lon[1]:.7f}' version='1'/>\n"
        "<way id='10' version='1'><nd ref='1'/><nd ref='2'/>"
        "<tag k='highway' v='residential'/></way>\n</osm>\n"
    )
    poses = {}
    for name, osm in (("plain", None), ("mapped", extract)):
        options = IngestOptions(
            max_width=128, pyramid=False, osm=osm, map_pull=MapPullParams(enabled=False)
        )
        ingest_video(
            synthetic_walk.video,
            synthetic_walk.gpx,
            tmp_path / name,
            projection=synthetic_walk.projection,
            options=options,
        )
        poses[name] = CityDir(tmp_path / name).read_poses("walk")
    assert np.array_equal(poses["plain"].x_m, poses["mapped"].x_m)


def test_ingest_reads_the_extract_only_for_a_track_with_a_gap_to_bridge(
    synthetic_walk: SyntheticWalk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A city's extract takes seconds to read per process (Helsinki.osm.pbf: 25 s on a loaded
    2-core machine) and was read for every video, though a track without a 4-120 s gap has
    nothing to bridge: the walk has none, so ingest leaves the extract unread and its poses
    are those without ``osm`` (issue 17, newuser). The pull across the street
    (:mod:`city360.video_store.map_pull`, on by default) reads it for every track: off here."""
    from city360.city import CityDir
    from city360.video_store import map_bridge
    from city360.video_store.ingest import IngestOptions, ingest_video

    reads: list[Path] = []
    monkeypatch.setattr(map_bridge, "load_street_routes", lambda path, _: reads.append(path))
    monkeypatch.setattr(
        "city360.video_store.ingest.load_street_routes", map_bridge.load_street_routes
    )
    options = IngestOptions(
        max_width=128,
        pyramid=False,
        osm=tmp_path / "city.osm.pbf",
        map_pull=MapPullParams(enabled=False),
    )
    ingest_video(
        synthetic_walk.video,
        synthetic_walk.gpx,
        tmp_path / "city",
        projection=synthetic_walk.projection,
        options=options,
    )
    assert reads == []
    assert len(CityDir(tmp_path / "city").read_poses("walk")) > 0


def test_gaps_to_bridge_are_those_bridge_gaps_tries() -> None:
    smooth, _, _ = _drive(CORNER, 8.0, (20.0, 30.0), seed=1)
    gaps = gaps_to_bridge(smooth)
    assert len(gaps) == 1
    assert gaps[0] == pytest.approx((T0 + 20.0, T0 + 30.0))
    whole, _, _ = _drive(CORNER, 8.0, (20.0, 21.0), seed=1)
    assert gaps_to_bridge(whole) == []
