"""A filmed walk twin through the product's ingest (issue 17, "Real capture"): the frame
poses of the heading-aided path against the GPS-only smoothing on a corner the GPS drops."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from city360.pose_graph.accuracy import FILM_WIDTH, TARGET_RMSE_M
from city360.pose_graph.filmed import frame_errors, ingest_twin
from tests.pose_graph.test_accuracy import _write_timed_gpx

CORNER_S = 43.0
"""When the walk below reaches its corner (60 m at 1.4 m/s), seconds from its start."""


def _drop_fixes(gpx: Path, start_s: float, end_s: float) -> int:
    """Remove the fixes of ``gpx`` from ``start_s`` to ``end_s`` after its first fix (a
    dropout of the receiver); returns how many were removed."""
    text = gpx.read_text(encoding="utf-8")
    points = list(re.finditer(r"\s*<trkpt .*?</trkpt>", text, flags=re.S))
    times = [
        dt.datetime.fromisoformat(re.search(r"<time>(.*?)</time>", m.group(0)).group(1))  # type: ignore[union-attr]
        for m in points
    ]
    first = times[0]
    dropped = [
        m
        for m, t in zip(points, times, strict=True)
        if start_s <= (t - first).total_seconds() <= end_s
    ]
    for match in reversed(dropped):
        text = text[: match.start()] + text[match.end() :]
    gpx.write_text(text, encoding="utf-8")
    return len(dropped)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_filmed_corner_in_a_gps_dropout_follows_the_pictures(tmp_path: Path, seed: int) -> None:
    """An L-shaped 120 m walk filmed at 10 fps with phone GPS, whose receiver drops the 12 s
    around the corner: the GPS-only smoothing bridges the dropout with a straight chord and
    cuts the corner (several metres off there); ingest turns the frames with the picture's
    yaw. The ingested frame poses must be within the target and clearly better."""
    from city360.synth.pipeline import synthesize
    from city360.synth.walk_network import walk_network_osm

    route = _write_timed_gpx(
        tmp_path / "route.gpx", [(0.0, 0.0), (0.0, 60.0), (60.0, 60.0)], speed_mps=1.4
    )
    osm = walk_network_osm(route, tmp_path / "streets.osm")
    city = synthesize(
        osm,
        out=tmp_path / "twin",
        seed=seed,
        fps=10,
        width=FILM_WIDTH,
        gps_model="phone",
        route_gpx=route,
        replace=True,
    )
    (gpx,) = (city / "videos").glob("*.gpx")
    assert _drop_fixes(gpx, CORNER_S - 6.0, CORNER_S + 6.0) >= 12
    assert ingest_twin(city) == []
    errors = frame_errors(city)
    assert errors.ingested_m.shape[0] > 100  # about a frame a metre
    assert errors.ingested_rmse_m <= TARGET_RMSE_M
    assert errors.ingested_rmse_m < 0.8 * errors.gps_only_rmse_m, (
        errors.ingested_rmse_m,
        errors.gps_only_rmse_m,
    )
