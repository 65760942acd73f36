"""``env.step`` latency by action type, side by side with what it replaces.

On one built city and one 640x480, 90° view:

- rotate (A/D/Q/E/S): the frame is decoded and on the GPU; only the view is re-rendered;
- W with the prefetch warm (the background decoder had time to fetch what W can reach);
- W cold: an env whose frame cache is smaller than one frame and has no prefetch, so every W
  shows a frame that was never decoded;
- a branch (LEFT/UP/RIGHT) at a junction, prefetch warm;
- py360convert ``e2p`` of the same frames (RGB in memory) — what rotate replaces;
- one intra-frame decode of the same frames from the all-intra store — the floor for W cold;
- the naive pipeline on a long-GOP source clip: seek to the frame's time, decode forward to
  it, convert to RGB and run ``e2p`` — what W replaces.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from city360.bench.common import Timing, time_calls, timing_of

__all__ = ["VIEW", "measure_naive", "measure_steps"]

VIEW: dict[str, Any] = {"view_width": 640, "view_height": 480, "fov_deg": 90.0}
"""The view every latency is measured for."""

ROTATIONS = ("A", "D", "Q", "E", "S")


def _wait_prefetch(env: Any) -> None:
    """Block until every open frame store's background prefetch is idle."""
    for trajectory in env.world.trajectories:
        config = env.config
        store = env.world.store(
            trajectory, min_width=config.source_width(config.view_width, config.fov_deg)
        )
        wait = getattr(store, "wait_prefetch", None)
        if wait is not None:
            wait(10.0)


def _long_segments(env: Any, min_m: float) -> list[str]:
    return sorted(s.id for s in env.world.iter_segments() if s.walk_m >= min_m)


def _junction_segments(env: Any) -> list[str]:
    return sorted(s.id for s in env.world.iter_segments() if s.transitions)


def measure_steps(city: Path, *, repeats: int, seed: int = 0) -> dict[str, Any]:
    """Step latencies (see the module docstring) on ``city``; a dict of :class:`Timing` and
    facts (frame size, renderer)."""
    import city360

    rng = np.random.default_rng(seed)
    results: dict[str, Any] = {}
    shown: list[tuple[str, int, float, float]] = []  # (trajectory, frame, yaw, pitch)

    with city360.make(city, privileged_info=True, prefetch=True, **VIEW) as env:
        results["renderer"] = env.renderer_name
        segments = _long_segments(env, 3 * env.config.move_default_m) or sorted(env.world.segments)
        info: dict[str, Any] = {}

        def start_somewhere(offset_m: float | None = None) -> None:
            nonlocal info
            segment = env.world.segment(segments[int(rng.integers(len(segments)))])
            offset = float(rng.uniform(0, segment.walk_m / 2)) if offset_m is None else offset_m
            info = env.reset(seed=seed, options={"segment": segment.id, "offset_m": offset})[1]
            _wait_prefetch(env)

        # rotate --------------------------------------------------------------------------
        start_somewhere()
        # each action type timed separately, interleaved so load spikes hit all alike
        per_action: dict[str, tuple[list[float], list[float]]] = {a: ([], []) for a in ROTATIONS}
        for k in range(-len(ROTATIONS), repeats * len(ROTATIONS)):
            action = ROTATIONS[k % len(ROTATIONS)]
            _wait_prefetch(env)
            cpu_began, began = time.process_time(), time.perf_counter()
            info = env.step(action)[4]
            if k >= 0:
                per_action[action][0].append(time.perf_counter() - began)
                per_action[action][1].append(time.process_time() - cpu_began)
        results["rotate_by_action"] = {a: timing_of(*v) for a, v in per_action.items()}
        results["rotate"] = timing_of(
            [s for v in per_action.values() for s in v[0]],
            [s for v in per_action.values() for s in v[1]],
        )
        frame = info["frame"]
        shown.append((str(frame[0]), int(frame[1]), float(info["pose"]["yaw_deg"]), 0.0))

        # W, prefetch warm ----------------------------------------------------------------
        move = env.config.move_default_m

        def before_move(_: int) -> None:
            segment = env.world.segment(info["segment"])
            if info["offset_m"] + move > segment.walk_m - 0.5:
                start_somewhere(0.0)
            _wait_prefetch(env)

        def walk(_: int) -> None:
            nonlocal info
            info = env.step("W")[4]
            frame = info["frame"]
            shown.append((str(frame[0]), int(frame[1]), float(info["pose"]["yaw_deg"]), 0.0))

        start_somewhere(0.0)
        results["move_warm"] = time_calls(walk, repeats, before=before_move)

        # branch, prefetch warm -------------------------------------------------------------
        junctions = _junction_segments(env)
        if junctions:

            def before_branch(_: int) -> None:
                nonlocal info
                segment = env.world.segment(junctions[int(rng.integers(len(junctions)))])
                info = env.reset(
                    seed=seed, options={"segment": segment.id, "offset_m": segment.walk_m}
                )[1]
                _wait_prefetch(env)

            def branch(_: int) -> None:
                label = info["branches"][0] if info.get("branches") else "UP"
                env.step(_branch_action(label))

            results["branch"] = time_calls(branch, repeats, before=before_branch)

    # W cold: no prefetch, a frame cache too small to hold one frame ----------------------
    with city360.make(
        city, privileged_info=True, prefetch=False, frame_cache_mb=0.5, **VIEW
    ) as cold:
        info = cold.reset(seed=seed, options={"segment": segments[0], "offset_m": 0.0})[1]
        cold_segments = segments

        def before_cold(_: int) -> None:
            nonlocal info
            segment = cold.world.segment(info["segment"])
            if info["offset_m"] + move > segment.walk_m - 0.5:
                chosen = cold_segments[int(rng.integers(len(cold_segments)))]
                info = cold.reset(seed=seed, options={"segment": chosen, "offset_m": 0.0})[1]

        def cold_walk(_: int) -> None:
            nonlocal info
            info = cold.step("W")[4]

        results["move_cold"] = time_calls(cold_walk, repeats, before=before_cold)

    # the same frames: intra decode (the floor) and py360convert e2p ------------------------
    results.update(_decode_and_e2p(city, shown, repeats))
    return results


def _branch_action(label: Any) -> str:
    text = str(label).upper()
    for name in ("LEFT", "UP", "RIGHT"):
        if name in text:
            return name
    return "UP"


def _decode_and_e2p(
    city: Path, shown: list[tuple[str, int, float, float]], repeats: int
) -> dict[str, Timing | int | list[int]]:
    import py360convert

    from city360.city import CityDir
    from city360.video_store import FrameStore

    city_dir = CityDir(city)
    picks = [shown[k % len(shown)] for k in range(repeats)]
    stores: dict[str, Any] = {}
    try:
        for trajectory, _, _, _ in picks:
            if trajectory not in stores:
                stores[trajectory] = FrameStore(city_dir.frames_path(trajectory), cache_bytes=0)
        cold_get = time_calls(lambda k: stores[picks[k][0]].get_yuv(picks[k][1]), repeats)
        decode = _raw_intra_decode(city_dir, picks, repeats)
        first = stores[picks[0][0]]
        frame_size = [first.width, first.height]
        images = {(t, i): stores[t].get(i) for t, i, _, _ in dict.fromkeys(picks)}
    finally:
        for store in stores.values():
            store.close()
    vfov = math.degrees(
        2
        * math.atan(
            math.tan(math.radians(VIEW["fov_deg"]) / 2) * VIEW["view_height"] / VIEW["view_width"]
        )
    )

    def convert(k: int) -> None:
        trajectory, index, yaw, pitch = picks[k]
        py360convert.e2p(
            images[(trajectory, index)],
            fov_deg=(VIEW["fov_deg"], vfov),
            u_deg=yaw,
            v_deg=pitch,
            out_hw=(VIEW["view_height"], VIEW["view_width"]),
        )

    return {
        "intra_decode": decode,
        "cold_get": cold_get,
        "e2p": time_calls(convert, repeats),
        "frame_size": frame_size,
    }


def _raw_intra_decode(
    city_dir: Any, picks: list[tuple[str, int, float, float]], repeats: int
) -> Timing:
    """The floor: one intra frame decoded straight from its packet with PyAV (a new decoder per
    frame, slice threads, no store, no cache, no conversion)."""
    import av

    packets: dict[tuple[str, int], Any] = {}
    codecs: dict[str, tuple[str, bytes | None]] = {}
    for trajectory in dict.fromkeys(t for t, _, _, _ in picks):
        with av.open(str(city_dir.frames_path(trajectory))) as container:
            stream = container.streams.video[0]
            codecs[trajectory] = (stream.codec_context.name, stream.codec_context.extradata)
            for packet in container.demux(stream):
                if packet.size and packet.pts is not None:
                    packets[(trajectory, int(packet.pts))] = bytes(packet)

    def decode_one(k: int) -> None:
        trajectory, index, _, _ = picks[k]
        name, extradata = codecs[trajectory]
        context: Any = av.CodecContext.create(name, "r")  # a VideoCodecContext at run time
        context.extradata = extradata
        context.thread_type = "SLICE"
        context.thread_count = 2
        frames = context.decode(av.Packet(packets[(trajectory, index)]))
        if not frames:
            frames = context.decode(None)
        if not frames:
            msg = f"no frame decoded from {trajectory} packet {index}"
            raise RuntimeError(msg)

    return time_calls(decode_one, repeats)


def measure_naive(video: Path, *, repeats: int, seed: int = 0) -> dict[str, Any]:
    """The do-it-yourself pipeline on a long-GOP video: for random frames, seek (lands on the
    keyframe before), decode forward to the frame, convert it to RGB, ``e2p`` a 640x480 view.
    Also reports the clip's GOP (mean frames between keyframes)."""
    import av
    import py360convert

    rng = np.random.default_rng(seed)
    vfov = math.degrees(
        2
        * math.atan(
            math.tan(math.radians(VIEW["fov_deg"]) / 2) * VIEW["view_height"] / VIEW["view_width"]
        )
    )
    with av.open(str(video)) as probe:
        stream = probe.streams.video[0]
        pts_all = sorted(int(e.timestamp) for e in stream.index_entries)
        keys = sum(1 for e in stream.index_entries if e.is_keyframe)
        size = [stream.codec_context.width, stream.codec_context.height]
    targets = [pts_all[int(i)] for i in rng.integers(len(pts_all) // 10, len(pts_all), repeats + 1)]
    container = av.open(str(video))
    try:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        decoded: list[int] = []

        def naive(k: int) -> None:
            target = targets[k]
            container.seek(target, stream=stream, backward=True, any_frame=False)
            count = 0
            for frame in container.decode(stream):
                count += 1
                if frame.pts is not None and frame.pts >= target:
                    break
            decoded.append(count)
            rgb = frame.to_ndarray(format="rgb24")
            py360convert.e2p(
                rgb,
                fov_deg=(VIEW["fov_deg"], vfov),
                u_deg=float(rng.uniform(-180, 180)),
                v_deg=0.0,
                out_hw=(VIEW["view_height"], VIEW["view_width"]),
            )

        timing = time_calls(naive, repeats)
    finally:
        container.close()
    return {
        "naive_move": timing,
        "naive_frames_decoded_mean": float(np.mean(decoded)),
        "clip_gop_frames": len(pts_all) / max(keys, 1),
        "clip_frame_size": size,
    }
