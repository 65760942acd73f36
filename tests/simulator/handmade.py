"""A tiny hand-made city for the simulator tests, written per docs/contracts.md.

A plus-shaped crossing: junction 0 at the origin and four dead ends 30 m away (1 north,
2 south, 3 west, 4 east). Two videos: ``ns`` filmed from the north end to the south end and
``ew`` from the west end to the east end, one frame a metre (61 frames each). Each street half
is a forward segment plus a ``reverse=True`` twin, so every direction is walkable; dead ends
offer the U-turn onto the twin as UP (pose_graph's policy).

Frames are recognisable patterns painted in the world frame, so a correct renderer shows the
same thing whichever video it uses: above the horizon the hue encodes the absolute bearing of
the column (:func:`bearing_hue`); below it the grey level encodes the frame index
(:func:`ground_level`), which is how the tests see time running forwards or backwards.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import networkx as nx
import numpy as np

from city360.city import CityDir, CityManifest, TrajectoryMeta, TrajectoryPoses
from city360.geo import LocalProjection, angle_diff_deg

ORIGIN = (60.17, 24.94)
ARM_M = 30.0
FRAME_W, FRAME_H = 256, 128

# segment id -> (trajectory, first, last, reverse, from node, to node)
SEGMENTS: dict[str, tuple[str, int, int, bool, int, int]] = {
    "ns_a": ("ns", 0, 30, False, 1, 0),
    "ns_b": ("ns", 30, 60, False, 0, 2),
    "ns_a_r": ("ns", 0, 30, True, 0, 1),
    "ns_b_r": ("ns", 30, 60, True, 2, 0),
    "ew_a": ("ew", 0, 30, False, 3, 0),
    "ew_b": ("ew", 30, 60, False, 0, 4),
    "ew_a_r": ("ew", 0, 30, True, 0, 3),
    "ew_b_r": ("ew", 30, 60, True, 4, 0),
}
STREETS = {seg: i for i, seg in enumerate(("ns_a", "ns_b", "ew_a", "ew_b"))}
STREETS.update({f"{seg}_r": i for seg, i in list(STREETS.items())})
TWINS = {"ns_a": "ns_a_r", "ns_b": "ns_b_r", "ew_a": "ew_a_r", "ew_b": "ew_b_r"}
TWINS.update({v: k for k, v in TWINS.items()})
HEADINGS = {"ns": 180.0, "ew": 90.0}
NODES = {0: (0.0, 0.0), 1: (0.0, ARM_M), 2: (0.0, -ARM_M), 3: (-ARM_M, 0.0), 4: (ARM_M, 0.0)}

EXPECTED_TURNS = {
    # arriving segment -> {label: next segment}, from geometry
    "ns_a": {"LEFT": "ew_b", "UP": "ns_b", "RIGHT": "ew_a_r"},
    "ns_b_r": {"LEFT": "ew_a_r", "UP": "ns_a_r", "RIGHT": "ew_b"},
    "ew_a": {"LEFT": "ns_a_r", "UP": "ew_b", "RIGHT": "ns_b"},
    "ew_b_r": {"LEFT": "ns_b", "UP": "ew_a_r", "RIGHT": "ns_a_r"},
}


def bearing_hue(bearing_deg: float) -> int:
    """OpenCV hue (0..179) painted above the horizon at an absolute bearing."""
    return int(bearing_deg % 360.0 / 2.0) % 180


def ground_level(frame_index: int) -> int:
    """Grey level painted below the horizon in frame ``frame_index``."""
    return 40 + 3 * frame_index


def frame_image(
    camera_bearing_deg: float, frame_index: int, width: int = FRAME_W, height: int = FRAME_H
) -> np.ndarray:
    """RGB equirect frame whose centre column looks along ``camera_bearing_deg``."""
    lon = ((np.arange(width) + 0.5) / width) * 360.0 - 180.0
    bearing = (camera_bearing_deg + lon) % 360.0
    hsv = np.zeros((height // 2, width, 3), np.uint8)
    hsv[..., 0] = (bearing / 2.0).astype(np.uint8)[None, :] % 180
    hsv[..., 1] = 255
    hsv[..., 2] = 230
    sky = cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)
    ground = np.full((height // 2, width, 3), ground_level(frame_index), np.uint8)
    return np.concatenate([sky, ground], axis=0)


def _encode(path: Path, frames: list[np.ndarray]) -> None:
    from city360.video_store.writer import FrameWriter

    height, width = frames[0].shape[:2]
    with FrameWriter(path, width, height, crf=8, slices=1) as writer:
        for image in frames:
            writer.write(image)


def _transitions(segment_id: str) -> list[dict[str, object]]:
    trajectory, _, _, reverse, _, end = SEGMENTS[segment_id]
    if NODES[end] != (0.0, 0.0):  # a dead end: only the U-turn, as pose_graph offers it
        return [{"edge": TWINS[segment_id], "turn_deg": 180.0, "label": "UP", "uturn": True}]
    arrive = (HEADINGS[trajectory] + (180.0 if reverse else 0.0)) % 360.0
    out = []
    for other, (traj2, _, _, rev2, start2, _) in SEGMENTS.items():
        if start2 != end:
            continue
        leave = (HEADINGS[traj2] + (180.0 if rev2 else 0.0)) % 360.0
        turn = angle_diff_deg(leave, arrive)
        if abs(turn) > 135.0:
            continue  # U-turn: done by turning round, not offered as a branch
        label = "UP" if abs(turn) < 45.0 else ("LEFT" if turn < 0 else "RIGHT")
        out.append({"edge": other, "turn_deg": turn, "label": label})
    return out


def build_city(root: Path, *, width: int = FRAME_W, height: int = FRAME_H) -> Path:
    """Write the city into ``root`` (created) with frames of ``width`` x ``height`` and return
    it (bigger frames are for measuring speed)."""
    root.mkdir(parents=True, exist_ok=True)
    projection = LocalProjection(*ORIGIN)
    city = CityDir(root)
    city.write_manifest(
        CityManifest(
            name="plus",
            crs=projection.proj4,
            origin_lat=ORIGIN[0],
            origin_lon=ORIGIN[1],
            bbox=(60.16, 24.93, 60.18, 24.95),
        )
    )
    for trajectory, heading in HEADINGS.items():
        n = 61
        s = np.arange(n, dtype=np.float64) - ARM_M  # -30 .. 30
        if trajectory == "ns":
            x, y = np.zeros(n), -s
        else:
            x, y = s, np.zeros(n)
        lat, lon = projection.to_latlon(x, y)
        poses = TrajectoryPoses(
            x_m=x, y_m=y, lat=lat, lon=lon, heading_deg=np.full(n, heading),
            t_s=np.arange(n, dtype=np.float64), source_pts=np.arange(n, dtype=np.int64),
        )  # fmt: skip
        folder = city.trajectory_dir(trajectory)
        folder.mkdir(parents=True, exist_ok=True)
        _encode(folder / "frames.mp4", [frame_image(heading, i, width, height) for i in range(n)])
        meta = TrajectoryMeta(
            id=trajectory, source_video=f"{trajectory}.mp4", source_sha256="0" * 64,
            gps_source="handmade", width=width, height=height, frame_count=n,
            spacing_m=1.0, length_m=60.0, camera_yaw_offset_deg=0.0, clock_offset_s=0.0,
        )  # fmt: skip
        CityDir.write_trajectory_files(folder, meta, poses)
    write_graph(root)
    return root


def write_graph(root: Path) -> None:
    """Write ``graph.json`` of the plus city into ``root`` (in pose_graph's schema)."""
    projection = LocalProjection(*ORIGIN)
    city = CityDir(root)
    graph = nx.MultiDiGraph(crs=projection.proj4, schema_version=1, build={})
    for node, (x, y) in NODES.items():
        lat, lon = projection.to_latlon(x, y)
        kind = "junction" if node == 0 else "dead_end"
        degree = 4 if node == 0 else 1
        graph.add_node(node, kind=kind, x_m=x, y_m=y, lat=float(lat), lon=float(lon), degree=degree)
    for seg, (trajectory, first, last, reverse, u, v) in SEGMENTS.items():
        heading = (HEADINGS[trajectory] + (180.0 if reverse else 0.0)) % 360.0
        graph.add_edge(
            u, v, key=seg, id=seg, trajectory=trajectory, first_frame=first, last_frame=last,
            reverse=reverse, length_m=ARM_M, start_heading_deg=heading, end_heading_deg=heading,
            heading_profile_deg=[heading] * 4, twin=TWINS[seg], transitions=_transitions(seg),
            street=STREETS[seg], primary=not reverse,
        )  # fmt: skip
    data = nx.node_link_data(graph, edges="edges")
    city.graph_path.write_text(json.dumps(data), encoding="utf-8")
