"""Filming: walk a route at a steady pace, render each 360° frame, encode it like a camera.

The camera is carried at walking speed along the route. Its heading is the direction of travel,
smoothed through corners by averaging the path's bearing over a window of a few metres, so a
90° corner is a turn of a few seconds and never an instant snap. Frames are equirectangular
(width = 2 x height, see docs/contracts.md) and encoded with PyAV as H.264 in an MP4 with a long
GOP (``yuv420p``, a keyframe every ``gop`` frames) like a consumer 360° camera; the container's
``creation_time`` is the camera clock at the first frame.

Encoding is deterministic: the x264 thread count is fixed and nothing depends on the wall
clock, so the same frames give the same bytes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from city360.errors import ClosedResourceError, ConfigError, VideoError
from city360.synth.routes import PathSampler, Route

if TYPE_CHECKING:
    import av.container
    import av.video.stream

    from city360.geo import LocalProjection
    from city360.types import Image

__all__ = [
    "DEFAULT_FPS",
    "DEFAULT_SPEED_MPS",
    "DEFAULT_WIDTH",
    "FramePoses",
    "FrameRenderer",
    "Mp4Writer",
    "film_route",
    "format_creation_time",
    "sample_route",
]

DEFAULT_WIDTH = 3840
"""Equirect width of a consumer 360° camera (3840 x 1920), pixels."""
DEFAULT_FPS = 30
"""Frames per second of a consumer 360° camera."""
DEFAULT_SPEED_MPS = 1.4
"""Walking speed, metres per second."""
DEFAULT_TURN_SMOOTHING_M = 3.0
"""Half-width of the window over which the heading is averaged, metres along the path."""
DEFAULT_GOP_S = 1.0
"""Seconds between keyframes (x264 ``g``), clamped to 30..60 frames."""
ENCODER_THREADS = 2
"""x264 threads. Fixed so the bitstream does not depend on the machine's core count."""


class FrameRenderer(Protocol):
    """What :func:`film_route` needs from a renderer (``city360.synth.render``)."""

    def render(
        self, x_m: float, y_m: float, heading_deg: float, t_s: float, *, eye_height_m: float = ...
    ) -> Image: ...


@dataclass(frozen=True, slots=True)
class FramePoses:
    """True camera pose of every frame of one video.

    ``t_s`` is the frame's time in the video (frame / fps); ``x_m``/``y_m`` metres in the city
    CRS; ``heading_deg`` the camera's forward axis = smoothed travel direction, clockwise from
    north in [0, 360); ``s_m`` the distance walked along the route.
    """

    t_s: npt.NDArray[np.float64] = field(repr=False)
    s_m: npt.NDArray[np.float64] = field(repr=False)
    x_m: npt.NDArray[np.float64] = field(repr=False)
    y_m: npt.NDArray[np.float64] = field(repr=False)
    heading_deg: npt.NDArray[np.float64] = field(repr=False)
    fps: int
    speed_mps: float

    def __len__(self) -> int:
        return int(self.t_s.shape[0])

    @property
    def duration_s(self) -> float:
        return float(self.t_s[-1]) if len(self) else 0.0

    def table(self, projection: LocalProjection) -> npt.NDArray[np.float64]:
        """(N, 7) array in the order of ``groundtruth.TRUE_POSE_COLUMNS``."""
        lat, lon = projection.to_latlon(self.x_m, self.y_m)
        frame = np.arange(len(self), dtype=np.float64)
        return np.stack([frame, self.t_s, self.x_m, self.y_m, lat, lon, self.heading_deg], axis=1)


def smoothed_heading_deg(
    sampler: PathSampler, s_m: npt.NDArray[np.float64], *, half_window_m: float
) -> npt.NDArray[np.float64]:
    """Travel bearing at distances ``s_m``, averaged over ``[s - w, s + w]`` of the path.

    The path's bearing is piecewise constant (one value per segment, unwrapped so a left and a
    right turn do not cancel); its running integral is piecewise linear, which makes the window
    average exact and cheap. Near the ends the window is cut to the path.
    """
    bearings = sampler.segment_bearings_rad()
    integral = np.concatenate([[0.0], np.cumsum(bearings * np.diff(sampler.cumulative_m))])
    low = np.clip(s_m - half_window_m, 0.0, sampler.length_m)
    high = np.clip(s_m + half_window_m, 0.0, sampler.length_m)
    span = high - low
    mean = np.empty_like(s_m)
    wide = span > 1e-9
    mean[wide] = (
        np.interp(high[wide], sampler.cumulative_m, integral)
        - np.interp(low[wide], sampler.cumulative_m, integral)
    ) / span[wide]
    if (~wide).any():
        segment = np.searchsorted(sampler.cumulative_m, s_m[~wide], side="right") - 1
        mean[~wide] = bearings[np.clip(segment, 0, len(bearings) - 1)]
    return np.mod(np.degrees(mean), 360.0)


def sample_route(
    route: Route,
    *,
    fps: int = DEFAULT_FPS,
    speed_mps: float = DEFAULT_SPEED_MPS,
    turn_smoothing_m: float = DEFAULT_TURN_SMOOTHING_M,
) -> FramePoses:
    """Poses of the frames a camera at ``fps`` records walking ``route`` at ``speed_mps``, or
    with the route's recorded timing when it has one (``speed_mps`` is then unused)."""
    if fps <= 0:
        msg = f"`fps` must be > 0, got {fps}"
        raise ConfigError(msg)
    if not speed_mps > 0:
        msg = f"`speed` must be > 0 m/s, got {speed_mps}"
        raise ConfigError(msg)
    sampler = PathSampler(route.polyline_xy)
    if route.timing is not None:  # a recorded walk: replay its clock
        count = int(np.floor(route.timing.duration_s * fps + 1e-9)) + 1
        t_s = np.arange(count, dtype=np.float64) / fps
        s_m = np.minimum(route.timing.distance_at(t_s), sampler.length_m)
    else:
        count = int(np.floor(sampler.length_m / speed_mps * fps + 1e-9)) + 1
        t_s = np.arange(count, dtype=np.float64) / fps
        s_m = np.minimum(t_s * speed_mps, sampler.length_m)
    xy = sampler.xy_at(s_m)
    heading = smoothed_heading_deg(sampler, s_m, half_window_m=turn_smoothing_m)
    return FramePoses(
        t_s=t_s,
        s_m=s_m,
        x_m=xy[:, 0],
        y_m=xy[:, 1],
        heading_deg=heading,
        fps=int(fps),
        speed_mps=float(speed_mps),
    )


def format_creation_time(when: dt.datetime) -> str:
    """MP4 ``creation_time`` tag text for a UTC instant: ``2024-06-01T09:00:00.000000Z``."""
    if when.tzinfo is None:
        msg = f"creation time {when!r} must be timezone-aware (UTC)"
        raise ConfigError(msg)
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _gop_frames(fps: int) -> int:
    """Keyframe interval: about a second of video, but 30..60 frames whatever the rate, as a
    camera's encoder does (so low test frame rates still give a long GOP to decode through)."""
    return int(min(max(round(fps * DEFAULT_GOP_S), 30), 60))


class Mp4Writer:
    """Encode RGB frames into an H.264 MP4, one :meth:`write` per frame (a context manager).

    ``creation_time`` is the camera clock at frame 0 (UTC); frame i gets pts i in a time base of
    1/fps. ``gop`` is the keyframe interval in frames (default: about one second, 30..60).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        width: int,
        fps: int,
        creation_time: dt.datetime,
        gop: int | None = None,
        crf: int = 23,
        preset: str = "veryfast",
    ) -> None:
        import av

        validate_width(width)
        self.path = Path(path)
        self.width = int(width)
        self.height = int(width) // 2
        self.fps = int(fps)
        self.frames_written = 0
        self._closed = False
        try:
            self._container: av.container.OutputContainer = av.open(
                str(self.path), mode="w", format="mp4"
            )
        except OSError as exc:
            msg = f"cannot write video {self.path}: {exc}; choose a writable output folder"
            raise VideoError(msg) from None
        self._container.metadata["creation_time"] = format_creation_time(creation_time)
        stream = self._container.add_stream("libx264", rate=Fraction(self.fps, 1))
        stream.width = self.width
        stream.height = self.height
        stream.pix_fmt = "yuv420p"
        stream.time_base = Fraction(1, self.fps)
        keyint = str(gop if gop is not None else _gop_frames(self.fps))
        # A fixed GOP as camera encoders use: a keyframe exactly every `keyint` frames
        # (no scene-cut keyframes), so every GOP is long and its length is known.
        stream.codec_context.options = {
            "g": keyint,
            "keyint_min": keyint,
            "sc_threshold": "0",
            "crf": str(crf),
            "preset": preset,
            "threads": str(ENCODER_THREADS),
        }
        self._stream: av.video.stream.VideoStream = stream

    def __repr__(self) -> str:
        return f"Mp4Writer({str(self.path)!r}, {self.width}x{self.height}@{self.fps})"

    def __enter__(self) -> Mp4Writer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close(flush=exc_type is None)

    def write(self, rgb: Image) -> None:
        """Encode one (height, width, 3) uint8 RGB frame."""
        import av

        if self._closed:
            msg = f"{self!r} is closed"
            raise ClosedResourceError(msg)
        if rgb.shape != (self.height, self.width, 3) or rgb.dtype != np.uint8:
            msg = (
                f"frame {self.frames_written} for {self.path} has shape {rgb.shape} "
                f"{rgb.dtype}; expected ({self.height}, {self.width}, 3) uint8"
            )
            raise VideoError(msg)
        frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24")
        frame = frame.reformat(format="yuv420p")
        frame.pts = self.frames_written
        frame.time_base = Fraction(1, self.fps)
        for packet in self._stream.encode(frame):
            self._container.mux(packet)
        self.frames_written += 1

    def close(self, *, flush: bool = True) -> None:
        """Flush the encoder and finish the file. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        try:
            if flush:
                for packet in self._stream.encode(None):
                    self._container.mux(packet)
        finally:
            self._container.close()


def validate_width(width: int) -> None:
    """Raise :class:`ConfigError` unless ``width`` makes a 2:1 frame x264 can encode."""
    if width < 64 or width % 4:
        msg = f"`width` must be a multiple of 4 and >= 64 (height = width / 2), got {width}"
        raise ConfigError(msg)


def film_route(
    renderer: FrameRenderer,
    poses: FramePoses,
    path: str | Path,
    *,
    width: int,
    creation_time: dt.datetime,
    on_frame: Callable[[int], None] | None = None,
) -> Path:
    """Render the frame of every pose in ``poses`` and encode them into the MP4 ``path``.

    ``on_frame(i)`` is called after frame i is encoded (for progress bars).
    """
    with Mp4Writer(path, width=width, fps=poses.fps, creation_time=creation_time) as writer:
        for index, (x, y, heading, t) in enumerate(_pose_rows(poses)):
            writer.write(renderer.render(x, y, heading, t))
            if on_frame is not None:
                on_frame(index)
    return Path(path)


def _pose_rows(poses: FramePoses) -> Iterator[tuple[float, float, float, float]]:
    for i in range(len(poses)):
        yield (
            float(poses.x_m[i]),
            float(poses.y_m[i]),
            float(poses.heading_deg[i]),
            float(poses.t_s[i]),
        )
