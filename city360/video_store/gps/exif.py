"""EXIF GPS of still panoramas (Pillow): one fix per photo.

Quality: GPSMeasureMode (tag 10: "2" 2-D, "3" 3-D) and GPSDOP (tag 11). EXIF says GPSDOP is an
HDOP in 2-D measurement and a PDOP in 3-D, so it fills ``hdop`` or ``pdop`` by the mode (``pdop``
when no mode is given: PDOP >= HDOP, so the smoother then errs on the cautious side). A negative
GPSDOP is an error naming the photo and tag (a broken writer); an unknown GPSMeasureMode is
ignored with a logged warning, since the position and time of the photo are still good. The
GoPro MAX photo of the shared data carries neither tag.

Time: GPSDateStamp + GPSTimeStamp are UTC. Without them, DateTimeOriginal is the camera's
local time; OffsetTimeOriginal (EXIF 2.31, ``+09:00``, written by phones and recent cameras)
turns it into UTC, and without an offset it is read as UTC (the camera clock; ``--offset``
corrects it). EXIF writes an unknown date as blanks or zeros (``    :  :     :  :  ``); such a
stamp is no time. A stamp that is neither is an error naming the photo, the tag and the value.
Dates written with ``-`` or ``/`` instead of EXIF's ``:`` are read (some phone apps and
geotaggers write ``2024-05-01``).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from city360.errors import GpsError, InputFileError
from city360.video_store.gps.quality import FIX_NAMES, FIX_UNKNOWN, FixQuality
from city360.video_store.gps.track import GpsTrack

__all__ = ["read_exif_fix", "read_exif_fixes", "read_exif_quality", "read_exif_track"]

log = logging.getLogger(__name__)

_GPS_IFD = 0x8825
_EXIF_IFD = 0x8769
_DATETIME = 306
_DATETIME_ORIGINAL = 36867
_OFFSET_TIME = 36880
_OFFSET_TIME_ORIGINAL = 36881
_SUBSEC_ORIGINAL = 37521
_GPS_TIME = 7
_GPS_DATE = 29
_MEASURE_MODE = 10
_DOP = 11


def _dms(value: Any, ref: str | None, negative_ref: str) -> float:
    degrees, minutes, seconds = (float(v) for v in value)
    decimal = degrees + minutes / 60.0 + seconds / 3600.0
    return -decimal if (ref or "").upper().startswith(negative_ref) else decimal


def _subseconds(exif: Any) -> float:
    """SubSecTimeOriginal as a fraction of a second (0 when absent): interval shooting takes
    several photos a second and the whole-second stamps alone would tie."""
    raw = str(exif.get_ifd(_EXIF_IFD).get(_SUBSEC_ORIGINAL) or "").strip().strip("\x00")
    return float("0." + raw) if raw.isdigit() else 0.0


def _text(value: Any) -> str:
    """An EXIF ASCII value as text: bytes decoded, NULs and blanks at the ends removed."""
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    return str(value).strip().strip("\x00").strip()


def _unknown(text: str) -> bool:
    """EXIF's "unknown" stamp: empty, or only blanks, zeros and separators."""
    return not text.strip(" :0-/")


_DATE = re.compile(r"(\d{4})[:\-/](\d{1,2})[:\-/](\d{1,2})")
_OFFSET = re.compile(r"([+-])(\d{2}):?(\d{2})")


def _date(text: str, *, path: Path, tag: str, value: str = "") -> datetime:
    """A ``YYYY:MM:DD`` date (also ``-`` or ``/`` between the fields) at 00:00 UTC; the error
    shows ``value``, the tag's whole text, when given."""
    match = _DATE.fullmatch(text)
    try:
        if match is None:
            raise ValueError(text)
        year, month, day = (int(v) for v in match.groups())
        return datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        shown = value or text
        msg = f"photo {path}: EXIF {tag} is {shown!r}, not a date YYYY:MM:DD; re-tag the photo"
        raise GpsError(msg) from None


def _zone(text: str, *, path: Path, tag: str) -> timezone:
    """The zone of an EXIF offset ``+09:00`` / ``-05:30``; UTC when blank or ``Z``."""
    if _unknown(text) or text == "Z":
        return UTC
    match = _OFFSET.fullmatch(text)
    if match is None or int(match.group(2)) > 14 or int(match.group(3)) > 59:
        msg = f"photo {path}: EXIF {tag} is {text!r}, not an offset like +09:00; re-tag the photo"
        raise GpsError(msg)
    sign = -1 if match.group(1) == "-" else 1
    return timezone(sign * timedelta(hours=int(match.group(2)), minutes=int(match.group(3))))


def _camera_time(exif: Any, path: Path) -> float | None:
    """POSIX seconds of DateTimeOriginal (else DateTime) with its EXIF offset tag, else read
    as UTC, plus SubSecTimeOriginal; None when the photo carries no known stamp."""
    ifd = exif.get_ifd(_EXIF_IFD)
    for raw, name, offset, offset_name in (
        (ifd.get(_DATETIME_ORIGINAL), "DateTimeOriginal", ifd.get(_OFFSET_TIME_ORIGINAL),
         "OffsetTimeOriginal"),
        (exif.get(_DATETIME), "DateTime", ifd.get(_OFFSET_TIME), "OffsetTime"),
    ):  # fmt: skip
        text = _text(raw or "")
        if _unknown(text):
            continue
        date, _, clock = text.partition(" ")
        day = _date(date, path=path, tag=name, value=text)
        try:
            hms = datetime.strptime(clock.strip(), "%H:%M:%S")
        except ValueError:
            msg = (
                f"photo {path}: EXIF {name} is {text!r}, not a time YYYY:MM:DD HH:MM:SS; "
                "re-tag the photo"
            )
            raise GpsError(msg) from None
        zone = _zone(_text(offset or ""), path=path, tag=offset_name)
        stamp = day.replace(hour=hms.hour, minute=hms.minute, second=hms.second, tzinfo=zone)
        return stamp.timestamp() + _subseconds(exif)
    return None


def _read_fix(path: Path) -> tuple[tuple[float, float, float, float], bool]:
    """``(t_s, lat, lon, alt_m)`` of one photo, NaN for what it does not carry, and whether
    its position was lat 0, lon 0 (NaN too); :class:`GpsError` for a tag that is there but
    malformed."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            exif = image.getexif()
    except FileNotFoundError:
        msg = f"photo {path} not found; check the path"
        raise InputFileError(msg) from None
    except (UnidentifiedImageError, OSError) as exc:
        msg = f"photo {path} cannot be read ({exc}); is it a JPEG?"
        raise GpsError(msg) from None
    gps = exif.get_ifd(_GPS_IFD)
    lat = lon = math.nan
    null_island = False
    if 2 in gps and 4 in gps:
        lat = _dms(gps[2], gps.get(1), "S")
        lon = _dms(gps[4], gps.get(3), "W")
        null_island = lat == 0.0 and lon == 0.0
        if null_island:  # a camera's stand-in for "no fix", not a place
            lat = lon = math.nan
    alt = float(gps[6]) if 6 in gps else math.nan
    if alt == alt and gps.get(5) in (b"\x01", 1):
        alt = -alt
    date_text = _text(gps.get(_GPS_DATE) or "")
    if _GPS_TIME in gps and not _unknown(date_text):
        h, m, s = (float(v) for v in gps[_GPS_TIME])
        t_s = _date(date_text, path=path, tag="GPSDateStamp").timestamp() + h * 3600 + m * 60 + s
        if s == int(s):
            t_s += _subseconds(exif)
        return (t_s, lat, lon, alt), null_island
    camera_s = _camera_time(exif, path)
    return ((math.nan if camera_s is None else camera_s), lat, lon, alt), null_island


def _missing(
    path: Path, fix: tuple[float, float, float, float], *, position: bool, null_island: bool
) -> str:
    """Why a photo's fix cannot be used ("" when it can)."""
    if position and null_island:
        return (
            f"photo {path} has the EXIF GPS position lat 0, lon 0, a camera's stand-in for no "
            "fix; geotag it or pass --gps with a track"
        )
    if position and math.isnan(fix[1]):
        return f"photo {path} has no EXIF GPS position; geotag it or pass --gps with a track"
    if math.isnan(fix[0]):
        return (
            f"photo {path} has no time stamp (GPSDateStamp+GPSTimeStamp or DateTimeOriginal); "
            "re-tag the photo"
        )
    return ""


def read_exif_fix(
    path: Path, *, require_position: bool = True
) -> tuple[float, float, float, float]:
    """``(t_s, lat, lon, alt_m)`` of one photo: POSIX seconds from GPSDateStamp+GPSTimeStamp
    (UTC), else DateTimeOriginal with OffsetTimeOriginal (as UTC without one), plus
    SubSecTimeOriginal; altitude NaN when absent. Without an EXIF position, lat/lon are NaN when
    ``require_position`` is False (the position then comes from a GPS track), else
    :class:`GpsError`; without a time, :class:`GpsError`."""
    fix, null_island = _read_fix(path)
    problem = _missing(path, fix, position=require_position, null_island=null_island)
    if problem:
        raise GpsError(problem)
    return fix


def read_exif_fixes(
    paths: Sequence[Path], *, require_position: bool = True, warn: bool = True
) -> tuple[list[Path], list[tuple[float, float, float, float]]]:
    """:func:`read_exif_fix` of every photo, leaving out the photos without a time (or, with
    ``require_position``, without a position) with one logged warning that counts them and
    names the first: one untagged shot among a walk's photos does not refuse the walk.
    Returns the photos kept and their fixes, in the order given; :class:`GpsError` naming the
    first photo left out when fewer than two are kept. A malformed tag is an error.
    ``warn=False``: no warning (a first pass that only reads where the walk is)."""
    kept: list[Path] = []
    fixes: list[tuple[float, float, float, float]] = []
    problems: list[str] = []
    for path in paths:
        fix, null_island = _read_fix(path)
        problem = _missing(path, fix, position=require_position, null_island=null_island)
        if problem:
            problems.append(problem)
            continue
        kept.append(path)
        fixes.append(fix)
    if problems and len(kept) < 2:
        raise GpsError(problems[0])
    if problems and warn:
        log.warning(
            "%d of %d photos left out; the first: %s", len(problems), len(paths), problems[0]
        )
    return kept, fixes


def read_exif_quality(path: Path) -> tuple[int, float, float]:
    """``(fix_type, hdop, pdop)`` of one photo from GPSMeasureMode and GPSDOP (see the module
    docstring; :data:`FIX_UNKNOWN` and NaN when absent)."""
    from PIL import Image

    with Image.open(path) as image:
        gps = image.getexif().get_ifd(_GPS_IFD)
    mode = str(gps.get(_MEASURE_MODE, "")).strip().strip("\x00")
    fix = {"2": FIX_NAMES["2d"], "3": FIX_NAMES["3d"], "": FIX_UNKNOWN}.get(mode)
    if fix is None:
        log.warning("photo %s: GPSMeasureMode %r is not 2 or 3; ignored", path, mode)
        fix = FIX_UNKNOWN
    dop = math.nan
    if _DOP in gps:
        try:
            dop = float(gps[_DOP])
        except (TypeError, ValueError, ZeroDivisionError):
            dop = math.nan
        if dop < 0:
            msg = f"photo {path}: EXIF GPSDOP is {dop}; a dilution of precision is >= 0"
            raise GpsError(msg)
    if fix == FIX_NAMES["2d"]:
        return fix, dop, math.nan
    return fix, math.nan, dop


def read_exif_track(paths: Sequence[Path], *, warn: bool = True) -> GpsTrack:
    """A track with one fix per photo, in the order given (sorted by time later), with the
    photos' GPSMeasureMode and GPSDOP as quality; photos without a position or time are left
    out (:func:`read_exif_fixes`)."""
    if not paths:
        msg = "no photos given to read EXIF GPS from"
        raise GpsError(msg)
    kept, fixes = read_exif_fixes(paths, warn=warn)
    t, lat, lon, alt = (list(col) for col in zip(*fixes, strict=True))
    fix, hdop, pdop = (list(col) for col in zip(*map(read_exif_quality, kept), strict=True))
    quality = FixQuality.from_columns(hdop=hdop, pdop=pdop, fix_type=fix)
    return GpsTrack.from_columns(kept[0], "exif", t, lat, lon, alt, quality=quality)
