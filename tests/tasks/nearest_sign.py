"""A small task family defined outside city360/: "which place has its sign nearest to you?".

Used by tests/tasks/test_plugin_family.py; :mod:`tests.tasks.nearest_sign_plugin` registers it
on import, the way a user's plugin module does.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal

from pydantic import Field

from city360.tasks.families import FamilySpec
from city360.tasks.schema import Metric, MetricName, TaskBase, Told, Truth

__all__ = ["NAME", "SPEC", "NearestSignTask", "NearestSignTruth"]

NAME = "NearestSign"


class NearestSignTold(Told):
    within_m: int = Field(gt=0, description="the sign is at most this far from the start")


class NearestSignTruth(Truth):
    answer: str = Field(min_length=1)
    poi_id: str

    def expected(self) -> str:
        return self.answer


class NearestSignTask(TaskBase):
    EXPECTED_METRIC: ClassVar[str | None] = MetricName.FUZZY_MATCH
    PROMPT_TEMPLATE: ClassVar[str] = (
        "Look around where you stand. Which place has its sign nearest to you (within "
        "{within_m} m)?"
    )
    ANSWER_FORMAT: ClassVar[str] = "ANSWER with the name of the place, as its sign shows it"
    family: Literal["NearestSign"] = "NearestSign"
    told: NearestSignTold
    truth: NearestSignTruth
    metric: Metric = Metric(name=MetricName.FUZZY_MATCH)


def _nearest(pois: Any, x: float, y: float) -> tuple[Any, float]:
    return min(((p, math.hypot(p.x_m - x, p.y_m - y)) for p in pois), key=lambda pd: pd[1])


def _generate(ctx: Any, source: Any, n: int, report: Any) -> list[TaskBase]:
    """From the city's ground truth: random starts, the POI nearest to each."""
    pois = [p.poi for p in source.placed]
    tasks: list[TaskBase] = []
    for k in range(n * 4):
        seg, offset = ctx.random_start()
        x, y = ctx.graph.position(seg, offset)
        poi, distance = _nearest(pois, x, y)
        if distance > 60.0:
            report.reject(NAME, "no sign near the start")
            continue
        tasks.append(
            NearestSignTask.model_validate(
                {
                    "id": f"near-{len(tasks) + 1:03d}",
                    "difficulty": "Easy",
                    "start": ctx.start_pose(seg, offset),
                    "told": {"within_m": 60},
                    "truth": {"answer": poi.name, "poi_id": poi.id},
                    "step_limit": ctx.step_limit,
                    "meta": {"distance_m": round(distance, 1), "attempt": k},
                }
            )
        )
        if len(tasks) == n:
            break
    return tasks


def _check(task: TaskBase, checker: Any) -> list[Any]:
    from city360.tasks.check import CheckIssue

    if checker.truth is None:
        checker.skip("nearest signs: no ground truth")
        return []
    names = {p.id: p.name for p in checker.truth_pois()}
    truth = task.truth
    if not isinstance(truth, NearestSignTruth) or names.get(truth.poi_id) != truth.answer:
        return [CheckIssue(task.id, "truth.answer", "the answer is not that place's name")]
    return []


SPEC = FamilySpec(model=NearestSignTask, short="near", from_truth=_generate, check=_check)
