"""One writer per run folder: an ``fcntl`` lock on ``<run_dir>/.lock``.

``run_eval`` holds the lock from before it reads the folder until its last write, so two
``city360 eval ... --resume RUN`` at once cannot both append rows (they did: 136 rows for 78
tasks). The lock file names its holder (pid, host, start time) for the refusal message. The
kernel drops an ``flock`` when its process dies, however it dies, so a lock file left by a
killed run is simply taken over; only a live holder refuses. (``flock`` on NFS is emulated
with POSIX locks on Linux; a run folder shared between machines still gets one writer.)
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

from city360.errors import OutputError, RunLockedError
from city360.eval.metadata import now_utc

__all__ = ["LOCK_NAME", "lock_holder", "run_lock"]

LOCK_NAME = ".lock"


def lock_holder(run_dir: str | os.PathLike[str]) -> dict[str, object]:
    """What the lock file says about its holder (empty when unreadable)."""
    try:
        data = json.loads((Path(run_dir) / LOCK_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@contextlib.contextmanager
def run_lock(run_dir: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold the write lock of ``run_dir`` (created if missing) for the block.

    Raises :class:`RunLockedError` naming the holder when another live process holds it.
    """
    folder = Path(run_dir)
    path = folder / LOCK_NAME
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        from city360._atomic import write_failure

        raise OutputError(write_failure(path, exc)) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = lock_holder(folder)
            who = (
                f"pid {holder.get('pid', '?')} on {holder.get('host', '?')}, "
                f"started {holder.get('started', '?')}"
            )
            msg = (
                f"run folder {folder} is being written by another city360 eval or viewer "
                f"({who}); "
                "wait for it to finish or stop it, or use another --run-id"
            )
            raise RunLockedError(msg) from None
        record = {"pid": os.getpid(), "host": socket.gethostname(), "started": now_utc()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(record) + "\n").encode("utf-8"), 0)
        yield path
    finally:
        os.close(fd)  # releases the flock
