"""The all-intra writer and the random-access FrameStore."""

from __future__ import annotations

import threading
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from city360.errors import CityFormatError, ClosedResourceError, FrameIndexError
from city360.video_store import FrameStore
from city360.video_store.writer import BackgroundWriter, FrameWriter, output_size
from tests.fixtures.videos import write_equirect_video

WIDTH, HEIGHT, COUNT = 128, 64, 12


def _frame(k: int) -> np.ndarray:
    """Smooth colour waves that differ per frame (camera-like content, no hard chroma edges)."""
    yy, xx = np.mgrid[0:HEIGHT, 0:WIDTH].astype(np.float64)
    phase = k * 0.7
    red = 128 + 100 * np.sin(2 * np.pi * xx / WIDTH + phase)
    green = 128 + 90 * np.cos(2 * np.pi * yy / HEIGHT * 2 + phase)
    blue = 128 + 80 * np.sin(2 * np.pi * (xx + yy) / 48 - phase)
    return np.stack([red, green, blue], -1).round().astype(np.uint8)


# Against these saturated RGB test frames 4:2:0 chroma subsampling alone caps PSNR near 34 dB;
# the 35 dB round trip is checked in test_ingest against decoded (already 4:2:0) source frames.


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return float("inf") if mse == 0 else 10 * np.log10(255.0**2 / mse)


@pytest.fixture(scope="module")
def frames_mp4(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("store") / "frames.mp4"
    with FrameWriter(path, WIDTH, HEIGHT) as writer:
        for k in range(COUNT):
            assert writer.write(_frame(k)) == k
    return path


def test_written_file_is_all_intra_with_pts_equal_index(frames_mp4: Path) -> None:
    import av

    with av.open(str(frames_mp4)) as container:
        packets = [p for p in container.demux(container.streams.video[0]) if p.size]
    assert [p.pts for p in packets] == list(range(COUNT))
    assert all(p.is_keyframe for p in packets)


def test_output_size_caps_width_and_keeps_2_to_1() -> None:
    assert output_size(3840, 1920, 1024) == (1024, 512)
    assert output_size(720, 360, 3840) == (720, 360)
    assert output_size(1001, 500, None) == (1000, 500)


def test_get_returns_the_written_frames(frames_mp4: Path) -> None:
    with FrameStore(frames_mp4) as store:
        assert len(store) == COUNT
        assert (store.width, store.height) == (WIDTH, HEIGHT)
        for k in [5, 0, 11, 3, -1]:
            image = store.get(k)
            assert image.shape == (HEIGHT, WIDTH, 3)
            assert image.dtype == np.uint8
            assert psnr(image, _frame(k % COUNT)) > 30
        assert not store.get(2).flags.writeable or store.get(2).base is None


def test_get_yuv_planes(frames_mp4: Path) -> None:
    with FrameStore(frames_mp4) as store:
        y, u, v = store.get_yuv(4)
        assert y.shape == (HEIGHT, WIDTH)
        assert u.shape == v.shape == (HEIGHT // 2, WIDTH // 2)
        assert y.dtype == u.dtype == v.dtype == np.uint8
        assert not y.flags.writeable
        # BT.601 limited-range luma of the source frame
        rgb = _frame(4).astype(np.float64)
        luma = 16 + (65.481 * rgb[..., 0] + 128.553 * rgb[..., 1] + 24.966 * rgb[..., 2]) / 255
        assert np.abs(y - luma).mean() < 3


def test_cache_is_bounded_in_bytes_and_lru(frames_mp4: Path) -> None:
    frame_bytes = WIDTH * HEIGHT * 3 // 2
    with FrameStore(frames_mp4, cache_bytes=3 * frame_bytes) as store:
        for k in range(6):
            store.get(k)
        assert store.cached_bytes == 3 * frame_bytes
        misses = store.misses
        store.get(5)  # most recent: cached
        assert store.misses == misses
        store.get(0)  # evicted long ago: decoded again
        assert store.misses == misses + 1
    with FrameStore(frames_mp4, cache_bytes=0) as store:
        store.get(1)
        store.get(1)
        assert store.cached_bytes == 0
        assert store.misses == 2


def test_prefetch_fills_the_cache_in_the_background(frames_mp4: Path) -> None:
    with FrameStore(frames_mp4) as store:
        store.prefetch([7, 8, 9])
        assert store.wait_prefetch(timeout=30)
        misses = store.misses
        for k in (7, 8, 9):
            assert psnr(store.get(k), _frame(k)) > 30
        assert store.misses == misses
        assert store.hits >= 3


def test_thread_safe_concurrent_gets(frames_mp4: Path) -> None:
    errors: list[BaseException] = []
    with FrameStore(frames_mp4, cache_bytes=2 * WIDTH * HEIGHT * 3 // 2) as store:

        def worker(seed: int) -> None:
            rng = np.random.default_rng(seed)
            try:
                for k in rng.integers(0, COUNT, 15):
                    if psnr(store.get(int(k)), _frame(int(k))) < 30:
                        raise AssertionError(f"frame {k} came back wrong")
                    store.prefetch([int((k + 1) % COUNT)])
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert not errors


def test_index_out_of_range(frames_mp4: Path) -> None:
    with (
        FrameStore(frames_mp4) as store,
        pytest.raises(FrameIndexError, match=r"frame index 12 out of range .* 12 frames \(0..11\)"),
    ):
        store.get(12)


def test_close_twice_and_use_after_close(frames_mp4: Path) -> None:
    store = FrameStore(frames_mp4)
    assert "frames.mp4" in repr(store)
    assert "12 frames 128x64" in repr(store)
    store.prefetch([1, 2])
    store.close()
    store.close()
    assert "closed" in repr(store)
    with pytest.raises(ClosedResourceError, match=r"FrameStore\(.*frames\.mp4.*is closed"):
        store.get(0)
    with pytest.raises(ClosedResourceError):
        store.prefetch([0])


def test_long_gop_file_is_rejected(tmp_path: Path) -> None:
    path = write_equirect_video(tmp_path / "gop.mp4", [_frame(k) for k in range(6)], 10, gop=30)
    with pytest.raises(CityFormatError, match=r"is not all-intra \(frame 1 is not a keyframe\)"):
        FrameStore(path)


def test_missing_store(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="re-run `city360 ingest`"):
        FrameStore(tmp_path / "frames.mp4")


def test_writer_checks_frame_shape(tmp_path: Path) -> None:
    with (
        FrameWriter(tmp_path / "w.mp4", 64, 32) as writer,
        pytest.raises(ValueError, match=r"frame shape \(32, 32, 3\) != \(32, 64, 3\)"),
    ):
        writer.write(np.zeros((32, 32, 3), np.uint8))


def _as_yuv(image: np.ndarray) -> object:
    import av

    return av.VideoFrame.from_ndarray(image, format="rgb24").reformat(format="yuv420p")


def _as_is(image: np.ndarray) -> np.ndarray:
    return image


def test_background_writer_keeps_order_and_mixes_rgb_and_yuv(tmp_path: Path) -> None:
    path = tmp_path / "bg.mp4"
    with BackgroundWriter(FrameWriter(path, WIDTH, HEIGHT), depth=2) as writer:
        for k in range(COUNT):
            # odd frames as decoded-style yuv420p frames, made on the worker thread
            writer.submit(partial(_as_yuv if k % 2 else _as_is, _frame(k)))
    assert writer.writer.count == COUNT
    with FrameStore(path) as store:
        assert len(store) == COUNT
        for k in range(COUNT):
            # each frame matches its own source better than its neighbour's: order kept
            own = psnr(store.get(k), _frame(k))
            other = psnr(store.get(k), _frame((k + 1) % COUNT))
            assert own > 30 > other


def test_background_writer_raises_a_worker_error(tmp_path: Path) -> None:
    writer = BackgroundWriter(FrameWriter(tmp_path / "bad.mp4", 64, 32))
    writer.submit(partial(_as_is, np.zeros((32, 32, 3), np.uint8)))
    with pytest.raises(ValueError, match=r"frame shape \(32, 32, 3\) != \(32, 64, 3\)"):
        writer.close()
    writer.close()  # closed already: a no-op
    with pytest.raises(ClosedResourceError, match="is closed"):
        writer.submit(partial(_as_is, np.zeros((32, 64, 3), np.uint8)))


def test_background_writer_drops_queued_jobs_on_an_exception(tmp_path: Path) -> None:
    ran: list[int] = []
    started = threading.Event()

    def job(k: int) -> np.ndarray:
        started.set()
        threading.Event().wait(0.3)  # still encoding when the caller fails
        ran.append(k)
        return _frame(k)

    def fail_while_encoding() -> None:
        with BackgroundWriter(FrameWriter(tmp_path / "x.mp4", WIDTH, HEIGHT), depth=4) as writer:
            for k in range(3):
                writer.submit(partial(job, k))
            assert started.wait(5)
            raise RuntimeError("caller failed")

    with pytest.raises(RuntimeError, match="caller failed"):
        fail_while_encoding()
    assert ran == [0]  # the running job finishes; the queued ones are dropped


@pytest.mark.parametrize(("width", "height"), [(66, 100), (64, 32), (3840, 1920)])
def test_packed_i420_is_pyav_layout_without_row_padding(width: int, height: int) -> None:
    import av

    from city360.video_store.frame_store import packed_i420

    rng = np.random.default_rng(width * height)
    rgb = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
    frame = av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format="yuv420p")
    packed = packed_i420(frame)
    assert packed.shape == (height * 3 // 2, width)
    assert np.array_equal(packed, frame.to_ndarray(format="yuv420p"))
    if width == 66:
        assert frame.planes[1].line_size > frame.planes[1].width  # padded rows dropped
