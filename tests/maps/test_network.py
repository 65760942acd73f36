"""The OSM network a base map draws: ``city360 map --network``, recorded in city.json."""

from __future__ import annotations

from pathlib import Path

import pytest

from city360.city import CityDir
from city360.errors import ConfigError
from city360.maps.citymap import CityMap, map_network, record_map_network
from city360.maps.osm import OsmData
from tests.maps.conftest import make_city
from tests.maps.test_cli import _run


@pytest.fixture
def city(helsinki_crop: tuple[Path, OsmData], tmp_path: Path) -> Path:
    return make_city(tmp_path / "city", helsinki_crop, with_osm=True)[0]


def set_build(city: Path, **stages: dict[str, object]) -> None:
    folder = CityDir(city)
    manifest = folder.read_manifest()
    manifest.build.update(stages)
    folder.write_manifest(manifest)


def test_default_is_what_the_city_was_built_on_but_at_least_walk(city: Path) -> None:
    assert map_network(city) == "walk"  # nothing recorded: footways too, as before
    set_build(city, synth={"network": "street"})
    assert map_network(city) == "walk"  # street lies within walk: all of it is drawn
    set_build(city, pose_graph={"osm_network": "all"})
    assert map_network(city) == "all"  # the build matched every highway: draw them
    record_map_network(city, "street")
    assert CityDir(city).read_manifest().build["maps"] == {"network": "street"}
    assert map_network(city) == "street"  # a recorded choice wins
    assert map_network(city, "street+service") == "street+service"


def test_network_changes_what_is_drawn_and_is_cached_apart(city: Path) -> None:
    walk = CityMap.open(city)
    street = CityMap.open(city, network="street")
    assert (walk.meta.layers["network"], street.meta.layers["network"]) == ("walk", "street")
    assert street.meta.inputs != walk.meta.inputs
    # Helsinki centre has footways and paths beside its streets
    assert street.meta.layers["streets"] < walk.meta.layers["streets"]


def test_cli_records_the_network(
    monkeypatch: pytest.MonkeyPatch, city: Path, tmp_path: Path
) -> None:
    out = tmp_path / "m.png"
    assert _run(monkeypatch, "map", city, "--out", out, "--network", "street") == 0
    assert CityDir(city).read_manifest().build["maps"]["network"] == "street"
    assert CityMap.open(city).meta.layers["network"] == "street"  # later maps follow it


def test_unknown_network_names_the_known_ones(city: Path) -> None:
    with pytest.raises(
        ConfigError,
        match=r"map network 'walking' is not known; expected one of street, street\+service, "
        r"walk, all\. Did you mean 'walk'\?",
    ):
        map_network(city, "walking")
