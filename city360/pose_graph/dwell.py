"""Stops left alone: the poses of a span where the camera stood still held at one place.

Ingest collapses a stop to one point when the GPS stands still (:mod:`city360.video_store.clean`),
but under urban-canyon GPS a long stop (the Hamburg twin's 18 minutes) lets the fix creep and
wander a few metres in every direction, and the spatial resampling turns the creep into a knot
of poses one metre apart, each step taking tens of seconds. To the junction votes the knot is
many short passes crossing at all angles, and a build without OSM put a false junction there.

A step between two poses is *still* when it takes at least ``min_step_s`` seconds and moves
slower than ``speed_mps`` (a walker covers a metre in about a second; a creeping fix needs tens
of seconds). Consecutive still steps form a span; every pose of a span (both ends included) is
held at the span's median position, so a stop is one place of one pass, whatever the GPS did
meanwhile. A span whose poses lie further than ``max_spread_m`` from its median is a slow walk,
not a stop, and is left as it is. Tracks without times (all ``t_s`` equal) have no still step.

Positions are metres east/north in the city CRS, times seconds on the trajectory's clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from city360.pose_graph.tracks import Track, make_track

__all__ = ["DwellParams", "hold_still_spans", "still_spans"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class DwellParams:
    """Parameters of :func:`still_spans` (metres, seconds)."""

    speed_mps: float = 0.25
    """A step slower than this is still (the speed ingest's stationary test uses)."""
    min_step_s: float = 3.0
    """... when it also takes at least this long (a pause of a frame or two is no stop)."""
    max_spread_m: float = 10.0
    """A span whose poses lie further than this from its median is a slow walk, left alone."""


def still_spans(track: Track, params: DwellParams | None = None) -> list[tuple[int, int]]:
    """``(first, last)`` pose indices (inclusive) of each span of consecutive still steps of
    ``track`` (see the module docstring); empty when the track has no times."""
    params = params or DwellParams()
    if track.t_s is None or len(track) < 2:
        return []
    step_m = np.hypot(*np.diff(track.xy, axis=0).T)
    step_s = np.diff(track.t_s)
    still = (step_s >= params.min_step_s) & (step_m < params.speed_mps * step_s)
    if not still.any():
        return []
    # runs of True in `still`: step k joins poses k and k + 1
    edges = np.diff(np.concatenate([[0], still.astype(np.int8), [0]]))
    starts = np.flatnonzero(edges == 1)
    stops = np.flatnonzero(edges == -1)  # one past the last still step of the run
    spans = []
    for first, end in zip(starts, stops, strict=True):
        last = int(end)  # the pose after the last still step
        held = track.xy[first : last + 1]
        spread = np.hypot(*(held - np.median(held, axis=0)).T).max()
        if spread <= params.max_spread_m:
            spans.append((int(first), last))
    return spans


def hold_still_spans(tracks: Sequence[Track], params: DwellParams | None = None) -> list[Track]:
    """The same tracks (same ids, frames, spacing and times) with the poses of every still span
    moved to the span's median position (see the module docstring)."""
    held_tracks = []
    for track in tracks:
        spans = still_spans(track, params)
        if not spans:
            held_tracks.append(track)
            continue
        xy = track.xy.copy()
        for first, last in spans:
            xy[first : last + 1] = np.median(track.xy[first : last + 1], axis=0)
        held_tracks.append(
            make_track(
                track.id,
                xy,
                spacing_m=track.spacing_m,
                frame_count=track.frame_count,
                t_s=track.t_s,
            )
        )
    return held_tracks
