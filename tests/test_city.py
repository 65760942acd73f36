from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from city360._atomic import atomic_dir
from city360.city import CityDir, CityManifest, TrajectoryMeta, TrajectoryPoses
from city360.errors import CityFormatError, InputFileError, OutputError


def _poses(n: int) -> TrajectoryPoses:
    k = np.arange(n, dtype=np.float64)
    return TrajectoryPoses(
        x_m=k,
        y_m=-k,
        lat=60 + k * 1e-5,
        lon=24 + k * 1e-5,
        heading_deg=np.full(n, 135.0),
        t_s=k / 2,
        source_pts=(k * 1000).astype(np.int64),
    )


def test_manifest_and_trajectory_round_trip(tmp_path: Path) -> None:
    city = CityDir(tmp_path / "c")
    manifest = CityManifest(
        name="c",
        crs="+proj=tmerc +lat_0=60 +lon_0=24",
        origin_lat=60.0,
        origin_lon=24.0,
        bbox=(59.9, 23.9, 60.1, 24.1),
    )
    city.write_manifest(manifest)
    assert city.read_manifest() == manifest
    meta = TrajectoryMeta(
        id="t1",
        source_video="v.mp4",
        source_sha256="0" * 64,
        gps_source="v.gpx",
        width=64,
        height=32,
        frame_count=5,
        spacing_m=1.0,
    )
    city.trajectories_dir.mkdir()
    with atomic_dir(city.trajectory_dir("t1")) as folder:
        CityDir.write_trajectory_files(folder, meta, _poses(5))
    assert city.trajectory_ids() == ["t1"]
    assert city.read_trajectory_meta("t1") == meta
    poses = city.read_poses("t1")
    np.testing.assert_allclose(poses.x_m, np.arange(5))
    np.testing.assert_array_equal(poses.source_pts, [0, 1000, 2000, 3000, 4000])


def test_poses_file_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "poses.csv"
    with pytest.raises(InputFileError, match=r"poses\.csv is missing; re-run `city360 ingest`"):
        TrajectoryPoses.from_csv(path)
    path.write_text("a,b\n1,2\n")
    with pytest.raises(CityFormatError, match="header must be index,x_m"):
        TrajectoryPoses.from_csv(path)
    good = _poses(3).to_csv()
    path.write_text(good.replace("\n2,", "\n5,"))
    with pytest.raises(CityFormatError, match="column 'index' must count"):
        TrajectoryPoses.from_csv(path)
    path.write_text(good.splitlines()[0] + "\n")
    with pytest.raises(CityFormatError, match="has no poses"):
        TrajectoryPoses.from_csv(path)
    path.write_text(good.replace("135.0000", "north"))
    with pytest.raises(CityFormatError, match="a value is not a number"):
        TrajectoryPoses.from_csv(path)


def test_manifest_errors(tmp_path: Path) -> None:
    city = CityDir(tmp_path)
    with pytest.raises(InputFileError, match="is not a city directory"):
        city.read_manifest()
    city.manifest_path.write_text("{not json")
    with pytest.raises(CityFormatError, match=r"city\.json: not valid JSON \(line 1"):
        city.read_manifest()
    city.manifest_path.write_text('{"name": "x"}')
    with pytest.raises(CityFormatError, match="field 'crs': Field required"):
        city.read_manifest()


def test_atomic_dir_leaves_nothing_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "out"

    def crash_midway() -> None:
        with atomic_dir(target) as folder:
            (folder / "half.txt").write_text("x")
            raise RuntimeError("crash")

    with pytest.raises(RuntimeError):
        crash_midway()
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "f").write_text("x")
    with (
        pytest.raises(OutputError, match="already exists and is not empty"),
        atomic_dir(tmp_path / "full"),
    ):
        pass


def test_atomic_dir_never_clobbers_a_folder_filled_meanwhile(tmp_path: Path) -> None:
    target = tmp_path / "out"

    def race() -> None:
        with atomic_dir(target) as folder:
            (folder / "mine.txt").write_text("x")
            target.mkdir()
            (target / "theirs.txt").write_text("y")

    with pytest.raises(OutputError, match="was created by someone else meanwhile"):
        race()
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert (target / "theirs.txt").read_text() == "y"
