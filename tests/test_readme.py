"""The README's examples: each python/bash block is marked, and every block marked runnable is
what ``scripts/readme_examples.py`` hands to ``scripts/wheel-check.sh`` (which runs them from
the installed wheel)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def _load_extractor() -> ModuleType:
    path = ROOT / "scripts" / "readme_examples.py"
    spec = importlib.util.spec_from_file_location("readme_examples", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while building
    spec.loader.exec_module(module)
    return module


examples = _load_extractor()


def test_every_block_marked_runnable_is_extracted() -> None:
    text = README.read_text(encoding="utf-8")
    marked = [
        number
        for number, line in enumerate(text.splitlines(), start=1)
        if re.fullmatch(r"<!--\s*example:\s*runs\s*-->\s*", line)
    ]
    found = [e for e in examples.extract(text) if e.runs]
    assert [e.line - 1 for e in found] == marked
    assert len(found) >= 3


def test_the_journeys_python_and_cli_examples_are_among_the_runnable_ones() -> None:
    runnable = "\n".join(e.code for e in examples.extract(README.read_text()) if e.runs)
    assert 'city360.make("demo"' in runnable
    assert 'city360.make_vec(\n    "demo"' in runnable
    assert "city360 eval demo --suite main" in runnable
    assert "city360 eval --rerun outputs/demo-oracle" in runnable


def test_no_runnable_example_holds_a_placeholder() -> None:
    for example in examples.extract(README.read_text()):
        if example.runs:
            placeholders = re.findall(r"CITY_DIR|SUITE|RUN_ID|…|\.\.\.", example.code)
            assert placeholders == [], f"README.md:{example.line}"


def test_write_runnable_writes_them_in_order_with_their_language(tmp_path: Path) -> None:
    text = (
        "<!-- example: runs -->\n```python\nprint(1)\n```\n"
        "<!-- example: template -->\n```bash\ncity360 view CITY_DIR\n```\n"
        "```\na diagram\n```\n"
        "<!-- example: runs -->\n```bash\ncity360 cities\n```\n"
    )
    written = examples.write_runnable(examples.extract(text), tmp_path)
    assert [p.name for p in written] == ["01-line-2.py", "02-line-13.sh"]
    assert written[1].read_text() == "city360 cities\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "intro\n```bash\ncity360 cities\n```\n",
            "README.md:2: the bash block has no marker; put `<!-- example: runs -->`",
        ),
        (
            "<!-- example: runs -->\n```python\nprint(1)\n```\n<!-- example: runs -->\nprose\n",
            "README.md:5: example marker is not on the line just before a code fence",
        ),
        (
            "<!-- example: run -->\n```python\nprint(1)\n```\n",
            "README.md:1: unknown example marker 'run'; use one of ('runs', 'template')",
        ),
        (
            "<!-- example: runs -->\n```\nplain\n```\n",
            "README.md:2: an example marker stands before a plain block",
        ),
        ("<!-- example: runs -->\n```bash\nnever closed\n", "README.md:2: code block is never"),
    ],
)
def test_a_marker_cannot_silently_drop_out(text: str, message: str) -> None:
    with pytest.raises(examples.ExampleError, match=re.escape(message)):
        examples.extract(text)
