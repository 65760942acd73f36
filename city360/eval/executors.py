"""Where episodes run: in this process, in N local processes, or as Ray actors on a cluster.

Every executor takes the same :class:`~city360.eval.specs.WorkerSpec` (everything a worker
needs to build its own environment and agent) and the same ``(task_id, seed)`` jobs, and yields
:class:`~city360.eval.results.EpisodeResult` values in completion order. The parent process is the
only writer of ``results.csv``, so workers never contend for it.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Literal

from city360._lifetime import stop_pool
from city360.errors import ConfigError, DependencyMissingError
from city360.eval.results import EpisodeResult
from city360.eval.specs import Job, WorkerSpec

__all__ = ["EXECUTORS", "run_jobs", "threads_per_worker", "usable_cores"]

EXECUTORS = ("local", "ray")

_WORKER: Any = None


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS and Windows
        return os.cpu_count() or 1


def threads_per_worker(workers: int) -> int:
    """OpenCV threads for each of ``workers`` processes: the usable cores shared out, at least
    one. More would oversubscribe the cores, and OpenCV's pool spins while it waits."""
    return max(1, usable_cores() // max(1, workers))


def _init_process_worker(spec: WorkerSpec, threads: int, parent_pid: int | None = None) -> None:
    """Build this worker process's :class:`EpisodeWorker`, once.

    Its long-lived objects (suite, street graphs, environment) are then frozen out of the
    garbage collector's generations (``gc.freeze``): every later full collection would walk
    them again (~5% of an oracle episode's CPU), and so would the collections of interpreter
    shutdown, which made a worker's exit take ~0.3-0.6 s instead of ~0.05 s, time the run
    waits for at its end. The process is ours, so its collector is too.
    """
    global _WORKER
    import atexit
    import gc

    import cv2

    from city360._lifetime import die_with_parent

    die_with_parent(parent_pid)  # SIGKILL or SIGTERM of the run must not leave us running

    from city360.eval.episode import EpisodeWorker

    cv2.setNumThreads(threads)
    _WORKER = EpisodeWorker(spec)
    atexit.register(_close_process_worker)
    gc.freeze()


def _close_process_worker() -> None:
    """At the worker process's exit: release its environment and agent, and keep what is left
    out of the shutdown collections (see :func:`_init_process_worker`)."""
    global _WORKER
    import gc

    if _WORKER is not None:
        _WORKER.close()
        _WORKER = None
    gc.freeze()


def _run_in_process_worker(job: Job) -> EpisodeResult:
    return _WORKER.run(*job)


def _run_serial(spec: WorkerSpec, jobs: Sequence[Job]) -> Iterator[EpisodeResult]:
    from city360.eval.episode import EpisodeWorker

    with EpisodeWorker(spec) as worker:
        for job in jobs:
            yield worker.run(*job)


def _run_processes(spec: WorkerSpec, jobs: Sequence[Job], workers: int) -> Iterator[EpisodeResult]:
    """Persistent worker processes: each builds its environment and agent once (in the pool's
    initializer) and then runs one episode per job it takes; the parent only waits for
    results and writes them."""
    # "spawn": a forked child would inherit the parent's GL context and decoder threads.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=_init_process_worker,
        initargs=(spec, threads_per_worker(workers), os.getpid()),
    ) as pool:
        pending: set[Future[EpisodeResult]] = {pool.submit(_run_in_process_worker, j) for j in jobs}
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    yield future.result()
        except BaseException:
            # Ctrl-C, SIGTERM, an error or an abandoned generator: the episodes in flight
            # would never be recorded, so their workers are stopped now rather than awaited.
            for future in pending:
                future.cancel()
            stop_pool(pool)
            raise


def _run_ray(
    spec: WorkerSpec, jobs: Sequence[Job], workers: int, address: str | None
) -> Iterator[EpisodeResult]:
    try:
        import ray
    except ImportError:
        msg = "ray is needed for --executor ray: pip install 'city360[ray]'"
        raise DependencyMissingError(msg) from None
    from ray.util import ActorPool

    from city360.eval.episode import EpisodeWorker

    started_here = not ray.is_initialized()
    if started_here:
        _start_ray(ray, address, workers)
    try:
        remote_worker = ray.remote(num_cpus=1)(EpisodeWorker)
        actors = [remote_worker.remote(spec) for _ in range(workers)]
        pool = ActorPool(actors)
        yield from pool.map_unordered(lambda actor, job: actor.run.remote(*job), list(jobs))
    finally:
        if started_here:
            ray.shutdown()


_RAY_START_ATTEMPTS = 3


def _start_ray(ray: Any, address: str | None, workers: int) -> None:
    """Connect to ``address`` or start a local Ray node for ``workers`` CPUs.

    Usage statistics stay off (this runs offline). Ray gives its raylet a fixed 30 s to
    register; on a loaded machine that can pass, so a local start is retried.
    """
    from city360.plugins import PLUGINS_ENV

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # Ray workers on other machines do not share this environment: hand them the plugin list.
    plugins = os.environ.get(PLUGINS_ENV)
    runtime_env = {"env_vars": {PLUGINS_ENV: plugins}} if plugins else None
    if address:
        ray.init(address=address, log_to_driver=False, runtime_env=runtime_env)
        return
    for attempt in range(1, _RAY_START_ATTEMPTS + 1):
        try:
            ray.init(
                num_cpus=workers,
                include_dashboard=False,
                log_to_driver=False,
                runtime_env=runtime_env,
            )
            return
        except Exception as exc:  # ray raises a bare Exception on a startup time-out
            ray.shutdown()
            if attempt == _RAY_START_ATTEMPTS or "timed out during startup" not in str(exc):
                raise


def run_jobs(
    spec: WorkerSpec,
    jobs: Sequence[Job],
    *,
    workers: int = 1,
    executor: Literal["local", "ray"] = "local",
    ray_address: str | None = None,
) -> Iterator[EpisodeResult]:
    """Run ``jobs`` and yield each episode's result as it finishes."""
    if workers < 1:
        msg = f"`workers` must be >= 1, got {workers}"
        raise ConfigError(msg)
    if executor not in EXECUTORS:
        msg = f"unknown executor {executor!r}; expected one of {', '.join(EXECUTORS)}"
        raise ConfigError(msg)
    if not jobs:
        return iter(())
    if executor == "ray":
        return _run_ray(spec, jobs, workers, ray_address)
    if workers == 1:
        return _run_serial(spec, jobs)
    return _run_processes(spec, jobs, min(workers, len(jobs)))
