"""A small hand-made city directory written per docs/contracts.md, for the tasks tests.

A 3 x 3 grid of junctions 80 m apart; every street is filmed in both directions, each
direction as its own trajectory sampled every metre; graph.json is networkx node-link data of
a MultiDiGraph with transitions labelled LEFT/UP/RIGHT; groundtruth/scene.json has named POIs
on both sides of every street and countable objects along them. Nothing here depends on other
stages' code, so the tasks tests run before synth and pose_graph exist.
"""

from __future__ import annotations

import math
from pathlib import Path

import networkx as nx
import numpy as np

from city360._atomic import atomic_write_json
from city360.city import CityDir, CityManifest, TrajectoryMeta, TrajectoryPoses
from city360.geo import LocalProjection, angle_diff_deg, bearing_deg
from city360.synth.groundtruth import (
    Junction,
    ObjectTruth,
    PoiTruth,
    SceneTruth,
    StreetEdge,
    ViewPose,
)

SPACING_M = 80.0
ORIGIN = (60.1699, 24.9384)
SHOP_NAMES = [
    "Kahvila Aalto", "Kirja Nurkka", "Leipomo Sola", "Apteekki Kivi", "Kukka Puoti",
    "Pizzeria Uno", "Optikko Lasi", "Sushi Kala", "Kenkä Kauppa", "Pyörä Paja",
    "Musiikki Talo", "Lelu Maa", "Kello Seppä", "Sauna Shop", "Tee Huone",
    "Parturi Veli", "Kala Tori", "Juusto Kamari", "Olut Tupa", "Kamera Keskus",
    "Posti Piste", "Vaate Vintti", "Herkku Hetki", "Kirppis Kulma",
]  # fmt: skip


def _street_polyline(a: tuple[float, float], b: tuple[float, float]) -> np.ndarray:
    n = int(math.hypot(b[0] - a[0], b[1] - a[1]))
    t = np.linspace(0.0, 1.0, n + 1)
    return np.column_stack([a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t])


def build_toy_city(root: Path, *, seed: int = 3) -> Path:
    """Write the toy city into ``root`` and return it."""
    rng = np.random.default_rng(seed)
    proj = LocalProjection(*ORIGIN)
    city = CityDir(root)
    positions = {r * 3 + c: (c * SPACING_M, -r * SPACING_M) for r in range(3) for c in range(3)}
    streets_uv = [(n, n + 1) for n in positions if n % 3 != 2] + [
        (n, n + 3) for n in positions if n < 6
    ]
    degree = {n: sum(n in uv for uv in streets_uv) for n in positions}

    def latlon(x: float, y: float) -> tuple[float, float]:
        lat, lon = proj.to_latlon(x, y)
        return float(lat), float(lon)

    junctions = [
        Junction(id=n, x_m=x, y_m=y, lat=latlon(x, y)[0], lon=latlon(x, y)[1], degree=degree[n])
        for n, (x, y) in positions.items()
    ]
    streets = [
        StreetEdge(
            u=u,
            v=v,
            length_m=SPACING_M,
            name=f"Katu {k}",
            polyline_xy=[tuple(p) for p in _street_polyline(positions[u], positions[v])],
        )
        for k, (u, v) in enumerate(streets_uv)
    ]
    pois: list[PoiTruth] = []
    objects: list[ObjectTruth] = []
    names = iter(SHOP_NAMES * 3)
    kinds = ["tree", "bench", "vending_machine"]
    for k, (u, v) in enumerate(streets_uv):
        (ux, uy), (vx, vy) = positions[u], positions[v]
        heading = bearing_deg(vx - ux, vy - uy)
        dx, dy = (vx - ux) / SPACING_M, (vy - uy) / SPACING_M
        right = (dy, -dx)  # unit vector to the right of travel u->v
        for side, sign in (("right", 1.0), ("left", -1.0)):
            for offset in (22.0, 40.0, 58.0)[: 2 + (k + (side == "left")) % 2]:
                name = next(names)
                px = ux + dx * offset + sign * right[0] * 8.0
                py = uy + dy * offset + sign * right[1] * 8.0
                cx, cy = ux + dx * offset, uy + dy * offset
                look = bearing_deg(px - cx, py - cy)
                pois.append(
                    PoiTruth(
                        id=f"poi{len(pois)}",
                        name=name if len(pois) < len(SHOP_NAMES) else f"{name} {len(pois)}",
                        kind="shop=convenience",
                        invented_name=True,
                        x_m=px,
                        y_m=py,
                        lat=latlon(px, py)[0],
                        lon=latlon(px, py)[1],
                        facade_normal_deg=(look + 180.0) % 360.0,
                        street_side=side,  # type: ignore[arg-type]
                        view=ViewPose(
                            x_m=cx,
                            y_m=cy,
                            lat=latlon(cx, cy)[0],
                            lon=latlon(cx, cy)[1],
                            heading_deg=heading,
                            look_bearing_deg=look,
                            edge=(u, v),
                            offset_m=offset,
                        ),
                    )
                )
        for _ in range(int(rng.integers(1, 6))):
            offset = float(rng.uniform(5.0, 75.0))
            sign = float(rng.choice([-1.0, 1.0]))
            ox = ux + dx * offset + sign * right[0] * 5.0
            oy = uy + dy * offset + sign * right[1] * 5.0
            objects.append(
                ObjectTruth(
                    id=f"obj{len(objects)}",
                    kind=kinds[int(rng.integers(0, 3))],
                    x_m=ox,
                    y_m=oy,
                    lat=latlon(ox, oy)[0],
                    lon=latlon(ox, oy)[1],
                    edge=(u, v),
                )
            )
    SceneTruth(
        seed=seed, junctions=junctions, streets=streets, pois=pois, objects=objects, videos=[]
    ).save(city.groundtruth_dir / "scene.json")

    graph = nx.MultiDiGraph(crs=proj.proj4, schema_version=1, build={"toy": True})
    for n, (x, y) in positions.items():
        lat, lon = latlon(x, y)
        kind = "junction" if degree[n] >= 2 else "dead_end"
        graph.add_node(n, kind=kind, x_m=x, y_m=y, lat=lat, lon=lon)
    directed = [(u, v) for u, v in streets_uv] + [(v, u) for u, v in streets_uv]
    for u, v in directed:
        seg_id = f"s{u}-{v}"
        xy = _street_polyline(positions[u], positions[v])
        heading = bearing_deg(xy[-1, 0] - xy[0, 0], xy[-1, 1] - xy[0, 1])
        lat, lon = proj.to_latlon(xy[:, 0], xy[:, 1])
        poses = TrajectoryPoses(
            x_m=xy[:, 0],
            y_m=xy[:, 1],
            lat=lat,
            lon=lon,
            heading_deg=np.full(len(xy), heading),
            t_s=np.arange(len(xy)) / 1.4,
            source_pts=np.arange(len(xy)),
        )
        meta = TrajectoryMeta(
            id=seg_id,
            source_video=f"videos/{seg_id}.mp4",
            source_sha256="0" * 64,
            gps_source="toy",
            width=64,
            height=32,
            frame_count=len(xy),
            spacing_m=1.0,
            length_m=SPACING_M,
        )
        folder = city.trajectory_dir(seg_id)
        folder.mkdir(parents=True, exist_ok=True)
        CityDir.write_trajectory_files(folder, meta, poses)
        graph.add_edge(
            u,
            v,
            key=seg_id,
            id=seg_id,
            trajectory=seg_id,
            first_frame=0,
            last_frame=len(xy) - 1,
            reverse=False,
            length_m=SPACING_M,
            start_heading_deg=heading,
            end_heading_deg=heading,
            twin=f"s{v}-{u}",
        )
    for u, v, _key, attrs in graph.edges(keys=True, data=True):
        transitions = []
        for _, w, out_key, out in graph.out_edges(v, keys=True, data=True):
            if w == u and graph.out_degree(v) > 1:
                continue
            turn = angle_diff_deg(out["start_heading_deg"], attrs["end_heading_deg"])
            label = "UP" if abs(turn) < 30 else ("RIGHT" if turn > 0 else "LEFT")
            transitions.append({"edge": out_key, "turn_deg": turn, "label": label})
        attrs["transitions"] = transitions
    atomic_write_json(city.graph_path, nx.node_link_data(graph, edges="edges"))
    xs = [p[0] for p in positions.values()]
    ys = [p[1] for p in positions.values()]
    s, w = latlon(min(xs), min(ys))
    n_, e = latlon(max(xs), max(ys))
    city.write_manifest(
        CityManifest(
            name="toy",
            crs=proj.proj4,
            origin_lat=ORIGIN[0],
            origin_lon=ORIGIN[1],
            bbox=(s, w, n_, e),
            synthetic=True,
        )
    )
    return root
