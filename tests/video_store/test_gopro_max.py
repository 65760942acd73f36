"""GoPro MAX ``.360`` (two EAC strips) converted to equirect on ingest (issue 17)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from city360.city import CityDir
from city360.errors import VideoError
from city360.geo import LocalProjection
from city360.video_store.decode import iter_frames, probe_video
from city360.video_store.frame_store import FrameStore
from city360.video_store.gopro_max import GOPRO_MAX_LAYOUTS, eac_to_equirect
from city360.video_store.ingest import IngestOptions, ingest_video
from tests.fixtures.gopro360 import direction_pattern, equirect_to_strips, write_gopro_max_360
from tests.fixtures.videos import _far_scene

THREE_K = GOPRO_MAX_LAYOUTS[1]


def _psnr(a: npt.NDArray[np.uint8], b: npt.NDArray[np.uint8]) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return 10.0 * np.log10(255.0**2 / max(mse, 1e-12))


def _smooth_scene(width: int, seed: int = 0) -> npt.NDArray[np.uint8]:
    import cv2

    return np.ascontiguousarray(cv2.GaussianBlur(_far_scene(width, width // 2, seed), (0, 0), 2))


def _direction_colours(equirect: npt.NDArray[np.uint8]) -> dict[str, tuple[int, ...]]:
    """Colours at the front, right, back, left (25° above the horizon, clear of the walk's
    texture), up and down of an equirect picture."""
    h, w = equirect.shape[:2]
    row = round(h * (0.5 - 25.0 / 180.0))
    at = {
        "front": (row, w // 2),
        "right": (row, 3 * w // 4),
        "back": (row, 2),
        "left": (row, w // 4),
        "up": (2, w // 3),
        "down": (h - 3, w // 3),
    }
    return {name: tuple(int(c) for c in equirect[r, c]) for name, (r, c) in at.items()}


EXPECTED_COLOURS = {
    "front": (255, 0, 0),
    "right": (0, 255, 0),
    "back": (0, 0, 255),
    "left": (255, 255, 0),
    "up": (255, 255, 255),
    "down": (0, 0, 0),
}


def _close(found: dict[str, tuple[int, ...]], tolerance: int) -> bool:
    return all(
        max(abs(a - b) for a, b in zip(found[k], v, strict=True)) <= tolerance
        for k, v in EXPECTED_COLOURS.items()
    )


@pytest.mark.parametrize("layout", GOPRO_MAX_LAYOUTS, ids=lambda lay: lay.name)
def test_strips_convert_back_to_the_equirect_they_show(layout) -> None:  # type: ignore[no-untyped-def]
    scene = _smooth_scene(1024)
    front, back = equirect_to_strips(scene, layout)
    assert front.shape == back.shape == (layout.height, layout.width, 3)
    equirect = eac_to_equirect(front, back, layout, width=1024)
    assert equirect.shape == (512, 1024, 3)
    # the polar rows squeeze a whole row of pixels into one direction, and _far_scene is not
    # periodic across the 180° seam: compare the rest
    assert _psnr(equirect[40:-40, 8:-8], scene[40:-40, 8:-8]) >= 45.0
    pattern = direction_pattern(1024)
    assert _close(_direction_colours(eac_to_equirect(*equirect_to_strips(pattern, layout),
                                                    layout, width=1024)), 4)  # fmt: skip


def test_overlap_bands_are_cross_faded_not_duplicated() -> None:
    """Each side face shows the world strip at its centre line twice, once per lens: a
    converter that ignored the bands would show a seam (a shifted copy) there."""
    scene = _smooth_scene(1024, seed=3)
    front, back = equirect_to_strips(scene, THREE_K)
    converted = eac_to_equirect(front, back, THREE_K, width=1024)
    side = THREE_K.side_width
    # the left face's centre line (longitude -90°) is in stream 0's band around x = side/2
    left = scene[200:312, 240:272]
    assert _psnr(converted[200:312, 240:272], left) >= 40.0
    # a lens seam: drop lens B's half and the picture beyond the centre line goes wrong
    broken = front.copy()
    broken[:, side // 2 : side] = broken[:, side // 2 - 1 : side // 2]
    assert _psnr(eac_to_equirect(broken, back, THREE_K, width=1024)[200:312, 256:272],
                 scene[200:312, 256:272]) < 30.0  # fmt: skip


def _walk_frames(count: int) -> list[npt.NDArray[np.uint8]]:
    """Equirect frames coloured by direction, each with its own texture on the horizon."""
    base = direction_pattern(1024)
    frames = []
    for k in range(count):
        texture = _smooth_scene(1024, seed=10 + k)
        frame = base.copy()
        frame[200:312] = (0.5 * base[200:312] + 0.5 * texture[200:312]).astype(np.uint8)
        frames.append(frame)
    return frames


@pytest.fixture(scope="module")
def max_walk(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> tuple[Path, list]:  # type: ignore[type-arg]
    """A 10.5 s .360 at 2 fps (3K strips) with the GPMF track of a real GoPro MAX walk."""
    folder = tmp_path_factory.mktemp("max360")
    frames = _walk_frames(21)
    pairs = [equirect_to_strips(f, THREE_K) for f in frames]
    video = write_gopro_max_360(
        folder / "GS010001.360",
        pairs,
        2.0,
        gpmf_from=shared_data / "gopro_gpmf" / "max-heromode.mp4",
    )
    return video, frames


def test_probe_reads_a_360_as_the_equirect_it_holds(max_walk) -> None:  # type: ignore[no-untyped-def]
    video, frames = max_walk
    info = probe_video(video)
    assert info.gopro_max == THREE_K
    assert (info.width, info.height) == (2944, 1472)
    assert info.frame_count == len(frames)
    decoded = list(iter_frames(info))
    assert [f.index for f in decoded] == list(range(len(frames)))
    picture = decoded[5].to_rgb(width=1024)
    assert _psnr(picture[40:-40], frames[5][40:-40]) >= 33.0
    assert decoded[5].to_gray(width=256).shape == (128, 256)


def test_ingest_a_360_with_its_gpmf(max_walk, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    video, frames = max_walk
    city = tmp_path / "city"
    projection = LocalProjection(33.1267, -117.3273)
    result = ingest_video(
        video, None, city, projection=projection, options=IngestOptions(max_width=1024)
    )
    assert result.trajectory_id == "GS010001"
    assert (result.width, result.height) == (1024, 512)
    assert result.gps_source == video  # the GPMF inside the .360
    assert result.frame_count >= 8  # ~13 m walked at 1 m spacing
    poses = CityDir(city).read_poses("GS010001")
    with FrameStore(CityDir(city).trajectory_dir("GS010001") / "frames.mp4") as store:
        for row in range(len(poses.source_pts)):
            source = frames[round(float(poses.t_s[row]) * 2.0)]
            stored = store.get(row)
            assert _psnr(stored[40:-40], source[40:-40]) >= 30.0
            assert _close(_direction_colours(stored), 24)


def _two_stream_file(path: Path, size: tuple[int, int], streams: int) -> Path:
    rng = np.random.default_rng(0)
    image = rng.integers(0, 255, (size[1], size[0], 3), dtype=np.uint8)
    return write_gopro_max_360(path, [(image, image)] * 2, 4.0, codec="libx264", streams=streams)


@pytest.mark.parametrize(
    ("name", "size", "streams", "found"),
    [
        ("one.360", (2272, 736), 1, "has 1 video stream(s) (2272x736)"),
        ("three.360", (2272, 736), 3, "has 3 video stream(s) (2272x736, 2272x736, 2272x736)"),
        ("small.360", (1024, 336), 2, "has 2 video stream(s) (1024x336, 1024x336)"),
        ("named.mp4", (1024, 336), 2, "has 2 video stream(s) (1024x336, 1024x336)"),
    ],
)
def test_wrong_360_says_what_it_found(
    tmp_path: Path, name: str, size: tuple[int, int], streams: int, found: str
) -> None:
    video = _two_stream_file(tmp_path / name, size, streams)
    expected = (
        f"GoPro MAX video {video} {found}; a .360 holds two EAC strips of one size, "
        "4096x1344 (5.6K) or 2272x736 (3K): re-copy it from the camera, or export it as an "
        "equirectangular .mp4 (GoPro Player) and ingest that"
    )
    with pytest.raises(VideoError) as caught:
        probe_video(video)
    assert str(caught.value) == expected


def test_two_streams_not_from_a_gopro_are_an_ordinary_video(tmp_path: Path) -> None:
    """Two video tracks without the GoPro handler name (e.g. a preview track) are not a
    .360: the first stream is the video, checked as equirect as before."""
    from tests.fixtures.gopro360 import write_gopro_max_360 as write

    image = np.zeros((128, 256, 3), np.uint8)
    video = write(tmp_path / "two.mp4", [(image, image)] * 2, 4.0, codec="libx264",
                  handler="VideoHandler")  # fmt: skip
    info = probe_video(video)
    assert info.gopro_max is None
    assert (info.width, info.height) == (256, 128)
