"""Frame sampling along a route, heading smoothing, and the H.264 MP4 writer."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

import av
import numpy as np
import pytest

from city360.errors import ClosedResourceError, ConfigError, VideoError
from city360.geo import angle_diff_deg
from city360.synth.film import Mp4Writer, film_route, sample_route
from city360.synth.routes import Route
from city360.types import Image

START = dt.datetime(2024, 6, 1, 9, 30, 0, tzinfo=dt.UTC)
L_SHAPE = Route(
    name="l_walk",
    polyline_xy=np.array([[0.0, 0.0], [0.0, 40.0], [30.0, 40.0]]),
    junction_sequence=(1, 2, 3),
)


def test_frames_are_spaced_by_speed_over_fps() -> None:
    poses = sample_route(L_SHAPE, fps=5, speed_mps=1.25)
    assert len(poses) == int(70.0 / 1.25 * 5) + 1
    np.testing.assert_allclose(np.diff(poses.t_s), 0.2)
    steps = np.hypot(np.diff(poses.x_m), np.diff(poses.y_m))
    corner = np.abs(poses.s_m[1:] - 40.0) < 0.25
    np.testing.assert_allclose(steps[~corner], 0.25, atol=1e-9)
    assert poses.duration_s == pytest.approx(56.0)


def test_heading_follows_the_street_and_turns_smoothly_at_corners() -> None:
    poses = sample_route(L_SHAPE, fps=30, speed_mps=1.4, turn_smoothing_m=3.0)
    north = poses.s_m < 37.0
    east = poses.s_m > 43.0
    np.testing.assert_allclose(poses.heading_deg[north], 0.0, atol=1e-9)
    np.testing.assert_allclose(poses.heading_deg[east], 90.0, atol=1e-9)
    steps = [
        abs(angle_diff_deg(b, a))
        for a, b in zip(poses.heading_deg[:-1], poses.heading_deg[1:], strict=True)
    ]
    # 90 degrees spread over 6 m of walking: 15 deg per metre, 0.7 deg per frame at 30 fps
    assert max(steps) == pytest.approx(15.0 * 1.4 / 30, rel=0.01)
    turning = (poses.s_m > 37.5) & (poses.s_m < 42.5)
    assert np.all((poses.heading_deg[turning] > 0.0) & (poses.heading_deg[turning] < 90.0))


def test_u_turn_at_a_dead_end_rotates_instead_of_snapping() -> None:
    there_and_back = Route(
        name="dead_end",
        polyline_xy=np.array([[0.0, 0.0], [20.0, 0.0], [0.0, 0.0]]),
        junction_sequence=(1, 2, 1),
    )
    poses = sample_route(there_and_back, fps=10, speed_mps=1.0)
    steps = [
        abs(angle_diff_deg(b, a))
        for a, b in zip(poses.heading_deg[:-1], poses.heading_deg[1:], strict=True)
    ]
    assert max(steps) <= 180.0 / 6.0 / 10.0 + 1e-6
    assert poses.heading_deg[0] == pytest.approx(90.0)
    assert poses.heading_deg[-1] == pytest.approx(270.0)


def test_bad_sampling_options() -> None:
    with pytest.raises(ConfigError, match=r"`fps` must be > 0, got 0"):
        sample_route(L_SHAPE, fps=0)
    with pytest.raises(ConfigError, match=r"`speed` must be > 0 m/s, got -1.0"):
        sample_route(L_SHAPE, speed_mps=-1.0)


class PatternRenderer:
    """A stand-in renderer for encoder tests: a frame that encodes the pose in its colours."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.calls: list[tuple[float, float, float, float]] = []

    def render(
        self, x_m: float, y_m: float, heading_deg: float, t_s: float, *, eye_height_m: float = 1.6
    ) -> Image:
        self.calls.append((x_m, y_m, heading_deg, t_s))
        frame = np.zeros((self.width // 2, self.width, 3), np.uint8)
        column = int(heading_deg / 360.0 * self.width) % self.width
        frame[:, max(column - 8, 0) : column + 8] = 255
        frame[..., 1] = np.uint8(int(x_m * 4) % 256)
        frame[: self.width // 4, :, 2] = np.uint8(int(t_s * 10) % 256)
        return frame


def test_film_route_writes_a_long_gop_h264_with_creation_time(tmp_path: Path) -> None:
    poses = sample_route(L_SHAPE, fps=30, speed_mps=10.0)
    renderer = PatternRenderer(256)
    seen: list[int] = []
    path = film_route(
        renderer, poses, tmp_path / "walk.mp4", width=256, creation_time=START, on_frame=seen.append
    )
    assert seen == list(range(len(poses)))
    assert renderer.calls[5] == (
        poses.x_m[5],
        poses.y_m[5],
        poses.heading_deg[5],
        poses.t_s[5],
    )
    with av.open(str(path)) as container:
        assert container.metadata["creation_time"] == "2024-06-01T09:30:00.000000Z"
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264"
        assert (stream.codec_context.width, stream.codec_context.height) == (256, 128)
        assert stream.codec_context.pix_fmt == "yuv420p"
        frames = list(container.decode(stream))
    assert len(frames) == len(poses)
    keyframes = [i for i, frame in enumerate(frames) if frame.key_frame]
    assert keyframes == list(range(0, len(poses), 30))
    times = np.array([float(frame.pts * frame.time_base) for frame in frames])
    np.testing.assert_allclose(times, poses.t_s, atol=1e-4)
    decoded = frames[10].to_ndarray(format="rgb24")
    expected = renderer.render(*renderer.calls[10][:3], renderer.calls[10][3])
    assert np.abs(decoded.astype(int) - expected.astype(int)).mean() < 6.0


def test_encoding_is_deterministic(tmp_path: Path) -> None:
    poses = sample_route(L_SHAPE, fps=10, speed_mps=5.0)
    digests = []
    for name in ("a.mp4", "b.mp4"):
        film_route(PatternRenderer(128), poses, tmp_path / name, width=128, creation_time=START)
        digests.append(hashlib.sha256((tmp_path / name).read_bytes()).hexdigest())
    assert digests[0] == digests[1]


def test_writer_rejects_bad_frames_and_use_after_close(tmp_path: Path) -> None:
    writer = Mp4Writer(tmp_path / "x.mp4", width=128, fps=30, creation_time=START)
    with pytest.raises(VideoError, match=r"frame 0 for .*x\.mp4 has shape \(10, 10, 3\) uint8; "):
        writer.write(np.zeros((10, 10, 3), np.uint8))
    writer.write(np.zeros((64, 128, 3), np.uint8))
    writer.close()
    writer.close()
    with pytest.raises(ClosedResourceError, match="is closed"):
        writer.write(np.zeros((64, 128, 3), np.uint8))


@pytest.mark.parametrize("width", [102, 32, 130])
def test_width_must_make_an_encodable_2to1_frame(tmp_path: Path, width: int) -> None:
    with pytest.raises(ConfigError, match=rf"`width` must be a multiple of 4 and >= 64 .* {width}"):
        Mp4Writer(tmp_path / "x.mp4", width=width, fps=30, creation_time=START)


def test_creation_time_must_be_aware(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="must be timezone-aware"):
        Mp4Writer(tmp_path / "x.mp4", width=128, fps=30, creation_time=dt.datetime(2024, 1, 1))


@pytest.mark.parametrize(("fps", "gop"), [(2, 30), (30, 30), (50, 50), (120, 60)])
def test_gop_is_fixed_and_long_at_any_frame_rate(tmp_path: Path, fps: int, gop: int) -> None:
    frames = gop + 3
    with Mp4Writer(tmp_path / "g.mp4", width=64, fps=fps, creation_time=START) as writer:
        for i in range(frames):
            frame = np.full((32, 64, 3), 90, np.uint8)
            frame[:, i % 56 : i % 56 + 8] = 230  # a moving bar, with a jump (a scene cut) at 56
            writer.write(frame)
    with av.open(str(tmp_path / "g.mp4")) as container:
        keys = [i for i, f in enumerate(container.decode(video=0)) if f.key_frame]
    assert keys == [0, gop]
