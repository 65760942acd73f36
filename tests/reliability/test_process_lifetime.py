"""Kill or interrupt `city360 eval --workers 2`: no worker outlives it, the status is honest."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").is_file(), reason="needs /proc to find worker processes"
)

WAIT_S = 180.0
"""Upper bound on every wait here (workers start in ~5-20 s on a loaded 2-core machine)."""


def _children(pid: int) -> set[int]:
    """Live (non-zombie) processes whose parent is ``pid``."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _cmdline(pid: int) -> str:
    """The command line of ``pid``, or "" once it has exited (its /proc entry is gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_text(errors="ignore")
    except (FileNotFoundError, ProcessLookupError):
        return ""


def _workers_of(proc: subprocess.Popen[bytes], count: int) -> set[int]:
    """Wait until ``proc`` has ``count`` worker processes that are running episodes."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline and proc.poll() is None:
        python_children = {
            c
            for c in _children(proc.pid)
            if "multiprocessing" in _cmdline(c) and "spawn_main" in _cmdline(c)
        }
        if len(python_children) >= count:
            return python_children
        time.sleep(0.2)
    pytest.fail(f"eval did not start {count} workers (exit {proc.poll()})")


def _reap(proc: subprocess.Popen[bytes], pids: set[int]) -> None:
    """Kill ``proc`` and every one of ``pids`` still alive: a failing test leaves nothing."""
    if proc.poll() is None:
        proc.kill()
        proc.wait(timeout=10)
    for pid in pids:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def _wait_gone(pids: set[int], timeout_s: float = 20.0) -> set[int]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        left = {p for p in pids if _alive(p)}
        if not left:
            return set()
        time.sleep(0.1)
    return {p for p in pids if _alive(p)}


def _descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (children, their children, ...)."""
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = set().union(*(_children(p) for p in frontier)) - found
        found |= frontier
    return found


def _start_eval(
    city: Path, suite: Path, out: Path, run_id: str, log: Path, *extra: str
) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "city360.cli",
        "eval",
        str(city),
        "--suite",
        str(suite),
        "--agent",
        "tests.reliability.agents:Slow",
        "--workers",
        "2",
        "--output-root",
        str(out),
        "--run-id",
        run_id,
        "--no-report",
        *extra,
    ]
    env = {**os.environ, "CITY360_NO_PROGRESS": "1"}
    # Output to a file, not a pipe: a surviving worker would hold a pipe open forever.
    with open(log, "wb") as sink:
        return subprocess.Popen(
            command, env=env, stdout=sink, stderr=subprocess.STDOUT, cwd=os.getcwd()
        )


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_workers_die_with_the_eval_process(
    sig: signal.Signals, built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    log = tmp_path / "eval.log"
    proc = _start_eval(built_city, built_suite, tmp_path, "killed", log)
    workers: set[int] = set()
    try:
        workers = _workers_of(proc, 2)
        time.sleep(1.0)  # let them take episodes
        proc.send_signal(sig)
        proc.wait(timeout=60)
        left = _wait_gone(workers)
        assert not left, f"workers {left} outlived the eval process ({sig.name})"
    finally:
        _reap(proc, workers | _children(proc.pid))
    output = log.read_text(encoding="utf-8", errors="replace")
    if sig is signal.SIGTERM:
        assert proc.returncode == 143, output
        assert "interrupted by SIGTERM" in output
        metadata = json.loads((tmp_path / "killed" / "run_metadata.json").read_text("utf-8"))
        assert metadata["status"] == "interrupted"
        assert "interrupted by SIGTERM" in metadata["message"]
        assert "--resume killed" in metadata["message"]


# Ray's own housekeeping agents (dashboard, runtime-env) notice the lost raylet later, by
# themselves; measured: about 100 s after the driver's SIGKILL. They hold no episode.
_RAY_AGENTS = ("ray::DashboardAgent", "ray::RuntimeEnvAgent")


def test_ray_workers_die_with_a_killed_eval_process(
    built_city: Path, built_suite: Path, tmp_path: Path
) -> None:
    """``--executor ray`` starts a local Ray node below the eval process; a SIGKILL of the
    eval leaves no raylet, GCS or episode actor running (Ray starts them fate-sharing)."""
    log = tmp_path / "eval.log"
    proc = _start_eval(built_city, built_suite, tmp_path, "ray-killed", log, "--executor", "ray")
    below: set[int] = set()
    try:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline and proc.poll() is None:
            below = _descendants(proc.pid)
            if sum("ray::EpisodeWorker" in _cmdline(p) for p in below) >= 2:
                break
            time.sleep(0.2)
        else:
            pytest.fail(f"eval started no two Ray actors (exit {proc.poll()})")
        heavy = {p for p in below if not _cmdline(p).startswith(_RAY_AGENTS)}
        assert any("raylet" in _cmdline(p) for p in heavy), "no raylet below the eval"
        proc.kill()
        proc.wait(timeout=60)
        left = _wait_gone(heavy, timeout_s=60.0)
        assert not left, [_cmdline(p)[:80] for p in left]
    finally:
        _reap(proc, below)


def test_an_orphaned_worker_exits_by_itself(tmp_path: Path) -> None:
    """The guard alone (no eval): a child whose parent dies exits within a second or two."""
    marker = tmp_path / "child.pid"
    script = (
        "import multiprocessing as mp, os, sys, time\n"
        "from city360._lifetime import die_with_parent\n"
        "def child(parent, marker):\n"
        "    die_with_parent(parent)\n"
        "    with open(marker + '.tmp', 'w') as f: f.write(str(os.getpid()))\n"
        "    os.replace(marker + '.tmp', marker)  # whole, never seen half-written\n"
        "    time.sleep(60)\n"
        "if __name__ == '__main__':\n"
        "    p = mp.get_context('spawn').Process(target=child, args=(os.getpid(), sys.argv[1]))\n"
        "    p.start()\n"
        "    while not os.path.exists(sys.argv[1]): time.sleep(0.05)\n"
        "    os._exit(0)\n"
    )
    program = tmp_path / "orphan_parent.py"
    program.write_text(script, encoding="utf-8")
    parent = subprocess.run(
        [sys.executable, str(program), str(marker)], timeout=60, check=True, cwd=os.getcwd()
    )
    assert parent.returncode == 0
    child = int(marker.read_text())
    assert not _wait_gone({child}, timeout_s=10.0)
