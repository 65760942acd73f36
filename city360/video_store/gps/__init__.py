"""GPS readers: one module per source format, all returning a :class:`GpsTrack`.

| format | module | time base |
| --- | --- | --- |
| GPX (gpxpy) | :mod:`.gpx` | UTC per point |
| CSV ``time,lat,lon[,alt]`` | :mod:`.csv` | ISO 8601 or POSIX seconds |
| NMEA 0183 (GGA, RMC, GSA; also a .txt or .log) | :mod:`.nmea` | RMC date + time of day |
| CAMM track in an MP4 | :mod:`.camm` | video pts (+ GPS time in type 6) |
| GoPro GPMF in an MP4 | :mod:`.gpmf` | video clock (+ GPSU / GPS9 UTC) |
| EXIF GPS of still photos | :mod:`.exif` | GPSDateStamp + GPSTimeStamp |

Every reader also returns the fix quality the file reports (:mod:`.quality`: DOP,
satellites, fix type, accuracy in metres), or none when the file has none.
"""

from __future__ import annotations

import os
from pathlib import Path

from city360.errors import GpsError, InputFileError
from city360.video_store.gps.quality import FixQuality
from city360.video_store.gps.track import GpsTrack, validate_track

__all__ = [
    "CONVERTIBLE_FORMATS",
    "VIDEO_SUFFIXES",
    "FixQuality",
    "GpsTrack",
    "read_embedded_track",
    "read_track",
    "validate_track",
]

VIDEO_SUFFIXES = frozenset({".mp4", ".mov", ".m4v", ".insv", ".lrv", ".360", ".mkv", ".webm"})
_PHOTO_SUFFIXES = frozenset({".jpg", ".jpeg", ".tif", ".tiff"})
CONVERTIBLE_FORMATS = {
    ".fit": "garmin_fit",
    ".tcx": "gtrnctr",
    ".kml": "kml",
    ".geojson": "geojson",
}
"""Track formats of watches and mapping apps that are not read, by suffix, with the GPSBabel
input format that converts each to GPX (named in the error, so the user has a way on)."""


def read_embedded_track(
    video: str | os.PathLike[str], *, creation_time_utc: float | None = None
) -> GpsTrack | None:
    """The GPS track stored inside a video file (GoPro GPMF or CAMM), or None."""
    from city360.video_store.gps.camm import read_camm
    from city360.video_store.gps.gpmf import read_gpmf

    path = Path(video)
    track = read_gpmf(path)
    if track is None:
        track = read_camm(path, creation_time_utc=creation_time_utc)
    return track


def read_track(path: str | os.PathLike[str], *, creation_time_utc: float | None = None) -> GpsTrack:
    """Read a GPS track, choosing the reader by file suffix (then by content for videos).

    ``creation_time_utc`` (POSIX seconds, the video's creation time) times CAMM tracks with
    untimed (type 5) records and dates NMEA logs without a date (GGA only).
    """
    from city360.video_store.gps.csv import has_track_header, read_csv_track
    from city360.video_store.gps.exif import read_exif_track
    from city360.video_store.gps.gpx import read_gpx
    from city360.video_store.gps.nmea import is_nmea_text, read_nmea

    source = Path(path)
    if not source.is_file():
        msg = f"GPS track {source} not found; check the path"
        raise InputFileError(msg)
    suffix = source.suffix.lower()
    if suffix == ".gpx":
        return read_gpx(source)
    if suffix == ".nmea":
        return read_nmea(source, creation_time_utc=creation_time_utc)
    if suffix in (".csv", ".txt", ".log"):
        with source.open("rb") as stream:  # a phone's GnssLogger file opens with 4 KB of notes
            head = stream.read(65536).decode("ascii", errors="replace")
        if is_nmea_text(head, after_prefix=False) or (
            # sentences behind a logger's prefix (GnssLogger's `NMEA,$GPRMC,...`), but not a
            # CSV track that carries raw sentences in a column: that stays the CSV it was
            suffix != ".csv" and is_nmea_text(head) and not has_track_header(head)
        ):
            return read_nmea(source, creation_time_utc=creation_time_utc)
        if suffix == ".log":  # a logger's raw NMEA, or some other program's log
            msg = (
                f"GPS track {source}: a .log is read when it holds NMEA sentences ($GPRMC, "
                "$GPGGA, ...), and this one does not; export the track as GPX or CSV"
            )
            raise GpsError(msg)
        return read_csv_track(source)
    if suffix in _PHOTO_SUFFIXES:
        return read_exif_track([source])
    if suffix in VIDEO_SUFFIXES:
        track = read_embedded_track(source, creation_time_utc=creation_time_utc)
        if track is None:
            msg = f"{source} carries no GPS track (neither GoPro GPMF nor CAMM)"
            raise GpsError(msg)
        return track
    if suffix in CONVERTIBLE_FORMATS:
        gpx = source.with_suffix(".gpx")
        msg = (
            f"GPS track {source}: {suffix} files are not read; convert it to GPX first, e.g. "
            f"`gpsbabel -i {CONVERTIBLE_FORMATS[suffix]} -f '{source}' -o gpx -F '{gpx}'`"
        )
        raise GpsError(msg)
    msg = (
        f"GPS track {source}: unknown format {suffix!r}; expected .gpx, .csv, .nmea, a GoPro/CAMM "
        ".mp4 or a geotagged .jpg"
    )
    raise GpsError(msg)
