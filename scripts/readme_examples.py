"""The README's code examples: which run as written, which are templates, and their text.

Every ```` ```python ```` or ```` ```bash ```` block of README.md carries a marker on the line
just before its fence:

- ``<!-- example: runs -->``: runs exactly as written from the installed wheel, outside the
  checkout (``scripts/wheel-check.sh`` runs it: Python blocks with the wheel's ``python``, bash
  blocks with ``bash -euo pipefail`` and the wheel's ``city360`` first on ``PATH``), in README
  order, in one working folder and with one city cache, so later blocks reuse what earlier
  ones built (the demo city);
- ``<!-- example: template -->``: a pattern to fill in (``CITY_DIR``, ``SUITE``, your videos,
  an API key's provider) or a source checkout's ``make`` targets; never run.

A block without a marker, a marker that is not right before a fence, or an unknown marker is an
error, so a runnable example cannot silently drop out of the check (``tests/test_readme.py``).

``python scripts/readme_examples.py README.md OUT_DIR`` writes the runnable blocks to
``OUT_DIR/NN-line-L.py`` / ``.sh`` (NN in README order, L the fence's line) and prints their
names. Standard library only: it runs under the fresh venv's Python.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CODE_LANGUAGES", "Example", "ExampleError", "extract", "write_runnable"]

CODE_LANGUAGES = {"python": ".py", "bash": ".sh"}
"""Fence languages that must be marked, and the suffix their runnable files get."""

MARKER = re.compile(r"^<!--\s*example:\s*(?P<kind>[\w-]+)\s*-->\s*$")
KINDS = ("runs", "template")
FENCE = re.compile(r"^```(?P<language>[\w+-]*)\s*$")


class ExampleError(ValueError):
    """The README's examples are not marked as this module expects."""


@dataclass(frozen=True, slots=True)
class Example:
    """One marked code block: ``line`` is the 1-based line of its opening fence."""

    line: int
    language: str
    kind: str
    code: str

    @property
    def runs(self) -> bool:
        return self.kind == "runs"


def extract(text: str, *, source: str = "README.md") -> list[Example]:
    """Every marked code block of ``text``, in order; raises :class:`ExampleError` naming the
    line of any unmarked ``python``/``bash`` block, misplaced marker or unknown kind."""
    lines = text.splitlines()
    examples: list[Example] = []
    marker_lines: set[int] = set()
    index = 0
    while index < len(lines):
        line = lines[index]
        marker = MARKER.match(line)
        if marker:
            kind = marker["kind"]
            if kind not in KINDS:
                msg = f"{source}:{index + 1}: unknown example marker {kind!r}; use one of {KINDS}"
                raise ExampleError(msg)
            marker_lines.add(index)
        fence = FENCE.match(line)
        if not fence:
            index += 1
            continue
        end = next((k for k in range(index + 1, len(lines)) if lines[k].startswith("```")), None)
        if end is None:
            msg = f"{source}:{index + 1}: code block is never closed"
            raise ExampleError(msg)
        language = fence["language"]
        previous = MARKER.match(lines[index - 1]) if index > 0 else None
        if previous:
            marker_lines.discard(index - 1)
            if language not in CODE_LANGUAGES:
                msg = (
                    f"{source}:{index + 1}: an example marker stands before a {language or 'plain'}"
                    f" block; only {', '.join(CODE_LANGUAGES)} blocks are examples"
                )
                raise ExampleError(msg)
            code = "\n".join(lines[index + 1 : end]) + "\n"
            examples.append(Example(index + 1, language, previous["kind"], code))
        elif language in CODE_LANGUAGES:
            msg = (
                f"{source}:{index + 1}: the {language} block has no marker; put "
                "`<!-- example: runs -->` (runs as written from the wheel) or "
                "`<!-- example: template -->` on the line before its fence"
            )
            raise ExampleError(msg)
        index = end + 1
    if marker_lines:
        first = min(marker_lines) + 1
        msg = f"{source}:{first}: example marker is not on the line just before a code fence"
        raise ExampleError(msg)
    return examples


def write_runnable(examples: list[Example], out_dir: Path) -> list[Path]:
    """Write the runnable examples to ``out_dir`` as ``NN-line-L.py``/``.sh``; return them."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for number, example in enumerate((e for e in examples if e.runs), start=1):
        suffix = CODE_LANGUAGES[example.language]
        path = out_dir / f"{number:02d}-line-{example.line}{suffix}"
        path.write_text(example.code, encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: readme_examples.py README.md OUT_DIR", file=sys.stderr)
        return 2
    readme, out_dir = Path(argv[0]), Path(argv[1])
    try:
        examples = extract(readme.read_text(encoding="utf-8"), source=str(readme))
    except ExampleError as exc:
        print(f"readme_examples: {exc}", file=sys.stderr)
        return 1
    for path in write_runnable(examples, out_dir):
        print(path.name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
