"""A hand-made city where a filmed walker turns at the junction, so the frame at the cut looks
sideways: the case where the simulator and the graph oracle used to disagree.

Three videos meet at node 0 (the origin), one frame a metre:

- ``a`` walks south from (0, 30) to the node (frames 0..30, heading 180), its camera swung to
  ``cut_heading_deg`` at frame 30 (the walker turning away there, mid-turn);
- ``b`` walks on south from the node to (0, -30) (frames 0..30, heading 180);
- ``c`` walks north-east from the node to (21.2, 21.2) (frames 0..30, heading 45).

``junction=True``: node 0 is a junction; from ``a1`` (arriving southbound) UP goes on along
``b1`` (turn 0) and LEFT turns sharply onto ``c1`` (turn -135). ``junction=False``: ``b`` is
left out and node 0 is a ``link`` (a bend where the video changes), so W walks from ``a1``
through it onto ``c1``. Every segment has a ``reverse=True`` twin; dead ends offer the U-turn.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import networkx as nx
import numpy as np

from city360.city import CityDir, CityManifest, TrajectoryMeta, TrajectoryPoses
from city360.geo import LocalProjection
from tests.simulator.handmade import _encode, frame_image

ORIGIN = (60.17, 24.94)
ARM_M = 30.0
_D = ARM_M / math.sqrt(2.0)
NODES = {0: (0.0, 0.0), 1: (0.0, ARM_M), 2: (0.0, -ARM_M), 3: (_D, _D)}
# trajectory -> (start xy, heading)
VIDEOS = {"a": ((0.0, ARM_M), 180.0), "b": ((0.0, 0.0), 180.0), "c": ((0.0, 0.0), 45.0)}
# segment -> (trajectory, reverse, from node, to node, travel heading)
SEGMENTS = {
    "a1": ("a", False, 1, 0, 180.0),
    "a1_r": ("a", True, 0, 1, 0.0),
    "b1": ("b", False, 0, 2, 180.0),
    "b1_r": ("b", True, 2, 0, 0.0),
    "c1": ("c", False, 0, 3, 45.0),
    "c1_r": ("c", True, 3, 0, 225.0),
}


def _twin(segment: str) -> str:
    return segment[:-2] if segment.endswith("_r") else f"{segment}_r"


def build_hook_city(root: Path, *, cut_heading_deg: float, junction: bool) -> Path:
    """Write the city into ``root`` (created) and return it."""
    root.mkdir(parents=True, exist_ok=True)
    projection = LocalProjection(*ORIGIN)
    city = CityDir(root)
    city.write_manifest(
        CityManifest(
            name="hook", crs=projection.proj4, origin_lat=ORIGIN[0], origin_lon=ORIGIN[1],
            bbox=(60.16, 24.93, 60.18, 24.95),
        )
    )  # fmt: skip
    videos = {k: v for k, v in VIDEOS.items() if junction or k != "b"}
    segments = {k: v for k, v in SEGMENTS.items() if v[0] in videos}
    n = int(ARM_M) + 1
    for trajectory, ((x0, y0), heading) in videos.items():
        s = np.arange(n, dtype=np.float64)
        x = x0 + s * math.sin(math.radians(heading))
        y = y0 + s * math.cos(math.radians(heading))
        headings = np.full(n, heading)
        if trajectory == "a":
            headings[-1] = cut_heading_deg
        lat, lon = projection.to_latlon(x, y)
        poses = TrajectoryPoses(
            x_m=x, y_m=y, lat=lat, lon=lon, heading_deg=headings,
            t_s=s.copy(), source_pts=np.arange(n, dtype=np.int64),
        )  # fmt: skip
        folder = city.trajectory_dir(trajectory)
        folder.mkdir(parents=True, exist_ok=True)
        _encode(folder / "frames.mp4", [frame_image(h, i, 64, 32) for i, h in enumerate(headings)])
        meta = TrajectoryMeta(
            id=trajectory, source_video=f"{trajectory}.mp4", source_sha256="0" * 64,
            gps_source="handmade", width=64, height=32, frame_count=n, spacing_m=1.0,
            length_m=ARM_M, camera_yaw_offset_deg=0.0, clock_offset_s=0.0,
        )  # fmt: skip
        CityDir.write_trajectory_files(folder, meta, poses)

    graph = nx.MultiDiGraph(crs=projection.proj4, schema_version=1, build={})
    for node, (node_x, node_y) in NODES.items():
        if node == 2 and not junction:
            continue
        lat, lon = projection.to_latlon(node_x, node_y)
        kind = ("junction" if junction else "link") if node == 0 else "dead_end"
        degree = (3 if junction else 2) if node == 0 else 1
        graph.add_node(
            node, kind=kind, x_m=node_x, y_m=node_y, lat=float(lat), lon=float(lon), degree=degree
        )
    for seg, (trajectory, reverse, u, v, heading) in segments.items():
        if v != 0:  # a dead end: the U-turn only
            transitions = [{"edge": _twin(seg), "turn_deg": 180.0, "label": "UP", "uturn": True}]
        elif seg == "a1":
            transitions = [{"edge": "c1", "turn_deg": -135.0, "label": "LEFT", "rank": 0}]
            if junction:
                transitions.append({"edge": "b1", "turn_deg": 0.0, "label": "UP", "rank": 0})
        elif seg == "b1_r":
            transitions = [{"edge": "a1_r", "turn_deg": 0.0, "label": "UP", "rank": 0}]
            transitions.append({"edge": "c1", "turn_deg": 45.0, "label": "RIGHT", "rank": 0})
        else:  # c1_r arrives heading 225
            transitions = [{"edge": "a1_r", "turn_deg": 135.0, "label": "RIGHT", "rank": 0}]
            if junction:
                transitions.append({"edge": "b1", "turn_deg": -45.0, "label": "LEFT", "rank": 0})
        graph.add_edge(
            u, v, key=seg, id=seg, trajectory=trajectory, first_frame=0, last_frame=n - 1,
            reverse=reverse, length_m=ARM_M, start_heading_deg=heading, end_heading_deg=heading,
            heading_profile_deg=[heading] * 7, twin=_twin(seg), transitions=transitions,
            street={"a": 0, "b": 1, "c": 2}[trajectory], primary=not reverse,
        )  # fmt: skip
    data = nx.node_link_data(graph, edges="edges")
    city.graph_path.write_text(json.dumps(data), encoding="utf-8")
    return root
