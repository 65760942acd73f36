"""Viewer fixtures: an app over ``built_city`` with a private copy of ``built_suite``."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

LOCAL_URL = "http://127.0.0.1:8360"
"""Where test clients send requests: a name the viewer serves (it checks Host)."""


@dataclass(frozen=True)
class ViewerPaths:
    city: Path
    suite: Path
    outputs: Path
    run_id: str = "human-test"

    @property
    def run_dir(self) -> Path:
        return self.outputs / self.run_id


def make_paths(built_city: Path, built_suite: Path, root: Path) -> ViewerPaths:
    """A copy of the generated suite (the viewer edits it) and an empty output root."""
    suite = root / "suite"
    shutil.copytree(built_suite, suite)
    return ViewerPaths(city=built_city, suite=suite, outputs=root / "outputs")


def make_config(paths: ViewerPaths, **overrides: object) -> object:
    from city360.viewer.config import ViewerConfig

    options: dict[str, object] = {
        "city_dir": paths.city,
        "suite_dir": paths.suite,
        "output_root": paths.outputs,
        "run_id": paths.run_id,
        "renderer": "cpu",
    }
    options.update(overrides)
    return ViewerConfig(**options)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def viewer_paths(
    built_city: Path, built_suite: Path, tmp_path_factory: pytest.TempPathFactory
) -> ViewerPaths:
    return make_paths(built_city, built_suite, tmp_path_factory.mktemp("viewer"))


@pytest.fixture(scope="module")
def client(viewer_paths: ViewerPaths) -> Iterator[object]:
    """A TestClient of an app without a token (cpu renderer: deterministic, no GL needed)."""
    pytest.importorskip("fastapi", reason="fastapi is needed for the viewer tests")
    from fastapi.testclient import TestClient

    from city360.viewer.app import create_app

    with TestClient(create_app(make_config(viewer_paths)), base_url=LOCAL_URL) as test_client:  # type: ignore[arg-type]
        yield test_client
