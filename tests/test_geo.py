from __future__ import annotations

import numpy as np
import pytest

from city360.errors import ConfigError
from city360.geo import (
    LocalProjection,
    angle_diff_deg,
    bearing_deg,
    distance_to_polyline_m,
    haversine_m,
    principal_axis,
    wrap_deg,
)


def test_projection_round_trip_and_scale() -> None:
    proj = LocalProjection(60.1699, 24.9384)
    x, y = proj.to_xy(60.1699, 24.9384)
    assert abs(float(x)) < 1e-6
    assert abs(float(y)) < 1e-6
    lat, lon = 60.1709, 24.9404
    x, y = proj.to_xy(lat, lon)
    assert float(np.hypot(x, y)) == pytest.approx(haversine_m(60.1699, 24.9384, lat, lon), rel=5e-3)
    back_lat, back_lon = proj.to_latlon(x, y)
    assert float(back_lat) == pytest.approx(lat, abs=1e-9)
    assert float(back_lon) == pytest.approx(lon, abs=1e-9)
    assert LocalProjection.from_proj4(proj.proj4) == proj


def test_projection_rejects_bad_origin() -> None:
    with pytest.raises(ConfigError, match="origin must be a WGS84 lat/lon"):
        LocalProjection(95.0, 0.0)


def test_angles() -> None:
    assert wrap_deg(-90) == 270
    assert wrap_deg(720) == 0
    assert angle_diff_deg(10, 350) == pytest.approx(20)
    assert angle_diff_deg(350, 10) == pytest.approx(-20)
    assert bearing_deg(1, 0) == pytest.approx(90)
    assert bearing_deg(0, -1) == pytest.approx(180)


def test_principal_axis_fits_the_line_and_points_away_when_told() -> None:
    """The line the build fits to a street's poses beside a junction: centroid and unit axis,
    least squares across the line, pointing away from the junction when asked."""

    rng = np.random.default_rng(0)
    along = np.linspace(5.0, 25.0, 40)
    points = np.column_stack([along, 0.5 * along + rng.normal(0.0, 0.2, along.size)])
    centre, direction = principal_axis(points)
    assert np.allclose(centre, points.mean(axis=0))
    assert np.isclose(np.hypot(*direction), 1.0)
    assert abs(direction @ np.array([1.0, 0.5]) / np.hypot(1.0, 0.5)) > 0.999
    for far_side in ([0.0, 0.0], [40.0, 20.0]):
        _, away = principal_axis(points, away_from=far_side)
        assert float((centre - np.asarray(far_side)) @ away) > 0.0


def test_distance_to_polyline_is_to_the_nearest_foot_on_any_segment() -> None:
    line = [(0.0, 0.0), (10.0, 0.0), (10.0, 10.0)]
    assert distance_to_polyline_m((5.0, 3.0), line) == pytest.approx(3.0)  # across the first
    assert distance_to_polyline_m((13.0, 6.0), line) == pytest.approx(3.0)  # across the second
    assert distance_to_polyline_m((-3.0, -4.0), line) == pytest.approx(5.0)  # beyond the start
    assert distance_to_polyline_m((1.0, 1.0), [(0.0, 0.0), (0.0, 0.0)]) == pytest.approx(2**0.5)
