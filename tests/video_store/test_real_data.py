"""Real third-party 360° clips (no GPS of their own) ingest with a track made here."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from city360.city import CityDir
from city360.geo import LocalProjection
from city360.video_store import FrameStore
from city360.video_store.decode import probe_video
from city360.video_store.ingest import IngestOptions, ingest_video
from tests.fixtures.videos import write_csv_track, write_gpx

ORIGIN = LocalProjection(35.6984, 139.7731)  # Akihabara, for the made-up tracks


def _straight_track(duration_s: float, start_utc: float) -> tuple[np.ndarray, ...]:
    """A walk north-east at 1.4 m/s, one fix a second."""
    t = np.arange(0.0, duration_s + 1.0, 1.0)
    distance = 1.4 * t
    lat, lon = ORIGIN.to_latlon(
        distance * np.sin(np.radians(45)), distance * np.cos(np.radians(45))
    )
    return start_utc + t, lat, lon


def test_gvr_test_room_ingests_with_a_csv_track(shared_data: Path, tmp_path: Path) -> None:
    video = shared_data / "video360" / "testRoom1_1920Mono.mp4"
    info = probe_video(video)
    assert (info.width, info.height) == (1920, 960)
    assert info.creation_time_utc is None  # so the track's first fix is the video's start
    start = datetime(2024, 1, 1, tzinfo=UTC).timestamp()
    track = write_csv_track(tmp_path / "room.csv", *_straight_track(info.duration_s, start))
    result = ingest_video(
        video, track, tmp_path / "city", projection=ORIGIN, options=IngestOptions(max_width=512)
    )
    assert result.sync_method == "track_start"
    assert (result.width, result.height) == (512, 256)
    assert result.length_m == pytest.approx(1.4 * info.duration_s, rel=0.15)
    poses = CityDir(tmp_path / "city").read_poses(result.trajectory_id)
    assert np.median(np.abs(((poses.heading_deg - 45 + 180) % 360) - 180)) < 10
    with FrameStore(CityDir(tmp_path / "city").frames_path(result.trajectory_id)) as store:
        assert len(store) == result.frame_count >= 12
        frame = store.get(0)
    assert frame.shape == (256, 512, 3)
    assert frame.std() > 20  # the grid room, not a blank picture


def test_shaka_dash_vr_clip_ingests_with_a_gpx_track(shared_data: Path, tmp_path: Path) -> None:
    folder = shared_data / "video360" / "shaka_dash_vr"
    parts = [folder / "init.mp4", *sorted(folder.glob("segment_*.m4s"))]
    video = tmp_path / "shaka_vr.mp4"  # DASH init + media segments concatenate to one MP4
    video.write_bytes(b"".join(p.read_bytes() for p in parts))
    info = probe_video(video)
    assert (info.width, info.height) == (720, 360)
    start = info.creation_time_utc or datetime(2024, 1, 1, tzinfo=UTC).timestamp()
    t, lat, lon = _straight_track(info.duration_s or 24.0, start)
    track = write_gpx(tmp_path / "shaka_vr.gpx", t, lat, lon)
    result = ingest_video(
        video, track, tmp_path / "city", projection=ORIGIN, options=IngestOptions(spacing_m=2.0)
    )
    assert (result.width, result.height) == (720, 360)
    assert result.frame_count >= 10
    meta = CityDir(tmp_path / "city").read_trajectory_meta("shaka_vr")
    assert meta.spacing_m == 2.0
    with FrameStore(CityDir(tmp_path / "city").frames_path("shaka_vr")) as store:
        y, u, v = store.get_yuv(len(store) - 1)
    assert y.shape == (360, 720)
    assert u.shape == v.shape == (180, 360)


def test_shaka_dash_vr_manifest_ingests_as_its_joined_segments(
    shared_data: Path, tmp_path: Path
) -> None:
    """``ingest dash.mpd`` read the manifest's XML as a corrupt video; it now decodes the six
    saved segments (of 35 listed) and writes what the joined clip writes."""
    folder = shared_data / "video360" / "shaka_dash_vr"
    joined = tmp_path / "joined.mp4"
    parts = [folder / "init.mp4", *(folder / f"segment_{n}.m4s" for n in range(6))]
    joined.write_bytes(b"".join(p.read_bytes() for p in parts))
    info = probe_video(folder / "dash.mpd")
    assert (info.width, info.height, info.duration_s) == (720, 360, probe_video(joined).duration_s)
    t, lat, lon = _straight_track(24.0, info.creation_time_utc or 0.0)
    track = write_gpx(tmp_path / "walk.gpx", t, lat, lon)
    options = IngestOptions(spacing_m=2.0, pyramid=False)
    from_manifest = ingest_video(
        folder / "dash.mpd", track, tmp_path / "a", projection=ORIGIN, options=options
    )
    from_joined = ingest_video(joined, track, tmp_path / "b", projection=ORIGIN, options=options)
    assert from_manifest.frame_count == from_joined.frame_count >= 10
    assert from_manifest.video_sha256 == from_joined.video_sha256  # the video's bytes
    a, b = CityDir(tmp_path / "a"), CityDir(tmp_path / "b")
    assert a.read_trajectory_meta("dash").source_video == str(folder / "dash.mpd")
    np.testing.assert_array_equal(a.read_poses("dash").x_m, b.read_poses("joined").x_m)
    assert a.frames_path("dash").read_bytes() == b.frames_path("joined").read_bytes()


def test_the_real_clip_saved_as_hls_ingests_as_the_joined_clip(
    shared_data: Path, tmp_path: Path
) -> None:
    """The real 360° clip as a streaming site serves it over HLS (its H.264 remuxed by
    FFmpeg's HLS muxer into 2 s fragmented-MP4 segments, no re-encoding): ``ingest
    walk.m3u8`` writes the poses and frames the joined MP4 writes. (Transport-stream segments
    are tested in test_hls.py, encoded by FFmpeg itself.)"""
    import av

    folder = shared_data / "video360" / "shaka_dash_vr"
    joined = tmp_path / "joined.mp4"
    parts = [folder / "init.mp4", *(folder / f"segment_{n}.m4s" for n in range(6))]
    joined.write_bytes(b"".join(p.read_bytes() for p in parts))
    playlist = tmp_path / "download" / "walk.m3u8"
    playlist.parent.mkdir()
    options = {
        "hls_time": "2",
        "hls_playlist_type": "vod",
        "hls_segment_type": "fmp4",
        "hls_fmp4_init_filename": "init.mp4",
    }
    with (
        av.open(str(joined)) as source,
        av.open(str(playlist), "w", format="hls", options=options) as target,
    ):
        video = source.streams.video[0]
        stream = target.add_stream_from_template(video)
        for packet in source.demux(video):
            if packet.dts is not None:
                packet.stream = stream
                target.mux(packet)
    assert len(list(playlist.parent.glob("*.m4s"))) >= 3
    info = probe_video(playlist)
    assert (info.width, info.height) == (720, 360)
    assert info.creation_time_utc is None  # the muxer wrote no creation time
    # the track starts at the MP4's creation time, which the playlist's video starts at too
    t, lat, lon = _straight_track(24.0, probe_video(joined).creation_time_utc or 0.0)
    track = write_gpx(tmp_path / "walk.gpx", t, lat, lon)
    ingest = IngestOptions(spacing_m=2.0, pyramid=False)
    from_hls = ingest_video(playlist, track, tmp_path / "a", projection=ORIGIN, options=ingest)
    from_mp4 = ingest_video(joined, track, tmp_path / "b", projection=ORIGIN, options=ingest)
    assert from_hls.frame_count == from_mp4.frame_count >= 10
    a, b = CityDir(tmp_path / "a"), CityDir(tmp_path / "b")
    np.testing.assert_array_equal(a.read_poses("walk").x_m, b.read_poses("joined").x_m)
    with FrameStore(a.frames_path("walk")) as hls, FrameStore(b.frames_path("joined")) as mp4:
        for k in range(len(hls)):
            np.testing.assert_array_equal(hls.get(k), mp4.get(k))


def test_gopro_video_ingests_with_its_own_gpmf_track(shared_data: Path, tmp_path: Path) -> None:
    """No --gps: the GPMF track inside the file is used, on the video's own clock (the MP4's
    creation_time is the camera's local time, 8 h off UTC, and must not be trusted)."""
    video = shared_data / "gopro_gpmf" / "max-heromode.mp4"
    result = ingest_video(
        video,
        None,
        tmp_path / "city",
        projection=LocalProjection(33.1267, -117.3273),
        options=IngestOptions(projection="equirect", spacing_m=1.0),  # HERO mode: 848x480
    )
    assert result.sync_method == "embedded"
    assert result.offset_s == 0.0
    assert 5 <= result.frame_count <= 25  # ~10 s of walking at ~1.3 m/s
    poses = CityDir(tmp_path / "city").read_poses(result.trajectory_id)
    assert np.all(np.abs(poses.lat - 33.1267) < 1e-3)
