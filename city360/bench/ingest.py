"""Ingest speed: one long-GOP 30 fps clip ingested into a fresh city, against the clip's own
duration (real time) and against a decode-only pass over the same clip (the floor: ingest must
decode every frame once)."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["measure_ingest"]


def _decode_only_s(video: Path) -> tuple[float, int]:
    """Seconds to decode every frame of ``video`` with video_store's decoder, and the count."""
    from city360.video_store.decode import iter_frames, probe_video

    info = probe_video(video)
    started = time.perf_counter()
    count = sum(1 for _ in iter_frames(info))
    return time.perf_counter() - started, count


def measure_ingest(video: Path, gps: Path, *, repeats: int = 1) -> dict[str, Any]:
    """Ingest ``video`` with ``gps`` ``repeats`` times (the fastest counts, as for the
    decode-only pass, so a load spike on this shared machine does not decide the figure)."""
    from city360.city import CityDir
    from city360.video_store import IngestOptions, ingest_video, probe_video
    from city360.video_store.city_manifest import city_projection
    from city360.video_store.ingest import load_track

    info = probe_video(video)
    # the clip's own synthetic city when it has one, else a projection centred on the track
    projection = city_projection(CityDir(video.parent.parent), [load_track(video, gps, info)])
    ingest_s: list[float] = []
    ingest_cpu_s: list[float] = []
    decode_s: list[float] = []
    frames_stored = 0
    for _ in range(max(1, repeats)):
        seconds, frames = _decode_only_s(video)
        decode_s.append(seconds)
        scratch = Path(tempfile.mkdtemp(prefix="city360-bench-ingest-"))
        try:
            cpu_started, started = time.process_time(), time.perf_counter()
            result = ingest_video(
                video,
                gps,
                scratch / "city",
                projection=projection,
                options=IngestOptions(max_width=info.width),
            )
            ingest_s.append(time.perf_counter() - started)
            ingest_cpu_s.append(time.process_time() - cpu_started)
            frames_stored = result.frame_count
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    best_ingest, best_decode = min(ingest_s), min(decode_s)
    return {
        "clip_duration_s": round(info.duration_s, 3),
        "clip_frames": frames,
        "clip_fps": round(frames / info.duration_s, 3) if info.duration_s else None,
        "clip_size": [info.width, info.height],
        "frames_stored": frames_stored,
        "ingest_s": round(best_ingest, 3),
        "ingest_runs_s": [round(s, 3) for s in ingest_s],
        "ingest_cpu_s": round(min(ingest_cpu_s), 3),
        "decode_only_s": round(best_decode, 3),
        "ingest_realtime_factor": info.duration_s / best_ingest,
        "decode_realtime_factor": info.duration_s / best_decode,
        "ingest_vs_decode": best_ingest / best_decode,
    }
