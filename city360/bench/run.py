"""Run every benchmark in one process, one after the other, and collect the figures.

``run_benchmarks(quick=False)`` measures at 3840x1920 with enough repetitions for stable
percentiles; ``quick=True`` uses 256x128 cities, a short clip, a smaller pose-only grid and a
few repetitions, so it finishes in well under two minutes (for tests and smoke runs; its
figures are not comparable with a full run's).
"""

from __future__ import annotations

import datetime as dt
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from city360.bench.cities import (
    ClipSpec,
    PoseCitySpec,
    ViewCitySpec,
    clip_video,
    pose_only_city,
    throughput_suite,
    view_city,
)
from city360.bench.common import Timing, machine_info
from city360.bench.report import evaluate_targets
from city360.progress import console, make_progress

__all__ = ["FULL", "QUICK", "BenchPlan", "run_benchmarks"]


@dataclass(frozen=True, slots=True)
class BenchPlan:
    """Sizes and repetitions of one run."""

    mode: str
    view: ViewCitySpec
    clip: ClipSpec
    poses: PoseCitySpec
    step_repeats: int
    naive_repeats: int
    map_repeats: int
    build_repeats: int
    ingest_repeats: int
    rss_steps: int
    throughput_per_family: int
    """Tasks per family of the episode-throughput suite (fewer where the grid has no room)."""
    throughput_seeds: int
    """Suites generated (one per seed) and merged into the episode-throughput suite."""
    vec_envs: int = 64
    """Sub-envs of the vector-env throughput figure."""
    vec_steps: int = 60
    """Timed vector steps (each steps every sub-env)."""
    pyramid_repeats: int = 20
    """Cold W steps timed per frame level."""


FULL = BenchPlan(
    mode="full",
    view=ViewCitySpec(),
    clip=ClipSpec(),
    poses=PoseCitySpec(),
    step_repeats=30,
    naive_repeats=20,
    map_repeats=300,
    build_repeats=3,
    ingest_repeats=1,
    rss_steps=60,
    throughput_per_family=150,
    throughput_seeds=3,
)
QUICK = BenchPlan(
    mode="quick",
    view=ViewCitySpec(width=256, per_family=1),
    clip=ClipSpec(width=256, length_m=4.0, speed_mps=4.0),
    poses=PoseCitySpec(cols=5, rows=5),
    step_repeats=5,
    naive_repeats=4,
    map_repeats=30,
    build_repeats=1,
    ingest_repeats=1,
    rss_steps=10,
    throughput_per_family=6,
    throughput_seeds=1,
    vec_envs=8,
    vec_steps=5,
    pyramid_repeats=3,
)


def _row(figure: str, timing: Timing) -> dict[str, Any]:
    return {
        "figure": figure,
        "p50": timing.p50_ms,
        "p95": timing.p95_ms,
        "cpu_p50": timing.cpu_p50_ms,
        "n": timing.n,
        "unit": "ms",
    }


def _value_row(
    figure: str, value: float, unit: str, *, cpu: float | None = None, n: int = 1
) -> dict[str, Any]:
    return {"figure": figure, "p50": value, "p95": None, "cpu_p50": cpu, "n": n, "unit": unit}


def _jsonable(value: Any) -> Any:
    if isinstance(value, Timing):
        return value.to_json()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def run_benchmarks(*, quick: bool = False, rebuild: bool = False, seed: int = 0) -> dict[str, Any]:
    """Build (or reuse) the benchmark cities and measure everything; the JSON-ready result."""
    from city360.bench.build import measure_build
    from city360.bench.episodes import measure_episodes
    from city360.bench.ingest import measure_ingest
    from city360.bench.maps import measure_location_map
    from city360.bench.memory import measure_env_rss
    from city360.bench.steps import VIEW, measure_naive, measure_steps
    from city360.bench.training import measure_pyramid, measure_training, measure_vector_rss

    plan = QUICK if quick else FULL
    started = time.perf_counter()
    machine = machine_info()
    detail: dict[str, Any] = {}
    stages = (
        "cities",
        "env.step",
        "naive pipeline",
        "ingest",
        "pose-graph build",
        "location map",
        "episodes",
        "peak RSS",
        "training scale",
    )
    with make_progress() as progress:
        bar = progress.add_task("benchmarks", total=len(stages))

        def stage(name: str) -> None:
            progress.update(bar, description=f"bench: {name}")
            console.log(f"bench: {name}")

        stage("cities")
        city = view_city(plan.view, rebuild=rebuild)
        video, gps = clip_video(plan.clip, rebuild=rebuild)
        poses = pose_only_city(plan.poses, rebuild=rebuild)
        progress.advance(bar)

        stage("env.step")
        steps = measure_steps(city, repeats=plan.step_repeats, seed=seed)
        progress.advance(bar)

        stage("naive pipeline")
        naive = measure_naive(video, repeats=plan.naive_repeats, seed=seed)
        progress.advance(bar)

        stage("ingest")
        ingest = measure_ingest(video, gps, repeats=plan.ingest_repeats)
        progress.advance(bar)

        stage("pose-graph build")
        build = measure_build(poses, repeats=plan.build_repeats)
        progress.advance(bar)

        stage("location map")
        location = measure_location_map(city, repeats=plan.map_repeats, seed=seed)
        progress.advance(bar)

        stage("episodes")
        suite = throughput_suite(
            city, per_family=plan.throughput_per_family, seeds=plan.throughput_seeds
        )
        episodes = measure_episodes(city, suite)
        progress.advance(bar)

        stage("peak RSS")
        rss = measure_env_rss(city, steps=plan.rss_steps, view=VIEW)
        progress.advance(bar)

        stage("training scale")
        training = measure_training(city, num_envs=plan.vec_envs, steps=plan.vec_steps, seed=seed)
        pyramid = measure_pyramid(city, repeats=plan.pyramid_repeats, view=VIEW, seed=seed)
        vec_rss = measure_vector_rss(
            city,
            num_envs=plan.vec_envs,
            steps=plan.vec_steps,
            num_workers=training["sharded_workers"],
        )
        progress.advance(bar)

    detail = {
        "steps": steps,
        "naive": naive,
        "ingest": ingest,
        "build": build,
        "location_map": location,
        "episodes": episodes,
        "memory": rss,
        "training": training,
        "pyramid": pyramid,
        "vector_memory": vec_rss,
    }
    rotate: Timing = steps["rotate"]
    figures: dict[str, Any] = {
        "rotate_p50_ms": rotate.p50_ms,
        "rotate_p95_ms": rotate.p95_ms,
        "e2p_p50_ms": steps["e2p"].p50_ms,
        "e2p_p95_ms": steps["e2p"].p95_ms,
        "move_warm_p50_ms": steps["move_warm"].p50_ms,
        "move_warm_p95_ms": steps["move_warm"].p95_ms,
        "move_cold_p50_ms": steps["move_cold"].p50_ms,
        "move_cold_p95_ms": steps["move_cold"].p95_ms,
        "intra_decode_ms": steps["intra_decode"].p50_ms,
        "intra_decode_p95_ms": steps["intra_decode"].p95_ms,
        "cold_get_p50_ms": steps["cold_get"].p50_ms,
        "cold_get_p95_ms": steps["cold_get"].p95_ms,
        "naive_move_p50_ms": naive["naive_move"].p50_ms,
        "naive_move_p95_ms": naive["naive_move"].p95_ms,
        "branch_p50_ms": steps["branch"].p50_ms if "branch" in steps else None,
        "branch_p95_ms": steps["branch"].p95_ms if "branch" in steps else None,
        "ingest_realtime_factor": ingest["ingest_realtime_factor"],
        "ingest_vs_decode_only": ingest["ingest_vs_decode"],
        "decode_only_realtime_factor": ingest["decode_realtime_factor"],
        "build_600_segments_s": build["build_s"],
        "build_segments": build["segments"],
        "build_cpu_s": build["build_cpu_s"],
        "map_render_p50_ms": location["location_map"].p50_ms,
        "map_render_p95_ms": location["location_map"].p95_ms,
        "episodes_per_s_1_worker": episodes["workers_1"]["episodes_per_s"],
        "episodes_per_s_2_workers": episodes["workers_2"]["episodes_per_s"],
        "episodes_per_s_1_worker_1_thread": episodes["workers_1_single_thread"]["episodes_per_s"],
        "episodes_run": episodes["workers_1"]["episodes"],
        "episode_worker_start_s": episodes["worker_start_s"],
        "env_peak_rss_mb": rss["peak_rss_mb"],
        "vec_envs": training["num_envs"],
        "vec_64_steps_per_s": training["vector_steps_per_s"],
        "vec_64_sharded_steps_per_s": training["sharded_steps_per_s"],
        "vec_64_sharded_workers": training["sharded_workers"],
        "loop_64_steps_per_s": training["loop_steps_per_s"],
        "one_env_steps_per_s": training["one_env_steps_per_s"],
        "vec_vs_loop": training["vector_steps_per_s"] / training["loop_steps_per_s"],
        "vec_sharded_vs_loop": training["sharded_steps_per_s"] / training["loop_steps_per_s"],
        "vec_vs_one_env": training["vector_steps_per_s"] / training["one_env_steps_per_s"],
        "vec_64_peak_rss_mb": vec_rss["peak_rss_mb"],
        "pyramid_w_full_p50_ms": pyramid["full"].p50_ms,
        "pyramid_w_auto_p50_ms": pyramid["auto"].p50_ms,
        "pyramid_w_auto_width": pyramid["auto_width"],
        "pyramid_auto_psnr_db": pyramid["auto_psnr_db"],
        "pyramid_w_10_p50_ms": pyramid["density_10"].p50_ms,
        "pyramid_w_10_width": pyramid["density_10_width"],
        "pyramid_10_psnr_db": pyramid["density_10_psnr_db"],
        "pyramid_w_10_vs_full": pyramid["density_10"].p50_ms / pyramid["full"].p50_ms,
    }
    rows = [
        *(_row(f"rotate {a}", t) for a, t in steps["rotate_by_action"].items()),
        _row("rotate (all A/D/Q/E/S)", rotate),
        _row("py360convert e2p, same frame", steps["e2p"]),
        _row("W, prefetch warm", steps["move_warm"]),
        _row("W, cold (never decoded)", steps["move_cold"]),
        _row("intra-frame decode (floor)", steps["intra_decode"]),
        _row("FrameStore cold get_yuv", steps["cold_get"]),
        _row("naive seek+decode+e2p", naive["naive_move"]),
    ]
    if "branch" in steps:
        rows.append(_row("branch LEFT/UP/RIGHT, warm", steps["branch"]))
    rows += [
        _value_row("ingest speed vs real time", ingest["ingest_realtime_factor"], "x"),
        _value_row("decode-only speed vs real time", ingest["decode_realtime_factor"], "x"),
        _value_row(
            f"pose-graph build ({build['segments']} segments)",
            build["build_s"],
            "s",
            cpu=build["build_cpu_s"],
            n=len(build["build_runs_s"]),
        ),
        _row("location map", location["location_map"]),
        _value_row("oracle episodes/s, 1 worker", figures["episodes_per_s_1_worker"], "1/s"),
        _value_row("oracle episodes/s, 2 workers", figures["episodes_per_s_2_workers"], "1/s"),
        _value_row(
            "oracle episodes/s, 1 worker on 1 thread",
            figures["episodes_per_s_1_worker_1_thread"],
            "1/s",
        ),
        _value_row(
            f"episode worker start-up ({figures['episodes_run']} episodes a run)",
            episodes["worker_start_s"],
            "s",
        ),
        _value_row("peak RSS of one Env", rss["peak_rss_mb"], "MiB"),
        _value_row(
            f"vector env, {training['num_envs']} envs, 84x84, sharded over "
            f"{training['sharded_workers']} processes",
            training["sharded_steps_per_s"],
            "1/s",
        ),
        _value_row(
            f"vector env, {training['num_envs']} envs, 84x84, one process (sync)",
            training["vector_steps_per_s"],
            "1/s",
        ),
        _value_row(
            f"{training['num_envs']} plain envs in a Python loop",
            training["loop_steps_per_s"],
            "1/s",
        ),
        _value_row("one plain env, 84x84", training["one_env_steps_per_s"], "1/s"),
        _row(f"cold W, full frames ({pyramid['full_width']} px)", pyramid["full"]),
        _row(f"cold W, default density ({pyramid['auto_width']} px)", pyramid["auto"]),
        _row(f"cold W, density 1.0 ({pyramid['density_10_width']} px)", pyramid["density_10"]),
        _value_row("PSNR, density 1.0 vs full", pyramid["density_10_psnr_db"], "dB"),
        _value_row(
            f"peak RSS of the {training['num_envs']}-env vector env (all its processes)",
            vec_rss["peak_rss_mb"],
            "MiB",
        ),
    ]
    result: dict[str, Any] = {
        **figures,
        "mode": plan.mode,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "elapsed_s": round(time.perf_counter() - started, 1),
        "machine": machine,
        "load_average_end": list(_loadavg()),
        "frame_size": steps["frame_size"],
        "view": VIEW,
        "renderer": steps["renderer"],
        "cities": {"view": str(city), "clip": str(video), "poses": str(poses)},
        "targets": evaluate_targets(figures),
        "rows": rows,
        "detail": detail,
    }
    jsonable: dict[str, Any] = _jsonable(result)
    return jsonable


def _loadavg() -> tuple[float, ...]:
    import os

    try:
        return tuple(round(x, 2) for x in os.getloadavg())
    except OSError:
        return ()


def write_result(result: dict[str, Any], out: Path) -> Path:
    """Write ``result`` as indented JSON to ``out`` (atomically)."""
    from city360._atomic import atomic_write_json

    return atomic_write_json(out, result)
