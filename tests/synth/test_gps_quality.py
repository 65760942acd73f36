"""Simulated receiver quality (HDOP, satellites, fix type): how it relates to the error, and
the GPX / NMEA / CSV writers read back by the project's own readers."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from city360.synth.gps import (
    GPS_MODELS,
    GpsNoise,
    GpsTrack,
    gps_model,
    write_csv,
    write_gpx,
    write_nmea,
)
from city360.video_store.gps import read_track
from city360.video_store.gps.quality import FIX_NAMES
from tests.synth.test_gps import PROJECTION, errors_m, simulate

QUIET = {"outlier_rate": 0.0, "dropout_rate_per_min": 0.0}


def _rank_correlation(a: np.ndarray, b: np.ndarray) -> float:
    ranks_a = np.argsort(np.argsort(a)).astype(float)
    ranks_b = np.argsort(np.argsort(b)).astype(float)
    return float(np.corrcoef(ranks_a, ranks_b)[0, 1])


def test_quality_is_off_by_default_and_on_in_the_canyon_preset() -> None:
    track = simulate(GpsNoise())
    assert track.hdop is None
    assert track.satellites is None
    assert track.fix_type is None
    assert not GPS_MODELS["phone"].report_quality
    assert not GPS_MODELS["camera"].report_quality
    assert GPS_MODELS["canyon"].report_quality


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rms_error_stays_sigma_with_quality(seed: int) -> None:
    track = simulate(GpsNoise(sigma_m=3.0, report_quality=True, **QUIET), seed=seed)
    assert float(np.sqrt(np.mean(errors_m(track) ** 2))) == pytest.approx(3.0, rel=1e-6)


def test_hdop_follows_the_error_without_being_an_oracle() -> None:
    noise = GpsNoise(sigma_m=4.0, report_quality=True, hdop_log_sigma=0.5, **QUIET)
    correlations = []
    for seed in range(6):
        track = simulate(noise, seed=seed)
        assert track.hdop is not None
        assert track.hdop.min() >= 0.5
        np.testing.assert_allclose(track.hdop, np.round(track.hdop, 1))
        correlations.append(_rank_correlation(track.hdop, errors_m(track)))
    # worse geometry, worse fixes on average; but one fix's error is still a random draw
    assert 0.25 < float(np.mean(correlations)) < 0.8


def test_canyon_bursts_barely_show_in_hdop() -> None:
    noise = GpsNoise(
        sigma_m=2.0, report_quality=True, canyon_rate_per_min=1.0, hdop_log_sigma=0.2, **QUIET
    )
    error_ratios, hdop_ratios = [], []
    for seed in range(5):
        track = simulate(noise, seed=seed)
        assert track.hdop is not None
        inside = np.zeros(len(track), bool)
        for start, end in track.canyon_spans_s:
            inside |= (track.video_t_s >= start + 2.0) & (track.video_t_s < end - 2.0)
        if not inside.any():
            continue
        errors = errors_m(track)
        error_ratios.append(np.median(errors[inside]) / np.median(errors[~inside]))
        hdop_ratios.append(np.median(track.hdop[inside]) / np.median(track.hdop[~inside]))
    assert len(error_ratios) >= 3
    assert min(error_ratios) > 4.0  # 10-30 m off against ~2 m
    assert max(hdop_ratios) < 1.8  # a few satellites lost, nothing like the error


def test_satellites_and_fix_type_follow_hdop() -> None:
    track = simulate(GpsNoise(report_quality=True, hdop_log_sigma=0.8, **QUIET), seed=4)
    assert track.hdop is not None
    assert track.satellites is not None
    assert track.fix_type is not None
    assert _rank_correlation(track.hdop, track.satellites.astype(float)) < -0.5
    assert set(track.fix_type) <= {"2d", "3d"}
    sats = track.satellites
    assert all((f == "2d") == (n < 5) for f, n in zip(track.fix_type, sats, strict=True))


Writer = Callable[[Path, GpsTrack], Path]


@pytest.mark.parametrize(
    ("suffix", "writer"),
    [
        (".gpx", lambda path, track: write_gpx(path, track, name="walk")),
        (".nmea", write_nmea),
        (".csv", write_csv),
    ],
)
def test_writers_round_trip_quality(tmp_path: Path, suffix: str, writer: Writer) -> None:
    track = simulate(GpsNoise(report_quality=True, hdop_log_sigma=0.8), seed=3)
    assert track.hdop is not None
    assert track.satellites is not None
    assert track.fix_type is not None
    read = read_track(writer(tmp_path / f"walk{suffix}", track))
    assert len(read) == len(track)
    x, y = PROJECTION.to_xy(read.lat, read.lon)
    tx, ty = PROJECTION.to_xy(track.lat, track.lon)
    assert float(np.max(np.hypot(x - tx, y - ty))) < 0.01
    np.testing.assert_allclose(read.t_s, [t.timestamp() for t in track.time_utc], atol=0.005)
    np.testing.assert_allclose(read.quality.hdop, track.hdop)
    np.testing.assert_allclose(read.quality.satellites, track.satellites)
    expected_fix = [FIX_NAMES[f] for f in track.fix_type]
    assert read.quality.fix_type is not None
    assert read.quality.fix_type.tolist() == expected_fix


@pytest.mark.parametrize("writer", [write_nmea, write_csv])
def test_writers_without_quality_write_none(tmp_path: Path, writer: Writer) -> None:
    track = simulate(GpsNoise(), seed=0)
    suffix = ".nmea" if writer is write_nmea else ".csv"
    read = read_track(writer(tmp_path / f"walk{suffix}", track))
    assert len(read) == len(track)
    assert read.quality.hdop is None
    assert read.quality.fix_type is None or set(read.quality.fix_type.tolist()) == {
        FIX_NAMES["gps"]
    }


def test_nmea_writer_handles_the_southern_and_western_hemispheres(tmp_path: Path) -> None:
    track = simulate(GpsNoise(), seed=0)
    flipped = dataclasses.replace(track, lat=-track.lat, lon=-track.lon)
    read = read_track(write_nmea(tmp_path / "south.nmea", flipped))
    np.testing.assert_allclose(read.lat, -track.lat, atol=1e-7)
    np.testing.assert_allclose(read.lon, -track.lon, atol=1e-7)


def test_gps_model_overrides_report_quality_and_keeps_the_rest() -> None:
    assert gps_model("phone", report_quality=True).report_quality
    assert not gps_model("canyon", report_quality=False).report_quality
    assert gps_model("canyon") == GPS_MODELS["canyon"]
    turned = gps_model("canyon", sigma_m=2.0, report_quality=False)
    assert dataclasses.replace(turned, report_quality=True, sigma_m=5.0) == GPS_MODELS["canyon"]
