"""Simulated phone GPS: error statistics, outliers, dropouts, clock offset, GPX output."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import gpxpy
import numpy as np
import pytest

from city360.errors import ConfigError
from city360.geo import LocalProjection
from city360.synth.gps import GpsNoise, GpsTrack, simulate_gps, write_gpx
from city360.synth.routes import PathSampler

PROJECTION = LocalProjection(60.0, 25.0)
START = dt.datetime(2024, 6, 1, 9, 30, 0, tzinfo=dt.UTC)
PATH = PathSampler(np.array([[0.0, 0.0], [300.0, 0.0], [300.0, 200.0], [0.0, 200.0]]))
SPEED = 1.4
DURATION = PATH.length_m / SPEED


def simulate(noise: GpsNoise, *, offset_s: float = 0.0, seed: int = 0) -> GpsTrack:
    return simulate_gps(
        PATH,
        speed_mps=SPEED,
        duration_s=DURATION,
        creation_time=START,
        projection=PROJECTION,
        noise=noise,
        clock_offset_s=offset_s,
        rng=np.random.default_rng(seed),
    )


def errors_m(track: GpsTrack) -> np.ndarray:
    x, y = PROJECTION.to_xy(track.lat, track.lon)
    return np.hypot(x - track.true_xy[:, 0], y - track.true_xy[:, 1])


def errors_xy(track: GpsTrack) -> np.ndarray:
    """(N, 2) reported minus true position, metres east and north."""
    x, y = PROJECTION.to_xy(track.lat, track.lon)
    return np.stack([x - track.true_xy[:, 0], y - track.true_xy[:, 1]], axis=1)


@pytest.mark.parametrize("sigma_m", [1.0, 3.0, 8.0])
def test_rms_error_of_regular_fixes_is_sigma(sigma_m: float) -> None:
    track = simulate(GpsNoise(sigma_m=sigma_m))
    regular = np.setdiff1d(np.arange(len(track)), track.outlier_indices)
    rms = math.sqrt(float(np.mean(errors_m(track)[regular] ** 2)))
    assert rms == pytest.approx(sigma_m, rel=0.05)


def test_error_is_partly_correlated_in_time() -> None:
    correlated = simulate(GpsNoise(correlated_share=0.6, outlier_rate=0.0))
    white = simulate(GpsNoise(correlated_share=0.0, outlier_rate=0.0))

    def lag1(track: GpsTrack) -> float:
        x, _ = PROJECTION.to_xy(track.lat, track.lon)
        ex = x - track.true_xy[:, 0]
        return float(np.corrcoef(ex[:-1], ex[1:])[0, 1])

    assert lag1(correlated) > 0.35
    assert abs(lag1(white)) < 0.2


def test_outliers_are_thrown_far_and_recorded() -> None:
    track = simulate(GpsNoise(outlier_rate=0.05, dropout_rate_per_min=0.0))
    assert len(track.outlier_indices) >= 3
    errors = errors_m(track)
    assert errors[list(track.outlier_indices)].min() > 15.0 - 3 * 3.0
    regular = np.setdiff1d(np.arange(len(track)), track.outlier_indices)
    assert errors[regular].max() < 15.0


def test_dropouts_leave_gaps_and_are_recorded() -> None:
    track = simulate(GpsNoise(dropout_rate_per_min=2.0))
    assert track.dropout_spans_s
    for start, end in track.dropout_spans_s:
        assert end - start >= 3.0 or end == pytest.approx(DURATION)
        inside = (track.video_t_s >= start) & (track.video_t_s < end)
        assert not inside.any()
    gaps = np.diff(track.video_t_s)
    assert gaps.max() >= 3.0


def test_fixes_are_1hz_on_whole_gps_seconds_with_the_clock_offset() -> None:
    offset = 2.25
    track = simulate(GpsNoise(dropout_rate_per_min=0.0), offset_s=offset)
    assert all(t.microsecond == 0 for t in track.time_utc)
    np.testing.assert_allclose(np.diff(track.video_t_s), 1.0)
    for t_utc, video_t in zip(track.time_utc, track.video_t_s, strict=True):
        # GPS stamp = camera clock at that instant + offset
        camera = START + dt.timedelta(seconds=float(video_t))
        assert (t_utc - camera).total_seconds() == pytest.approx(offset, abs=1e-6)
    assert 0.0 <= track.video_t_s[0] < 1.0
    assert track.video_t_s[-1] <= DURATION
    assert track.clock_offset_s == offset


def test_zero_noise_reports_the_true_position() -> None:
    track = simulate(GpsNoise(sigma_m=0.0, outlier_rate=0.0))
    assert errors_m(track).max() < 1e-3


def test_same_seed_same_track_other_seed_other_track() -> None:
    a, b, c = (
        simulate(GpsNoise(), seed=3),
        simulate(GpsNoise(), seed=3),
        simulate(GpsNoise(), seed=4),
    )
    np.testing.assert_array_equal(a.lat, b.lat)
    assert a.outlier_indices == b.outlier_indices
    assert not np.array_equal(a.lat[:10], c.lat[:10])


def test_gpx_round_trip(tmp_path: Path) -> None:
    track = simulate(GpsNoise(), offset_s=-1.5)
    path = write_gpx(tmp_path / "walk.gpx", track, name="walk")
    gpx = gpxpy.parse(path.read_text(encoding="utf-8"))
    points = gpx.tracks[0].segments[0].points
    assert gpx.tracks[0].name == "walk"
    assert len(points) == len(track)
    np.testing.assert_allclose([p.latitude for p in points], track.lat, atol=1e-8)
    np.testing.assert_allclose([p.longitude for p in points], track.lon, atol=1e-8)
    assert [p.time for p in points] == list(track.time_utc)
    assert all(p.elevation is not None for p in points)


@pytest.mark.parametrize(
    ("field", "value"),
    [("sigma_m", -1.0), ("correlated_share", 1.5), ("outlier_rate", 1.0), ("rate_hz", 0.0)],
)
def test_bad_noise_settings(field: str, value: float) -> None:
    with pytest.raises(ConfigError, match=rf"GPS noise `{field}` is out of range: {value}"):
        GpsNoise(**{field: value})


# --- error models (issue 17): rates, urban-canyon bursts, drift, presets ---


def test_presets_phone_is_the_default_and_unknown_names_are_refused() -> None:
    from city360.synth.gps import GPS_MODELS, gps_model

    assert gps_model("phone") == GpsNoise()
    assert gps_model("canyon", sigma_m=1.0).sigma_m == 1.0
    assert set(GPS_MODELS) == {"phone", "camera", "canyon"}
    with pytest.raises(ConfigError, match=r"unknown GPS model 'canyn'; expected one of phone, "
                       r"camera, canyon. Did you mean 'canyon'\?"):  # fmt: skip
        gps_model("canyn")


@pytest.mark.parametrize("rate_hz", [1.0, 5.0, 10.0])
def test_rate_gives_that_many_fixes_a_second(rate_hz: float) -> None:
    track = simulate(GpsNoise(rate_hz=rate_hz, dropout_rate_per_min=0.0))
    assert len(track) == pytest.approx(DURATION * rate_hz, abs=2)
    assert np.diff(track.video_t_s) == pytest.approx(1.0 / rate_hz)


def test_camera_preset_logs_10hz() -> None:
    from city360.synth.gps import gps_model

    track = simulate(gps_model("camera"))
    steps = np.diff(track.video_t_s)
    assert float(np.median(steps)) == pytest.approx(0.1)


def test_canyon_bursts_throw_fixes_10_to_30_m_and_are_recorded() -> None:
    noise = GpsNoise(sigma_m=0.5, outlier_rate=0.0, dropout_rate_per_min=0.0,
                     canyon_rate_per_min=1.0)  # fmt: skip
    bursts, peaks = 0, []
    for seed in range(5):
        track = simulate(noise, seed=seed)
        errors = errors_m(track)
        assert track.canyon_spans_s
        outside = np.ones(len(track), bool)
        for start, end in track.canyon_spans_s:
            inside = (track.video_t_s >= start) & (track.video_t_s < end)
            outside &= ~inside
            core = (track.video_t_s >= start + 2.0) & (track.video_t_s < end - 2.0)
            if core.any():
                bursts += 1
                peaks.append(float(np.median(errors[core])))
        assert float(np.max(errors[outside])) < 3.0  # 0.5 m RMS elsewhere
    assert bursts >= 20
    assert min(peaks) >= 9.0
    assert max(peaks) <= 31.0
    assert 15.0 <= float(np.mean(peaks)) <= 25.0  # uniform over 10-30 m


def test_drift_is_a_stationary_bias_of_its_stated_rms() -> None:
    """Drift wanders for minutes but stays at ``drift_m`` RMS however long the walk: GNSS
    position error is stationary (an integrated random velocity grew without bound)."""
    drift_m, tau = 2.0, 120.0
    noise = GpsNoise(sigma_m=0.0, outlier_rate=0.0, dropout_rate_per_min=0.0,
                     drift_m=drift_m, drift_time_s=tau)  # fmt: skip
    tracks = [errors_xy(simulate(noise, seed=seed)) for seed in range(40)]
    starts = np.array([e[0] for e in tracks])
    finals = np.array([e[-1] for e in tracks])
    for at in (starts, finals):
        assert math.sqrt(float(np.mean(np.sum(at * at, axis=1)))) == pytest.approx(drift_m, rel=0.3)
    # slow: neighbouring fixes share the bias; fixes many correlation times apart do not
    lag = int(tau)
    near = np.mean([np.sum(e[:-1] * e[1:]) / np.sum(e * e) for e in tracks])
    far = np.mean([np.sum(e[:-lag] * e[lag:]) / np.sum(e * e) for e in tracks])
    assert near > 0.95
    assert far == pytest.approx(math.exp(-1.0), abs=0.25)
