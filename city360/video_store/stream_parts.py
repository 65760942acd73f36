"""The saved segments of a streamed video, read as one video.

A 360° video downloaded from a streaming site is a manifest (DASH ``.mpd``, :mod:`.dash`;
HLS ``.m3u8``, :mod:`.hls`) beside its segments. The initialization segment, if any, followed by
the media segments, byte for byte, is one video file (a fragmented MP4, or an MPEG transport
stream, which is made to be cut and joined), so FFmpeg's ``concat:`` protocol decodes them as a
single video without a copy on disk (:func:`concat_url`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from city360.errors import ConfigError

__all__ = ["StreamParts", "concat_url", "local_name", "parts_sha256"]


@dataclass(frozen=True, slots=True)
class StreamParts:
    """The local files of one video rendition of a saved stream, in play order.

    ``manifest``: the DASH manifest or HLS playlist the user passed. ``rendition``: which of
    its qualities this is (a DASH representation id, an HLS media playlist's name).
    ``initialization`` is None when the segments carry their own headers (MPEG-TS) or the
    rendition is one self-contained file (``segments`` then holds that file). ``listed``: how
    many media segments the manifest lists (None when it does not say); more than
    ``len(segments)`` when the download is partial. ``missing``: the first listed segment not
    found, if any. ``playlists``: the other playlists the manifest names, whose bytes are not
    the video's (an HLS master playlist's media playlists, of every quality)."""

    manifest: Path
    rendition: str
    initialization: Path | None
    segments: tuple[Path, ...]
    listed: int | None
    missing: str | None = None
    playlists: tuple[Path, ...] = ()

    @property
    def files(self) -> tuple[Path, ...]:
        """Every file of the video in byte order (initialization first)."""
        head = (self.initialization,) if self.initialization is not None else ()
        return (*head, *self.segments)


def local_name(address: str) -> str:
    """The file an address names: its last path part for a URL (the query, which may hold a
    token, dropped), the address itself (percent-decoded) otherwise."""
    if "://" not in address:
        return unquote(address)
    return unquote(urlsplit(address).path.rsplit("/", 1)[-1])


def concat_url(parts: StreamParts) -> str:
    """The FFmpeg ``concat:`` URL that reads ``parts`` as one stream (PyAV's ``av.open``).

    Raises :class:`ConfigError` for a path holding ``|``, the protocol's separator."""
    for path in parts.files:
        if "|" in str(path):
            msg = (
                f"saved stream {parts.manifest}: the path {path} holds '|', which FFmpeg's "
                "concat: protocol cannot read; rename the folder or the file"
            )
            raise ConfigError(msg)
    return "concat:" + "|".join(str(p) for p in parts.files)


def parts_sha256(parts: StreamParts, *, chunk_bytes: int = 1 << 20) -> str:
    """SHA-256 of the video's bytes (the files of ``parts`` concatenated), hex."""
    digest = hashlib.sha256()
    for path in parts.files:
        with path.open("rb") as stream:
            while chunk := stream.read(chunk_bytes):
                digest.update(chunk)
    return digest.hexdigest()
