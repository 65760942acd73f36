"""Dead reckoning of a video's head or tail without GPS (issue 17: a real camera's GPS has no
fix for its first seconds, or loses it before the video ends; those frames were dropped without
a word)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from city360.city import CityDir
from city360.cli import app
from city360.video_store.ingest import IngestOptions, IngestResult, ingest_video
from city360.video_store.reckon import GpsCoverageWarning, ReckonParams
from tests.fixtures.videos import CREATION, SyntheticWalk, make_walk, write_gpx

SMALL = IngestOptions(max_width=128, pyramid=False)
RECKONING = IngestOptions(max_width=128, pyramid=False, reckon=ReckonParams(enabled=True))
FIRST_FIX_S = 12.0
"""Video time of the cut track's first fix: a 12 s cold start."""
LAST_FIX_S = 58.0
"""Video time of the cut track's last fix: the last 12 s of the 70 s video have none."""


@dataclass(frozen=True)
class CutWalk:
    walk: SyntheticWalk
    gpx: Path
    """The walk's track with no fix before :data:`FIRST_FIX_S` or after :data:`LAST_FIX_S`."""


@pytest.fixture(scope="module")
def cut_walk(tmp_path_factory: pytest.TempPathFactory) -> CutWalk:
    """The 70 s test walk (a stop at 30-36 s), 1 m GPS noise, its track cut at both ends."""
    folder = tmp_path_factory.mktemp("cut_walk")
    walk = make_walk(folder, "cut", noise_m=1.0)
    rng = np.random.default_rng(7)
    gps_t = np.arange(FIRST_FIX_S, LAST_FIX_S + 0.5, 1.0)
    gx = np.interp(gps_t, walk.t_s, walk.x_m) + rng.normal(0, 1.0, gps_t.shape)
    gy = np.interp(gps_t, walk.t_s, walk.y_m) + rng.normal(0, 1.0, gps_t.shape)
    lat, lon = walk.projection.to_latlon(gx, gy)
    gpx = write_gpx(folder / "cut.gpx", CREATION.timestamp() + gps_t, lat, lon)
    return CutWalk(walk, gpx)


def _ingest(cut: CutWalk, city: Path, options: IngestOptions) -> tuple[IngestResult, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = ingest_video(
            cut.walk.video, cut.gpx, city, projection=cut.walk.projection, options=options
        )
    messages = [str(w.message) for w in caught if issubclass(w.category, GpsCoverageWarning)]
    return result, messages


def _errors_m(cut: CutWalk, city: Path) -> tuple[np.ndarray, np.ndarray]:
    """``(t_s, position error in metres)`` of every stored pose against the walk's truth."""
    poses = CityDir(city).read_poses("cut")
    true_x = np.interp(poses.t_s, cut.walk.t_s, cut.walk.x_m)
    true_y = np.interp(poses.t_s, cut.walk.t_s, cut.walk.y_m)
    return poses.t_s, np.hypot(poses.x_m - true_x, poses.y_m - true_y)


def test_frames_outside_the_gps_are_kept_and_posed_within_a_few_metres(
    cut_walk: CutWalk, tmp_path: Path
) -> None:
    """Before: the first pose was at the first fix (12 s) and the last at the last (58 s), the
    head's 17 m and tail's 13 m of footage dropped without a word."""
    result, messages = _ingest(cut_walk, tmp_path / "city", RECKONING)

    t_s, error_m = _errors_m(cut_walk, tmp_path / "city")
    assert t_s[0] < 0.5
    assert t_s[-1] > 69.0
    head, tail = t_s < FIRST_FIX_S, t_s > LAST_FIX_S
    assert head.sum() >= 12  # ~17 m at one frame a metre
    assert tail.sum() >= 8  # ~10 m walked before the walk's end, then standing
    assert float(error_m[head].max()) < 5.0  # the smoothed speed at the edge is 15 % low
    assert float(error_m[tail].max()) < 5.0
    meta = CityDir(tmp_path / "city").read_trajectory_meta("cut")
    assert meta.dead_reckoned_s is not None
    assert len(meta.dead_reckoned_s) == 2
    assert meta.dead_reckoned_s[0][0] == pytest.approx(t_s[0])
    assert result.dead_reckoned_s == tuple(tuple(r) for r in meta.dead_reckoned_s)
    assert len(messages) == 2
    assert messages[0].startswith(
        f"{cut_walk.walk.video}: no GPS fix for video time 0.0-11.9 s at its start "
        "(11.9 s, 120 frames); dead-reckoned 11.9 s ("
    )
    assert messages[0].endswith("m) from the first fix with the pictures' turns and the GPS "
                                "speed there")  # fmt: skip
    assert messages[1].startswith(
        f"{cut_walk.walk.video}: no GPS fix for video time 58.1-69.9 s at its end "
        "(11.8 s, 119 frames); dead-reckoned "
    )


def test_reckoning_stops_at_its_bound(cut_walk: CutWalk, tmp_path: Path) -> None:
    options = IngestOptions(
        max_width=128, pyramid=False, reckon=ReckonParams(enabled=True, max_s=5.0)
    )
    _, messages = _ingest(cut_walk, tmp_path / "city", options)

    t_s, error_m = _errors_m(cut_walk, tmp_path / "city")
    assert FIRST_FIX_S - 5.2 < t_s[0] < FIRST_FIX_S - 4.5
    assert float(error_m.max()) < 4.0
    assert "; dropped the remaining 7.0 s (beyond the bound of 5 s or 30 m of dead " in messages[0]

    options = IngestOptions(
        max_width=128, pyramid=False, reckon=ReckonParams(enabled=True, max_m=4.0)
    )
    _, messages = _ingest(cut_walk, tmp_path / "city_m", options)
    t_s, _ = _errors_m(cut_walk, tmp_path / "city_m")
    head_walked_m = 1.4 * (FIRST_FIX_S - t_s[0])
    assert 3.0 < head_walked_m < 5.0
    assert "beyond the bound of 20 s or 4 m of dead reckoning" in messages[0]


def test_the_off_switch_drops_the_uncovered_frames_with_a_warning(
    cut_walk: CutWalk, tmp_path: Path
) -> None:
    options = SMALL  # the default: off
    result, messages = _ingest(cut_walk, tmp_path / "city", options)

    t_s, _ = _errors_m(cut_walk, tmp_path / "city")
    assert t_s[0] >= FIRST_FIX_S
    assert t_s[-1] <= LAST_FIX_S + 0.1
    assert result.dead_reckoned_s == ()
    assert CityDir(tmp_path / "city").read_trajectory_meta("cut").dead_reckoned_s is None
    assert messages == [
        f"{cut_walk.walk.video}: no GPS fix for video time 0.0-11.9 s at its start (11.9 s, "
        "120 frames); dropped those frames (dead reckoning is off)",
        f"{cut_walk.walk.video}: no GPS fix for video time 58.1-69.9 s at its end (11.8 s, "
        "119 frames); dropped those frames (dead reckoning is off)",
    ]


def test_a_covered_video_ingests_as_before(synthetic_walk: SyntheticWalk, tmp_path: Path) -> None:
    """The test walk's track ends 0.9 s before its video: under ``min_s``, nothing changes,
    with reckoning on or off, and no warning."""
    results = []
    for name, reckon in (("on", ReckonParams(enabled=True)), ("off", ReckonParams())):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ingest_video(
                synthetic_walk.video,
                synthetic_walk.gpx,
                tmp_path / name,
                projection=synthetic_walk.projection,
                options=IngestOptions(max_width=128, pyramid=False, reckon=reckon),
            )
        results.append(CityDir(tmp_path / name).read_poses("walk"))
    on, off = results
    np.testing.assert_array_equal(on.x_m, off.x_m)
    np.testing.assert_array_equal(on.t_s, off.t_s)
    assert CityDir(tmp_path / "on").read_trajectory_meta("walk").dead_reckoned_s is None


def test_the_cli_prints_the_warning(cut_walk: CutWalk, tmp_path: Path) -> None:
    from city360.cli import _show_warning

    with warnings.catch_warnings():
        warnings.simplefilter("default", GpsCoverageWarning)
        warnings.showwarning = _show_warning  # as `city360.cli.main` does
        run = CliRunner().invoke(
            app,
            ["ingest", str(cut_walk.walk.video), "--gps", str(cut_walk.gpx),
             "--out", str(tmp_path / "city"), "--max-width", "128", "--no-pyramid",
             "--dead-reckon"],
            env={"CITY360_NO_PROGRESS": "1"},
        )  # fmt: skip

    assert run.exit_code == 0, run.output
    output = " ".join(run.output.split())
    assert f"warning: {cut_walk.walk.video}: no GPS fix for video time 0.0-11.9 s" in output
    assert "; dead-reckoned without GPS: video 0.0-" in output
