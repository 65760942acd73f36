"""The small values of a street graph: :class:`Node` and :class:`Transition`.

Both are read from ``graph.json`` (docs/contracts.md, "pose_graph -> graph.json") by
:mod:`city360.streets.schema` and written by the builder (:mod:`city360.pose_graph`), so this
module imports nothing but the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["LABELS", "Label", "Node", "NodeKind", "Transition"]

Label = Literal["LEFT", "UP", "RIGHT"]
LABELS: tuple[Label, ...] = ("LEFT", "UP", "RIGHT")
"""Branch labels in the order the simulator lists them (left to right)."""
NodeKind = Literal["junction", "dead_end", "link"]


@dataclass(frozen=True, slots=True)
class Node:
    """A junction, dead end or link at ``x_m``/``y_m`` (city CRS metres, east/north) and
    ``lat``/``lon`` (WGS84 degrees; None only in a networkx graph made by hand). ``degree`` is
    the number of streets meeting there (the branching degree), None when the file does not
    say (hand-made graphs)."""

    id: int
    kind: NodeKind
    x_m: float
    y_m: float
    lat: float | None = None
    lon: float | None = None
    degree: int | None = None


@dataclass(frozen=True, slots=True)
class Transition:
    """A choice offered on arriving at a segment's end: take segment ``edge`` turning
    ``turn_deg`` (degrees, signed, + to the right, in (-180, 180]), labelled ``label``.

    ``rank`` 0 is the choice the label's action takes (higher ranks cannot be taken by an
    action); ``uturn`` marks turning back along the same street (offered only where nothing
    else is: dead ends and the open ends of the filmed network).
    """

    edge: str
    turn_deg: float
    label: Label
    rank: int = 0
    uturn: bool = False

    def to_json(self) -> dict[str, object]:
        """The ``transitions`` entry of ``graph.json`` (``turn_deg`` to 0.01 degree)."""
        return {
            "edge": self.edge,
            "turn_deg": round(self.turn_deg, 2),
            "label": self.label,
            "rank": self.rank,
            "uturn": self.uturn,
        }
