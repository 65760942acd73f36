"""GoPro GPMF GPS9 (HERO11, HERO13, MAX2) in the layout GoPro documents, muxed into an MP4.

gopro/gpmf-parser, docs/README.md (HERO11 and HERO13 tables): GPS9 is "lat, long, alt, 2D speed,
3D speed, days since 2000, secs since midnight (ms precision), DOP, fix (0, 2D or 3D)" at about
10 Hz, units "deg, deg, m, m/s, m/s, -, s, -, -". The stream is written as GoPro's cameras write
it: a ``DEVC`` holding a ``STRM`` with ``STNM``, ``SCAL`` (one divisor per field), ``TYPE``
``lllllllSS`` (seven int32, two uint16) and the ``GPS9`` samples as a complex ('?') structure of
32 bytes each; one ``DEVC`` payload per second in a ``gpmd`` data track, which FFmpeg's MP4
muxer writes under a ``meta`` handler named "GoPro MET", as GoPro's MP4 structure has it.
"""

from __future__ import annotations

import struct
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path

import numpy as np

from city360.video_store.gps import read_track
from city360.video_store.gps.quality import FIX_NAMES

SCAL = (10_000_000, 10_000_000, 1000, 1000, 100, 1, 1000, 100, 1)
"""Divisors per GPS9 field: degrees x 1e7, mm, mm/s, cm/s, days, ms, DOP x 100, fix."""
DAY = datetime(2025, 12, 2, tzinfo=UTC)
DAYS_SINCE_2000 = (DAY - datetime(2000, 1, 1, tzinfo=UTC)).days
START_S = 23 * 3600 + 59 * 60 + 58.5
"""GPS time of day of the first sample, seconds: the walk crosses midnight after 1.5 s."""
RATE_HZ = 10
PAYLOADS = 3


def _klv(key: bytes, kind: bytes, size: int, repeat: int, payload: bytes) -> bytes:
    """One GPMF KLV: FourCC, type char, struct size (bytes), repeat, payload padded to 32 bits."""
    return key + kind + struct.pack(">BH", size, repeat) + payload + b"\0" * (-len(payload) % 4)


def _gps9_devc(samples: list[tuple[int, ...]]) -> bytes:
    name = b"GPS (Lat., Long., Alt., 2D, 3D, days, secs, DOP, fix)"
    body = b"".join(struct.pack(">lllllllHH", *s) for s in samples)
    strm = (
        _klv(b"STNM", b"c", len(name), 1, name)
        + _klv(b"SCAL", b"l", 4, len(SCAL), struct.pack(f">{len(SCAL)}l", *SCAL))
        + _klv(b"TYPE", b"c", 9, 1, b"lllllllSS")
        + _klv(b"GPS9", b"?", 32, len(samples), body)
    )
    devc = (
        _klv(b"DVID", b"L", 4, 1, struct.pack(">L", 1))
        + _klv(b"DVNM", b"c", 6, 1, b"Camera")
        + _klv(b"STRM", b"\0", 1, len(strm), strm)
    )
    return _klv(b"DEVC", b"\0", 1, len(devc), devc)


def _sample(i: int) -> tuple[int, ...]:
    """Sample ``i``: walking north at 1.4 m/s; DOP 1.50 + 0.01 i; fix 3-D, except sample 12
    2-D, sample 15 without a fix and sample 17 with DOP 99.99 (GoPro's "not yet")."""
    t = START_S + i / RATE_HZ
    day, secs = divmod(t, 86_400.0)
    lat = 60.17 + 1.4 * (i / RATE_HZ) / 111_320.0
    dop = 9999 if i == 17 else 150 + i
    fix = {12: 2, 15: 0}.get(i, 3)
    return (
        round(lat * 1e7), round(24.94 * 1e7), 15_000, 1400, 1410,
        DAYS_SINCE_2000 + int(day), round(secs * 1000), dop, fix,
    )  # fmt: skip


def _write_gps9_mp4(path: Path) -> Path:
    import av

    with av.open(str(path), "w", format="mp4") as out:
        video = out.add_stream("mpeg4", rate=RATE_HZ)
        video.width, video.height, video.pix_fmt = 64, 32, "yuv420p"
        data = out.add_mux_stream("bin_data")
        data.time_base = Fraction(1, 1000)
        black = np.zeros((32, 64, 3), np.uint8)
        for second in range(PAYLOADS):
            for k in range(RATE_HZ):
                frame = av.VideoFrame.from_ndarray(black, format="rgb24")
                frame.pts = second * RATE_HZ + k
                for packet in video.encode(frame):
                    out.mux(packet)
            samples = [_sample(second * RATE_HZ + k) for k in range(RATE_HZ)]
            packet = av.Packet(_gps9_devc(samples))
            packet.stream = data
            packet.time_base = data.time_base
            packet.pts = packet.dts = second * 1000
            packet.duration = 1000
            out.mux(packet)
        for packet in video.encode():
            out.mux(packet)
    return path


def test_gps9_positions_times_and_quality(tmp_path: Path) -> None:
    track = read_track(_write_gps9_mp4(tmp_path / "GX010001.MP4"))
    assert track.kind == "gpmf"
    n = PAYLOADS * RATE_HZ
    expected = [_sample(i) for i in range(n)]
    fixed = np.array([s[8] >= 2 for s in expected])
    assert len(track) == n
    np.testing.assert_array_equal(track.has_fix, fixed)
    lat = np.array([s[0] / 1e7 for s in expected])
    np.testing.assert_allclose(track.lat[fixed], lat[fixed], atol=1e-7)
    np.testing.assert_allclose(track.lon[fixed], 24.94, atol=1e-7)
    np.testing.assert_allclose(track.alt_m[fixed], 15.0)
    # GPS time from days since 2000 + seconds since midnight (the reader puts the samples on the
    # video clock, shifted by the median GPS-minus-video time), here across midnight
    utc = DAY.timestamp() + START_S + np.arange(n) / RATE_HZ
    np.testing.assert_allclose(track.t_s, utc, atol=1e-3)
    assert track.t_s[14] < DAY.timestamp() + 86_400.0 <= track.t_s[15]  # midnight
    assert track.video_start_utc is not None
    assert abs(track.video_start_utc - utc[0]) < 1e-3  # the first sample is at video time 0
    hdop, fix_type = track.quality.hdop, track.quality.fix_type
    assert hdop is not None
    assert fix_type is not None
    np.testing.assert_allclose(hdop[:12], 1.50 + 0.01 * np.arange(12))
    assert np.isnan(hdop[17])
    assert fix_type[12] == FIX_NAMES["2d"]
    assert fix_type[15] == FIX_NAMES["none"]
    assert (fix_type[fixed & (np.arange(n) != 12)] == FIX_NAMES["3d"]).all()
