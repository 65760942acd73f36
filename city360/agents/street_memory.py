"""Where an agent has walked, from its own observations: a dead-reckoned track and a visit
count per street cell, so that at a junction it can take the branch it has walked least.

Frame: local metres from where the episode started, x east and y north; bearings in degrees
clockwise from north. Nothing privileged is read:

- **direction of travel** from the location map's red arrow (:func:`read_arrow_heading`),
  which shows where the view looks, minus the agent's own view yaw relative to travel (an agent
  looking at the shops on its right while it walks has yaw +90);
- **distance** from the simulator's feedback ("Walked 10.0 m").

A walk is credited along the direction of travel read after it, except a walk that ends at a
junction, credited along the one before it (a street's last metres bend into the junction, a
new street's first metres may leave it at an angle), as the map reader does. The cells walked
through are counted every ``cell_m / 4`` metres along each walk. The estimate drifts with the
arrow's ~1° resolution and the streets' bends, a few metres per hundred: enough to tell a
street walked a minute ago from one not walked.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from city360.agents.base import Observation
from city360.errors import ConfigError
from city360.simulator.actions import Action

__all__ = ["BRANCH_TURN_DEG", "StreetMemory", "walked_metres"]

BRANCH_TURN_DEG = {Action.LEFT: -90.0, Action.UP: 0.0, Action.RIGHT: 90.0}
"""Roughly where each junction branch leads, relative to the direction of travel (degrees)."""

_WALKED = re.compile(r"Walked\s+([0-9.]+)\s*m", re.IGNORECASE)


def walked_metres(feedback: str) -> float:
    """Metres the last step walked, summed from the feedback's "Walked X m" (0 when none)."""
    return sum(float(m) for m in _WALKED.findall(feedback or ""))


class StreetMemory:
    """See the module docstring. ``cell_m`` is the side of a memory cell (metres);
    ``look_ahead_m`` the distances along a branch at which visits are counted."""

    def __init__(
        self, *, cell_m: float = 8.0, look_ahead_m: Sequence[float] = (10.0, 20.0, 30.0, 40.0)
    ) -> None:
        if not (math.isfinite(cell_m) and cell_m > 0):
            msg = f"`cell_m` must be > 0, got {cell_m}"
            raise ConfigError(msg)
        if not look_ahead_m or any(not (math.isfinite(d) and d > 0) for d in look_ahead_m):
            msg = f"`look_ahead_m` must be positive distances, got {tuple(look_ahead_m)}"
            raise ConfigError(msg)
        self.cell_m = float(cell_m)
        self.look_ahead_m = tuple(float(d) for d in look_ahead_m)
        self.reset()

    def __repr__(self) -> str:
        x, y = self.position_m
        return f"StreetMemory(position=({x:.1f}, {y:.1f}) m, cells={len(self._visits)})"

    def reset(self) -> None:
        """Forget everything: the start is (0, 0), no heading read yet."""
        self.position_m = (0.0, 0.0)
        self.travel_bearing_deg: float | None = None
        self.walked_m = 0.0
        self._visits: Counter[tuple[int, int]] = Counter()
        self._mark(0.0, 0.0)

    # -- recording ---------------------------------------------------------------------------
    def _cell(self, x_m: float, y_m: float) -> tuple[int, int]:
        return math.floor(x_m / self.cell_m), math.floor(y_m / self.cell_m)

    def _mark(self, x_m: float, y_m: float) -> None:
        self._visits[self._cell(x_m, y_m)] += 1

    def update(self, observation: Observation, view_yaw_deg: float, *, at_junction: bool) -> None:
        """Take one observation: read the direction of travel (arrow bearing minus
        ``view_yaw_deg``, the view's yaw relative to travel) and credit the metres walked."""
        from city360.agents.map_reader import read_arrow_heading

        previous = self.travel_bearing_deg
        location_map = observation.get("map")
        if location_map is not None:
            prior = None if previous is None else (previous + view_yaw_deg) % 360.0
            arrow = read_arrow_heading(location_map, prior_deg=prior)
            if arrow is not None:
                self.travel_bearing_deg = (arrow - view_yaw_deg) % 360.0
        walked = walked_metres(str(observation.get("feedback", "") or ""))
        along = previous if (at_junction or self.travel_bearing_deg is None) else None
        along = self.travel_bearing_deg if along is None else along
        if walked <= 0 or along is None:
            return
        x0, y0 = self.position_m
        h = math.radians(along)
        dx, dy = math.sin(h), math.cos(h)
        step = self.cell_m / 4
        cells_before = {self._cell(x0, y0)}
        for d in np.arange(step, walked + 1e-9, step):
            cell = self._cell(x0 + d * dx, y0 + d * dy)
            if cell not in cells_before:  # a cell counts once per walk through it
                cells_before.add(cell)
                self._visits[cell] += 1
        self.position_m = (x0 + walked * dx, y0 + walked * dy)
        end = self._cell(*self.position_m)
        if end not in cells_before:
            self._visits[end] += 1
        self.walked_m += walked

    # -- deciding ----------------------------------------------------------------------------
    def visits_toward(self, bearing_deg: float) -> int:
        """Visits counted in the cells ``look_ahead_m`` away along ``bearing_deg``."""
        x0, y0 = self.position_m
        h = math.radians(bearing_deg)
        return sum(
            self._visits.get(self._cell(x0 + d * math.sin(h), y0 + d * math.cos(h)), 0)
            for d in self.look_ahead_m
        )

    def least_walked(self, branches: Sequence[Action], rng: np.random.Generator) -> Action:
        """Of the offered ``branches``, one whose way ahead has the fewest visits (a seeded
        random one among ties; any at random before a direction of travel is known)."""
        if not branches:
            msg = "least_walked() needs at least one offered branch"
            raise ConfigError(msg)
        if self.travel_bearing_deg is None:
            return branches[int(rng.integers(len(branches)))]
        heading = self.travel_bearing_deg
        scores = [self.visits_toward(heading + BRANCH_TURN_DEG.get(b, 0.0)) for b in branches]
        fewest = min(scores)
        ties = [b for b, s in zip(branches, scores, strict=True) if s == fewest]
        return ties[int(rng.integers(len(ties)))]
