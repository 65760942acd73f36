"""Ingest end to end on tiny made-up walks: accuracy, round trip, CLI, and every bad input."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from city360.city import CityDir
from city360.cli import app
from city360.errors import ConfigError, GpsError, OutputError, VideoError
from city360.video_store import FrameStore
from city360.video_store.clean import SmoothTrack
from city360.video_store.cli import pair_inputs, parse_offset
from city360.video_store.heading import HeadingFusion
from city360.video_store.ingest import IngestOptions, ingest_video
from city360.video_store.reckon import GpsCoverageWarning
from city360.video_store.resample import FrameSelection
from city360.video_store.sync import SyncResult
from tests.fixtures.videos import (
    CREATION,
    ORIGIN,
    SyntheticWalk,
    angle_error_deg,
    write_csv_track,
    write_equirect_video,
    write_gpx,
)

SMALL = IngestOptions(max_width=256)


def _listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def _psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return float("inf") if mse == 0 else 10 * np.log10(255.0**2 / mse)


@pytest.fixture(scope="module")
def ingested(synthetic_walk: SyntheticWalk, tmp_path_factory: pytest.TempPathFactory) -> Path:
    city = tmp_path_factory.mktemp("ingested") / "city"
    result = ingest_video(
        synthetic_walk.video,
        synthetic_walk.gpx,
        city,
        projection=synthetic_walk.projection,
        options=SMALL,
    )
    assert result.trajectory_id == "walk"
    assert result.sync_method == "creation_time"
    assert result.visual_heading
    return city


def test_trajectory_files_follow_the_contract(ingested: Path) -> None:
    city = CityDir(ingested)
    assert city.trajectory_ids() == ["walk"]
    meta = city.read_trajectory_meta("walk")
    poses = city.read_poses("walk")
    assert meta.frame_count == len(poses) > 50
    assert (meta.width, meta.height) == (256, 128)
    assert meta.spacing_m == 1.0
    with FrameStore(city.frames_path("walk")) as store:
        assert len(store) == meta.frame_count
    # frames are ~1 m apart along the walk and in time order
    steps = np.hypot(np.diff(poses.x_m), np.diff(poses.y_m))
    assert np.median(steps) == pytest.approx(1.0, abs=0.15)
    assert np.all(np.diff(poses.t_s) > 0)
    assert np.all(np.diff(poses.source_pts) > 0)
    assert meta.length_m == pytest.approx(89.6, rel=0.1)  # 64 s of walking at 1.4 m/s
    assert not list((ingested / "trajectories").glob(".*"))  # no temporary folders left


def test_positions_and_headings_match_the_truth(
    ingested: Path, synthetic_walk: SyntheticWalk
) -> None:
    poses = CityDir(ingested).read_poses("walk")
    truth = np.searchsorted(synthetic_walk.t_s, poses.t_s - 1e-6)
    error = np.hypot(poses.x_m - synthetic_walk.x_m[truth], poses.y_m - synthetic_walk.y_m[truth])
    assert float(np.sqrt(np.mean(error**2))) < 2.0  # 3 m GPS noise
    heading_error = angle_error_deg(poses.heading_deg, synthetic_walk.heading_deg[truth])
    assert float(np.median(heading_error)) < 5.0


def _gga_only_log(track_path: Path, out: Path) -> Path:
    """The track at ``track_path`` written as a GGA-only NMEA log (no date, as cheap loggers
    write), with its checksums."""
    from functools import reduce

    from city360.video_store.gps import read_track

    track = read_track(track_path)
    lines = []
    for t, lat, lon in zip(track.t_s, track.lat, track.lon, strict=True):
        day_s = float(t) % 86_400.0
        hours, rest = divmod(day_s, 3600.0)
        stamp = f"{int(hours):02d}{int(rest // 60):02d}{rest % 60:05.2f}"
        lat_f = f"{int(abs(lat)):02d}{abs(lat) % 1 * 60:07.4f},{'N' if lat >= 0 else 'S'}"
        lon_f = f"{int(abs(lon)):03d}{abs(lon) % 1 * 60:07.4f},{'E' if lon >= 0 else 'W'}"
        body = f"GPGGA,{stamp},{lat_f},{lon_f},1,08,0.9,12.0,M,17.0,M,,"
        checksum = reduce(lambda acc, ch: acc ^ ord(ch), body, 0)
        lines.append(f"${body}*{checksum:02X}")
    out.write_text("\r\n".join(lines) + "\r\n")
    return out


def test_a_gga_only_nmea_log_is_dated_by_the_video(
    ingested: Path, synthetic_walk: SyntheticWalk, tmp_path: Path
) -> None:
    """A log without RMC or ZDA has no date: the video's creation time gives it, and the
    walk ingests as it does from its GPX."""
    log = _gga_only_log(synthetic_walk.gpx, tmp_path / "walk.nmea")
    city = tmp_path / "city"
    result = ingest_video(
        synthetic_walk.video, log, city, projection=synthetic_walk.projection, options=SMALL
    )
    assert result.sync_method == "creation_time"
    poses = CityDir(city).read_poses("walk")
    truth = np.searchsorted(synthetic_walk.t_s, poses.t_s - 1e-6)
    error = np.hypot(poses.x_m - synthetic_walk.x_m[truth], poses.y_m - synthetic_walk.y_m[truth])
    assert float(np.sqrt(np.mean(error**2))) < 2.0  # as from the GPX: 3 m GPS noise
    assert poses.t_s[-1] == pytest.approx(CityDir(ingested).read_poses("walk").t_s[-1], abs=1.0)


def test_stop_adds_no_frames(ingested: Path, synthetic_walk: SyntheticWalk) -> None:
    poses = CityDir(ingested).read_poses("walk")
    during_stop = (poses.t_s > 30.5) & (poses.t_s < 35.5)  # the walker stands 30..36 s
    assert during_stop.sum() <= 1


def test_frames_round_trip_at_35_db(ingested: Path, synthetic_walk: SyntheticWalk) -> None:
    import av

    poses = CityDir(ingested).read_poses("walk")
    wanted = {int(p): i for i, p in enumerate(poses.source_pts)}
    source: dict[int, np.ndarray] = {}
    with av.open(str(synthetic_walk.video)) as container:
        for frame in container.decode(video=0):
            if frame.pts in wanted:
                source[wanted[frame.pts]] = frame.to_ndarray(format="rgb24")
    assert len(source) == len(poses)
    with FrameStore(CityDir(ingested).frames_path("walk")) as store:
        values = [_psnr(store.get(i), source[i]) for i in range(0, len(store), 7)]
    assert min(values) >= 35.0


def test_auto_offset_recovers_two_seconds(offset_walk: SyntheticWalk, tmp_path: Path) -> None:
    result = ingest_video(
        offset_walk.video,
        offset_walk.csv,
        tmp_path / "city",
        projection=offset_walk.projection,
        options=IngestOptions(max_width=128, offset="auto"),
    )
    assert result.sync_method == "auto"
    assert result.offset_s == pytest.approx(2.0, abs=0.3)
    meta = CityDir(tmp_path / "city").read_trajectory_meta("offset")
    assert meta.clock_offset_s == pytest.approx(result.offset_s)


def test_a_weak_auto_offset_is_used_with_a_warning(
    offset_walk: SyntheticWalk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A best lag matching at 0.49 (the rooftop clip against a track of another walk) was
    reported as any other: "clock offset +2.00 s (auto, match 0.49)", no warning."""
    import warnings

    from city360.cli import _show_warning
    from city360.video_store import sync

    monkeypatch.setattr(sync, "estimate_offset", lambda *_args, **_kwargs: (2.0, 0.49))
    with warnings.catch_warnings():
        warnings.simplefilter("default", sync.WeakSyncWarning)
        warnings.showwarning = _show_warning  # as `city360.cli.main` does
        run = CliRunner().invoke(
            app,
            ["ingest", str(offset_walk.video), "--gps", str(offset_walk.csv), "--offset", "auto",
             "--out", str(tmp_path / "city"), "--max-width", "128", "--no-pyramid"],
            env={"CITY360_NO_PROGRESS": "1"},
        )  # fmt: skip

    assert run.exit_code == 0, run.output
    message = (
        f"warning: {offset_walk.video}: the clock offset from motion, +2.00 s, is a weak match "
        "(0.49, below 0.5) and may be wrong (is the track this video's?); if you know the "
        "offset, pass --offset SECONDS"
    )
    assert run.output.count(message) == 1, run.output
    assert CityDir(tmp_path / "city").read_trajectory_meta("offset").clock_offset_s == 2.0


def test_given_offset_is_recorded(offset_walk: SyntheticWalk, tmp_path: Path) -> None:
    result = ingest_video(
        offset_walk.video,
        offset_walk.gpx,
        tmp_path / "city",
        projection=offset_walk.projection,
        options=IngestOptions(max_width=128, offset=2.0, spacing_m=2.0),
    )
    assert (result.offset_s, result.sync_method) == (2.0, "given")
    poses = CityDir(tmp_path / "city").read_poses("offset")
    assert np.median(np.hypot(np.diff(poses.x_m), np.diff(poses.y_m))) == pytest.approx(
        2.0, abs=0.2
    )


def test_existing_trajectory_needs_overwrite(ingested: Path, synthetic_walk: SyntheticWalk) -> None:
    before = _listing(ingested)
    with pytest.raises(OutputError, match="already exists; pass --overwrite to replace it"):
        ingest_video(
            synthetic_walk.video,
            synthetic_walk.gpx,
            ingested,
            projection=synthetic_walk.projection,
            options=SMALL,
        )
    assert _listing(ingested) == before


# bad input: a clear error and nothing written -------------------------------------------------
def _flat_video(path: Path) -> Path:
    frames = [np.full((64, 112, 3), 10 * k, np.uint8) for k in range(5)]
    return write_equirect_video(path, frames, 10)


def _bad_inputs(walk: SyntheticWalk, folder: Path) -> dict[str, tuple[Path, Path, str, type]]:
    folder.mkdir(parents=True, exist_ok=True)
    data = walk.video.read_bytes()
    truncated = folder / "truncated.mp4"
    truncated.write_bytes(data[: len(data) // 3])
    corrupt = folder / "corrupt.mp4"
    corrupt.write_bytes(b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 20)
    empty = folder / "empty.mp4"
    empty.write_bytes(b"")
    later = CREATION.timestamp() + 3600
    lat, lon = walk.projection.to_latlon(walk.x_m[::10], walk.y_m[::10])
    no_overlap = write_gpx(folder / "later.gpx", later + walk.t_s[::10], lat, lon)
    broken_gpx = folder / "broken.gpx"
    broken_gpx.write_text("<gpx><trk><trkseg><trkpt lat='1'")
    empty_gpx = folder / "empty.gpx"
    empty_gpx.write_text("")
    empty_csv = folder / "empty.csv"
    empty_csv.write_text("")
    nan_csv = folder / "nan.csv"
    nan_csv.write_text(
        "time,lat,lon\n" + "".join(f"{CREATION.timestamp() + k},nan,nan\n" for k in range(5))
    )
    t0 = CREATION.timestamp()
    single = write_csv_track(folder / "single.csv", [t0], [60.17], [24.94])
    same = write_csv_track(folder / "same.csv", t0 + np.arange(10), [60.17] * 10, [24.94] * 10)
    v, g = walk.video, walk.gpx
    return {
        "truncated": (truncated, g, r"truncated\.mp4 cannot be opened .*re-copy it", VideoError),
        "corrupt": (
            corrupt,
            g,
            r"corrupt\.mp4 cannot be opened .*corrupt or truncated",
            VideoError,
        ),
        "zero-length": (empty, g, r"empty\.mp4 is empty \(0 bytes\)", VideoError),
        "not 2:1": (_flat_video(folder / "flat.mp4"), g, r"is 112x64 .*neither a 2:1", VideoError),
        "no overlap": (v, no_overlap, r"later\.gpx .* does not overlap video", GpsError),
        "broken gpx": (v, broken_gpx, r"broken\.gpx cannot be parsed", GpsError),
        "empty gpx": (v, empty_gpx, r"empty\.gpx is empty", GpsError),
        "empty csv": (v, empty_csv, r"empty\.csv is empty", GpsError),
        "nan": (v, nan_csv, r"nan\.csv: no usable point among 5 \(5 have NaN", GpsError),
        "single point": (v, single, r"single\.csv has a single usable point", GpsError),
        "identical": (v, same, r"same\.csv: all 10 points are identical", GpsError),
    }


BAD = [
    "truncated",
    "corrupt",
    "zero-length",
    "not 2:1",
    "no overlap",
    "broken gpx",
    "empty gpx",
    "empty csv",
    "nan",
    "single point",
    "identical",
]


def test_a_track_whole_hours_off_the_video_names_the_zone_offset(
    synthetic_walk: SyntheticWalk, tmp_path: Path
) -> None:
    """A phone that logs local time without a zone (read as UTC) put the track 1 h after the
    video; the error said to pair the right files or pass --offset, not which offset fits
    (issue 17, newuser)."""
    video, gps, _, _ = _bad_inputs(synthetic_walk, tmp_path / "in")["no overlap"]
    with pytest.raises(
        GpsError,
        match=re.escape(
            ". The track runs 1 h 00 min after the video, a time-zone difference: one clock "
            "wrote local time without a zone (GPX and CSV times without one are read as UTC); "
            "if so, pass --offset +3600"
        ),
    ):
        ingest_video(
            video, gps, tmp_path / "city", projection=synthetic_walk.projection, options=SMALL
        )


def test_a_short_track_hours_and_seconds_off_the_video_names_the_offset(
    synthetic_walk: SyntheticWalk, tmp_path: Path
) -> None:
    """A GoPro writes local time as its creation time, and its clock ran 17 s ahead; the CSV
    of the walk's first 11 s is in UTC, 8 h later. Shifted by 8 h, the track still ended
    before the video started, so the error named no zone and no offset (issue 17, newuser3
    left it). The hint gives the offset that puts the video's start at the track's first
    fix, and that offset ingests."""
    walk = synthetic_walk
    first = walk.t_s[:120:10]  # 12 fixes at 1 Hz, 11 s: shorter than the clock's 17 s
    lat, lon = walk.projection.to_latlon(walk.x_m[:120:10], walk.y_m[:120:10])
    start = CREATION.timestamp() + 8 * 3600 - 17
    gps = write_csv_track(tmp_path / "utc.csv", start + first, lat, lon)
    city = tmp_path / "city"
    with pytest.raises(
        GpsError,
        match=re.escape(
            ". The track starts 8 h 00 min after the video less 17 s, a time-zone difference "
            "and a camera clock 17 s off: one clock wrote local time without a zone (GPX and "
            "CSV times without one are read as UTC, and cameras often write local time as "
            "their creation time); if so, pass --offset +28783 (the video's start at the "
            "track's first fix)"
        ),
    ):
        ingest_video(walk.video, gps, city, projection=walk.projection, options=SMALL)
    assert not city.exists()
    options = IngestOptions(max_width=256, offset=28783.0)
    with pytest.warns(GpsCoverageWarning, match=r"no GPS fix for video time 11\.1-69\.9 s"):
        result = ingest_video(walk.video, gps, city, projection=walk.projection, options=options)
    assert result.frame_count >= 3
    # the same walk without a zone: the track ends 6 s before the video starts
    with pytest.raises(
        GpsError,
        match=re.escape(
            ". The track ends 6 s before the video starts: if the camera clock is 17 s off, "
            "pass --offset -17 (the video's start at the track's first fix)"
        ),
    ):
        ingest_video(
            walk.video,
            write_csv_track(tmp_path / "local.csv", start - 8 * 3600 + first, lat, lon),
            tmp_path / "city2",
            projection=walk.projection,
            options=SMALL,
        )


def test_offset_auto_out_of_reach_names_the_files_and_the_offset(
    synthetic_walk: SyntheticWalk, tmp_path: Path
) -> None:
    """`--offset auto` with a track an hour off (beyond its ±600 s search) said only "GPS
    track and video overlap too little to estimate the clock offset within ±600 s; pass
    --offset SECONDS", naming neither file (issue 17, newuser4)."""
    video, gps, _, _ = _bad_inputs(synthetic_walk, tmp_path / "in")["no overlap"]
    options = IngestOptions(max_width=256, offset="auto")
    with pytest.raises(GpsError) as caught:
        ingest_video(
            video, gps, tmp_path / "city", projection=synthetic_walk.projection, options=options
        )
    message = str(caught.value)
    assert message.startswith("--offset auto searches ±600 s around the video's clock, but GPS ")
    assert f"track {gps} (" in message
    assert f") starts 1.0 h after video {video} (" in message
    assert message.endswith(
        "from its creation time): pair the right files, or pass --offset SECONDS (GPS time "
        "minus video time; --offset +3600 puts the video's start at the track's first fix)"
    )


@pytest.mark.parametrize("case", BAD)
def test_bad_input_leaves_no_city(synthetic_walk: SyntheticWalk, tmp_path: Path, case: str) -> None:
    video, gps, message, error = _bad_inputs(synthetic_walk, tmp_path / "in")[case]
    city = tmp_path / "city"
    with pytest.raises(error, match=message):
        ingest_video(video, gps, city, projection=synthetic_walk.projection, options=SMALL)
    assert not city.exists()


def test_bad_input_leaves_existing_city_untouched(
    ingested: Path, synthetic_walk: SyntheticWalk, tmp_path: Path
) -> None:
    city = tmp_path / "city"
    shutil.copytree(ingested, city)
    before = _listing(city)
    cases = _bad_inputs(synthetic_walk, tmp_path / "in")
    for case in ("truncated", "no overlap", "identical"):
        video, gps, message, error = cases[case]
        with pytest.raises(error, match=message):
            ingest_video(
                video, gps, city, projection=synthetic_walk.projection,
                options=IngestOptions(max_width=256, overwrite=True),
            )  # fmt: skip
        assert _listing(city) == before


def test_truncated_mid_stream_leaves_nothing(synthetic_walk: SyntheticWalk, tmp_path: Path) -> None:
    """A file whose index is whole but whose samples end early fails during encoding."""
    import av

    with av.open(str(synthetic_walk.video)) as container:
        frames = [
            np.asarray(f.to_ndarray(format="rgb24"), np.uint8) for f in container.decode(video=0)
        ]
    full = write_equirect_video(tmp_path / "fast.mp4", frames, 10, faststart=True)
    data = full.read_bytes()
    cut = tmp_path / "in" / "cut.mp4"
    cut.parent.mkdir()
    cut.write_bytes(data[: int(len(data) * 0.7)])
    city = tmp_path / "city"
    with pytest.raises(VideoError, match=r"cut\.mp4 (is truncated|breaks off|is truncated or)"):
        ingest_video(
            cut, synthetic_walk.gpx, city, projection=synthetic_walk.projection, options=SMALL
        )
    assert not city.exists()


def test_a_walk_filmed_in_another_city_is_refused(
    synthetic_walk: SyntheticWalk, tmp_path: Path
) -> None:
    """Photos of the Netherlands ingested into a city in Tokyo went in: the city's bbox grew
    to span the globe (a later ``build --osm`` crops all of it) and build said the walks
    "never meet" at x = -3077636 m. A walk more than MAX_CITY_RADIUS_M from the city's CRS
    origin belongs to another city."""
    from city360.geo import LocalProjection
    from city360.video_store.photos import ingest_photos
    from tests.video_store.test_photos import photo_walk

    far = LocalProjection(ORIGIN[0] + 2.0, ORIGIN[1])  # a city 222 km north
    city = tmp_path / "city"
    with pytest.raises(
        GpsError,
        match=r"walk\.gpx puts the walk 22\d km from the centre of the city .*city "
        r"\(\d+\.\d+, \d+\.\d+\); a city spans at most 100 km: ingest it into a city of its "
        r"own \(--out ANOTHER_CITY\)",
    ):
        ingest_video(synthetic_walk.video, synthetic_walk.gpx, city, projection=far, options=SMALL)
    photos, _x, _y = photo_walk(tmp_path / "seq")
    with pytest.raises(GpsError, match=r"seq.* puts the walk 22\d km from the centre of"):
        ingest_photos("seq", photos, None, city, projection=far)
    assert not city.exists()


def test_fragmented_video_cut_in_its_fragment_says_truncated(
    synthetic_walk: SyntheticWalk, tmp_path: Path
) -> None:
    """A fragmented MP4 (DASH segments joined, a camera's recovered file) cut inside its
    fragment: the fragment header still promises every frame, the packets stop early, and
    ingest said the video "moves only 0.3 m along GPS track" instead of that it is cut."""
    import av

    with av.open(str(synthetic_walk.video)) as container:
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    fragmented = tmp_path / "frag.mp4"
    flags = {"movflags": "frag_keyframe+empty_moov+default_base_moof"}
    with av.open(str(fragmented), "w", format="mp4", options=flags) as container:
        container.metadata["creation_time"] = CREATION.isoformat().replace("+00:00", "Z")
        stream = container.add_stream("libx264", rate=10)
        stream.height, stream.width = frames[0].shape[:2]
        stream.pix_fmt = "yuv420p"
        stream.options = {"g": str(len(frames)), "crf": "20", "preset": "veryfast"}
        for image in frames:
            container.mux(stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")))
        container.mux(stream.encode())
    cut = tmp_path / "in" / "cut.mp4"
    cut.parent.mkdir()
    cut.write_bytes(fragmented.read_bytes()[: fragmented.stat().st_size // 4])
    city = tmp_path / "city"
    with pytest.raises(
        VideoError,
        match=rf"cut\.mp4 is truncated: its header promises {len(frames)} frames but only "
        r"\d+ are in the file; re-copy it from the camera",
    ):
        ingest_video(
            cut, synthetic_walk.gpx, city, projection=synthetic_walk.projection, options=SMALL
        )
    assert not city.exists()


# CLI ---------------------------------------------------------------------------------------
def test_parse_offset() -> None:
    assert parse_offset(None) is None
    assert parse_offset("AUTO") == "auto"
    assert parse_offset("-2.5") == -2.5
    with pytest.raises(ConfigError, match="--offset must be a number of seconds or 'auto'"):
        parse_offset("soon")


def test_pairing_by_stem(tmp_path: Path) -> None:
    files = {n: tmp_path / n for n in ["a.mp4", "b.mp4", "a.gpx", "b.csv", "x.gpx"]}
    for path in files.values():
        path.write_bytes(b"x")
    pairs = pair_inputs([files["a.mp4"], files["b.mp4"]], [files["b.csv"], files["a.gpx"]])
    assert pairs == [(files["a.mp4"], files["a.gpx"]), (files["b.mp4"], files["b.csv"])]
    assert pair_inputs([files["a.mp4"]], [files["x.gpx"]]) == [(files["a.mp4"], files["x.gpx"])]
    assert pair_inputs([files["a.mp4"], files["b.mp4"]], [files["a.gpx"]])[1] == (
        files["b.mp4"],
        None,
    )
    with pytest.raises(ConfigError, match=r"x\.gpx matches no video by name"):
        pair_inputs([files["a.mp4"], files["b.mp4"]], [files["a.gpx"], files["x.gpx"]])


def test_cli_ingests_two_videos_in_parallel(
    synthetic_walk: SyntheticWalk, offset_walk: SyntheticWalk, tmp_path: Path
) -> None:
    city = tmp_path / "city"
    args = [
        "ingest", str(synthetic_walk.video), str(offset_walk.video),
        "--gps", str(offset_walk.gpx), "--gps", str(synthetic_walk.gpx),
        "--out", str(city), "--max-width", "128", "--spacing-m", "2", "--workers", "2",
    ]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert re.search(r"walk: \d+ frames 128x64, \d+ m, clock offset \+0\.00 s", result.output)
    assert CityDir(city).trajectory_ids() == ["offset", "walk"]
    manifest = CityDir(city).read_manifest()
    assert {s.kind for s in manifest.sources} == {"video", "gps"}
    assert len(manifest.sources) == 4
    assert manifest.build["ingest"]["spacing_m"] == 2.0
    assert manifest.stats["trajectories"] == 2
    south, west, north, east = manifest.bbox
    assert south < 60.17 < north
    assert west < 24.9385 < east
    # a new city's CRS is centred on the tracks
    assert manifest.origin_lat == pytest.approx(60.1700, abs=0.001)


def test_cli_error_exit_code_and_message(synthetic_walk: SyntheticWalk, tmp_path: Path) -> None:
    empty = tmp_path / "empty.mp4"
    empty.write_bytes(b"")
    env = {**os.environ, "CITY360_NO_PROGRESS": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "city360.cli", "ingest", str(empty), "--gps",
         str(synthetic_walk.gpx), "--out", str(tmp_path / "city")],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 1
    assert "error:" in run.stderr
    assert "is empty (0 bytes); re-copy it from the camera" in " ".join(run.stderr.split())
    assert not (tmp_path / "city").exists()


def _walk_east(steps_m: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """Kept-frame positions of a walk east with the given steps between frames (metres)."""
    x = np.concatenate([[0.0], np.cumsum(steps_m)])
    return x, np.zeros_like(x)


def test_the_aided_poses_may_close_a_gap_the_plain_smoothing_opened() -> None:
    """The filmed Hamburg canyon twin of seed 4: the plain track leapt 10.26 m between two
    kept frames (over the 10 m limit), the aided one walked it in steps of a metre. Ingest took
    the aided poses only when both had the same gaps, so it kept the plain ones, split the
    walk in two there, and the build failed ("the 2 trajectories share no junction"); seed 1
    with the stiffer burst smoothing lost its aided poses over a 10.09 m leap the same way.
    Closing a gap splits nothing."""
    from city360.video_store.ingest import _opens_no_gap

    plain = _walk_east([1.0] * 542 + [10.26] + [1.0] * 300)
    aided = _walk_east([1.0] * 552 + [0.26] + [1.0] * 290)
    assert _opens_no_gap(aided, plain, spacing_m=1.0)


def test_the_aided_poses_are_refused_when_they_split_a_walk_the_gps_keeps_whole() -> None:
    """A gap of their own would cut the trajectory where its GPS is continuous: the plain
    smoothing is kept. A gap both tracks have (a GPS jump) is no reason to refuse."""
    from city360.video_store.ingest import _opens_no_gap

    plain = _walk_east([1.0] * 100 + [40.0] + [1.0] * 100)
    same_jump = _walk_east([1.0] * 100 + [39.0] + [1.0] * 100)
    assert _opens_no_gap(same_jump, plain, spacing_m=1.0)
    own_gap = _walk_east([1.0] * 50 + [11.0] + [1.0] * 49 + [39.0] + [1.0] * 100)
    assert not _opens_no_gap(own_gap, plain, spacing_m=1.0)


def _kept_every_metre_east(
    t: np.ndarray, x: np.ndarray, start_gps: float
) -> tuple[FrameSelection, HeadingFusion, SyncResult]:
    """Ingest's frame selection, heading and sync for a walker heading east (90 degrees) along
    ``x`` (metres at video times ``t``, seconds; the video starts at GPS time ``start_gps``):
    a frame kept at the first sample of every metre, the pictures' heading 90 degrees."""
    kept = np.flatnonzero(np.diff(np.floor(x), prepend=-1.0) > 0)
    selection = FrameSelection(
        source_index=kept.astype(np.int64),
        source_pts=kept.astype(np.int64),
        t_s=t[kept],
        x_m=x[kept],
        y_m=np.zeros(kept.shape[0]),
        heading_deg=np.full(kept.shape[0], 90.0),
        distance_m=x[kept],
    )
    heading = HeadingFusion(
        heading_deg=np.full(kept.shape[0], 90.0),
        visual=True,
        residual_deg=0.0,
        dense_t_s=t,
        dense_heading_deg=np.full(t.shape, 90.0),
    )
    return selection, heading, SyncResult(video_start_gps=start_gps, offset_s=0.0, method="given")


def _smooth_east(
    t: np.ndarray, x: np.ndarray, start_gps: float, speed_mps: float | np.ndarray, **fixes: Any
) -> SmoothTrack:
    """The plain smoothing of a walker heading east (90 degrees) along ``x`` (metres at video
    times ``t``, seconds; GPS time ``start_gps`` at video time 0) at ``speed_mps``, with the
    fixes given as :class:`SmoothTrack` fields (``meas_*``, ``cut_*``, ``dropped``)."""
    fixes.setdefault("dropped", 0)
    return SmoothTrack(
        t_s=start_gps + t,
        x_m=x,
        y_m=np.zeros_like(x),
        speed_mps=np.broadcast_to(np.asarray(speed_mps, float), t.shape).copy(),
        heading_deg=np.full(t.shape, 90.0),
        **fixes,
    )


def _walk_with_a_creeping_stop(
    seed: int,
) -> tuple[FrameSelection, HeadingFusion, SmoothTrack, SyncResult, IngestOptions, tuple[int, int]]:
    """Ingest's inputs for a walker going east at 1.2 m/s for 60 s, standing 90 s, then
    walking on for 60 s (motion samples at 2 Hz). The fixes (1 Hz, 1 m noise) creep 16 m
    north while the walker stands and come back over the next 40 s: the canyon GPS of the
    filmed Hamburg twin of seed 8 (12 m over its 85 s stop at 713.5-798.5 s). The plain
    smoothing stands (the cleaning holds a creep still), so frames are kept every metre of
    the walk and only the stop's first and last frames across it. Returns (selection,
    heading, smooth, sync, options, the stop's two kept positions in the selection)."""
    start_gps = 1_700_000_000.0
    t = np.arange(0.0, 210.0 + 1e-9, 0.5)
    speed = np.where((t >= 60.0) & (t < 150.0), 0.0, 1.2)
    x = np.concatenate([[0.0], np.cumsum(np.diff(t) * speed[:-1])])
    creep = np.interp(t, [0.0, 60.0, 150.0, 190.0, 210.0], [0.0, 0.0, 16.0, 0.0, 0.0])
    fix = np.arange(0, t.shape[0], 2)
    rng = np.random.default_rng(seed)
    smooth = _smooth_east(
        t,
        x,
        start_gps,
        speed,
        meas_t_s=start_gps + t[fix],
        meas_x_m=x[fix] + rng.normal(0.0, 1.0, fix.shape),
        meas_y_m=creep[fix] + rng.normal(0.0, 1.0, fix.shape),
    )
    selection, heading, sync = _kept_every_metre_east(t, x, start_gps)
    stop = int(np.flatnonzero(np.diff(selection.t_s) > 60.0)[0])
    return selection, heading, smooth, sync, IngestOptions(), (stop, stop + 1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_stop_the_plain_track_stands_across_gets_one_aided_position(seed: int) -> None:
    """Frames are kept every metre along the plain track, so across a stop only its first
    and last frames are kept. The aided track followed the fixes' creep between them and
    leapt over the 10 m limit; ingest refused the aided poses for that gap and wrote the
    plain ones (filmed Hamburg canyon twins of seeds 8 and 9, and seed 1 with
    `burst_process_scale` 0.5). With `hold_still_leaps` (on by default since round
    twenty-two) the stop is smoothed again standing still: one position for both frames, no
    gap, and the aided poses are written; off, the plain ones."""
    from city360.city import max_pose_step_m
    from city360.video_store.ingest import _aided_positions, _choose_positions

    selection, heading, smooth, sync, opts, (a, b) = _walk_with_a_creeping_stop(seed)
    free = _aided_positions(selection, heading, smooth, sync, opts)
    assert free is not None
    assert np.hypot(free[0][b] - free[0][a], free[1][b] - free[1][a]) > 10.0  # the defect
    off = dataclasses.replace(opts, hold_still_leaps=False)
    np.testing.assert_array_equal(
        _choose_positions(selection, heading, smooth, sync, off)[1], selection.y_m
    )  # off: the plain poses
    assert opts.hold_still_leaps
    x_m, y_m = _choose_positions(selection, heading, smooth, sync, opts)
    assert not np.array_equal(y_m, selection.y_m)  # the aided poses, not the plain ones
    assert float(np.hypot(np.diff(x_m), np.diff(y_m)).max()) <= max_pose_step_m(opts.spacing_m)
    assert np.hypot(x_m[b] - x_m[a], y_m[b] - y_m[a]) < 0.01


@pytest.mark.parametrize("seed", [0, 1])
def test_reweight_runs_keeps_the_aided_poses_off_a_burst_the_cleaning_kept(seed: int) -> None:
    """A walk east at 1.4 m/s for 120 s whose fixes (1 Hz, 3 m noise) sit 20 m north over
    50-70 s (a canyon burst the cleaning kept; the plain smoothing is the truth here, so
    only the aided smoother is judged). Main's aided poses follow the burst; with
    `IngestOptions.reweight_runs` (off by default) they stay near the walk."""
    from city360.video_store.ingest import _aided_positions

    start_gps = 1_700_000_000.0
    t = np.arange(0.0, 120.0 + 1e-9, 0.5)
    x = 1.4 * t
    fix = np.arange(0, t.shape[0], 2)
    ramp = np.clip(np.minimum(t[fix] - 50.0, 70.0 - t[fix]) / 2.0, 0.0, 1.0)
    burst_m = np.where((t[fix] >= 50.0) & (t[fix] < 70.0), ramp, 0.0) * 20.0
    rng = np.random.default_rng(seed)
    smooth = _smooth_east(
        t,
        x,
        start_gps,
        1.4,
        meas_t_s=start_gps + t[fix],
        meas_x_m=x[fix] + rng.normal(0.0, 3.0, fix.shape),
        meas_y_m=burst_m + rng.normal(0.0, 3.0, fix.shape),
    )
    selection, heading, sync = _kept_every_metre_east(t, x, start_gps)
    burst = (selection.t_s >= 50.0) & (selection.t_s < 70.0)

    def burst_rmse(opts: IngestOptions) -> float:
        aided = _aided_positions(selection, heading, smooth, sync, opts)
        assert aided is not None
        error = np.hypot(aided[0] - selection.x_m, aided[1])
        return float(np.sqrt(np.mean(error[burst] ** 2)))

    assert not IngestOptions().reweight_runs
    assert burst_rmse(IngestOptions()) > 6.0  # main: the aided poses follow the burst
    assert burst_rmse(IngestOptions(reweight_runs=True)) < 3.0


def _walk_with_a_cut_burst(
    seed: int,
) -> tuple[FrameSelection, HeadingFusion, SmoothTrack, SyncResult]:
    """Ingest's inputs for a walk east at 1.4 m/s for 120 s, fixes at 1 Hz with 1 m noise,
    and a canyon burst 20 m north over 30-90 s that the cleaning cut but for one fix of it
    (70 s, kept between two cut runs, as the burst test kept 137 s of the filmed Hamburg
    canyon twin of seed 8) and its ramp fixes (30 and 90 s), which lean 8 m north. The
    plain smoothing is the truth here, so only the aided smoother is judged."""
    start_gps = 1_700_000_000.0
    t = np.arange(0.0, 120.0 + 1e-9, 0.5)
    x = 1.4 * t
    fix_t = np.arange(0.0, 121.0)
    lean = np.zeros(fix_t.shape)
    lean[(fix_t > 30.0) & (fix_t < 90.0)] = 20.0
    lean[np.isin(fix_t, [30.0, 90.0])] = 8.0
    cut = (fix_t > 30.0) & (fix_t < 90.0) & (fix_t != 70.0)
    rng = np.random.default_rng(seed)
    noise = rng.normal(0.0, 1.0, (2, fix_t.shape[0]))
    smooth = _smooth_east(
        t,
        x,
        start_gps,
        1.4,
        dropped=int(cut.sum()),
        meas_t_s=start_gps + fix_t[~cut],
        meas_x_m=1.4 * fix_t[~cut] + noise[0][~cut],
        meas_y_m=lean[~cut] + noise[1][~cut],
        meas_sigma_m=np.full(int((~cut).sum()), 5.0),
        cut_t_s=start_gps + fix_t[cut],
    )
    selection, heading, sync = _kept_every_metre_east(t, x, start_gps)
    return selection, heading, smooth, sync


@pytest.mark.parametrize("seed", [0, 1])
def test_cut_island_fixes_keeps_the_bridge_off_a_burst_fix_left_between_two_cut_runs(
    seed: int,
) -> None:
    """The aided smoother bridges a cut burst with the pictures' heading, pinned to the fixes
    there: a fix of the burst the cleaning kept between two cut runs of it pulls the bridge
    its way (1.45-1.76 m off at the worst kept frame, seeds 0-3; 0.19-0.53 m without it).
    With `IngestOptions.cut_island_fixes` (1 by default since round twenty-eight) it is left
    out; with `cut_ramp_fixes` (off) the ramp fixes next to the cut are left out too."""
    from city360.video_store.ingest import _aided_positions

    selection, heading, smooth, sync = _walk_with_a_cut_burst(seed)
    bridge = (selection.t_s >= 25.0) & (selection.t_s <= 95.0)

    def worst_m(opts: IngestOptions) -> float:
        aided = _aided_positions(selection, heading, smooth, sync, opts)
        assert aided is not None
        return float(np.hypot(aided[0] - selection.x_m, aided[1])[bridge].max())

    off = IngestOptions(cut_island_fixes=0, cut_readmit_m=None)
    assert IngestOptions().cut_island_fixes == 1
    assert IngestOptions().cut_ramp_fixes == 0
    assert worst_m(off) > 1.4  # the kept burst fix pulls the bridge
    assert worst_m(dataclasses.replace(off, cut_island_fixes=1)) < 0.7
    assert worst_m(IngestOptions()) < 0.7
    assert worst_m(dataclasses.replace(off, cut_island_fixes=1, cut_ramp_fixes=1)) < 0.7


@pytest.mark.parametrize("seed", [0, 1])
def test_cut_readmit_m_puts_back_the_clean_fixes_a_burst_cut_took_with_it(seed: int) -> None:
    """A walk east at 1.4 m/s, fixes at 1 Hz with 1 m noise (reporting 5 m), a burst 20 m
    north over 30-60 s (ramp fixes 8 m), and a cut that runs on to 80 s: the burst test cut
    20 s of clean fixes after the burst (the filmed Hamburg canyon twin of seed 8 lost
    138-153 s so). The GPS-only speed over the cut reads 0.9 m/s (its smoothing runs
    straight across it), so the aided bridge comes up short. Without the rule, over
    60-80 s: 1.28-1.72 m RMS (seeds 0-3); with `IngestOptions.cut_readmit_m` 6 m (the
    default since round twenty-eight) the clean fixes at the cut's end are put back:
    0.60-0.74 m."""
    from city360.video_store.ingest import _aided_positions

    start_gps = 1_700_000_000.0
    t = np.arange(0.0, 120.0 + 1e-9, 0.5)
    x = 1.4 * t
    fix_t = np.arange(0.0, 121.0)
    lean = np.where((fix_t > 30.0) & (fix_t < 60.0), 20.0, 0.0)
    lean[np.isin(fix_t, [30.0, 60.0])] = 8.0
    cut = (fix_t > 30.0) & (fix_t < 80.0)
    noise = np.random.default_rng(seed).normal(0.0, 1.0, (2, fix_t.shape[0]))
    fix_x, fix_y = 1.4 * fix_t + noise[0], lean + noise[1]
    smooth = _smooth_east(
        t,
        x,
        start_gps,
        np.where((t > 30.0) & (t < 80.0), 0.9, 1.4),
        dropped=int(cut.sum()),
        meas_t_s=start_gps + fix_t[~cut],
        meas_x_m=fix_x[~cut],
        meas_y_m=fix_y[~cut],
        meas_sigma_m=np.full(int((~cut).sum()), 5.0),
        cut_t_s=start_gps + fix_t[cut],
        cut_x_m=fix_x[cut],
        cut_y_m=fix_y[cut],
        cut_sigma_m=np.full(int(cut.sum()), 5.0),
    )
    selection, heading, sync = _kept_every_metre_east(t, x, start_gps)
    after = (selection.t_s >= 60.0) & (selection.t_s <= 80.0)

    def rmse_after(opts: IngestOptions) -> float:
        aided = _aided_positions(selection, heading, smooth, sync, opts)
        assert aided is not None
        error = np.hypot(aided[0] - selection.x_m, aided[1])[after]
        return float(np.sqrt(np.mean(error**2)))

    assert IngestOptions().cut_readmit_m == 6.0
    assert rmse_after(IngestOptions(cut_readmit_m=None)) > 1.2  # the bridge comes up short
    assert rmse_after(IngestOptions()) < 0.8
