"""CSV tracks: a header row with ``time,lat,lon`` and optionally ``alt``.

Cells are separated by ``,``, or by ``;`` or tabs when the header has no comma (a spreadsheet
in a comma-decimal locale saves ``time;lat;lon`` with ``60,1699`` degrees: with ``;`` or tabs
between cells a decimal comma is read as a point).

``time`` is ISO 8601 (``2024-05-01T10:00:00Z``; without a zone it is taken as UTC; the date
may be written ``2024/05/01``) or POSIX seconds. Column names are matched case-insensitively;
``latitude``/``longitude``/``elevation``/``timestamp`` are accepted too. A unit written after a
name, as loggers and spreadsheets label their columns (``Latitude (deg)``, ``Time [UTC]``,
``timestamp(ms)``), is not part of the name; a time column whose unit is milliseconds
(``(ms)``, ``[ms]``, or a name ending ``_ms``) holds POSIX milliseconds. A ``date`` column
beside a ``time`` column that holds only the time of day (``2024-05-01`` and ``10:00:00``, as
many loggers split them) is joined to it. Lines starting with ``#`` (an exporter's notes) are
blank lines; a first line ``sep=;`` (Excel's) names the separator; a row that repeats the
header (logs joined with ``cat``) is skipped.

SensorLog (iOS) logs are read by their names: ``locationTimestamp_since1970(s)`` (the fix's
own POSIX time, not ``loggingTime``, the row's), ``locationLatitude(WGS84)``,
``locationLongitude(WGS84)``, ``locationAltitude(m)``, ``locationHorizontalAccuracy(m)``
(read as ``accuracy``). It writes a row per motion sample
(30-100 a second) repeating the last fix, and rows without a fix before the first: a repeated
fix is one fix (:func:`~city360.video_store.gps.track.validate_track` keeps the first of a
time), and a row whose time, lat and lon cells are all empty is a point without a fix.

Quality columns, read when present (the names of GPSLogger for Android, which writes
``time,lat,lon,elevation,accuracy,bearing,speed,satellites,provider,hdop,vdop,pdop,...``):
``accuracy`` (horizontal accuracy, metres; also ``accuracy_m``, ``horizontal_accuracy``,
``hacc``), ``hdop``, ``vdop``, ``pdop``, ``satellites`` (``sat``, ``sats``) and ``fix``
(``fix_type``: none, 2d, 3d, dgps, pps, or GGA's quality number). An empty cell is unknown. A
negative ``accuracy`` is a point without a fix: iOS (Core Location, so SensorLog and the apps
that export its readings) writes a negative horizontal accuracy when the position is invalid.
Any other cell that is not a number, an unknown fix word or a negative value is an error naming
the file, line and column: a CSV track is written by one program, and a bad cell means that
program wrote something else than we think, so guessing would be wrong.
"""

from __future__ import annotations

import csv
import math
import re
from datetime import UTC, datetime
from pathlib import Path

from city360.errors import GpsError
from city360.video_store.gps.quality import FIX_NAMES, FIX_UNKNOWN, FixQuality
from city360.video_store.gps.track import GpsTrack

__all__ = ["has_track_header", "read_csv_track"]

_ALIASES = {
    "time": ("time", "timestamp", "t", "datetime", "utc", "locationtimestamp_since1970"),
    "lat": ("lat", "latitude", "locationlatitude"),
    "lon": ("lon", "lng", "long", "longitude", "locationlongitude"),
    "alt": ("alt", "altitude", "elevation", "ele", "alt_m", "locationaltitude"),
}
_QUALITY_ALIASES = {
    "accuracy_m": (
        "accuracy",
        "accuracy_m",
        "horizontal_accuracy",
        "hacc",
        "locationhorizontalaccuracy",
    ),
    "hdop": ("hdop",),
    "vdop": ("vdop",),
    "pdop": ("pdop",),
    "satellites": ("satellites", "sat", "sats", "num_sats"),
    "fix_type": ("fix", "fix_type"),
}
_GGA_FIX = ("none", "gps", "dgps", "pps", "rtk", "rtk", "estimated")
"""Fix names of NMEA GGA quality 0-6 (5, float RTK, counted as RTK)."""


_MAX_POSIX_S = 95_617_584_000.0
"""POSIX seconds of 5000-01-01: a larger number is not seconds (loggers that write
milliseconds give 1.7e12)."""


_UNIT = re.compile(r"^(.*?)\s*[\(\[]\s*([^\)\]]*?)\s*[\)\]]$")
_SEP_HINT = re.compile(r"\s*sep=(.)\s*", re.IGNORECASE)
_TIME_OF_DAY = re.compile(r"^\s*\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?Z?\s*$")
_SLASH_DATE = re.compile(r"^(\d{4})/(\d{1,2})/(\d{1,2})")


def _name_and_unit(cell: str) -> tuple[str, str]:
    """A header cell's column name and unit, lower case: ``Latitude (deg)`` -> ("latitude",
    "deg"), ``time_ms`` -> ("time", "ms"), ``lat`` -> ("lat", "")."""
    name = cell.strip().lower()
    match = _UNIT.match(name)
    if match is not None and match.group(1):
        return match.group(1), match.group(2)
    if name.endswith("_ms") and len(name) > 3:
        return name[:-3], "ms"
    return name, ""


def _parse_time(value: str, *, path: Path, line_no: int, unit: str = "") -> float:
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        if unit == "ms":
            return seconds / 1000.0
        if abs(seconds) >= _MAX_POSIX_S:
            msg = (
                f"CSV {path} line {line_no}: column `time` is {value}, as POSIX seconds past "
                f"the year 5000; it looks like milliseconds: write POSIX seconds "
                f"({seconds / 1000:.3f}) or ISO 8601 (2024-05-01T10:00:00Z)"
            )
            raise GpsError(msg)
        return seconds
    dated = _SLASH_DATE.match(value)
    if dated is not None:  # 2024/05/01 10:00:00, as spreadsheets and Windows apps write it
        year, month, day = dated.groups()
        value = f"{year}-{int(month):02d}-{int(day):02d}{value[dated.end() :]}"
    stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.timestamp()


def _parse_float(value: str) -> float:
    value = value.strip()
    return math.nan if value == "" else float(value)


def _parse_fix(value: str, *, path: Path, line_no: int) -> int:
    value = value.strip().lower()
    if not value:
        return FIX_UNKNOWN
    if value.isdigit() and int(value) < len(_GGA_FIX):
        return FIX_NAMES[_GGA_FIX[int(value)]]
    if value in FIX_NAMES:
        return FIX_NAMES[value]
    msg = (
        f"CSV {path} line {line_no}: column `fix` has unknown fix type {value!r}; expected "
        f"one of {', '.join(FIX_NAMES)} or a GGA quality 0-6"
    )
    raise GpsError(msg)


def _separator(header: str) -> str:
    """The character between cells, from the header row: ``,``, else ``;`` (what spreadsheets
    in comma-decimal locales save as "CSV"), else a tab, else ``,``."""
    for candidate in (",", ";", "\t"):
        if candidate in header:
            return candidate
    return ","


def _find_columns(header: list[str], aliases: dict[str, tuple[str, ...]]) -> dict[str, int]:
    columns: dict[str, int] = {}
    for key, names in aliases.items():
        for name in names:
            if name in header:
                columns[key] = header.index(name)
                break
    return columns


def _quality_cell(value: str, *, path: Path, line_no: int, column: str) -> float:
    try:
        number = _parse_float(value)
    except ValueError:
        msg = f"CSV {path} line {line_no}: column `{column}` is {value!r}, not a number"
        raise GpsError(msg) from None
    if number < 0:
        msg = f"CSV {path} line {line_no}: column `{column}` is {number}; it must be >= 0"
        raise GpsError(msg)
    return number


def _is_negative(value: str) -> bool:
    """True for a cell holding a number below 0 (``-1``, ``-1.000``)."""
    try:
        return _parse_float(value) < 0
    except ValueError:
        return False


def has_track_header(text: str) -> bool:
    """True when the first line of ``text`` that is not blank or a ``#`` note is a header
    naming time, lat and lon columns (a CSV track, whatever else its rows carry)."""
    first = next(
        (line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")),
        "",
    )
    cells = next(csv.reader([first], delimiter=_separator(first)), [])
    names = [_name_and_unit(cell)[0] for cell in cells]
    return all(key in _find_columns(names, _ALIASES) for key in ("time", "lat", "lon"))


def read_csv_track(path: Path) -> GpsTrack:
    """Read a CSV track. Empty cells and ``nan`` become NaN (rejected later as fix-less)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        msg = f"CSV {path} is not UTF-8 text; is it really a CSV track?"
        raise GpsError(msg) from None
    # "#" lines are an exporter's notes; they count as blank lines
    lines = ["" if line.lstrip().startswith("#") else line for line in text.splitlines()]
    first = next((k for k, line in enumerate(lines) if line.strip()), None)
    hint = _SEP_HINT.fullmatch(lines[first]) if first is not None else None
    if hint is not None and first is not None:  # Excel's "sep=;" line names the separator
        separator, lines[first] = hint.group(1), ""
    else:
        separator = _separator(lines[first] if first is not None else "")
    rows = [
        row for row in csv.reader(lines, delimiter=separator) if any(cell.strip() for cell in row)
    ]
    if separator != ",":
        # a spreadsheet that separates cells by ";" or tabs writes its locale's decimal comma
        rows = [[cell.replace(",", ".") for cell in row] for row in rows]
    if not rows:
        msg = f"CSV {path} is empty; it needs a header 'time,lat,lon[,alt]' and rows"
        raise GpsError(msg)
    names, units = zip(*(_name_and_unit(cell) for cell in rows[0]), strict=True)
    header = [cell.strip().lower() for cell in rows[0]]
    columns = _find_columns(list(names), _ALIASES)
    date_column = names.index("date") if "date" in names and "time" in columns else None
    time_unit = units[columns["time"]] if "time" in columns else ""
    quality_columns = _find_columns(list(names), _QUALITY_ALIASES)
    missing = [k for k in ("time", "lat", "lon") if k not in columns]
    if missing:
        msg = (
            f"CSV {path}: header {','.join(header)!r} lacks {', '.join(missing)}; "
            "expected 'time,lat,lon[,alt]'"
        )
        raise GpsError(msg)
    if len(rows) == 1:
        msg = f"CSV {path} has a header but no rows"
        raise GpsError(msg)
    t, lat, lon, alt = [], [], [], []
    has_fix: list[bool] = []
    quality: dict[str, list[float]] = {key: [] for key in quality_columns}
    for line_no, row in enumerate(rows[1:], start=2):
        if [cell.strip().lower() for cell in row] == header:
            continue  # the header again: logs of several days joined by `cat`
        try:
            stamp = row[columns["time"]]
            if date_column is not None and _TIME_OF_DAY.match(stamp):
                stamp = f"{row[date_column].strip()}T{stamp.strip()}"  # date, time of day
            if not (stamp.strip() or row[columns["lat"]].strip() or row[columns["lon"]].strip()):
                t.append(math.nan)  # a logger's row before its first fix: no point
            else:
                t.append(_parse_time(stamp, path=path, line_no=line_no, unit=time_unit))
            lat.append(_parse_float(row[columns["lat"]]))
            lon.append(_parse_float(row[columns["lon"]]))
            alt.append(_parse_float(row[columns["alt"]]) if "alt" in columns else math.nan)
        except GpsError:
            raise
        except (ValueError, IndexError) as exc:
            msg = (
                f"CSV {path} line {line_no}: cannot read {row!r} ({exc}); expected "
                "ISO 8601 or POSIX-seconds time and decimal degrees"
            )
            raise GpsError(msg) from None
        has_fix.append(True)
        for key, index in quality_columns.items():
            cell = row[index] if index < len(row) else ""
            if key == "fix_type":
                quality[key].append(_parse_fix(cell, path=path, line_no=line_no))
            elif key == "accuracy_m" and _is_negative(cell):
                has_fix[-1] = False  # Core Location's "this position is invalid"
                quality[key].append(math.nan)
            else:
                quality[key].append(
                    _quality_cell(cell, path=path, line_no=line_no, column=header[index])
                )
    return GpsTrack.from_columns(
        path, "csv", t, lat, lon, alt, has_fix, quality=FixQuality.from_columns(**quality)
    )
