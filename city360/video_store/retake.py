"""Store chosen frames of a video as a trajectory's frame store (``frames.mp4``).

Ingest keeps one frame of a video every ``spacing_m`` metres; the kept frames are named by
their pts in ``poses.csv`` (``source_pts``). A second video of the very same walk — the same
route filmed again under another visual condition (``city360.synth.variants``) — is turned into
a frame store of the same trajectory by keeping exactly those pts: same frame count, same
poses, same stored size and encoder settings as ingest, only the pictures differ.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from city360.errors import VideoError
from city360.video_store.decode import DecodedFrame, iter_frames, probe_video
from city360.video_store.writer import BackgroundWriter, FrameWriter

if TYPE_CHECKING:
    import av.video.frame
    import av.video.reformatter

__all__ = ["store_selected_frames", "stored_picture"]


def stored_picture(
    frame: DecodedFrame,
    width: int,
    height: int,
    scaler: av.video.reformatter.VideoReformatter,
) -> av.video.frame.VideoFrame | npt.NDArray[np.uint8]:
    """Frame ``frame`` as it is stored, ``width`` x ``height``: yuv420p straight from the
    decoder (scaled by FFmpeg with ``scaler`` when needed) when it is upright, else rotated
    RGB."""
    yuv = frame.to_yuv420(width=width, scaler=scaler)
    if yuv is not None and (yuv.width, yuv.height) == (width, height):
        return yuv
    image = frame.to_rgb(width=width)
    if image.shape[:2] != (height, width):
        import cv2

        image = cv2.resize(  # type: ignore[assignment]
            image, (width, height), interpolation=cv2.INTER_AREA
        )
    return image


def store_selected_frames(
    video: str | os.PathLike[str],
    source_pts: Sequence[int] | npt.NDArray[np.int64],
    out: str | os.PathLike[str],
    *,
    width: int,
    height: int,
    crf: int = 16,
) -> int:
    """Write the frames of ``video`` whose pts (stream time_base) are ``source_pts``, in that
    order, into the all-intra ``out`` at ``width`` x ``height``; return how many were written.

    Raises :class:`~city360.errors.VideoError` when a pts is missing from the video (it is not
    a film of the same walk) or the pts are not increasing.
    """
    from av.video.reformatter import VideoReformatter

    wanted = {int(p): k for k, p in enumerate(source_pts)}
    if len(wanted) != len(source_pts) or list(wanted) != sorted(wanted):
        msg = f"`source_pts` for {video} must be strictly increasing"
        raise VideoError(msg)
    info = probe_video(Path(video))
    written = 0
    scaler = VideoReformatter()  # used by the writer's thread alone
    frames = iter_frames(info)
    try:
        with BackgroundWriter(FrameWriter(out, width, height, crf=crf)) as writer:
            for frame in frames:
                row = wanted.get(frame.pts)
                if row is None:
                    continue
                writer.submit(partial(stored_picture, frame, width, height, scaler))
                written += 1
                if written == len(wanted):
                    break
    finally:
        frames.close()
    if written != len(wanted):
        msg = (
            f"video {video} holds {written} of the {len(wanted)} frames (by pts) the trajectory "
            "keeps; it is not a film of the same walk (different fps or length)"
        )
        raise VideoError(msg)
    return written
