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

Reported quality (``report_quality``, off by default; on in the ``canyon`` preset): each fix
also carries an HDOP, a satellite count and a fix type, as a receiver writes them, and the
error follows the HDOP the way real receivers' does, without the HDOP being an oracle:

* satellite geometry is a slow process: log HDOP is a first-order Gauss-Markov process around
  ``log(hdop_median)`` with spread ``hdop_log_sigma`` and correlation time ``hdop_time_s``
  (satellites rise and set over minutes; buildings block them street by street);
* the fix error (white plus correlated part) is scaled by the geometry, ``hdop / rms(hdop)``,
  before the exact-RMS scaling, so the track's RMS error is still ``sigma_m``: a fix with HDOP
  3 is three times as far off *on average* as one with HDOP 1, but any one fix is still a
  random draw;
* what multipath does is *not* in the HDOP, as on real receivers (the satellites are all
  tracked, only their signals arrive by a reflection): canyon bursts raise the HDOP by a
  mere ``canyon_hdop_factor`` (a few satellites lost behind the facade), while their fixes sit
  10-30 m off; outliers and the slow drift leave the HDOP alone;
* the HDOP is written rounded to 0.1, as NMEA and GPX writers do; satellites ~ ``4 + 8 / hdop``
  plus one of noise, clipped to 4..24; the fix type is 3d, 2d below 5 satellites.

Quality draws come from a generator spawned off ``rng``, so with ``report_quality`` off a
track's bytes are those of the model before it existed.

Named presets (:data:`GPS_MODELS`, ``city360 synth --gps-model``): ``phone`` (the defaults: a
phone in a city centre, 1 Hz), ``camera`` (an action camera's receiver: 10 Hz, more correlated
error, 1 m of slow drift, more dropouts) and ``canyon`` (narrow streets between tall
buildings: 5 m RMS, a 10-30 m burst a minute, 2 m of slow drift, dropouts; it reports quality,
HDOP around 1.6 and more variable than under open sky). Rates from 0.2 to 20 Hz are accepted.
``city360 synth --gps-quality/--no-gps-quality`` turns reported quality on or off for any
preset (:func:`gps_model`'s ``report_quality``).

Writers: :func:`write_gpx` (GPX 1.1, with ``<fix>``, ``<sat>`` and ``<hdop>`` when the track
reports quality), :func:`write_nmea` (RMC + GGA, and GSA when quality is reported) and
:func:`write_csv` (``time,lat,lon,alt[,hdop,satellites,fix]``), each readable by
:func:`city360.video_store.gps.read_track`.

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

__all__ = [
    "GPS_MODELS",
    "GpsNoise",
    "GpsTrack",
    "gps_model",
    "simulate_gps",
    "write_csv",
    "write_gpx",
    "write_nmea",
]


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
    report_quality: bool = False
    """Write HDOP, satellites and fix type per fix, and let the error follow the HDOP (see the
    module docstring)."""
    hdop_median: float = 1.0
    """Median HDOP (dimensionless) of the satellite geometry."""
    hdop_log_sigma: float = 0.35
    """Spread of natural-log HDOP over time."""
    hdop_time_s: float = 90.0
    """Correlation time of the satellite geometry, seconds."""
    canyon_hdop_factor: float = 1.3
    """HDOP multiplier inside an urban-canyon burst (its error is far larger: multipath)."""

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
            "hdop_median": self.hdop_median > 0,
            "hdop_log_sigma": self.hdop_log_sigma >= 0,
            "hdop_time_s": self.hdop_time_s > 0,
            "canyon_hdop_factor": self.canyon_hdop_factor >= 1,
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
    without fixes; ``canyon_spans_s`` (start, end) video times of urban-canyon bursts;
    ``hdop``/``satellites``/``fix_type`` what the receiver reports of each fix (None when the
    model does not report quality).
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
    hdop: npt.NDArray[np.float64] | None = field(default=None, repr=False)
    """HDOP the receiver reports per fix (dimensionless, 0.1 steps); None: not reported."""
    satellites: npt.NDArray[np.int64] | None = field(default=None, repr=False)
    """Satellites used per fix; None: not reported."""
    fix_type: tuple[str, ...] | None = field(default=None, repr=False)
    """GPX fix type per fix (``2d``/``3d``); None: not reported."""

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
    quality_rng = rng.spawn(1)[0] if noise.report_quality else None
    geometry = None
    if quality_rng is not None:
        geometry = _geometry_hdop(quality_rng, len(video_t), step_s=step_s, noise=noise)
        error = error * (geometry / math.sqrt(float(np.mean(geometry[keep] ** 2))))[:, None]
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

    hdop: npt.NDArray[np.float64] | None = None
    satellites: npt.NDArray[np.int64] | None = None
    fix_type: tuple[str, ...] | None = None
    if quality_rng is not None and geometry is not None:
        all_hdop, all_sats, all_fixes = _reported_quality(
            quality_rng, video_t, geometry, canyon, noise
        )
        hdop, satellites = all_hdop[keep], all_sats[keep]
        fix_type = tuple(f for f, kept in zip(all_fixes, keep, strict=True) if kept)
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
        hdop=hdop,
        satellites=satellites,
        fix_type=fix_type,
    )


def _geometry_hdop(
    rng: np.random.Generator, count: int, *, step_s: float, noise: GpsNoise
) -> npt.NDArray[np.float64]:
    """True HDOP of the satellite geometry at each fix: log-normal, slowly varying."""
    unit = _gauss_markov(rng, count, step_s=step_s, tau_s=noise.hdop_time_s)[:, 0]
    return noise.hdop_median * np.exp(noise.hdop_log_sigma * unit)


def _reported_quality(
    rng: np.random.Generator,
    video_t: npt.NDArray[np.float64],
    geometry: npt.NDArray[np.float64],
    canyon: list[tuple[float, float]],
    noise: GpsNoise,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], list[str]]:
    """``(hdop, satellites, fix_type)`` as written: the geometry HDOP, a little higher in a
    canyon burst (not as much as its error: multipath does not show), rounded to 0.1."""
    in_canyon = np.zeros(len(video_t), bool)
    for start, end in canyon:
        in_canyon |= (video_t >= start) & (video_t < end)
    hdop = geometry * np.where(in_canyon, noise.canyon_hdop_factor, 1.0)
    hdop = np.maximum(np.round(hdop, 1), 0.5)
    satellites = np.clip(np.round(4 + 8 / hdop + rng.normal(0, 1, len(hdop))), 4, 24)
    fixes = ["2d" if n < 5 else "3d" for n in satellites]
    return hdop, satellites.astype(np.int64), fixes


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
        report_quality=True,
        hdop_median=1.6,
        hdop_log_sigma=0.45,
    ),
}
"""Named error models (see the module docstring); ``phone`` is the default."""


def gps_model(
    name: str, *, sigma_m: float | None = None, report_quality: bool | None = None
) -> GpsNoise:
    """The preset ``name`` of :data:`GPS_MODELS`, with its RMS error replaced by ``sigma_m``
    (metres) and its ``report_quality`` by ``report_quality`` when given (None: the preset's).
    Raises :class:`ConfigError` for an unknown name, naming the known ones."""
    import dataclasses
    import difflib

    if name not in GPS_MODELS:
        close = difflib.get_close_matches(name, GPS_MODELS, n=1)
        hint = f". Did you mean {close[0]!r}?" if close else ""
        msg = f"unknown GPS model {name!r}; expected one of {', '.join(GPS_MODELS)}{hint}"
        raise ConfigError(msg)
    model = GPS_MODELS[name]
    if sigma_m is not None:
        model = dataclasses.replace(model, sigma_m=float(sigma_m))
    if report_quality is not None:
        model = dataclasses.replace(model, report_quality=bool(report_quality))
    return model


def write_gpx(path: str | Path, track: GpsTrack, *, name: str) -> Path:
    """Write ``track`` as a GPX 1.1 file with one track and one segment, atomically; each
    point carries ``<fix>``, ``<sat>`` and ``<hdop>`` when the track reports quality."""
    import gpxpy.gpx

    from city360._atomic import atomic_write_text

    gpx = gpxpy.gpx.GPX()
    gpx.creator = "city360 synth (simulated phone GPS)"
    gpx_track = gpxpy.gpx.GPXTrack(name=name)
    segment = gpxpy.gpx.GPXTrackSegment()
    for i in range(len(track)):
        point = gpxpy.gpx.GPXTrackPoint(
            latitude=round(float(track.lat[i]), 8),
            longitude=round(float(track.lon[i]), 8),
            elevation=round(float(track.elevation_m[i]), 1),
            time=track.time_utc[i],
        )
        if track.hdop is not None and track.satellites is not None and track.fix_type:
            point.type_of_gpx_fix = track.fix_type[i]
            point.satellites = int(track.satellites[i])
            point.horizontal_dilution = float(track.hdop[i])
        segment.points.append(point)
    gpx_track.segments.append(segment)
    gpx.tracks.append(gpx_track)
    return atomic_write_text(path, gpx.to_xml(version="1.1"))


def _nmea_sentence(body: str) -> str:
    checksum = 0
    for char in body:
        checksum ^= ord(char)
    return f"${body}*{checksum:02X}"


def _nmea_angle(value: float, *, degree_digits: int, hemispheres: str) -> tuple[str, str]:
    """``(d)ddmm.mmmmmm`` and its hemisphere letter for decimal degrees ``value``."""
    hemisphere = hemispheres[1] if value < 0 else hemispheres[0]
    degrees, minutes = divmod(abs(value) * 60.0, 60.0)
    minutes = round(minutes, 6)
    if minutes >= 60.0:  # rounding carried into the next degree
        degrees, minutes = degrees + 1, 0.0
    return f"{int(degrees):0{degree_digits}d}{minutes:09.6f}", hemisphere


def write_nmea(path: str | Path, track: GpsTrack) -> Path:
    """Write ``track`` as an NMEA 0183 log, atomically: per fix an RMC (date, position) and a
    GGA (fix quality 1, satellites, HDOP, altitude), then a GSA (fix mode, HDOP; PDOP and
    VDOP left empty: the model has none) when the track reports quality."""
    from city360._atomic import atomic_write_text

    lines = []
    for i in range(len(track)):
        stamp = track.time_utc[i]
        clock = stamp.strftime("%H%M%S.") + f"{stamp.microsecond // 10_000:02d}"
        date = stamp.strftime("%d%m%y")
        lat, ns = _nmea_angle(float(track.lat[i]), degree_digits=2, hemispheres="NS")
        lon, ew = _nmea_angle(float(track.lon[i]), degree_digits=3, hemispheres="EW")
        lines.append(_nmea_sentence(f"GPRMC,{clock},A,{lat},{ns},{lon},{ew},,,{date},,,A"))
        sats = hdop = ""
        if track.hdop is not None and track.satellites is not None:
            sats, hdop = f"{int(track.satellites[i]):02d}", f"{float(track.hdop[i]):.1f}"
        alt = f"{float(track.elevation_m[i]):.1f}"
        lines.append(
            _nmea_sentence(f"GPGGA,{clock},{lat},{ns},{lon},{ew},1,{sats},{hdop},{alt},M,,M,,")
        )
        if track.fix_type is not None:
            mode = track.fix_type[i][0]
            lines.append(_nmea_sentence(f"GPGSA,A,{mode},,,,,,,,,,,,,,{hdop},"))
    return atomic_write_text(path, "\r\n".join(lines) + "\r\n")


def write_csv(path: str | Path, track: GpsTrack) -> Path:
    """Write ``track`` as a CSV ``time,lat,lon,alt`` (ISO 8601 UTC), with ``hdop``,
    ``satellites`` and ``fix`` columns when the track reports quality, atomically."""
    from city360._atomic import atomic_write_text

    quality = track.hdop is not None and track.satellites is not None and track.fix_type
    header = "time,lat,lon,alt" + (",hdop,satellites,fix" if quality else "")
    rows = [header]
    for i in range(len(track)):
        row = (
            f"{track.time_utc[i].isoformat().replace('+00:00', 'Z')},"
            f"{float(track.lat[i]):.8f},{float(track.lon[i]):.8f},{float(track.elevation_m[i]):.1f}"
        )
        if quality and track.hdop is not None and track.satellites is not None and track.fix_type:
            row += f",{float(track.hdop[i]):.1f},{int(track.satellites[i])},{track.fix_type[i]}"
        rows.append(row)
    return atomic_write_text(path, "\n".join(rows) + "\n")
