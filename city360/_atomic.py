"""Atomic writes: a crash never leaves a file or folder that looks whole and is not.

Files are written under a temporary name in the same folder and renamed into place; folders are
built under a temporary sibling name and renamed when complete. Both get the modes a plain
``open``/``mkdir`` would give them (0666 / 0777 less the umask), not the owner-only modes of
:mod:`tempfile`: a city or run folder is meant to be read by others on a shared machine.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from city360.errors import OutputError

__all__ = [
    "atomic_dir",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "clean_stale_partials",
    "folder_lock",
    "lock_file",
    "write_failure",
]

_FIXES = {
    errno.ENOSPC: "the disk is full; free some space and run again",
    errno.EDQUOT: "the disk quota is used up; free some space and run again",
    errno.EROFS: "the file system is read-only; choose a writable output folder",
    errno.EACCES: "permission denied; choose a folder you may write to",
    errno.EPERM: "permission denied; choose a folder you may write to",
}


def _read_umask() -> int:
    """The process's umask (read once, at import: setting it to read it is not thread-safe)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()
FILE_MODE = 0o666 & ~_UMASK
"""Mode of every file written here: what ``open(path, "w")`` would create."""
DIR_MODE = 0o777 & ~_UMASK
"""Mode of every folder made here: what ``mkdir`` would create."""


def write_failure(path: str | os.PathLike[str], exc: OSError) -> str:
    """The message for a failed write of ``path``: what happened and what to do."""
    fix = _FIXES.get(exc.errno or 0, "check the folder exists and is writable")
    reason = exc.strerror or type(exc).__name__
    return f"cannot write {path}: {reason}; {fix}"


def _check_writable(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fix = _FIXES.get(exc.errno or 0, "choose a writable path")
        msg = f"cannot create output folder {folder}: {exc.strerror}; {fix}"
        raise OutputError(msg) from None
    if not os.access(folder, os.W_OK):
        msg = f"output folder {folder} is not writable; choose a writable path"
        raise OutputError(msg)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file and an atomic rename."""
    target = Path(path)
    _check_writable(target.parent)
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise OutputError(write_failure(target, exc)) from None
    try:
        os.fchmod(fd, FILE_MODE)  # mkstemp makes 0600
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        if isinstance(exc, OSError):
            raise OutputError(write_failure(target, exc)) from None
        raise
    return target


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike[str], payload: Any, *, indent: int = 2) -> Path:
    """Write ``payload`` as JSON (UTF-8, keys kept in order) atomically."""
    text = json.dumps(payload, indent=indent, ensure_ascii=False, allow_nan=False)
    return atomic_write_text(path, text + "\n")


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike[str], *, replace: bool = False) -> Iterator[Path]:
    """Yield a temporary folder that becomes ``path`` only if the block completes.

    On an exception the temporary folder is removed and ``path`` is untouched. With
    ``replace=True`` an existing ``path`` is replaced; otherwise an existing non-empty ``path``
    is an :class:`OutputError`.
    """
    target = Path(path)
    _check_writable(target.parent)
    if target.exists() and any(target.iterdir()) and not replace:
        msg = f"output folder {target} already exists and is not empty; remove it or pick another"
        raise OutputError(msg)
    clean_stale_partials(target)
    tmp = Path(
        tempfile.mkdtemp(
            prefix=f".{target.name}.{os.getpid()}.", suffix=".partial", dir=target.parent
        )
    )
    try:
        tmp.chmod(DIR_MODE)  # mkdtemp makes 0700
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if target.exists() and any(target.iterdir()) and not replace:
        # Someone else filled ``path`` while we worked: never clobber it.
        shutil.rmtree(tmp, ignore_errors=True)
        msg = f"output folder {target} was created by someone else meanwhile; nothing replaced"
        raise OutputError(msg)
    if target.exists() and _exchange(tmp, target):
        shutil.rmtree(tmp, ignore_errors=True)  # now the previous folder
    elif target.exists():
        old = target.with_name(f".{target.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(target, old)
        os.replace(tmp, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, target)


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchange(first: Path, second: Path) -> bool:
    """Swap two paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False where the
    system cannot, and the caller falls back to two renames.

    Replacing a folder by two renames (target -> old, new -> target) leaves a moment without
    the target: a reader then found no suite (a viewer's load failed with FileNotFoundError on
    ``assets``), and a process killed in it left the previous good folder under ``.old``, which
    the next writer deleted. The exchange has no such moment; what it leaves on a kill is the
    previous folder under the partial's name, removed as stale by the next writer.
    """
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    done = renameat2(
        _AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE
    )
    if done == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(second))


def lock_file(target: str | os.PathLike[str]) -> Path:
    """The lock file :func:`folder_lock` holds for writers of ``target``: ``.<name>.lock``
    beside it."""
    path = Path(target)
    return path.with_name(f".{path.name}.lock")


@contextlib.contextmanager
def folder_lock(target: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive ``fcntl`` lock for writers of ``target`` (a file or folder) for the
    block: the lock file ``.<name>.lock`` beside it. For read-modify-write cycles across
    processes (two viewers saving tasks into one suite lost one another's tasks); the kernel
    drops the lock with its process, so a killed holder never blocks the next one."""
    import fcntl

    path = Path(target)
    _check_writable(path.parent)
    lock = lock_file(path)
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, FILE_MODE)
    except OSError as exc:
        raise OutputError(write_failure(lock, exc)) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's
        return True
    try:  # Linux: a zombie still answers kill(pid, 0)
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


def clean_stale_partials(target: str | os.PathLike[str]) -> list[Path]:
    """Remove the ``.<name>.<pid>.*.partial`` folders that a
    killed writer of ``target`` left behind; return what was removed.

    A partial is stale when the process that made it (the pid in its name) is gone. Partials
    from before pids were named carry no pid and are removed too: nothing resumes them, and a
    writer of the same target in the same folder is refused anyway.
    """
    target = Path(target)
    removed: list[Path] = []
    if not target.parent.is_dir():
        return removed
    prefix = f".{target.name}."
    for leftover in target.parent.iterdir():
        name = leftover.name
        if not name.startswith(prefix) or not name.endswith(".partial"):
            continue
        middle = name[len(prefix) :].split(".", 1)[0]
        if middle.isdigit() and _pid_alive(int(middle)) and int(middle) != os.getpid():
            continue
        if middle.isdigit() and int(middle) == os.getpid():
            continue  # ours, still in use
        if leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()
        removed.append(leftover)
    return removed
