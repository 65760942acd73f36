"""Shared test setup. Fixtures live in tests/fixtures/ modules, one per concern."""

from __future__ import annotations

import os

os.environ.setdefault("CITY360_NO_PROGRESS", "1")

pytest_plugins = [
    "tests.fixtures.built",
    "tests.fixtures.cities",
    "tests.fixtures.data",
    "tests.fixtures.fake_llm_server",
    "tests.fixtures.scenes",
    "tests.fixtures.videos",
]
