"""Write a trajectory's frames as all-intra H.264: every frame a keyframe, frame i at pts i.

All-intra is what makes random access cheap: any frame decodes from its own packet, so the
reader's ``get(i)`` is one seek and one decode instead of a walk from the previous keyframe.
Frames are cut into slices so a reader may decode one picture on several cores.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from city360.errors import ClosedResourceError, ConfigError

if TYPE_CHECKING:
    import av.container
    import av.video.frame
    import av.video.stream

__all__ = ["FRAMES_RATE", "BackgroundWriter", "FrameWriter", "output_size", "remux_subset"]

FRAMES_RATE = 10
"""Nominal frame rate of frames.mp4 (frames are places, not times; 10 fps plays a 1 m
spacing at a brisk 10 m/s). The track timescale equals it so that frame i has pts i."""


def output_size(width: int, height: int, max_width: int | None) -> tuple[int, int]:
    """The stored frame size: ``width`` capped at ``max_width``, 2:1 kept, both even."""
    if max_width is not None and max_width < 16:
        msg = f"`max_width` must be >= 16 pixels, got {max_width}"
        raise ConfigError(msg)
    target_w = width if max_width is None else min(width, max_width)
    target_w -= target_w % 2
    target_h = max(2, round(height * target_w / width / 2) * 2)
    return target_w, target_h


class FrameWriter:
    """Encode RGB frames in order into ``path`` (an all-intra H.264 MP4).

    ``crf``: x264 constant rate factor (lower is better quality; 16 keeps synthetic and real
    street frames above 40 dB PSNR). ``preset``/``tune``: ``ultrafast`` + ``fastdecode``
    (CAVLC, no deblocking) encode and, above all, decode fastest, at about 40% more bytes than
    ``veryfast`` for the same PSNR: random access is what this file is for. ``slices``: slices
    per frame, so a reader may decode one picture on several cores.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        width: int,
        height: int,
        *,
        crf: int = 16,
        preset: str = "ultrafast",
        tune: str | None = "fastdecode",
        slices: int = 4,
        threads: int = 0,
    ) -> None:
        import av

        self.path = Path(path)
        self.width, self.height = width, height
        self.count = 0
        self._container: av.container.OutputContainer | None = av.open(
            str(self.path),
            mode="w",
            format="mp4",
            options={"video_track_timescale": str(FRAMES_RATE), "movflags": "+faststart"},
        )
        stream: av.video.stream.VideoStream = self._container.add_stream(
            "libx264", rate=FRAMES_RATE
        )
        stream.width, stream.height = width, height
        stream.pix_fmt = "yuv420p"
        stream.time_base = Fraction(1, FRAMES_RATE)
        stream.codec_context.thread_count = threads
        stream.options = {
            "g": "1",
            "keyint_min": "1",
            "bf": "0",
            "crf": str(crf),
            "preset": preset,
            "slices": str(slices),
            "sc_threshold": "0",
        }
        if tune:
            stream.options = {**stream.options, "tune": tune}
        self._stream = stream

    def __repr__(self) -> str:
        return f"FrameWriter({str(self.path)!r}, {self.width}x{self.height}, {self.count} frames)"

    def write(self, image: npt.NDArray[np.uint8]) -> int:
        """Append one RGB (H, W, 3) frame of the writer's size; return its index."""
        import av

        if self._container is None:
            msg = f"{self!r} is closed"
            raise ClosedResourceError(msg)
        if image.shape != (self.height, self.width, 3):
            msg = f"frame shape {image.shape} != ({self.height}, {self.width}, 3)"
            raise ConfigError(msg)
        frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(image), format="rgb24")
        frame.pts = self.count
        for packet in self._stream.encode(frame):
            self._container.mux(packet)
        self.count += 1
        return self.count - 1

    def write_frame(self, frame: av.video.frame.VideoFrame) -> int:
        """Append one decoded yuv420p frame of the writer's size; return its index."""
        if self._container is None:
            msg = f"{self!r} is closed"
            raise ClosedResourceError(msg)
        if (frame.width, frame.height) != (self.width, self.height):
            msg = f"frame size {frame.width}x{frame.height} != {self.width}x{self.height}"
            raise ConfigError(msg)
        frame.pts = self.count
        frame.time_base = Fraction(1, FRAMES_RATE)
        for packet in self._stream.encode(frame):
            self._container.mux(packet)
        self.count += 1
        return self.count - 1

    def close(self) -> None:
        """Flush the encoder and finish the file. Safe to call twice."""
        if self._container is None:
            return
        container, self._container = self._container, None
        try:
            for packet in self._stream.encode(None):
                container.mux(packet)
        finally:
            container.close()

    def __enter__(self) -> FrameWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class BackgroundWriter:
    """Encode on a worker thread while the caller keeps decoding; owns ``writer``.

    :meth:`submit` queues a job returning the next picture (a yuv420p ``VideoFrame`` of the
    writer's size, or an RGB array): the worker runs it (so scaling and colour conversion also
    leave the decoding thread), then encodes the result, in submission order. FFmpeg releases
    the GIL while it scales and encodes, so this overlaps encoding with the caller's decoding
    instead of adding to it. At most ``depth`` jobs wait (each may hold a decoded frame), so
    memory stays bounded and a slow encoder throttles the caller.

    An error in the worker is raised again by the next :meth:`submit` or by :meth:`close`.
    Leaving the ``with`` block on an exception drops queued jobs and closes the file.
    """

    def __init__(self, writer: FrameWriter, *, depth: int = 4) -> None:
        if depth < 1:
            msg = f"`depth` must be >= 1, got {depth}"
            raise ConfigError(msg)
        self.writer = writer
        self._jobs: queue.Queue[Callable[[], object] | None] = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None
        self._cancelled = False
        self._closed = False
        self._thread = threading.Thread(
            target=self._run, name=f"encode:{writer.path.name}", daemon=True
        )
        self._thread.start()

    def __repr__(self) -> str:
        return f"BackgroundWriter({self.writer!r})"

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            if self._error is not None or self._cancelled:
                continue  # keep draining so a blocked submit() can return
            try:
                picture = job()
                if isinstance(picture, np.ndarray):
                    self.writer.write(picture)
                else:
                    self.writer.write_frame(picture)  # type: ignore[arg-type]
            except BaseException as exc:  # handed to the caller's thread
                self._error = exc

    def _raise_error(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def submit(self, job: Callable[[], object]) -> None:
        """Queue ``job`` (blocks while ``depth`` jobs wait). Raises a failed job's error."""
        if self._closed:
            msg = f"{self!r} is closed"
            raise ClosedResourceError(msg)
        self._raise_error()
        self._jobs.put(job)

    def close(self, *, cancel: bool = False) -> None:
        """Finish the queued jobs (``cancel``: drop them), stop the worker and close the
        writer; raise a job's error if one failed. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._cancelled = cancel
        while cancel:  # drop what waits, so the worker stops after its current job
            try:
                self._jobs.get_nowait()
            except queue.Empty:
                break
        self._jobs.put(None)
        self._thread.join()
        try:
            if not cancel:
                self._raise_error()
        finally:
            self.writer.close()

    def __enter__(self) -> BackgroundWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close(cancel=exc is not None)


def remux_subset(
    source: str | os.PathLike[str], target: str | os.PathLike[str], keep: list[int]
) -> int:
    """Copy frames ``keep`` (indices, increasing) of an all-intra ``source`` into ``target``
    without re-encoding, renumbering them 0, 1, 2, ... (every packet is a keyframe, so any
    subset is a valid stream). Returns the number of frames written."""
    import av

    wanted = set(keep)
    written = 0
    with (
        av.open(str(source)) as src,
        av.open(
            str(target),
            mode="w",
            format="mp4",
            options={"video_track_timescale": str(FRAMES_RATE), "movflags": "+faststart"},
        ) as dst,
    ):
        in_stream = src.streams.video[0]
        out_stream = dst.add_stream_from_template(in_stream)
        out_stream.time_base = Fraction(1, FRAMES_RATE)
        for packet in src.demux(in_stream):
            if packet.pts is None or packet.size == 0 or packet.pts not in wanted:
                continue
            packet.stream = out_stream
            packet.pts = packet.dts = written
            packet.time_base = Fraction(1, FRAMES_RATE)
            dst.mux(packet)
            written += 1
    return written
