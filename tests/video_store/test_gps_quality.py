"""Fix quality (DOP, satellites, fix type, accuracy) from every GPS reader, in each vendor's
own syntax, and the real GoPro video and photo of the shared data."""

from __future__ import annotations

import logging
import struct
from datetime import UTC, datetime
from fractions import Fraction
from functools import reduce
from pathlib import Path

import numpy as np
import pytest

from city360.errors import GpsError
from city360.video_store.gps import read_track, validate_track
from city360.video_store.gps.camm import camm_fixes_from_packets
from city360.video_store.gps.quality import (
    FIX_NAMES,
    FIX_UNKNOWN,
    FixQuality,
    horizontal_sigma_m,
)
from tests.video_store.test_gps_readers import GPS_EPOCH_POSIX, GPS_LEAP_SECONDS, _write_camm_mp4

T0 = datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC).timestamp()

_GPX_HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<gpx version="1.1" creator="GPSLogger 131 - http://gpslogger.mendhak.com/" '
    'xmlns="http://www.topografix.com/GPX/1/1">\n<trk><trkseg>\n'
)


def _gpx(tmp_path: Path, points: str) -> Path:
    path = tmp_path / "q.gpx"
    path.write_text(_GPX_HEAD + points + "</trkseg></trk></gpx>\n")
    return path


def _trkpt(second: int, lat: float, extra: str) -> str:
    return (
        f'<trkpt lat="{lat}" lon="25.0"><ele>12.0</ele>'
        f"<time>2024-05-01T10:00:{second:02d}Z</time>{extra}</trkpt>\n"
    )


# GPX ---------------------------------------------------------------------------------------
def test_gpx_reads_fix_sat_and_dops(tmp_path: Path) -> None:
    path = _gpx(
        tmp_path,
        _trkpt(0, 60.0, "<fix>3d</fix><sat>9</sat><hdop>0.9</hdop><vdop>1.4</vdop><pdop>1.7</pdop>")
        + _trkpt(1, 60.0001, "<fix>dgps</fix><sat>11</sat><hdop>0.7</hdop>")
        + _trkpt(2, 61.0, "<fix>none</fix><sat>2</sat>")
        + _trkpt(3, 60.0002, ""),
    )
    track = read_track(path)
    quality = track.quality
    assert quality.fix_type is not None
    assert quality.fix_type.tolist() == [3, 4, 0, FIX_UNKNOWN]
    np.testing.assert_allclose(quality.hdop, [0.9, 0.7, np.nan, np.nan])
    np.testing.assert_allclose(quality.vdop, [1.4, np.nan, np.nan, np.nan])
    np.testing.assert_allclose(quality.pdop, [1.7, np.nan, np.nan, np.nan])
    np.testing.assert_allclose(quality.satellites, [9, 11, 2, np.nan])
    assert quality.accuracy_m is None
    assert track.has_fix.tolist() == [True, True, False, True]
    usable = validate_track(track)
    assert len(usable) == 3
    np.testing.assert_allclose(usable.quality.hdop, [0.9, 0.7, np.nan])


def test_gpx_without_quality_has_none(tmp_path: Path) -> None:
    track = read_track(_gpx(tmp_path, _trkpt(0, 60.0, "") + _trkpt(1, 60.0001, "")))
    assert not track.quality
    assert track.quality.columns == {}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("<fix>4d</fix>", r'cannot be parsed \(Invalid value "4d"'),
        (
            "<hdop>-1.5</hdop>",
            r"`hdop` of fix 0 \(from 0, in file order\) is -1.5; it must be >= 0",
        ),
        ("<hdop>bad</hdop>", r"cannot be parsed \(Invalid value for <hdop>"),
    ],
)
def test_gpx_bad_quality_names_file_and_field(tmp_path: Path, extra: str, message: str) -> None:
    path = _gpx(tmp_path, _trkpt(0, 60.0, extra) + _trkpt(1, 60.0001, ""))
    with pytest.raises(GpsError, match=message) as caught:
        read_track(path)
    assert str(path) in str(caught.value)


# NMEA --------------------------------------------------------------------------------------
def _nmea(body: str) -> str:
    checksum = reduce(lambda acc, ch: acc ^ ord(ch), body, 0)
    return f"${body}*{checksum:02X}"


def _nmea_log(tmp_path: Path, sentences: list[str], *, name: str = "log.nmea") -> Path:
    path = tmp_path / name
    path.write_text("\r\n".join(sentences) + "\r\n")
    return path


def test_nmea_gga_rmc_gsa_give_fix_sats_and_dops(tmp_path: Path) -> None:
    path = _nmea_log(
        tmp_path,
        [
            _nmea("GPRMC,100000.00,A,6000.000,N,02500.000,E,0.5,90.0,010524,,,A"),
            _nmea("GPGGA,100000.00,6000.000,N,02500.000,E,1,08,0.9,12.5,M,17.0,M,,"),
            _nmea("GNGSA,A,3,01,03,07,08,11,14,17,19,,,,,1.6,0.9,1.3"),
            _nmea("GPRMC,100001.00,A,6000.001,N,02500.000,E,0.5,90.0,010524,,,D"),
            _nmea("GPGGA,100001.00,6000.001,N,02500.000,E,2,10,0.8,12.4,M,17.0,M,1.0,0001"),
            _nmea("GPGGA,100002.00,,,,,0,03,25.0,,M,,M,,"),
            _nmea("GPRMC,100002.00,V,,,,,,,010524,,,N"),
            _nmea("GPGGA,100003.00,6000.002,N,02500.000,E,6,04,4.5,12.0,M,17.0,M,,"),
        ],
    )
    track = read_track(path)
    assert track.kind == "nmea"
    np.testing.assert_allclose(track.t_s, T0 + np.arange(4))
    np.testing.assert_allclose(track.lat[[0, 1, 3]], 60 + np.array([0, 1, 2]) / 60_000)
    assert np.isnan(track.lat[2])
    np.testing.assert_allclose(track.alt_m, [12.5, 12.4, np.nan, 12.0])
    q = track.quality
    assert q.fix_type is not None
    assert q.fix_type.tolist() == [3, FIX_NAMES["dgps"], 0, FIX_NAMES["estimated"]]
    np.testing.assert_allclose(q.satellites, [8, 10, 3, 4])
    np.testing.assert_allclose(q.hdop, [0.9, 0.8, 25.0, 4.5])
    np.testing.assert_allclose(q.pdop, [1.6, np.nan, np.nan, np.nan])
    np.testing.assert_allclose(q.vdop, [1.3, np.nan, np.nan, np.nan])
    assert track.has_fix.tolist() == [True, True, False, True]


def test_nmea_skips_bad_checksums_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    good = _nmea("GPGGA,100001.00,6000.001,N,02500.000,E,1,08,1.1,12.0,M,17.0,M,,")
    corrupt = good[:20] + "9" + good[21:]  # one digit flipped on the serial line
    path = _nmea_log(
        tmp_path,
        [
            "0.000,N,02500.000,E,1,08,0.9,12.5,M,17.0,M,,*4A",  # cut when the logger started
            _nmea("GPRMC,100000.00,A,6000.000,N,02500.000,E,0.5,90.0,010524,,,A"),
            corrupt,
            good,
        ],
        name="log.txt",
    )
    with caplog.at_level(logging.WARNING, logger="city360.video_store.gps.nmea"):
        track = read_track(path)
    assert track.kind == "nmea"  # a .txt starting with "$" is NMEA, not CSV
    assert len(track) == 2
    np.testing.assert_allclose(track.quality.hdop, [np.nan, 1.1])
    assert [r.getMessage() for r in caplog.records] == [
        f"NMEA {path}: skipped 1 sentences with a bad checksum or cut short"
    ]


def test_nmea_negative_hdop_is_an_error_naming_line_and_field(tmp_path: Path) -> None:
    path = _nmea_log(
        tmp_path,
        [
            _nmea("GPRMC,100000.00,A,6000.000,N,02500.000,E,0.5,90.0,010524,,,A"),
            _nmea("GPGGA,100000.00,6000.000,N,02500.000,E,1,08,-0.9,12.5,M,17.0,M,,"),
        ],
    )
    with pytest.raises(GpsError, match=r"line 2: field `GGA HDOP` is -0.9; must be >= 0"):
        read_track(path)


def test_nmea_without_any_date_nor_video_says_how_to_date_it(tmp_path: Path) -> None:
    path = _nmea_log(tmp_path, [_nmea("GPGGA,100000.00,6000.000,N,02500.000,E,1,08,0.9,,M,,M,,")])
    with pytest.raises(GpsError, match=r"has no date \(no RMC or ZDA sentence.*log RMC or ZDA"):
        read_track(path)


def test_nmea_gga_only_is_dated_by_the_videos_creation_time(tmp_path: Path) -> None:
    """A GGA-only log (cheap loggers write nothing else) takes the UTC day that puts its
    first fix nearest the video's creation time, also across midnight either way."""
    path = _nmea_log(tmp_path, [_gga("235959.00"), _gga("000001.00")])
    may_1 = datetime(2024, 5, 1, tzinfo=UTC).timestamp()
    created_same_day = may_1 + 86_399 - 30.0  # the camera started 30 s before the log
    assert list(read_track(path, creation_time_utc=created_same_day).t_s) == [
        may_1 + 86_399,
        may_1 + 86_401,
    ]
    created_after_midnight = may_1 + 86_400 + 10.0  # the log began 11 s before the video
    assert list(read_track(path, creation_time_utc=created_after_midnight).t_s) == [
        may_1 + 86_399,
        may_1 + 86_401,
    ]


def test_nmea_zda_gives_the_date(tmp_path: Path) -> None:
    path = _nmea_log(
        tmp_path,
        [_gga("100000.00"), _nmea("GPZDA,100001.00,02,05,2024,00,00"), _gga("100001.00")],
    )
    may_2 = datetime(2024, 5, 2, tzinfo=UTC).timestamp()
    assert list(read_track(path).t_s) == [may_2 + 36_000, may_2 + 36_001]


def test_nmea_crosses_midnight(tmp_path: Path) -> None:
    path = _nmea_log(
        tmp_path,
        [
            _nmea("GPRMC,235959.00,A,6000.000,N,02500.000,E,0.5,90.0,300424,,,A"),
            _nmea("GPGGA,000000.00,6000.001,N,02500.000,E,1,08,0.9,12.5,M,17.0,M,,"),
        ],
    )
    midnight = datetime(2024, 5, 1, tzinfo=UTC).timestamp()
    np.testing.assert_allclose(read_track(path).t_s, [midnight - 1, midnight])


# CSV ---------------------------------------------------------------------------------------
def test_csv_of_a_phone_logger_reads_accuracy_and_dops(tmp_path: Path) -> None:
    # GPSLogger for Android's CSV header, two of its rows (satellites empty on network fixes)
    path = tmp_path / "phone.csv"
    path.write_text(
        "time,lat,lon,elevation,accuracy,bearing,speed,satellites,provider,hdop,vdop,pdop,"
        "geoidheight,ageofdgpsdata,dgpsid,activity,battery,annotation\n"
        "2024-05-01T10:00:00.000Z,60.0,25.0,12.0,4.2,90.0,1.3,12,gps,0.8,1.1,1.4,17.0,,,,88,\n"
        "2024-05-01T10:00:01.000Z,60.00001,25.0,12.0,16.0,,,,network,,,,,,,,88,\n"
    )
    q = read_track(path).quality
    np.testing.assert_allclose(q.accuracy_m, [4.2, 16.0])
    np.testing.assert_allclose(q.hdop, [0.8, np.nan])
    np.testing.assert_allclose(q.satellites, [12, np.nan])
    assert q.fix_type is None


def test_csv_fix_column_words_and_gga_numbers(tmp_path: Path) -> None:
    path = tmp_path / "fix.csv"
    path.write_text(f"time,lat,lon,fix\n{T0},60,25,3d\n{T0 + 1},60.0001,25,0\n{T0 + 2},60,25,2\n")
    track = read_track(path)
    assert track.quality.fix_type is not None
    assert track.quality.fix_type.tolist() == [3, 0, FIX_NAMES["dgps"]]
    assert track.has_fix.tolist() == [True, False, True]


@pytest.mark.parametrize(
    ("header", "cell", "message"),
    [
        ("hdop", "-2", r"line 2: column `hdop` is -2.0; it must be >= 0"),
        ("accuracy", "far", r"line 2: column `accuracy` is 'far', not a number"),
        ("fix", "4d", r"line 2: column `fix` has unknown fix type '4d'"),
    ],
)
def test_csv_bad_quality_cell(tmp_path: Path, header: str, cell: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(f"time,lat,lon,{header}\n{T0},60,25,{cell}\n{T0 + 1},60.0001,25,\n")
    with pytest.raises(GpsError, match=message):
        read_track(path)


# CAMM --------------------------------------------------------------------------------------
def _camm6(gps_time: float, fix: int, lat: float, accuracy_m: float) -> bytes:
    # time, fix type, lat, lon (doubles); alt, h/v accuracy, velocity e/n/u, speed acc (floats)
    return struct.pack(
        "<HHdi2d7f", 0, 6, gps_time, fix, lat, 25.0, 3.0, accuracy_m, 6.0, 0, 0, 0, 0.5
    )


def test_camm_type6_accuracy_and_fix(tmp_path: Path) -> None:
    start = T0 - GPS_EPOCH_POSIX + GPS_LEAP_SECONDS
    packets = [_camm6(start + 0.1 * i, 3 if i != 4 else 2, 60 + 1e-5 * i, 2 + i) for i in range(8)]
    track = read_track(_write_camm_mp4(tmp_path / "camm.mp4", packets, creation=None))
    np.testing.assert_allclose(track.quality.accuracy_m, 2.0 + np.arange(8), rtol=1e-6)
    assert track.quality.fix_type is not None
    assert track.quality.fix_type.tolist() == [3, 3, 3, 3, 2, 3, 3, 3]


def test_camm_negative_accuracy_is_unknown() -> None:
    (fix,) = camm_fixes_from_packets([(0.0, _camm6(0.0, 3, 60.0, -1.0))])
    assert np.isnan(fix.accuracy_m)


# GoPro GPMF and EXIF, real files -----------------------------------------------------------
def test_gopro_gpmf_gpsf_and_gpsp(shared_data: Path) -> None:
    track = read_track(shared_data / "gopro_gpmf" / "max-heromode.mp4")
    q = track.quality
    assert q.fix_type is not None
    assert q.hdop is not None
    assert set(q.fix_type.tolist()) == {3}  # GPSF 3 in all eleven payloads
    # GPSP 154 in ten payloads and 177 in the fourth: DOP 1.54 and 1.77
    assert set(np.round(q.hdop, 2).tolist()) == {1.54, 1.77}
    assert np.mean(q.hdop == 1.54) > 0.85


def _photo(path: Path, gps_ifd: dict[int, object]) -> Path:
    from PIL import Image

    exif = Image.Exif()
    exif[0x8825] = {
        1: "N",
        2: (60.0, 10.0, 0.0),
        3: "E",
        4: (24.0, 56.0, 0.0),
        7: (10.0, 0.0, 0.0),
        29: "2024:05:01",
        **gps_ifd,
    }
    Image.new("RGB", (8, 4)).save(path, exif=exif)
    return path


def test_exif_measure_mode_and_dop(tmp_path: Path) -> None:
    two_d = read_track(_photo(tmp_path / "a.jpg", {10: "2", 11: Fraction(27, 10)}))
    assert two_d.quality.fix_type is not None
    assert two_d.quality.fix_type.tolist() == [2]
    np.testing.assert_allclose(two_d.quality.hdop, [2.7])
    assert two_d.quality.pdop is None
    three_d = read_track(_photo(tmp_path / "b.jpg", {10: "3", 11: Fraction(3, 2)}))
    np.testing.assert_allclose(three_d.quality.pdop, [1.5])  # EXIF: a PDOP in 3-D mode
    assert three_d.quality.hdop is None


def test_exif_unknown_measure_mode_is_ignored_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _photo(tmp_path / "c.jpg", {10: "9"})
    with caplog.at_level(logging.WARNING, logger="city360.video_store.gps.exif"):
        track = read_track(path)
    assert not track.quality
    assert [r.getMessage() for r in caplog.records] == [
        f"photo {path}: GPSMeasureMode '9' is not 2 or 3; ignored"
    ]


def test_real_gopro_max_photo_reports_no_quality(shared_data: Path) -> None:
    # its GPS IFD holds position, altitude, time and date only (tags 1-7, 29)
    assert not read_track(shared_data / "pano360" / "gopro_max_GSAG2002.JPG").quality


# noise from quality ------------------------------------------------------------------------
def test_sigma_from_accuracy_then_dop_then_fallback() -> None:
    quality = FixQuality.from_columns(
        accuracy_m=[4.545, np.nan, np.nan, np.nan, 500.0],
        hdop=[9.0, 2.0, np.nan, 0.3, np.nan],
        pdop=[np.nan, 3.0, 4.0, np.nan, np.nan],
    )
    sigma = horizontal_sigma_m(quality, fallback_sigma_m=3.0)
    assert sigma is not None
    # accuracy / 1.515; HDOP x 2.5 m / sqrt 2; PDOP where no HDOP; clamped to 1.5 and 25 m
    np.testing.assert_allclose(sigma, [3.0, 2 * 2.5 / np.sqrt(2), 4 * 2.5 / np.sqrt(2), 1.5, 25])
    assert horizontal_sigma_m(FixQuality(), fallback_sigma_m=3.0) is None
    fix_only = FixQuality.from_columns(fix_type=[3, 3])
    assert horizontal_sigma_m(fix_only, fallback_sigma_m=3.0) is None


def test_gpx_time_without_a_zone_is_utc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from city360.video_store.gps.gpx import read_gpx

    path = tmp_path / "naive.gpx"
    path.write_text(
        '<?xml version="1.0"?><gpx version="1.1" creator="t" '
        'xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>'
        '<trkpt lat="35.7" lon="139.7"><time>2024-05-01T10:00:00</time></trkpt>'
        '<trkpt lat="35.7001" lon="139.7"><time>2024-05-01T10:00:01</time></trkpt>'
        "</trkseg></trk></gpx>",
        encoding="utf-8",
    )
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        track = read_gpx(path)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert track.t_s[0] == 1714557600.0


def _gga(stamp: str) -> str:
    return _nmea(f"GPGGA,{stamp},6000.000,N,02500.000,E,1,08,0.9,12.5,M,17.0,M,,")


def _rmc(stamp: str, date: str) -> str:
    return _nmea(f"GPRMC,{stamp},A,6000.000,N,02500.000,E,0.5,90.0,{date},,,A")


def test_nmea_over_midnight_with_and_without_rmc(tmp_path: Path) -> None:
    day = datetime(2024, 5, 1, tzinfo=UTC).timestamp()
    with_rmc = _nmea_log(
        tmp_path, [_gga("235959.00"), _rmc("000000.00", "020524"), _gga("000001.00")], name="a.nmea"
    )
    assert list(read_track(with_rmc).t_s) == [day + 86_399, day + 86_400, day + 86_401]
    gga_only_after = _nmea_log(
        tmp_path, [_rmc("235958.00", "010524"), _gga("235959.00"), _gga("000000.00")], name="b.nmea"
    )
    assert list(read_track(gga_only_after).t_s) == [day + 86_398, day + 86_399, day + 86_400]


def test_nmea_30_hour_log_keeps_days_apart(tmp_path: Path) -> None:
    rmc = "GPRMC,{},A,6000.000,N,02500.000,E,0.5,90.0,010524,,,A"
    lines = [_nmea(rmc.format("100000.00"))]
    lines += [_gga(f"{h % 24:02d}0000.00") for h in range(10, 10 + 31)]
    track = read_track(_nmea_log(tmp_path, lines))
    assert len(track.t_s) == 31
    assert float(np.diff(track.t_s).min()) == 3600.0
    assert float(track.t_s[-1] - track.t_s[0]) == 30 * 3600.0


def test_nmea_time_back_without_date_names_line(tmp_path: Path) -> None:
    path = _nmea_log(
        tmp_path,
        [
            _nmea("GPRMC,100000.00,A,6000.000,N,02500.000,E,0.5,90.0,010524,,,A"),
            _gga("100005.00"),
            _gga("100001.00"),
        ],
    )
    with pytest.raises(GpsError, match=r"line 3: time of day 36001.00 s runs back"):
        read_track(path)


def test_nmea_rmc_date_back_in_time_names_line(tmp_path: Path) -> None:
    path = _nmea_log(
        tmp_path,
        [
            _nmea("GPRMC,100000.00,A,6000.000,N,02500.000,E,0.5,90.0,020524,,,A"),
            _nmea("GPRMC,100001.00,A,6000.000,N,02500.000,E,0.5,90.0,010524,,,A"),
        ],
    )
    with pytest.raises(
        GpsError, match=r"line 2: date 2024-05-01 and time 36001.00 s are not after"
    ):
        read_track(path)
