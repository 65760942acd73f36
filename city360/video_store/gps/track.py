"""The raw GPS track every reader returns, before cleaning."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from city360.errors import GpsError
from city360.video_store.gps.quality import FIX_NONE, FixQuality

__all__ = ["GpsTrack", "usable_mask", "validate_track"]


@dataclass(frozen=True, slots=True)
class GpsTrack:
    """GPS fixes as numpy columns, in file order.

    ``t_s``: POSIX seconds (UTC) on the GPS clock; ``lat``/``lon``: WGS84 degrees (NaN where a
    record has no fix); ``alt_m``: metres (NaN when unknown); ``has_fix``: False for records the
    receiver marked as without a fix. ``video_start_utc`` is set by readers of tracks embedded in
    the video itself (GPMF, CAMM): the GPS time of the video's first frame, which makes the
    container's creation time (often local time on cameras) unnecessary for synchronisation.
    ``quality``: the per-fix DOP, satellites, fix type and accuracy the file reports
    (:class:`~city360.video_store.gps.quality.FixQuality`; empty when it reports none).
    """

    source: Path
    kind: str
    t_s: npt.NDArray[np.float64]
    lat: npt.NDArray[np.float64]
    lon: npt.NDArray[np.float64]
    alt_m: npt.NDArray[np.float64]
    has_fix: npt.NDArray[np.bool_]
    video_start_utc: float | None = None
    quality: FixQuality = field(default_factory=FixQuality)

    def __len__(self) -> int:
        return int(self.t_s.shape[0])

    @classmethod
    def from_columns(
        cls,
        source: Path,
        kind: str,
        t_s: npt.ArrayLike,
        lat: npt.ArrayLike,
        lon: npt.ArrayLike,
        alt_m: npt.ArrayLike | None = None,
        has_fix: npt.ArrayLike | None = None,
        *,
        video_start_utc: float | None = None,
        quality: FixQuality | None = None,
    ) -> GpsTrack:
        """A track from columns; ``quality`` is checked (:meth:`FixQuality.check`) and a fix
        whose ``fix_type`` says none is marked without a fix."""
        t = np.asarray(t_s, np.float64)
        n = t.shape[0]
        quality = quality or FixQuality()
        quality.check(source, n)
        fix = np.ones(n, bool) if has_fix is None else np.asarray(has_fix, bool)
        if quality.fix_type is not None:
            fix = fix & (quality.fix_type != FIX_NONE)
        return cls(
            source=source,
            kind=kind,
            t_s=t,
            lat=np.asarray(lat, np.float64),
            lon=np.asarray(lon, np.float64),
            alt_m=np.full(n, np.nan) if alt_m is None else np.asarray(alt_m, np.float64),
            has_fix=fix,
            video_start_utc=video_start_utc,
            quality=quality,
        )


def _null_island(track: GpsTrack) -> npt.NDArray[np.bool_]:
    """Points at exactly lat 0, lon 0: what loggers, cameras and phones write before their
    first fix (or when they lose it), in the sea off West Africa; never a place filmed."""
    return np.asarray((track.lat == 0.0) & (track.lon == 0.0), bool)


def _why_unusable(
    track: GpsTrack, finite: npt.NDArray[np.bool_], in_range: npt.NDArray[np.bool_]
) -> str:
    """Why the points of ``track`` left out were left out: counts by cause, and the first
    point out of range (1-based, in file order) with its value, since a bad value is what the
    user has to find in the file."""
    reasons: list[str] = []
    nan_count = int((~finite).sum())
    if nan_count:
        reasons.append(f"{nan_count} have NaN or missing values")
    out = finite & ~in_range
    if out.any():
        first = int(np.argmax(out))
        reasons.append(
            f"{int(out.sum())} with lat/lon out of range, the first point {first + 1}: "
            f"lat {track.lat[first]}, lon {track.lon[first]}"
        )
    null = _null_island(track) & finite
    if null.any():
        reasons.append(
            f"{int(null.sum())} at lat 0, lon 0, a receiver's stand-in for no fix (the first "
            f"point {int(np.argmax(null)) + 1})"
        )
    no_fix = int((finite & in_range & ~null & ~track.has_fix).sum())
    if no_fix:
        reasons.append(
            "none has a GPS fix" if no_fix == len(track) else f"{no_fix} without a GPS fix"
        )
    return "; ".join(reasons)


def usable_mask(track: GpsTrack) -> npt.NDArray[np.bool_]:
    """Which points of ``track`` have a position: a fix, finite time/lat/lon, lat/lon in range,
    not exactly 0, 0 (:func:`validate_track` keeps these, less repeated times)."""
    finite = np.isfinite(track.t_s) & np.isfinite(track.lat) & np.isfinite(track.lon)
    in_range = (np.abs(track.lat) <= 90) & (np.abs(track.lon) <= 180)
    return np.asarray(track.has_fix & finite & in_range & ~_null_island(track), bool)


def validate_track(track: GpsTrack) -> GpsTrack:
    """Reject tracks that cannot give a trajectory; return the usable fixes, sorted by time.

    Usable: has a fix (a fix type of none is none), finite time/lat/lon, lat/lon in range
    and not exactly 0, 0 (a receiver's stand-in for no fix: three such points at a log's start
    put a Tokyo walk's city centre in the Mediterranean and refused it as 3478 km away).
    The quality columns follow the fixes kept. At least two usable fixes at distinct times
    and places are needed to know where the camera went.
    """
    src = track.source
    if len(track) == 0:
        msg = f"GPS track {src} has no points; export the track again with its points"
        raise GpsError(msg)
    finite = np.isfinite(track.t_s) & np.isfinite(track.lat) & np.isfinite(track.lon)
    in_range = (np.abs(track.lat) <= 90) & (np.abs(track.lon) <= 180)
    usable = usable_mask(track)
    n_usable = int(usable.sum())
    if n_usable == 0:
        why = _why_unusable(track, finite, in_range)
        msg = f"GPS track {src}: no usable point among {len(track)} ({why}); check the logger"
        raise GpsError(msg)
    if n_usable == 1:
        msg = (
            f"GPS track {src} has a single usable point"
            + (
                f" of {len(track)} ({_why_unusable(track, finite, in_range)})"
                if len(track) > 1
                else ""
            )
            + "; a trajectory needs a track of at least two points at different places"
        )
        raise GpsError(msg)
    order = np.argsort(track.t_s[usable], kind="stable")
    t = track.t_s[usable][order]
    lat, lon = track.lat[usable][order], track.lon[usable][order]
    keep = np.concatenate([[True], np.diff(t) > 0])  # first fix wins when times repeat
    t, lat, lon = t[keep], lat[keep], lon[keep]
    if t.shape[0] < 2:
        msg = f"GPS track {src}: every usable point has the same time stamp; check the logger"
        raise GpsError(msg)
    if np.ptp(lat) == 0 and np.ptp(lon) == 0:
        msg = (
            f"GPS track {src}: all {t.shape[0]} points are identical "
            f"({lat[0]:.6f}, {lon[0]:.6f}); the camera never moved, so there is nothing "
            "to resample by distance"
        )
        raise GpsError(msg)
    alt = track.alt_m[usable][order][keep]
    chosen = np.flatnonzero(usable)[order][keep]
    return GpsTrack(
        source=src,
        kind=track.kind,
        t_s=t,
        lat=lat,
        lon=lon,
        alt_m=alt,
        has_fix=np.ones(t.shape[0], bool),
        video_start_utc=track.video_start_utc,
        quality=track.quality.take(chosen),
    )
