"""``city360 report RUN_DIR``: a run as an HTML page with pictures.

The page shows scores by family × difficulty (a heat map and a table), why episodes ended, and
per episode its trajectory over the city's streets against the oracle's shortest path, plus a
replay video when the run saved frames (``--save-frames``). Everything is written under
``RUN_DIR/report/`` and the page references it relatively, so the folder can be shared as is.

The folder is built under a hidden sibling name and swapped in whole (``_atomic.atomic_dir``):
a report killed or failing part way leaves the previous one as it was, never its page beside a
torn figure. Files a user put in the folder are carried into the new one.
"""

from __future__ import annotations

import html
import json
import math
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from city360._atomic import atomic_dir, write_failure
from city360.errors import City360Error, InputFileError, OutputError
from city360.eval.compare import agent_label
from city360.eval.results import EpisodeResult, read_results
from city360.eval.summary import DIFFICULTIES, RunSummary, summarize
from city360.types import Image

__all__ = ["read_step_log", "write_report"]


def read_step_log(path: Path) -> list[dict[str, Any]]:
    """Records of one episode's JSONL step log; a torn last line is skipped."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            break
    return records


@dataclass(frozen=True, slots=True)
class _Background:
    """What trajectories are drawn over: the city's base map (``city360.maps``) with its extent
    in metres, or, failing that, the pose graph's node-to-node lines."""

    image: Image | None
    extent_m: tuple[float, float, float, float] | None
    lines: list[tuple[list[float], list[float]]]
    attribution: str | None = None
    """The base map's credit (``MapMeta.attribution``): the page repeats it under the
    pictures, and gives none when no OSM data is drawn."""


def _background(city_dir: Path | None) -> _Background:
    if city_dir is None:
        return _Background(None, None, [])
    try:
        from city360.maps.citymap import CityMap

        city_map = CityMap.open(city_dir)
        x_min, y_min, x_max, y_max = city_map.transform.extent_m
        return _Background(
            city_map.image, (x_min, x_max, y_min, y_max), [], city_map.meta.attribution
        )
    except City360Error:
        return _Background(None, None, _street_lines(city_dir))


def _street_lines(city_dir: Path) -> list[tuple[list[float], list[float]]]:
    """Node-to-node lines of the city's pose graph (metres), for a light background."""
    from city360.streets import StreetGraph

    if not (city_dir / "graph.json").is_file():
        return []
    try:
        graph = StreetGraph.open(city_dir)
    except City360Error:
        return []
    nodes = graph.node_xy
    lines = []
    for segment in graph.iter_segments():
        a, b = nodes[segment.u], nodes[segment.v]
        lines.append(([a[0], b[0]], [a[1], b[1]]))
    return lines


def _plot_heatmap(summary: RunSummary, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    families = list(summary.families)
    grid = np.full((max(len(families), 1), len(DIFFICULTIES)), np.nan)
    for i, family in enumerate(families):
        for j, difficulty in enumerate(DIFFICULTIES):
            cell = summary.cells.get((family, difficulty))
            if cell:
                grid[i, j] = cell.mean_score
    fig, ax = plt.subplots(figsize=(6, 0.5 * len(families) + 1.5), dpi=100)
    ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(DIFFICULTIES)), DIFFICULTIES)
    ax.set_yticks(range(len(families)), families)
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            if not math.isnan(grid[i, j]):
                colour = "black" if grid[i, j] > 0.6 else "white"
                ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", color=colour)
    ax.set_title("mean score by family and difficulty")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def _plot_stop_reasons(summary: RunSummary, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 2.5), dpi=100)
    names = list(summary.stop_reasons)
    ax.barh(names, [summary.stop_reasons[n] for n in names], color="#4c72b0")
    ax.set_xlabel("episodes")
    ax.set_title("how episodes ended")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def _plot_trajectory(
    records: Sequence[dict[str, Any]],
    background: _Background,
    out: Path,
    title: str,
) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = [(r["x_m"], r["y_m"]) for r in records if r.get("x_m") is not None]
    header = next((r for r in records if r.get("type") == "episode"), {})
    if not path:
        return False
    fig, ax = plt.subplots(figsize=(4.5, 4.5), dpi=100)
    if background.image is not None:
        ax.imshow(background.image, extent=background.extent_m, zorder=0)
    for xs, ys in background.lines:
        ax.plot(xs, ys, color="#cccccc", linewidth=1.5, zorder=1)
    oracle = header.get("oracle_path_xy") or []
    if oracle:
        ox, oy = zip(*oracle, strict=True)
        ax.plot(ox, oy, color="#2ca02c", linewidth=2.5, alpha=0.7, label="oracle", zorder=2)
    px, py = zip(*path, strict=True)
    ax.plot(px, py, color="#d62728", linewidth=2, label="agent", zorder=3)
    ax.scatter([px[0]], [py[0]], color="#1f77b4", s=40, zorder=4, label="start")
    goal = header.get("goal_xy")
    if goal:
        ax.scatter([goal[0]], [goal[1]], color="#d62728", marker="*", s=120, zorder=4, label="goal")
    all_x = [*px, *(p[0] for p in oracle), *([goal[0]] if goal else [])]
    all_y = [*py, *(p[1] for p in oracle), *([goal[1]] if goal else [])]
    margin = 40.0
    ax.set_xlim(min(all_x) - margin, max(all_x) + margin)
    ax.set_ylim(min(all_y) - margin, max(all_y) + margin)
    ax.set_aspect("equal")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="best")
    ax.tick_params(labelsize=6)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return True


def _encode_replay(frames_dir: Path, out: Path, *, fps: int = 2) -> bool:
    """Encode an episode's saved frames (PNG/JPEG, sorted by name) as an H.264 MP4."""
    import av
    import cv2

    frames = sorted(p for p in frames_dir.iterdir() if p.suffix.lower() in {".png", ".jpg"})
    if not frames:
        return False
    first = cv2.imread(str(frames[0]))
    if first is None:
        return False
    height, width = (first.shape[0] // 2) * 2, (first.shape[1] // 2) * 2
    with av.open(str(out), mode="w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for frame_path in frames:
            bgr = cv2.imread(str(frame_path))
            if bgr is None:
                continue
            rgb = np.ascontiguousarray(bgr[:height, :width, ::-1], dtype=np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return True


_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px}
th{background:#f3f3f3}.ok{color:#1a7f37}.bad{color:#b42318}
.episodes{display:flex;flex-wrap:wrap;gap:1em}.episode{border:1px solid #ddd;padding:.5em;
width:460px}.episode img,.episode video{max-width:100%}small{color:#666}
"""


def _table(summary: RunSummary) -> str:
    rows = [
        "<tr><th>family</th>" + "".join(f"<th>{d}</th>" for d in DIFFICULTIES) + "<th>all</th></tr>"
    ]
    for family, overall in summary.families.items():
        cells = []
        for difficulty in DIFFICULTIES:
            cell = summary.cells.get((family, difficulty))
            cells.append(
                f"<td>{cell.mean_score:.2f} <small>({cell.episodes})</small></td>"
                if cell
                else "<td>–</td>"
            )
        rows.append(
            f"<tr><td>{html.escape(family)}</td>{''.join(cells)}"
            f"<td><b>{overall.mean_score:.2f}</b> <small>({overall.episodes})</small></td></tr>"
        )
    return "<table>" + "".join(rows) + "</table>"


def _episode_card(result: EpisodeResult, image: str | None, video: str | None) -> str:
    verdict = "ok" if result.scored_success else "bad"
    parts = [
        f"<div class='episode'><b>{html.escape(result.task_id)}</b> "
        f"<small>{html.escape(result.task_type)} · {html.escape(result.difficulty)}</small><br>",
        f"<span class='{verdict}'>{html.escape(result.status)}, score "
        f"{result.evaluation_score:.2f}</span>, {result.steps} steps",
    ]
    if result.distance_to_goal_m is not None:
        parts.append(f", {result.distance_to_goal_m:.1f} m from goal")
    parts.append(
        f"<br><small>answer: {html.escape(result.user_answer or '–')} · expected: "
        f"{html.escape(result.expected or '–')}</small>"
    )
    if image:
        parts.append(f"<br><img src='{html.escape(image)}' alt='trajectory'>")
    if video:
        parts.append(f"<br><video controls src='{html.escape(video)}'></video>")
    parts.append("</div>")
    return "".join(parts)


def write_report(run_dir: str | Path, *, city_dir: str | Path | None = None) -> Path:
    """Write ``RUN_DIR/report/index.html`` and its pictures; return the page's path."""
    run_dir = Path(run_dir)
    results = read_results(run_dir / "results.csv")
    metadata_path = run_dir / "run_metadata.json"
    metadata: dict[str, Any] = {}
    if metadata_path.is_file():
        metadata = json.loads(metadata_path.read_text(encoding="utf-8"))
    if city_dir is None and metadata.get("city_dir"):
        city_dir = metadata["city_dir"]
    city = Path(city_dir) if city_dir else None
    if city is not None and not city.is_dir():
        msg = f"city folder {city} not found; pass --city CITY_DIR"
        raise InputFileError(msg)

    out = run_dir / "report"
    with atomic_dir(out, replace=True) as building:
        _write_pages(run_dir, building, results, metadata, city)
        _keep_foreign_files(out, building)
    return out / "index.html"


def _write_pages(
    run_dir: Path,
    out: Path,
    results: Sequence[EpisodeResult],
    metadata: dict[str, Any],
    city: Path | None,
) -> None:
    """The page and its pictures, into the folder ``out`` (the report being built)."""
    (out / "episodes").mkdir()
    summary = summarize(results)
    _plot_heatmap(summary, out / "scores.png")
    _plot_stop_reasons(summary, out / "stop_reasons.png")
    background = _background(city)

    cards = []
    for result in results:
        log_path = run_dir / "episodes" / f"{result.task_id}.jsonl"
        image = video = None
        if log_path.is_file():
            records = read_step_log(log_path)
            png = out / "episodes" / f"{result.task_id}.png"
            if _plot_trajectory(records, background, png, f"{result.task_id} ({result.status})"):
                image = f"episodes/{png.name}"
        frames_dir = run_dir / "episodes" / result.task_id
        if frames_dir.is_dir():
            mp4 = out / "episodes" / f"{result.task_id}.mp4"
            if _encode_replay(frames_dir, mp4):
                video = f"episodes/{mp4.name}"
        cards.append(_episode_card(result, image, video))

    title = f"city360 run {metadata.get('run_id', run_dir.name)}"
    agent_text = agent_label(metadata.get("agent"))
    credit = (
        f"<p><small>Map data {html.escape(background.attribution)} (ODbL).</small></p>"
        if background.attribution
        else ""
    )
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>{_STYLE}</style></head><body>
<h1>{html.escape(title)}</h1>
<p>agent: {html.escape(agent_text)} · suite: {html.escape(str(metadata.get("suite_hash", "")))}
· status: {html.escape(str(metadata.get("status", "")))} · episodes: {len(results)}
· overall mean score <b>{summary.overall.mean_score:.3f}</b>
(success {summary.overall.success_rate:.1%})</p>
<h2>Scores</h2>{_table(summary)}<img src="scores.png" alt="scores"> <img src="stop_reasons.png"
alt="stop reasons">
<h2>Episodes</h2><div class="episodes">{"".join(cards)}</div>
{credit}
</body></html>
"""
    try:
        (out / "index.html").write_text(page, encoding="utf-8")
    except OSError as exc:
        raise OutputError(write_failure(run_dir / "report" / "index.html", exc)) from None


_OWN_FILES = frozenset({"index.html", "scores.png", "stop_reasons.png", "episodes"})
"""What the report writes at the top of its folder; in ``episodes/`` it owns its pictures and
replays (``.png``, ``.mp4``)."""
_OWN_EPISODE_SUFFIXES = frozenset({".png", ".mp4"})


def _keep_foreign_files(previous: Path, building: Path) -> None:
    """Carry into ``building`` what someone else put in the ``previous`` report folder (notes,
    a shared link's extras): the swap replaces the whole folder, and only the report's own page
    and pictures are its to drop. Hard links where the file system allows, so big files cost
    nothing."""
    if not previous.is_dir():
        return
    for entry in previous.iterdir():
        if entry.name == "episodes" and entry.is_dir() and not entry.is_symlink():
            for inner in entry.iterdir():
                if inner.suffix.lower() in _OWN_EPISODE_SUFFIXES and inner.is_file():
                    continue
                _carry(inner, building / "episodes" / inner.name)
        elif entry.name not in _OWN_FILES:
            _carry(entry, building / entry.name)


def _carry(source: Path, target: Path) -> None:
    if source.is_dir() and not source.is_symlink():
        shutil.copytree(source, target, symlinks=True, copy_function=_link_or_copy)
    else:
        _link_or_copy(source, target)


def _link_or_copy(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    if os.path.islink(source):
        os.symlink(os.readlink(source), target)
        return
    try:
        os.link(source, target)
    except OSError:  # another file system, or one without hard links
        shutil.copy2(source, target)
