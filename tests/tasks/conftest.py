"""Fixtures of the tasks tests: a hand-made toy city built once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tasks.toy_city import build_toy_city


@pytest.fixture(scope="session")
def toy_city(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_toy_city(tmp_path_factory.mktemp("toy_city"))


@pytest.fixture(scope="session")
def built_synth_city(synth_city_poses: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``synth_city_poses`` copied and built: trajectories from its true poses (standing in for
    ``city360 ingest``, which needs the video) resampled every metre, then ``graph.json`` by
    the real pose-graph builder."""
    import shutil

    import numpy as np

    from city360.city import CityDir, TrajectoryMeta, TrajectoryPoses
    from city360.pose_graph.build import build_city
    from city360.synth.groundtruth import read_true_poses

    root = tmp_path_factory.mktemp("built") / "city"
    shutil.copytree(synth_city_poses, root)
    city = CityDir(root)
    for path in sorted((city.groundtruth_dir / "poses").glob("*.csv")):
        table = read_true_poses(path)
        steps = np.hypot(np.diff(table[:, 2]), np.diff(table[:, 3]))
        arc = np.concatenate([[0.0], np.cumsum(steps)])
        keep = np.unique(np.searchsorted(arc, np.arange(0.0, arc[-1], 1.0)))
        table = table[keep]
        poses = TrajectoryPoses(
            x_m=table[:, 2],
            y_m=table[:, 3],
            lat=table[:, 4],
            lon=table[:, 5],
            heading_deg=table[:, 6],
            t_s=table[:, 1],
            source_pts=table[:, 0].astype(np.int64),
        )
        meta = TrajectoryMeta(
            id=path.stem,
            source_video=f"videos/{path.stem}.mp4",
            source_sha256="0" * 64,
            gps_source="groundtruth",
            width=512,
            height=256,
            frame_count=len(table),
            spacing_m=1.0,
            length_m=float(arc[-1]),
        )
        folder = city.trajectory_dir(path.stem)
        folder.mkdir(parents=True, exist_ok=True)
        CityDir.write_trajectory_files(folder, meta, poses)
    build_city(city, require_frames=False)
    return root
