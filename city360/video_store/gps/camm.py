"""Google's Camera Motion Metadata (CAMM) track inside an MP4 (Insta360 and others).

Each sample of the ``camm`` track is one little-endian packet: ``uint16 reserved`` (0),
``uint16 type``, then the payload. Position comes from type 5 (minimal GPS: lat, lon, alt as
doubles, timed by the sample's pts) and type 6 (full GPS: time since the GPS epoch, fix type,
lat/lon doubles, altitude and accuracies as floats: horizontal and vertical accuracy in metres,
then velocity east/north/up and speed accuracy). The fix type of type 6 is 0 none, 2 2D, 3 3D;
its horizontal accuracy fills ``accuracy_m`` (a negative or non-finite one is read as
unknown: the spec gives no range, and a camera's float there is a sensor's guess, not a
structured field worth failing a whole video for). No maintained Python reader exists; the
format is a few fixed structs, read here with :mod:`struct`.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from city360.errors import GpsError
from city360.video_store.gps.quality import FIX_NAMES, FIX_UNKNOWN, FixQuality
from city360.video_store.gps.track import GpsTrack

__all__ = [
    "CAMM_PAYLOAD_BYTES",
    "CammFix",
    "camm_fixes_from_packets",
    "is_camm_packet",
    "read_camm",
]

CAMM_PAYLOAD_BYTES = {0: 12, 1: 12, 2: 12, 3: 12, 4: 12, 5: 24, 6: 56, 7: 12}
"""Payload size in bytes of each CAMM packet type (after the 4-byte header)."""

GPS_EPOCH_POSIX = 315_964_800.0
"""1980-01-06T00:00:00Z, the GPS epoch, in POSIX seconds."""
GPS_LEAP_SECONDS = 18.0
"""GPS time is ahead of UTC by 18 s since 2017-01-01."""

_TYPE5 = struct.Struct("<3d")
_TYPE6 = struct.Struct("<di2d7f")


@dataclass(frozen=True, slots=True)
class CammFix:
    """One CAMM GPS record: ``t_video_s`` from the sample's pts, ``t_utc`` (type 6 only)."""

    t_video_s: float
    t_utc: float | None
    lat: float
    lon: float
    alt_m: float
    has_fix: bool
    fix_type: int = FIX_UNKNOWN
    """Fix type code (:data:`~city360.video_store.gps.quality.FIX_NAMES`), type 6 only."""
    accuracy_m: float = math.nan
    """Horizontal accuracy, metres, type 6 only."""


def is_camm_packet(data: bytes) -> bool:
    """True when ``data`` has a CAMM header with a known type and the right size."""
    if len(data) < 4:
        return False
    reserved, kind = struct.unpack_from("<HH", data)
    expected = CAMM_PAYLOAD_BYTES.get(kind)
    return reserved == 0 and expected is not None and len(data) == 4 + expected


def camm_fixes_from_packets(packets: Iterable[tuple[float, bytes]]) -> list[CammFix]:
    """Decode the GPS records among ``(t_video_s, packet_bytes)`` pairs; others are skipped."""
    fixes = []
    for t_video, data in packets:
        if not is_camm_packet(data):
            continue
        (kind,) = struct.unpack_from("<H", data, 2)
        if kind == 5:
            lat, lon, alt = _TYPE5.unpack_from(data, 4)
            fixes.append(CammFix(t_video, None, lat, lon, alt, True))
        elif kind == 6:
            gps_time, fix_type, lat, lon, alt, accuracy, *_ = _TYPE6.unpack_from(data, 4)
            t_utc = GPS_EPOCH_POSIX + gps_time - GPS_LEAP_SECONDS
            code = {0: FIX_NAMES["none"], 2: FIX_NAMES["2d"], 3: FIX_NAMES["3d"]}.get(
                fix_type, FIX_UNKNOWN
            )
            usable_accuracy = accuracy if math.isfinite(accuracy) and accuracy >= 0 else math.nan
            fixes.append(
                CammFix(t_video, t_utc, lat, lon, alt, fix_type >= 2, code, usable_accuracy)
            )
    return fixes


def read_camm(path: Path, *, creation_time_utc: float | None) -> GpsTrack | None:
    """The GPS track of the CAMM stream in ``path``, or None when the file has none.

    Type-6 records carry GPS time; the video's start on that clock is their median of
    ``t_utc - t_video``. Type-5-only tracks are timed by the video itself and need the
    container's ``creation_time_utc``.
    """
    import av

    try:
        container = av.open(str(path))
    except av.FFmpegError:
        return None
    with container:
        packets: list[tuple[float, bytes]] = []
        for stream in container.streams.data:
            stream_packets = []
            for packet in container.demux(stream):
                if packet.size == 0 or packet.pts is None:
                    continue
                t_video = float(packet.pts * packet.time_base) if packet.time_base else 0.0
                stream_packets.append((t_video, bytes(packet)))
                if len(stream_packets) == 1 and not is_camm_packet(stream_packets[0][1]):
                    break
            if stream_packets and is_camm_packet(stream_packets[0][1]):
                packets = stream_packets
                break
            container.seek(0)
    if not packets:
        return None
    fixes = camm_fixes_from_packets(packets)
    if not fixes:
        msg = f"CAMM track in {path} has no GPS records (types 5/6); pass --gps with a track"
        raise GpsError(msg)
    timed = [f.t_utc - f.t_video_s for f in fixes if f.t_utc is not None]
    if timed:
        start = float(np.median(timed))
    elif creation_time_utc is not None:
        start = creation_time_utc
    else:
        msg = (
            f"CAMM track in {path} has only untimed GPS (type 5) and the video has no "
            "creation_time; pass --gps with a timed track"
        )
        raise GpsError(msg)
    t = [start + f.t_video_s if f.t_utc is None else f.t_utc for f in fixes]
    alt = [f.alt_m if math.isfinite(f.alt_m) else math.nan for f in fixes]
    return GpsTrack.from_columns(
        path,
        "camm",
        t,
        [f.lat for f in fixes],
        [f.lon for f in fixes],
        alt,
        [f.has_fix for f in fixes],
        video_start_utc=start,
        quality=FixQuality.from_columns(
            accuracy_m=[f.accuracy_m for f in fixes], fix_type=[f.fix_type for f in fixes]
        ),
    )
