"""EXIF GPS of still panoramas (Pillow): one fix per photo.

Quality: GPSMeasureMode (tag 10: "2" 2-D, "3" 3-D) and GPSDOP (tag 11). EXIF says GPSDOP is an
HDOP in 2-D measurement and a PDOP in 3-D, so it fills ``hdop`` or ``pdop`` by the mode (``pdop``
when no mode is given: PDOP >= HDOP, so the smoother then errs on the cautious side). A negative
GPSDOP is an error naming the photo and tag (a broken writer); an unknown GPSMeasureMode is
ignored with a logged warning, since the position and time of the photo are still good. The
GoPro MAX photo of the shared data carries neither tag.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from city360.errors import GpsError, InputFileError
from city360.video_store.gps.quality import FIX_NAMES, FIX_UNKNOWN, FixQuality
from city360.video_store.gps.track import GpsTrack

__all__ = ["read_exif_fix", "read_exif_quality", "read_exif_track"]

log = logging.getLogger(__name__)

_GPS_IFD = 0x8825
_EXIF_IFD = 0x8769
_DATETIME_ORIGINAL = 36867
_SUBSEC_ORIGINAL = 37521
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


def read_exif_fix(
    path: Path, *, require_position: bool = True
) -> tuple[float, float, float, float]:
    """``(t_s, lat, lon, alt_m)`` of one photo: POSIX seconds from GPSDateStamp+GPSTimeStamp
    (UTC), else DateTimeOriginal read as UTC, plus SubSecTimeOriginal; altitude NaN when
    absent. Without an EXIF position, lat/lon are NaN when ``require_position`` is False (the
    position then comes from a GPS track), else :class:`GpsError`."""
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
    if 2 in gps and 4 in gps:
        lat = _dms(gps[2], gps.get(1), "S")
        lon = _dms(gps[4], gps.get(3), "W")
    elif require_position:
        msg = f"photo {path} has no EXIF GPS position; geotag it or pass --gps with a track"
        raise GpsError(msg)
    else:
        lat = lon = math.nan
    alt = float(gps[6]) if 6 in gps else math.nan
    if alt == alt and gps.get(5) in (b"\x01", 1):
        alt = -alt
    stamp: datetime | None = None
    if 29 in gps and 7 in gps:
        h, m, s = (float(v) for v in gps[7])
        day = datetime.strptime(str(gps[29]).strip(), "%Y:%m:%d").replace(tzinfo=UTC)
        t_s = day.timestamp() + h * 3600 + m * 60 + s
        if s == int(s):
            t_s += _subseconds(exif)
        return t_s, lat, lon, alt
    original = exif.get_ifd(_EXIF_IFD).get(_DATETIME_ORIGINAL) or exif.get(306)
    if original:
        stamp = datetime.strptime(str(original).strip(), "%Y:%m:%d %H:%M:%S")
        return stamp.replace(tzinfo=UTC).timestamp() + _subseconds(exif), lat, lon, alt
    msg = f"photo {path} has a GPS position but no time stamp (GPSDateStamp/DateTimeOriginal)"
    raise GpsError(msg)


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


def read_exif_track(paths: Sequence[Path]) -> GpsTrack:
    """A track with one fix per photo, in the order given (sorted by time later), with the
    photos' GPSMeasureMode and GPSDOP as quality."""
    if not paths:
        msg = "no photos given to read EXIF GPS from"
        raise GpsError(msg)
    fixes = [read_exif_fix(p) for p in paths]
    t, lat, lon, alt = (list(col) for col in zip(*fixes, strict=True))
    fix, hdop, pdop = (list(col) for col in zip(*map(read_exif_quality, paths), strict=True))
    quality = FixQuality.from_columns(hdop=hdop, pdop=pdop, fix_type=fix)
    return GpsTrack.from_columns(paths[0], "exif", t, lat, lon, alt, quality=quality)
