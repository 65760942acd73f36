"""Random access to the frames of one trajectory (``frames.mp4``, all-intra H.264).

Every frame is a keyframe, so a frame decodes from its own packet alone. The store reads the
MP4's sample index once, and a cold ``get(i)`` is then one ``seek`` + ``read`` of that packet
and one intra decode (with slice threading, which decodes one picture on several cores; frame
threading would delay every single-frame decode). Decoded pictures are kept in a byte-bounded
LRU cache as packed I420 (1.5 bytes a pixel); ``get`` converts to RGB on the way out.

A background thread with its own file handle and decoder serves :meth:`FrameStore.prefetch`,
so a caller's ``get`` never waits behind a prefetch decode.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict, deque
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from city360.errors import CityFormatError, ClosedResourceError, FrameIndexError, InputFileError
from city360.types import Image

__all__ = ["DEFAULT_CACHE_BYTES", "FrameStore", "YuvPlanes"]

DEFAULT_CACHE_BYTES = 512 * 1024 * 1024
"""Default cache bound: 512 MiB, about 45 frames of 3840x1920."""

YuvPlanes = tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8], npt.NDArray[np.uint8]]
"""Y (H, W), U (H/2, W/2), V (H/2, W/2), uint8, BT.601 limited range as encoded."""


def packed_i420(frame: Any) -> npt.NDArray[np.uint8]:
    """A decoded ``yuv420p`` PyAV frame of even width and height (as the store writes) as one
    packed I420 array (H * 3 / 2, W): the Y rows,
    then U and V (each H/2 x W/2) one after the other, the layout of
    ``frame.to_ndarray(format="yuv420p")``. Each plane is copied once, straight from the
    decoder's buffer with its row padding dropped; ``to_ndarray`` builds the same array
    through ``np.hstack`` of padded copies, about 2.6 ms more on a 3840x1920 frame (a third of
    a cold step's decode)."""
    width, height = frame.width, frame.height
    out = np.empty((height * 3 // 2, width), np.uint8)
    flat = out.reshape(-1)
    start = 0
    for plane in frame.planes:
        rows, cols = plane.height, plane.width
        source = np.frombuffer(plane, np.uint8, count=rows * plane.line_size)
        flat[start : start + rows * cols].reshape(rows, cols)[:] = source.reshape(
            rows, plane.line_size
        )[:, :cols]
        start += rows * cols
    return out


class _Decoder:
    """One file handle and one decoder; not thread-safe (each user holds its own lock)."""

    def __init__(self, path: Path, codec: str, extradata: bytes | None, threads: int) -> None:
        import av

        self._file: IO[bytes] = open(path, "rb")  # noqa: SIM115 - closed in close()
        self._path = path
        self._av = av
        context: Any = av.CodecContext.create(codec, "r")
        if extradata:
            context.extradata = extradata
        context.thread_type = "SLICE"
        context.thread_count = threads
        self._context = context

    def decode(self, pos: int, size: int, width: int, height: int) -> npt.NDArray[np.uint8]:
        """Decode the packet at byte ``pos`` into a packed I420 array (H * 3 / 2, W)."""
        fix = "re-run `city360 ingest ... --overwrite` for this trajectory"
        self._file.seek(pos)
        data = self._file.read(size)
        if len(data) < size:
            msg = (
                f"frame store {self._path} is truncated: the frame at byte {pos} needs {size} "
                f"bytes, {len(data)} are left (the file was cut short); {fix}"
            )
            raise CityFormatError(msg)
        try:
            frames = self._context.decode(self._av.Packet(data))
            if not frames:  # a decoder with delay: drain it, then make it usable again
                frames = self._context.decode(None)
                self._context.flush_buffers()
        except (self._av.FFmpegError, EOFError) as exc:
            msg = f"frame store {self._path}: frame at byte {pos} does not decode ({exc}); {fix}"
            raise CityFormatError(msg) from None
        if not frames:
            msg = f"frame store {self._path}: packet at byte {pos} did not decode; {fix}"
            raise CityFormatError(msg)
        frame = frames[-1]
        if frame.format.name != "yuv420p" or (frame.width, frame.height) != (width, height):
            frame = frame.reformat(width=width, height=height, format="yuv420p")
        return packed_i420(frame)

    def close(self) -> None:
        self._file.close()


class FrameStore:
    """Read frames of an all-intra video by index, with an LRU cache and prefetching.

    ``get(i)`` returns RGB uint8 (H, W, 3); ``get_yuv(i)`` returns the Y, U, V planes. Returned
    arrays are read-only (they may be shared with the cache). Thread-safe. A context manager;
    ``close()`` may be called twice; any other method after it raises ClosedResourceError.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        threads: int = 2,
    ) -> None:
        import av

        self.path = Path(path)
        if cache_bytes < 0:
            msg = f"`cache_bytes` must be >= 0, got {cache_bytes}"
            raise ValueError(msg)
        if not self.path.is_file():
            msg = f"frame store {self.path} not found; re-run `city360 ingest`"
            raise InputFileError(msg)
        try:
            with av.open(str(self.path)) as container:
                stream = container.streams.video[0]
                # copy the index out now: IndexEntry objects point into the open container
                entries = sorted(
                    (
                        (int(e.timestamp), int(e.pos), int(e.size), bool(e.is_keyframe))
                        for e in stream.index_entries
                    ),
                )
                self._codec = stream.codec_context.name
                extradata = stream.codec_context.extradata
                width, height = stream.codec_context.width, stream.codec_context.height
        except (av.FFmpegError, EOFError, IndexError) as exc:
            msg = f"frame store {self.path} cannot be read ({exc}); re-run `city360 ingest`"
            raise CityFormatError(msg) from None
        if not entries:
            msg = f"frame store {self.path} has no frames; re-run `city360 ingest`"
            raise CityFormatError(msg)
        not_key = [k for k, e in enumerate(entries) if not e[3]]
        if not_key:
            msg = (
                f"frame store {self.path} is not all-intra (frame {not_key[0]} is not a "
                "keyframe); re-run `city360 ingest` to rewrite it"
            )
            raise CityFormatError(msg)
        self._pos = np.array([e[1] for e in entries], np.int64)
        self._size = np.array([e[2] for e in entries], np.int64)
        self._width, self._height = int(width), int(height)
        self._extradata = extradata
        self._threads = threads
        self._frame_bytes = self._width * self._height * 3 // 2
        self.cache_bytes = int(cache_bytes)
        self._cache: OrderedDict[int, npt.NDArray[np.uint8]] = OrderedDict()
        self._cached_bytes = 0
        self._cache_lock = threading.Lock()
        self._decode_lock = threading.Lock()
        self._decoder: _Decoder | None = _Decoder(self.path, self._codec, extradata, threads)
        self._closed = False
        self._pending: deque[int] = deque()
        self._wakeup = threading.Condition()
        self._busy = False
        self._worker: threading.Thread | None = None
        self.hits = 0
        self.misses = 0

    # properties -----------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self._pos.shape[0])

    @property
    def width(self) -> int:
        return self._width

    @property
    def height(self) -> int:
        return self._height

    @property
    def cached_bytes(self) -> int:
        """Bytes of decoded frames held in the cache now."""
        return self._cached_bytes

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self)} frames {self._width}x{self._height}"
        return f"FrameStore({str(self.path)!r}, {state})"

    # reading ---------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            msg = f"{self!r} is closed; open a new FrameStore"
            raise ClosedResourceError(msg)

    def _check_index(self, index: int) -> int:
        n = len(self)
        i = int(index)
        if i < 0:
            i += n
        if not 0 <= i < n:
            msg = f"frame index {index} out of range for {self.path} with {n} frames (0..{n - 1})"
            raise FrameIndexError(msg)
        return i

    def _cache_get(self, index: int) -> npt.NDArray[np.uint8] | None:
        with self._cache_lock:
            packed = self._cache.get(index)
            if packed is not None:
                self._cache.move_to_end(index)
            return packed

    def _cache_put(self, index: int, packed: npt.NDArray[np.uint8]) -> None:
        size = packed.nbytes
        if size > self.cache_bytes:
            return
        with self._cache_lock:
            if index in self._cache:
                return
            self._cache[index] = packed
            self._cached_bytes += size
            while self._cached_bytes > self.cache_bytes:
                _, evicted = self._cache.popitem(last=False)
                self._cached_bytes -= evicted.nbytes

    def _packed(self, index: int) -> npt.NDArray[np.uint8]:
        self._check_open()
        i = self._check_index(index)
        packed = self._cache_get(i)
        if packed is not None:
            self.hits += 1
            return packed
        self.misses += 1
        with self._decode_lock:
            decoder = self._decoder
            if decoder is None:
                self._check_open()
                msg = f"{self!r} has no decoder"
                raise ClosedResourceError(msg)
            packed = decoder.decode(
                int(self._pos[i]), int(self._size[i]), self._width, self._height
            )
        packed.setflags(write=False)
        self._cache_put(i, packed)
        return packed

    def get_yuv(self, index: int) -> YuvPlanes:
        """Frame ``index`` as read-only (Y, U, V) planes; U and V at half width and height."""
        packed = self._packed(index)
        h, w = self._height, self._width
        chroma = packed[h:].reshape(-1)
        quarter = (h // 2) * (w // 2)
        u = chroma[:quarter].reshape(h // 2, w // 2)
        v = chroma[quarter : 2 * quarter].reshape(h // 2, w // 2)
        return packed[:h], u, v

    def get(self, index: int) -> Image:
        """Frame ``index`` as RGB uint8 (H, W, 3); negative indices count from the end."""
        import cv2

        packed = self._packed(index)
        rgb: Image = cv2.cvtColor(packed, cv2.COLOR_YUV2RGB_I420)  # type: ignore[assignment]
        return rgb

    # prefetch --------------------------------------------------------------------------------
    def prefetch(self, indices: Iterable[int]) -> None:
        """Decode ``indices`` into the cache in the background, in the order given.

        A new call replaces what an earlier call left pending: the caller has moved on.
        """
        self._check_open()
        wanted = [self._check_index(i) for i in indices]
        with self._wakeup:
            self._pending.clear()
            with self._cache_lock:
                self._pending.extend(i for i in wanted if i not in self._cache)
            if self._worker is None:
                self._worker = threading.Thread(
                    target=self._prefetch_loop, name=f"prefetch:{self.path.name}", daemon=True
                )
                self._worker.start()
            self._wakeup.notify_all()

    def wait_prefetch(self, timeout: float | None = None) -> bool:
        """Block until every pending prefetch is decoded; False if ``timeout`` s passed first."""
        with self._wakeup:
            return self._wakeup.wait_for(
                lambda: self._closed or (not self._pending and not self._busy), timeout
            )

    def _prefetch_loop(self) -> None:
        decoder = _Decoder(self.path, self._codec, self._extradata, self._threads)
        try:
            while True:
                with self._wakeup:
                    self._wakeup.wait_for(lambda: self._closed or bool(self._pending))
                    if self._closed:
                        return
                    index = self._pending.popleft()
                    self._busy = True
                try:  # a frame that fails here raises again, visibly, when get() asks for it
                    if self._cache_get(index) is None:
                        packed = decoder.decode(
                            int(self._pos[index]), int(self._size[index]), self._width, self._height
                        )
                        packed.setflags(write=False)
                        self._cache_put(index, packed)
                except Exception:
                    pass
                finally:
                    with self._wakeup:
                        self._busy = False
                        self._wakeup.notify_all()
        finally:
            decoder.close()

    # lifecycle -------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop prefetching, release the file and the cache. Safe to call twice."""
        with self._wakeup:
            if self._closed:
                return
            self._closed = True
            self._wakeup.notify_all()
        if self._worker is not None:
            self._worker.join()
        with self._decode_lock:
            if self._decoder is not None:
                self._decoder.close()
                self._decoder = None
        with self._cache_lock:
            self._cache.clear()
            self._cached_bytes = 0

    def __enter__(self) -> FrameStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        # a forgotten store must not keep its prefetch thread and file alive
        if not getattr(self, "_closed", True):
            self.close()
