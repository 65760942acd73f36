"""Filmed twins in the accuracy suite: ingest the videos as a user would, score the frame poses.

A twin made with pictures (``synthesize(..., poses_only=False)``) has an MP4 and a GPX per
video. :func:`ingest_twin` runs the product's ingest on every pair
(:func:`city360.video_store.cli.run_ingest`, the call ``city360 ingest`` makes), so the frame
poses come from the real path: cleaning, clock sync, motion from the pictures, the fused
heading and the heading-aided smoother (``video_store.ingest._aided_positions``).

:func:`frame_errors` measures those poses against the twin's truth. The instants are the
**kept frames** of every trajectory (about one a metre, one per stop): a pose's ``t_s`` is
the frame's time in its source video (pts x time base), and ``groundtruth/poses/<video>.csv``
gives the true camera position at video time ``t_s`` (the twin films its truth's frames, so
the instants coincide; between truth rows the truth is interpolated linearly). No GPS clock
enters the ingested error. For comparison it also gives the GPS-only smoothing
(:func:`city360.video_store.clean.clean_track`, what :func:`~.accuracy.position_rmse_m`
scores at every true frame) at the same kept frames, on the GPS clock: ``creation_time +
t_s + clock_offset_s`` of the video's truth.

Units: metres in the city CRS (x east, y north), seconds.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from city360.errors import City360Error

__all__ = ["FrameErrors", "frame_errors", "ingest_twin"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class FrameErrors:
    """Position errors (metres) of a filmed twin's kept frames, all trajectories together.

    ``ingested_m``: the ingested pose against the truth at the frame's video time;
    ``gps_only_m``: the GPS-only smoothed track at the same frames (GPS clock)."""

    ingested_m: FloatArray
    gps_only_m: FloatArray

    @property
    def ingested_rmse_m(self) -> float:
        return _rms(self.ingested_m)

    @property
    def gps_only_rmse_m(self) -> float:
        return _rms(self.gps_only_m)


def _rms(values: FloatArray) -> float:
    return math.sqrt(float(np.mean(values**2))) if values.shape[0] else 0.0


def ingest_twin(city_dir: Path, *, osm: Path | None = None) -> list[str]:
    """Ingest every ``videos/<name>.mp4`` of a filmed twin with its ``<name>.gpx`` into the
    twin's own ``trajectories/``, trusting the clocks (the CLI's default) and without the
    frame pyramid (the build does not read it); with the OSM extract ``osm`` as ``city360
    ingest --osm`` takes it (None: without). Returns one message per video that failed
    (empty: all ingested); raises :class:`City360Error` when the twin has no videos."""
    from city360.errors import InputFileError
    from city360.video_store.cli import run_ingest
    from city360.video_store.ingest import IngestOptions

    videos = sorted((city_dir / "videos").glob("*.mp4"))
    if not videos:
        msg = f"no videos in {city_dir / 'videos'}; film the twin with pictures (poses_only=False)"
        raise InputFileError(msg)
    pairs = [(video, video.with_suffix(".gpx")) for video in videos]
    options = IngestOptions(offset=None, pyramid=False, overwrite=True, osm=osm)
    _, failures = run_ingest(pairs, city_dir, options, workers=1)
    return [f"{video.name}: {str(exc).splitlines()[0]}" for video, exc in failures]


def frame_errors(city_dir: Path) -> FrameErrors:
    """The errors of every kept frame of an ingested twin (see the module docstring)."""
    from city360.city import CityDir
    from city360.synth.groundtruth import SceneTruth, read_true_poses
    from city360.video_store.clean import clean_track
    from city360.video_store.gps import read_track

    city = CityDir(city_dir)
    projection = city.read_manifest().projection
    truth = SceneTruth.load(city.groundtruth_dir / "scene.json")
    videos = {video.name: video for video in truth.videos}
    ingested: list[FloatArray] = []
    gps_only: list[FloatArray] = []
    for tid in city.trajectory_ids():
        meta = city.read_trajectory_meta(tid)
        name = Path(meta.source_video).stem
        if name not in videos:
            msg = f"trajectory {tid} comes from {meta.source_video}, which the twin never filmed"
            raise City360Error(msg)
        poses = city.read_poses(tid)
        table = read_true_poses(city.groundtruth_dir / "poses" / f"{name}.csv")
        true_x = np.interp(poses.t_s, table[:, 1], table[:, 2])
        true_y = np.interp(poses.t_s, table[:, 1], table[:, 3])
        ingested.append(np.hypot(poses.x_m - true_x, poses.y_m - true_y))
        video = videos[name]
        smooth = clean_track(read_track(city.videos_dir / f"{name}.gpx"), projection)
        start = dt.datetime.fromisoformat(video.creation_time_utc.replace("Z", "+00:00"))
        gps_t = np.clip(
            start.timestamp() + poses.t_s + video.clock_offset_s, smooth.start_s, smooth.end_s
        )
        x, y, _ = smooth.sample(gps_t)
        gps_only.append(np.hypot(x - true_x, y - true_y))
    empty = np.zeros(0)
    return FrameErrors(
        np.concatenate(ingested) if ingested else empty,
        np.concatenate(gps_only) if gps_only else empty,
    )
