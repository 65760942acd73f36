"""Native single-stream 360° layouts (dual fisheye, YouTube EAC, 3x2 cube map) converted to
equirect on ingest, and how ingest picks the layout (issue 17)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from typer.testing import CliRunner

from city360.city import CityDir
from city360.cli import app
from city360.errors import ConfigError, VideoError
from city360.geo import LocalProjection
from city360.video_store.cubemap import cube_to_equirect
from city360.video_store.decode import iter_frames, probe_video
from city360.video_store.dual_fisheye import DualFisheye, dual_fisheye_to_equirect
from city360.video_store.frame_store import FrameStore
from city360.video_store.ingest import IngestOptions, ingest_video
from city360.video_store.layouts import parse_layout
from tests.fixtures.gopro360 import direction_pattern
from tests.fixtures.layouts import equirect_to_cube, equirect_to_dual_fisheye
from tests.fixtures.videos import CREATION, write_equirect_video, write_gpx
from tests.video_store.test_gopro_max import _close, _direction_colours, _psnr, _smooth_scene

ORIGIN = (52.5200, 13.4050)


def _fisheye_pair(scene: npt.NDArray[np.uint8], fov_deg: float = 195.0) -> npt.NDArray[np.uint8]:
    return equirect_to_dual_fisheye(scene, 1024, fov_deg=fov_deg)


@pytest.mark.parametrize("layout", ["eac", "cubemap"])
def test_cube_maps_convert_back_to_the_equirect_they_show(layout: str) -> None:
    scene = _smooth_scene(1024)
    frame = equirect_to_cube(scene, layout, 768)  # type: ignore[arg-type]
    assert frame.shape == (512, 768, 3)
    equirect = cube_to_equirect(frame, layout, width=1024)  # type: ignore[arg-type]
    assert equirect.shape == (512, 1024, 3)
    assert _psnr(equirect[40:-40, 8:-8], scene[40:-40, 8:-8]) >= 45.0
    pattern = direction_pattern(1024)
    converted = cube_to_equirect(equirect_to_cube(pattern, layout, 768), layout, width=1024)  # type: ignore[arg-type]
    assert _close(_direction_colours(converted), 4)


def test_a_cube_map_read_in_the_other_face_order_does_not_match() -> None:
    """The PSNR threshold above fails on a wrong face order or rotation: an EAC frame read as
    the plain cube map (other order, no bottom-row rotation) or the other way round."""
    scene = _smooth_scene(1024, seed=4)
    for made, read in (("eac", "cubemap"), ("cubemap", "eac")):
        wrong = cube_to_equirect(equirect_to_cube(scene, made, 768), read, width=1024)  # type: ignore[arg-type]
        assert _psnr(wrong[40:-40, 8:-8], scene[40:-40, 8:-8]) < 20.0


def test_dual_fisheye_converts_back_to_the_equirect_it_shows() -> None:
    scene = _smooth_scene(1024)
    frame = _fisheye_pair(scene)
    assert frame.shape == (512, 1024, 3)
    lenses = DualFisheye()
    equirect = dual_fisheye_to_equirect(frame, lenses, width=1024)
    assert _psnr(equirect[40:-40, 8:-8], scene[40:-40, 8:-8]) >= 45.0
    pattern = direction_pattern(1024)
    converted = dual_fisheye_to_equirect(_fisheye_pair(pattern), lenses, width=1024)
    assert _close(_direction_colours(converted), 4)
    # the lenses swapped (back lens on the left) put the back in front
    swapped = np.concatenate([frame[:, 512:], frame[:, :512]], axis=1)
    wrong = dual_fisheye_to_equirect(swapped, lenses, width=1024)
    assert _psnr(wrong[40:-40, 8:-8], scene[40:-40, 8:-8]) < 20.0
    # each circle upside down (a lens model with rows growing upwards)
    flipped = np.ascontiguousarray(frame[::-1, :])
    assert _psnr(dual_fisheye_to_equirect(flipped, lenses, width=1024)[40:-40, 8:-8],
                 scene[40:-40, 8:-8]) < 20.0  # fmt: skip


def test_dual_fisheye_sides_are_cross_faded_and_the_fov_matters() -> None:
    """The camera's sides (longitude +-90°) are seen by both lenses near their rims; they
    are blended there, and a lens model with the wrong field of view puts them elsewhere."""
    scene = _smooth_scene(1024, seed=5)
    frame = _fisheye_pair(scene, fov_deg=200.0)
    sides = np.s_[150:362, 230:282]  # around longitude -90° (x = 256)
    right = DualFisheye(fov_deg=200.0)
    assert _psnr(dual_fisheye_to_equirect(frame, right, width=1024)[sides], scene[sides]) >= 45.0
    wrong = DualFisheye(fov_deg=195.0)  # 5° off: the band lands ~2° from where it should
    assert _psnr(dual_fisheye_to_equirect(frame, wrong, width=1024)[sides], scene[sides]) < 30.0


def test_lens_geometry_is_checked() -> None:
    with pytest.raises(ConfigError, match=r"fisheye `fov_deg` must be > 180 and <= 270"):
        DualFisheye(fov_deg=170.0)
    with pytest.raises(ConfigError, match=r"fisheye `radius` must be in \(0, 1\]"):
        DualFisheye(radius=0.0)


def test_layout_names_are_checked() -> None:
    assert parse_layout("Dual_Fisheye") == "dual-fisheye"
    with pytest.raises(ConfigError) as caught:
        parse_layout("eacc")
    assert str(caught.value) == (
        "unknown --layout 'eacc'; expected one of auto, equirect, gopro-max, dual-fisheye, "
        "eac, cubemap. Did you mean 'eac'?"
    )


def _walk_frames(count: int) -> list[npt.NDArray[np.uint8]]:
    """Equirect frames (512 px) coloured by direction, each with its own horizon texture."""
    base = direction_pattern(512)
    frames = []
    for k in range(count):
        texture = _smooth_scene(512, seed=20 + k)
        frame = base.copy()
        frame[100:156] = (0.5 * base[100:156] + 0.5 * texture[100:156]).astype(np.uint8)
        frames.append(frame)
    return frames


def _native(frame: npt.NDArray[np.uint8], layout: str) -> npt.NDArray[np.uint8]:
    if layout == "dual-fisheye":
        return equirect_to_dual_fisheye(frame, 512)
    return equirect_to_cube(frame, layout, 384)  # type: ignore[arg-type]


def _walk_gpx(path: Path, duration_s: float) -> Path:
    """A straight walk north at 1.4 m/s, a fix a second, starting at the video's start."""
    t = np.arange(0.0, duration_s + 1.0, 1.0)
    lat, lon = LocalProjection(*ORIGIN).to_latlon(np.zeros_like(t), 1.4 * t)
    return write_gpx(path, CREATION.timestamp() + t, lat, lon)


_NAMES = {"dual-fisheye": "VID_0001.insv", "eac": "youtube.mp4", "cubemap": "cube.mp4"}


@pytest.fixture(scope="module")
def native_walks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path, list]]:  # type: ignore[type-arg]
    """A 10.5 s walk at 2 fps in each layout (H.264), its GPX and its equirect frames."""
    folder = tmp_path_factory.mktemp("native")
    frames = _walk_frames(21)
    walks = {}
    for layout, name in _NAMES.items():
        video = write_equirect_video(folder / name, [_native(f, layout) for f in frames], 2.0)
        gpx = _walk_gpx(folder / f"{Path(name).stem}.gpx", 10.5)
        walks[layout] = (video, gpx, frames)
    return walks


@pytest.mark.parametrize(
    ("layout", "told", "found"),
    [
        ("dual-fisheye", "auto", "dual-fisheye"),  # from the .insv suffix
        ("eac", "auto", "eac"),  # a 3:2 frame without metadata
        ("cubemap", "cubemap", "cubemap"),
        ("eac", "equirect", "equirect"),  # told: taken as is
    ],
)
def test_probe_picks_or_takes_the_layout(native_walks, layout: str, told: str, found: str) -> None:  # type: ignore[no-untyped-def]
    video, _, frames = native_walks[layout]
    info = probe_video(video, layout=told)  # type: ignore[arg-type]
    assert info.layout == found
    if found == "equirect":
        assert (info.width, info.height) == (384, 256)
        return
    assert (info.width, info.height) == (512, 256)
    assert info.source_size == ((512, 256) if layout == "dual-fisheye" else (384, 256))
    decoded = list(iter_frames(info))
    assert len(decoded) == len(frames)
    assert decoded[4].to_yuv420(width=512) is None  # converted pictures go through RGB
    picture = decoded[4].to_rgb()
    assert picture.shape == (256, 512, 3)
    assert _psnr(picture[20:-20, 4:-4], frames[4][20:-20, 4:-4]) >= 28.0
    assert _close(_direction_colours(picture), 24)
    assert decoded[4].to_gray(width=128).shape == (64, 128)


def test_a_2_to_1_mp4_is_equirect_unless_told(native_walks, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Dual fisheye is never guessed from the shape: the same 2:1 file as .mp4 is equirect."""
    video, _, _ = native_walks["dual-fisheye"]
    plain = tmp_path / "fisheye.mp4"
    plain.write_bytes(video.read_bytes())
    assert probe_video(plain).layout == "equirect"
    assert probe_video(plain, layout="dual-fisheye").layout == "dual-fisheye"


@pytest.mark.parametrize(
    ("layout", "told", "message"),
    [
        (
            "dual-fisheye",
            "eac",
            "but --layout eac needs 3:2 (3x2 cube faces); pass --layout equirect (or auto)",
        ),
        (
            "eac",
            "dual-fisheye",
            "but --layout dual-fisheye needs 2:1 (two fisheye circles side by side); pass "
            "--layout eac (or auto)",
        ),
    ],
)
def test_a_frame_that_does_not_fit_the_told_layout_is_refused(
    native_walks,
    layout: str,
    told: str,
    message: str,  # type: ignore[no-untyped-def]
) -> None:
    video, _, _ = native_walks[layout]
    size = "512x256 (aspect 2.000)" if layout == "dual-fisheye" else "384x256 (aspect 1.500)"
    with pytest.raises(VideoError) as caught:
        probe_video(video, layout=told)  # type: ignore[arg-type]
    assert str(caught.value) == f"video {video} is {size}, {message}"


def test_a_frame_of_no_known_shape_says_how_to_pass_the_layout(tmp_path: Path) -> None:
    video = write_equirect_video(tmp_path / "odd.mp4", [np.zeros((64, 112, 3), np.uint8)] * 2, 2.0)
    with pytest.raises(VideoError) as caught:
        probe_video(video)
    assert str(caught.value) == (
        f"video {video} is 112x64 (aspect 1.750), neither a 2:1 equirectangular frame nor a 3:2 "
        "cube map; export it as equirectangular 360° video, or pass --layout (dual-fisheye, "
        "eac, cubemap) for the layout it is in, or --layout equirect if it is equirectangular "
        "anyway"
    )


@pytest.mark.parametrize("layout", ["dual-fisheye", "eac", "cubemap"])
def test_ingest_stores_equirect_frames_and_records_the_layout(
    native_walks,
    tmp_path: Path,
    layout: str,  # type: ignore[no-untyped-def]
) -> None:
    video, gpx, frames = native_walks[layout]
    city = tmp_path / "city"
    options = IngestOptions(max_width=512, layout="cubemap" if layout == "cubemap" else "auto")
    result = ingest_video(video, gpx, city, projection=LocalProjection(*ORIGIN), options=options)
    assert result.layout == layout
    assert (result.width, result.height) == (512, 256)
    assert result.frame_count >= 10  # ~14 m walked at 1 m spacing
    tid = result.trajectory_id
    meta = json.loads((CityDir(city).trajectory_dir(tid) / "trajectory.json").read_text())
    assert meta["source_layout"] == layout
    poses = CityDir(city).read_poses(tid)
    with FrameStore(CityDir(city).trajectory_dir(tid) / "frames.mp4") as store:
        for row in range(len(poses.source_pts)):
            source = frames[round(float(poses.t_s[row]) * 2.0)]
            stored = store.get(row)
            assert _psnr(stored[20:-20, 4:-4], source[20:-20, 4:-4]) >= 26.0
            assert _close(_direction_colours(stored), 28)


def test_cli_takes_the_layout_and_prints_it(native_walks, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    video, gpx, _ = native_walks["cubemap"]
    city = tmp_path / "city"
    args = ["ingest", str(video), "--gps", str(gpx), "--out", str(city), "--layout", "cubemap",
            "--max-width", "512", "--no-pyramid"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "; source layout cubemap, stored as equirect" in result.output
    assert CityDir(city).read_trajectory_meta("cube").source_layout == "cubemap"
    ingest = CityDir(city).read_manifest().build["ingest"]
    assert (ingest["layout"], ingest["layouts"]) == ("cubemap", {"cube": "cubemap"})
    bad = CliRunner().invoke(app, [*args[:6], "--layout", "fisheye"])
    assert bad.exit_code != 0
    assert "unknown --layout 'fisheye'" in str(bad.exception) + bad.output


def test_an_insv_with_one_lens_per_stream_says_to_export_it(tmp_path: Path) -> None:
    """Insta360 X3/X4/X5 write each lens as its own ~1:1 track: not a side-by-side frame."""
    from tests.fixtures.gopro360 import write_gopro_max_360

    lens = np.zeros((128, 128, 3), np.uint8)
    video = write_gopro_max_360(tmp_path / "VID_0002.insv", [(lens, lens)] * 2, 2.0,
                                codec="libx264", handler="VideoHandler")  # fmt: skip
    with pytest.raises(VideoError) as caught:
        probe_video(video)
    assert str(caught.value) == (
        f"video {video} holds 2 video streams of 128x128: one lens per stream (Insta360 "
        "X3/X4/X5), which ingest does not stitch; export it as equirectangular .mp4 "
        "(Insta360 Studio) and ingest that"
    )


@pytest.mark.parametrize("layout", ["eac", "cubemap", "dual-fisheye"])
def test_a_real_panorama_survives_each_layout(shared_data: Path, layout: str) -> None:
    """A real GoPro MAX equirect photo (fine detail, real light) through each layout and
    back: two resamplings at about the same resolution cost detail (28-30 dB measured), a 90°
    turn or a swapped face costs far more (8 dB)."""
    import cv2

    from city360.video_store.layouts import native_to_equirect

    photo = cv2.imread(str(shared_data / "pano360" / "gopro_max_GSAG2002.JPG"))
    scene = np.ascontiguousarray(
        cv2.resize(photo, (1024, 512), interpolation=cv2.INTER_AREA)[..., ::-1]
    )
    if layout == "dual-fisheye":
        native = equirect_to_dual_fisheye(scene, 1024)
    else:
        native = equirect_to_cube(scene, layout, 768)  # type: ignore[arg-type]
    back = native_to_equirect(native, layout, width=1024)  # type: ignore[arg-type]
    inner = np.s_[40:-40, 8:-8]
    assert _psnr(back[inner], scene[inner]) >= 26.0
    assert _psnr(np.roll(back, 256, axis=1)[inner], scene[inner]) < 15.0


def test_gopro_max_told_on_another_file_says_what_it_found(native_walks) -> None:  # type: ignore[no-untyped-def]
    video, _, _ = native_walks["eac"]
    with pytest.raises(VideoError, match=r"has 1 video stream\(s\) \(384x256\); a \.360 holds two"):
        probe_video(video, layout="gopro-max")


def test_an_insv_holding_one_lens_says_to_export_the_pair(tmp_path: Path) -> None:
    """Insta360 ONE X2/RS at 5.7K write the front lens to VID_..._00_nnn.insv and the back lens
    to VID_..._10_nnn.insv, one square circle each. Each was taken as a side-by-side pair and
    ingested as a garbled equirect without a word (issue 17, newuser2)."""
    lens = [np.zeros((128, 128, 3), np.uint8)] * 4
    video = write_equirect_video(tmp_path / "VID_20240501_100000_00_657.insv", lens, 2.0)
    with pytest.raises(VideoError) as caught:
        probe_video(video)
    assert str(caught.value) == (
        f"video {video} is 128x128, one lens's picture: Insta360 cameras write 5.7K video as "
        "two files, VID_..._00_... (front lens) and VID_..._10_... (back lens), which ingest "
        "does not stitch; export the pair as equirectangular .mp4 (Insta360 Studio) and "
        "ingest that"
    )
