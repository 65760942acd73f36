"""CSV tracks: a header row with ``time,lat,lon`` and optionally ``alt``.

``time`` is ISO 8601 (``2024-05-01T10:00:00Z``; without a zone it is taken as UTC) or POSIX
seconds. Column names are matched case-insensitively; ``latitude``/``longitude``/``elevation``
/``timestamp`` are accepted too.
"""

from __future__ import annotations

import csv
import math
from datetime import UTC, datetime
from pathlib import Path

from city360.errors import GpsError
from city360.video_store.gps.track import GpsTrack

__all__ = ["read_csv_track"]

_ALIASES = {
    "time": ("time", "timestamp", "t", "datetime", "utc"),
    "lat": ("lat", "latitude"),
    "lon": ("lon", "lng", "long", "longitude"),
    "alt": ("alt", "altitude", "elevation", "ele", "alt_m"),
}


def _parse_time(value: str) -> float:
    value = value.strip()
    try:
        return float(value)
    except ValueError:
        pass
    stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.timestamp()


def _parse_float(value: str) -> float:
    value = value.strip()
    return math.nan if value == "" else float(value)


def read_csv_track(path: Path) -> GpsTrack:
    """Read a CSV track. Empty cells and ``nan`` become NaN (rejected later as fix-less)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        msg = f"CSV {path} is not UTF-8 text; is it really a CSV track?"
        raise GpsError(msg) from None
    rows = [row for row in csv.reader(text.splitlines()) if any(cell.strip() for cell in row)]
    if not rows:
        msg = f"CSV {path} is empty; it needs a header 'time,lat,lon[,alt]' and rows"
        raise GpsError(msg)
    header = [cell.strip().lower() for cell in rows[0]]
    columns: dict[str, int] = {}
    for key, names in _ALIASES.items():
        for name in names:
            if name in header:
                columns[key] = header.index(name)
                break
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
    for line_no, row in enumerate(rows[1:], start=2):
        try:
            t.append(_parse_time(row[columns["time"]]))
            lat.append(_parse_float(row[columns["lat"]]))
            lon.append(_parse_float(row[columns["lon"]]))
            alt.append(_parse_float(row[columns["alt"]]) if "alt" in columns else math.nan)
        except (ValueError, IndexError) as exc:
            msg = (
                f"CSV {path} line {line_no}: cannot read {row!r} ({exc}); expected "
                "ISO 8601 or POSIX-seconds time and decimal degrees"
            )
            raise GpsError(msg) from None
    return GpsTrack.from_columns(path, "csv", t, lat, lon, alt)
