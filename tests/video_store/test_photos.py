"""Photo sequences (interval-shot geotagged 360° JPEGs) ingest like a video (issue 17)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from city360.city import CityDir
from city360.cli import app
from city360.geo import LocalProjection
from city360.video_store.ingest import IngestOptions
from city360.video_store.photos import ingest_photos
from tests.fixtures.videos import CREATION, ORIGIN, _far_scene, render_frame, write_gpx


def _dms(value: float) -> tuple[float, float, float]:
    degrees = int(value)
    minutes = int((value - degrees) * 60)
    return (float(degrees), float(minutes), (value - degrees - minutes / 60) * 3600)


def write_photo(
    path: Path, image: np.ndarray, t_utc: float, lat: float | None, lon: float | None
) -> Path:
    """A JPEG with EXIF GPS position (when given) and GPS time, as a 360° camera writes it."""
    from datetime import UTC, datetime

    from PIL import Image

    stamp = datetime.fromtimestamp(t_utc, tz=UTC)
    exif = Image.Exif()
    gps: dict[int, object] = {
        29: stamp.strftime("%Y:%m:%d"),
        7: (float(stamp.hour), float(stamp.minute), stamp.second + stamp.microsecond / 1e6),
    }
    if lat is not None and lon is not None:
        gps.update({1: "N", 2: _dms(lat), 3: "E", 4: _dms(lon)})
    exif[0x8825] = gps
    Image.fromarray(image).save(path, quality=92, exif=exif.tobytes())
    return path


def photo_walk(
    folder: Path, *, count: int = 30, step_m: float = 2.0, gap_after: int | None = None,
    positions: bool = True,
) -> tuple[list[Path], np.ndarray, np.ndarray]:  # fmt: skip
    """``count`` photos every ``step_m`` north along a street (a 40 m jump after photo
    ``gap_after``), one a second; returns the photos and their true x/y."""
    folder.mkdir(parents=True, exist_ok=True)
    projection = LocalProjection(*ORIGIN)
    y = np.arange(count) * step_m
    if gap_after is not None:
        y[gap_after + 1 :] += 40.0
    x = np.zeros(count)
    lat, lon = projection.to_latlon(x, y)
    scene = _far_scene(256, 128, 0)
    ground = _far_scene(256, 64, 2)
    photos = [
        write_photo(
            folder / f"IMG_{k:04d}.jpg",
            render_frame(scene, ground, 0.0, float(y[k])),
            CREATION.timestamp() + k,
            float(lat[k]) if positions else None,
            float(lon[k]) if positions else None,
        )
        for k in range(count)
    ]
    return photos, x, y


def test_photo_folder_ingests_into_a_trajectory(tmp_path: Path) -> None:
    photos, _x, y = photo_walk(tmp_path / "seq")
    results = ingest_photos(
        "seq", photos[::-1], None, tmp_path / "city", projection=LocalProjection(*ORIGIN)
    )
    assert [r.trajectory_id for r in results] == ["seq"]
    city = CityDir(tmp_path / "city")
    poses = city.read_poses("seq")
    assert len(poses) == 30
    assert np.allclose(poses.y_m, y, atol=0.05)  # sorted by time, not by the order given
    assert np.allclose(np.mod(poses.heading_deg + 180, 360) - 180, 0.0, atol=1.0)
    from city360.video_store import FrameStore

    with FrameStore(city.frames_path("seq")) as store:
        assert (len(store), store.width, store.height) == (30, 256, 128)


def test_gap_splits_the_sequence(tmp_path: Path) -> None:
    photos, _, _ = photo_walk(tmp_path / "gappy", gap_after=14)
    results = ingest_photos(
        "gappy", photos, None, tmp_path / "city", projection=LocalProjection(*ORIGIN)
    )
    assert [(r.trajectory_id, r.frame_count) for r in results] == [
        ("gappy", 15),
        ("gappy_2", 15),
    ]


def test_photos_placed_by_a_gpx_track(tmp_path: Path) -> None:
    photos, x, y = photo_walk(tmp_path / "untagged", positions=False)
    projection = LocalProjection(*ORIGIN)
    lat, lon = projection.to_latlon(x, y)
    gpx = write_gpx(tmp_path / "untagged.gpx", CREATION.timestamp() + np.arange(30.0), lat, lon)
    results = ingest_photos("untagged", photos, gpx, tmp_path / "city", projection=projection)
    poses = CityDir(tmp_path / "city").read_poses("untagged")
    assert results[0].frame_count == len(poses) >= 25
    assert float(np.abs(poses.x_m).max()) < 1.5


def test_cli_ingests_a_photo_folder(tmp_path: Path) -> None:
    photo_walk(tmp_path / "street")
    result = CliRunner().invoke(
        app, ["ingest", str(tmp_path / "street"), "--out", str(tmp_path / "city")]
    )
    assert result.exit_code == 0, result.output
    assert CityDir(tmp_path / "city").trajectory_ids() == ["street"]


def test_cli_single_photo_message(shared_data: Path, tmp_path: Path) -> None:
    photo = shared_data / "pano360" / "gopro_max_GSAG2002.JPG"
    env = {**os.environ, "CITY360_NO_PROGRESS": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "city360.cli", "ingest", str(photo), "--out", str(tmp_path / "c")],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert "a trajectory needs several photos" in " ".join(run.stderr.split())


@pytest.mark.parametrize("suffix", [".gpx", ".csv"])
def test_cli_track_passed_as_video_is_used_as_gps(tmp_path: Path, suffix: str) -> None:
    """A lone track among the inputs, beside a photo folder, becomes its --gps."""
    _photos, x, y = photo_walk(tmp_path / "walk", positions=False)
    lat, lon = LocalProjection(*ORIGIN).to_latlon(x, y)
    if suffix == ".gpx":
        track = write_gpx(tmp_path / "walk.gpx", CREATION.timestamp() + np.arange(30.0), lat, lon)
    else:
        from tests.fixtures.videos import write_csv_track

        track = write_csv_track(
            tmp_path / "walk.csv", CREATION.timestamp() + np.arange(30.0), lat, lon
        )
    result = CliRunner().invoke(
        app, ["ingest", str(tmp_path / "walk"), str(track), "--out", str(tmp_path / "city")]
    )
    assert result.exit_code == 0, result.output
    assert "used as --gps" in result.output


def _tagged_photo(
    path: Path,
    *,
    gps: dict[int, object] | None = None,
    exif_ifd: dict[int, object] | None = None,
    size: tuple[int, int] = (64, 32),
) -> Path:
    """A small JPEG with the given GPS and Exif IFD tags (as Pillow numbers them)."""
    from PIL import Image

    exif = Image.Exif()
    if gps:
        exif[0x8825] = gps
    if exif_ifd:
        exif[0x8769] = exif_ifd
    Image.new("RGB", size).save(path, exif=exif.tobytes())
    return path


def _local_photo_walk(folder: Path, *, zone: str | None) -> tuple[list[Path], Path]:
    """30 photos without GPS, stamped in Tokyo local time (DateTimeOriginal, with
    OffsetTimeOriginal when ``zone``), as phones and 360 cameras write them; and the walk's
    GPX in UTC, as loggers write it."""
    from datetime import timedelta, timezone

    photos, x, y = photo_walk(folder, positions=False)
    tokyo = timezone(timedelta(hours=9))
    for k, photo in enumerate(photos):
        from PIL import Image

        with Image.open(photo) as image:
            pixels = np.asarray(image)
        local = CREATION.astimezone(tokyo) + timedelta(seconds=k)
        tags: dict[int, object] = {36867: local.strftime("%Y:%m:%d %H:%M:%S")}
        if zone is not None:
            tags[36881] = zone
        exif = Image.Exif()
        exif[0x8769] = tags
        Image.fromarray(pixels).save(photo, quality=92, exif=exif.tobytes())
    lat, lon = LocalProjection(*ORIGIN).to_latlon(x, y)
    gpx = write_gpx(folder / "walk.gpx", CREATION.timestamp() + np.arange(30.0), lat, lon)
    return photos, gpx


def test_a_photo_s_local_time_is_read_with_its_offset_tag(tmp_path: Path) -> None:
    """A phone (and recent 360 cameras) writes DateTimeOriginal in local time and the zone in
    OffsetTimeOriginal. It was read as UTC, so Tokyo photos were 9 h off their GPX and refused:
    "taken outside GPS track's time span (30 of 30 photos)" (issue 17, newuser2)."""
    photos, gpx = _local_photo_walk(tmp_path / "street", zone="+09:00")
    projection = LocalProjection(*ORIGIN)
    results = ingest_photos("street", photos, gpx, tmp_path / "city", projection=projection)
    poses = CityDir(tmp_path / "city").read_poses("street")
    assert results[0].frame_count == len(poses) >= 25
    assert float(np.abs(poses.x_m).max()) < 1.5


def test_photos_hours_off_their_track_name_the_zone_offset(tmp_path: Path) -> None:
    """A camera that writes local time and no offset tag: the error says the hours and the
    --offset that fixes them, as it does for a video (issue 17, newuser2)."""
    from city360.errors import GpsError

    photos, gpx = _local_photo_walk(tmp_path / "street", zone=None)
    projection = LocalProjection(*ORIGIN)
    with pytest.raises(GpsError) as caught:
        ingest_photos("street", photos, gpx, tmp_path / "city", projection=projection)
    assert "The track runs 9 h 00 min before the video" in str(caught.value)
    assert str(caught.value).endswith("pass --offset -32400")
    results = ingest_photos(
        "street", photos, gpx, tmp_path / "city", projection=projection,
        options=IngestOptions(offset=-32400.0),
    )  # fmt: skip
    assert results[0].frame_count >= 25


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        ({36867: "2024:05:01 19:00:00", 36881: "+09:00"}, "2024-05-01T10:00:00+00:00"),
        ({36867: "2024:05:01 04:30:00", 36881: "-05:30"}, "2024-05-01T10:00:00+00:00"),
        ({36867: "2024:05:01 10:00:00", 36881: "   :  "}, "2024-05-01T10:00:00+00:00"),
        ({36867: "2024-05-01 10:00:00"}, "2024-05-01T10:00:00+00:00"),
        ({36867: "2024:05:01 10:00:00", 37521: "25"}, "2024-05-01T10:00:00.250000+00:00"),
    ],
)
def test_photo_camera_times_as_devices_write_them(
    tmp_path: Path, tags: dict[int, object], expected: str
) -> None:
    from datetime import UTC, datetime

    from city360.video_store.gps.exif import read_exif_fix

    photo = _tagged_photo(tmp_path / "p.jpg", exif_ifd=tags)
    t_s = read_exif_fix(photo, require_position=False)[0]
    assert datetime.fromtimestamp(t_s, tz=UTC).isoformat() == expected


@pytest.mark.parametrize("date", ["2024:05:01", "2024-05-01", "2024/05/01", "2024:05:01\x00"])
def test_gps_date_stamps_as_geotaggers_write_them(tmp_path: Path, date: str) -> None:
    """GPSDateStamp "2024-05-01" (some phone apps and geotaggers) ended ingest in a traceback:
    "ValueError: time data '2024-05-01' does not match format '%Y:%m:%d'" (issue 17,
    newuser2)."""
    from city360.video_store.gps.exif import read_exif_fix

    gps = {29: date, 7: (10.0, 0.0, 0.0), 1: "N", 2: (53.0, 33.0, 0.0), 3: "E", 4: (9.0, 57.0, 0.0)}
    t_s, lat, lon, _ = read_exif_fix(_tagged_photo(tmp_path / "p.jpg", gps=gps))
    assert t_s == 1714557600.0
    assert (round(lat, 2), round(lon, 2)) == (53.55, 9.95)


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        (
            {36867: "    :  :     :  :  "},
            "photo {p} has no time stamp (GPSDateStamp+GPSTimeStamp or DateTimeOriginal); "
            "re-tag the photo",
        ),
        (
            {36867: "0000:00:00 00:00:00"},
            "photo {p} has no time stamp (GPSDateStamp+GPSTimeStamp or DateTimeOriginal); "
            "re-tag the photo",
        ),
        (
            {36867: "yesterday 10:00"},
            "photo {p}: EXIF DateTimeOriginal is 'yesterday 10:00', not a date YYYY:MM:DD; "
            "re-tag the photo",
        ),
        (
            {36867: "2024:05:01 25:00:00"},
            "photo {p}: EXIF DateTimeOriginal is '2024:05:01 25:00:00', not a time "
            "YYYY:MM:DD HH:MM:SS; re-tag the photo",
        ),
        (
            {36867: "2024:05:01 10:00:00", 36881: "JST"},
            "photo {p}: EXIF OffsetTimeOriginal is 'JST', not an offset like +09:00; "
            "re-tag the photo",
        ),
    ],
)
def test_a_photo_s_unknown_or_malformed_time_is_named(
    tmp_path: Path, tags: dict[int, object], message: str
) -> None:
    """EXIF writes an unknown time as blanks; that, and a malformed stamp, ended ingest in a
    traceback ("ValueError: time data ':  :     :  :' does not match format") (issue 17,
    newuser2)."""
    from city360.errors import GpsError
    from city360.video_store.gps.exif import read_exif_fix

    photo = _tagged_photo(tmp_path / "p.jpg", exif_ifd=tags)
    with pytest.raises(GpsError) as caught:
        read_exif_fix(photo, require_position=False)
    assert str(caught.value) == message.format(p=photo)


def test_photos_without_gps_or_time_among_a_walk_s_are_left_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Three shots without a GPS fix (the camera lost it under a bridge) and one without a time
    among 30 refused the whole walk: "photo ... has no EXIF GPS position" (issue 17,
    newuser2). They are left out, with one warning."""
    photos, _x, _y = photo_walk(tmp_path / "street")
    from PIL import Image

    for k in (5, 11, 12):
        with Image.open(photos[k]) as image:
            pixels = np.asarray(image)
        Image.fromarray(pixels).save(photos[k])  # the EXIF dropped
    _tagged_photo(photos[20], gps={1: "N", 2: (53.0, 33.0, 0.0), 3: "E", 4: (9.0, 57.0, 0.0)},
                  size=(256, 128))  # fmt: skip
    with caplog.at_level("WARNING", logger="city360.video_store.gps.exif"):
        results = ingest_photos(
            "street", photos, None, tmp_path / "city", projection=LocalProjection(*ORIGIN)
        )
    assert [r.frame_count for r in results] == [26]
    assert caplog.messages == [
        f"4 of 30 photos left out; the first: photo {photos[5]} has no EXIF GPS position; "
        "geotag it or pass --gps with a track"
    ]


def test_a_flat_photo_among_a_walk_s_panoramas_is_left_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A flat shot from the same camera (or a cut JPEG) among the panoramas refused the walk:
    "photo ... is 256x200, not a 2:1 equirectangular 360° photo" (issue 17, newuser2)."""
    photos, _x, _y = photo_walk(tmp_path / "street")
    flat = photos[7]
    from PIL import Image

    with Image.open(flat) as image:
        exif = image.getexif().tobytes()
    Image.new("RGB", (256, 200)).save(flat, exif=exif)
    photos[9].write_bytes(photos[9].read_bytes()[:300])
    with caplog.at_level("WARNING", logger="city360.video_store.photos"):
        results = ingest_photos(
            "street", photos, None, tmp_path / "city", projection=LocalProjection(*ORIGIN)
        )
    assert [r.frame_count for r in results] == [28]
    assert caplog.messages == [
        f"2 of 30 photos left out; the first: photo {flat} is 256x200, not a 2:1 "
        "equirectangular 360° photo, and its XMP does not place it in a full panorama "
        "(GPano:FullPanoWidthPixels, CroppedArea...); export it as an equirectangular panorama"
    ]


def _gpano_xmp(
    full: tuple[int, int], left: int, top: int, crop: tuple[int, int], *, attributes: bool
) -> bytes:
    """Photo Sphere XMP as Google Camera (attributes) or exiftool (elements) writes it."""
    fields = {
        "ProjectionType": "equirectangular",
        "FullPanoWidthPixels": full[0],
        "FullPanoHeightPixels": full[1],
        "CroppedAreaLeftPixels": left,
        "CroppedAreaTopPixels": top,
        "CroppedAreaImageWidthPixels": crop[0],
        "CroppedAreaImageHeightPixels": crop[1],
    }
    if attributes:
        body = " ".join(f'GPano:{k}="{v}"' for k, v in fields.items())
        description = f'<rdf:Description rdf:about="" {body}/>'
    else:
        body = "".join(f"<GPano:{k}>{v}</GPano:{k}>" for k, v in fields.items())
        description = f'<rdf:Description rdf:about="">{body}</rdf:Description>'
    return (
        '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF '
        'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
        'xmlns:GPano="http://ns.google.com/photos/1.0/panorama/">'
        f"{description}</rdf:RDF></x:xmpmeta>"
    ).encode()


@pytest.mark.parametrize("attributes", [True, False])
def test_a_photo_sphere_s_partial_panorama_is_placed_in_its_full_sphere(
    tmp_path: Path, attributes: bool
) -> None:
    """A phone's photo sphere covers a band around the horizon (256x80 of a 256x128 sphere,
    starting at row 24) and says so in its GPano XMP; every photo was refused as "not a 2:1
    equirectangular 360° photo" (issue 17, newuser2). Each is now placed in its full sphere,
    black above and below; the second photo's band wraps past the right edge."""
    from PIL import Image

    from city360.video_store import FrameStore

    photos, _x, _y = photo_walk(tmp_path / "sphere", count=10)
    for k, photo in enumerate(photos):
        with Image.open(photo) as image:
            pixels, exif = np.asarray(image), image.getexif().tobytes()
        left = 64 if k == 1 else 0
        band = np.roll(pixels, -left, axis=1)[24:104]
        xmp = _gpano_xmp((256, 128), left, 24, (256, 80), attributes=attributes)
        Image.fromarray(band).save(photo, quality=92, exif=exif, xmp=xmp)
    ingest_photos("sphere", photos, None, tmp_path / "city", projection=LocalProjection(*ORIGIN))
    with FrameStore(CityDir(tmp_path / "city").frames_path("sphere")) as store:
        assert (len(store), store.width, store.height) == (10, 256, 128)
        frame = store.get(1).astype(np.int32)
    with Image.open(photos[1]) as image:
        band = np.roll(np.asarray(image), 64, axis=1).astype(np.int32)
    assert float(np.abs(frame[:20]).mean()) < 4.0  # black where the sphere was not shot
    assert float(np.abs(frame[104:]).mean()) < 4.0
    assert float(np.abs(frame[28:100] - band[4:76]).mean()) < 8.0  # the band in its place


def test_a_gpano_crop_that_does_not_fit_the_photo_is_not_used(tmp_path: Path) -> None:
    from PIL import Image

    from city360.video_store.gpano import read_pano_crop

    path = tmp_path / "p.jpg"
    Image.new("RGB", (256, 80)).save(
        path, xmp=_gpano_xmp((256, 100), 0, 24, (256, 80), attributes=True)
    )  # a full panorama that is not 2:1
    assert read_pano_crop(path, 256, 80) is None
    Image.new("RGB", (256, 80)).save(
        path, xmp=_gpano_xmp((512, 256), 0, 48, (512, 100), attributes=True)
    )  # a crop of another shape than the photo
    assert read_pano_crop(path, 256, 80) is None
    Image.new("RGB", (256, 80)).save(
        path, xmp=_gpano_xmp((512, 256), 0, 48, (512, 160), attributes=False)
    )  # resized after tagging: scaled to the photo
    crop = read_pano_crop(path, 256, 80)
    assert crop is not None
    assert (crop.full_width, crop.full_height, crop.left, crop.top) == (256, 128, 0, 24)


def test_untagged_photos_name_the_track_beside_them(tmp_path: Path) -> None:
    """Photos without EXIF GPS in a folder that holds their track under another name
    (``20240501_track.gpx``): the error said "geotag it or pass --gps with a track" and nothing
    of the track a few bytes away (issue 17, newuser2). It now names it and both fixes."""
    from city360.errors import GpsError

    photos, x, y = photo_walk(tmp_path / "street", positions=False)
    lat, lon = LocalProjection(*ORIGIN).to_latlon(x, y)
    track = write_gpx(
        tmp_path / "street" / "20240501_track.gpx", CREATION.timestamp() + np.arange(30.0), lat, lon
    )
    city = tmp_path / "city"
    result = CliRunner().invoke(app, ["ingest", str(tmp_path / "street"), "--out", str(city)])
    assert isinstance(result.exception, GpsError)
    assert str(result.exception) == (
        f"photo {photos[0]} has no EXIF GPS position; geotag it or pass --gps with a track. A "
        f"track lies beside the photos (20240501_track.gpx): pass --gps {track}, or name it "
        "street.gpx (a track in a photo folder pairs when named like it)"
    )
    result = CliRunner().invoke(
        app, ["ingest", str(tmp_path / "street"), "--gps", str(track), "--out", str(city)]
    )
    assert result.exit_code == 0, result.output


def test_a_photo_at_0_0_has_no_position(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A camera without a fix writes GPSLatitude 0/1 0/1 0/1 and GPSLongitude the same; three
    such among a walk's photos refused it as "3612 km from the centre of the city" (issue 17,
    newuser2). Such a photo has no position: left out like an untagged one, and named for
    its 0, 0, not as "has no EXIF GPS position" (newuser3)."""
    from city360.errors import GpsError
    from city360.video_store.gps.exif import read_exif_fix

    photos, _x, _y = photo_walk(tmp_path / "street")
    zero = {1: "N", 2: (0.0, 0.0, 0.0), 3: "E", 4: (0.0, 0.0, 0.0)}
    from PIL import Image

    for k in (3, 4, 5):
        with Image.open(photos[k]) as image:
            exif = image.getexif()
            pixels = np.asarray(image)
        exif[0x8825] = {**exif.get_ifd(0x8825), **zero}
        Image.fromarray(pixels).save(photos[k], exif=exif.tobytes())
    with caplog.at_level("WARNING", logger="city360.video_store.gps.exif"):
        results = ingest_photos(
            "street", photos, None, tmp_path / "city", projection=LocalProjection(*ORIGIN)
        )
    assert [r.frame_count for r in results] == [27]
    assert caplog.messages == [
        f"3 of 30 photos left out; the first: photo {photos[3]} has the EXIF GPS position "
        "lat 0, lon 0, a camera's stand-in for no fix; geotag it or pass --gps with a track"
    ]
    with pytest.raises(GpsError, match="has the EXIF GPS position lat 0, lon 0"):
        read_exif_fix(photos[3])
    assert not np.isnan(read_exif_fix(photos[3], require_position=False)[0])


def test_photos_after_their_track_ends_are_left_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The logger stopped 10 s before the camera: the whole walk was refused, "taken outside
    GPS track's time span (9 of 30 photos)" (issue 17, newuser2), where a video's uncovered
    tail is dropped with a warning. The photos the track covers now ingest; with fewer than two
    inside, it is still the error."""
    from city360.errors import GpsError

    photos, x, y = photo_walk(tmp_path / "street", positions=False)
    projection = LocalProjection(*ORIGIN)
    lat, lon = projection.to_latlon(x[:20], y[:20])
    gpx = write_gpx(tmp_path / "short.gpx", CREATION.timestamp() + np.arange(20.0), lat, lon)
    with caplog.at_level("WARNING", logger="city360.video_store.photos"):
        results = ingest_photos("street", photos, gpx, tmp_path / "city", projection=projection)
    assert [r.frame_count for r in results] == [20]  # 0-20 s inside; 20 s stands at 19 s
    assert caplog.messages == [
        f"photo {photos[21]} was taken outside GPS track {gpx}'s time span (9 of 30 photos); "
        "pair the right track, or pass --offset SECONDS if the camera clock is wrong; those "
        "photos are left out"
    ]
    early = write_gpx(
        tmp_path / "early.gpx",
        CREATION.timestamp() - 100 + np.arange(100.0),
        *projection.to_latlon(np.zeros(100), np.zeros(100) + np.arange(100.0) * 0.5),
    )
    with pytest.raises(GpsError, match=r"\(29 of 30 photos\)"):
        ingest_photos("other", photos, early, tmp_path / "city", projection=projection)


def test_a_split_part_does_not_take_another_walk_s_id(tmp_path: Path) -> None:
    """``gappy`` split at a gap makes ``gappy_2``, the id of a folder named ``gappy_2``. Ingested
    into a city that held it, ``--overwrite`` replaced the other walk without a word (and
    without it, "already exists; pass --overwrite"); the other way round, ``gappy_2`` replaced
    part 2 of ``gappy`` (issue 17, newuser3)."""
    from city360.errors import OutputError

    gappy, _, _ = photo_walk(tmp_path / "gappy", count=20, gap_after=9)
    other, _, _ = photo_walk(tmp_path / "gappy_2", count=10)
    projection = LocalProjection(*ORIGIN)
    replace = IngestOptions(overwrite=True, pyramid=False)
    first = tmp_path / "first"
    ingest_photos("gappy_2", other, None, first, projection=projection)
    for options in (IngestOptions(pyramid=False), replace):
        with pytest.raises(OutputError, match="holds gappy_2, and part 2 of ") as raised:
            ingest_photos("gappy", gappy, None, first, projection=projection, options=options)
        assert "rename one of the two" in str(raised.value)
    assert CityDir(first).read_trajectory_meta("gappy_2").source_video == str(other[0].parent)
    second = tmp_path / "second"
    ingest_photos("gappy", gappy, None, second, projection=projection)
    with pytest.raises(OutputError, match="holds part 2 of gappy, and "):
        ingest_photos("gappy_2", other, None, second, projection=projection, options=replace)
    assert CityDir(second).read_trajectory_meta("gappy_2").part == 2
    # a re-ingest of the split walk itself still replaces its own parts
    again = ingest_photos("gappy", gappy, None, second, projection=projection, options=replace)
    assert [r.trajectory_id for r in again] == ["gappy", "gappy_2"]


def test_a_split_part_does_not_take_the_id_of_another_input(tmp_path: Path) -> None:
    """``city360 ingest gappy gappy_2``: part 2 of ``gappy`` and the folder ``gappy_2`` make one
    id; the second written was refused "already exists" (in parallel, whichever came second).
    Now the split walk is refused, naming the other input, and ``gappy_2`` ingests."""
    photo_walk(tmp_path / "gappy", count=20, gap_after=9)
    photo_walk(tmp_path / "gappy_2", count=10)
    city = tmp_path / "city"
    result = CliRunner().invoke(
        app, ["ingest", str(tmp_path / "gappy"), str(tmp_path / "gappy_2"), "--out", str(city)]
    )
    assert result.exit_code == 1, result.output
    flat = " ".join(result.output.split())
    assert "part 2 of " in flat
    assert "would be trajectory 'gappy_2', the id of gappy_2 in this batch" in flat
    assert CityDir(city).trajectory_ids() == ["gappy_2"]
    assert CityDir(city).read_trajectory_meta("gappy_2").part is None
