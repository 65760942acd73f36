"""Stops and a varying pace (city360/synth/stops.py), and synth filming with them."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest

from city360.city import CityDir
from city360.errors import ConfigError
from city360.synth.film import sample_route
from city360.synth.patterns import plan_routes
from city360.synth.routes import RouteTiming
from city360.synth.stops import STOP_S, junction_distances_m, with_stops
from city360.video_store.gps import read_track
from tests.fixtures.cities import write_grid_osm
from tests.synth.test_routes import grid_graph


def pauses_s(timing: RouteTiming) -> list[tuple[float, float]]:
    """(metres along, seconds) of every knot pair where the walker stood."""
    flat = np.flatnonzero((np.diff(timing.s_m) == 0) & (np.diff(timing.t_s) > 0))
    return [(float(timing.s_m[k]), float(np.diff(timing.t_s)[k])) for k in flat]


def node_xy(graph) -> dict[int, tuple[float, float]]:  # type: ignore[no-untyped-def]
    return {n: (d["x_m"], d["y_m"]) for n, d in graph.nodes(data=True)}


def test_stops_pause_at_junctions_and_mid_street_and_vary_the_pace() -> None:
    graph = grid_graph(cols=4, rows=4)
    route = plan_routes(graph, pattern="coverage", max_video_m=5000.0)[0]
    timed = with_stops(route, speed_mps=1.4, rng=np.random.default_rng(2), node_xy=node_xy(graph))
    timing = timed.timing
    assert timing is not None
    assert np.all(np.diff(timing.t_s) > 0)
    assert np.all(np.diff(timing.s_m) >= 0)
    assert timing.s_m[-1] == pytest.approx(route.length_m)
    pauses = pauses_s(timing)
    assert all(STOP_S[0] <= seconds <= STOP_S[1] for _, seconds in pauses)
    at_nodes = set(np.round(junction_distances_m(route, node_xy(graph)), 6))
    assert any(round(s, 6) in at_nodes for s, _ in pauses)  # waits at a crossing
    assert any(round(s, 6) not in at_nodes for s, _ in pauses)  # and mid-street
    moving = np.diff(timing.s_m) > 0
    paces = np.diff(timing.s_m)[moving] / np.diff(timing.t_s)[moving]
    assert paces.min() >= 0.6 * 1.4 - 1e-9
    assert paces.max() <= 1.3 * 1.4 + 1e-9
    assert paces.std() > 0.1
    walking = sum(np.diff(timing.t_s)[moving])
    assert timing.duration_s == pytest.approx(walking + sum(s for _, s in pauses))


def test_stops_are_seeded() -> None:
    graph = grid_graph()
    route = plan_routes(graph)[0]
    a = with_stops(route, speed_mps=1.4, rng=np.random.default_rng(7), node_xy=node_xy(graph))
    b = with_stops(route, speed_mps=1.4, rng=np.random.default_rng(7), node_xy=node_xy(graph))
    assert a.timing is not None
    assert b.timing is not None
    assert a.timing.t_s.tobytes() == b.timing.t_s.tobytes()


def test_a_recorded_clock_keeps_its_own_stops() -> None:
    graph = grid_graph()
    route = with_stops(
        plan_routes(graph)[0], speed_mps=1.4, rng=np.random.default_rng(0), node_xy=node_xy(graph)
    )
    with pytest.raises(ConfigError, match="replays a recorded clock; stops are for planned"):
        with_stops(route, speed_mps=1.4, rng=np.random.default_rng(0), node_xy=node_xy(graph))


def test_synth_with_stops_keeps_truth_and_gps_on_one_clock(tmp_path: Path) -> None:
    from city360.synth.groundtruth import SceneTruth, read_true_poses
    from city360.synth.pipeline import synthesize

    osm = write_grid_osm(tmp_path / "grid.osm")
    city = synthesize(
        osm, out=tmp_path / "c", fps=2, pattern="wander", stops=True, seed=1, poses_only=True
    )
    params = CityDir(city).read_manifest().build["synth"]
    assert (params["pattern"], params["stops"]) == ("wander", True)
    truth = SceneTruth.load(city / "groundtruth" / "scene.json")
    projection = CityDir(city).read_manifest().projection
    stood = 0.0
    for video in truth.videos:
        table = read_true_poses(city / "groundtruth" / "poses" / f"{video.name}.csv")
        step = np.hypot(*np.diff(table[:, 2:4], axis=0).T)
        stood += float((step == 0).sum()) / video.fps
        track = read_track(city / "videos" / f"{video.name}.gpx")
        start = dt.datetime.fromisoformat(video.creation_time_utc.replace("Z", "+00:00"))
        video_t = track.t_s - start.timestamp() - video.clock_offset_s
        x, y = projection.to_xy(track.lat, track.lon)
        true_x = np.interp(video_t, table[:, 1], table[:, 2])
        true_y = np.interp(video_t, table[:, 1], table[:, 3])
        # phone GPS, 3 m RMS around the true pose at the fix's time (outliers aside)
        assert np.median(np.hypot(x - true_x, y - true_y)) < 4.0
    assert stood >= STOP_S[0]


def test_synth_refuses_a_pattern_with_a_route(tmp_path: Path) -> None:
    from city360.synth.pipeline import synthesize

    osm = write_grid_osm(tmp_path / "grid.osm")
    with pytest.raises(ConfigError, match="--pattern one-way plans its own walks"):
        synthesize(osm, out=tmp_path / "c", route_gpx=tmp_path / "x.gpx", pattern="one-way")


def test_without_known_junctions_stops_are_mid_street_and_frames_follow_the_clock() -> None:
    route = plan_routes(grid_graph(cols=4, rows=4), max_video_m=5000.0)[0]
    timed = with_stops(route, speed_mps=1.4, rng=np.random.default_rng(5), node_xy={})
    assert timed.timing is not None
    assert pauses_s(timed.timing)
    poses = sample_route(timed, fps=2)
    assert poses.s_m[-1] == pytest.approx(route.length_m, abs=1.3 * 1.4 / 2)
    assert poses.duration_s == pytest.approx(np.floor(timed.timing.duration_s * 2) / 2)
    standing = np.diff(poses.s_m) == 0
    assert standing.sum() / 2 >= STOP_S[0] - 0.5
