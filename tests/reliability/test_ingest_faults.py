"""Kill or interrupt `city360 ingest --workers 2`: no worker left, no partial kept, re-run works."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.processes import sigint_as_from_a_terminal
from tests.reliability.test_process_lifetime import _alive, _children, _reap

WAIT_S = 180.0


def _ingest_command(city: Path) -> list[str]:
    videos = sorted(str(p) for p in (city / "videos").glob("*.mp4"))
    tracks = sorted(str(p) for p in (city / "videos").glob("*.gpx"))
    gps = [arg for track in tracks for arg in ("--gps", track)]
    return [
        sys.executable, "-m", "city360.cli", "ingest", *videos, *gps,
        "--out", str(city), "--workers", "2",
    ]  # fmt: skip


def _partials(city: Path) -> list[Path]:
    folder = city / "trajectories"
    return sorted(folder.glob(".*.partial")) if folder.is_dir() else []


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_ingest_leaves_no_worker_and_runs_again(
    sig: signal.Signals, synth_city: Path, tmp_path: Path
) -> None:
    city = tmp_path / "city"
    shutil.copytree(synth_city, city, ignore=shutil.ignore_patterns("trajectories"))
    env = {**os.environ, "CITY360_NO_PROGRESS": "1"}
    log = tmp_path / "ingest.log"
    with open(log, "wb") as sink:
        proc = subprocess.Popen(
            _ingest_command(city),
            env=env,
            stdout=sink,
            stderr=sink,
            preexec_fn=sigint_as_from_a_terminal,
        )
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline and proc.poll() is None:
            workers |= _children(proc.pid)
            if _partials(city) and len(workers) >= 2:
                break
            time.sleep(0.05)
        assert proc.poll() is None, log.read_text(errors="replace")
        assert not (city / "trajectories").is_dir() or not [
            p for p in (city / "trajectories").iterdir() if not p.name.startswith(".")
        ], "a trajectory finished before the signal: the test needs a slower ingest"
        proc.send_signal(sig)
        code = proc.wait(timeout=60)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(_alive(p) for p in workers):
            time.sleep(0.1)
        assert not [p for p in workers if _alive(p)], "workers outlived the ingest"
    finally:
        _reap(proc, workers)
    output = log.read_text(encoding="utf-8", errors="replace")
    if sig is not signal.SIGKILL:
        assert code == (130 if sig is signal.SIGINT else 143), output
        assert f"interrupted by {sig.name}" in output
        assert "the unfinished left nothing behind" in output
    again = subprocess.run(
        _ingest_command(city), env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert "already exists" not in again.stdout + again.stderr
    assert _partials(city) == []
    assert len([p for p in (city / "trajectories").iterdir()]) == len(
        list((city / "videos").glob("*.mp4"))
    )
