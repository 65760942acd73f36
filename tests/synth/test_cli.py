"""``city360 synth`` on the command line, and the packaged demo extract."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from city360.city import CityDir
from tests.fixtures.cities import write_grid_osm


def run_cli(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    """Run ``city360 <args>`` in-process through the real entry point; return the exit code."""
    from city360.cli import main

    monkeypatch.setattr(sys, "argv", ["city360", *args])
    try:
        main()
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def test_synth_poses_only_passes_every_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    osm = write_grid_osm(tmp_path / "grid.osm")
    out = tmp_path / "city"
    monkeypatch.setenv("COLUMNS", "400")  # the summary names the folder on one line
    code = run_cli(
        monkeypatch,
        "synth",
        "--osm", str(osm),
        "--out", str(out),
        "--seed", "3",
        "--width", "256",
        "--fps", "3",
        "--speed", "1.2",
        "--gps-noise", "2.0",
        "--clock-offset", "-1.5",
        "--max-video-m", "250",
        "--poses-only",
    )  # fmt: skip
    assert code == 0
    manifest = CityDir(out).read_manifest()
    params = dict(manifest.build["synth"])
    # the crop is recorded too, so a condition re-films the very same scene
    assert params.pop("bbox") == list(manifest.bbox)
    assert params == {
        "seed": 3,
        "width": 256,
        "height": 128,
        "fps": 3,
        "speed_mps": 1.2,
        "gps_noise_m": 2.0,
        "gps_model": "phone",
        "gps_quality": False,
        "clock_offset_s": -1.5,
        "max_video_m": 250.0,
        "network": "street",
        "pattern": "coverage",
        "stops": False,
        "poses_only": True,
    }
    err = capsys.readouterr().err
    assert f"synthesized {out}" in err
    assert "© OpenStreetMap contributors" in err


def test_synth_gps_model_preset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from city360.synth.groundtruth import SceneTruth

    osm = write_grid_osm(tmp_path / "grid.osm")
    out = tmp_path / "city"
    code = run_cli(
        monkeypatch, "synth", "--osm", str(osm), "--out", str(out), "--poses-only",
        "--gps-model", "camera", "--fps", "2",
    )  # fmt: skip
    assert code == 0
    params = CityDir(out).read_manifest().build["synth"]
    assert (params["gps_model"], params["gps_noise_m"]) == ("camera", 2.5)
    videos = SceneTruth.load(out / "groundtruth" / "scene.json").videos
    assert {v.gps_model for v in videos} == {"camera"}
    gpx = (out / "videos" / f"{videos[0].name}.gpx").read_text(encoding="utf-8")
    assert gpx.count("<trkpt") >= 9 * videos[0].frame_count / 2  # 10 Hz at 2 fps


@pytest.mark.parametrize(
    ("args", "quality"),
    [
        (["--gps-model", "phone"], False),
        (["--gps-model", "canyon"], True),
        (["--gps-model", "phone", "--gps-quality"], True),
        (["--gps-model", "canyon", "--no-gps-quality"], False),
    ],
)
def test_synth_gps_quality_round_trips_through_the_gpx(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], quality: bool
) -> None:
    """``--gps-quality/--no-gps-quality`` (default: the preset's) writes ``<hdop>``, ``<sat>``
    and ``<fix>`` per point, and ``read_gpx`` reads them back as the walk's fix quality."""
    from city360.synth.groundtruth import SceneTruth
    from city360.video_store.gps import read_track
    from city360.video_store.gps.quality import FIX_NAMES

    osm = write_grid_osm(tmp_path / "grid.osm")
    out = tmp_path / "city"
    code = run_cli(
        monkeypatch, "synth", "--osm", str(osm), "--out", str(out), "--poses-only",
        "--fps", "2", "--max-video-m", "150", *args,
    )  # fmt: skip
    assert code == 0
    assert CityDir(out).read_manifest().build["synth"]["gps_quality"] is quality
    videos = SceneTruth.load(out / "groundtruth" / "scene.json").videos
    gpx_path = out / "videos" / f"{videos[0].name}.gpx"
    gpx = gpx_path.read_text(encoding="utf-8")
    points = gpx.count("<trkpt")
    track = read_track(gpx_path)
    assert len(track) == points > 20
    if not quality:
        assert "<hdop>" not in gpx
        assert "<sat>" not in gpx
        assert "<fix>" not in gpx
        assert track.quality.hdop is None
        return
    assert gpx.count("<hdop>") == gpx.count("<sat>") == gpx.count("<fix>") == points
    hdop, satellites, fix = track.quality.hdop, track.quality.satellites, track.quality.fix_type
    assert hdop is not None
    assert satellites is not None
    assert fix is not None
    assert float(hdop.min()) > 0.0
    assert len(set(hdop.tolist())) > 3  # drawn per fix, not a constant
    assert int(satellites.min()) >= 4
    assert set(fix.tolist()) <= {FIX_NAMES["2d"], FIX_NAMES["3d"]}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--out", "X"],
            "no OSM extract given: pass --osm FILE (.osm, .osm.bz2, .osm.pbf) or --demo",
        ),
        (["--out", "X", "--demo", "--osm", "a.osm"], "pass either --osm FILE or --demo, not both"),
        (["--out", "X", "--osm", "missing.osm"], "OSM file missing.osm does not exist"),
        (["--out", "X", "--osm", "missing.osm", "--width", "1002"], "`width` must be a multiple"),
        (["--out", "X", "--osm", "missing.osm", "--speed", "0"], "`speed` must be in 0.1..30"),
        (["--out", "X", "--demo", "--workers", "0"], "`--workers` must be >= 1 (1 films in"),
        (["--out", "X", "--demo", "--workers", "-1"], "`--workers` must be >= 1 (1 films in"),
    ],
)
def test_bad_input_exits_nonzero_with_a_clear_message(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_cli(monkeypatch, "synth", *args) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"error: {message}" in err
    assert not (tmp_path / "X").exists()


def test_cli_defaults_match_the_library() -> None:
    from city360.synth import cli, film, routes

    assert cli._DEFAULT_WIDTH == film.DEFAULT_WIDTH
    assert cli._DEFAULT_FPS == film.DEFAULT_FPS
    assert cli._DEFAULT_SPEED_MPS == film.DEFAULT_SPEED_MPS
    assert cli._DEFAULT_MAX_VIDEO_M == routes.DEFAULT_MAX_VIDEO_M


def test_demo_extract_is_packaged_small_and_credited() -> None:
    from city360.synth import demo_city_source
    from city360.synth.pipeline import DEMO_FPS, DEMO_SPEED_MPS

    path = demo_city_source()
    assert path.name == "helsinki_centre.osm"
    assert path.stat().st_size < 2_000_000
    attribution = (path.parent / "ATTRIBUTION.md").read_text(encoding="utf-8")
    assert "© OpenStreetMap contributors" in attribution
    assert "ODbL" in attribution or "Open Database License" in attribution
    assert DEMO_FPS / DEMO_SPEED_MPS >= 1.0, "the demo must keep at least one frame per metre"


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_demo_extract_has_junctions_and_named_shops() -> None:
    from city360.maps.osm import load_osm
    from city360.synth import demo_city_source

    osm = load_osm(demo_city_source())
    streets = osm.streets
    assert sum(streets.degree(n) >= 3 for n in streets.nodes) >= 8
    assert sum(bool(p.name) for p in osm.pois) >= 50
    assert 500.0 < osm.street_length_m < 1500.0


def test_sigterm_leaves_no_partial_output(tmp_path: Path) -> None:
    import signal
    import subprocess
    import time

    osm = write_grid_osm(tmp_path / "grid.osm")
    out = tmp_path / "city"
    city360 = Path(sys.executable).with_name("city360")
    process = subprocess.Popen(
        [str(city360), "synth", "--osm", str(osm), "--out", str(out), "--width", "128"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while not list(tmp_path.glob(".city.*.partial")) and time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            time.sleep(0.1)
        assert list(tmp_path.glob(".city.*.partial")), "synth never started writing"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert not out.exists()
    assert not list(tmp_path.glob(".city.*"))
