"""Pose-graph build time on a pose-only city (no video): ``build_city`` end to end, i.e.
reading the trajectories, finding junctions, cutting segments, transitions, validating and
writing ``graph.json``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

__all__ = ["measure_build"]


def measure_build(city: Path, *, repeats: int) -> dict[str, Any]:
    """Build ``city``'s graph ``repeats`` times; the median and fastest in seconds, plus the
    graph's size (segments = all edges)."""
    import numpy as np

    from city360.pose_graph.build import build_city

    seconds: list[float] = []
    cpu_seconds: list[float] = []
    graph = None
    for _ in range(max(1, repeats)):
        cpu_started, started = time.process_time(), time.perf_counter()
        graph = build_city(city, require_frames=False)
        seconds.append(time.perf_counter() - started)
        cpu_seconds.append(time.process_time() - cpu_started)
    if graph is None:  # pragma: no cover - repeats >= 1
        msg = "no build ran"
        raise RuntimeError(msg)
    nx_graph = graph.graph
    return {
        "build_s": float(np.median(seconds)),
        "build_min_s": min(seconds),
        "build_runs_s": [round(s, 3) for s in seconds],
        "build_cpu_s": float(np.median(cpu_seconds)),
        "segments": int(nx_graph.number_of_edges()),
        "nodes": int(nx_graph.number_of_nodes()),
        "trajectories": len(list((city / "trajectories").iterdir())),
    }
