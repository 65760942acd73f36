"""An HLS stream saved to disk, read as one video.

A 360° video downloaded from a streaming site is often an HLS presentation: a playlist
(``.m3u8``) beside its media segments, MPEG transport streams (``walk0.ts``, ...) or fragmented
MP4 (``init.mp4`` named by ``#EXT-X-MAP``, then ``walk0.m4s``, ...). Byte for byte, in order,
they are one video, which :mod:`.stream_parts` reads as such.

:func:`read_hls` resolves a media playlist's segments to local files, and of a master playlist
(several qualities, ``#EXT-X-STREAM-INF``) takes the best quality whose files are there; an
audio-only rendition is not a video. Segments are taken in order up to the first one missing,
and :attr:`StreamParts.listed` says how many the playlist lists, so a partial download ingests
what it has. Segments stored as byte ranges of one file (``#EXT-X-BYTERANGE``) read that file.

Refused, with the way on: encrypted segments (``#EXT-X-KEY``; the downloader decrypts them),
and playlists whose parts were encoded separately (``#EXT-X-DISCONTINUITY``: their clocks
restart, so they are no single timeline). A remote address is looked for beside the playlist
by its file name, and an error never prints the address (signed URLs carry tokens).

The playlist is parsed with ``m3u8`` (globocom's parser, maintained, pure Python).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import NoReturn

import m3u8

from city360.errors import ConfigError, InputFileError
from city360.video_store.stream_parts import StreamParts, local_name

__all__ = ["HLS_SUFFIXES", "read_hls"]

HLS_SUFFIXES = frozenset({".m3u8"})
"""Suffixes of HLS playlists."""

_VIDEO_CODECS = ("avc1", "avc3", "hvc1", "hev1", "dvh1", "dvhe", "vp09", "vp8", "av01", "mp4v")
"""RFC 6381 codec prefixes of video formats (a variant whose CODECS list none is audio)."""


def _playlist(path: Path) -> m3u8.M3U8:
    """The parsed playlist at ``path``; :class:`ConfigError` when it is not one."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        msg = f"HLS playlist {path} cannot be read ({exc}); re-download it"
        raise ConfigError(msg) from None
    if not text.lstrip().startswith("#EXTM3U"):
        msg = f"{path} is not an HLS playlist (it does not start with #EXTM3U)"
        raise ConfigError(msg)
    return m3u8.loads(text)


def _local(folder: Path, address: str) -> Path:
    """Where a playlist's ``address`` is saved: a relative path below ``folder``, a remote
    one by its file name beside it."""
    return folder / local_name(address)


def _is_video(variant: m3u8.Playlist) -> bool:
    codecs = (variant.stream_info.codecs or "").lower()
    if not codecs:
        return True  # not said: a video, as most variants are
    return any(c.strip().startswith(_VIDEO_CODECS) for c in codecs.split(","))


def read_hls(playlist: str | Path) -> StreamParts:
    """The local files of the best video rendition of HLS ``playlist`` (master or media).

    Raises :class:`ConfigError` for a file that is not a playlist, a master playlist that lists
    no video, encrypted segments or separately encoded parts, and :class:`InputFileError` when
    no rendition has its first files beside the playlist (the message names the files looked
    for)."""
    path = Path(playlist)
    parsed = _playlist(path)
    if not parsed.is_variant:
        looked_for: list[str] = []
        parts = _media_parts(path, path, parsed, path.name, looked_for)
        if parts is None:
            _raise_not_saved(path, looked_for)
        return parts
    variants = [v for v in parsed.playlists if _is_video(v)]
    if not variants:
        msg = f"HLS playlist {path} lists no video stream (audio only); it is not a video"
        raise ConfigError(msg)
    variants.sort(key=lambda v: -(v.stream_info.bandwidth or 0))
    named = tuple(dict.fromkeys(_local(path.parent, v.uri) for v in parsed.playlists))
    looked_for = []
    for variant in variants:
        media = _local(path.parent, variant.uri)
        if not media.is_file():
            looked_for.append(media.name)
            continue
        parts = _media_parts(path, media, _playlist(media), media.name, looked_for)
        if parts is not None:
            return dataclasses.replace(parts, playlists=named)
    _raise_not_saved(path, looked_for)


def _raise_not_saved(path: Path, looked_for: list[str]) -> NoReturn:
    msg = (
        f"HLS playlist {path}: its video segments are not beside it (looked for "
        f"{', '.join(dict.fromkeys(looked_for)) or 'a segment'}); download the segments into "
        f"{path.parent}, or join them into one file and ingest that"
    )
    raise InputFileError(msg)


def _media_parts(
    given: Path, media: Path, parsed: m3u8.M3U8, rendition: str, looked_for: list[str]
) -> StreamParts | None:
    """Media playlist ``media`` (parsed) as local files, or None when its first file is not
    there (its name is added to ``looked_for``). ``given`` is the playlist the user passed."""
    if not parsed.segments:
        msg = f"HLS playlist {media} lists no media segment; it is not a saved video"
        raise ConfigError(msg)
    for segment in parsed.segments:
        method = (segment.key.method or "NONE").upper() if segment.key is not None else "NONE"
        if method != "NONE":
            msg = (
                f"HLS playlist {media}: its segments are encrypted ({method}); let the "
                "downloader decrypt them into one file (e.g. yt-dlp, or ffmpeg -i PLAYLIST -c "
                "copy walk.mp4) and ingest that"
            )
            raise ConfigError(msg)
    if any(s.discontinuity for s in parsed.segments[1:]):
        msg = (
            f"HLS playlist {media} joins parts encoded separately (#EXT-X-DISCONTINUITY): "
            "their clocks restart, so they are not one walk's timeline; re-encode the stream "
            "into one file (ffmpeg -i PLAYLIST walk.mp4) and ingest that"
        )
        raise ConfigError(msg)
    folder = media.parent
    head = parsed.segments[0].init_section
    initialization = _local(folder, head.uri) if head is not None and head.uri else None
    if initialization is not None and not initialization.is_file():
        looked_for.append(initialization.name)
        return None
    names = list(dict.fromkeys(_local(folder, s.uri) for s in parsed.segments))
    if initialization is not None and initialization in names:  # one file, byte ranges
        initialization = None
    segments: list[Path] = []
    missing: str | None = None
    for name in names:
        if not name.is_file():
            missing = name.name
            break
        segments.append(name)
    if not segments:
        looked_for.append(missing or names[0].name)
        return None
    return StreamParts(given, rendition, initialization, tuple(segments), len(names), missing)
