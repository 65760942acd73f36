"""Small city directories for the map tests, built straight from a real OSM crop.

``make_city(root, with_osm=...)`` writes what the pipeline would: ``city.json``, one trajectory
per OSM street (poses every metre along it, ``trajectories/<id>/poses.csv`` +
``trajectory.json``), a ``graph.json`` per docs/contracts.md with both directions of each
street (the reverse one ``reverse=True``), and, with ``with_osm``, ``map/extract.osm``. No
video: maps only read positions.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from city360.city import CityDir, CityManifest, SourceFile, TrajectoryMeta, TrajectoryPoses
from city360.maps.osm import OsmData, load_osm, write_osm_extract

HELSINKI_BBOX = (60.166, 24.940, 60.170, 24.948)


def _resample(polyline: np.ndarray, spacing_m: float = 1.0) -> np.ndarray:
    steps = np.hypot(*np.diff(polyline, axis=0).T)
    cumulative = np.concatenate([[0.0], np.cumsum(steps)])
    count = max(2, int(np.ceil(cumulative[-1] / spacing_m)) + 1)
    at = np.linspace(0.0, cumulative[-1], count)
    return np.column_stack(
        [np.interp(at, cumulative, polyline[:, 0]), np.interp(at, cumulative, polyline[:, 1])]
    )


def make_city(root: Path, crop: tuple[Path, OsmData], *, with_osm: bool) -> tuple[Path, OsmData]:
    """A city directory of the Helsinki crop's streets (see the module docstring)."""
    root.mkdir(parents=True)
    extract, data = crop
    projection = data.projection
    city = CityDir(root)
    sources = []
    if with_osm:
        (root / "map").mkdir()
        shutil.copyfile(extract, root / "map" / "extract.osm")
        sources.append(SourceFile(kind="osm", path="map/extract.osm", sha256="0" * 64))
    city.write_manifest(
        CityManifest(
            name="helsinki-test",
            crs=projection.proj4,
            origin_lat=projection.origin_lat,
            origin_lon=projection.origin_lon,
            bbox=HELSINKI_BBOX,
            sources=sources,
        )
    )
    nodes = [
        {
            "id": int(n),
            "kind": "junction" if d["street_count"] >= 3 else "dead_end",
            "x_m": d["x_m"],
            "y_m": d["y_m"],
            "lat": d["lat"],
            "lon": d["lon"],
        }
        for n, d in data.streets.nodes(data=True)
    ]
    edges = []
    for k, (u, v, d) in enumerate(data.streets.edges(data=True)):
        trajectory_id = f"t{k:03d}"
        points = _resample(np.asarray(d["polyline_xy"]))
        lat, lon = projection.to_latlon(points[:, 0], points[:, 1])
        heading = np.degrees(np.arctan2(*np.diff(points, axis=0).T)) % 360
        heading = np.append(heading, heading[-1])
        count = len(points)
        poses = TrajectoryPoses(
            x_m=points[:, 0],
            y_m=points[:, 1],
            lat=lat,
            lon=lon,
            heading_deg=heading,
            t_s=np.arange(count, dtype=np.float64),
            source_pts=np.arange(count, dtype=np.int64),
        )
        meta = TrajectoryMeta(
            id=trajectory_id,
            source_video=f"{trajectory_id}.mp4",
            source_sha256="0" * 64,
            gps_source=f"{trajectory_id}.gpx",
            width=64,
            height=32,
            frame_count=count,
            spacing_m=1.0,
            length_m=float(d["length_m"]),
        )
        folder = city.trajectory_dir(trajectory_id)
        folder.mkdir(parents=True)
        CityDir.write_trajectory_files(folder, meta, poses)
        for reverse, (a, b) in ((False, (u, v)), (True, (v, u))):
            edge_id = f"{trajectory_id}{'r' if reverse else 'f'}"
            edges.append(
                {
                    "source": int(a),
                    "target": int(b),
                    "key": edge_id,
                    "id": edge_id,
                    "trajectory": trajectory_id,
                    "first_frame": 0,
                    "last_frame": count - 1,
                    "reverse": reverse,
                    "length_m": float(d["length_m"]),
                    "twin": f"{trajectory_id}{'f' if reverse else 'r'}",
                    "transitions": [],
                }
            )
    graph = {
        "directed": True,
        "multigraph": True,
        "graph": {"crs": projection.proj4, "schema_version": 1},
        "nodes": nodes,
        "edges": edges,
    }
    city.graph_path.write_text(json.dumps(graph), encoding="utf-8")
    return root, data


@pytest.fixture(scope="session")
def helsinki_crop(
    shared_data: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, OsmData]:
    """``HELSINKI_BBOX`` of Helsinki.osm.pbf as OSM XML, and its layers."""
    folder = tmp_path_factory.mktemp("helsinki-crop")
    extract = write_osm_extract(
        shared_data / "osm" / "Helsinki.osm.pbf", folder / "crop.osm", bbox=HELSINKI_BBOX
    )
    return extract, load_osm(extract, bbox=HELSINKI_BBOX)


@pytest.fixture(scope="session")
def osm_city(
    helsinki_crop: tuple[Path, OsmData], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, OsmData]:
    """A Helsinki-centre city with ``map/extract.osm`` (base map from OSM)."""
    root = tmp_path_factory.mktemp("maps") / "helsinki-osm"
    return make_city(root, helsinki_crop, with_osm=True)


@pytest.fixture(scope="session")
def plain_city(
    helsinki_crop: tuple[Path, OsmData], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, OsmData]:
    """The same city without any OSM file (base map from its graph and trajectories)."""
    root = tmp_path_factory.mktemp("maps") / "helsinki-plain"
    return make_city(root, helsinki_crop, with_osm=False)


@pytest.fixture(scope="session")
def ocr_text() -> object:
    """``ocr_text(image) -> str``: Tesseract on an RGB image, upscaled 4x for small print."""
    import shutil

    pytesseract = pytest.importorskip("pytesseract", reason="pytesseract is not installed")
    if shutil.which("tesseract") is None:
        pytest.skip("tesseract is not installed (Debian: apt-get install tesseract-ocr)")
    import cv2

    def read(image: np.ndarray) -> str:
        big = cv2.resize(image, None, fx=4, fy=4, interpolation=cv2.INTER_CUBIC)
        return str(pytesseract.image_to_string(big))

    return read
