"""The registry of task families, by name.

Each family registers a :class:`FamilySpec`: its task model, how it is scored, whether the
agent must walk to a goal, and the answer format it is told. Everything that loops over families
(generators, checks, prompts, statistics) goes through :func:`get_family` / :func:`all_families`
so that adding an eighth family is one registration.
"""

from __future__ import annotations

from dataclasses import dataclass

from city360.errors import TaskError, did_you_mean
from city360.tasks.schema import (
    Family,
    LandmarkSearchImageTask,
    LandmarkSearchTextTask,
    LocalizationTask,
    MapNavigationTask,
    MetricName,
    ObjectCountTask,
    RelationalSpatialTask,
    TaskBase,
    VLNTask,
)

__all__ = ["FamilySpec", "all_families", "get_family", "register_family"]


@dataclass(frozen=True, slots=True)
class FamilySpec:
    """One family: ``navigation`` families are scored by where the agent ANSWERs
    (``threshold_m`` metres from the goal); the others by the answer text."""

    family: Family
    model: type[TaskBase]
    metric: MetricName
    navigation: bool
    threshold_m: float | None
    short: str
    """Short id prefix used by generators (``loc``, ``lmt``, ...)."""


_REGISTRY: dict[str, FamilySpec] = {}


def register_family(spec: FamilySpec) -> None:
    """Register (or replace) a family under its name."""
    _REGISTRY[spec.family.value] = spec


def get_family(name: str | Family) -> FamilySpec:
    """The spec of a family by name (``"VLN"``, ``Family.VLN``); unknown names raise
    :class:`TaskError` listing the known ones and a close match."""
    key = name.value if isinstance(name, Family) else str(name)
    try:
        return _REGISTRY[key]
    except KeyError:
        known = list(_REGISTRY)
        msg = (
            f"unknown task family {key!r}; expected one of {', '.join(known)}."
            f"{did_you_mean(key, known)}"
        )
        raise TaskError(msg) from None


def all_families() -> list[FamilySpec]:
    """Every registered family, in registration order."""
    return list(_REGISTRY.values())


for _spec in (
    FamilySpec(Family.LOCALIZATION, LocalizationTask, MetricName.EXACT_MATCH, False, None, "loc"),
    FamilySpec(
        Family.LANDMARK_TEXT, LandmarkSearchTextTask, MetricName.COORDINATE_MATCH, True, 10.0, "lmt"
    ),
    FamilySpec(
        Family.LANDMARK_IMAGE,
        LandmarkSearchImageTask,
        MetricName.COORDINATE_MATCH,
        True,
        10.0,
        "lmi",
    ),
    FamilySpec(
        Family.MAP_NAVIGATION, MapNavigationTask, MetricName.COORDINATE_MATCH, True, 20.0, "map"
    ),
    FamilySpec(Family.VLN, VLNTask, MetricName.COORDINATE_MATCH, True, 10.0, "vln"),
    FamilySpec(Family.OBJECT_COUNT, ObjectCountTask, MetricName.COUNT_MRA, False, None, "cnt"),
    FamilySpec(
        Family.RELATIONAL, RelationalSpatialTask, MetricName.FUZZY_MATCH, False, None, "rel"
    ),
):
    register_family(_spec)
