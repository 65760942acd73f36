"""The procedural scene: layout, ground truth, determinism, moving things."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import networkx as nx
import numpy as np
import pytest
from shapely.geometry import LineString, Point

from city360.errors import ConfigError
from city360.geo import angle_diff_deg, bearing_deg
from city360.synth import _layout
from city360.synth._streets import street_list
from city360.synth.scene import OBJECT_KINDS, Scene, build_scene
from tests.fixtures.scenes import GRID_SHOP_NAMES, grid_inputs


def test_same_seed_same_scene(small_scene: Scene) -> None:
    again = build_scene(**grid_inputs(), seed=7)
    for name in ("ground", "walls", "signs", "boxes"):
        np.testing.assert_array_equal(getattr(small_scene, name), getattr(again, name))
    np.testing.assert_array_equal(small_scene.sign_atlas.pages, again.sign_atlas.pages)
    assert small_scene.poi_truths() == again.poi_truths()
    assert small_scene.object_truths() == again.object_truths()
    np.testing.assert_array_equal(small_scene.dynamic_boxes(3.5), again.dynamic_boxes(3.5))


def test_other_seed_other_scene(small_scene: Scene) -> None:
    other = build_scene(**grid_inputs(), seed=8)
    assert other.walls.shape != small_scene.walls.shape or not np.array_equal(
        other.walls, small_scene.walls
    )
    assert other.object_truths() != small_scene.object_truths()


def test_every_object_kind_is_present(small_scene: Scene) -> None:
    counts = Counter(o.kind for o in small_scene.object_truths())
    assert set(counts) == set(OBJECT_KINDS)
    ids = [o.id for o in small_scene.object_truths()]
    assert len(set(ids)) == len(ids)


def test_objects_stand_on_sidewalks_of_their_street(small_scene: Scene) -> None:
    streets = {(s.u, s.v): s for s in street_list(small_scene.streets)}
    for obj in small_scene.object_truths():
        assert obj.edge is not None
        street = streets[obj.edge]
        distance = street.line.distance(Point(obj.x_m, obj.y_m))
        assert street.road_half_m < distance <= street.building_line_m + 1e-6, obj


def test_named_pois_keep_names_and_unnamed_get_seeded_inventions(small_scene: Scene) -> None:
    truths = {p.id: p for p in small_scene.poi_truths()}
    for k, name in enumerate(GRID_SHOP_NAMES):
        poi = truths[f"osm-node-{1000 + k}"]
        assert poi.name == name
        assert not poi.invented_name
    unnamed = truths[f"osm-node-{1000 + len(GRID_SHOP_NAMES)}"]
    assert unnamed.invented_name
    assert unnamed.name
    assert unnamed.name not in GRID_SHOP_NAMES
    again = build_scene(**grid_inputs(), seed=7)
    assert {p.id: p.name for p in again.poi_truths()} == {k: p.name for k, p in truths.items()}
    names_by_seed = {
        seed: [
            p.name for p in build_scene(**grid_inputs(), seed=seed).poi_truths() if p.invented_name
        ]
        for seed in (1, 2, 3)
    }
    assert len({tuple(n) for n in names_by_seed.values()}) > 1


def test_too_few_pois_are_topped_up_with_invented_shops() -> None:
    inputs = grid_inputs(names=(), unnamed=0)
    scene = build_scene(**inputs, seed=3, min_pois_per_km=20.0)
    total_km = sum(d["length_m"] for *_, d in inputs["streets"].edges(data=True)) / 1000
    pois = scene.poi_truths()
    assert len(pois) >= 0.8 * math.ceil(total_km * 20.0)
    assert all(p.invented_name and p.id.startswith("invented-") for p in pois)
    assert len({p.name for p in pois}) == len(pois)
    none = build_scene(**inputs, seed=3, min_pois_per_km=0.0)
    assert none.poi_truths() == []


def test_japanese_extracts_get_japanese_inventions() -> None:
    inputs = grid_inputs(names=("練馬書店", "さくら薬局", "みどり食堂"), unnamed=2)
    scene = build_scene(**inputs, seed=5)
    invented = [p.name for p in scene.poi_truths() if p.invented_name]
    assert invented
    assert all(any(ord(ch) > 0x3000 for ch in name) for name in invented)


def test_poi_view_pose_faces_the_sign(small_scene: Scene) -> None:
    streets = {(s.u, s.v): s for s in street_list(small_scene.streets)}
    pois = small_scene.poi_truths()
    assert len(pois) == len(GRID_SHOP_NAMES) + 1  # every POI found a facade
    for poi in pois:
        view = poi.view
        street = streets[view.edge]
        x, y, heading = street.point_at(view.offset_m)
        assert (view.x_m, view.y_m) == pytest.approx((x, y))
        assert view.heading_deg == pytest.approx(heading)
        to_sign = bearing_deg(poi.x_m - view.x_m, poi.y_m - view.y_m)
        assert angle_diff_deg(view.look_bearing_deg, to_sign) == pytest.approx(0.0, abs=1e-6)
        turn = angle_diff_deg(view.look_bearing_deg, view.heading_deg)
        assert turn == pytest.approx(90.0 if poi.street_side == "right" else -90.0, abs=1.0)
        # the board faces back at the view pose, and stands behind the sidewalk
        assert abs(angle_diff_deg(poi.facade_normal_deg, (to_sign + 180.0) % 360.0)) < 1.0
        distance = math.hypot(poi.x_m - view.x_m, poi.y_m - view.y_m)
        assert street.road_half_m < distance < street.building_line_m + _layout._RAY_REACH_M


def test_poi_snaps_to_its_nearest_street_side(small_scene: Scene) -> None:
    inputs = grid_inputs()
    by_id = {f"osm-node-{p.osm_id}": p for p in inputs["pois"]}
    for poi in small_scene.poi_truths():
        source = by_id[poi.id]
        streets = street_list(small_scene.streets)
        nearest = min(streets, key=lambda s: s.line.distance(Point(source.x_m, source.y_m)))
        assert poi.view.edge == (nearest.u, nearest.v)
        _, lateral = nearest.locate(source.x_m, source.y_m)
        assert poi.street_side == ("left" if lateral > 0 else "right")


def test_truth_ids_and_coordinates(small_scene: Scene) -> None:
    graph = small_scene.streets
    junctions = small_scene.junction_truths()
    assert {j.id for j in junctions} == set(graph.nodes)
    assert {j.id: j.degree for j in junctions} == dict(graph.degree())
    streets = small_scene.street_truths()
    assert len(streets) == graph.number_of_edges()
    assert all(s.u <= s.v and s.length_m == pytest.approx(80.0) for s in streets)
    projection = small_scene.projection
    for obj in small_scene.object_truths()[:5]:
        x, y = projection.to_xy(obj.lat, obj.lon)
        assert (float(x), float(y)) == pytest.approx((obj.x_m, obj.y_m), abs=1e-3)


def test_buildings_fill_the_blocks_but_never_the_streets() -> None:
    inputs = grid_inputs()
    streets = street_list(inputs["streets"])
    plans = _layout.plan_buildings(streets, inputs["buildings"], [], np.random.default_rng(0))
    real = [p for p in plans if not p.procedural]
    assert len(real) == len(inputs["buildings"])
    assert len(plans) - len(real) > 20  # procedural lots along the 12 streets
    for plan in plans:
        for street in streets:
            assert not plan.footprint.intersects(street.line.buffer(street.road_half_m))
    # a real footprint that reaches into the road is cut back, not dropped
    from shapely.geometry import box

    from tests.fixtures.scenes import FakeBuilding

    intruder = FakeBuilding(box(20, -2, 50, 20), 10.0, None)
    cut = _layout.plan_buildings(streets, [intruder], [], np.random.default_rng(0))
    assert not cut[0].procedural
    assert cut[0].footprint.bounds[1] >= streets[0].building_line_m - 1e-6


def test_pedestrians_and_vehicles_move_continuously(small_scene: Scene) -> None:
    assert small_scene.dynamic_box_count > 0
    a = small_scene.dynamic_boxes(10.0)
    b = small_scene.dynamic_boxes(10.1)
    assert a.shape == b.shape == (small_scene.dynamic_box_count, 10)
    step = np.hypot(*(b[:, :2] - a[:, :2]).T)
    assert step.max() < 8.0 * 0.1 + 0.2  # nothing faster than a car at 8 m/s
    assert np.count_nonzero(step > 0.05) > len(step) // 2
    np.testing.assert_array_equal(small_scene.dynamic_boxes(10.0), a)


def test_movers_stay_on_their_street(small_scene: Scene) -> None:
    streets = street_list(small_scene.streets)
    union = [s.line.buffer(s.building_line_m + 0.5) for s in streets]
    for t_s in (0.0, 37.0, 500.0):
        boxes = small_scene.dynamic_boxes(t_s)
        for row in boxes[::3]:
            assert any(zone.contains(Point(row[0], row[1])) for zone in union)


def test_bad_inputs() -> None:
    inputs = grid_inputs()
    with pytest.raises(ConfigError, match="the street graph has no edges"):
        build_scene(**{**inputs, "streets": nx.MultiGraph()}, seed=1)
    named = nx.MultiGraph()
    named.add_node("a", x_m=0.0, y_m=0.0)
    named.add_node("b", x_m=50.0, y_m=0.0)
    named.add_edge("a", "b", polyline_xy=[(0.0, 0.0), (50.0, 0.0)])
    with pytest.raises(ConfigError, match="street node ids must be integers"):
        build_scene(**{**inputs, "streets": named}, seed=1)
    with pytest.raises(ConfigError, match=r"`min_pois_per_km` must be >= 0, got -1"):
        build_scene(**inputs, seed=1, min_pois_per_km=-1)


def test_polyline_stored_backwards_is_reoriented() -> None:
    graph = nx.MultiGraph()
    graph.add_node(1, x_m=0.0, y_m=0.0)
    graph.add_node(2, x_m=60.0, y_m=0.0)
    graph.add_edge(2, 1, highway="residential", polyline_xy=[(60.0, 0.0), (30.0, 5.0), (0.0, 0.0)])
    (street,) = street_list(graph)
    assert (street.u, street.v) == (1, 2)
    assert tuple(street.polyline[0]) == (0.0, 0.0)
    assert isinstance(street.line, LineString)


def test_repr_counts_contents(small_scene: Scene) -> None:
    text = repr(small_scene)
    assert text.startswith("Scene(seed=7, streets=12, ")
    assert f"pois={len(small_scene.poi_truths())}" in text


def test_scene_pickles_for_worker_processes(small_scene: Scene) -> None:
    import pickle

    copy = pickle.loads(pickle.dumps(small_scene))
    assert copy.poi_truths() == small_scene.poi_truths()
    np.testing.assert_array_equal(copy.dynamic_boxes(2.0), small_scene.dynamic_boxes(2.0))


def test_parks_are_drawn_and_kept_free_of_buildings() -> None:
    from shapely.geometry import box

    from city360.synth._meshes import PARK_RGB

    park = box(100.0, 100.0, 140.0, 140.0)  # the middle of the north-east block
    inputs = grid_inputs()
    scene = build_scene(**inputs, seed=7, parks=[park])
    park_rows = np.all(np.isclose(scene.ground[:, 6:9], PARK_RGB), axis=1)
    assert park_rows.sum() >= 3
    streets = street_list(inputs["streets"])
    plans = _layout.plan_buildings(streets, inputs["buildings"], [park], np.random.default_rng(0))
    assert not any(p.footprint.intersects(park) for p in plans if p.procedural)


def test_signs_without_facades_get_kiosks_that_do_not_overlap() -> None:
    streets = street_list(grid_inputs()["streets"])
    street = streets[0]
    spots = [tuple(street.offset_point(offset, 9.0)) for offset in (30.0, 31.0, 33.0, 50.0)]
    buildings: list[_layout.BuildingPlan] = []
    signs = _layout.place_signs(
        streets, spots, [4.0] * len(spots), buildings, np.random.default_rng(0)
    )
    assert len(signs) == len(spots)
    assert len(buildings) >= 2
    for i, a in enumerate(buildings):
        for b in buildings[i + 1 :]:
            assert a.footprint.intersection(b.footprint).area < 1e-6
    spans = sorted((s.offset_m - s.width_m / 2, s.offset_m + s.width_m / 2) for s in signs)
    assert all(left[1] <= right[0] for left, right in itertools.pairwise(spans))


def test_vehicles_turn_round_without_jumping(small_scene: Scene) -> None:
    times = np.arange(0.0, 120.0, 0.05)
    tracks = np.stack([small_scene.dynamic_boxes(t)[:, :2] for t in times])
    steps = np.hypot(*np.diff(tracks, axis=0).transpose(2, 0, 1))
    assert steps.max() < 8.0 * 0.05 + 0.25  # no box moves faster than 8 m/s, ever
