"""GPS readers: GPX, CSV, CAMM, GoPro GPMF, EXIF; and the track checks every reader shares."""

from __future__ import annotations

import re
import struct
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from city360.errors import GpsError, InputFileError
from city360.geo import haversine_m
from city360.video_store.gps import read_embedded_track, read_track, validate_track
from city360.video_store.gps.camm import (
    GPS_EPOCH_POSIX,
    GPS_LEAP_SECONDS,
    camm_fixes_from_packets,
    is_camm_packet,
)
from city360.video_store.gps.gpmf import parse_gpsu
from tests.fixtures.videos import write_csv_track, write_gpx

T0 = datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC).timestamp()
T0_MS = round(T0 * 1000)


def test_gpx_reads_times_and_positions(tmp_path: Path) -> None:
    path = write_gpx(tmp_path / "a.gpx", [T0, T0 + 1], [60.0, 60.0001], [25.0, 25.0002])
    track = read_track(path)
    assert track.kind == "gpx"
    np.testing.assert_allclose(track.t_s, [T0, T0 + 1])
    np.testing.assert_allclose(track.lat, [60.0, 60.0001])
    np.testing.assert_allclose(track.lon, [25.0, 25.0002])


def test_gpx_fix_none_marks_point_fixless(tmp_path: Path) -> None:
    path = write_gpx(tmp_path / "a.gpx", [T0, T0 + 1, T0 + 2], [60.0, 61.0, 60.0002], [25.0] * 3)
    text = path.read_text().replace(
        '<trkpt lat="61.0" lon="25.0">', '<trkpt lat="61.0" lon="25.0"><fix>none</fix>'
    )
    path.write_text(text)
    track = read_track(path)
    assert track.has_fix.tolist() == [True, False, True]
    assert len(validate_track(track)) == 2


def test_csv_iso_and_epoch_times(tmp_path: Path) -> None:
    iso = tmp_path / "iso.csv"
    iso.write_text(
        "time,lat,lon,alt\n2024-05-01T10:00:00Z,60.0,25.0,12\n2024-05-01T10:00:01,60.0001,25.0,\n"
    )
    track = read_track(iso)
    np.testing.assert_allclose(track.t_s, [T0, T0 + 1])
    assert track.alt_m[0] == 12.0
    assert np.isnan(track.alt_m[1])
    epoch = write_csv_track(tmp_path / "epoch.csv", [T0, T0 + 1], [60, 60.0001], [25, 25])
    np.testing.assert_allclose(read_track(epoch).t_s, [T0, T0 + 1])


def test_csv_accepts_latitude_longitude_names(tmp_path: Path) -> None:
    path = tmp_path / "b.csv"
    path.write_text(f"Timestamp,Latitude,Longitude\n{T0},1.5,2.5\n{T0 + 1},1.6,2.5\n")
    track = read_track(path)
    assert track.lat.tolist() == [1.5, 1.6]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("empty.gpx", "", "is empty; export the track again"),
        ("broken.gpx", "<gpx><trk><trkseg><trkpt lat=", "cannot be parsed"),
        ("nopoints.gpx", '<gpx version="1.1" creator="x"></gpx>', "has no track, route or"),
        ("empty.csv", "", "is empty; it needs a header 'time,lat,lon[,alt]'"),
        ("header.csv", "time,lat,lon\n", "has a header but no rows"),
        ("nolat.csv", "time,lon\n1,2\n", "lacks lat; expected 'time,lat,lon[,alt]'"),
        ("bad.csv", "time,lat,lon\nyesterday,1,2\n", "line 2: cannot read"),
        ("track.shp", "<shp/>", "unknown format '.shp'"),
    ],
)
def test_unparseable_or_empty_tracks(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(GpsError, match=re.escape(message)) as info:
        read_track(path)
    assert str(path) in str(info.value)


def test_untimed_gpx_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "untimed.gpx"
    path.write_text(
        '<gpx version="1.1" creator="x"><trk><trkseg><trkpt lat="1" lon="2"/></trkseg></trk></gpx>'
    )
    with pytest.raises(GpsError, match="has no time stamps"):
        read_track(path)


@pytest.mark.parametrize(
    ("times", "message"),
    [
        (["yesterday", "not a time"], "line 4: <time> 'yesterday' cannot be read"),
        (["2024-05-01T10:00:00Z", "2024-13-45T99:99:99Z"], "line 6: <time> '2024-13-45T99"),
    ],
)
def test_gpx_time_that_cannot_be_read_is_named(
    tmp_path: Path, times: list[str], message: str
) -> None:
    """gpxpy turns a time it cannot read into None: the points were dropped in silence, and
    when all were, the track was said to have "no time stamps" although it had some."""
    path = tmp_path / "garbled.gpx"
    points = "".join(
        f'<trkpt lat="60.0" lon="25.{k}">\n<time>{t}</time></trkpt>\n' for k, t in enumerate(times)
    )
    path.write_text(
        f'<gpx version="1.1" creator="x">\n<trk><trkseg>\n{points}</trkseg></trk></gpx>'
    )
    with pytest.raises(GpsError, match=re.escape(message)) as info:
        read_track(path)
    assert str(path) in str(info.value)
    assert "ISO 8601" in str(info.value)


def test_csv_time_in_milliseconds_is_named(tmp_path: Path) -> None:
    """Android loggers write POSIX milliseconds; read as seconds they were the year 48006 and
    ingest died in a traceback (``ValueError: year 48006 is out of range``)."""
    path = tmp_path / "phone.csv"
    ms = int(T0 * 1000)
    path.write_text(f"time,lat,lon\n{ms},60.0,25.0\n{ms + 1000},60.0,25.0001\n")
    with pytest.raises(
        GpsError,
        match=rf"^CSV .*phone\.csv line 2: column `time` is {ms}, as POSIX seconds past the year "
        r"5000; it looks like milliseconds: write POSIX seconds \(\d+\.000\) or ISO 8601",
    ):
        read_track(path)


def test_missing_track_file(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match=r"GPS track .*nope\.gpx not found"):
        read_track(tmp_path / "nope.gpx")


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([("nan", "nan", "nan"), ("nan", "1", "")], "no usable point among 2 .2 have NaN"),
        ([(T0, 60.0, 25.0)], "has a single usable point"),
        ([(T0, 60.0, 25.0), (T0 + 1, "nan", 25.0)], "has a single usable point"),
        (
            [(T0, 60.0, 25.0), (T0 + 1, 95.0, 25.0)],
            r"has a single usable point of 2 \(1 with lat/lon out of range, the first point "
            r"2: lat 95.0, lon 25.0\)",
        ),
        (
            [(T0, 91.0, 25.0), (T0 + 1, 60.0, 181.0)],
            r"no usable point among 2 \(2 with lat/lon out of range, the first point 1: "
            r"lat 91.0, lon 25.0\)",
        ),
        ([(T0 + k, 60.0, 25.0) for k in range(5)], r"all 5 points are identical"),
        ([(T0, 60.0, 25.0), (T0, 60.1, 25.0)], "every usable point has the same time stamp"),
    ],
)
def test_degenerate_tracks(tmp_path: Path, rows: list[tuple[object, ...]], message: str) -> None:
    path = tmp_path / "d.csv"
    path.write_text("time,lat,lon\n" + "".join(f"{a},{b},{c}\n" for a, b, c in rows))
    with pytest.raises(GpsError, match=message):
        validate_track(read_track(path))


def test_validate_sorts_and_drops_repeated_times(tmp_path: Path) -> None:
    path = write_csv_track(
        tmp_path / "s.csv", [T0 + 2, T0, T0 + 1, T0 + 1], [3.0, 1.0, 2.0, 9.0], [0, 0, 0, 0]
    )
    track = validate_track(read_track(path))
    assert track.lat.tolist() == [1.0, 2.0, 3.0]


# CAMM -------------------------------------------------------------------------------------
def _camm5(lat: float, lon: float, alt: float) -> bytes:
    return struct.pack("<HH3d", 0, 5, lat, lon, alt)


def _camm6(gps_time: float, fix: int, lat: float, lon: float, alt: float) -> bytes:
    return struct.pack("<HHdi2d7f", 0, 6, gps_time, fix, lat, lon, alt, 1, 1, 0, 0, 0, 0)


def test_camm_packet_layouts_follow_the_spec() -> None:
    assert len(_camm5(1, 2, 3)) == 4 + 24
    assert len(_camm6(0, 3, 1, 2, 3)) == 4 + 56
    assert is_camm_packet(_camm5(1, 2, 3))
    assert not is_camm_packet(b"DEVC" + bytes(24))
    assert not is_camm_packet(_camm5(1, 2, 3)[:-1])


def test_camm_type6_time_is_gps_epoch_minus_leap_seconds() -> None:
    utc = T0
    gps_time = utc - GPS_EPOCH_POSIX + GPS_LEAP_SECONDS
    gyro = struct.pack("<HH3f", 0, 2, 0.1, 0.2, 0.3)  # not GPS: skipped
    fixes = camm_fixes_from_packets(
        [(0.5, _camm6(gps_time, 3, 52.1, 4.3, 7.0)), (0.6, gyro), (1.5, _camm6(0, 0, 0, 0, 0))]
    )
    assert len(fixes) == 2
    assert fixes[0].t_utc == pytest.approx(utc)
    assert (fixes[0].lat, fixes[0].lon, fixes[0].alt_m) == pytest.approx((52.1, 4.3, 7.0))
    assert fixes[0].has_fix
    assert not fixes[1].has_fix  # fix type 0: no fix


def _write_camm_mp4(path: Path, packets: list[bytes], *, creation: str | None) -> Path:
    """An MP4 with a CAMM metadata track: PyAV writes a data track as 'gpmd'; the sample
    entry is renamed to 'camm' (same size), which is what a CAMM camera writes. A gyro packet
    goes last: the muxer drops a data track's final sample."""
    import av

    packets = [*packets, struct.pack("<HH3f", 0, 2, 0.0, 0.0, 0.0)]

    with av.open(str(path), "w", format="mp4") as container:
        if creation:
            container.metadata["creation_time"] = creation
        video = container.add_stream("libx264", rate=10)
        video.width, video.height, video.pix_fmt = 64, 32, "yuv420p"
        data = container.add_data_stream("bin_data")
        for i, payload in enumerate(packets):
            frame = av.VideoFrame.from_ndarray(np.full((32, 64, 3), i * 10, np.uint8), "rgb24")
            frame.pts = i
            for packet in video.encode(frame):
                container.mux(packet)
            meta = av.Packet(payload)
            meta.stream = data
            meta.pts = meta.dts = i * 100
            meta.time_base = Fraction(1, 1000)
            container.mux(meta)
        for packet in video.encode():
            container.mux(packet)
    raw = path.read_bytes()
    assert b"gpmd" in raw
    path.write_bytes(raw.replace(b"gpmd", b"camm"))
    return path


def test_camm_track_in_mp4_type6(tmp_path: Path) -> None:
    start_gps = T0 - GPS_EPOCH_POSIX + GPS_LEAP_SECONDS
    packets = [_camm6(start_gps + 0.1 * i, 3, 60 + 1e-5 * i, 25.0, 3.0) for i in range(10)]
    path = _write_camm_mp4(tmp_path / "camm6.mp4", packets, creation=None)
    track = read_track(path)
    assert track.kind == "camm"
    assert len(track) == 10
    assert track.video_start_utc == pytest.approx(T0, abs=1e-3)
    np.testing.assert_allclose(track.lat, 60 + 1e-5 * np.arange(10))


def test_camm_track_in_mp4_type5_uses_creation_time(tmp_path: Path) -> None:
    packets = [_camm5(60 + 1e-5 * i, 25.0, 3.0) for i in range(10)]
    path = _write_camm_mp4(tmp_path / "camm5.mp4", packets, creation="2024-05-01T10:00:00Z")
    track = read_track(path, creation_time_utc=T0)
    np.testing.assert_allclose(track.t_s, T0 + 0.1 * np.arange(10), atol=1e-3)
    with pytest.raises(GpsError, match=r"only untimed GPS \(type 5\) and the video has no"):
        read_track(path)


def test_video_without_embedded_gps(synthetic_walk: object, tmp_path: Path) -> None:
    video = synthetic_walk.video  # type: ignore[attr-defined]
    assert read_embedded_track(video) is None
    with pytest.raises(GpsError, match=r"carries no GPS track \(neither GoPro GPMF nor CAMM"):
        read_track(video)


# GoPro GPMF -------------------------------------------------------------------------------
def test_gpsu_parsing() -> None:
    expected = datetime(2019, 11, 18, 23, 45, 14, 500000, tzinfo=UTC).timestamp()
    assert parse_gpsu(b"191118234514.500") == pytest.approx(expected)
    assert parse_gpsu(b"garbage") is None


def test_gopro_gpmf_sample_yields_its_track(shared_data: Path) -> None:
    path = shared_data / "gopro_gpmf" / "max-heromode.mp4"
    track = read_track(path)
    assert track.kind == "gpmf"
    assert len(track) > 150  # GPS5 at 18 Hz over ~10.5 s
    assert track.has_fix.all()
    # a pedestrian walk at 33.1267N 117.3273W (SOURCES.md)
    assert np.median(track.lat) == pytest.approx(33.1267, abs=1e-3)
    assert np.median(track.lon) == pytest.approx(-117.3273, abs=1e-3)
    duration = track.t_s[-1] - track.t_s[0]
    assert 9.0 < duration < 11.0
    walked = sum(
        haversine_m(track.lat[i], track.lon[i], track.lat[i + 1], track.lon[i + 1])
        for i in range(len(track) - 1)
    )
    assert 0.5 < walked / duration < 3.0  # walking pace
    # GPS time (GPSU) of the first frame: 2019-11-18 23:45 UTC
    assert track.video_start_utc is not None
    start = datetime.fromtimestamp(track.video_start_utc, tz=UTC)
    assert (start.year, start.month, start.day, start.hour) == (2019, 11, 18, 23)


# EXIF -------------------------------------------------------------------------------------
def test_exif_gps_of_gopro_max_panorama(shared_data: Path) -> None:
    track = read_track(shared_data / "pano360" / "gopro_max_GSAG2002.JPG")
    assert track.kind == "exif"
    assert track.lat[0] == pytest.approx(52.4434, abs=1e-4)
    assert track.lon[0] == pytest.approx(6.8899, abs=1e-4)
    assert datetime.fromtimestamp(track.t_s[0], tz=UTC) == datetime(
        2020, 5, 9, 12, 16, 30, tzinfo=UTC
    )


def test_photo_without_gps(shared_data: Path) -> None:
    with pytest.raises(GpsError, match="has no EXIF GPS position"):
        read_track(shared_data / "pano360" / "testRoom1_2kMono.jpg")


@pytest.mark.parametrize(
    ("name", "gpsbabel_format"),
    [
        ("walk.fit", "garmin_fit"),
        ("walk.FIT", "garmin_fit"),
        ("walk.tcx", "gtrnctr"),
        ("walk.kml", "kml"),
        ("walk.geojson", "geojson"),
    ],
)
def test_track_formats_not_read_say_how_to_convert(
    tmp_path: Path, name: str, gpsbabel_format: str
) -> None:
    """A watch's .fit or a .tcx/.kml/.geojson export was refused with the formats read but no
    way from the user's file to one of them (issue 17, newuser)."""
    path = tmp_path / name
    path.write_bytes(b"\x0e\x10")
    gpx = path.with_suffix(".gpx")
    with pytest.raises(
        GpsError,
        match=re.escape(
            f"GPS track {path}: {path.suffix.lower()} files are not read; convert it to GPX "
            f"first, e.g. `gpsbabel -i {gpsbabel_format} -f '{path}' -o gpx -F '{gpx}'`"
        ),
    ):
        read_track(path)


def test_an_nmea_log_saved_as_log_is_read(tmp_path: Path) -> None:
    """GPS loggers save raw NMEA as ``GPSLOG.LOG``; it was "unknown format '.log'" (issue 17,
    newuser). A .log without sentences names what it needs."""

    def sentence(body: str) -> str:
        checksum = 0
        for char in body:
            checksum ^= ord(char)
        return f"${body}*{checksum:02X}"

    lines = [
        sentence(f"GPRMC,10000{k}.00,A,6010.1400,N,02456.2800,E,2.7,0.0,010524,,,A")
        for k in range(3)
    ]
    path = tmp_path / "GPSLOG.LOG"
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    track = read_track(path)
    np.testing.assert_allclose(track.t_s, [T0, T0 + 1, T0 + 2])
    other = tmp_path / "camera.log"
    other.write_text("boot ok\n", encoding="ascii")
    with pytest.raises(GpsError, match=re.escape(f"GPS track {other}: a .log is read when")):
        read_track(other)


@pytest.mark.parametrize(
    ("header", "rows"),
    [
        ("Time (UTC),Latitude (deg),Longitude (deg),Altitude (m)",
         ["2024-05-01T10:00:00Z,60.0,25.0,12", "2024-05-01T10:00:01Z,60.0001,25.0,12"]),
        ("time [UTC];lat [°];lon [°]",
         ["2024-05-01 10:00:00;60,0;25,0", "2024-05-01 10:00:01;60,0001;25,0"]),
        ("timestamp(ms),lat,lng", [f"{T0_MS},60.0,25.0", f"{T0_MS + 1000},60.0001,25.0"]),
        ("time_ms,latitude,longitude", [f"{T0_MS},60.0,25.0", f"{T0_MS + 1000},60.0001,25.0"]),
        ("date,time,latitude,longitude",
         ["2024-05-01,10:00:00,60.0,25.0", "2024-05-01,10:00:01,60.0001,25.0"]),
        ("Date,Time,Lat,Lon",
         ["2024/05/01,10:00:00Z,60.0,25.0", "2024/5/1,10:00:01Z,60.0001,25.0"]),
        ("time,lat,lon", ["2024/05/01 10:00:00,60.0,25.0", "2024/05/01 10:00:01,60.0001,25.0"]),
        # GPSLogger for Android: `time` and `timestamp(ms)` both; `time` is read (a guard)
        ("time,lat,lon,elevation,accuracy,timestamp(ms)",
         [f"2024-05-01T10:00:00Z,60.0,25.0,1,5,{T0_MS}",
          f"2024-05-01T10:00:01Z,60.0001,25.0,1,5,{T0_MS + 1000}"]),
    ],
)  # fmt: skip
def test_csv_columns_as_loggers_label_them(tmp_path: Path, header: str, rows: list[str]) -> None:
    """Headers with units (``Latitude (deg)``), milliseconds named as such (``timestamp(ms)``),
    a date column beside the time of day, and ``2024/05/01`` dates were refused: "header ...
    lacks time, lat, lon" or "cannot read ... Invalid isoformat string" (issue 17, newuser2)."""
    path = tmp_path / "log.csv"
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    track = read_track(path)
    np.testing.assert_allclose(track.t_s, [T0, T0 + 1])
    np.testing.assert_allclose(track.lat, [60.0, 60.0001])
    np.testing.assert_allclose(track.lon, [25.0, 25.0])


def test_csv_milliseconds_without_a_unit_are_still_named(tmp_path: Path) -> None:
    """Only a header that says ms makes milliseconds; a bare ``time`` in ms is still an error."""
    path = tmp_path / "log.csv"
    path.write_text(f"time (s),lat,lon\n{T0_MS},60.0,25.0\n", encoding="utf-8")
    with pytest.raises(GpsError, match="it looks like milliseconds"):
        read_track(path)


def _sentence(body: str) -> str:
    checksum = 0
    for char in body:
        checksum ^= ord(char)
    return f"${body}*{checksum:02X}"


_RMC = [
    _sentence(f"GPRMC,10000{k}.00,A,6010.1400,N,02456.2800,E,2.7,0.0,010524,,,A") for k in range(3)
]


@pytest.mark.parametrize(
    ("name", "lines"),
    [
        # Android's GnssLogger / GPSTest: notes, then Raw, Fix and NMEA rows
        ("gnss_log_2024_05_01_10_00_00.txt",
         [*(f"# notes line {k} " + "x" * 90 for k in range(45)),
          *(f"Raw,{k},1,2,3" for k in range(20)),
          *(f"NMEA,{s},{1714557600000 + 1000 * k}" for k, s in enumerate(_RMC))]),
        ("stamped.nmea", [f"2024-05-01 10:00:0{k}.123 {s}" for k, s in enumerate(_RMC)]),
        ("GNSS_28.txt", [f"1714557600.{k};{s}" for k, s in enumerate(_RMC)]),
        ("ublox.nmea", [f"\x00\xb5b\x01\x07\x5c{s}" for s in _RMC]),
    ],
)  # fmt: skip
def test_nmea_sentences_behind_a_logger_s_prefix_are_read(
    tmp_path: Path, name: str, lines: list[str]
) -> None:
    """A sentence not at the start of its line was not read: Android's GnssLogger rows
    ``NMEA,$GPRMC,...,UnixTimeMillis``, time-stamped lines, binary UBX bytes of a u-blox
    capture in front ("has no GGA or RMC sentence", or the .txt read as a CSV) (issue 17,
    newuser2)."""
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="latin-1")
    track = read_track(path)
    assert track.kind == "nmea"
    np.testing.assert_allclose(track.t_s, [T0, T0 + 1, T0 + 2])
    np.testing.assert_allclose(track.lat, [60.169] * 3)


def test_an_nmea_sentence_cut_in_its_checksum_is_still_skipped(tmp_path: Path) -> None:
    """A guard for the reading within lines: a checksum cut to one digit fails, as before."""
    cut = _RMC[1][:-1]
    path = tmp_path / "log.nmea"
    path.write_text("\n".join([_RMC[0], f"NMEA,{cut}", _RMC[2]]) + "\n", encoding="ascii")
    np.testing.assert_allclose(read_track(path).t_s, [T0, T0 + 2])


def test_points_at_0_0_are_no_fix(tmp_path: Path) -> None:
    """Loggers and phones write lat 0, lon 0 before their first fix. Three such points at a
    track's start centred a new Tokyo city in the Mediterranean, and the walk was refused as
    "3478 km from the centre of the city" (issue 17, newuser2). They are left out as fixes
    without a position, and a track of nothing else says why."""
    from city360.geo import LocalProjection
    from city360.video_store.city_manifest import city_projection

    lat = [0.0, 0.0, 0.0, 35.7525, 35.75251, 35.75252]
    lon = [0.0, 0.0, 0.0, 139.672, 139.672, 139.672]
    path = write_gpx(tmp_path / "walk.gpx", T0 + np.arange(6.0), lat, lon)
    usable = validate_track(read_track(path))
    np.testing.assert_allclose(usable.t_s, T0 + np.arange(3.0, 6.0))
    from city360.city import CityDir

    projection = city_projection(CityDir(tmp_path / "city"), [read_track(path)])
    assert isinstance(projection, LocalProjection)
    assert abs(projection.origin_lat - 35.75251) < 1e-4
    zeros = write_gpx(tmp_path / "zeros.gpx", T0 + np.arange(3.0), [0.0] * 3, [0.0] * 3)
    with pytest.raises(GpsError) as caught:
        validate_track(read_track(zeros))
    assert str(caught.value) == (
        f"GPS track {zeros}: no usable point among 3 (3 at lat 0, lon 0, a receiver's "
        "stand-in for no fix (the first point 1)); check the logger"
    )


_ROWS = ["2024-05-01T10:00:00Z,60.0,25.0", "2024-05-01T10:00:01Z,60.0001,25.0"]


@pytest.mark.parametrize(
    "text",
    [
        "# exported by a tracking app 3.2\n# device: Pixel 7\ntime,lat,lon\n" + "\n".join(_ROWS),
        "sep=;\ntime;lat;lon\n" + "\n".join(r.replace(",", ";") for r in _ROWS),
        f"time,lat,lon\n{_ROWS[0]}\ntime,lat,lon\n{_ROWS[1]}",
    ],
)
def test_csv_notes_separator_lines_and_joined_logs_are_read(tmp_path: Path, text: str) -> None:
    """An exporter's ``#`` notes above the header, Excel's ``sep=;`` line, and two days' logs
    joined with ``cat`` (the header again halfway) were refused: "header '# exported ...'
    lacks time, lat, lon", "cannot read ['time', 'lat', 'lon']" (issue 17, newuser2)."""
    path = tmp_path / "log.csv"
    path.write_text(text + "\n", encoding="utf-8")
    track = read_track(path)
    np.testing.assert_allclose(track.t_s, [T0, T0 + 1])
    np.testing.assert_allclose(track.lat, [60.0, 60.0001])


@pytest.mark.parametrize("name", ["log.csv", "log.txt"])
def test_a_csv_with_a_column_of_sentences_stays_a_csv(tmp_path: Path, name: str) -> None:
    """A guard for the reading within lines: a CSV track whose rows carry the raw sentence in
    a column is read as the CSV it is, as before (the first version of the fix read it as
    NMEA)."""
    path = tmp_path / name
    rows = [f'{row},"{sentence}"' for row, sentence in zip(_ROWS, _RMC, strict=False)]
    path.write_text("time,lat,lon,nmea\n" + "\n".join(rows) + "\n", encoding="utf-8")
    track = read_track(path)
    assert track.kind == "csv"
    np.testing.assert_allclose(track.lat, [60.0, 60.0001])


_SENSORLOG_HEADER = (
    "loggingTime(txt),loggingSample(N),locationTimestamp_since1970(s),locationLatitude(WGS84),"
    "locationLongitude(WGS84),locationAltitude(m),locationSpeed(m/s),"
    "locationSpeedAccuracy(m/s),locationCourse(°),locationCourseAccuracy(°),"
    "locationVerticalAccuracy(m),locationHorizontalAccuracy(m),locationFloor(Z),"
    "locationHeadingTimestamp_since1970(s),accelerometerTimestamp_sinceReboot(s),"
    "accelerometerAccelerationX(G),accelerometerAccelerationY(G),accelerometerAccelerationZ(G)"
)


def test_a_sensorlog_csv_is_read(tmp_path: Path) -> None:
    """SensorLog (iOS) names its columns ``locationLatitude(WGS84)``,
    ``locationTimestamp_since1970(s)``, ...: refused, "header ... lacks time, lat, lon" (issue 17,
    newuser2). It writes a row per motion sample repeating the last fix, and rows with empty
    location cells before the first fix: one point per fix, the fix's own time."""
    from city360.geo import LocalProjection
    from city360.video_store.clean import clean_track

    rows = ["2024-05-01T11:59:59.950+02:00,0,,,,,,,,,,,,,1000.0,0.01,0.02,-1.0"]
    sample = 1
    for k in range(10):  # 10 fixes, 1 Hz, each repeated on 3 motion rows (30 Hz log shortened)
        for rep in range(3):
            log_s = T0 + k + rep / 3
            rows.append(
                f"2024-05-01T12:00:{k:02d}.{rep * 333:03d}+02:00,{sample},{T0 + k:.3f},"
                f"{60.0 + k * 1e-5:.6f},25.000000,12.5,1.1,0.3,0.0,5.0,3.0,4.7,,"
                f"{log_s:.3f},{1000.0 + sample / 30:.3f},0.01,0.02,-1.0"
            )
            sample += 1
    path = tmp_path / "2024-05-01_12_00_00_my_iOS_device.csv"
    path.write_text("\n".join([_SENSORLOG_HEADER, *rows]) + "\n", encoding="utf-8")
    usable = validate_track(read_track(path))
    np.testing.assert_allclose(usable.t_s, T0 + np.arange(10.0))
    np.testing.assert_allclose(usable.lat, 60.0 + np.arange(10) * 1e-5)
    smooth = clean_track(read_track(path), LocalProjection(60.0, 25.0))
    assert smooth.unusable == 1  # the row before the first fix; the repeats are no points


def test_a_sensorlog_row_with_a_negative_accuracy_is_a_point_without_a_fix(
    tmp_path: Path,
) -> None:
    """iOS writes ``locationHorizontalAccuracy(m)`` -1 for an invalid position, with whatever
    lat/lon it last had (issue 17, newuser3 left it): the column was not read and such a row
    was taken as a fix, and read as accuracy it was refused as a negative cell. It is a point
    without a fix; the other rows' accuracy is read."""
    rows = []
    for k in range(6):
        accuracy = "-1.000000" if k == 3 else "4.7"
        lat = 60.01 if k == 3 else 60.0 + k * 1e-5  # the invalid fix is 1 km off
        rows.append(
            f"2024-05-01T12:00:{k:02d}.000+02:00,{k},{T0 + k:.3f},{lat:.6f},25.000000,12.5,"
            f"1.1,0.3,0.0,5.0,3.0,{accuracy},,{T0 + k:.3f},{1000.0 + k:.3f},0.01,0.02,-1.0"
        )
    path = tmp_path / "2024-05-01_12_00_00_my_iOS_device.csv"
    path.write_text("\n".join([_SENSORLOG_HEADER, *rows]) + "\n", encoding="utf-8")
    track = read_track(path)
    assert track.has_fix.tolist() == [True, True, True, False, True, True]
    assert track.quality.accuracy_m is not None
    np.testing.assert_allclose(track.quality.accuracy_m[[0, 1, 2, 4, 5]], 4.7)
    usable = validate_track(track)
    np.testing.assert_allclose(usable.t_s, T0 + np.array([0.0, 1, 2, 4, 5]))
    assert usable.lat.max() < 60.001
