"""Loading real OSM extracts (.osm, .osm.bz2, .osm.pbf) into layers in local metres."""

from __future__ import annotations

import bz2
import math
from pathlib import Path

import networkx as nx
import numpy as np
import osmium
import pytest
from shapely.geometry import Point

from city360.errors import ConfigError, InputFileError, OsmError
from city360.geo import LocalProjection
from city360.maps.osm import (
    NETWORK_HIGHWAYS,
    OsmData,
    edge_polyline,
    load_osm,
    parse_bbox,
    write_osm_extract,
)

HELSINKI_BBOX = (60.166, 24.940, 60.170, 24.948)  # Esplanadi / Erottaja, ~450 m x 440 m
TOKYO_BBOX = (35.745, 139.660, 35.750, 139.667)


@pytest.fixture(scope="module")
def helsinki(shared_data: Path) -> OsmData:
    return load_osm(shared_data / "osm" / "Helsinki.osm.pbf", bbox=HELSINKI_BBOX)


@pytest.fixture(scope="module")
def tokyo(shared_data: Path) -> OsmData:
    return load_osm(shared_data / "osm" / "tokyo_nerima.osm", bbox=TOKYO_BBOX)


def _inside(lat: float, lon: float, bbox: tuple[float, float, float, float]) -> bool:
    return bbox[0] <= lat <= bbox[2] and bbox[1] <= lon <= bbox[3]


# streets -------------------------------------------------------------------------------------
def test_street_graph_is_undirected_connected_and_inside_bbox(helsinki: OsmData) -> None:
    streets = helsinki.streets
    assert isinstance(streets, nx.MultiGraph)
    assert not streets.is_directed()
    assert streets.number_of_nodes() >= 20
    assert nx.is_connected(streets)
    for _, data in streets.nodes(data=True):
        assert _inside(data["lat"], data["lon"], HELSINKI_BBOX)
        x_m, y_m = helsinki.projection.to_xy(data["lat"], data["lon"])
        assert math.isclose(data["x_m"], float(x_m), abs_tol=1e-6)
        assert math.isclose(data["y_m"], float(y_m), abs_tol=1e-6)
        assert data["street_count"] >= 1


def test_edge_attributes_and_polyline_orientation(helsinki: OsmData) -> None:
    streets = helsinki.streets
    allowed = NETWORK_HIGHWAYS["street"]
    assert allowed is not None
    for u, v, data in streets.edges(data=True):
        assert u <= v  # the documented orientation guarantee
        assert data["from_node"] == u
        polyline = np.asarray(data["polyline_xy"])
        assert polyline.shape[0] >= 2
        assert np.allclose(polyline[0], (streets.nodes[u]["x_m"], streets.nodes[u]["y_m"]))
        assert np.allclose(polyline[-1], (streets.nodes[v]["x_m"], streets.nodes[v]["y_m"]))
        length = float(np.hypot(*np.diff(polyline, axis=0).T).sum())
        assert data["length_m"] == pytest.approx(length)
        assert data["length_m"] > 0
        assert isinstance(data["name"], str)
        assert data["highway"] in allowed
    names = {d["name"] for _, _, d in streets.edges(data=True)}
    assert {"Pohjoisesplanadi", "Erottajankatu"} <= names


def test_edge_polyline_either_direction(helsinki: OsmData) -> None:
    u, v, key = next(iter(helsinki.streets.edges(keys=True)))
    forward = edge_polyline(helsinki.streets, u, v, key)
    backward = edge_polyline(helsinki.streets, v, u, key)
    assert backward == forward[::-1]
    assert forward[0] == (helsinki.streets.nodes[u]["x_m"], helsinki.streets.nodes[u]["y_m"])


def test_street_lengths_match_geodesic_distance(helsinki: OsmData) -> None:
    from pyproj import Geod

    geod = Geod(ellps="WGS84")
    # a local transverse Mercator has negligible scale error: straight edges measure the same
    for u, v, data in helsinki.streets.edges(data=True):
        if len(data["polyline_xy"]) == 2 and u != v:
            a, b = helsinki.streets.nodes[u], helsinki.streets.nodes[v]
            distance_m = geod.inv(a["lon"], a["lat"], b["lon"], b["lat"])[2]
            assert data["length_m"] == pytest.approx(distance_m, rel=1e-4)


def test_network_choice_changes_the_streets(shared_data: Path, helsinki: OsmData) -> None:
    walk = load_osm(shared_data / "osm" / "Helsinki.osm.pbf", bbox=HELSINKI_BBOX, network="walk")
    highways = {d["highway"] for _, _, d in walk.streets.edges(data=True)}
    assert "footway" in highways
    assert walk.street_length_m > helsinki.street_length_m
    street_highways = {d["highway"] for _, _, d in helsinki.streets.edges(data=True)}
    assert not street_highways & {"footway", "steps", "cycleway", "path"}


def test_the_piece_kept_is_the_longest(shared_data: Path) -> None:
    """A walkable city keeps one connected piece of the streets; it was the piece with the
    most nodes, so in Helsinki's Kruununhaka window (60.1740-60.1775, 24.938-24.944) a 75 m
    mesh of service lanes (6 nodes) won over 570 m of streets (6 nodes too) and synth filmed
    75 m of its 1.2 km, less with street+service than with streets alone (349 m)."""
    path = shared_data / "osm" / "Helsinki.osm.pbf"
    bbox = (60.1740, 24.9380, 60.1775, 24.9440)
    whole = load_osm(path, bbox=bbox, network="street+service", all_components=True)
    pieces = list(nx.connected_components(whole.streets))
    longest = max(whole.streets.subgraph(p).size(weight="length_m") for p in pieces)
    for network in ("street", "street+service"):
        kept = load_osm(path, bbox=bbox, network=network).streets
        all_pieces = load_osm(path, bbox=bbox, network=network, all_components=True).streets
        best = max(
            all_pieces.subgraph(p).size(weight="length_m")
            for p in nx.connected_components(all_pieces)
        )
        assert kept.size(weight="length_m") == pytest.approx(best), network
    assert load_osm(path, bbox=bbox, network="street+service").streets.size(
        weight="length_m"
    ) == pytest.approx(longest)
    assert longest > 500.0


def test_unknown_network_is_refused(shared_data: Path) -> None:
    with pytest.raises(ConfigError, match=r"network 'wlak' is not known.*Did you mean 'walk'\?"):
        load_osm(shared_data / "osm" / "tokyo_nerima.osm", bbox=TOKYO_BBOX, network="wlak")


# features ------------------------------------------------------------------------------------
def test_pois_are_named_kinded_and_projected(helsinki: OsmData) -> None:
    assert len(helsinki.pois) >= 100
    for poi in helsinki.pois:
        assert poi.name.strip()
        key, _, value = poi.kind.partition("=")
        assert key in {"shop", "amenity", "tourism", "leisure", "office", "craft", "healthcare"} | {
            "historic"
        }
        assert poi.tags[key] == value
        assert _inside(poi.lat, poi.lon, HELSINKI_BBOX)
        x_m, y_m = helsinki.projection.to_xy(poi.lat, poi.lon)
        assert (poi.x_m, poi.y_m) == pytest.approx((float(x_m), float(y_m)))
    by_name = {p.name: p for p in helsinki.pois}
    assert by_name["Hard Rock Cafe Helsinki"].kind == "amenity=restaurant"
    assert by_name["Zara"].kind == "shop=clothes"


def test_buildings_are_footprints_in_metres(helsinki: OsmData) -> None:
    assert len(helsinki.buildings) >= 20
    south, west, north, east = HELSINKI_BBOX
    xs, ys = helsinki.projection.to_xy([south, north], [west, east])
    for building in helsinki.buildings:
        assert building.footprint.is_valid
        assert building.footprint.area > 1.0
        centre = building.footprint.centroid
        assert xs[0] - 1 <= centre.x <= xs[1] + 1
        assert ys[0] - 1 <= centre.y <= ys[1] + 1
        assert building.levels is None or building.levels >= 0
    assert any(b.levels for b in helsinki.buildings)


def test_parks_and_water_are_clipped_to_bbox(helsinki: OsmData) -> None:
    south, west, north, east = HELSINKI_BBOX
    xs, ys = helsinki.projection.to_xy([south, south, north, north], [west, east, east, west])
    from shapely.geometry import Polygon

    area = Polygon(zip(xs, ys, strict=True)).buffer(0.01)
    assert helsinki.parks  # Esplanadi park
    for polygon in [*helsinki.parks, *helsinki.water]:
        assert area.contains(polygon)


def test_japanese_names_survive(tokyo: OsmData) -> None:
    names = {p.name for p in tokyo.pois}
    assert "マクドナルド" in names
    street_names = {d["name"] for _, _, d in tokyo.streets.edges(data=True)}
    assert any(any("\u3040" <= ch <= "\u9fff" for ch in name) for name in street_names)


def test_bz2_xml_without_bbox_uses_node_extent(shared_data: Path) -> None:
    data = load_osm(shared_data / "osm" / "West-Oakland.osm.bz2")
    assert data.streets.number_of_edges() >= 10
    south, west, north, east = data.bbox
    assert south < north
    assert west < east
    centre = ((south + north) / 2, (west + east) / 2)
    assert (data.projection.origin_lat, data.projection.origin_lon) == pytest.approx(centre)
    assert any(p.kind == "amenity=cafe" for p in data.pois)


def test_given_projection_is_used(shared_data: Path) -> None:
    projection = LocalProjection(35.7475, 139.6635)
    data = load_osm(
        shared_data / "osm" / "tokyo_nerima.osm", bbox=TOKYO_BBOX, projection=projection
    )
    assert data.projection is projection
    node = next(iter(data.streets.nodes(data=True)))[1]
    x_m, y_m = projection.to_xy(node["lat"], node["lon"])
    assert (node["x_m"], node["y_m"]) == pytest.approx((float(x_m), float(y_m)))


# write_osm_extract ---------------------------------------------------------------------------
def test_write_osm_extract_is_reference_complete(shared_data: Path, tmp_path: Path) -> None:
    out = write_osm_extract(
        shared_data / "osm" / "Helsinki.osm.pbf", tmp_path / "crop.osm", bbox=HELSINKI_BBOX
    )
    assert out == tmp_path / "crop.osm"
    assert out.read_bytes().startswith(b"<?xml")
    node_ids: set[int] = set()
    way_ids: set[int] = set()
    for obj in osmium.FileProcessor(out):
        if obj.is_node():
            node_ids.add(obj.id)
        elif obj.is_way():
            way_ids.add(obj.id)
            assert all(n.ref in node_ids for n in obj.nodes)
        else:
            assert all(
                m.ref in (node_ids if m.type == "n" else way_ids)
                for m in obj.members
                if m.type != "r"
            )
    assert not [p for p in tmp_path.iterdir() if p.name != "crop.osm"]  # no temporary left


def test_extract_loads_like_the_cropped_source(
    shared_data: Path, tmp_path: Path, tokyo: OsmData
) -> None:
    out = write_osm_extract(
        shared_data / "osm" / "tokyo_nerima.osm", tmp_path / "t.osm", bbox=TOKYO_BBOX
    )
    again = load_osm(out, bbox=TOKYO_BBOX)
    assert set(again.streets.nodes) == set(tokyo.streets.nodes)
    assert again.streets.number_of_edges() == tokyo.streets.number_of_edges()
    assert sorted(p.name for p in again.pois) == sorted(p.name for p in tokyo.pois)


def test_extract_needs_osm_suffix(shared_data: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"must end in \.osm"):
        write_osm_extract(
            shared_data / "osm" / "tokyo_nerima.osm", tmp_path / "t.pbf", bbox=TOKYO_BBOX
        )


# bad input -----------------------------------------------------------------------------------
def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.osm.pbf"
    with pytest.raises(InputFileError, match=rf"OSM file {missing} does not exist"):
        load_osm(missing)


def test_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.osm"
    empty.write_bytes(b"")
    with pytest.raises(InputFileError, match=rf"OSM file {empty} is empty; export the area"):
        load_osm(empty)


@pytest.mark.parametrize(
    ("name", "cut_bytes"),
    [("Helsinki.osm.pbf", 3000), ("tokyo_nerima.osm", 20000)],
)
def test_truncated_file_is_corrupt(
    shared_data: Path, tmp_path: Path, name: str, cut_bytes: int
) -> None:
    broken = tmp_path / name
    broken.write_bytes((shared_data / "osm" / name).read_bytes()[:cut_bytes])
    with pytest.raises(OsmError, match=rf"OSM file {broken} cannot be read .*corrupt or truncated"):
        load_osm(broken)


def test_garbage_bz2_is_corrupt(tmp_path: Path) -> None:
    broken = tmp_path / "x.osm.bz2"
    broken.write_bytes(bz2.compress(b"<osm><node id='1' lat='a'")[:-5])
    with pytest.raises(OsmError, match=r"corrupt or truncated"):
        load_osm(broken)


def test_file_without_nodes(tmp_path: Path) -> None:
    bare = tmp_path / "bare.osm"
    bare.write_text('<?xml version="1.0"?><osm version="0.6"></osm>', encoding="utf-8")
    with pytest.raises(OsmError, match=rf"OSM file {bare} contains no nodes"):
        load_osm(bare)


def test_bbox_outside_the_extract(shared_data: Path) -> None:
    path = shared_data / "osm" / "tokyo_nerima.osm"
    with pytest.raises(
        OsmError,
        match=rf"OSM extract {path} does not overlap bbox 0,0,1,1 \(it covers 35\.73",
    ):
        load_osm(path, bbox=(0, 0, 1, 1))


def test_bbox_inside_the_extract_without_nodes(shared_data: Path) -> None:
    """A 10 m bbox between West Oakland's nodes: the extract "does not overlap" it, said the
    message, naming a span that holds it."""
    with pytest.raises(
        OsmError,
        match=r"West-Oakland.osm.bz2 has no node inside bbox 37.81,-122.3,37.8101,-122.2999 "
        r"although its nodes span 37.80\d+,-122.31\d+,37.81\d+,-122.29\d+ around it; widen "
        r"the bbox",
    ):
        load_osm(
            shared_data / "osm" / "West-Oakland.osm.bz2", bbox=(37.81, -122.3, 37.8101, -122.2999)
        )


def test_bbox_without_streets(shared_data: Path) -> None:
    """A 22 m bbox inside a block. (One 55 m tall across Unioninkatu, with no node of it
    inside, was "without streets" while streets were cut at their last node inside.)"""
    path = shared_data / "osm" / "Helsinki.osm.pbf"
    with pytest.raises(
        OsmError,
        match=rf"no streets inside bbox 60\.165,24\.951,60\.1652,24\.9514 of {path}; widen --bbox",
    ):
        load_osm(path, bbox=(60.1650, 24.9510, 60.1652, 24.9514))


@pytest.mark.parametrize(
    ("bbox", "message"),
    [
        ("60,24,61", "must be four finite numbers"),
        ("a,b,c,d", "must be four numbers S,W,N,E"),
        ((61, 24, 60, 25), "must satisfy -90 <= S < N <= 90"),
    ],
)
def test_bad_bbox(bbox: str | tuple[float, ...], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_bbox(bbox)


def test_bbox_string_is_parsed() -> None:
    assert parse_bbox("60.1, 24.9,60.2,25") == (60.1, 24.9, 60.2, 25.0)


def test_poi_point_inside_its_building(helsinki: OsmData) -> None:
    for poi in helsinki.pois:
        if poi.element != "node":
            footprints = [b.footprint for b in helsinki.buildings if b.osm_id == poi.osm_id]
            for footprint in footprints:
                assert footprint.buffer(0.5).contains(Point(poi.x_m, poi.y_m))


def test_osm_data_pickles_for_worker_processes(tokyo: OsmData) -> None:
    import pickle

    again = pickle.loads(pickle.dumps(tokyo))
    assert set(again.streets.nodes) == set(tokyo.streets.nodes)
    assert again.pois == tokyo.pois
    assert len({*tokyo.pois}) == len(tokyo.pois)  # hashable despite their tag dicts


def test_extract_outside_the_source(shared_data: Path, tmp_path: Path) -> None:
    path = shared_data / "osm" / "West-Oakland.osm.bz2"
    with pytest.raises(OsmError, match=rf"OSM extract {path} does not overlap bbox 10,10,11,11"):
        write_osm_extract(path, tmp_path / "x.osm", bbox=(10, 10, 11, 11))
    assert list(tmp_path.iterdir()) == []


def test_all_components_keeps_disconnected_streets(shared_data: Path) -> None:
    # east of TOKYO_BBOX, whose streets are one piece inside it (its second "piece" was a
    # lone node the cut at the last node inside left)
    path, bbox = shared_data / "osm" / "tokyo_nerima.osm", (35.745, 139.667, 35.750, 139.674)
    everything = load_osm(path, bbox=bbox, all_components=True)
    longest = load_osm(path, bbox=bbox)
    assert nx.number_connected_components(everything.streets) >= 2
    assert set(longest.streets.nodes) < set(everything.streets.nodes)
    assert nx.is_connected(longest.streets)
