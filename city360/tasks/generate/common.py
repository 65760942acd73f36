"""What every generator shares: the context it draws from, start/goal helpers, quotas.

A :class:`GenerationContext` bundles the city's walkable graph, its projection, the map grid,
the step sizes of the controller, a seeded random generator and an :class:`ImageSource` that
draws the pictures tasks carry (grid map, route map, landmark views). Generators only read the
context, so the same code serves synthetic and real cities; only the truth they read differs.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from city360.geo import LocalProjection, wrap_deg
from city360.streets import StreetGraph
from city360.tasks.difficulty import DEFAULT_PROFILE, DifficultyProfile, RouteFeatures
from city360.tasks.schema import Difficulty, GoalTruth, StartPose
from city360.tasks.walk import OracleResult, oracle_walk
from city360.types import Image

__all__ = [
    "GenerationContext",
    "GenerationReport",
    "Grid",
    "ImageSource",
    "balanced_pick",
    "png_bytes",
    "route_features",
]


class Grid(Protocol):
    """The localization grid (``city360.maps.grid.MapGrid``): cells ``(i, j)`` count from 1,
    i = column from the west, j = row from the north."""

    @property
    def n(self) -> int: ...

    def cell_of(self, x_m: float, y_m: float) -> tuple[int, int]: ...

    def distance_to_grid_line_m(self, x_m: float, y_m: float) -> float: ...


class ImageSource(Protocol):
    """Draws the pictures tasks carry, as RGB images (H, W, 3) uint8."""

    def grid_map(self) -> Image:
        """The exploration area with its N x N grid and labels."""
        ...

    def route_map(self, start_xy: tuple[float, float], goal_xy: tuple[float, float]) -> Image:
        """A map with a BLUE start marker and a RED goal marker (metres, city CRS)."""
        ...

    def landmark_view(
        self, x_m: float, y_m: float, *, heading_deg: float, look_bearing_deg: float
    ) -> Image:
        """What a person standing at (x_m, y_m), walking along ``heading_deg``, sees when
        looking towards the absolute bearing ``look_bearing_deg``."""
        ...


def png_bytes(image: Image) -> bytes:
    """Encode an RGB image as PNG (deterministic bytes for the same pixels)."""
    from PIL import Image as PilImage

    buffer = io.BytesIO()
    PilImage.fromarray(np.ascontiguousarray(image, dtype=np.uint8), "RGB").save(
        buffer, format="PNG", optimize=False, compress_level=6
    )
    return buffer.getvalue()


@dataclass
class GenerationReport:
    """What a generator did: tasks made per family and why candidates were turned down."""

    made: dict[str, int] = field(default_factory=dict)
    rejected: dict[str, dict[str, int]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def reject(self, family: str, reason: str) -> None:
        per = self.rejected.setdefault(family, {})
        per[reason] = per.get(reason, 0) + 1


@dataclass
class GenerationContext:
    """Everything a generator reads. ``move_m`` are the controller's W step sizes (SMALL,
    MEDIUM, LARGE, metres); ``step_limit`` the episode budget every task gets."""

    city_name: str
    projection: LocalProjection
    graph: StreetGraph
    grid: Grid
    images: ImageSource
    rng: np.random.Generator
    move_m: tuple[float, float, float] = (2.0, 5.0, 10.0)
    step_limit: int = 50
    assets: dict[str, bytes] = field(default_factory=dict)
    difficulty: DifficultyProfile = DEFAULT_PROFILE
    """The rules that make Easy / Medium / Hard and the means picks are pulled towards."""

    def latlon(self, x_m: float, y_m: float) -> tuple[float, float]:
        lat, lon = self.projection.to_latlon(x_m, y_m)
        return float(lat), float(lon)

    def start_pose(self, segment: str, offset_m: float, *, yaw_deg: float = 0.0) -> StartPose:
        """A start on ``segment`` at ``offset_m`` with lat/lon/heading filled in."""
        seg = self.graph.segment(segment)
        offset = round(min(max(offset_m, 0.0), seg.length_m), 2)
        x, y = seg.position(offset)
        lat, lon = self.latlon(x, y)
        return StartPose(
            segment=segment,
            offset_m=offset,
            lat=lat,
            lon=lon,
            heading_deg=round(wrap_deg(seg.heading(offset)), 3),
            yaw_deg=yaw_deg,
        )

    def goal(
        self,
        x_m: float,
        y_m: float,
        threshold_m: float,
        *,
        segment: str | None = None,
        offset_m: float | None = None,
    ) -> GoalTruth:
        lat, lon = self.latlon(x_m, y_m)
        return GoalTruth(
            x_m=round(x_m, 3),
            y_m=round(y_m, 3),
            lat=lat,
            lon=lon,
            threshold_m=threshold_m,
            segment=segment,
            offset_m=None if offset_m is None else round(offset_m, 2),
        )

    def random_start(self) -> tuple[str, float]:
        """A uniformly random (segment, offset) by length, away from the segment's ends."""
        ids = sorted(self.graph.segments)
        lengths = np.array([self.graph.segments[s].length_m for s in ids])
        seg_id = ids[int(self.rng.choice(len(ids), p=lengths / lengths.sum()))]
        length = self.graph.segments[seg_id].length_m
        margin = min(5.0, length / 4)
        return seg_id, float(round(self.rng.uniform(margin, length - margin), 1))

    def oracle(
        self, start: tuple[str, float], goal_xy: tuple[float, float], threshold_m: float
    ) -> OracleResult:
        return oracle_walk(
            self.graph,
            start,
            goal_xy,
            threshold_m,
            step_limit=self.step_limit,
            move_m=self.move_m,
        )

    def add_asset(self, name: str, image: Image) -> str:
        """Store ``image`` as ``assets/<name>.png`` and return that suite-relative path."""
        path = f"assets/{name}.png"
        self.assets[path] = png_bytes(image)
        return path


def route_features(graph: StreetGraph, result: OracleResult) -> RouteFeatures:
    """Length, decision points and turns of the oracle's walk.

    A decision point is a junction the walk crosses where more than one branch is offered; a
    turn is a LEFT or RIGHT taken there.
    """
    decisions = sum(graph.segments[s].is_intersection for s in result.segments[:-1])
    turns = sum(action in ("LEFT", "RIGHT") for action, _ in result.actions)
    return RouteFeatures(
        length_m=result.path_m,
        decision_points=decisions,
        turns=turns,
        steps=result.steps or 0,
    )


def balanced_pick(
    candidates: Sequence[tuple[Difficulty, Any]],
    total: int,
    *,
    key: Callable[[Any], str] | None = None,
    closeness: Callable[[Difficulty, Any], float] | None = None,
) -> list[tuple[Difficulty, Any]]:
    """Pick ``total`` candidates, as even over Easy/Medium/Hard as the candidates allow,
    in candidate order (which the caller has shuffled with its seeded rng), or nearest first
    by ``closeness(level, candidate)`` (a profile's distance to its level's target mean)."""
    by_level: dict[Difficulty, list[tuple[Difficulty, Any]]] = {d: [] for d in Difficulty}
    seen: set[str] = set()
    for cand in candidates:
        tag = key(cand[1]) if key else None
        if tag is not None:
            if tag in seen:
                continue
            seen.add(tag)
        by_level[cand[0]].append(cand)
    if closeness is not None:
        for level, members in by_level.items():
            members.sort(key=lambda c, lv=level: closeness(lv, c[1]))  # type: ignore[misc]
    quota = {d: total // 3 + (1 if i < total % 3 else 0) for i, d in enumerate(Difficulty)}
    # Give quota a level cannot fill to the others.
    spare = 0
    for level in Difficulty:
        if len(by_level[level]) < quota[level]:
            spare += quota[level] - len(by_level[level])
            quota[level] = len(by_level[level])
    for level in Difficulty:
        extra = min(spare, len(by_level[level]) - quota[level])
        quota[level] += extra
        spare -= extra
    chosen = [c for level in Difficulty for c in by_level[level][: quota[level]]]
    return chosen
