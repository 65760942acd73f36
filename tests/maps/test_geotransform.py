"""Pixel <-> metres <-> lat/lon of a north-up raster."""

from __future__ import annotations

import numpy as np
import pytest

from city360.errors import ConfigError
from city360.geo import LocalProjection
from city360.maps.geotransform import GeoTransform

PROJECTION = LocalProjection(60.168, 24.944)


def _transform() -> GeoTransform:
    return GeoTransform.covering(
        -100.0, -50.0, 100.0, 150.0, metres_per_px=0.5, projection=PROJECTION
    )


def test_covering_raster_size_and_extent() -> None:
    transform = _transform()
    assert (transform.width, transform.height) == (400, 400)
    assert transform.extent_m == pytest.approx((-100.0, -50.0, 100.0, 150.0))
    assert (transform.x0_m, transform.y0_m) == (-99.75, 149.75)


def test_known_latlon_lands_on_expected_pixel() -> None:
    transform = _transform()
    # the projection origin is (x, y) = (0, 0): 100 m east of the west edge = 200 px, and
    # 150 m south of the north edge = 300 px; pixel centres sit at +0.5 in edge units
    col, row = transform.latlon_to_px(60.168, 24.944)
    assert (float(col), float(row)) == pytest.approx((199.5, 299.5), abs=1e-6)
    # 1 km north of the origin along the meridian: 0.5 m/px -> 2000 px up, same column
    lat_north = 60.168 + 1000.0 / 111_412.0  # metres per degree of latitude at 60°N
    col, row = transform.latlon_to_px(lat_north, 24.944)
    assert float(col) == pytest.approx(199.5, abs=1e-6)
    assert float(row) == pytest.approx(299.5 - 2000.0, abs=0.5)


def test_round_trip_is_far_below_half_a_pixel() -> None:
    transform = _transform()
    rng = np.random.default_rng(0)
    cols = rng.uniform(0, transform.width, 1000)
    rows = rng.uniform(0, transform.height, 1000)
    lat, lon = transform.px_to_latlon(cols, rows)
    back_cols, back_rows = transform.latlon_to_px(lat, lon)
    error = np.hypot(back_cols - cols, back_rows - rows)
    assert error.max() < 1e-6
    x_m, y_m = transform.px_to_xy(cols, rows)
    assert np.allclose(transform.xy_to_px(x_m, y_m), (cols, rows), atol=1e-9)


def test_serialises() -> None:
    transform = _transform()
    again = GeoTransform.from_dict(transform.to_dict())
    assert again == transform


def test_bad_scale() -> None:
    with pytest.raises(ConfigError, match=r"`metres_per_px` must be > 0, got 0"):
        GeoTransform(0, 0, 0.0, 10, 10, PROJECTION)
    with pytest.raises(ConfigError, match="empty rectangle"):
        GeoTransform.covering(0, 0, 0, 10, metres_per_px=1.0, projection=PROJECTION)
