"""Worker processes that die with their parent, whatever signal ends it.

A pool's workers outlive a parent killed by SIGKILL (nothing runs in the parent to stop them)
and by SIGTERM (Python's default handler exits without shutting the pool down): they went on
decoding for minutes, ~380 MB each. :func:`die_with_parent`, called first in each worker
(``ProcessPoolExecutor(initializer=...)``), arms two guards:

- on Linux, ``prctl(PR_SET_PDEATHSIG, SIGTERM)``: the kernel signals the worker the moment its
  parent dies;
- everywhere, a daemon thread polling ``os.getppid()`` every :data:`PARENT_POLL_S` seconds: an
  orphan is re-parented (to init or a subreaper), so a changed parent pid means the parent is
  gone (this also covers the case where PDEATHSIG fires too late or not at all).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

__all__ = [
    "ORPHAN_EXIT_CODE",
    "PARENT_POLL_S",
    "die_with_parent",
    "signals_interrupt",
    "stop_pool",
]

PARENT_POLL_S = 0.5
"""How often a worker checks that its parent still lives (seconds)."""
ORPHAN_EXIT_CODE = 70
"""Exit status of a worker that stopped because its parent died."""
_PR_SET_PDEATHSIG = 1


def _set_parent_death_signal() -> None:
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)


def _watch_parent(parent_pid: int, poll_s: float) -> None:
    while True:
        time.sleep(poll_s)
        if os.getppid() != parent_pid:
            # The parent writes every result; there is nothing here worth finishing.
            os._exit(ORPHAN_EXIT_CODE)


def die_with_parent(parent_pid: int | None = None, *, poll_s: float = PARENT_POLL_S) -> None:
    """Make this (worker) process exit when its parent process exits.

    ``parent_pid`` is the pid the worker expects as its parent (default: the current one);
    when the parent is already gone, the worker exits at once.
    """
    expected = os.getppid() if parent_pid is None else parent_pid
    _set_parent_death_signal()
    if os.getppid() != expected:  # died before the guard was armed
        os._exit(ORPHAN_EXIT_CODE)
    watcher = threading.Thread(
        target=_watch_parent, args=(expected, poll_s), name="parent-watch", daemon=True
    )
    watcher.start()


@contextlib.contextmanager
def signals_interrupt() -> Iterator[None]:
    """While the block runs (in the main thread), SIGTERM and SIGHUP raise KeyboardInterrupt
    (its message the signal's name) like Ctrl-C, so ``kill`` leaves the same consistent state
    and message as Ctrl-C instead of ending the process on the spot."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


STOP_WAIT_S = 5.0
"""How long :func:`stop_pool` waits for terminated workers before killing them."""


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Terminate a pool's worker processes now (rather than waiting for the jobs they run) and
    wait, at most :data:`STOP_WAIT_S`, until they are gone."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        if process.is_alive():
            process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + STOP_WAIT_S
    for process in processes:
        process.join(timeout=max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
