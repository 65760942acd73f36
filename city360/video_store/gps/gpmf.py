"""GoPro GPMF telemetry (GPS5 / GPS9) inside a GoPro MP4.

Read with ``py-gpmf-parser``, Python bindings of GoPro's own C gpmf-parser: it finds the
"GoPro MET" track, applies each stream's SCAL and knows every KLV type. (``pygpmf-oz``, the
other maintained reader, imports geopandas and contextily at import time, far too heavy here.)

Timing: every payload carries its span on the video clock (``t_in``..``t_out``), and samples
are spread evenly over it, so GPMF positions are synchronised with the video by construction.
GPSU (GPS5) or the days/seconds fields (GPS9) give the UTC time of the video's first frame.

Quality: a GPS5 payload carries GPSF (fix 0 none, 2 2D, 3 3D) and GPSP (DOP x 100, 9999 before
the receiver has one) for all its samples; GPS9 carries DOP and fix per sample. GoPro's "DOP" is
the receiver's horizontal DOP (``GPSP`` in GoPro's docs: "GPS Precision - Dilution of Precision
(DOP x100) ... under 500 is good"), so it fills ``hdop``. A DOP of 99.99 or more is "not known
yet" and read as NaN; a negative one cannot come from the camera's integer fields.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from city360.errors import GpsError
from city360.video_store.gps.quality import FIX_NAMES, FIX_UNKNOWN, FixQuality
from city360.video_store.gps.track import GpsTrack

__all__ = ["parse_gpsu", "read_gpmf"]

_GPS2000_POSIX = 946_684_800.0  # 2000-01-01T00:00:00Z; GPS9 counts days from here
_UNKNOWN_DOP = 99.99
"""GoPro writes GPSP 9999 (DOP 99.99) until the receiver has a DOP."""


def _dop(value: float) -> float:
    return value if math.isfinite(value) and 0 <= value < _UNKNOWN_DOP else math.nan


def _fix_code(value: float) -> int:
    """Fix type code of a GPMF fix field (0, 2 or 3; anything else unknown)."""
    return {0: FIX_NAMES["none"], 2: FIX_NAMES["2d"], 3: FIX_NAMES["3d"]}.get(
        int(value) if math.isfinite(value) else -1, FIX_UNKNOWN
    )


def parse_gpsu(raw: bytes) -> float | None:
    """POSIX seconds of a GPSU string ``yymmddhhmmss.sss`` (UTC), or None if malformed."""
    text = raw.decode("ascii", errors="ignore").strip("\x00 ")
    try:
        stamp = datetime.strptime(text[:12], "%y%m%d%H%M%S").replace(tzinfo=UTC)
        fraction = float("0" + text[12:]) if len(text) > 12 else 0.0
    except ValueError:
        return None
    return stamp.timestamp() + fraction


def _find(gp: Any, stream: Any, key: str) -> bool:
    found: bool = (
        gp.GPMF_FindNext(stream, gp.Str2FourCC(key), gp.GPMF_RECURSE_LEVELS_AND_TOLERANT)
        == gp.GPMF_ERROR.GPMF_OK
    )
    return found


def _scaled(gp: Any, stream: Any) -> np.ndarray:
    samples = gp.GPMF_Repeat(stream)
    elements = gp.GPMF_ElementsInStruct(stream)
    if not samples or not elements:
        return np.zeros((0, max(elements, 1)))
    ret, data = gp.GPMF_ScaledData(
        stream, samples * elements * 8, 0, samples, gp.GPMF_SampleType.DOUBLE
    )
    if ret != gp.GPMF_ERROR.GPMF_OK:
        return np.zeros((0, elements))
    return np.reshape(np.asarray(data[: samples * elements], np.float64), (-1, elements))


def read_gpmf(path: Path) -> GpsTrack | None:
    """The GPS track in a GoPro MP4's GPMF stream, or None when the file has no GPMF track."""
    try:
        import py_gpmf_parser as gp
    except ImportError as exc:  # pragma: no cover - a core dependency
        from city360.errors import DependencyMissingError

        msg = "py-gpmf-parser is needed to read GoPro GPS: pip install py-gpmf-parser"
        raise DependencyMissingError(msg) from exc

    handle = gp.OpenMP4Source(str(path), gp.MOV_GPMF_TRAK_TYPE, gp.MOV_GPMF_TRAK_SUBTYPE, 0)
    if not handle:
        return None
    t_video: list[float] = []
    t_utc: list[float] = []
    rows: list[np.ndarray] = []
    fixes: list[np.ndarray] = []
    dops: list[np.ndarray] = []
    fix_types: list[np.ndarray] = []
    start_estimates: list[float] = []
    try:
        for index in range(gp.GetNumberPayloads(handle)):
            size = gp.GetPayloadSize(handle, index)
            if not size:
                continue
            resource = gp.GetPayloadResource(handle, 0, size)
            payload = gp.GetPayload(handle, resource, index, size)
            ret, t_in, t_out = gp.GetPayloadTime(handle, index)
            if ret != gp.GPMF_ERROR.GPMF_OK:
                continue
            ret, stream = gp.GPMF_Init(payload, size)
            if ret != gp.GPMF_ERROR.GPMF_OK:
                continue
            fix_value = math.nan
            if _find(gp, stream, "GPSF"):
                fix_value = float(_scaled(gp, stream).ravel()[0])
            gp.GPMF_ResetState(stream)
            dop_value = math.nan
            if _find(gp, stream, "GPSP"):
                dop_value = _dop(float(_scaled(gp, stream).ravel()[0]) / 100.0)
            gp.GPMF_ResetState(stream)
            gpsu = None
            if _find(gp, stream, "GPSU"):
                gpsu = parse_gpsu(bytes(gp.GPMF_RawData(stream)))
            gp.GPMF_ResetState(stream)
            if _find(gp, stream, "GPS9"):
                data = _scaled(gp, stream)  # lat lon alt speed2d speed3d days secs dop fix
                if data.shape[1] < 9:
                    continue
                times = t_in + (t_out - t_in) * np.arange(len(data)) / max(len(data), 1)
                utc = _GPS2000_POSIX + data[:, 5] * 86400.0 + data[:, 6]
                start_estimates.extend(utc - times)
                t_video.extend(times)
                t_utc.extend(utc)
                rows.append(data[:, :3])
                fixes.append(data[:, 8] >= 2)
                dops.append(np.array([_dop(v) for v in data[:, 7]]))
                fix_types.append(np.array([_fix_code(v) for v in data[:, 8]], np.int8))
                continue
            gp.GPMF_ResetState(stream)
            if _find(gp, stream, "GPS5"):
                data = _scaled(gp, stream)  # lat lon alt speed2d speed3d
                if data.shape[1] < 3 or not len(data):
                    continue
                times = t_in + (t_out - t_in) * np.arange(len(data)) / len(data)
                if gpsu is not None:
                    start_estimates.append(gpsu - t_in)
                t_video.extend(times)
                t_utc.extend([math.nan] * len(data))
                rows.append(data[:, :3])
                lock = math.isnan(fix_value) or fix_value >= 2
                fixes.append(np.full(len(data), lock))
                dops.append(np.full(len(data), dop_value))
                fix_types.append(np.full(len(data), _fix_code(fix_value), np.int8))
    finally:
        gp.CloseSource(handle)
    if not rows:
        msg = (
            f"GoPro file {path} has a GPMF track but no GPS5/GPS9 samples (GPS was off?); "
            "pass --gps with a track"
        )
        raise GpsError(msg)
    if not start_estimates:
        msg = f"GoPro file {path}: GPS never got a time (no GPSU); pass --gps with a track"
        raise GpsError(msg)
    start = float(np.median(start_estimates))
    table = np.concatenate(rows)
    video_times = np.asarray(t_video)
    return GpsTrack.from_columns(
        path,
        "gpmf",
        start + video_times,
        table[:, 0],
        table[:, 1],
        table[:, 2],
        np.concatenate(fixes),
        video_start_utc=start,
        quality=FixQuality.from_columns(
            hdop=np.concatenate(dops), fix_type=np.concatenate(fix_types)
        ),
    )
