"""Ingest on a city from `city360 synth` against its exact ground truth (issue 3, "Done when")."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from city360.city import CityDir
from city360.synth.groundtruth import read_true_poses
from city360.video_store import FrameStore
from city360.video_store.cli import pair_inputs, run_ingest
from city360.video_store.ingest import IngestOptions, ingest_video
from tests.fixtures.videos import angle_error_deg, write_gpx

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ingested_city(synth_city: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the session's synthetic city with every video ingested (2 processes)."""
    city = tmp_path_factory.mktemp("synth-ingest") / "city"
    shutil.copytree(synth_city, city, ignore=shutil.ignore_patterns("trajectories", "graph.json"))
    videos = sorted((city / "videos").glob("*.mp4"))
    tracks = sorted((city / "videos").glob("*.gpx"))
    results, failures = run_ingest(
        pair_inputs(videos, tracks), city, IngestOptions(max_width=512), workers=2
    )
    assert not failures
    assert len(results) == len(videos) >= 2
    return city


def _truth_for(city: Path, trajectory: str) -> tuple[np.ndarray, np.ndarray]:
    poses = CityDir(city).read_poses(trajectory)
    truth = read_true_poses(city / "groundtruth" / "poses" / f"{trajectory}.csv")
    rows = np.searchsorted(truth[:, 1], poses.t_s - 1e-6)  # frames match by video time
    assert np.allclose(truth[rows, 1], poses.t_s, atol=1e-3)
    return np.column_stack([poses.x_m, poses.y_m, poses.heading_deg]), truth[rows]


def test_positions_within_2_m_rmse_and_headings_within_5_deg(ingested_city: Path) -> None:
    errors, heading_errors = [], []
    for trajectory in CityDir(ingested_city).trajectory_ids():
        ours, truth = _truth_for(ingested_city, trajectory)
        errors.append(np.hypot(ours[:, 0] - truth[:, 2], ours[:, 1] - truth[:, 3]))
        heading_errors.append(angle_error_deg(ours[:, 2], truth[:, 6]))
        # each video on its own, too
        assert float(np.sqrt(np.mean(errors[-1] ** 2))) < 2.0, trajectory
    rmse = float(np.sqrt(np.mean(np.concatenate(errors) ** 2)))
    median_heading = float(np.median(np.concatenate(heading_errors)))
    print(f"synth city: position RMSE {rmse:.2f} m, median heading error {median_heading:.2f}°")
    assert rmse < 2.0
    assert median_heading < 5.0


def test_frames_are_a_metre_apart(ingested_city: Path) -> None:
    city = CityDir(ingested_city)
    for trajectory in city.trajectory_ids():
        ours, truth = _truth_for(ingested_city, trajectory)
        steps = np.hypot(np.diff(truth[:, 2]), np.diff(truth[:, 3]))
        assert np.median(steps) == pytest.approx(1.0, abs=0.25)
        assert city.read_trajectory_meta(trajectory).frame_count == len(ours)


def test_round_trip_psnr_at_least_35_db(ingested_city: Path) -> None:
    import av

    city = CityDir(ingested_city)
    trajectory = city.trajectory_ids()[0]
    poses = city.read_poses(trajectory)
    wanted = {int(p): i for i, p in enumerate(poses.source_pts)}
    source: dict[int, np.ndarray] = {}
    with av.open(str(ingested_city / "videos" / f"{trajectory}.mp4")) as container:
        for frame in container.decode(video=0):
            if frame.pts in wanted:
                source[wanted[frame.pts]] = frame.to_ndarray(format="rgb24")
    with FrameStore(city.frames_path(trajectory)) as store:
        assert (store.width, store.height) == source[0].shape[1::-1]
        values = []
        for i in range(0, len(store), 15):
            mse = np.mean((store.get(i).astype(float) - source[i].astype(float)) ** 2)
            values.append(10 * np.log10(255.0**2 / mse))
    print(f"round-trip PSNR: min {min(values):.1f} dB, median {np.median(values):.1f} dB")
    assert min(values) >= 35.0


def test_manifest_extended_not_replaced(ingested_city: Path, synth_city: Path) -> None:
    before = CityDir(synth_city).read_manifest()
    after = CityDir(ingested_city).read_manifest()
    assert after.crs == before.crs
    assert after.synthetic
    assert {s.kind for s in after.sources} >= {"video", "gps"}
    assert "ingest" in after.build


def test_auto_offset_recovers_a_2_s_clock_offset(synth_city: Path, tmp_path: Path) -> None:
    """The GPS clock runs 2 s ahead of the camera's: shift every GPX time by +2 s."""
    import gpxpy

    city = tmp_path / "city"
    shutil.copytree(synth_city, city, ignore=shutil.ignore_patterns("trajectories", "graph.json"))
    video = sorted((city / "videos").glob("*.mp4"))[0]
    gpx = gpxpy.parse(video.with_suffix(".gpx").read_text(encoding="utf-8"))
    points = [p for trk in gpx.tracks for seg in trk.segments for p in seg.points]
    shifted = write_gpx(
        tmp_path / f"{video.stem}.gpx",
        [p.time.timestamp() + 2.0 for p in points],  # type: ignore[union-attr]
        [p.latitude for p in points],
        [p.longitude for p in points],
    )
    result = ingest_video(
        video,
        shifted,
        city,
        projection=CityDir(city).read_manifest().projection,
        options=IngestOptions(max_width=256, offset="auto"),
    )
    print(f"auto clock offset: {result.offset_s:+.3f} s (true +2.000 s)")
    assert result.offset_s == pytest.approx(2.0, abs=0.3)
    ours, truth = _truth_for(city, result.trajectory_id)
    error = np.hypot(ours[:, 0] - truth[:, 2], ours[:, 1] - truth[:, 3])
    assert float(np.sqrt(np.mean(error**2))) < 2.0
