"""A filmed twin through the product's ingest (issue 17, "Real capture"): the frame poses the
heading-aided path gives, against the GPS-only smoothing at the same frames."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from city360.pose_graph.accuracy import FILM_WIDTH
from city360.pose_graph.filmed import frame_errors, ingest_twin
from tests.pose_graph.test_accuracy import _write_timed_gpx


def _s_curves(*, leg_m: float = 80.0, radius_m: float = 50.0) -> list[tuple[float, float]]:
    """Corners of a road that goes straight ``leg_m`` and bends 90 degrees on an arc of
    ``radius_m``, right, left, right, left, then straight again (metres, x east, y north)."""
    points = [np.zeros(2)]
    heading = 0.0
    for turn in (1, -1, 1, -1):
        points.append(points[-1] + leg_m * np.array([np.sin(heading), np.cos(heading)]))
        step = turn * (np.pi / 2) / 15
        for _ in range(15):
            middle = heading + step / 2
            chord = radius_m * abs(step) * np.array([np.sin(middle), np.cos(middle)])
            points.append(points[-1] + chord)
            heading += step
    points.append(points[-1] + leg_m * np.array([np.sin(heading), np.cos(heading)]))
    return [(float(x), float(y)) for x, y in points]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_filmed_car_through_bends_is_placed_about_as_well_as_its_gps(
    tmp_path: Path, seed: int
) -> None:
    """A car at 30 km/h through four 90 degree bends (720 m, 87 s), filmed at 10 fps with
    the camera GPS preset, ingested as a user would. The picture's yaw reads gentle bends
    short, and with the heading correction smoothed over 20 s (170 m at this speed) the
    aided frame poses were 4.3 / 7.8 / 5.1 m RMSE on seeds 0-2 against 2.0 / 2.4 / 2.1 m for
    the GPS-only smoothing at the same frames; with the window in metres (40 m) they are
    2.2 / 3.3 / 2.1 m (2.2 / 3.2 / 2.0 with the speed held to the GPS's). Seed 1 was still
    above the 3 m target and worse than its GPS: the smoother held the car to a heading a
    few degrees off. With noise across the heading in proportion to the speed (round
    twenty-one, ``smooth.CROSS_SIGMA_PER_MPS``) they are 1.94 / 2.39 / 2.03 m against
    2.00 / 2.38 / 2.07 m for the GPS alone."""
    from city360.synth.pipeline import synthesize
    from city360.synth.walk_network import walk_network_osm

    route = _write_timed_gpx(tmp_path / "route.gpx", _s_curves(), speed_mps=8.3)
    city = synthesize(
        walk_network_osm(route, tmp_path / "streets.osm"),
        out=tmp_path / "twin",
        seed=seed,
        fps=10,
        width=FILM_WIDTH,
        gps_model="camera",
        route_gpx=route,
        replace=True,
    )
    assert ingest_twin(city) == []
    errors = frame_errors(city)
    assert errors.ingested_m.shape[0] > 600  # about a frame a metre
    assert errors.ingested_rmse_m < 1.1 * errors.gps_only_rmse_m, (
        errors.ingested_rmse_m,
        errors.gps_only_rmse_m,
    )
    assert errors.ingested_rmse_m < 3.0
