"""A DASH presentation saved to disk (manifest + segments) is read as one video."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from city360.errors import ConfigError, InputFileError
from city360.video_store.dash import read_dash
from city360.video_store.decode import iter_frames, probe_video
from city360.video_store.inputs import sort_inputs
from city360.video_store.stream_parts import concat_url, parts_sha256
from tests.fixtures.videos import write_equirect_video

MPD_NS = 'xmlns="urn:mpeg:dash:schema:mpd:2011"'


def _manifest(folder: Path, body: str, *, name: str = "stream.mpd", attrs: str = "") -> Path:
    path = folder / name
    path.write_text(
        f'<?xml version="1.0"?>\n<MPD {MPD_NS} type="static" {attrs}>'
        f"<Period>{body}</Period></MPD>\n"
    )
    return path


def _touch(folder: Path, *names: str) -> None:
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(b"x")


def test_a_numbered_template_resolves_to_the_segments_beside_the_manifest(
    tmp_path: Path,
) -> None:
    _touch(tmp_path, "v/init-720.mp4", *(f"v/seg-720-{n:03d}.m4s" for n in range(1, 4)))
    manifest = _manifest(
        tmp_path,
        '<AdaptationSet mimeType="video/mp4"><BaseURL>v/</BaseURL>'
        '<SegmentTemplate initialization="init-$RepresentationID$.mp4" '
        'media="seg-$RepresentationID$-$Number%03d$.m4s" duration="4" timescale="1"/>'
        '<Representation id="720" bandwidth="1000"/></AdaptationSet>',
        attrs='mediaPresentationDuration="PT12S"',
    )
    parts = read_dash(manifest)
    assert parts.initialization == tmp_path / "v" / "init-720.mp4"
    assert [p.name for p in parts.segments] == [
        "seg-720-001.m4s",
        "seg-720-002.m4s",
        "seg-720-003.m4s",
    ]
    assert (parts.listed, parts.missing) == (3, None)
    assert concat_url(parts) == "concat:" + "|".join(str(p) for p in parts.files)


def test_a_partial_download_keeps_the_segments_up_to_the_first_missing(tmp_path: Path) -> None:
    """The 360° clip in shared/data lists 35 segments (2 min 17 s) and ships 6."""
    _touch(tmp_path, "init.mp4", "segment_0.m4s", "segment_1.m4s", "segment_3.m4s")
    manifest = _manifest(
        tmp_path,
        '<AdaptationSet mimeType="video/mp4"><SegmentTemplate media="segment_$Number$.m4s" '
        'initialization="init.mp4" duration="120119" startNumber="0" timescale="30000"/>'
        '<Representation id="a" bandwidth="1"/></AdaptationSet>',
        attrs='mediaPresentationDuration="P0Y0M0DT0H2M17.000S"',
    )
    parts = read_dash(manifest)
    assert [p.name for p in parts.segments] == ["segment_0.m4s", "segment_1.m4s"]
    assert (parts.listed, parts.missing) == (35, "segment_2.m4s")


def test_a_timeline_template_names_segments_by_their_start_time(tmp_path: Path) -> None:
    _touch(tmp_path, "i.mp4", "t0.m4s", "t90.m4s", "t180.m4s", "t250.m4s")
    manifest = _manifest(
        tmp_path,
        '<AdaptationSet contentType="video"><Representation id="r" bandwidth="5">'
        '<SegmentTemplate initialization="i.mp4" media="t$Time$.m4s" timescale="30">'
        '<SegmentTimeline><S t="0" d="90" r="1"/><S d="70"/></SegmentTimeline>'
        "</SegmentTemplate></Representation></AdaptationSet>",
    )
    parts = read_dash(manifest)
    assert [p.name for p in parts.segments] == ["t0.m4s", "t90.m4s", "t180.m4s"]
    assert parts.listed == 3


def test_a_segment_list_and_a_single_file_representation(tmp_path: Path) -> None:
    _touch(tmp_path, "head.mp4", "a.m4s", "b.m4s", "whole.mp4")
    listed = _manifest(
        tmp_path,
        '<AdaptationSet mimeType="video/mp4"><Representation id="l" bandwidth="1">'
        '<SegmentList><Initialization sourceURL="head.mp4"/><SegmentURL media="a.m4s"/>'
        '<SegmentURL media="b.m4s"/></SegmentList></Representation></AdaptationSet>',
        name="list.mpd",
    )
    assert [p.name for p in read_dash(listed).files] == ["head.mp4", "a.m4s", "b.m4s"]
    whole = _manifest(
        tmp_path,
        '<AdaptationSet mimeType="video/mp4"><Representation id="w" bandwidth="1">'
        "<BaseURL>whole.mp4</BaseURL><SegmentBase/></Representation></AdaptationSet>",
        name="whole.mpd",
    )
    parts = read_dash(whole)
    assert (parts.initialization, [p.name for p in parts.segments]) == (None, ["whole.mp4"])


def test_the_best_quality_saved_is_taken_and_audio_is_not_a_video(tmp_path: Path) -> None:
    """A download keeps one quality of several; the manifest lists them all."""
    _touch(tmp_path, "init-low.mp4", "low-1.m4s", "audio-init.mp4", "audio-1.m4s")
    manifest = _manifest(
        tmp_path,
        '<AdaptationSet mimeType="audio/mp4"><SegmentTemplate initialization="audio-init.mp4" '
        'media="audio-$Number$.m4s"/><Representation id="aac" bandwidth="99999999"/>'
        '</AdaptationSet><AdaptationSet mimeType="video/mp4">'
        '<SegmentTemplate initialization="init-$RepresentationID$.mp4" '
        'media="$RepresentationID$-$Number$.m4s"/>'
        '<Representation id="high" bandwidth="8000000" width="3840" height="1920"/>'
        '<Representation id="low" bandwidth="1000000" width="1280" height="640"/>'
        "</AdaptationSet>",
    )
    parts = read_dash(manifest)
    assert parts.rendition == "low"
    assert [p.name for p in parts.files] == ["init-low.mp4", "low-1.m4s"]
    assert parts.listed is None  # no duration: every consecutive number on disk


@pytest.mark.parametrize(
    ("body", "attrs", "error", "words"),
    [
        ("<AdaptationSet mimeType='audio/mp4'><Representation id='a'/></AdaptationSet>", "",
         ConfigError, "no video representation"),
        ("<AdaptationSet mimeType='video/mp4'><SegmentTemplate initialization='i.mp4' "
         "media='s$Number$.m4s'/><Representation id='v'/></AdaptationSet>", "",
         InputFileError, "i.mp4"),
        ("", 'type="dynamic"', ConfigError, "live stream"),
    ],
)  # fmt: skip
def test_a_manifest_without_a_saved_video_is_refused_by_name(
    tmp_path: Path, body: str, attrs: str, error: type[Exception], words: str
) -> None:
    path = tmp_path / "m.mpd"
    path.write_text(f"<MPD {MPD_NS} {attrs}><Period>{body}</Period></MPD>")
    with pytest.raises(error, match=words) as caught:
        read_dash(path)
    assert str(path) in str(caught.value)


def test_a_remote_address_is_looked_for_beside_the_manifest_and_its_token_never_shown(
    tmp_path: Path,
) -> None:
    manifest = _manifest(
        tmp_path,
        "<BaseURL>https://cdn.example.com/v/?token=SECRET123</BaseURL>"
        '<AdaptationSet mimeType="video/mp4"><SegmentTemplate initialization='
        '"https://cdn.example.com/v/init.mp4?sig=SECRET456" media="s$Number$.m4s"/>'
        '<Representation id="v"/></AdaptationSet>',
    )
    with pytest.raises(InputFileError) as caught:
        read_dash(manifest)
    assert "init.mp4" in str(caught.value)
    assert "SECRET" not in str(caught.value)
    _touch(tmp_path, "init.mp4", "s1.m4s")
    assert [p.name for p in read_dash(manifest).files] == ["init.mp4", "s1.m4s"]


def test_a_path_ffmpeg_cannot_join_is_refused_by_name(tmp_path: Path) -> None:
    folder = tmp_path / "walk|1"
    _touch(folder, "init.mp4", "s1.m4s")
    manifest = _manifest(
        folder,
        '<AdaptationSet mimeType="video/mp4"><SegmentTemplate initialization="init.mp4" '
        'media="s$Number$.m4s"/><Representation id="v"/></AdaptationSet>',
    )
    with pytest.raises(ConfigError, match=r"holds '\|'.*rename"):
        concat_url(read_dash(manifest))


def test_a_file_that_is_not_a_manifest_is_refused(tmp_path: Path) -> None:
    for text, words in (("<html/>", "not a DASH manifest"), ("<MPD", "cannot be read")):
        path = tmp_path / "x.mpd"
        path.write_text(text)
        with pytest.raises(ConfigError, match=words):
            read_dash(path)


def _boxes(data: bytes) -> list[tuple[str, bytes]]:
    """Top-level MP4 boxes of ``data`` as (type, bytes)."""
    boxes, at = [], 0
    while at < len(data):
        size, kind = struct.unpack(">I4s", data[at : at + 8])
        boxes.append((kind.decode(), data[at : at + size]))
        at += size
    return boxes


@pytest.fixture
def saved_stream(tmp_path: Path) -> tuple[Path, Path]:
    """A 64x32 clip of 24 frames as one fragmented MP4, and the same bytes saved as a DASH
    presentation: init.mp4 (ftyp + moov) and one segment per moof/mdat pair."""
    import av

    whole = tmp_path / "whole.mp4"
    frames = [np.full((32, 64, 3), 10 * k, np.uint8) for k in range(24)]
    options = {"movflags": "frag_keyframe+empty_moov+default_base_moof"}
    with av.open(str(whole), "w", format="mp4", options=options) as container:
        stream = container.add_stream("libx264", rate=8)
        stream.width, stream.height, stream.pix_fmt = 64, 32, "yuv420p"
        stream.options = {"g": "8", "crf": "20", "preset": "veryfast"}
        for image in frames:
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    boxes = _boxes(whole.read_bytes())
    first_fragment = next(k for k, (kind, _) in enumerate(boxes) if kind == "moof")
    folder = tmp_path / "download"
    folder.mkdir()
    (folder / "init.mp4").write_bytes(b"".join(b for _, b in boxes[:first_fragment]))
    number, chunk = 0, b""
    for kind, data in boxes[first_fragment:]:
        if kind == "moof" and chunk:
            (folder / f"chunk{number}.m4s").write_bytes(chunk)
            number, chunk = number + 1, b""
        chunk += data
    (folder / f"chunk{number}.m4s").write_bytes(chunk)
    assert number >= 2  # several segments, or the test shows nothing
    manifest = _manifest(
        folder,
        '<AdaptationSet mimeType="video/mp4"><SegmentTemplate initialization="init.mp4" '
        'media="chunk$Number$.m4s" startNumber="0"/><Representation id="v"/></AdaptationSet>',
        name="walk.mpd",
    )
    return whole, manifest


def test_a_saved_stream_decodes_as_the_whole_video(saved_stream: tuple[Path, Path]) -> None:
    whole, manifest = saved_stream
    info = probe_video(manifest)
    assert (info.width, info.height) == (64, 32)
    decoded = [f.to_rgb() for f in iter_frames(info)]
    expected = [f.to_rgb() for f in iter_frames(probe_video(whole))]
    assert len(decoded) == len(expected) == 24
    assert all(np.array_equal(a, b) for a, b in zip(decoded, expected, strict=True))
    from city360.city import file_sha256

    assert parts_sha256(read_dash(manifest)) == file_sha256(whole)  # same bytes


def test_a_download_folder_is_one_video_named_by_its_manifest(
    saved_stream: tuple[Path, Path], caplog: pytest.LogCaptureFixture
) -> None:
    """``ingest download/`` took init.mp4 for a video of its own (no decodable frame) and
    ``ingest download/*`` the segments too; the manifest read as a corrupt video."""
    _, manifest = saved_stream
    folder = manifest.parent
    assert sort_inputs([folder]).videos == [manifest]
    assert sort_inputs(sorted(folder.iterdir())).videos == [manifest]
    with caplog.at_level("WARNING", logger="city360.video_store.inputs"):
        assert sort_inputs([folder / "init.mp4"]).videos == [manifest]
    assert "is a part of the saved stream" in caplog.text


def test_a_segment_without_its_manifest_is_refused_with_the_way_on(tmp_path: Path) -> None:
    _touch(tmp_path, "segment_3.m4s")
    with pytest.raises(ConfigError, match=r"media segment of a saved stream.*\(DASH \.mpd\)"):
        sort_inputs([tmp_path / "segment_3.m4s"])


def test_a_stray_manifest_does_not_refuse_the_video_beside_it(tmp_path: Path) -> None:
    write_equirect_video(tmp_path / "walk.mp4", [np.zeros((32, 64, 3), np.uint8)] * 2, 2.0)
    (tmp_path / "old.mpd").write_text("<html/>")
    assert sort_inputs([tmp_path / "walk.mp4"]).videos == [tmp_path / "walk.mp4"]
