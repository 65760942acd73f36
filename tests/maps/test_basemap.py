"""The base-map renderer: exact pixel grid, street names in Latin and Japanese scripts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from city360.maps import basemap, draw
from city360.maps.basemap import BACKGROUND_RGB, STREET_RGB, render_basemap
from city360.maps.geotransform import GeoTransform
from city360.maps.layers import MapLayers, StreetLine, layers_from_osm
from city360.maps.osm import OsmData, load_osm

TOKYO_BBOX = (35.745, 139.660, 35.750, 139.667)


@pytest.fixture(scope="module")
def tokyo(shared_data: Path) -> OsmData:
    return load_osm(shared_data / "osm" / "tokyo_nerima.osm", bbox=TOKYO_BBOX)


def _transform(data: OsmData) -> GeoTransform:
    south, west, north, east = data.bbox
    xs, ys = data.projection.to_xy([south, north], [west, east])
    return GeoTransform.covering(
        float(xs[0]),
        float(ys[0]),
        float(xs[1]),
        float(ys[1]),
        metres_per_px=0.5,
        projection=data.projection,
    )


def _named_street(data: OsmData) -> StreetLine:
    layers = layers_from_osm(data)
    return max((s for s in layers.streets if s.name), key=lambda s: s.length_m)


def _label_pixels(image: np.ndarray, transform: GeoTransform, street: StreetLine) -> int:
    """Dark (text) pixels within 15 px of the street's midpoint."""
    x, y, _ = basemap._midpoint(street.points)
    col, row = (round(float(v)) for v in transform.xy_to_px(x, y))
    window = image[row - 15 : row + 16, col - 15 : col + 16]
    return int((window.max(axis=2) < 110).sum())


def test_straight_street_lands_on_its_pixels() -> None:
    from city360.geo import LocalProjection

    transform = GeoTransform.covering(
        0.0, 0.0, 100.0, 50.0, metres_per_px=0.5, projection=LocalProjection(60.0, 25.0)
    )
    street = StreetLine(points=np.array([[10.0, 25.0], [90.0, 25.0]]), highway="residential")
    image = render_basemap(MapLayers(source="test", streets=[street]), transform)
    assert image.shape == (100, 200, 3)
    white = np.all(image == np.array(STREET_RGB, np.uint8), axis=2)
    rows = np.nonzero(white[:, 100])[0]
    # 8 m wide residential street centred on y = 25 m -> rows 42..57 (row 49.5 is y = 25 m)
    assert rows.min() == pytest.approx(42, abs=1)
    assert rows.max() == pytest.approx(57, abs=1)
    assert tuple(image[5, 5]) == BACKGROUND_RGB


def test_japanese_street_names_are_written(tokyo: OsmData) -> None:
    street = _named_street(tokyo)
    assert any("\u3040" <= ch <= "\u9fff" for ch in street.name)
    if draw.font_path("Noto Sans CJK JP") is None:
        pytest.skip("fonts-noto-cjk is not installed; Japanese labels are skipped")
    transform = _transform(tokyo)
    image = render_basemap(layers_from_osm(tokyo), transform)
    assert _label_pixels(image, transform, street) > 20


def test_without_a_cjk_font_japanese_names_are_skipped_cleanly(
    tokyo: OsmData, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = draw.font_path

    def no_cjk(family: str = "DejaVu Sans") -> str | None:
        return None if "CJK" in family else real(family)

    monkeypatch.setattr(basemap, "font_path", no_cjk)
    transform = _transform(tokyo)
    street = _named_street(tokyo)
    image = render_basemap(layers_from_osm(tokyo), transform)  # no warning, no error
    assert _label_pixels(image, transform, street) == 0


def test_a_font_installed_after_matplotlib_cached_its_list_is_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CI installs fonts-noto-cjk into an image whose matplotlib font cache predates it."""
    from pathlib import Path

    from matplotlib import font_manager

    if not any(Path("/usr/share/fonts").rglob("NotoSansCJK*")):
        pytest.skip("fonts-noto-cjk is not installed in /usr/share/fonts")

    def stale_cache(family: str, **_kwargs: object) -> str:
        msg = f"Failed to find font {family}"
        raise ValueError(msg)

    monkeypatch.setattr(font_manager, "findfont", stale_cache)
    monkeypatch.setattr(font_manager.fontManager, "addfont", lambda _path: None)
    draw.font_path.cache_clear()
    try:
        by_fontconfig = draw.font_path("Noto Sans CJK JP")
        draw.font_path.cache_clear()
        monkeypatch.setattr(draw, "_fontconfig_file", lambda _family: None)
        by_scan = draw.font_path("Noto Sans CJK JP")
    finally:
        draw.font_path.cache_clear()
    for found in (by_fontconfig, by_scan):
        assert found is not None
        assert "NotoSansCJK" in found
