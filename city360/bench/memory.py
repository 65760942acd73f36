"""Peak resident memory of one environment, measured in a fresh Python process (so nothing
the harness itself loaded counts): open the city, reset, take a mix of rotate, W and branch
steps, then read the process's peak RSS. On Linux that is ``VmHWM`` of ``/proc/self/status``
(``getrusage``'s ``ru_maxrss`` carries the parent's peak over fork and exec, so it would report
the harness's own size); elsewhere ``ru_maxrss`` (bytes on macOS)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["measure_env_rss"]

_CHILD = r"""
import json, resource, sys

def peak_mb():
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024

import city360

city, steps, view = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
before = peak_mb()
with city360.make(city, **view) as env:
    obs, info = env.reset(seed=0)
    for k in range(steps):
        branches = [n for n, m in zip(("LEFT", "UP", "RIGHT"), obs["branch_mask"]) if m]
        action = branches[0] if branches else ("W", "A", "W", "Q", "W", "E", "S")[k % 7]
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            obs, info = env.reset()
    renderer = env.renderer_name
    frame = [env.world.store(t).width for t in env.world.trajectories][:1]
print(json.dumps({"peak_rss_mb": peak_mb(), "import_rss_mb": before,
                  "renderer": renderer, "frame_width": frame[0] if frame else None}))
"""


def measure_env_rss(city: Path, *, steps: int, view: dict[str, Any]) -> dict[str, Any]:
    """Peak RSS in MiB of a fresh process holding one env of ``city`` for ``steps`` steps."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(city), str(steps), json.dumps(view)],
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    if done.returncode != 0:
        msg = f"the RSS probe process failed ({done.returncode}):\n{done.stderr[-2000:]}"
        raise RuntimeError(msg)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result
