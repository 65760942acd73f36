"""An HLS stream saved to disk (playlist + segments) is read as one video."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from city360.city import file_sha256
from city360.errors import ConfigError, InputFileError
from city360.video_store.decode import iter_frames, probe_video
from city360.video_store.hls import read_hls
from city360.video_store.inputs import sort_inputs
from city360.video_store.stream_parts import concat_url, parts_sha256


def _playlist(folder: Path, body: str, *, name: str = "walk.m3u8") -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:4\n" + body)
    return path


def _media(names: list[str], *, head: str = "", end: bool = True) -> str:
    lines = [head] if head else []
    for name in names:
        lines += ["#EXTINF:4.0,", name]
    return "\n".join([*lines, "#EXT-X-ENDLIST\n" if end else ""])


def _touch(folder: Path, *names: str) -> None:
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(b"x")


def test_a_media_playlist_of_transport_streams_is_its_segments_in_order(tmp_path: Path) -> None:
    _touch(tmp_path, "seg10.ts", "seg9.ts", "seg11.ts")
    playlist = _playlist(tmp_path, _media(["seg9.ts", "seg10.ts", "seg11.ts"]))
    parts = read_hls(playlist)
    assert parts.initialization is None  # a transport stream carries its own headers
    assert [p.name for p in parts.segments] == ["seg9.ts", "seg10.ts", "seg11.ts"]
    assert (parts.listed, parts.missing) == (3, None)
    assert concat_url(parts) == "concat:" + "|".join(str(p) for p in parts.files)


def test_a_fragmented_mp4_playlist_starts_with_its_map(tmp_path: Path) -> None:
    _touch(tmp_path, "v/init.mp4", "v/a.m4s", "v/b.m4s")
    playlist = _playlist(
        tmp_path, _media(["v/a.m4s", "v/b.m4s"], head='#EXT-X-MAP:URI="v/init.mp4"')
    )
    assert [p.name for p in read_hls(playlist).files] == ["init.mp4", "a.m4s", "b.m4s"]


def test_a_partial_download_keeps_the_segments_up_to_the_first_missing(tmp_path: Path) -> None:
    _touch(tmp_path, "s0.ts", "s1.ts", "s3.ts")
    parts = read_hls(_playlist(tmp_path, _media([f"s{n}.ts" for n in range(5)])))
    assert [p.name for p in parts.segments] == ["s0.ts", "s1.ts"]
    assert (parts.listed, parts.missing) == (5, "s2.ts")


@pytest.mark.parametrize(("present", "said"), [(1, "the one segment"), (3, "the 3 segments")])
def test_a_partial_download_is_named_with_what_ingests_and_the_fix(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, present: int, said: str
) -> None:
    """The warning said "1 are beside it"; it names the missing segment, what ingests, and
    what to do."""
    _touch(tmp_path, *(f"s{n}.ts" for n in range(present)))
    playlist = _playlist(tmp_path, _media([f"s{n}.ts" for n in range(5)]))
    with caplog.at_level("WARNING", logger="city360.video_store.inputs"):
        assert sort_inputs([tmp_path]).videos == [playlist]
    assert f"lists 5 media segments, but s{present}.ts is missing" in caplog.text
    assert f"ingesting {said} before it" in caplog.text
    assert f"Download the missing segments into {tmp_path}" in caplog.text


def test_byte_ranges_of_one_file_read_that_file(tmp_path: Path) -> None:
    _touch(tmp_path, "whole.mp4")
    body = _media(
        ["whole.mp4", "whole.mp4"],
        head='#EXT-X-MAP:URI="whole.mp4",BYTERANGE="800@0"\n#EXT-X-BYTERANGE:1000@800',
    )
    parts = read_hls(_playlist(tmp_path, body))
    assert (parts.initialization, [p.name for p in parts.segments]) == (None, ["whole.mp4"])


def test_of_a_master_playlist_the_best_video_saved_is_taken(tmp_path: Path) -> None:
    """A download keeps one quality of several; the master lists them all, and audio."""
    _touch(tmp_path, "low/0.ts", "low/1.ts", "audio/0.aac")
    _playlist(tmp_path, _media(["0.ts", "1.ts"]), name="low/index.m3u8")
    _playlist(tmp_path, _media(["0.aac"]), name="audio/index.m3u8")
    master = _playlist(
        tmp_path,
        '#EXT-X-STREAM-INF:BANDWIDTH=99000000,CODECS="mp4a.40.2"\naudio/index.m3u8\n'
        '#EXT-X-STREAM-INF:BANDWIDTH=8000000,RESOLUTION=3840x1920,CODECS="avc1.640033,mp4a.40.2"'
        "\nhigh/index.m3u8\n"
        '#EXT-X-STREAM-INF:BANDWIDTH=1000000,RESOLUTION=1280x640,CODECS="avc1.64001f"\n'
        "low/index.m3u8\n",
        name="master.m3u8",
    )
    parts = read_hls(master)
    assert parts.manifest == master
    assert parts.rendition == "index.m3u8"
    assert parts.files == (tmp_path / "low" / "0.ts", tmp_path / "low" / "1.ts")
    assert set(parts.playlists) == {
        tmp_path / name for name in ("audio/index.m3u8", "high/index.m3u8", "low/index.m3u8")
    }
    _touch(tmp_path, "high/0.ts")
    _playlist(tmp_path, _media(["0.ts"]), name="high/index.m3u8")
    assert read_hls(master).files == (tmp_path / "high" / "0.ts",)


@pytest.mark.parametrize(
    ("body", "error", "words"),
    [
        (
            '#EXT-X-KEY:METHOD=AES-128,URI="key.bin"\n#EXTINF:4.0,\ns0.ts\n#EXT-X-ENDLIST\n',
            ConfigError,
            r"encrypted \(AES-128\).*decrypt",
        ),
        (
            "#EXTINF:4.0,\ns0.ts\n#EXT-X-DISCONTINUITY\n#EXTINF:4.0,\ns1.ts\n#EXT-X-ENDLIST\n",
            ConfigError,
            r"encoded separately.*one file",
        ),
        ("#EXT-X-ENDLIST\n", ConfigError, "lists no media segment"),
        (
            '#EXT-X-STREAM-INF:BANDWIDTH=1,CODECS="mp4a.40.2"\naudio.m3u8\n',
            ConfigError,
            "no video stream",
        ),
        (_media(["gone0.ts", "gone1.ts"]), InputFileError, r"looked for gone0\.ts.*download"),
    ],
)
def test_a_playlist_without_a_saved_video_is_refused_by_name(
    tmp_path: Path, body: str, error: type[Exception], words: str
) -> None:
    _touch(tmp_path, "s0.ts", "s1.ts")
    with pytest.raises(error, match=words):
        read_hls(_playlist(tmp_path, body))


def test_a_remote_address_is_looked_for_beside_the_playlist_and_its_token_never_shown(
    tmp_path: Path,
) -> None:
    playlist = _playlist(
        tmp_path, _media(["https://cdn.example.com/v/s0.ts?token=SECRET", "s1.ts"])
    )
    with pytest.raises(InputFileError, match=r"s0\.ts") as caught:
        read_hls(playlist)
    assert "SECRET" not in str(caught.value)
    _touch(tmp_path, "s0.ts", "s1.ts")
    assert [p.name for p in read_hls(playlist).files] == ["s0.ts", "s1.ts"]


@pytest.mark.parametrize(
    ("text", "words"), [("<MPD/>", "not an HLS playlist"), (b"\xff\xfe\x00", "cannot be read")]
)
def test_a_file_that_is_not_a_playlist_is_refused(
    tmp_path: Path, text: str | bytes, words: str
) -> None:
    path = tmp_path / "x.m3u8"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    with pytest.raises(ConfigError, match=words):
        read_hls(path)


def _encode_hls(folder: Path, segment_type: str) -> Path:
    """A 64x32 clip of 56 frames at 8 fps saved by FFmpeg's own HLS muxer, 2 s segments of
    ``segment_type`` (``mpegts`` or ``fmp4``); the playlist.

    56 frames, not fewer: FFmpeg's HLS muxer starts the clip at 0.25 s, and FFmpeg's duration
    of the joined fMP4 fragments counts that start (two frames more than decode), which only
    the truncation check's slack (2 %, one frame) absorbs from 48 frames on."""
    import av

    folder.mkdir(parents=True)
    options = {
        "hls_time": "2",
        "hls_playlist_type": "vod",
        "hls_segment_type": segment_type,
        "hls_fmp4_init_filename": "init.mp4",
    }
    playlist = folder / "walk.m3u8"
    with av.open(str(playlist), "w", format="hls", options=options) as container:
        stream = container.add_stream("libx264", rate=8)
        stream.width, stream.height, stream.pix_fmt = 64, 32, "yuv420p"
        stream.options = {"g": "8", "crf": "20", "preset": "veryfast"}
        for k in range(56):
            image = np.full((32, 64, 3), 4 * k, np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return playlist


@pytest.mark.parametrize("segment_type", ["mpegts", "fmp4"])
def test_a_saved_stream_decodes_as_ffmpegs_own_hls_reader_reads_it(
    tmp_path: Path, segment_type: str
) -> None:
    import av

    playlist = _encode_hls(tmp_path / "download", segment_type)
    parts = read_hls(playlist)
    assert len(parts.segments) >= 3  # several segments, or the test shows nothing
    info = probe_video(playlist)
    assert (info.width, info.height) == (64, 32)
    decoded = [f.to_rgb() for f in iter_frames(info)]
    with av.open(str(playlist)) as container:  # FFmpeg's HLS demuxer: the reference
        expected = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    assert len(decoded) == len(expected) == 56
    assert all(np.abs(a.astype(int) - b).max() <= 2 for a, b in zip(decoded, expected, strict=True))
    joined = tmp_path / "joined"
    joined.write_bytes(b"".join(p.read_bytes() for p in parts.files))
    assert parts_sha256(parts) == file_sha256(joined)


def test_a_download_folder_is_one_video_named_by_its_playlist(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``ingest download/`` found no video (a .m3u8 and .ts files), and ``download/*`` made a
    video of every segment."""
    playlist = _encode_hls(tmp_path / "download", "mpegts")
    folder = playlist.parent
    assert sort_inputs([folder]).videos == [playlist]
    assert sort_inputs(sorted(folder.iterdir())).videos == [playlist]
    with caplog.at_level("WARNING", logger="city360.video_store.inputs"):
        assert sort_inputs([folder / "walk1.ts"]).videos == [playlist]
    assert "is a part of the saved stream" in caplog.text


def test_a_masters_media_playlists_are_its_parts(tmp_path: Path) -> None:
    """Saved side by side, the master and its qualities' playlists are one video, even when
    only one quality's segments were downloaded."""
    _touch(tmp_path, "hi0.ts", "hi1.ts")
    _playlist(tmp_path, _media(["hi0.ts", "hi1.ts"]), name="hi.m3u8")
    _playlist(tmp_path, _media(["lo0.ts"]), name="lo.m3u8")
    master = _playlist(
        tmp_path,
        "#EXT-X-STREAM-INF:BANDWIDTH=9\nhi.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=1\nlo.m3u8\n",
        name="master.m3u8",
    )
    assert sort_inputs(sorted(tmp_path.iterdir())).videos == [master]
    assert sort_inputs([tmp_path]).videos == [master]


def test_a_transport_stream_no_playlist_names_is_a_video(tmp_path: Path) -> None:
    _touch(tmp_path, "dashcam.ts")
    (tmp_path / "other.m3u8").write_text("#EXTM3U\n#EXTINF:4.0,\nelse.ts\n#EXT-X-ENDLIST\n")
    assert sort_inputs([tmp_path / "dashcam.ts"]).videos == [tmp_path / "dashcam.ts"]
