"""A streamed video saved to disk (DASH or HLS), whichever it is: one entry point.

:func:`read_saved_stream` reads a DASH manifest (:mod:`.dash`) or an HLS playlist
(:mod:`.hls`) into its local files (:class:`~.stream_parts.StreamParts`), which decode
(``concat_url``), hash (``parts_sha256``) and sort (:mod:`.inputs`) as one video.
"""

from __future__ import annotations

from pathlib import Path

from city360.video_store.dash import DASH_SUFFIXES, read_dash
from city360.video_store.hls import HLS_SUFFIXES, read_hls
from city360.video_store.stream_parts import StreamParts

__all__ = [
    "SAVED_STREAM_SUFFIXES",
    "is_saved_stream",
    "read_saved_stream",
]

SAVED_STREAM_SUFFIXES = DASH_SUFFIXES | HLS_SUFFIXES
"""Suffixes of the manifests and playlists of saved streams."""


def is_saved_stream(path: Path) -> bool:
    """Whether ``path`` names a saved stream's manifest or playlist (by its suffix)."""
    return path.suffix.lower() in SAVED_STREAM_SUFFIXES


def read_saved_stream(path: str | Path) -> StreamParts:
    """The local files of the best video rendition of the saved stream at ``path``.

    Raises what :func:`~.dash.read_dash` and :func:`~.hls.read_hls` raise, and
    :class:`ValueError` for a path that is neither (check :func:`is_saved_stream` first)."""
    source = Path(path)
    suffix = source.suffix.lower()
    if suffix in DASH_SUFFIXES:
        return read_dash(source)
    if suffix in HLS_SUFFIXES:
        return read_hls(source)
    msg = f"{source} is not a DASH manifest or HLS playlist"
    raise ValueError(msg)
