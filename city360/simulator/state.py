"""The agent's state between steps: where it is on the pose graph and where it looks."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AgentState", "wrap180"]


def wrap180(angle_deg: float) -> float:
    """Wrap an angle to (-180, 180]."""
    wrapped = (angle_deg + 180.0) % 360.0 - 180.0
    return 180.0 if wrapped == -180.0 else wrapped + 0.0


@dataclass(frozen=True, slots=True)
class AgentState:
    """Position and view.

    ``segment`` is a pose-graph edge id and ``offset_m`` the distance walked along it from its
    start (in traversal direction). ``yaw_deg`` is the view yaw relative to the direction of
    travel at the current frame, positive to the right, in (-180, 180]; ``pitch_deg`` positive
    up. Keeping yaw relative to travel means a person walking a curving street keeps looking
    along it; at a crossing the yaw changes by the graph's turn where the view keeps its
    absolute direction (UP, walking onto the twin) and is kept where it turns with the body
    (see ``controller`` and ``moves``).
    """

    segment: str
    offset_m: float
    yaw_deg: float = 0.0
    pitch_deg: float = 0.0
