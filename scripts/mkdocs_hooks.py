"""MkDocs hooks: the home page is the README, with its ``docs/`` links made site-relative; a
line ``<!-- bench-targets: NAME.json -->`` in a page becomes the table of targets of
``benchmarks/results/NAME.json`` (what ``city360 bench`` wrote), so the site's figures are the
recorded run's, never copied by hand; a line ``<!-- protocol-differences -->`` becomes the
table of every rule where the ``default`` and ``reference`` protocols differ, read from
``city360.eval.protocols``, and the build fails if the page does not explain one of them."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
RESULTS = ROOT / "benchmarks" / "results"
PROTOCOL_MARKER = re.compile(r"^<!--\s*protocol-differences\s*-->[ \t]*$", re.M)
BENCH_MARKER = re.compile(r"^<!--\s*bench-targets:\s*(?P<name>[\w.-]+\.json)\s*-->[ \t]*$", re.M)


def _number(value: float, unit: str) -> str:
    digits = 0 if abs(value) >= 100 else (1 if abs(value) >= 10 else 2)
    text = f"{value:,.{digits}f}"
    return f"{text}×" if unit == "x" else f"{text} {unit}"


def bench_table(name: str) -> str:
    """The Markdown table of one recorded ``city360 bench`` run's targets, with its context."""
    path = RESULTS / name
    if not path.is_file():
        msg = f"bench-targets: {path} does not exist (names a file in benchmarks/results/)"
        raise FileNotFoundError(msg)
    run: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    machine = run.get("machine", {})
    load_start = machine.get("load_average_1_5_15", ["?"])[0]
    load_end = run.get("load_average_end", ["?"])[0]
    width, height = run.get("frame_size", ["?", "?"])
    view = run.get("view", {})
    passed = sum(1 for t in run["targets"].values() if t["pass"])
    lines = [
        f"`benchmarks/results/{name}`: {run.get('mode', '?')} run of {run.get('created', '?')}, "
        f"{run.get('elapsed_s', '?')} s, {machine.get('cpu_usable', '?')} usable cores "
        f"({machine.get('cpu_model', '?')}), load average {load_start} at the start and "
        f"{load_end} at the end; frames {width}×{height}, view "
        f"{view.get('view_width', '?')}×{view.get('view_height', '?')} at "
        f"{view.get('fov_deg', '?')}°, renderer `{run.get('renderer', '?')}`; "
        f"{passed} of {len(run['targets'])} targets pass.",
        "",
        "| figure | measured | target | result |",
        "| --- | --- | --- | --- |",
    ]
    for target in run["targets"].values():
        mark = "✓" if target["pass"] else "✗"
        value = _number(float(target["value"]), target["unit"])
        lines.append(f"| {target['figure']} | {value} | {target['rule']} | {mark} |")
    return "\n".join(lines)


def protocol_table(page_text: str, page: str) -> str:
    """Every rule where the built-in protocols differ, as the code has them; raises when
    ``page_text`` does not name one (a new rule must be explained where it is listed)."""
    if str(ROOT) not in sys.path:  # this checkout's code, whichever city360 is installed
        sys.path.insert(0, str(ROOT))
    from city360.eval.protocols import (
        DEFAULT_PROTOCOL,
        REFERENCE_PROTOCOL,
        protocol_differences,
    )

    rows = protocol_differences(DEFAULT_PROTOCOL, REFERENCE_PROTOCOL)
    unexplained = [rule for rule, _, _ in rows if f"`{rule}`" not in page_text]
    if unexplained:
        msg = f"{page}: protocol rules not explained on the page: {', '.join(unexplained)}"
        raise ValueError(msg)
    lines = ["| rule | `default` | `reference` |", "| --- | --- | --- |"]
    lines += [f"| `{rule}` | `{a}` | `{b}` |" for rule, a, b in rows]
    return "\n".join(lines)


def on_page_markdown(markdown: str, page: Any, **_kwargs: Any) -> str:
    if page.file.src_uri == "index.md":
        return README.read_text(encoding="utf-8").replace("](docs/", "](")
    markdown = PROTOCOL_MARKER.sub(lambda _m: protocol_table(markdown, page.file.src_uri), markdown)
    return BENCH_MARKER.sub(lambda m: bench_table(m["name"]), markdown)
