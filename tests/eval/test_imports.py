"""Import hygiene of ``city360.eval``: values live in leaf modules, orchestrators are imported
by nobody inside eval, there are no import circles, and every module imports on its own."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

import city360.eval

EVAL_DIR = Path(city360.eval.__file__).parent
MODULES = sorted(f"city360.eval.{p.stem}" for p in EVAL_DIR.glob("*.py") if p.stem != "__init__")
ORCHESTRATORS = ("city360.eval.runner", "city360.eval.cli")


def _imports(module: str) -> set[str]:
    """Every ``city360.eval`` module that ``module`` imports, at any depth of its code
    (function-level and TYPE_CHECKING imports count: they are dependencies all the same)."""
    path = EVAL_DIR / f"{module.rsplit('.', 1)[1]}.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found.update(n for n in names if n in MODULES)
    return found - {module}


def test_no_eval_module_imports_an_orchestrator() -> None:
    offenders = {
        m: sorted(_imports(m) & set(ORCHESTRATORS)) for m in MODULES if m not in ORCHESTRATORS
    }
    assert {m: o for m, o in offenders.items() if o} == {}


def test_eval_has_no_import_circles() -> None:
    graph = nx.DiGraph((m, dep) for m in MODULES for dep in _imports(m))
    assert list(nx.simple_cycles(graph)) == []


@pytest.mark.parametrize("module", MODULES)
def test_each_module_imports_in_a_fresh_interpreter(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", f"import {module}"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
