"""city360.video_store: GPS-tagged 360° video -> trajectories with a random-access frame store.

Heavy modules (PyAV, OpenCV) load on first use: ``from city360.video_store import FrameStore``
imports only the frame store.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from city360.video_store.city_manifest import update_manifest
    from city360.video_store.clean import CleanParams, SmoothTrack, clean_track
    from city360.video_store.decode import VideoInfo, probe_video
    from city360.video_store.dual_fisheye import DualFisheye
    from city360.video_store.frame_store import DEFAULT_CACHE_BYTES, FrameStore, YuvPlanes
    from city360.video_store.gps import GpsTrack, read_embedded_track, read_track
    from city360.video_store.ingest import IngestOptions, IngestResult, ingest_video

__all__ = [
    "DEFAULT_CACHE_BYTES",
    "CleanParams",
    "DualFisheye",
    "FrameStore",
    "GpsTrack",
    "IngestOptions",
    "IngestResult",
    "SmoothTrack",
    "VideoInfo",
    "YuvPlanes",
    "clean_track",
    "ingest_video",
    "probe_video",
    "read_embedded_track",
    "read_track",
    "update_manifest",
]

_LAZY = {
    "DEFAULT_CACHE_BYTES": "frame_store",
    "FrameStore": "frame_store",
    "YuvPlanes": "frame_store",
    "IngestOptions": "ingest",
    "IngestResult": "ingest",
    "ingest_video": "ingest",
    "update_manifest": "city_manifest",
    "CleanParams": "clean",
    "SmoothTrack": "clean",
    "clean_track": "clean",
    "VideoInfo": "decode",
    "DualFisheye": "dual_fisheye",
    "probe_video": "decode",
    "GpsTrack": "gps",
    "read_embedded_track": "gps",
    "read_track": "gps",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        msg = f"module 'city360.video_store' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(f"city360.video_store.{module}"), name)
    globals()[name] = value
    return value
