"""Open a source video with PyAV: probe it, check it is equirectangular, iterate its frames.

Any codec the bundled FFmpeg decodes works (H.264, HEVC, VP9, AV1 via libdav1d). Frames come out
upright: rotation metadata (the display matrix) is applied, because a phone or camera held
sideways stores the picture rotated and says so in the container.
"""

from __future__ import annotations

import math
import os
import struct
from collections.abc import Generator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from city360.errors import InputFileError, VideoError

if TYPE_CHECKING:
    import av
    import av.container
    import av.video.frame
    import av.video.reformatter

__all__ = [
    "EQUIRECT_ASPECT_TOLERANCE",
    "DecodedFrame",
    "VideoInfo",
    "iter_frames",
    "open_video",
    "probe_video",
    "projection_from_spherical_side_data",
]

EQUIRECT_ASPECT_TOLERANCE = 0.01
"""Largest relative deviation of width/height from 2 accepted as equirectangular."""

Projection = Literal["equirect"]

# AVSphericalProjection (libavutil/spherical.h), the first uint32 of AVSphericalMapping.
_SPHERICAL_PROJECTIONS = {
    0: "equirectangular",
    1: "cubemap",
    2: "equirectangular_tile",
    3: "half_equirectangular",
    4: "rectilinear",
    5: "fisheye",
    6: "parametric_immersive",
}


@dataclass(frozen=True, slots=True)
class VideoInfo:
    """What a source video is. ``width``/``height`` are after rotation (as displayed).

    ``creation_time_utc`` is the container's creation time in POSIX seconds (the camera clock
    at the first frame), or None when the container has none. ``rotation_deg`` is the
    counter-clockwise rotation applied to decoded pictures to make them upright.
    """

    path: Path
    codec: str
    width: int
    height: int
    fps: float
    frame_count: int
    duration_s: float
    time_base: float
    creation_time_utc: float | None
    rotation_deg: int
    spherical: str | None
    """Projection from spherical metadata (``"equirectangular"``, ``"cubemap"``, ...) or None."""


@dataclass(frozen=True, slots=True)
class DecodedFrame:
    """One decoded source frame: its 0-based decode-order ``index``, ``pts`` in the stream
    time_base, ``t_s`` seconds since the first frame, and the upright picture."""

    index: int
    pts: int
    t_s: float
    frame: av.video.frame.VideoFrame
    rotation_deg: int

    def to_yuv420(
        self, *, width: int, scaler: av.video.reformatter.VideoReformatter | None = None
    ) -> av.video.frame.VideoFrame | None:
        """The picture as a yuv420p frame ``width`` wide, or None when it must be rotated
        (then use :meth:`to_rgb`). Staying in Y'CbCr skips two colour conversions, keeps
        chroma as decoded, and is the fast path at 4K. ``scaler``: see :meth:`to_gray`."""
        if self.rotation_deg % 360:
            return None
        frame = self.frame
        height = _even_height(frame.width, frame.height, width)
        if frame.format.name == "yuv420p" and (frame.width, frame.height) == (width, height):
            return frame
        if scaler is None:
            return frame.reformat(
                width=width, height=height, format="yuv420p", interpolation="AREA"
            )
        return scaler.reformat(
            frame, width=width, height=height, format="yuv420p", interpolation="AREA"
        )

    def to_gray(
        self, *, width: int, scaler: av.video.reformatter.VideoReformatter | None = None
    ) -> npt.NDArray[np.uint8]:
        """The upright picture's luma, ``width`` wide (area-averaged): cheap motion analysis.

        ``scaler``: a reformatter kept by the caller for a run of frames of one size (one
        thread at a time). Setting up FFmpeg's area scaler from 4K costs several times the
        scaling itself, and every decoded frame would otherwise set up its own.
        """
        rotated_sideways = self.rotation_deg % 180 != 0
        src_w = self.frame.height if rotated_sideways else self.frame.width
        src_h = self.frame.width if rotated_sideways else self.frame.height
        height = _even_height(src_w, src_h, width)
        scaled = (height, width) if rotated_sideways else (width, height)
        image: npt.NDArray[np.uint8]
        if scaler is None:
            image = self.frame.to_ndarray(  # type: ignore[assignment]
                format="gray", width=scaled[0], height=scaled[1], interpolation="AREA"
            )
        else:
            image = scaler.reformat(  # type: ignore[assignment]
                self.frame, width=scaled[0], height=scaled[1], format="gray", interpolation="AREA"
            ).to_ndarray()
        return rotate_upright(image, self.rotation_deg)

    def to_rgb(self, *, width: int | None = None) -> npt.NDArray[np.uint8]:
        """The picture as RGB uint8 (H, W, 3), upright, scaled to ``width`` when given."""
        rotated_sideways = self.rotation_deg % 180 != 0
        src_w = self.frame.height if rotated_sideways else self.frame.width
        src_h = self.frame.width if rotated_sideways else self.frame.height
        image: npt.NDArray[np.uint8]
        if width is not None and width != src_w:
            height = _even_height(src_w, src_h, width)
            # reformat scales before rotation: swap the target when the picture turns sideways
            scaled = (height, width) if rotated_sideways else (width, height)
            image = self.frame.to_ndarray(  # type: ignore[assignment]
                format="rgb24", width=scaled[0], height=scaled[1], interpolation="AREA"
            )
        else:
            image = self.frame.to_ndarray(format="rgb24")  # type: ignore[assignment]
        return rotate_upright(image, self.rotation_deg)


def _even_height(src_w: int, src_h: int, width: int) -> int:
    return max(2, round(src_h * width / src_w / 2) * 2)


def rotate_upright(image: npt.NDArray[np.uint8], rotation_deg: int) -> npt.NDArray[np.uint8]:
    """Rotate ``image`` counter-clockwise by ``rotation_deg`` (a multiple of 90)."""
    turns = (rotation_deg // 90) % 4
    return np.ascontiguousarray(np.rot90(image, k=turns)) if turns else image


def projection_from_spherical_side_data(payload: bytes) -> str:
    """Name the projection in an FFmpeg ``AVSphericalMapping`` side-data payload."""
    if len(payload) < 4:
        return "unknown"
    (code,) = struct.unpack("<I", payload[:4])
    return _SPHERICAL_PROJECTIONS.get(code, "unknown")


def _spherical_projection(frame: Any) -> str | None:
    """The projection named by a frame's spherical side data, or None.

    Cameras attach side data this PyAV build has no name for (a GoPro MAX still carries type
    31, and PyAV raises ``ValueError: 31 is not a valid Type`` merely on listing it), so an
    unreadable list or entry counts as "no spherical metadata", never as a broken file.
    """
    try:
        side_data: Any = frame.side_data
        count = len(side_data)
    except (ValueError, KeyError, TypeError):
        return None
    spherical = None
    for key in range(count):
        try:
            side: Any = side_data[key]
            kind = str(side.type)
        except (ValueError, KeyError, TypeError, IndexError):
            continue
        if kind.endswith("SPHERICAL"):
            spherical = projection_from_spherical_side_data(bytes(side))
    return spherical


def _parse_creation_time(value: str | None) -> float | None:
    if not value:
        return None
    try:
        stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    seconds = stamp.timestamp()
    # 1904-01-01 (the MP4 epoch) or 1970 means "not set" on many cameras
    return None if seconds <= 0 else seconds


def open_video(path: str | os.PathLike[str]) -> av.container.InputContainer:
    """Open ``path`` with PyAV, turning every failure into an :class:`InputFileError` or
    :class:`VideoError` that names the file."""
    import av

    source = Path(path)
    if not source.is_file():
        msg = f"video {source} not found; check the path"
        raise InputFileError(msg)
    if source.stat().st_size == 0:
        msg = f"video {source} is empty (0 bytes); re-copy it from the camera"
        raise VideoError(msg)
    try:
        container = av.open(str(source), mode="r")
    except av.FFmpegError as exc:
        msg = (
            f"video {source} cannot be opened ({exc.strerror or exc}); the file is corrupt "
            "or truncated: re-copy it from the camera"
        )
        raise VideoError(msg) from None
    if not container.streams.video:
        container.close()
        msg = f"video {source} has no video stream; pass a video file"
        raise VideoError(msg)
    return container


def probe_video(path: str | os.PathLike[str], *, projection: Projection | None = None) -> VideoInfo:
    """Read a video's properties and decode its first frame to prove it is decodable.

    The picture must be equirectangular: spherical metadata saying so, or (when there is
    none) a 2:1 frame. ``projection="equirect"`` overrides both checks for footage whose
    metadata is missing or wrong.
    """
    import av

    source = Path(path)
    with open_video(source) as container:
        stream = container.streams.video[0]
        codec = stream.codec_context.name
        try:
            first = next(container.decode(stream))
        except (av.FFmpegError, StopIteration) as exc:
            detail = f" ({exc})" if isinstance(exc, av.FFmpegError) else ""
            msg = (
                f"video {source} has no decodable frame{detail}; the file is corrupt, "
                "truncated or empty: re-copy it from the camera"
            )
            raise VideoError(msg) from None
        rotation = round(first.rotation or 0) % 360
        if rotation % 90:
            msg = f"video {source}: rotation {rotation}° is not a multiple of 90°"
            raise VideoError(msg)
        spherical = _spherical_projection(first)
        time_base = float(stream.time_base) if stream.time_base else 1.0 / 90000
        rate = stream.average_rate or stream.guessed_rate or stream.base_rate
        fps = float(rate) if rate else 0.0
        if stream.duration and stream.time_base:
            duration = float(stream.duration * stream.time_base)
        elif container.duration:
            duration = container.duration / 1_000_000
        else:
            duration = 0.0
        frame_count = stream.frames or (round(duration * fps) if fps else 0)
        created = _parse_creation_time(
            container.metadata.get("creation_time") or stream.metadata.get("creation_time")
        )
        width, height = first.width, first.height
    if rotation % 180:
        width, height = height, width
    if fps <= 0 or not math.isfinite(fps):
        msg = f"video {source}: no frame rate in the container; remux it with ffmpeg"
        raise VideoError(msg)
    if projection is None:
        if spherical is not None and spherical != "equirectangular":
            msg = (
                f"video {source}: spherical metadata says {spherical!r}, not equirectangular; "
                "convert it to equirectangular, or pass --projection equirect if the "
                "metadata is wrong"
            )
            raise VideoError(msg)
        aspect = width / height
        if abs(aspect / 2.0 - 1.0) > EQUIRECT_ASPECT_TOLERANCE:
            msg = (
                f"video {source} is {width}x{height} (aspect {aspect:.3f}), not a 2:1 "
                "equirectangular frame; export it as equirectangular 360° video, or pass "
                "--projection equirect if it is equirectangular anyway"
            )
            raise VideoError(msg)
    return VideoInfo(
        path=source,
        codec=codec,
        width=width,
        height=height,
        fps=fps,
        frame_count=int(frame_count),
        duration_s=duration,
        time_base=time_base,
        creation_time_utc=created,
        rotation_deg=rotation,
        spherical=spherical,
    )


def iter_frames(
    info: VideoInfo, *, threads: int = 0, deblock: bool = True
) -> Generator[DecodedFrame, None, None]:
    """Decode every frame of ``info.path`` in order.

    A long-GOP video can only be decoded front to back, so this is the one pass ingest makes.
    Frame threading is used (fast for sequential decode). ``deblock=False`` skips the codec's
    in-loop deblocking filter: about a third less decoding work for H.264, but pictures drift
    slightly from the true decode until the next keyframe, so use it only for analysis (visual
    motion), never for frames that are stored. Raises :class:`VideoError` when the stream
    breaks off or stops well short of the frame count in its header (a truncated file).
    """
    import av

    with open_video(info.path) as container:
        stream = container.streams.video[0]
        stream.thread_type = "FRAME"
        stream.thread_count = threads
        if not deblock:
            stream.codec_context.options = {"skip_loop_filter": "all"}
        start = stream.start_time or 0
        index = -1
        try:
            for frame in container.decode(stream):
                if frame.pts is None:
                    continue
                index += 1
                t_s = (frame.pts - start) * info.time_base
                yield DecodedFrame(index, int(frame.pts), t_s, frame, info.rotation_deg)
        except av.FFmpegError as exc:
            msg = (
                f"video {info.path} breaks off after frame {index} ({exc}); the file is "
                "corrupt or truncated: re-copy it from the camera"
            )
            raise VideoError(msg) from None
    decoded = index + 1
    if info.frame_count and decoded < 0.98 * info.frame_count - 1:
        msg = (
            f"video {info.path} is truncated: its header promises {info.frame_count} frames "
            f"but only {decoded} decode; re-copy it from the camera"
        )
        raise VideoError(msg)
