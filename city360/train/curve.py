"""The learning curve of a training run: one CSV row per evaluation and a PNG of it.

Columns of the CSV (:data:`COLUMNS`): ``steps`` (env steps trained so far, all sub-envs),
``wall_s`` (seconds since training started, evaluation included), ``policy`` (``ppo`` or
``random``), ``episodes``, ``successes``, ``success_rate`` (0..1) and ``mean_return``.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from city360._atomic import atomic_write_bytes, atomic_write_text

__all__ = ["COLUMNS", "CurvePoint", "plot_curve", "read_curve", "write_curve"]


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """One evaluation of one policy."""

    steps: int
    wall_s: float
    policy: str
    episodes: int
    successes: int
    success_rate: float
    mean_return: float


COLUMNS = tuple(CurvePoint.__dataclass_fields__)


def write_curve(points: Sequence[CurvePoint], path: str | os.PathLike[str]) -> Path:
    """Write ``points`` as CSV to ``path`` (atomically: a crash leaves no half file)."""
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for point in points:
        row = asdict(point)
        row["wall_s"] = f"{point.wall_s:.1f}"
        row["success_rate"] = f"{point.success_rate:.4f}"
        row["mean_return"] = f"{point.mean_return:.4f}"
        writer.writerow(row)
    return atomic_write_text(path, buffer.getvalue())


def read_curve(path: str | os.PathLike[str]) -> list[CurvePoint]:
    """The points of a CSV written by :func:`write_curve`."""
    with Path(path).open(newline="") as handle:
        return [
            CurvePoint(
                steps=int(row["steps"]),
                wall_s=float(row["wall_s"]),
                policy=row["policy"],
                episodes=int(row["episodes"]),
                successes=int(row["successes"]),
                success_rate=float(row["success_rate"]),
                mean_return=float(row["mean_return"]),
            )
            for row in csv.DictReader(handle)
        ]


def plot_curve(
    points: Sequence[CurvePoint], path: str | os.PathLike[str], *, title: str = ""
) -> Path:
    """A PNG of success rate (y) against training steps (x), one line per policy (a policy
    measured once, the random baseline, as a horizontal line)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.0, 3.6), dpi=100)
    for policy in sorted({p.policy for p in points}):
        mine = sorted((p for p in points if p.policy == policy), key=lambda p: p.steps)
        name = policy.upper() if policy == "ppo" else policy
        if len(mine) == 1:  # measured once (the random baseline does not learn)
            label = f"{name} ({mine[0].episodes} episodes)"
            ax.axhline(mine[0].success_rate, linestyle="--", color="grey", label=label)
            continue
        ax.plot(
            [p.steps for p in mine],
            [p.success_rate for p in mine],
            marker="o",
            markersize=3,
            label=f"{name} ({mine[-1].episodes} episodes per point)",
        )
    ax.set_xlabel("training steps (all envs)")
    ax.set_ylabel("held-out success rate")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left")
    if title:
        ax.set_title(title, fontsize=9)
    fig.tight_layout()
    image = io.BytesIO()
    fig.savefig(image, format="png")
    plt.close(fig)
    return atomic_write_bytes(path, image.getvalue())
