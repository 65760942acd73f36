"""Open a source video with PyAV: probe it, check it is equirectangular, iterate its frames.

Any codec the bundled FFmpeg decodes works (H.264, HEVC, VP9, AV1 via libdav1d). Frames come out
upright: rotation metadata (the display matrix) is applied, because a phone or camera held
sideways stores the picture rotated and says so in the container. A GoPro MAX ``.360`` (two
EAC cube-map streams, :mod:`.gopro_max`) is decoded stream by stream, and its frames come out
as the equirectangular picture the two strips hold; the single-stream native layouts (dual
fisheye, EAC and plain 3x2 cube maps, :mod:`.layouts`) come out converted the same way.
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
from city360.video_store.dual_fisheye import DualFisheye
from city360.video_store.gopro_max import (
    GOPRO_MAX_LAYOUTS,
    GoProMaxLayout,
    eac_to_equirect,
    layout_for_size,
)
from city360.video_store.layouts import (
    Layout,
    LayoutChoice,
    check_frame_size,
    detect_layout,
    equirect_size,
    native_to_equirect,
)
from city360.video_store.saved_stream import is_saved_stream, read_saved_stream
from city360.video_store.stream_parts import concat_url

if TYPE_CHECKING:
    import av
    import av.container
    import av.video.frame
    import av.video.reformatter

__all__ = [
    "EQUIRECT_ASPECT_TOLERANCE",
    "GOPRO_HANDLER",
    "DecodedFrame",
    "VideoInfo",
    "gopro_max_layout",
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
    gopro_max: GoProMaxLayout | None = None
    """A GoPro MAX ``.360``'s strip layout (``width``/``height`` are then the equirect size
    its strips hold), or None for an equirectangular video."""
    layout: Layout = "equirect"
    """The layout the camera wrote (:mod:`.layouts`); for any but ``equirect``,
    ``width``/``height`` are the size of the equirect picture a frame holds."""
    source_size: tuple[int, int] | None = None
    """The decoded frame's own size (width, height) as displayed, pixels."""
    fisheye: DualFisheye | None = None
    """The lens geometry of a ``dual-fisheye`` video, else None."""


@dataclass(frozen=True, slots=True)
class DecodedFrame:
    """One decoded source frame: its 0-based decode-order ``index``, ``pts`` in the stream
    time_base, ``t_s`` seconds since the first frame, and the upright picture.

    For a GoPro MAX ``.360``, ``frame`` is stream 0's strip and ``back_strip`` stream 1's of the
    same pts; every ``to_*`` method then returns the equirect picture they hold."""

    index: int
    pts: int
    t_s: float
    frame: av.video.frame.VideoFrame
    rotation_deg: int
    back_strip: av.video.frame.VideoFrame | None = None
    gopro_max: GoProMaxLayout | None = None
    layout: Layout = "equirect"
    """The source's layout; a single-stream native one (dual fisheye, cube maps) is converted
    by every ``to_*`` method."""
    fisheye: DualFisheye | None = None

    def to_yuv420(
        self, *, width: int, scaler: av.video.reformatter.VideoReformatter | None = None
    ) -> av.video.frame.VideoFrame | None:
        """The picture as a yuv420p frame ``width`` wide, or None when it must be rotated or
        converted from a native layout (then use :meth:`to_rgb`). Staying in Y'CbCr skips two
        colour conversions, keeps chroma as decoded, and is the fast path at 4K. ``scaler``:
        see :meth:`to_gray`."""
        if self.rotation_deg % 360 or self.gopro_max is not None or self.layout != "equirect":
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
        if self.gopro_max is not None:
            return self._gopro_equirect("gray", width, scaler)
        if self.layout != "equirect":
            return self._native_equirect("gray", width, scaler)
        rotated_sideways = self.rotation_deg % 180 != 0
        src_w = self.frame.height if rotated_sideways else self.frame.width
        src_h = self.frame.width if rotated_sideways else self.frame.height
        height = _even_height(src_w, src_h, width)
        scaled = (height, width) if rotated_sideways else (width, height)
        image = _scaled(self.frame, "gray", scaled[0], scaled[1], scaler)
        return rotate_upright(image, self.rotation_deg)

    def to_rgb(self, *, width: int | None = None) -> npt.NDArray[np.uint8]:
        """The picture as RGB uint8 (H, W, 3), upright, scaled to ``width`` when given."""
        if self.gopro_max is not None:
            return self._gopro_equirect("rgb24", width or self.gopro_max.equirect_width, None)
        if self.layout != "equirect":
            full = equirect_size(self.layout, self.frame.width, self.frame.height)[0]
            return self._native_equirect("rgb24", width or full, None)
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

    def _gopro_equirect(
        self,
        pixel_format: str,
        width: int,
        scaler: av.video.reformatter.VideoReformatter | None,
    ) -> npt.NDArray[np.uint8]:
        """The equirect picture ``width`` wide that the two strips hold. For a small output the
        strips are scaled down first (area-averaged by FFmpeg), which is far cheaper than
        converting at full size."""
        layout = self.gopro_max
        if layout is None or self.back_strip is None:
            msg = "this frame is not a GoPro MAX frame pair"
            raise VideoError(msg)
        strip_w = min(layout.width, max(2, round(width * layout.width / layout.equirect_width)))
        strip_w += strip_w % 2
        strip_h = _even_height(layout.width, layout.height, strip_w)
        front, back = (
            _scaled(frame, pixel_format, strip_w, strip_h, scaler)
            for frame in (self.frame, self.back_strip)
        )
        return eac_to_equirect(front, back, layout, width=width)

    def _native_equirect(
        self,
        pixel_format: str,
        width: int,
        scaler: av.video.reformatter.VideoReformatter | None,
    ) -> npt.NDArray[np.uint8]:
        """The equirect picture ``width`` wide that a single-stream native frame holds. The
        frame is first scaled (area-averaged by FFmpeg) to about the resolution the output
        needs: far cheaper than converting at full size for a small output."""
        frame = self.frame
        full_w = equirect_size(self.layout, frame.width, frame.height)[0]
        src_w = min(frame.width, max(2, round(width * frame.width / full_w)))
        src_w += src_w % 2
        src_h = _even_height(frame.width, frame.height, src_w)
        picture = _scaled(frame, pixel_format, src_w, src_h, scaler)
        return native_to_equirect(picture, self.layout, width=width, fisheye=self.fisheye)


def _scaled(
    frame: av.video.frame.VideoFrame,
    pixel_format: str,
    width: int,
    height: int,
    scaler: av.video.reformatter.VideoReformatter | None,
) -> npt.NDArray[np.uint8]:
    """``frame`` as an array of ``pixel_format``, ``width`` x ``height`` px (area-averaged by
    FFmpeg; as decoded when that is its size), through ``scaler`` when the caller keeps one."""
    if (width, height) == (frame.width, frame.height):
        return frame.to_ndarray(format=pixel_format)  # type: ignore[return-value]
    if scaler is None:
        return frame.to_ndarray(  # type: ignore[return-value]
            format=pixel_format, width=width, height=height, interpolation="AREA"
        )
    return scaler.reformat(  # type: ignore[return-value]
        frame, width=width, height=height, format=pixel_format, interpolation="AREA"
    ).to_ndarray()


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
    :class:`VideoError` that names the file. A saved stream's DASH manifest (``.mpd``) or HLS
    playlist (``.m3u8``) opens its video's segments as one stream (:mod:`.saved_stream`)."""
    import av

    source = Path(path)
    if not source.is_file():
        msg = f"video {source} not found; check the path"
        raise InputFileError(msg)
    if source.stat().st_size == 0:
        msg = f"video {source} is empty (0 bytes); re-copy it from the camera"
        raise VideoError(msg)
    url = str(source)
    if is_saved_stream(source):  # its segments as one file
        url = concat_url(read_saved_stream(source))
    try:
        container = av.open(url, mode="r")
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


GOPRO_HANDLER = "GoPro H.265"
"""The handler name of a GoPro MAX's video tracks (its ``.360`` files carry two)."""


def gopro_max_layout(
    container: av.container.InputContainer, source: Path, *, told: bool = False
) -> GoProMaxLayout | None:
    """The GoPro MAX strip layout of an opened video, or None when it is not a ``.360``.

    A ``.360`` is recognised by its suffix, or by two video tracks named ``GoPro H.265``, or
    ``told`` (``--layout gopro-max``); it must then hold exactly two video streams of one
    known strip size, else :class:`VideoError` says what was found.
    """
    videos = list(container.streams.video)
    handlers = [str(s.metadata.get("handler_name", "")).strip() for s in videos]
    named = len(videos) == 2 and all(h == GOPRO_HANDLER for h in handlers)
    if source.suffix.lower() != ".360" and not named and not told:
        return None
    sizes = [(s.codec_context.width, s.codec_context.height) for s in videos]
    layout = layout_for_size(*sizes[0]) if len(set(sizes)) == 1 else None
    if len(videos) == 2 and layout is not None:
        return layout
    found = ", ".join(f"{w}x{h}" for w, h in sizes)
    expected = " or ".join(f"{lay.width}x{lay.height} ({lay.name})" for lay in GOPRO_MAX_LAYOUTS)
    msg = (
        f"GoPro MAX video {source} has {len(videos)} video stream(s) ({found}); a .360 holds "
        f"two EAC strips of one size, {expected}: re-copy it from the camera, or export it "
        "as an equirectangular .mp4 (GoPro Player) and ingest that"
    )
    raise VideoError(msg)


def probe_video(
    path: str | os.PathLike[str],
    *,
    projection: Projection | None = None,
    layout: LayoutChoice = "auto",
    fisheye: DualFisheye | None = None,
) -> VideoInfo:
    """Read a video's properties and decode its first frame to prove it is decodable.

    ``layout`` says how the camera laid out the sphere (:mod:`.layouts`); ``auto`` decides
    from the container (a GoPro MAX ``.360``, a ``.insv`` suffix, spherical metadata, else a
    2:1 frame is equirect and a 3:2 frame EAC). A told layout the frame's size does not fit is
    a :class:`VideoError`. ``layout="equirect"`` (or the older ``projection="equirect"``)
    takes the frame as equirect whatever its shape or metadata say. ``fisheye``: the lens
    geometry of a dual-fisheye video (default :class:`DualFisheye`).
    """
    import av

    source = Path(path)
    if projection == "equirect" and layout == "auto":
        layout = "equirect"
    with open_video(source) as container:
        gopro = None
        if layout in ("auto", "gopro-max"):
            gopro = gopro_max_layout(container, source, told=layout == "gopro-max")
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
        video_streams = len(container.streams.video)
    if rotation % 180:
        width, height = height, width
    if fps <= 0 or not math.isfinite(fps):
        msg = f"video {source}: no frame rate in the container; remux it with ffmpeg"
        raise VideoError(msg)
    source_size = (width, height)
    chosen: Layout
    if gopro is not None:
        if rotation:
            msg = f"GoPro MAX video {source}: rotation {rotation}° on a .360 is not supported"
            raise VideoError(msg)
        width, height = gopro.equirect_width, gopro.equirect_width // 2
        spherical = None
        chosen = "gopro-max"
    else:
        if layout == "auto":
            chosen = detect_layout(source, spherical=spherical, width=width, height=height)
        else:
            chosen = layout
            check_frame_size(chosen, source, width, height)
        if chosen == "dual-fisheye" and video_streams > 1 and abs(width / height - 1.0) < 0.1:
            msg = (
                f"video {source} holds {video_streams} video streams of {width}x{height}: one "
                "lens per stream (Insta360 X3/X4/X5), which ingest does not stitch; export it "
                "as equirectangular .mp4 (Insta360 Studio) and ingest that"
            )
            raise VideoError(msg)
        if chosen == "dual-fisheye" and layout == "auto" and abs(width / height - 1.0) < 0.1:
            # Insta360 ONE X2/RS at 5.7K write each lens to its own file: one circle, which
            # read as a side-by-side pair came out garbled without a word
            msg = (
                f"video {source} is {width}x{height}, one lens's picture: Insta360 cameras write "
                "5.7K video as two files, VID_..._00_... (front lens) and VID_..._10_... (back "
                "lens), which ingest does not stitch; export the pair as equirectangular .mp4 "
                "(Insta360 Studio) and ingest that"
            )
            raise VideoError(msg)
        if chosen != "equirect":
            if rotation:
                msg = (
                    f"video {source}: rotation {rotation}° on a {chosen} video is not "
                    "supported; remux it without the rotation (ffmpeg -display_rotation 0)"
                )
                raise VideoError(msg)
            width, height = equirect_size(chosen, width, height)
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
        gopro_max=gopro,
        layout=chosen,
        source_size=source_size,
        fisheye=(fisheye or DualFisheye()) if chosen == "dual-fisheye" else None,
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

    if info.gopro_max is not None:
        yield from _iter_gopro_max(info, threads=threads, deblock=deblock)
        return
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
                yield DecodedFrame(
                    index, int(frame.pts), t_s, frame, info.rotation_deg,
                    layout=info.layout, fisheye=info.fisheye,
                )  # fmt: skip
        except av.FFmpegError as exc:
            raise _broken_off(info, index, exc) from None
    _check_complete(info, index + 1)


def _broken_off(info: VideoInfo, index: int, exc: Exception) -> VideoError:
    """The error for a decode that fails after frame ``index``."""
    msg = (
        f"video {info.path} breaks off after frame {index} ({exc}); the file is "
        "corrupt or truncated: re-copy it from the camera"
    )
    return VideoError(msg)


def _check_complete(info: VideoInfo, decoded: int) -> None:
    """Refuse a video that decoded to fewer frames than its header promises (2 % slack)."""
    if info.frame_count and decoded < 0.98 * info.frame_count - 1:
        msg = (
            f"video {info.path} is truncated: its header promises {info.frame_count} frames "
            f"but only {decoded} decode; re-copy it from the camera"
        )
        raise VideoError(msg)


def _iter_gopro_max(
    info: VideoInfo, *, threads: int, deblock: bool
) -> Generator[DecodedFrame, None, None]:
    """:func:`iter_frames` for a GoPro MAX ``.360``: decode both strip streams (interleaved in
    the file) and pair their frames by pts; a frame of one stream without its partner in the
    other (a truncated tail) is dropped."""
    import av

    with open_video(info.path) as container:
        streams = list(container.streams.video[:2])
        for stream in streams:
            stream.thread_type = "FRAME"
            stream.thread_count = threads
            if not deblock:
                stream.codec_context.options = {"skip_loop_filter": "all"}
        start = streams[0].start_time or 0
        pending: tuple[dict[int, Any], dict[int, Any]] = ({}, {})
        index = -1
        try:
            for packet in container.demux(streams):
                side = 0 if packet.stream.index == streams[0].index else 1
                for item in packet.decode():
                    frame: av.VideoFrame = item  # type: ignore[assignment]
                    if frame.pts is None:
                        continue
                    pts = int(frame.pts)
                    other = pending[1 - side].pop(pts, None)
                    if other is None:
                        pending[side][pts] = frame
                        continue
                    front, back = (frame, other) if side == 0 else (other, frame)
                    index += 1
                    t_s = (pts - start) * info.time_base
                    yield DecodedFrame(
                        index, pts, t_s, front, 0, back_strip=back, gopro_max=info.gopro_max,
                        layout="gopro-max",
                    )  # fmt: skip
        except av.FFmpegError as exc:
            raise _broken_off(info, index, exc) from None
    _check_complete(info, index + 1)
