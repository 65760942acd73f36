"""Film many routes on several cores: ``workers`` spawned processes, each with its own renderer.

Rendering on a CPU (Mesa's llvmpipe) and x264 are per-process work, so a city films in about
``1 / workers`` of the time when the cores are free. Each worker is ``spawn``ed (a forked child
would inherit the parent's GL context and threads), makes its own OpenGL context through
:func:`city360._gl.create_context` (EGL first, the same fallback as in-process), unpickles the
parent's :class:`~city360.synth.scene.Scene` (measured on the standard city: a 107 MB pickle
loads in 0.2 s of CPU, where rebuilding the scene from its OSM extract takes 3.9 s) and pulls
routes from one shared queue, longest first, so the workers finish close together. Every video
is written whole into the output folder the pipeline renames at the end.

Output bytes do not depend on ``workers``: a frame depends only on the scene and its pose and
time (the renderer keeps no state between frames), and x264 runs with a fixed thread count
(:data:`city360.synth.film.ENCODER_THREADS`), so a route films to the same bytes in any process,
after any other route (tested).

A worker that fails deletes the video it was writing and reports the route, itself and the
error; the parent stops the others and raises :class:`~city360.errors.WorkerError`. A worker
that dies (a crash in the GL driver) is noticed from its exit code, and its video is deleted
too. Workers exit with their parent however it ends (:func:`city360._lifetime.die_with_parent`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import multiprocessing as mp
import os
import pickle
import queue
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from city360.errors import City360Error, ConfigError, WorkerError

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess
    from multiprocessing.queues import Queue

    from city360.synth.film import FramePoses
    from city360.synth.scene import Scene

__all__ = ["FilmJob", "check_workers", "default_workers", "film_jobs", "longest_first"]

_POLL_S = 0.2
"""How often the parent looks for a dead worker while no event arrives, seconds."""
_STOP_WAIT_S = 5.0
"""How long stopping waits for terminated workers before killing them, seconds."""


@dataclass(frozen=True, slots=True)
class FilmJob:
    """One video to film: the route's ``name``, its frame ``poses``, the MP4 ``path`` to write
    and the camera clock (UTC) at its first frame."""

    name: str
    poses: FramePoses
    path: Path
    creation_time: dt.datetime


def default_workers() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no sched_getaffinity (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def check_workers(workers: int) -> int:
    """``workers`` when it is >= 1, else :class:`ConfigError` saying what it means."""
    if workers < 1:
        msg = (
            f"`--workers` must be >= 1 (1 films in this process; default: the "
            f"{default_workers()} cores this process may use), got {workers}"
        )
        raise ConfigError(msg)
    return workers


def longest_first(jobs: Sequence[FilmJob]) -> list[FilmJob]:
    """``jobs`` by frame count, longest first (ties in their given order): handed out in this
    order to whichever worker is free, the last videos to start are the short ones."""
    return sorted(jobs, key=lambda job: -len(job.poses))


def film_jobs(
    scene: Scene,
    jobs: Sequence[FilmJob],
    *,
    width: int,
    workers: int,
    on_ready: Callable[[], None] | None = None,
    on_frames: Callable[[int], None] | None = None,
) -> None:
    """Film every job at ``width`` px: in this process when ``workers`` is 1, else in
    ``min(workers, len(jobs))`` worker processes.

    ``on_ready()`` is called once every renderer is built, ``on_frames(n)`` as n more frames
    are encoded (in this process, from the parent's thread). A failure raises the error
    itself in-process, and :class:`WorkerError` naming the route and the worker otherwise.
    """
    check_workers(workers)
    if not jobs:
        return
    ordered = longest_first(jobs)
    if workers == 1 or len(ordered) == 1:
        _film_here(scene, ordered, width=width, on_ready=on_ready, on_frames=on_frames)
    else:
        _film_in_workers(
            scene,
            ordered,
            width=width,
            workers=min(workers, len(ordered)),
            on_ready=on_ready,
            on_frames=on_frames,
        )


def _film_here(
    scene: Scene,
    jobs: Sequence[FilmJob],
    *,
    width: int,
    on_ready: Callable[[], None] | None,
    on_frames: Callable[[int], None] | None,
) -> None:
    from city360.synth.film import film_route
    from city360.synth.render import EquirectRenderer

    with EquirectRenderer(scene, width=width) as renderer:
        if on_ready is not None:
            on_ready()
        for job in jobs:
            film_route(
                renderer,
                job.poses,
                job.path,
                width=width,
                creation_time=job.creation_time,
                on_frame=None if on_frames is None else lambda _i: on_frames(1),
            )


def _worker_name(index: int, count: int, pid: int | None) -> str:
    return f"worker {index + 1} of {count} (pid {pid})"


def _work(
    index: int,
    count: int,
    parent_pid: int,
    width: int,
    scenes: Queue[bytes],
    tasks: Queue[FilmJob | None],
    events: Queue[tuple[Any, ...]],
) -> None:
    """A worker process: take one pickled scene from ``scenes``, then film jobs from
    ``tasks`` until ``None``, reporting on ``events``:
    ``("ready", i)``, ``("start", i, name)``, ``("frames", i, n)``, ``("done", i, name)``,
    ``("failed", i, name | None, message)`` and ``("exit", i)``."""
    from city360._lifetime import die_with_parent

    die_with_parent(parent_pid)
    job: FilmJob | None = None
    try:
        from city360.synth.film import film_route
        from city360.synth.render import EquirectRenderer

        scene = pickle.loads(scenes.get())
        with EquirectRenderer(scene, width=width) as renderer:
            events.put(("ready", index))
            while (job := tasks.get()) is not None:
                events.put(("start", index, job.name))
                film_route(
                    renderer,
                    job.poses,
                    job.path,
                    width=width,
                    creation_time=job.creation_time,
                    on_frame=lambda _i: events.put(("frames", index, 1)),
                )
                events.put(("done", index, job.name))
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group; the parent reports it
        raise SystemExit(1) from None
    except BaseException as exc:
        if job is not None:
            with contextlib.suppress(OSError):
                job.path.unlink(missing_ok=True)
        message = str(exc) or type(exc).__name__
        if not isinstance(exc, City360Error):  # a bug, not a message written for a user
            message = f"{type(exc).__name__}: {message}"
        events.put(("failed", index, None if job is None else job.name, message))
        events.close()
        events.join_thread()
        raise SystemExit(1) from None
    events.put(("exit", index))


def _film_in_workers(
    scene: Scene,
    jobs: Sequence[FilmJob],
    *,
    width: int,
    workers: int,
    on_ready: Callable[[], None] | None,
    on_frames: Callable[[int], None] | None,
) -> None:
    context = mp.get_context("spawn")
    # The scene goes through a queue, not the process arguments: spawn writes those into a
    # pipe whose read end the parent holds until the write ends, so a child that dies while
    # starting (a script without a main guard) would block the parent forever on a big scene.
    scenes: Queue[bytes] = context.Queue()
    tasks: Queue[FilmJob | None] = context.Queue()
    events: Queue[tuple[Any, ...]] = context.Queue()
    scene_pickle = pickle.dumps(scene, protocol=pickle.HIGHEST_PROTOCOL)
    for _ in range(workers):
        scenes.put(scene_pickle)
    del scene_pickle
    for job in jobs:
        tasks.put(job)
    for _ in range(workers):
        tasks.put(None)
    processes = [
        context.Process(
            target=_work,
            args=(k, workers, os.getpid(), width, scenes, tasks, events),
            name=f"city360-film-{k + 1}",
            daemon=True,
        )
        for k in range(workers)
    ]
    filming: dict[int, FilmJob] = {}
    by_name = {job.name: job for job in jobs}
    try:
        for process in processes:
            process.start()
        _follow(processes, events, filming, by_name, on_ready=on_ready, on_frames=on_frames)
    except BaseException:
        _stop(processes)
        for job in filming.values():  # a killed worker cannot delete its half-written video
            with contextlib.suppress(OSError):
                job.path.unlink(missing_ok=True)
        raise
    finally:
        scenes.cancel_join_thread()  # items no worker took must not hold this process
        tasks.cancel_join_thread()
        for process in processes:
            process.join(timeout=_STOP_WAIT_S)
        scenes.close()
        tasks.close()
        events.close()


def _follow(
    processes: Sequence[BaseProcess],
    events: Queue[tuple[Any, ...]],
    filming: dict[int, FilmJob],
    by_name: dict[str, FilmJob],
    *,
    on_ready: Callable[[], None] | None,
    on_frames: Callable[[int], None] | None,
) -> None:
    """Relay the workers' events until every worker has exited cleanly; raise on a failure."""
    count = len(processes)
    ready: set[int] = set()
    exited: set[int] = set()
    died: str | None = None
    while len(exited) < count:
        try:
            event = events.get(timeout=_POLL_S)
        except queue.Empty:
            if died is not None:  # its last events (a "failed" one says more) are all read
                raise WorkerError(died) from None
            died = _died(processes, exited, filming)
            continue
        kind, index = event[0], int(event[1])
        if kind == "frames" and on_frames is not None:
            on_frames(int(event[2]))
        elif kind == "start":
            filming[index] = by_name[event[2]]
        elif kind == "done":
            filming.pop(index, None)
        elif kind == "ready":
            ready.add(index)
            if len(ready) == count and on_ready is not None:
                on_ready()
        elif kind == "exit":
            exited.add(index)
        elif kind == "failed":
            name, message = event[2], event[3]
            worker = _worker_name(index, count, processes[index].pid)
            what = f"filming route {name!r}" if name is not None else "setting up its renderer"
            msg = (
                f"{what} failed in {worker}: {message}; its video was deleted (run with "
                "--workers 1 to film in this process and see the full traceback)"
            )
            raise WorkerError(msg)


def _died(
    processes: Sequence[BaseProcess], exited: set[int], filming: dict[int, FilmJob]
) -> str | None:
    """The error message for a worker that ended without saying so (killed, crashed), if any.

    The caller reads the events still queued before raising it: a worker that failed on
    purpose put its "failed" event there just before exiting."""
    for index, process in enumerate(processes):
        code = process.exitcode
        if index in exited or code is None or code == 0:
            continue
        job = filming.get(index)
        worker = _worker_name(index, len(processes), process.pid)
        doing = (
            f"while filming route {job.name!r}"
            if job is not None
            else "before filming (a script that starts workers needs an "
            '`if __name__ == "__main__":` guard: spawn imports it again in each worker)'
        )
        how = f"signal {-code}" if code < 0 else f"exit code {code}"
        msg = (
            f"{worker} died ({how}) {doing}; its video was deleted (a crash in the OpenGL "
            "driver or running out of memory can do this; try --workers 1)"
        )
        return msg
    return None


def _stop(processes: Sequence[BaseProcess]) -> None:
    """Terminate the workers still running and wait for them (kill after a grace period)."""
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=_STOP_WAIT_S)
        if process.is_alive():
            process.kill()
            process.join(timeout=_STOP_WAIT_S)
