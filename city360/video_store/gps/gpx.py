"""GPX tracks (gpxpy): track points, else route points, else waypoints, in file order.

The file is decoded as XML says (a byte-order mark, else the declaration's ``encoding``, else
UTF-8): GPX 1.0 and 1.1 from older units and desktop tools come in ISO-8859-1 or UTF-16 too.

Fix quality comes from GPX 1.1's own point fields: ``<fix>`` (none, 2d, 3d, dgps, pps),
``<sat>``, ``<hdop>``, ``<vdop>`` and ``<pdop>``. gpxpy already rejects an unknown ``<fix>``
word or a non-numeric DOP (reported here as unparseable, naming the file); a negative DOP or
satellite count parses, and is rejected by :meth:`FixQuality.check` naming the field: GPX is
a schema-checked format, so a bad value means a broken writer, not a noisy line to skip.
"""

from __future__ import annotations

import codecs
import logging
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from city360.errors import GpsError
from city360.video_store.gps.quality import FIX_NAMES, FIX_UNKNOWN, FixQuality
from city360.video_store.gps.track import GpsTrack

__all__ = ["gpx_text", "read_gpx"]

log = logging.getLogger(__name__)


def read_gpx(path: Path) -> GpsTrack:
    """Read every timed point of a GPX file with its quality fields (see the module docstring).
    ``<fix>none</fix>`` marks a point fix-less."""
    import gpxpy
    import gpxpy.gpx

    text = gpx_text(path)
    if not text.strip():
        msg = f"GPX {path} is empty; export the track again"
        raise GpsError(msg)
    try:
        gpx = gpxpy.parse(text)
    except gpxpy.gpx.GPXException as exc:
        msg = f"GPX {path} cannot be parsed ({exc}); export the track again as GPX 1.1"
        raise GpsError(msg) from None
    points: list[Any] = [p for trk in gpx.tracks for seg in trk.segments for p in seg.points]
    if not points:
        points = [p for route in gpx.routes for p in route.points]
    if not points:
        points = list(gpx.waypoints)
    if not points:
        msg = f"GPX {path} has no track, route or waypoint; export the track again"
        raise GpsError(msg)
    untimed = sum(p.time is None for p in points)
    if untimed:
        _check_times(path, text)
    if untimed == len(points):
        msg = (
            f"GPX {path} has no time stamps; a track without times cannot be synchronised "
            "with a video"
        )
        raise GpsError(msg)
    if untimed:
        # a point without <time> cannot be placed on the video's clock; say so, not in silence
        first = next(k for k, p in enumerate(points) if p.time is None)
        log.warning(
            "GPX %s: %d of %d points have no <time> and are left out (the first is point %d)",
            path,
            untimed,
            len(points),
            first + 1,
        )
    t = np.array([_posix_s(p.time) if p.time else np.nan for p in points], np.float64)
    lat = np.array([p.latitude for p in points], np.float64)
    lon = np.array([p.longitude for p in points], np.float64)
    alt = np.array([np.nan if p.elevation is None else p.elevation for p in points], np.float64)
    return GpsTrack.from_columns(path, "gpx", t, lat, lon, alt, quality=_quality(points))


_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_DECLARED_ENCODING = re.compile(rb"""^<\?xml[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")


def gpx_text(path: Path) -> str:
    """The text of the GPX file at ``path``, decoded as XML says (see :func:`_decode`): what
    every GPX reader parses, the track reader and ``synth --route`` alike."""
    return _decode(path, path.read_bytes())


def _decode(path: Path, raw: bytes) -> str:
    """The text of a GPX file, decoded as XML says: by its byte-order mark, else by the
    ``encoding`` of its XML declaration, else UTF-8. Older Garmin units and desktop tools write
    ``encoding="ISO-8859-1"`` or ``windows-1252`` (a track name with an accent is then not
    UTF-8), and some Windows tools write UTF-16 with a BOM; all are well-formed GPX."""
    encoding = "utf-8"
    for bom, name in _BOMS:
        if raw.startswith(bom):
            raw, encoding = raw[len(bom) :], name
            break
    else:
        declared = _DECLARED_ENCODING.match(raw.lstrip())
        if declared:
            encoding = declared.group(1).decode("ascii")
            try:
                codecs.lookup(encoding)
            except LookupError:
                msg = (
                    f"GPX {path} declares encoding {encoding!r}, which Python cannot decode; "
                    "export the track again as UTF-8"
                )
                raise GpsError(msg) from None
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        msg = (
            f"GPX {path} is not valid {encoding.upper()} text (byte {exc.start}); is it really "
            "a GPX file? If so, export it again as UTF-8"
        )
        raise GpsError(msg) from None
    # the text is decoded now: a declaration naming another encoding would mislead the parser
    return re.sub(r"""^(\s*<\?xml[^>]*?)\s+encoding\s*=\s*["'][^"']*["']""", r"\1", text)


_TIME_ELEMENT = re.compile(r"<(?:[\w.-]+:)?time\s*>([^<]*)<")


def _check_times(path: Path, text: str) -> None:
    """Raise :class:`GpsError` naming the first ``<time>`` that gpxpy cannot read: it turns
    such a time into None, which would drop the point in silence (or call a track whose
    times are all garbled one without times)."""
    import gpxpy.gpx
    from gpxpy.gpxfield import parse_time

    for match in _TIME_ELEMENT.finditer(text):
        value = match.group(1).strip()
        try:
            parse_time(value)
        except (gpxpy.gpx.GPXException, ValueError):
            line = text.count("\n", 0, match.start()) + 1
            msg = (
                f"GPX {path} line {line}: <time> {value!r} cannot be read; GPX times are ISO "
                "8601 in UTC (2024-05-01T10:00:00Z): fix the logger's export or remove the point"
            )
            raise GpsError(msg) from None


def _number(value: float | int | None) -> float:
    return np.nan if value is None else float(value)


def _quality(points: list[Any]) -> FixQuality:
    def fix(point: Any) -> int:
        name = getattr(point, "type_of_gpx_fix", None)
        if not name:
            return FIX_UNKNOWN
        # gpxpy lets "3" through as well as GPX's five words (a legacy spelling of "3d")
        return FIX_NAMES["3d"] if str(name) == "3" else FIX_NAMES[str(name)]

    def column(attribute: str) -> list[float]:
        return [_number(getattr(p, attribute, None)) for p in points]

    return FixQuality.from_columns(
        hdop=column("horizontal_dilution"),
        vdop=column("vertical_dilution"),
        pdop=column("position_dilution"),
        satellites=column("satellites"),
        fix_type=[fix(p) for p in points],
    )


def _posix_s(stamp: datetime) -> float:
    """POSIX seconds of a GPX time; GPX times are UTC, so one written without a zone is UTC
    (not the reading machine's local time)."""
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.timestamp()
