"""docs/examples/quickstart.ipynb runs headless, top to bottom, on the small built test city."""

from __future__ import annotations

from pathlib import Path

import pytest

nbclient = pytest.importorskip("nbclient", reason="nbclient is needed: pip install -e '.[dev]'")
nbformat = pytest.importorskip("nbformat", reason="nbformat is needed: pip install -e '.[dev]'")
pytest.importorskip("ipykernel", reason="ipykernel is needed: pip install -e '.[dev]'")

NOTEBOOK = Path(__file__).resolve().parent.parent / "docs" / "examples" / "quickstart.ipynb"


@pytest.mark.slow
def test_quickstart_notebook_executes(
    built_city: Path, built_suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITY360_NOTEBOOK_CITY", str(built_city))
    monkeypatch.setenv("CITY360_NOTEBOOK_SUITE", str(built_suite))
    monkeypatch.setenv("CITY360_NOTEBOOK_TASKS", "VLN,MapNavigation")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    )
    client.execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 3  # view, map, view after walking
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "mean score 1.0" in text
