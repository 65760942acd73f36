"""The frame pyramid: lower-resolution copies of a trajectory's frames beside ``frames.mp4``.

An 84x84 view at 90° uses a few hundred of a 3840 px frame's columns, yet a step decodes all of
them; decode time grows with the pixels. So each trajectory may hold levels, each half the
width of the one above, down to the first at or below :data:`MIN_LEVEL_WIDTH` (3840 -> 1920,
960, 480; 1536 -> 768, 384): ``trajectories/<id>/frames_<width>.mp4``, all-intra H.264 with
frame i at pts i like ``frames.mp4`` (same frame count, 2:1, even sizes; each level is an
area-average of the one above). The renderer reads the smallest level that still gives at
least ``density`` source pixels per view pixel (:func:`choose_level`).

Levels are optional: a city without them reads ``frames.mp4`` for every view.
``city360 pyramid CITY`` (:func:`build_city_pyramid`) adds them to a city; ingest writes them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from city360.errors import ConfigError, InputFileError

__all__ = [
    "MIN_LEVEL_WIDTH",
    "build_city_pyramid",
    "build_levels",
    "choose_level",
    "level_path",
    "level_widths",
    "required_width",
    "stored_levels",
]

MIN_LEVEL_WIDTH = 512
"""Halving stops at the first level at or below this width (pixels)."""

_LEVEL_RE = re.compile(r"^frames_(\d+)\.mp4$")


def level_widths(width: int, height: int) -> list[int]:
    """Widths of the levels below a ``width`` x ``height`` frame, largest first: halves while
    the level above is wider than :data:`MIN_LEVEL_WIDTH` and both halves stay even."""
    widths: list[int] = []
    w, h = int(width), int(height)
    while w > MIN_LEVEL_WIDTH and w % 4 == 0 and h % 4 == 0:
        w, h = w // 2, h // 2
        widths.append(w)
    return widths


def level_path(frames_path: str | os.PathLike[str], width: int) -> Path:
    """``frames_<width>.mp4`` beside ``frames_path``."""
    return Path(frames_path).with_name(f"frames_{int(width)}.mp4")


def stored_levels(frames_path: str | os.PathLike[str]) -> dict[int, Path]:
    """The levels stored beside ``frames_path``: width -> path (empty without a pyramid)."""
    folder = Path(frames_path).parent
    if not folder.is_dir():
        return {}
    found: dict[int, Path] = {}
    for entry in folder.iterdir():
        match = _LEVEL_RE.match(entry.name)
        if match is not None and entry.is_file():
            found[int(match.group(1))] = entry
    return dict(sorted(found.items()))


def required_width(view_width: int, fov_deg: float, density: float = 1.0) -> float:
    """Source frame width (pixels over 360°) giving ``density`` source pixels per view pixel
    for a view ``view_width`` pixels wide over ``fov_deg`` horizontal degrees (the view's mean
    pixel pitch): a 640 px view at 90° needs 2560 px, an 84 px one 336 px."""
    if not (view_width > 0 and 0 < fov_deg <= 360 and density > 0):
        msg = (
            f"need view_width > 0, fov_deg in (0, 360] and density > 0, got {view_width}, "
            f"{fov_deg}, {density}"
        )
        raise ConfigError(msg)
    return density * view_width * 360.0 / fov_deg


def choose_level(
    full_width: int, levels: Iterable[int], view_width: int, fov_deg: float, density: float = 1.0
) -> int:
    """The smallest of ``full_width`` and ``levels`` (widths, pixels) that is at least
    :func:`required_width`; ``full_width`` when none is that wide."""
    needed = required_width(view_width, fov_deg, density)
    wide_enough = [w for w in (*levels, full_width) if w >= needed and w <= full_width]
    return min(wide_enough) if wide_enough else int(full_width)


def build_levels(
    frames_path: str | os.PathLike[str], *, force: bool = False, crf: int = 16
) -> list[Path]:
    """Write every missing level of ``frames_path`` (all of them with ``force``); the level
    files written. One sequential decode of ``frames.mp4``; each level is encoded while it is
    made and renamed into place only when complete."""
    import av
    import cv2

    from city360.video_store.writer import FrameWriter

    source = Path(frames_path)
    if not source.is_file():
        msg = f"frame store {source} not found; run `city360 ingest` first"
        raise InputFileError(msg)
    with av.open(str(source)) as container:
        stream = container.streams.video[0]
        width, height = stream.codec_context.width, stream.codec_context.height
    have = stored_levels(source)
    wanted = [w for w in level_widths(width, height) if force or w not in have]
    if not wanted:
        return []
    sizes = [(w, w * height // width) for w in level_widths(width, height)]
    writers: dict[int, FrameWriter] = {}
    tmp_paths = {w: level_path(source, w).with_suffix(".tmp.mp4") for w in wanted}
    written: list[Path] = []
    try:
        for w in wanted:
            writers[w] = FrameWriter(tmp_paths[w], w, w * height // width, crf=crf)
        with av.open(str(source)) as container:
            stream = container.streams.video[0]
            stream.thread_type = "AUTO"
            for frame in container.decode(stream):
                image: npt.NDArray[np.uint8] = np.asarray(frame.to_ndarray(format="rgb24"))
                for w, h in sizes:  # each level from the one above: an area average
                    image = np.asarray(
                        cv2.resize(image, (w, h), interpolation=cv2.INTER_AREA), np.uint8
                    )
                    if w in writers:
                        writers[w].write(image)
        for w, writer in writers.items():
            writer.close()
            os.replace(tmp_paths[w], level_path(source, w))
            written.append(level_path(source, w))
    finally:
        for writer in writers.values():
            writer.close()
        for tmp in tmp_paths.values():
            tmp.unlink(missing_ok=True)
    return written


def build_city_pyramid(city_dir: str | os.PathLike[str], *, force: bool = False) -> list[Path]:
    """Build the missing levels of every trajectory of a city; the level files written."""
    from city360.city import CityDir

    city = CityDir(city_dir)
    trajectories = city.trajectories_dir
    if not trajectories.is_dir():
        msg = f"{city.root} has no trajectories/; run `city360 ingest ... --out {city.root}`"
        raise InputFileError(msg)
    written: list[Path] = []
    for folder in sorted(p for p in trajectories.iterdir() if p.is_dir()):
        frames = city.frames_path(folder.name)
        if frames.is_file():  # pose-only trajectories have no frames
            written += build_levels(frames, force=force)
    return written
