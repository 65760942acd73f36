"""GPS as a phone or camera writes it: 1 Hz fixes with realistic error, saved as GPX.

Error model (horizontal, metres):

* a correlated part, a first-order Gauss-Markov random walk per axis (multipath and atmosphere
  drift slowly: correlation time ``correlation_time_s``), carrying ``correlated_share`` of the
  error variance;
* white noise per fix for the rest;
* the sum is scaled so that its root-mean-square horizontal error over the video is exactly
  ``sigma_m`` (a short track would otherwise miss the requested figure by chance, because the
  slow part has few independent samples);
* occasional outliers (a fix thrown ``outlier_range_m`` away, as after a reflection), excluded
  from the RMS;
* occasional dropouts (no fix for a few seconds, as under a roof or in a street canyon);
* optionally, urban-canyon bursts (``canyon_rate_per_min``): for ``canyon_duration_s`` the fixes
  sit ``canyon_offset_m`` off the true path in one direction (a receiver locked on reflections
  from a facade), ramping in and out over two seconds, excluded from the RMS like outliers;
* optionally, slow drift (``drift_m``): a bias that is a first-order Gauss-Markov process of
  horizontal RMS ``drift_m`` and correlation time ``drift_time_s`` (a receiver's position
  wandering for minutes while it tracks few satellites), added after the RMS scaling. It is
  stationary, as GNSS position error is: the bias wanders but does not grow with the length
  of the walk (an integrated random velocity, this model before, reached ~19 m RMS after
  30 minutes at 0.02 m/s).

Named presets (:data:`GPS_MODELS`, ``city360 synth --gps-model``): ``phone`` (the defaults: a
phone in a city centre, 1 Hz), ``camera`` (an action camera's receiver: 10 Hz, more correlated
error, 1 m of slow drift, more dropouts) and ``canyon`` (narrow streets between tall
buildings: 5 m RMS, a 10-30 m burst a minute, 2 m of slow drift, dropouts). Rates from 0.2 to
20 Hz are accepted.

Clock: a fix taken when the camera's clock shows ``creation_time + t`` (t = video time) is
stamped ``creation_time + t + clock_offset_s``; fixes fall on whole seconds of GPS time. So
``clock_offset_s`` is GPS time minus camera (MP4 creation) time, as in ``VideoTruth``.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from city360.errors import ConfigError
from city360.geo import LocalProjection
from city360.synth.routes import PathSampler

__all__ = ["GPS_MODELS", "GpsNoise", "GpsTrack", "gps_model", "simulate_gps", "write_gpx"]


@dataclass(frozen=True, slots=True)
class GpsNoise:
    """How a synthetic GPS errs. Defaults resemble a phone in a city centre."""

    sigma_m: float = 3.0
    """Root-mean-square horizontal error of the non-outlier fixes, metres."""
    correlated_share: float = 0.3
    """Share of the error variance in the slow random walk (the rest is white)."""
    correlation_time_s: float = 30.0
    """Correlation time of the slow part, seconds."""
    outlier_rate: float = 0.01
    """Probability that a fix is an outlier."""
    outlier_range_m: tuple[float, float] = (15.0, 40.0)
    """Distance range an outlier is thrown, metres."""
    dropout_rate_per_min: float = 0.2
    """Expected dropouts per minute of video."""
    dropout_duration_s: tuple[float, float] = (3.0, 10.0)
    """Duration range of a dropout, seconds."""
    rate_hz: float = 1.0
    """Fixes per second."""
    elevation_m: float = 15.0
    """Mean elevation written to the GPX, metres."""
    canyon_rate_per_min: float = 0.0
    """Expected urban-canyon bursts per minute of video (0: none)."""
    canyon_duration_s: tuple[float, float] = (5.0, 20.0)
    """Duration range of a burst, seconds."""
    canyon_offset_m: tuple[float, float] = (10.0, 30.0)
    """Range of a burst's offset from the true path, metres."""
    drift_m: float = 0.0
    """Horizontal root-mean-square of the slow drift bias, metres (0: no drift)."""
    drift_time_s: float = 600.0
    """Correlation time of the drift bias, seconds."""

    def __post_init__(self) -> None:
        checks = {
            "sigma_m": self.sigma_m >= 0,
            "correlated_share": 0 <= self.correlated_share <= 1,
            "correlation_time_s": self.correlation_time_s > 0,
            "outlier_rate": 0 <= self.outlier_rate < 1,
            "dropout_rate_per_min": self.dropout_rate_per_min >= 0,
            "rate_hz": 0.2 <= self.rate_hz <= 20.0,
            "canyon_rate_per_min": self.canyon_rate_per_min >= 0,
            "canyon_duration_s": 0 < self.canyon_duration_s[0] <= self.canyon_duration_s[1],
            "canyon_offset_m": 0 <= self.canyon_offset_m[0] <= self.canyon_offset_m[1],
            "drift_m": self.drift_m >= 0,
            "drift_time_s": self.drift_time_s > 0,
        }
        for name, ok in checks.items():
            if not ok:
                msg = f"GPS noise `{name}` is out of range: {getattr(self, name)!r}"
                raise ConfigError(msg)


@dataclass(frozen=True, slots=True)
class GpsTrack:
    """The fixes written to one GPX, with what is true about them.

    ``video_t_s`` is the video time each fix describes; ``time_utc`` its GPS timestamp;
    ``true_xy`` where the camera really was; ``lat``/``lon`` what the GPS reported.
    ``outlier_indices`` index these arrays; ``dropout_spans_s`` are (start, end) video times
    without fixes; ``canyon_spans_s`` (start, end) video times of urban-canyon bursts.
    """

    video_t_s: npt.NDArray[np.float64] = field(repr=False)
    time_utc: tuple[dt.datetime, ...] = field(repr=False)
    true_xy: npt.NDArray[np.float64] = field(repr=False)
    lat: npt.NDArray[np.float64] = field(repr=False)
    lon: npt.NDArray[np.float64] = field(repr=False)
    elevation_m: npt.NDArray[np.float64] = field(repr=False)
    outlier_indices: tuple[int, ...]
    dropout_spans_s: tuple[tuple[float, float], ...]
    clock_offset_s: float
    canyon_spans_s: tuple[tuple[float, float], ...] = ()

    def __len__(self) -> int:
        return int(self.video_t_s.shape[0])


def _gauss_markov(
    rng: np.random.Generator, count: int, *, step_s: float, tau_s: float
) -> npt.NDArray[np.float64]:
    """(count, 2) unit-variance first-order Gauss-Markov process sampled every ``step_s``."""
    phi = math.exp(-step_s / tau_s)
    innovation = rng.standard_normal((count, 2)) * math.sqrt(1.0 - phi * phi)
    out = np.empty((count, 2), np.float64)
    state = rng.standard_normal(2)
    for i in range(count):
        state = phi * state + innovation[i]
        out[i] = state
    return out


def _rms(error: npt.NDArray[np.float64]) -> float:
    """Root-mean-square length of (N, 2) error vectors (0 for none)."""
    return math.sqrt(float(np.mean(np.sum(error * error, axis=1)))) if len(error) else 0.0


def _scale_to_rms(error: npt.NDArray[np.float64], target_m: float) -> npt.NDArray[np.float64]:
    rms = _rms(error)
    return error * (target_m / rms) if rms > 0 else error * 0.0


def _dropout_spans(
    rng: np.random.Generator, duration_s: float, noise: GpsNoise
) -> list[tuple[float, float]]:
    return _random_spans(
        rng, duration_s, rate_per_min=noise.dropout_rate_per_min, span_s=noise.dropout_duration_s
    )


def _random_spans(
    rng: np.random.Generator,
    duration_s: float,
    *,
    rate_per_min: float,
    span_s: tuple[float, float],
) -> list[tuple[float, float]]:
    """Poisson-many (start, end) video-time spans, merged where they overlap."""
    expected = rate_per_min * duration_s / 60.0
    count = int(rng.poisson(expected))
    spans: list[tuple[float, float]] = []
    # Spans start after the first fix so every track has a first true position.
    for start in sorted(rng.uniform(2.0, max(duration_s - 2.0, 2.0), count)):
        length = float(rng.uniform(*span_s))
        end = min(float(start) + length, duration_s)
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], end))
        else:
            spans.append((round(float(start), 3), round(end, 3)))
    return spans


def simulate_gps(
    sampler: PathSampler,
    *,
    speed_mps: float,
    duration_s: float,
    creation_time: dt.datetime,
    projection: LocalProjection,
    noise: GpsNoise,
    clock_offset_s: float,
    rng: np.random.Generator,
    distance_m: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None = None,
) -> GpsTrack:
    """Fixes for a camera walking ``sampler``'s path at ``speed_mps`` for ``duration_s``, or,
    with ``distance_m`` = (video seconds, metres along the path), as far as that says.

    ``creation_time`` is the camera clock at video time 0 (UTC). All randomness comes from
    ``rng``, so a seeded generator gives the same track.
    """
    step_s = 1.0 / noise.rate_hz
    gps_start = creation_time.timestamp() + clock_offset_s
    first_tick = math.ceil(gps_start * noise.rate_hz - 1e-9) / noise.rate_hz
    first_t = first_tick - gps_start
    count = math.floor((duration_s - first_t) / step_s + 1e-9) + 1
    video_t = first_t + step_s * np.arange(max(count, 0), dtype=np.float64)
    walked = (
        np.interp(video_t, distance_m[0], distance_m[1])
        if distance_m is not None
        else video_t * speed_mps
    )
    true_xy = sampler.xy_at(np.minimum(walked, sampler.length_m))

    correlated = _gauss_markov(rng, len(video_t), step_s=step_s, tau_s=noise.correlation_time_s)
    white = rng.standard_normal((len(video_t), 2))
    share = noise.correlated_share
    error = _scale_to_rms(correlated, math.sqrt(share)) + _scale_to_rms(white, math.sqrt(1 - share))
    spans = _dropout_spans(rng, duration_s, noise)
    keep = np.ones(len(video_t), bool)
    for start, end in spans:
        keep &= ~((video_t >= start) & (video_t < end))
    # Exact RMS over the fixes actually written.
    kept_rms = _rms(error[keep])
    error = error * (noise.sigma_m / kept_rms) if kept_rms > 0 else error * 0.0
    elevation = noise.elevation_m + 1.5 * correlated[:, 0] * max(noise.sigma_m, 0.5)

    outlier_mask = rng.random(len(video_t)) < noise.outlier_rate
    outlier_mask[0] = False
    bearings = rng.uniform(0.0, 2 * math.pi, len(video_t))
    distances = rng.uniform(*noise.outlier_range_m, len(video_t))
    jumps = np.stack([np.sin(bearings), np.cos(bearings)], axis=1) * distances[:, None]
    reported = true_xy + error + np.where(outlier_mask[:, None], jumps, 0.0)
    # optional parts draw from ``rng`` only when enabled, so the phone preset's bytes are
    # those of the model before they existed
    canyon: list[tuple[float, float]] = []
    if noise.canyon_rate_per_min > 0:
        canyon = _random_spans(
            rng, duration_s, rate_per_min=noise.canyon_rate_per_min, span_s=noise.canyon_duration_s
        )
        reported = reported + _canyon_offsets(rng, video_t, canyon, noise)
    if noise.drift_m > 0:
        reported = reported + _drift(rng, video_t, noise)

    lat, lon = projection.to_latlon(reported[keep, 0], reported[keep, 1])
    kept_t = video_t[keep]
    base = dt.datetime.fromtimestamp(first_tick, dt.UTC)
    times = tuple(base + dt.timedelta(seconds=round(float(t - first_t), 6)) for t in kept_t)
    return GpsTrack(
        video_t_s=kept_t,
        time_utc=times,
        true_xy=true_xy[keep],
        lat=np.asarray(lat, np.float64),
        lon=np.asarray(lon, np.float64),
        elevation_m=elevation[keep],
        outlier_indices=tuple(int(i) for i in np.flatnonzero(outlier_mask[keep])),
        dropout_spans_s=tuple(spans),
        clock_offset_s=float(clock_offset_s),
        canyon_spans_s=tuple(canyon),
    )


def _canyon_offsets(
    rng: np.random.Generator,
    video_t: npt.NDArray[np.float64],
    spans: list[tuple[float, float]],
    noise: GpsNoise,
) -> npt.NDArray[np.float64]:
    """(N, 2) offsets: inside each span one direction and size, ramped over 2 s at its ends."""
    out = np.zeros((len(video_t), 2))
    for start, end in spans:
        bearing = float(rng.uniform(0.0, 2 * math.pi))
        size = float(rng.uniform(*noise.canyon_offset_m))
        ramp = np.clip(np.minimum(video_t - start, end - video_t) / 2.0, 0.0, 1.0)
        weight = np.where((video_t >= start) & (video_t < end), ramp, 0.0)
        out += weight[:, None] * size * np.array([math.sin(bearing), math.cos(bearing)])
    return out


def _drift(
    rng: np.random.Generator, video_t: npt.NDArray[np.float64], noise: GpsNoise
) -> npt.NDArray[np.float64]:
    """(N, 2) slow drift bias: a stationary first-order Gauss-Markov process of horizontal
    RMS ``drift_m`` (``drift_m / sqrt(2)`` per axis), its state drawn from that distribution at
    the first fix (the receiver was on before the video started)."""
    if len(video_t) < 2:
        return np.zeros((len(video_t), 2))
    step_s = float(video_t[1] - video_t[0])
    unit = _gauss_markov(rng, len(video_t), step_s=step_s, tau_s=noise.drift_time_s)
    return unit * (noise.drift_m / math.sqrt(2.0))


GPS_MODELS: dict[str, GpsNoise] = {
    "phone": GpsNoise(),
    "camera": GpsNoise(
        sigma_m=2.5,
        correlated_share=0.6,
        correlation_time_s=20.0,
        outlier_rate=0.002,
        dropout_rate_per_min=0.5,
        dropout_duration_s=(2.0, 8.0),
        rate_hz=10.0,
        drift_m=1.0,
    ),
    "canyon": GpsNoise(
        sigma_m=5.0,
        correlated_share=0.5,
        outlier_rate=0.02,
        dropout_rate_per_min=0.5,
        canyon_rate_per_min=1.0,
        drift_m=2.0,
    ),
}
"""Named error models (see the module docstring); ``phone`` is the default."""


def gps_model(name: str, *, sigma_m: float | None = None) -> GpsNoise:
    """The preset ``name`` of :data:`GPS_MODELS`, with its RMS error replaced by ``sigma_m``
    when given. Raises :class:`ConfigError` for an unknown name, naming the known ones."""
    import dataclasses
    import difflib

    if name not in GPS_MODELS:
        close = difflib.get_close_matches(name, GPS_MODELS, n=1)
        hint = f". Did you mean {close[0]!r}?" if close else ""
        msg = f"unknown GPS model {name!r}; expected one of {', '.join(GPS_MODELS)}{hint}"
        raise ConfigError(msg)
    model = GPS_MODELS[name]
    return model if sigma_m is None else dataclasses.replace(model, sigma_m=float(sigma_m))


def write_gpx(path: str | Path, track: GpsTrack, *, name: str) -> Path:
    """Write ``track`` as a GPX 1.1 file with one track and one segment, atomically."""
    import gpxpy.gpx

    from city360._atomic import atomic_write_text

    gpx = gpxpy.gpx.GPX()
    gpx.creator = "city360 synth (simulated phone GPS)"
    gpx_track = gpxpy.gpx.GPXTrack(name=name)
    segment = gpxpy.gpx.GPXTrackSegment()
    for i in range(len(track)):
        segment.points.append(
            gpxpy.gpx.GPXTrackPoint(
                latitude=round(float(track.lat[i]), 8),
                longitude=round(float(track.lon[i]), 8),
                elevation=round(float(track.elevation_m[i]), 1),
                time=track.time_utc[i],
            )
        )
    gpx_track.segments.append(segment)
    gpx.tracks.append(gpx_track)
    return atomic_write_text(path, gpx.to_xml(version="1.1"))
