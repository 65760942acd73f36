"""Episode throughput: the oracle agent over the view city's task suite with 1 and with 2
worker processes (``city360.eval.runner.run_eval``), episodes per wall-clock second of the
whole run (worker start-up included, as a user sees it), plus the steps taken and the sum of
the episodes' own durations (what the workers spent inside episodes)."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["measure_episodes"]


def measure_episodes(
    city: Path, suite: Path, *, workers: tuple[int, ...] = (1, 2), repeats: int = 1
) -> dict[str, Any]:
    """Run the suite with the oracle once per worker count (``repeats`` times each, the
    fastest counts); episodes per second and the run's status."""
    from city360.eval.runner import AgentSpec, EvalConfig, run_eval

    out: dict[str, Any] = {}
    scratch = Path(tempfile.mkdtemp(prefix="city360-bench-eval-"))
    try:
        for count in workers:
            best = float("inf")
            episodes, steps, busy = 0, 0, 0.0
            status = ""
            for attempt in range(max(1, repeats)):
                started = time.perf_counter()
                outcome = run_eval(
                    EvalConfig(
                        city_dir=city,
                        suite_dir=suite,
                        agent=AgentSpec(kind="oracle"),
                        workers=count,
                        output_root=scratch,
                        run_id=f"bench-w{count}-{attempt}",
                    )
                )
                elapsed = time.perf_counter() - started
                episodes, status = outcome.ran, outcome.status
                if elapsed < best:
                    best = elapsed
                    steps = sum(r.steps for r in outcome.results)
                    busy = sum(r.elapsed_seconds for r in outcome.results)
            out[f"workers_{count}"] = {
                "episodes": episodes,
                "wall_s": round(best, 3),
                "episodes_per_s": episodes / best if best > 0 else 0.0,
                "steps": steps,
                "episode_seconds_sum": round(busy, 3),
                "status": status,
            }
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return out
