"""Probing and decoding source videos: codecs, the 2:1 check, rotation, broken files."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from city360.errors import InputFileError, VideoError
from city360.video_store.decode import (
    iter_frames,
    probe_video,
    projection_from_spherical_side_data,
    rotate_upright,
)
from tests.fixtures.videos import CREATION, SyntheticWalk, write_equirect_video


def _pattern(width: int, height: int, count: int) -> list[np.ndarray]:
    yy, xx = np.mgrid[0:height, 0:width]
    return [
        np.stack([(xx * 4 + k * 8) % 256, (yy * 4) % 256, np.full_like(xx, 128)], -1).astype(
            np.uint8
        )
        for k in range(count)
    ]


def test_probe_synthetic_walk(synthetic_walk: SyntheticWalk) -> None:
    info = probe_video(synthetic_walk.video)
    assert (info.width, info.height) == (256, 128)
    assert info.codec == "h264"
    assert info.fps == pytest.approx(10.0)
    assert info.frame_count == 700
    assert info.creation_time_utc == pytest.approx(CREATION.timestamp())
    assert info.rotation_deg == 0
    frames = list(iter_frames(info))
    assert len(frames) == 700
    assert frames[10].t_s == pytest.approx(1.0)
    assert frames[0].to_rgb().shape == (128, 256, 3)
    assert frames[0].to_rgb(width=64).shape == (32, 64, 3)


def test_decoding_without_deblocking_is_for_analysis_only(synthetic_walk: SyntheticWalk) -> None:
    info = probe_video(synthetic_walk.video)
    exact = [f.to_gray(width=64) for f in iter_frames(info)]
    rough = [f.to_gray(width=64) for f in iter_frames(info, deblock=False)]
    assert len(rough) == len(exact)
    # the same pictures to within a few grey levels (motion analysis cannot tell them apart)
    assert (
        max(np.abs(a.astype(int) - b.astype(int)).mean() for a, b in zip(exact, rough, strict=True))
        < 3
    )


@pytest.mark.parametrize("codec", ["libx265", "libvpx-vp9", "libsvtav1"])
def test_other_codecs_decode(tmp_path: Path, codec: str) -> None:
    suffix = ".mp4"
    path = write_equirect_video(
        tmp_path / f"v{suffix}", _pattern(128, 64, 6), 10, codec=codec, gop=3
    )
    info = probe_video(path)
    assert (info.width, info.height) == (128, 64)
    frames = list(iter_frames(info))
    assert len(frames) == 6
    # the colour ramp survives the codec
    assert np.abs(frames[2].to_rgb().astype(int) - _pattern(128, 64, 6)[2]).mean() < 12


def test_non_2_to_1_needs_the_override(tmp_path: Path) -> None:
    path = write_equirect_video(tmp_path / "flat.mp4", _pattern(112, 64, 3), 10)
    with pytest.raises(
        VideoError, match=r"is 112x64 \(aspect 1.750\), neither a 2:1 equirect"
    ) as e:
        probe_video(path)
    assert "or --layout equirect if it is equirectangular anyway" in str(e.value)
    info = probe_video(path, projection="equirect")
    assert (info.width, info.height) == (112, 64)
    assert info.layout == "equirect"


def test_zero_length_video(tmp_path: Path) -> None:
    path = tmp_path / "empty.mp4"
    path.write_bytes(b"")
    with pytest.raises(VideoError, match=r"empty\.mp4 is empty \(0 bytes\)"):
        probe_video(path)


def test_missing_video(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match=r"video .*nope\.mp4 not found"):
        probe_video(tmp_path / "nope.mp4")


def test_corrupt_video(tmp_path: Path) -> None:
    path = tmp_path / "noise.mp4"
    path.write_bytes(np.random.default_rng(0).integers(0, 256, 5000, dtype=np.uint8).tobytes())
    with pytest.raises(VideoError, match=r"noise\.mp4 cannot be opened .*corrupt or truncated"):
        probe_video(path)


def test_truncated_video_without_index(synthetic_walk: SyntheticWalk, tmp_path: Path) -> None:
    # moov comes last in a camera-written MP4: cutting the file loses the index
    data = synthetic_walk.video.read_bytes()
    path = tmp_path / "cut.mp4"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(VideoError, match=r"cut\.mp4 cannot be opened .*corrupt or truncated"):
        probe_video(path)


def test_truncated_video_with_index_first(tmp_path: Path) -> None:
    frames = _pattern(128, 64, 40)
    full = write_equirect_video(tmp_path / "fast.mp4", frames, 10, faststart=True)
    data = full.read_bytes()
    path = tmp_path / "cut.mp4"
    path.write_bytes(data[: int(len(data) * 0.6)])
    info = probe_video(path)  # the index is whole, the samples are not
    with pytest.raises(VideoError, match=r"cut\.mp4 (is truncated|breaks off)"):
        list(iter_frames(info))


def test_rotation_metadata_is_honoured(tmp_path: Path) -> None:
    import av

    # a 64x128 portrait picture stored with a 90° display rotation shows as 128x64
    path = tmp_path / "rotated.mp4"
    stored = _pattern(64, 128, 3)
    with av.open(str(path), "w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=10)
        stream.width, stream.height, stream.pix_fmt = 64, 128, "yuv420p"
        stream.set_display_rotation(90)
        for image in stored:
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    info = probe_video(path)
    assert info.rotation_deg in (90, 270)
    assert (info.width, info.height) == (128, 64)
    first = next(iter_frames(info)).to_rgb()
    assert first.shape == (64, 128, 3)
    expected = rotate_upright(stored[0], info.rotation_deg)
    assert np.abs(first.astype(int) - expected).mean() < 10


def test_spherical_side_data_projection_names() -> None:
    assert projection_from_spherical_side_data(struct.pack("<I", 0) + bytes(20)) == (
        "equirectangular"
    )
    assert projection_from_spherical_side_data(struct.pack("<I", 1)) == "cubemap"
    assert projection_from_spherical_side_data(b"") == "unknown"
