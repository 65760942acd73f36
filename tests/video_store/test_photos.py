"""Photo sequences (interval-shot geotagged 360° JPEGs) ingest like a video (issue 17)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from city360.city import CityDir
from city360.cli import app
from city360.geo import LocalProjection
from city360.video_store.photos import ingest_photos
from tests.fixtures.videos import CREATION, ORIGIN, _far_scene, render_frame, write_gpx


def _dms(value: float) -> tuple[float, float, float]:
    degrees = int(value)
    minutes = int((value - degrees) * 60)
    return (float(degrees), float(minutes), (value - degrees - minutes / 60) * 3600)


def write_photo(
    path: Path, image: np.ndarray, t_utc: float, lat: float | None, lon: float | None
) -> Path:
    """A JPEG with EXIF GPS position (when given) and GPS time, as a 360° camera writes it."""
    from datetime import UTC, datetime

    from PIL import Image

    stamp = datetime.fromtimestamp(t_utc, tz=UTC)
    exif = Image.Exif()
    gps: dict[int, object] = {
        29: stamp.strftime("%Y:%m:%d"),
        7: (float(stamp.hour), float(stamp.minute), stamp.second + stamp.microsecond / 1e6),
    }
    if lat is not None and lon is not None:
        gps.update({1: "N", 2: _dms(lat), 3: "E", 4: _dms(lon)})
    exif[0x8825] = gps
    Image.fromarray(image).save(path, quality=92, exif=exif.tobytes())
    return path


def photo_walk(
    folder: Path, *, count: int = 30, step_m: float = 2.0, gap_after: int | None = None,
    positions: bool = True,
) -> tuple[list[Path], np.ndarray, np.ndarray]:  # fmt: skip
    """``count`` photos every ``step_m`` north along a street (a 40 m jump after photo
    ``gap_after``), one a second; returns the photos and their true x/y."""
    folder.mkdir(parents=True, exist_ok=True)
    projection = LocalProjection(*ORIGIN)
    y = np.arange(count) * step_m
    if gap_after is not None:
        y[gap_after + 1 :] += 40.0
    x = np.zeros(count)
    lat, lon = projection.to_latlon(x, y)
    scene = _far_scene(256, 128, 0)
    ground = _far_scene(256, 64, 2)
    photos = [
        write_photo(
            folder / f"IMG_{k:04d}.jpg",
            render_frame(scene, ground, 0.0, float(y[k])),
            CREATION.timestamp() + k,
            float(lat[k]) if positions else None,
            float(lon[k]) if positions else None,
        )
        for k in range(count)
    ]
    return photos, x, y


def test_photo_folder_ingests_into_a_trajectory(tmp_path: Path) -> None:
    photos, _x, y = photo_walk(tmp_path / "seq")
    results = ingest_photos(
        "seq", photos[::-1], None, tmp_path / "city", projection=LocalProjection(*ORIGIN)
    )
    assert [r.trajectory_id for r in results] == ["seq"]
    city = CityDir(tmp_path / "city")
    poses = city.read_poses("seq")
    assert len(poses) == 30
    assert np.allclose(poses.y_m, y, atol=0.05)  # sorted by time, not by the order given
    assert np.allclose(np.mod(poses.heading_deg + 180, 360) - 180, 0.0, atol=1.0)
    from city360.video_store import FrameStore

    with FrameStore(city.frames_path("seq")) as store:
        assert (len(store), store.width, store.height) == (30, 256, 128)


def test_gap_splits_the_sequence(tmp_path: Path) -> None:
    photos, _, _ = photo_walk(tmp_path / "gappy", gap_after=14)
    results = ingest_photos(
        "gappy", photos, None, tmp_path / "city", projection=LocalProjection(*ORIGIN)
    )
    assert [(r.trajectory_id, r.frame_count) for r in results] == [
        ("gappy", 15),
        ("gappy_2", 15),
    ]


def test_photos_placed_by_a_gpx_track(tmp_path: Path) -> None:
    photos, x, y = photo_walk(tmp_path / "untagged", positions=False)
    projection = LocalProjection(*ORIGIN)
    lat, lon = projection.to_latlon(x, y)
    gpx = write_gpx(tmp_path / "untagged.gpx", CREATION.timestamp() + np.arange(30.0), lat, lon)
    results = ingest_photos("untagged", photos, gpx, tmp_path / "city", projection=projection)
    poses = CityDir(tmp_path / "city").read_poses("untagged")
    assert results[0].frame_count == len(poses) >= 25
    assert float(np.abs(poses.x_m).max()) < 1.5


def test_cli_ingests_a_photo_folder(tmp_path: Path) -> None:
    photo_walk(tmp_path / "street")
    result = CliRunner().invoke(
        app, ["ingest", str(tmp_path / "street"), "--out", str(tmp_path / "city")]
    )
    assert result.exit_code == 0, result.output
    assert CityDir(tmp_path / "city").trajectory_ids() == ["street"]


def test_cli_single_photo_message(shared_data: Path, tmp_path: Path) -> None:
    photo = shared_data / "pano360" / "gopro_max_GSAG2002.JPG"
    env = {**os.environ, "CITY360_NO_PROGRESS": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "city360.cli", "ingest", str(photo), "--out", str(tmp_path / "c")],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert "a trajectory needs several photos" in " ".join(run.stderr.split())


@pytest.mark.parametrize("suffix", [".gpx", ".csv"])
def test_cli_track_passed_as_video_is_used_as_gps(tmp_path: Path, suffix: str) -> None:
    """A lone track among the inputs, beside a photo folder, becomes its --gps."""
    _photos, x, y = photo_walk(tmp_path / "walk", positions=False)
    lat, lon = LocalProjection(*ORIGIN).to_latlon(x, y)
    if suffix == ".gpx":
        track = write_gpx(tmp_path / "walk.gpx", CREATION.timestamp() + np.arange(30.0), lat, lon)
    else:
        from tests.fixtures.videos import write_csv_track

        track = write_csv_track(
            tmp_path / "walk.csv", CREATION.timestamp() + np.arange(30.0), lat, lon
        )
    result = CliRunner().invoke(
        app, ["ingest", str(tmp_path / "walk"), str(track), "--out", str(tmp_path / "city")]
    )
    assert result.exit_code == 0, result.output
    assert "used as --gps" in result.output
