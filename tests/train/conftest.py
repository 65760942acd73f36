"""Fixtures of the training tests: the simulator tests' hand-made plus-shaped city."""

from __future__ import annotations

from tests.simulator.conftest import plus_city

__all__ = ["plus_city"]
