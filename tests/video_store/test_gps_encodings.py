"""GPS files in the encodings and separators devices and spreadsheets write (issue 17, newuser).

Before this, a GPX that declares ``encoding="ISO-8859-1"`` (as older Garmin and desktop tools
export it) or is UTF-16 with a BOM was refused as "not UTF-8 text", and a CSV saved by a
spreadsheet in a comma-decimal locale (``;`` between cells, ``60,1690`` degrees) or as
tab-separated text was refused as lacking its ``time, lat, lon`` columns.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from city360.errors import GpsError
from city360.video_store.gps import read_track

T0 = datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC).timestamp()
_LAT = (60.169, 60.16901, 60.16902)
_LON = (24.938, 24.93801, 24.93802)


def _gpx_text(encoding: str) -> str:
    points = "".join(
        f'<trkpt lat="{la}" lon="{lo}"><time>2024-05-01T10:00:0{k}Z</time></trkpt>\n'
        for k, (la, lo) in enumerate(zip(_LAT, _LON, strict=True))
    )
    return (
        f'<?xml version="1.0" encoding="{encoding}"?>\n'
        '<gpx version="1.1" creator="Stra\u00dfen-Logger" '
        'xmlns="http://www.topografix.com/GPX/1/1">\n'
        f"<trk><name>Caf\u00e9 \u2192 Stra\u00dfe</name><trkseg>\n{points}</trkseg></trk></gpx>\n"
    )


@pytest.mark.parametrize(
    ("declared", "codec", "bom"),
    [
        ("ISO-8859-1", "latin-1", b""),
        ("windows-1252", "cp1252", b""),
        ("UTF-16", "utf-16-le", b"\xff\xfe"),
        ("UTF-16", "utf-16-be", b"\xfe\xff"),
        ("UTF-8", "utf-8", b"\xef\xbb\xbf"),
    ],
)
def test_gpx_is_read_in_the_encoding_it_declares(
    tmp_path: Path, declared: str, codec: str, bom: bytes
) -> None:
    text = _gpx_text(declared)
    if codec in ("latin-1", "cp1252"):
        text = text.replace("\u2192", "-")  # not in those code pages
    path = tmp_path / "walk.gpx"
    path.write_bytes(bom + text.encode(codec))
    track = read_track(path)
    np.testing.assert_allclose(track.t_s, [T0, T0 + 1, T0 + 2])
    np.testing.assert_allclose(track.lat, _LAT)
    np.testing.assert_allclose(track.lon, _LON)


def test_gpx_in_an_unknown_encoding_is_named(tmp_path: Path) -> None:
    path = tmp_path / "walk.gpx"
    path.write_bytes(_gpx_text("x-martian").encode("ascii", errors="replace"))
    with pytest.raises(
        GpsError,
        match=re.escape(
            f"GPX {path} declares encoding 'x-martian', which Python cannot decode; "
            "export the track again as UTF-8"
        ),
    ):
        read_track(path)


def test_gpx_whose_bytes_are_not_its_declared_encoding_is_named(tmp_path: Path) -> None:
    path = tmp_path / "walk.gpx"
    path.write_bytes(_gpx_text("UTF-8").encode("latin-1", errors="replace").replace(b"-", b"\xff"))
    with pytest.raises(GpsError, match=re.escape(f"GPX {path} is not valid UTF-8 text")):
        read_track(path)


@pytest.mark.parametrize(
    ("separator", "decimal"),
    [(";", ","), (";", "."), ("\t", "."), ("\t", ",")],
)
def test_csv_with_semicolons_or_tabs_between_cells(
    tmp_path: Path, separator: str, decimal: str
) -> None:
    rows = [separator.join(("time", "lat", "lon", "alt", "hdop"))]
    for k, (la, lo) in enumerate(zip(_LAT, _LON, strict=True)):
        cells = (f"2024-05-01T10:00:0{k}Z", f"{la}", f"{lo}", "12.5", "1.2")
        rows.append(separator.join(cell.replace(".", decimal) for cell in cells))
    path = tmp_path / "walk.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    track = read_track(path)
    np.testing.assert_allclose(track.t_s, [T0, T0 + 1, T0 + 2])
    np.testing.assert_allclose(track.lat, _LAT)
    np.testing.assert_allclose(track.lon, _LON)
    np.testing.assert_allclose(track.alt_m, [12.5] * 3)
    assert track.quality.hdop is not None
    np.testing.assert_allclose(track.quality.hdop, [1.2] * 3)


def test_comma_separated_csv_still_reads_a_decimal_comma_as_an_error(tmp_path: Path) -> None:
    """With ``,`` between cells a decimal comma cannot be told from a cell break: the row is
    named, not guessed."""
    path = tmp_path / "walk.csv"
    path.write_text('time,lat,lon\n2024-05-01T10:00:00Z,"60,169","24,938"\n', encoding="utf-8")
    with pytest.raises(GpsError, match=re.escape(f"CSV {path} line 2: cannot read")):
        read_track(path)


def test_gpx_points_without_time_are_named_when_left_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A GPX edited in a route planner mixes timed fixes with added points without ``<time>``;
    those were dropped without a word."""
    text = _gpx_text("UTF-8").replace("<time>2024-05-01T10:00:01Z</time>", "")
    path = tmp_path / "walk.gpx"
    path.write_text(text, encoding="utf-8")
    with caplog.at_level("WARNING", logger="city360.video_store.gps.gpx"):
        track = read_track(path)
    assert np.isnan(track.t_s).tolist() == [False, True, False]
    assert caplog.messages == [
        f"GPX {path}: 1 of 3 points have no <time> and are left out (the first is point 2)"
    ]
