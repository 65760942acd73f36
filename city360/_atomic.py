"""Atomic writes: a crash never leaves a file or folder that looks whole and is not.

Files are written under a temporary name in the same folder and renamed into place; folders are
built under a temporary sibling name and renamed when complete.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from city360.errors import OutputError

__all__ = ["atomic_dir", "atomic_write_bytes", "atomic_write_json", "atomic_write_text"]


def _check_writable(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        msg = f"cannot create output folder {folder}: {exc.strerror}; choose a writable path"
        raise OutputError(msg) from None
    if not os.access(folder, os.W_OK):
        msg = f"output folder {folder} is not writable; choose a writable path"
        raise OutputError(msg)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file and an atomic rename."""
    target = Path(path)
    _check_writable(target.parent)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
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
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent))
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if target.exists() and any(target.iterdir()) and not replace:
        # Someone else filled ``path`` while we worked: never clobber it.
        shutil.rmtree(tmp, ignore_errors=True)
        msg = f"output folder {target} was created by someone else meanwhile; nothing replaced"
        raise OutputError(msg)
    if target.exists():
        old = target.with_name(f".{target.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(target, old)
        os.replace(tmp, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, target)
