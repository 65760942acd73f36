"""Sort what a user passes to ``city360 ingest`` into videos, GPS tracks and photo sequences.

Users type ``city360 ingest *.mp4 --gps *.gpx``: the shell expands both globs, and an option
takes one value per flag, so every track after the first lands among the positional inputs.
Files are therefore recognised by what they are, not by where they stand:

- a GPS file (``.gpx``, ``.csv``, ``.txt``, ``.nmea``, ``.log``) among the inputs is a track,
  and so is a track the readers refuse with a way to convert it (``.fit``, ``.tcx``, ``.kml``,
  ``.geojson``);
- a folder given to ``--gps`` contributes every GPS file inside it;
- still photos (``.jpg``/``.jpeg``) given as files form one photo sequence (interval shooting),
  named by the folder they are in; a folder of photos is one sequence named by the folder;
- a folder of videos contributes every video inside it (but not the camera's low-resolution
  previews of them, GoPro's ``.LRV`` and Insta360's ``LRV_*.insv``, when full videos are
  there too), and the GPS files inside it named like
  one of those videos (``walk1.mp4`` beside ``walk1.gpx``, as ``city360 synth`` writes them)
  or, for a folder of photos, like the folder (``street/street.gpx``), unless ``--gps``
  already names a track of that stem;
- a folder with no video or photo of its own (a camera's ``DCIM`` with ``100GOPRO``,
  ``101GOPRO``, a day's folders of walks) stands for the folders below it that hold some, each
  read as above; hidden folders are skipped. A folder that holds videos or photos is read as it
  is, and its subfolders are not.

A single photo is refused with a message: one position is not a trajectory; in a folder of
videos it is left out with a warning (a test shot beside the walks).

A streamed video saved to disk, a DASH manifest (``.mpd``) or an HLS playlist (``.m3u8``), is
one video (:mod:`.saved_stream`); the initialization and media segments it names (and an HLS
master's media playlists) are its parts, not videos of their own, whether they stand in its
folder or among the inputs (``ingest download/*``). A segment or an initialization passed
without its manifest is answered with the manifest beside it, or a message; an MPEG-TS file
(``.ts``) no playlist names is a video of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from city360.errors import ConfigError, InputFileError
from city360.video_store.gps import CONVERTIBLE_FORMATS, VIDEO_SUFFIXES
from city360.video_store.saved_stream import (
    SAVED_STREAM_SUFFIXES,
    is_saved_stream,
    read_saved_stream,
)
from city360.video_store.stream_parts import StreamParts

__all__ = [
    "GPS_SUFFIXES",
    "PHOTO_SUFFIXES",
    "IngestInputs",
    "PhotoSequence",
    "moved_tracks_notice",
    "sort_inputs",
]

log = logging.getLogger(__name__)

GPS_SUFFIXES = frozenset({".gpx", ".csv", ".txt", ".nmea", ".log"})
"""File suffixes read as GPS tracks, wherever they are passed."""
PHOTO_SUFFIXES = frozenset({".jpg", ".jpeg"})
"""File suffixes read as geotagged 360° still photos."""


@dataclass(frozen=True, slots=True)
class PhotoSequence:
    """Photos of one interval-shooting walk: ``name`` (the trajectory id's source) and the
    ``photos`` in the order given (sorted by time when read). ``tracks_beside``: GPS files in
    the photos' folder that pair with nothing (named for the user when the photos carry no
    position)."""

    name: str
    photos: tuple[Path, ...]
    tracks_beside: tuple[Path, ...] = ()


@dataclass(frozen=True, slots=True)
class IngestInputs:
    """Inputs sorted by kind. ``moved_tracks``: GPS files that were passed as videos or lie
    beside their video in a folder passed as input."""

    videos: list[Path] = field(default_factory=list)
    tracks: list[Path] = field(default_factory=list)
    sequences: list[PhotoSequence] = field(default_factory=list)
    moved_tracks: list[Path] = field(default_factory=list)


def moved_tracks_notice(moved: Sequence[Path]) -> str:
    """One line telling the user that the GPS files ``moved`` (non-empty), passed among the
    inputs (``--gps *.gpx`` expanded by the shell), are used as ``--gps`` tracks. Seven
    walks' tracks made seven two-line notices, wrapped in the middle of their paths."""
    if len(moved) == 1:
        return f"{moved[0]}: a GPS track among the inputs, used as --gps"
    first, last = moved[0], moved[-1]
    shown = f"{first} ... {last.name if last.parent == first.parent else last}"
    return f"{len(moved)} GPS tracks among the inputs, used as --gps: {shown}"


def _insp_message(photo: Path) -> str:
    return (
        f"{photo} is an Insta360 photo (.insp: the two lenses, not stitched), which ingest does "
        "not read; export the photos as equirectangular JPEG (Insta360 Studio) and ingest those"
    )


def _kind(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".insp":
        return "insp"
    if suffix in GPS_SUFFIXES or suffix in CONVERTIBLE_FORMATS:
        return "gps"  # a .fit or .kml track is refused by the reader, saying how to convert it
    if suffix in PHOTO_SUFFIXES:
        return "photo"
    if suffix in VIDEO_SUFFIXES or suffix in SAVED_STREAM_SUFFIXES or suffix == ".ts":
        return "video"
    return "other"


_SEGMENT_SUFFIXES = frozenset({".m4s"})
"""Media segments that are no video without their manifest (an MPEG-TS ``.ts`` is one)."""


def _stream_files(parts: StreamParts) -> set[Path]:
    """Every file a saved stream's manifest names (resolved): its video's bytes and, of an HLS
    master playlist, its media playlists."""
    return {p.resolve() for p in (*parts.files, *parts.playlists)}


def _stream_parts(manifest: Path) -> set[Path]:
    """:func:`_stream_files` of ``manifest``; says when the download is partial."""
    parts = read_saved_stream(manifest)
    if parts.missing is not None:
        found = len(parts.segments)
        log.warning(
            "%s lists %s media segments, but %s is missing beside it: ingesting the %s before "
            "it. Download the missing segments into %s and ingest again for the whole walk",
            manifest,
            parts.listed if parts.listed is not None else "more",
            parts.missing,
            "one segment" if found == 1 else f"{found} segments",
            manifest.parent,
        )
    return _stream_files(parts)


def _fold_streams(videos: list[Path]) -> list[Path]:
    """``videos`` with the parts of the saved streams' manifests among them left out (their
    segments, an HLS master's media playlists); a segment or an initialization passed alone is
    replaced by the manifest beside it that names it."""
    manifests = [v for v in videos if is_saved_stream(v)]
    named = set().union(*(_quiet_parts(m) for m in manifests))
    owned: set[Path] = set()
    for manifest in manifests:
        if manifest.resolve() not in named:  # a master's media playlist is the master's
            owned |= _stream_parts(manifest)
    kept: list[Path] = []
    for video in videos:
        if video.resolve() in owned or video.resolve() in named:
            continue
        if is_saved_stream(video):
            kept.append(video)
            continue
        beside = sorted(p for p in video.parent.iterdir() if is_saved_stream(p))
        owner = next((m for m in beside if video.resolve() in _quiet_parts(m)), None)
        if owner is not None:
            log.warning("%s is a part of the saved stream %s: ingesting that", video, owner)
            owned |= _stream_parts(owner)
            kept.append(owner)
        elif video.suffix.lower() in _SEGMENT_SUFFIXES:
            msg = (
                f"{video} is a media segment of a saved stream, not a video: pass the "
                "stream's manifest (DASH .mpd) or playlist (HLS .m3u8), or join the "
                "initialization and the segments into one file (cat init.mp4 segment_*.m4s > "
                "walk.mp4) and ingest that"
            )
            raise ConfigError(msg)
        else:
            kept.append(video)  # a .ts no playlist names is a video of its own
    return list(dict.fromkeys(kept))


def _quiet_parts(manifest: Path) -> set[Path]:
    """:func:`_stream_files` without the warning, and empty for a manifest that cannot be read
    (a stray .mpd or .m3u8 beside a video must not refuse the video)."""
    try:
        return _stream_files(read_saved_stream(manifest))
    except (ConfigError, InputFileError):
        return set()


_THUMBNAIL_SUFFIXES = frozenset({".thm"})
"""A camera's thumbnails of its videos (GoPro, Sony, Canon): left out among the inputs."""


def _is_preview(path: Path) -> bool:
    """A camera's low-resolution preview of a video: GoPro's ``.LRV``, Insta360's
    ``LRV_*.insv``."""
    return path.suffix.lower() == ".lrv" or path.name.upper().startswith("LRV_")


def _gps_files(paths: Sequence[Path]) -> list[Path]:
    tracks: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and _kind(p) == "gps")
            if not found:
                msg = f"--gps folder {path} holds no GPS track (.gpx, .csv); check the path"
                raise InputFileError(msg)
            tracks.extend(found)
        else:
            tracks.append(path)
    return tracks


def _has_media(folder: Path) -> bool:
    return any(p.is_file() and _kind(p) in ("photo", "video") for p in folder.iterdir())


def _media_folders(folder: Path) -> list[Path]:
    """``folder`` when it holds a video or photo, else the nearest folders below it that do
    (depth first, by name; hidden folders skipped)."""
    if _has_media(folder):
        return [folder]
    found: list[Path] = []
    for child in sorted(folder.iterdir()):
        if child.is_dir() and not child.name.startswith("."):
            found.extend(_media_folders(child))
    return found


def _sort_one(
    path: Path,
    videos: list[Path],
    moved: list[Path],
    loose_photos: list[Path],
    sequences: list[PhotoSequence],
    beside: list[Path],
) -> None:
    """Sort one input file, or one folder holding videos or photos, into the lists given."""
    if path.is_dir():
        children = sorted(p for p in path.iterdir() if p.is_file())
        photos = [p for p in children if _kind(p) == "photo"]
        found = [p for p in children if _kind(p) == "video"]
        proxies = [p for p in found if _is_preview(p)]
        if proxies and len(proxies) < len(found):
            # the camera's low-resolution copies of the videos beside them: the same walk again
            # (GoPro's GS010135.LRV beside GS010135.360 refused the folder as two videos of one
            # name; Insta360's LRV_*.insv would have been a second, blurrier trajectory)
            log.warning(
                "%s: %d low-resolution preview(s) beside the videos left out (the first %s)",
                path,
                len(proxies),
                proxies[0].name,
            )
            found = [p for p in found if not _is_preview(p)]
        if len(photos) == 1 and found:
            # a stray still beside the videos (a test shot): not a walk, and no reason to
            # refuse the videos
            log.warning(
                "%s: a single photo beside %d video(s) is not a photo walk; left out",
                photos[0],
                len(found),
            )
            photos = []
        if photos:
            others = tuple(
                p for p in children if _kind(p) == "gps" and p.stem != path.resolve().name
            )
            sequences.append(PhotoSequence(path.resolve().name, tuple(photos), others))
        videos.extend(found)
        stems = {v.stem for v in found} | ({path.resolve().name} if photos else set())
        beside.extend(p for p in children if _kind(p) == "gps" and p.stem in stems)
        return
    kind = _kind(path)
    if kind == "gps":
        moved.append(path)
    elif kind == "photo":
        loose_photos.append(path)
    elif kind == "video":
        videos.append(path)
    elif path.suffix.lower() in _THUMBNAIL_SUFFIXES:
        log.warning("%s: a camera's thumbnail, left out", path)  # `ingest 100GOPRO/*`
    else:
        videos.append(path)  # unknown suffix: let the decoder say what it is


def sort_inputs(inputs: Sequence[Path], gps: Sequence[Path] = ()) -> IngestInputs:
    """Sort ``inputs`` (files or folders) and ``gps`` (files or folders) by kind.

    Raises :class:`InputFileError` for a path that does not exist and :class:`ConfigError` for
    a single photo, a folder with nothing to ingest, or a file of unknown kind.
    """
    missing = [str(p) for p in [*inputs, *gps] if not p.exists()]
    if missing:
        msg = f"not found: {', '.join(missing)}; check the paths"
        raise InputFileError(msg)
    videos: list[Path] = []
    tracks = _gps_files(gps)
    moved: list[Path] = []
    loose_photos: list[Path] = []
    sequences: list[PhotoSequence] = []
    beside: list[Path] = []
    insp = [p for p in inputs if p.is_file() and _kind(p) == "insp"]
    if insp and len(insp) == len(inputs):
        raise ConfigError(_insp_message(insp[0]))
    if insp:  # beside the videos of a card, as `ingest Camera01/*` passes them
        log.warning("%d Insta360 photo(s) left out: %s", len(insp), _insp_message(insp[0]))
    for given in (p for p in inputs if p not in insp):
        folders = _media_folders(given) if given.is_dir() else []
        if given.is_dir() and not folders:
            inside = next(given.rglob("*.[iI][nN][sS][pP]"), None)
            if inside is not None:
                raise ConfigError(_insp_message(inside))
            msg = (
                f"folder {given} holds no video ({', '.join(sorted(VIDEO_SUFFIXES))}) and "
                "no photo (.jpg), nor does any folder inside it; pass the videos or the photo "
                "folder"
            )
            raise ConfigError(msg)
        for path in folders or [given]:
            _sort_one(path, videos, moved, loose_photos, sequences, beside)
    previews = [v for v in videos if _is_preview(v)]
    if previews and len(previews) < len(videos):  # `ingest 100GOPRO/*`: as in a folder
        log.warning(
            "%d low-resolution preview(s) among the videos left out (the first %s)",
            len(previews),
            previews[0],
        )
        videos = [v for v in videos if not _is_preview(v)]
    videos = _fold_streams(videos)
    if loose_photos:
        sequences.append(PhotoSequence(loose_photos[0].resolve().parent.name, tuple(loose_photos)))
    for sequence in sequences:
        if len(sequence.photos) < 2:
            msg = (
                f"photo {sequence.photos[0]} is a single position; a trajectory needs several "
                "photos taken along the walk (interval shooting, one every 1-3 m): pass "
                "their folder or all of them (PHOTO_DIR or *.jpg)"
            )
            raise ConfigError(msg)
    by_name: dict[str, PhotoSequence] = {}
    for sequence in sequences:
        other = by_name.setdefault(sequence.name, sequence)
        if other is not sequence:  # Camera01 on two cards, 100GOPRO of two days
            msg = (
                f"photo folders {other.photos[0].parent} and {sequence.photos[0].parent} are "
                f"both named {sequence.name!r} (a photo walk is named by its folder); rename "
                "one of them"
            )
            raise ConfigError(msg)
    seen = {t.resolve() for t in tracks}
    tracks.extend(t for t in moved if t.resolve() not in seen)
    named = {t.stem for t in tracks}
    moved.extend(t for t in beside if t.stem not in named)
    tracks.extend(t for t in beside if t.stem not in named)
    return IngestInputs(videos=videos, tracks=tracks, sequences=sequences, moved_tracks=moved)
