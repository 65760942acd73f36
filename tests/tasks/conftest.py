"""Fixtures of the tasks tests: a hand-made toy city built once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tasks.toy_city import build_toy_city


@pytest.fixture(scope="session")
def toy_city(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_toy_city(tmp_path_factory.mktemp("toy_city"))
