"""The ablations a run can switch from the CLI (Mine Odyssey's: map off, multi-view, route
guidance), as one typed value that says which environment options and agent options it sets.

``city360 eval --no-map --views 4 --route-guidance`` builds an :class:`Ablations`; the runner
records the environment options it gives in ``run_metadata.json`` (``config.env_options``),
so runs that differ only in an ablation are told apart by their metadata.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from city360.agents.lmm import MAX_VIEWS
from city360.errors import ConfigError

__all__ = ["MAX_VIEWS", "VIEW_AGENTS", "Ablations"]

VIEW_AGENTS = frozenset({"lmm"})
"""Agent kinds that take a ``views`` option (the baselines look at the current view only)."""


@dataclass(frozen=True, slots=True)
class Ablations:
    """``use_map``: show the location map; ``views``: images of the surroundings per step (1:
    the current view; N > 1: the env renders its multi-view and the LMM agent sends the
    current view and N - 1 labelled faces); ``route_guidance``: the env draws the route ahead
    on the ground (to the task's goal, along its ``truth.route`` where it has one)."""

    use_map: bool = True
    views: int = 1
    route_guidance: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.views <= MAX_VIEWS:
            msg = f"`--views` must be in 1..{MAX_VIEWS}, got {self.views}"
            raise ConfigError(msg)

    def env_options(self) -> dict[str, Any]:
        """Environment options beyond the map switch (which ``EvalConfig.use_map`` carries)."""
        options: dict[str, Any] = {}
        if self.views > 1:
            options["multiview"] = True
        if self.route_guidance:
            options["route_guidance"] = True
        return options

    def agent_options(self, kind: str) -> dict[str, Any]:
        """Options for an agent of ``kind``: ``views`` for the agents that take it."""
        if self.views > 1 and kind.strip().lower() in VIEW_AGENTS:
            return {"views": self.views}
        return {}

    @property
    def label(self) -> str:
        """A short name for reports: ``no-map+views4+guidance``; ``full`` when none is on."""
        parts = [] if self.use_map else ["no-map"]
        if self.views > 1:
            parts.append(f"views{self.views}")
        if self.route_guidance:
            parts.append("guidance")
        return "+".join(parts) or "full"
