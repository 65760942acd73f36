"""Training scale (issue 20): the vector env's throughput, the frame pyramid, and memory.

On the bench city (its frame pyramid built first, as ``city360 pyramid`` would):

- steps/s of ``city360.make_vec(num_envs=64)`` at 84x84, random legal actions (ANSWER left out,
  so episodes end by the 50-step limit and autoreset), sharded over the cores this process
  may use (``vectorization_mode="sharded"``) and in one process (``"sync"``), against the same
  64 agents as 64 plain ``CityGymEnv`` stepped in a Python loop (each with its own world and
  frame cache) and against one plain env; every env with the same options (CPU renderer, no
  map, no prefetch);
- a cold W step at 640x480 / 90° reading the level the default rule picks
  (``EnvConfig.pyramid_density``, 0.75: the 1920 px level of a 3840 px city) and at density
  1.0 (the full frames there), each against the full frames (``pyramid_density=None``), with
  the PSNR of the same views;
- peak RSS of a fresh process holding the 64-env vector env (``VmHWM``).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from city360.bench.common import Timing, timing_of

__all__ = ["RL_VIEW", "measure_pyramid", "measure_training", "measure_vector_rss"]

RL_VIEW: dict[str, Any] = {
    "view_width": 84,
    "view_height": 84,
    "fov_deg": 90.0,
    "map": False,
    "renderer": "cpu",
    "prefetch": False,
    "max_steps": 50,
}
"""The options of every env in the throughput figures."""

_LEGAL = 9  # W, S, A, D, Q, E, LEFT, RIGHT, UP: every action but ANSWER


def _actions(rng: np.random.Generator, masks: np.ndarray) -> dict[str, Any]:
    chosen = [int(rng.choice(np.flatnonzero(mask[:_LEGAL]))) for mask in masks]
    n = len(chosen)
    return {"action": np.array(chosen), "magnitude": np.zeros(n, np.int64), "answer": ("",) * n}


def _vector_rate(
    city: Path, num_envs: int, steps: int, seed: int, *, num_workers: int | None = None
) -> float:
    """Steps/s of the sync vector env, or of the sharded one over ``num_workers`` processes."""
    import city360

    rng = np.random.default_rng(seed)
    mode: dict[str, Any] = (
        {} if num_workers is None else {"vectorization_mode": "sharded", "num_workers": num_workers}
    )
    env = city360.make_vec(city, num_envs=num_envs, **mode, **RL_VIEW)
    try:
        obs, _ = env.reset(seed=seed)
        for _ in range(max(steps // 5, 2)):  # warm-up: caches, remap grids
            obs, *_ = env.step(_actions(rng, obs["action_mask"]))
        started = time.perf_counter()
        for _ in range(steps):
            obs, *_ = env.step(_actions(rng, obs["action_mask"]))
        return num_envs * steps / (time.perf_counter() - started)
    finally:
        env.close()


def _loop_rate(city: Path, num_envs: int, steps: int, seed: int) -> float:
    from city360.simulator.gym_env import CityGymEnv

    rng = np.random.default_rng(seed)
    envs = [CityGymEnv(city, **RL_VIEW) for _ in range(num_envs)]
    try:
        obs = [env.reset(seed=seed + i)[0] for i, env in enumerate(envs)]

        def one_round() -> None:
            actions = _actions(rng, np.stack([o["action_mask"] for o in obs]))["action"]
            for i, env in enumerate(envs):
                move = {"action": int(actions[i]), "magnitude": 0, "answer": ""}
                obs[i], _, terminated, truncated, _ = env.step(move)
                if terminated or truncated:
                    obs[i], _ = env.reset()

        for _ in range(max(steps // 5, 2)):
            one_round()
        started = time.perf_counter()
        for _ in range(steps):
            one_round()
        return num_envs * steps / (time.perf_counter() - started)
    finally:
        for env in envs:
            env.close()


def measure_training(city: Path, *, num_envs: int, steps: int, seed: int = 0) -> dict[str, Any]:
    """Steps/s of the vector env, the plain-env loop and one env (see the module docstring)."""
    from city360.video_store.pyramid import build_city_pyramid

    started = time.perf_counter()
    built = build_city_pyramid(city)
    pyramid_s = time.perf_counter() - started
    cores = len(os.sched_getaffinity(0))
    sharded = _vector_rate(city, num_envs, steps, seed, num_workers=cores)
    vector = _vector_rate(city, num_envs, steps, seed)
    loop = _loop_rate(city, num_envs, steps, seed)
    one = _loop_rate(city, 1, steps * 8, seed)
    return {
        "num_envs": num_envs,
        "vector_steps": steps,
        "vector_steps_per_s": vector,
        "sharded_steps_per_s": sharded,
        "sharded_workers": cores,
        "loop_steps_per_s": loop,
        "one_env_steps_per_s": one,
        "pyramid_build_s": pyramid_s,
        "pyramid_files_built": len(built),
        "view": RL_VIEW,
    }


def _psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    # identical views (the rule picked the full frames) report 100 dB, not infinity, so the
    # figure stays a finite JSON number
    return 100.0 if mse == 0 else min(100.0, 10.0 * math.log10(255.0**2 / mse))


def _cold_walks(
    city: Path, density: float | None, starts: list[tuple[str, float]], view: dict[str, Any]
) -> tuple[Timing, list[np.ndarray], int]:
    """Cold W steps (a cache smaller than one frame, no prefetch) from each start."""
    import city360

    samples, cpu, views = [], [], []
    options = {**view, "pyramid_density": density, "prefetch": False, "frame_cache_mb": 0.001}
    with city360.make(city, map=False, renderer="cpu", **options) as env:
        for k, (segment, offset) in enumerate([starts[0], *starts]):
            env.reset(seed=0, options={"segment": segment, "offset_m": offset})
            cpu_began, began = time.process_time(), time.perf_counter()
            obs, *_ = env.step("W")
            if k:  # the first is a warm-up
                samples.append(time.perf_counter() - began)
                cpu.append(time.process_time() - cpu_began)
                views.append(obs["view"])
        state = env.state
        assert state is not None
        width = env.world.store(
            env.world.segment(state.segment).trajectory,
            min_width=env.config.source_width(env.config.view_width, env.config.fov_deg),
        ).width
    return timing_of(samples, cpu), views, width


def measure_pyramid(
    city: Path, *, repeats: int, view: dict[str, Any], seed: int = 0
) -> dict[str, Any]:
    """Cold W at ``view`` from the full frames, the level the default density picks
    (``auto``) and density 1.0 (``density_10``)."""
    import city360
    from city360.simulator.config import EnvConfig

    rng = np.random.default_rng(seed)
    with city360.make(city, map=False, renderer="cpu", **view) as env:
        segments = sorted(s.id for s in env.world.iter_segments() if s.walk_m >= 12.0)
        segments = segments or sorted(env.world.segments)
        starts = []
        for _ in range(repeats):
            segment = env.world.segment(segments[int(rng.integers(len(segments)))])
            starts.append((segment.id, float(rng.uniform(0, max(segment.walk_m - 6.0, 0.0)))))
    full, full_views, full_width = _cold_walks(city, None, starts, view)
    auto, auto_views, auto_width = _cold_walks(city, EnvConfig().pyramid_density, starts, view)
    strict, strict_views, strict_width = _cold_walks(city, 1.0, starts, view)
    return {
        "full": full,
        "auto": auto,
        "density_10": strict,
        "full_width": full_width,
        "auto_width": auto_width,
        "density_10_width": strict_width,
        "auto_psnr_db": min(_psnr(a, b) for a, b in zip(auto_views, full_views, strict=True)),
        "density_10_psnr_db": min(
            _psnr(a, b) for a, b in zip(strict_views, full_views, strict=True)
        ),
    }


_CHILD = r"""
import json, sys
import numpy as np

def peak_mb(pid="self"):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")

import city360

if __name__ == "__main__":
    city, num_envs, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    view, workers = json.loads(sys.argv[4]), int(sys.argv[5])
    mode = {"vectorization_mode": "sharded", "num_workers": workers} if workers else {}
    rng = np.random.default_rng(0)
    with city360.make_vec(city, num_envs=num_envs, **mode, **view) as env:
        obs, _ = env.reset(seed=0)
        for _ in range(steps):
            actions = [int(rng.choice(np.flatnonzero(m[:9]))) for m in obs["action_mask"]]
            obs, *_ = env.step({"action": np.array(actions),
                                "magnitude": np.zeros(num_envs, int),
                                "answer": ("",) * num_envs})
        shards = [peak_mb(proc.pid) for proc in getattr(env, "_procs", [])]
    print(json.dumps({"peak_rss_mb": peak_mb() + sum(shards)}))
"""


def measure_vector_rss(
    city: Path, *, num_envs: int, steps: int, num_workers: int = 0
) -> dict[str, Any]:
    """Peak RSS (MiB) of a fresh process stepping the ``num_envs`` vector env ``steps`` times,
    its shards' peaks added when ``num_workers`` > 0 (the sharded mode)."""
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        # a script file, not ``-c``: the sharded mode's spawned workers re-import the main module
        script = Path(scratch) / "vector_rss.py"
        script.write_text(_CHILD)
        done = subprocess.run(
            [
                sys.executable,
                str(script),
                str(city),
                str(num_envs),
                str(steps),
                json.dumps(RL_VIEW),
                str(num_workers),
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=1800,
        )
    if done.returncode != 0:
        msg = f"the vector RSS probe failed ({done.returncode}):\n{done.stderr[-2000:]}"
        raise RuntimeError(msg)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result
