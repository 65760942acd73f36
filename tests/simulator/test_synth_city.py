"""Walking a synthetic city end to end: synth -> ingest -> build -> make, with the real frame
store, checked against the city's ground truth (junctions and streets)."""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import city360
from city360.geo import angle_diff_deg, bearing_deg
from city360.simulator.env import CityEnv
from city360.synth.groundtruth import SceneTruth

pytestmark = pytest.mark.slow

JUNCTION_TOLERANCE_M = 8.0


@pytest.fixture(scope="module")
def built_city(synth_city: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of ``synth_city`` ingested (GPS from its GPX) and built with its OSM extract."""
    from city360.city import CityDir
    from city360.pose_graph.build import build_city
    from city360.video_store.ingest import ingest_video

    city = tmp_path_factory.mktemp("simulator-synth") / "city"
    shutil.copytree(synth_city, city)
    projection = CityDir(city).read_manifest().projection
    for video in sorted((city / "videos").glob("*.mp4")):
        ingest_video(video, video.with_suffix(".gpx"), city, projection=projection)
    build_city(city, osm_path=city / "map" / "extract.osm")
    return city


@pytest.fixture(scope="module")
def truth(built_city: Path) -> SceneTruth:
    return SceneTruth.load(built_city / "groundtruth" / "scene.json")


@pytest.fixture
def env(built_city: Path) -> Iterator[CityEnv]:
    with city360.make(
        built_city, map=False, privileged_info=True, view_width=128, view_height=96
    ) as made:
        yield made


def _street_bearings(truth: SceneTruth, junction_id: int) -> list[float]:
    """Bearings (degrees) of the streets leaving a ground-truth junction."""
    bearings = []
    for street in truth.streets:
        line = street.polyline_xy if street.u == junction_id else street.polyline_xy[::-1]
        if junction_id not in (street.u, street.v):
            continue
        (x0, y0), (x1, y1) = line[0], line[1]
        bearings.append(bearing_deg(x1 - x0, y1 - y0))
    return bearings


def _nearest_junction(truth: SceneTruth, x_m: float, y_m: float) -> tuple[int, float]:
    best = min(truth.junctions, key=lambda j: math.hypot(j.x_m - x_m, j.y_m - y_m))
    return best.id, math.hypot(best.x_m - x_m, best.y_m - y_m)


def _natural_label(turn_deg: float) -> str:
    return "UP" if abs(turn_deg) <= 30.0 else ("LEFT" if turn_deg < 0 else "RIGHT")


def test_w_runs_to_a_junction_and_stops(env: CityEnv, truth: SceneTruth) -> None:
    for seed in range(3):
        obs, info = env.reset(seed=seed, options=None)
        for _ in range(40):
            if obs["branch_mask"].any():
                break
            obs, _, _, _, info = env.step("W", "LARGE")
        assert obs["branch_mask"].any()
        pose = info["pose"]
        junction, distance = _nearest_junction(truth, pose["x_m"], pose["y_m"])
        assert distance <= JUNCTION_TOLERANCE_M, (junction, distance)
        _, _, _, _, again = env.step("W", "LARGE")
        assert again["moved_m"] == 0.0
        assert again["offset_m"] == info["offset_m"]


def test_offered_branches_match_ground_truth_turns(env: CityEnv, truth: SceneTruth) -> None:
    degree = {j.id: j.degree for j in truth.junctions}
    checked = 0
    for segment in env.world.iter_segments():
        node = env.world.nodes[segment.v]
        junction, distance = _nearest_junction(truth, node.x_m, node.y_m)
        if degree[junction] < 3:
            continue
        assert distance <= JUNCTION_TOLERANCE_M
        _, info = env.reset(options={"segment": segment.id, "offset_m": segment.walk_m})
        leaving = _street_bearings(truth, junction)
        # the street arrived on is the one leaving most nearly opposite the segment's chord
        # (frame headings at the very end already turn with the camera's next street)
        chord = bearing_deg(segment.x_m[-1] - segment.x_m[0], segment.y_m[-1] - segment.y_m[0])
        back = min(range(len(leaving)), key=lambda i: abs(angle_diff_deg(leaving[i], chord + 180)))
        arrival = (leaving[back] + 180.0) % 360.0
        expected = {
            _natural_label(angle_diff_deg(b, arrival)): b
            for i, b in enumerate(leaving)
            if i != back
        }
        assert set(info["branches"]) == set(expected), (segment.id, info["branches"], expected)
        for label, street_bearing in expected.items():
            env.reset(options={"segment": segment.id, "offset_m": segment.walk_m})
            _, _, _, _, took = env.step(label)
            landed = env.world.segment(took["segment"])
            start = env.world.nodes[landed.u]
            assert _nearest_junction(truth, start.x_m, start.y_m)[0] == junction
            # the new segment heads down the ground-truth street of that label (its chord: the
            # streets are straight, the first frames round the corner)
            heading = bearing_deg(landed.x_m[-1] - landed.x_m[0], landed.y_m[-1] - landed.y_m[0])
            assert abs(angle_diff_deg(heading, street_bearing)) <= 20.0, (segment.id, label)
        checked += 1
    assert checked >= 12


def test_real_frames_render_on_both_paths(built_city: Path) -> None:
    from city360._gl import gl_available

    if not gl_available():
        pytest.skip("no OpenGL context (EGL) on this machine")
    views = []
    for renderer in ("gl", "cpu"):
        with city360.make(
            built_city, map=False, renderer=renderer, view_width=160, view_height=120
        ) as env:
            obs, _ = env.reset(seed=4)
            obs, *_ = env.step("D", "SMALL")
            views.append(obs["view"].astype(np.float64))
    mse = float(np.mean((views[0] - views[1]) ** 2))
    assert mse == 0 or 10 * math.log10(255.0**2 / mse) >= 40.0
    assert views[0].std() > 10  # a real street scene, not a blank frame
