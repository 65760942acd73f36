"""What the two landmark-search families share: the truth (a POI and the pose in front of its
sign), the generator over placed POIs, the landmark check and the goal part of the form.

Each family module (``landmark_text``, ``landmark_image``) adds what the agent is told.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from city360.tasks.schema import GoalTruth, TaskBase, Truth

if TYPE_CHECKING:
    from city360.tasks.check import CheckContext, CheckIssue
    from city360.tasks.families._registry import FamilySpec
    from city360.tasks.generate.common import GenerationContext, GenerationReport
    from city360.tasks.generate.sources import PlacedPoi
    from city360.viewer.authoring import DraftForm

__all__ = [
    "LANDMARK_TOLERANCE_M",
    "LandmarkTruth",
    "check",
    "landmark_tasks",
    "landmark_truth",
    "slug",
]

LANDMARK_TOLERANCE_M = 2.0
"""A landmark goal must lie this close to the pose in front of the named POI."""


class LandmarkTruth(Truth):
    goal: GoalTruth
    landmark_id: str
    landmark_name: str

    def expected(self) -> str:
        return f"{self.goal.lat:.7f},{self.goal.lon:.7f}"


ToldFor = Callable[["GenerationContext", str, "PlacedPoi"], dict[str, Any]]
"""``(ctx, task_id, place) -> told``: what the family tells the agent about the place."""


def landmark_tasks(
    ctx: GenerationContext,
    placed: Sequence[PlacedPoi],
    n: int,
    report: GenerationReport,
    *,
    spec: FamilySpec,
    told_for: ToldFor,
) -> list[TaskBase]:
    """Tasks to walk to the pose in front of a placed POI's sign, from random starts."""
    from city360.tasks.generate.candidates import navigation_candidates, task_ids
    from city360.tasks.generate.common import balanced_pick, route_features

    threshold = spec.threshold_m or 10.0
    goals = [((p.poi.view.x_m, p.poi.view.y_m), p) for p in placed]
    if not goals:
        report.notes.append(f"{spec.name}: no POI with a unique name stands on a filmed street")
        return []
    candidates = navigation_candidates(ctx, goals, threshold, n, spec.name, report)
    chosen = balanced_pick(candidates, n, key=lambda c: c.payload.poi.id)
    tasks: list[TaskBase] = []
    for task_id, (level, cand) in zip(task_ids(spec.short, n), chosen, strict=False):
        place: PlacedPoi = cand.payload
        poi = place.poi
        tasks.append(
            spec.model.model_validate(
                {
                    "id": task_id,
                    "difficulty": level,
                    "start": ctx.start_pose(*cand.start),
                    "told": told_for(ctx, task_id, place),
                    "truth": {
                        "goal": ctx.goal(
                            poi.view.x_m,
                            poi.view.y_m,
                            threshold,
                            segment=place.segment,
                            offset_m=place.offset_m,
                        ),
                        "landmark_id": poi.id,
                        "landmark_name": poi.name,
                    },
                    "step_limit": ctx.step_limit,
                    "meta": {**route_features(ctx.graph, cand.result).as_meta()},
                }
            )
        )
    return tasks


def check(task: TaskBase, checker: CheckContext) -> list[CheckIssue]:
    """The place the task tells of exists in the city (by name, where its places are known),
    and, where the city has ground truth, the goal stands in front of the named POI."""
    from city360.tasks.check import CheckIssue, normalize_name

    truth = task.truth
    if checker.place_names:
        told_name = getattr(task.told, "landmark", None)
        named = [("told.landmark", told_name)] if told_name else []
        if isinstance(truth, LandmarkTruth):
            named.append(("truth.landmark_name", truth.landmark_name))
        for where, name in named:
            if normalize_name(name) not in checker.place_names:
                return [
                    CheckIssue(
                        task.id,
                        where,
                        f"{name!r} is not a place of this city (no POI of its ground truth or "
                        "OSM extract has that name); name a place the city has",
                    )
                ]
    if checker.truth is None or not isinstance(truth, LandmarkTruth):
        return []
    poi_views = checker.cached(
        "poi_views", lambda: {p.id: (p.view.x_m, p.view.y_m) for p in checker.truth_pois()}
    )
    if not poi_views:
        return []
    view = poi_views.get(truth.landmark_id)
    if view is None:
        return [
            CheckIssue(task.id, "truth.landmark_id", f"no POI {truth.landmark_id!r} in the city")
        ]
    gap = math.hypot(view[0] - truth.goal.x_m, view[1] - truth.goal.y_m)
    if gap > LANDMARK_TOLERANCE_M:
        return [
            CheckIssue(
                task.id,
                "truth.goal",
                f"goal is {gap:.1f} m from the pose in front of {truth.landmark_name!r}",
            )
        ]
    return []


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "place"


def landmark_truth(form: DraftForm) -> tuple[str, dict[str, Any]]:
    """The landmark's name from the form and the truth built from it and the picked goal."""
    name = form.text("landmark")
    if not name:
        form.problem("landmark", "name the landmark (what its sign says)")
        name = "?"
    truth = {
        "goal": form.goal().model_dump(),
        "landmark_id": f"viewer:{slug(name)}",
        "landmark_name": name,
    }
    return name, truth
