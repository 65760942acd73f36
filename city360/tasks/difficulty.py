"""Difficulty: Easy / Medium / Hard from measurable features of a task.

The rules, per family (distances in metres, measured on the pose graph):

**Navigation** (LandmarkSearchText, LandmarkSearchImage, MapNavigation, VLN), from the
oracle's walk from the start to the goal: ``length_m`` walked and ``decision_points`` (junctions
crossed where more than one branch is offered).

- Easy: ``length_m <= 120`` and ``decision_points <= 1``;
- Hard: ``length_m > 240`` or ``decision_points >= 4``;
- Medium: everything else.

**Localization**, from the start: ``nearest_landmark_m`` (the nearest named place whose sign
faces the street) and ``border_margin_m`` (how far the start is from the nearest grid line,
the grid's outer edge included).

- Easy: a landmark within 25 m and at least 15 m from every grid line;
- Hard: no landmark within 50 m, or within 5 m of a grid line;
- Medium: everything else.

**Object count**, from the stretch: ``count`` (true number of objects) and ``stretch_m``.

- Easy: ``count <= 2`` and ``stretch_m <= 80``;
- Hard: ``count >= 6`` or ``stretch_m > 160``;
- Medium: everything else.

**Relational spatial reasoning**, from ``anchor_m``, the walk from the start to the pose in
front of the named anchor place:

- Easy: ``anchor_m <= 30``;
- Hard: ``anchor_m > 100``;
- Medium: everything else.

**Profiles.** The rules above are the ``default`` profile. A :class:`DifficultyProfile` names
the route and count rules a suite is generated with, and per level a target mean the
generators pull their picks towards (candidates of a level are taken nearest the target
first); ``reference`` is calibrated to 360CityArena's means (map-navigation paths 124 / 247 /
347 m, counts 3.5 / 4.6 / 9.0 objects; no zero counts) for a city of the reference's scale
(``helsinki``). Profiles are looked up by name (:func:`get_profile`,
``city360 tasks generate --difficulty NAME``).

:func:`difficulty_statistics` summarises a suite by family and difficulty with the features'
means, which ``city360 tasks generate`` prints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from city360.errors import ConfigError, did_you_mean
from city360.tasks.schema import Difficulty, TaskBase

__all__ = [
    "DEFAULT_PROFILE",
    "REFERENCE_MEANS",
    "CountFeatures",
    "DifficultyProfile",
    "LocalizationFeatures",
    "RelationalFeatures",
    "RouteFeatures",
    "count_difficulty",
    "difficulty_statistics",
    "get_profile",
    "localization_difficulty",
    "profile_names",
    "register_profile",
    "relational_difficulty",
    "route_difficulty",
]

EASY_ROUTE_M = 120.0
HARD_ROUTE_M = 240.0
EASY_DECISIONS = 1
HARD_DECISIONS = 4
EASY_LANDMARK_M = 25.0
HARD_LANDMARK_M = 50.0
EASY_MARGIN_M = 15.0
HARD_MARGIN_M = 5.0
EASY_COUNT = 2
HARD_COUNT = 6
EASY_STRETCH_M = 80.0
HARD_STRETCH_M = 160.0
EASY_ANCHOR_M = 30.0
HARD_ANCHOR_M = 100.0


@dataclass(frozen=True, slots=True)
class RouteFeatures:
    length_m: float
    decision_points: int
    turns: int
    steps: int

    def as_meta(self) -> dict[str, Any]:
        return {k: round(v, 2) if isinstance(v, float) else v for k, v in asdict(self).items()}


@dataclass(frozen=True, slots=True)
class LocalizationFeatures:
    nearest_landmark_m: float
    border_margin_m: float

    def as_meta(self) -> dict[str, Any]:
        return {k: round(v, 2) for k, v in asdict(self).items()}


@dataclass(frozen=True, slots=True)
class CountFeatures:
    count: int
    stretch_m: float

    def as_meta(self) -> dict[str, Any]:
        return {"count": self.count, "stretch_m": round(self.stretch_m, 2)}


@dataclass(frozen=True, slots=True)
class RelationalFeatures:
    anchor_m: float
    relation: str

    def as_meta(self) -> dict[str, Any]:
        return {"anchor_m": round(self.anchor_m, 2), "relation": self.relation}


def route_difficulty(f: RouteFeatures) -> Difficulty:
    if f.length_m > HARD_ROUTE_M or f.decision_points >= HARD_DECISIONS:
        return Difficulty.HARD
    if f.length_m <= EASY_ROUTE_M and f.decision_points <= EASY_DECISIONS:
        return Difficulty.EASY
    return Difficulty.MEDIUM


def localization_difficulty(f: LocalizationFeatures) -> Difficulty:
    if f.nearest_landmark_m > HARD_LANDMARK_M or f.border_margin_m < HARD_MARGIN_M:
        return Difficulty.HARD
    if f.nearest_landmark_m <= EASY_LANDMARK_M and f.border_margin_m >= EASY_MARGIN_M:
        return Difficulty.EASY
    return Difficulty.MEDIUM


def count_difficulty(f: CountFeatures) -> Difficulty:
    if f.count >= HARD_COUNT or f.stretch_m > HARD_STRETCH_M:
        return Difficulty.HARD
    if f.count <= EASY_COUNT and f.stretch_m <= EASY_STRETCH_M:
        return Difficulty.EASY
    return Difficulty.MEDIUM


def relational_difficulty(f: RelationalFeatures) -> Difficulty:
    if f.anchor_m > HARD_ANCHOR_M:
        return Difficulty.HARD
    if f.anchor_m <= EASY_ANCHOR_M:
        return Difficulty.EASY
    return Difficulty.MEDIUM


_FEATURE_KEYS = (
    "length_m",
    "decision_points",
    "turns",
    "steps",
    "nearest_landmark_m",
    "border_margin_m",
    "count",
    "stretch_m",
    "anchor_m",
)


def difficulty_statistics(tasks: Iterable[TaskBase]) -> list[dict[str, Any]]:
    """One row per (family, difficulty): ``n`` and the mean of each numeric feature in the
    tasks' ``meta``."""
    groups: dict[tuple[str, str], list[TaskBase]] = {}
    for task in tasks:
        groups.setdefault((str(task.family), task.difficulty.value), []).append(task)
    order = {d.value: i for i, d in enumerate(Difficulty)}
    rows = []
    for (family, level), members in sorted(
        groups.items(), key=lambda kv: (kv[0][0], order[kv[0][1]])
    ):
        row: dict[str, Any] = {"family": family, "difficulty": level, "n": len(members)}
        for key in _FEATURE_KEYS:
            values = [t.meta[key] for t in members if isinstance(t.meta.get(key), int | float)]
            if values:
                row[key] = round(sum(values) / len(values), 1)
        rows.append(row)
    return rows


# --- profiles ---------------------------------------------------------------------------------

REFERENCE_MEANS: Mapping[str, Mapping[Difficulty, float]] = {
    "length_m": {Difficulty.EASY: 124.0, Difficulty.MEDIUM: 247.0, Difficulty.HARD: 347.0},
    "count": {Difficulty.EASY: 3.5, Difficulty.MEDIUM: 4.6, Difficulty.HARD: 9.0},
}
"""360CityArena's per-level means: map-navigation path length (metres) and object count."""


@dataclass(frozen=True, slots=True)
class DifficultyProfile:
    """How a suite's levels are made: ``route`` and ``count`` classify a candidate (None:
    refused under this profile); ``route_target_m`` / ``count_target`` are per-level means the
    generators pick towards (empty: candidates in their drawn order)."""

    name: str
    route: Callable[[RouteFeatures], Difficulty | None] = route_difficulty
    count: Callable[[CountFeatures], Difficulty | None] = count_difficulty
    route_target_m: Mapping[Difficulty, float] = field(default_factory=dict)
    count_target: Mapping[Difficulty, float] = field(default_factory=dict)
    count_through: tuple[int, ...] = (0, 0, 1, 1, 2)
    """Junctions a counting stretch may run through, drawn uniformly."""
    candidate_factor: int = 1
    """Draw this many times the generators' usual candidates (more to pick near targets)."""

    def route_distance(self, level: Difficulty, features: RouteFeatures) -> float:
        """How far a route is from its level's target (0 without one)."""
        target = self.route_target_m.get(level)
        return 0.0 if target is None else abs(features.length_m - target)

    def count_distance(self, level: Difficulty, features: CountFeatures) -> float:
        target = self.count_target.get(level)
        return 0.0 if target is None else abs(features.count - target)


def _midpoint(means: Mapping[Difficulty, float], low: Difficulty, high: Difficulty) -> float:
    return (means[low] + means[high]) / 2


_REF_ROUTE = REFERENCE_MEANS["length_m"]
_REF_EASY_MAX_M = _midpoint(_REF_ROUTE, Difficulty.EASY, Difficulty.MEDIUM)
_REF_HARD_MIN_M = _midpoint(_REF_ROUTE, Difficulty.MEDIUM, Difficulty.HARD)
_REF_HARD_MIN_COUNT = 7


def reference_route_difficulty(f: RouteFeatures) -> Difficulty:
    """Levels by walked length, split halfway between the reference's means (185.5 and
    297 m)."""
    if f.length_m > _REF_HARD_MIN_M:
        return Difficulty.HARD
    if f.length_m <= _REF_EASY_MAX_M:
        return Difficulty.EASY
    return Difficulty.MEDIUM


def reference_count_difficulty(f: CountFeatures) -> Difficulty | None:
    """No zero counts; Hard from 7 objects; below that Easy on stretches up to 80 m and Medium
    on longer ones, with the picks pulled to 3.5 and 4.6 (so mostly 3-5 objects)."""
    if f.count <= 0:
        return None
    if f.count >= _REF_HARD_MIN_COUNT:
        return Difficulty.HARD
    return Difficulty.EASY if f.stretch_m <= EASY_STRETCH_M else Difficulty.MEDIUM


DEFAULT_PROFILE = DifficultyProfile("default")
"""city360's first rules (the module docstring), right for small cities."""

_PROFILES: dict[str, DifficultyProfile] = {}


def register_profile(profile: DifficultyProfile, *, replace: bool = False) -> DifficultyProfile:
    """Register ``profile`` under its name; an existing name needs ``replace=True``."""
    if profile.name in _PROFILES and not replace:
        msg = f"difficulty profile {profile.name!r} is already registered; pass replace=True"
        raise ConfigError(msg)
    _PROFILES[profile.name] = profile
    return profile


def get_profile(name: str) -> DifficultyProfile:
    """The profile called ``name``; unknown names raise listing the known ones."""
    try:
        return _PROFILES[name]
    except KeyError:
        known = list(_PROFILES)
        msg = f"unknown difficulty profile {name!r}; expected one of {', '.join(known)}."
        raise ConfigError(msg + did_you_mean(name, known)) from None


def profile_names() -> list[str]:
    return list(_PROFILES)


register_profile(DEFAULT_PROFILE)
register_profile(
    DifficultyProfile(
        "reference",
        route=reference_route_difficulty,
        count=reference_count_difficulty,
        route_target_m=REFERENCE_MEANS["length_m"],
        count_target=REFERENCE_MEANS["count"],
        count_through=(0, 1, 1, 2, 2, 3),
        candidate_factor=3,
    )
)
