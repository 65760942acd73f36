"""Shared test setup. Fixtures live in tests/fixtures/ modules, one per concern."""

from __future__ import annotations

import os

os.environ.setdefault("CITY360_NO_PROGRESS", "1")
# pytest-xdist's workers start with COLUMNS=80, which rich would freeze into city360's shared
# console at import (city360.progress); without it the console reads COLUMNS when it prints, as
# in a serial run, so a test can widen it with monkeypatch.setenv or CliRunner's env.
os.environ.pop("COLUMNS", None)

pytest_plugins = [
    "tests.fixtures.built",
    "tests.fixtures.cities",
    "tests.fixtures.data",
    "tests.fixtures.fake_llm_server",
    "tests.fixtures.scenes",
    "tests.fixtures.videos",
]
