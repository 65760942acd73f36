"""Atomic writes keep the modes a plain write would give (city360/_atomic.py)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from city360._atomic import DIR_MODE, FILE_MODE, atomic_dir, atomic_write_text


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_files_and_folders_get_the_umask_modes_not_owner_only(tmp_path: Path) -> None:
    mask = os.umask(0o022)
    os.umask(mask)
    assert 0o666 & ~mask == FILE_MODE
    assert 0o777 & ~mask == DIR_MODE
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    written = atomic_write_text(tmp_path / "atomic.txt", "x")
    assert _mode(written) == _mode(plain) == FILE_MODE
    with atomic_dir(tmp_path / "city") as staging:
        (staging / "city.json").write_text("{}")
    (tmp_path / "made").mkdir()
    assert _mode(tmp_path / "city") == _mode(tmp_path / "made") == DIR_MODE
