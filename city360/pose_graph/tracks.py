"""Trajectories as numpy arrays, read from a city directory and checked before a build.

A :class:`Track` is one trajectory's per-frame positions (metres in the city CRS) with its
cumulative arc length and a robust travel direction. Checks here catch the inputs that would
otherwise give a graph that looks right and is not: no trajectories, poses projected with a
different CRS than the city's, trajectories far outside the city.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from city360.city import CityDir, CityManifest, TrajectoryPoses
from city360.errors import CityFormatError, GraphBuildError
from city360.geo import LocalProjection

__all__ = [
    "CRS_TOLERANCE_M",
    "OUTSIDE_BBOX_TOLERANCE_M",
    "Track",
    "TrackSamples",
    "load_tracks",
    "sample_tracks",
    "track_headings",
]

CRS_TOLERANCE_M = 5.0
"""Largest median gap allowed between a pose's ``x_m/y_m`` and its ``lat/lon`` projected with
the city's CRS; more means the trajectory was projected with another CRS."""

OUTSIDE_BBOX_TOLERANCE_M = 1000.0
"""How far (metres) poses may lie outside the manifest's bbox before the trajectory is taken to
be somewhere else."""

_M_PER_DEG_LAT = 111_320.0


@dataclass(frozen=True, slots=True)
class Track:
    """One trajectory: ``xy`` (N, 2) metres east/north, ``arc_m`` (N,) cumulative distance
    travelled from frame 0, ``heading_deg`` (N,) travel heading estimated from positions over a
    few metres (clockwise from north), ``spacing_m`` the nominal distance between frames,
    ``t_s`` (N,) each pose's time in seconds on the trajectory's clock (None: not known)."""

    id: str
    xy: npt.NDArray[np.float64]
    arc_m: npt.NDArray[np.float64]
    heading_deg: npt.NDArray[np.float64]
    spacing_m: float
    frame_count: int
    t_s: npt.NDArray[np.float64] | None = None

    def __len__(self) -> int:
        return int(self.xy.shape[0])

    @property
    def length_m(self) -> float:
        return float(self.arc_m[-1])

    def point_at(self, arc_m: float | npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Position (2,) metres at ``arc_m`` metres of travel, interpolated between poses;
        (K, 2) for K arcs."""
        x = np.interp(arc_m, self.arc_m, self.xy[:, 0])
        y = np.interp(arc_m, self.arc_m, self.xy[:, 1])
        return np.stack([x, y], axis=-1)


def track_headings(
    xy: npt.NDArray[np.float64], arc_m: npt.NDArray[np.float64], *, window_m: float = 3.0
) -> npt.NDArray[np.float64]:
    """Travel heading (deg clockwise from north) at each point, from the chord between the
    points ``window_m`` behind and ahead along the track: GPS jitter makes frame-to-frame
    differences useless for direction, a few metres of chord are stable."""
    n = xy.shape[0]
    if n < 2:
        return np.zeros(n)
    back = np.searchsorted(arc_m, arc_m - window_m, side="left")
    ahead = np.searchsorted(arc_m, arc_m + window_m, side="right") - 1
    back = np.clip(back, 0, n - 1)
    ahead = np.clip(ahead, 0, n - 1)
    same = ahead <= back
    ahead = np.where(same, np.minimum(back + 1, n - 1), ahead)
    back = np.where(same & (ahead == back), np.maximum(ahead - 1, 0), back)
    d = xy[ahead] - xy[back]
    return np.mod(np.degrees(np.arctan2(d[:, 0], d[:, 1])), 360.0)


def make_track(
    track_id: str,
    xy: npt.NDArray[np.float64],
    *,
    spacing_m: float,
    frame_count: int,
    t_s: npt.NDArray[np.float64] | None = None,
) -> Track:
    """A :class:`Track` from positions (and optionally times, seconds) alone (arc length and
    headings derived)."""
    xy = np.asarray(xy, dtype=np.float64)
    steps = np.hypot(*np.diff(xy, axis=0).T) if len(xy) > 1 else np.zeros(0)
    arc = np.concatenate([[0.0], np.cumsum(steps)])
    return Track(
        id=track_id,
        xy=xy,
        arc_m=arc,
        heading_deg=track_headings(xy, arc),
        spacing_m=float(spacing_m),
        frame_count=int(frame_count),
        t_s=None if t_s is None else np.asarray(t_s, dtype=np.float64),
    )


def _check_crs(
    city: CityDir,
    manifest: CityManifest,
    projection: LocalProjection,
    track_id: str,
    poses: TrajectoryPoses,
) -> None:
    x, y = projection.to_xy(poses.lat, poses.lon)
    gap = float(np.median(np.hypot(x - poses.x_m, y - poses.y_m)))
    if not np.isfinite(gap) or gap > CRS_TOLERANCE_M:
        msg = (
            f"{city.poses_path(track_id)}: x_m/y_m do not match lat/lon under the city CRS "
            f"({manifest.crs}); median gap {gap:.1f} m. The trajectory was projected with another "
            "CRS or belongs to another city; re-ingest it into this city directory"
        )
        raise CityFormatError(msg)


def _check_inside(
    city: CityDir, manifest: CityManifest, track_id: str, poses: TrajectoryPoses
) -> None:
    south, west, north, east = manifest.bbox
    lat = np.asarray(poses.lat)
    lon = np.asarray(poses.lon)
    cos_lat = max(np.cos(np.radians((south + north) / 2.0)), 1e-6)
    dlat = np.maximum(np.maximum(south - lat, lat - north), 0.0) * _M_PER_DEG_LAT
    dlon = np.maximum(np.maximum(west - lon, lon - east), 0.0) * _M_PER_DEG_LAT * cos_lat
    outside = float(np.max(np.hypot(dlat, dlon)))
    if outside > OUTSIDE_BBOX_TOLERANCE_M:
        msg = (
            f"trajectory {track_id!r} lies up to {outside / 1000:.1f} km outside the city bbox "
            f"{manifest.bbox} in {city.manifest_path} (centre of the track: lat "
            f"{float(np.mean(lat)):.5f}, lon {float(np.mean(lon)):.5f}); it was filmed "
            "somewhere else: ingest it into its own city directory"
        )
        raise GraphBuildError(msg)


def load_tracks(city: CityDir, *, require_frames: bool = True) -> tuple[CityManifest, list[Track]]:
    """Read and check every trajectory of ``city``.

    Raises :class:`GraphBuildError` when there are none or one lies outside the city, and
    :class:`CityFormatError` when poses disagree with the city CRS, a pose count disagrees with
    ``frame_count``, or (with ``require_frames``) ``frames.mp4`` is missing.
    """
    manifest = city.read_manifest()
    ids = city.trajectory_ids()
    incomplete = city.incomplete_trajectory_dirs()
    if incomplete:
        shown = ", ".join(str(p) for p in incomplete)
        msg = (
            f"{shown}: no trajectory.json, so the trajectory is incomplete and a build would "
            "leave its streets out of the graph; re-ingest it (`city360 ingest VIDEO --gps "
            "TRACK --out CITY --overwrite`) or remove the folder, then build again"
        )
        raise GraphBuildError(msg)
    if not ids:
        msg = (
            f"{city.trajectories_dir}: no trajectories found; add some with "
            "`city360 ingest VIDEO --gps TRACK --out {city.root}` before `city360 build`"
        )
        raise GraphBuildError(msg)
    projection = manifest.projection  # one pyproj Transformer for all tracks
    tracks = []
    for track_id in ids:
        meta = city.read_trajectory_meta(track_id)
        poses = city.read_poses(track_id)
        if len(poses) != meta.frame_count:
            msg = (
                f"{city.poses_path(track_id)}: {len(poses)} poses but trajectory.json says "
                f"frame_count={meta.frame_count}; re-ingest trajectory {track_id!r}"
            )
            raise CityFormatError(msg)
        if require_frames and not city.frames_path(track_id).is_file():
            msg = (
                f"{city.frames_path(track_id)} is missing; re-ingest trajectory {track_id!r}, "
                "or build with --pose-only for a graph without frames"
            )
            raise CityFormatError(msg)
        xy = np.column_stack([poses.x_m, poses.y_m])
        if not np.all(np.isfinite(xy)):
            msg = f"{city.poses_path(track_id)}: x_m/y_m contain NaN or infinity"
            raise CityFormatError(msg)
        _check_crs(city, manifest, projection, track_id, poses)
        _check_inside(city, manifest, track_id, poses)
        tracks.append(
            make_track(
                track_id,
                xy,
                spacing_m=meta.spacing_m,
                frame_count=meta.frame_count,
                t_s=np.asarray(poses.t_s, dtype=np.float64),
            )
        )
    return manifest, tracks


TrackSamples = tuple[
    npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.int64], npt.NDArray[np.float64]
]
"""Samples of tracks (:func:`sample_tracks`): positions (S, 2) in metres, travel headings (S,)
in degrees, the index of the track each belongs to (S,), and its arc length along that track
(S,) in metres."""


def sample_tracks(tracks: Sequence[Track], step_m: float) -> TrackSamples:
    """Each track's frames nearest to every ``step_m`` metres of travel from its start (a
    frame once), all tracks' samples in track order; empty arrays for no tracks."""
    if not tracks:
        empty = np.zeros(0)
        return np.zeros((0, 2)), empty, np.zeros(0, dtype=np.int64), empty
    xy, heading, owner, arc = [], [], [], []
    for k, track in enumerate(tracks):
        marks = np.arange(0.0, track.length_m + 1e-9, step_m)
        idx = np.unique(np.clip(np.searchsorted(track.arc_m, marks), 0, len(track) - 1))
        xy.append(track.xy[idx])
        heading.append(track.heading_deg[idx])
        owner.append(np.full(idx.shape[0], k, dtype=np.int64))
        arc.append(track.arc_m[idx])
    return (
        np.concatenate(xy),
        np.concatenate(heading),
        np.concatenate(owner),
        np.concatenate(arc),
    )
