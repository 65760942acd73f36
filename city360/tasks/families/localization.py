"""Localization: dropped somewhere unknown, answer the grid cell ``x:i y:j`` of a gridded map.

Scored by exact_match. Made from ground truth and from OSM alike (a start's cell is exact on any
graph); ``signs`` (where named places can be read) only set the difficulty.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, field_validator

from city360.tasks.difficulty import LocalizationFeatures, localization_difficulty
from city360.tasks.families._registry import FamilySpec
from city360.tasks.schema import (
    Family,
    Metric,
    MetricName,
    PromptRules,
    TaskBase,
    Told,
    Truth,
)

if TYPE_CHECKING:
    from city360.tasks.check import CheckContext, CheckIssue
    from city360.tasks.generate.common import GenerationContext, GenerationReport
    from city360.tasks.generate.sources import GenerationSource
    from city360.viewer.authoring import DraftForm

__all__ = ["SPEC", "LocalizationTask", "LocalizationTold", "LocalizationTruth", "generate"]


class LocalizationTold(Told):
    grid_size: int = Field(ge=2, le=26)
    grid_map: str = Field(description="suite-relative path of the gridded map image")


class LocalizationTruth(Truth):
    cell: tuple[int, int] = Field(description="(i, j): column from 1 at west, row from 1 at north")
    x_m: float
    y_m: float

    @field_validator("cell")
    @classmethod
    def _cell_positive(cls, cell: tuple[int, int]) -> tuple[int, int]:
        if min(cell) < 1:
            msg = f"grid cells count from 1, got {cell}"
            raise ValueError(msg)
        return cell

    def expected(self) -> str:
        return f"x:{self.cell[0]} y:{self.cell[1]}"


class LocalizationTask(TaskBase):
    EXPECTED_METRIC: ClassVar[str | None] = MetricName.EXACT_MATCH
    PROMPT_TEMPLATE: ClassVar[str] = (
        "You have been dropped somewhere in this city and do not know where. The attached map "
        "shows the area you are in, divided into a {grid_size} by {grid_size} grid. Columns are "
        "numbered x:{first} to x:{last} from west (left) to east (right) and rows y:{first} to "
        "y:{last} from north (top) to south (bottom). Look around and walk if it helps: "
        "street layout, shop signs and other landmarks can tell you where you are. When you "
        "know which grid cell you are standing in, answer in the form x:i y:j."
    )
    ANSWER_FORMAT: ClassVar[str] = "ANSWER with the grid cell as `x:i y:j`, e.g. `x:2 y:4`"
    family: Literal[Family.LOCALIZATION] = Family.LOCALIZATION
    told: LocalizationTold
    truth: LocalizationTruth
    metric: Metric = Metric(name=MetricName.EXACT_MATCH)

    def prompt_variables_for(self, rules: PromptRules) -> dict[str, Any]:
        """The grid is numbered from ``rules.grid_origin`` (1 here, 0 in the reference)."""
        first = rules.grid_origin
        return {**self.prompt_variables(), "first": first, "last": first + self.told.grid_size - 1}

    def answer_format_for(self, rules: PromptRules) -> str:
        example = f"x:{1 + rules.grid_origin} y:{3 + rules.grid_origin}"
        return f"ANSWER with the grid cell as `x:i y:j`, e.g. `{example}`"


# --- generator --------------------------------------------------------------------------------


def generate(
    ctx: GenerationContext, source: GenerationSource, n: int, report: GenerationReport
) -> list[TaskBase]:
    """Random starts, balanced over difficulty and grid cells."""
    return localization_tasks(ctx, source.signs, n, report, source=source.kind)


def localization_tasks(
    ctx: GenerationContext,
    signs: Sequence[tuple[float, float]],
    n: int,
    report: GenerationReport,
    *,
    source: str,
) -> list[TaskBase]:
    """Localization tasks; ``signs`` are where named places can be read (metres)."""
    from city360.tasks.generate.candidates import CANDIDATE_FACTOR, random_yaw, task_ids
    from city360.tasks.generate.common import balanced_pick

    grid_map = ctx.add_asset("grid_map", ctx.images.grid_map())
    candidates = []
    for _ in range(n * CANDIDATE_FACTOR):
        seg, offset = ctx.random_start()
        x, y = ctx.graph.position(seg, offset)
        nearest = min((math.hypot(x - px, y - py) for px, py in signs), default=math.inf)
        cell = ctx.grid.cell_of(x, y)
        margin = _border_margin(ctx, x, y)
        features = LocalizationFeatures(nearest, margin)
        candidates.append((localization_difficulty(features), (seg, offset, cell, features)))
    tasks: list[TaskBase] = []
    chosen = balanced_pick(candidates, n, key=lambda c: f"{c[0]}@{round(c[1] / 10)}")
    _say_why_all_hard(ctx, [c[1][3] for c in chosen], report)
    for task_id, (level, (seg, offset, cell, features)) in zip(
        task_ids(SPEC.short, n), chosen, strict=False
    ):
        x, y = ctx.graph.position(seg, offset)
        tasks.append(
            LocalizationTask.model_validate(
                {
                    "id": task_id,
                    "difficulty": level,
                    "start": ctx.start_pose(seg, offset, yaw_deg=random_yaw(ctx)),
                    "told": {"grid_size": ctx.grid.n, "grid_map": grid_map},
                    "truth": {"cell": cell, "x_m": round(x, 3), "y_m": round(y, 3)},
                    "step_limit": ctx.step_limit,
                    "meta": {**features.as_meta(), "source": source},
                }
            )
        )
    return tasks


def _border_margin(ctx: GenerationContext, x: float, y: float) -> float:
    """Metres from ``(x, y)`` to the nearest line of the grid (its cell's edges, the outer
    edge included). Probing at 5 and 15 m read every start of a grid with cells under 10 m
    as 0 m, even at a cell's centre."""
    return float(ctx.grid.distance_to_grid_line_m(x, y))


def _say_why_all_hard(
    ctx: GenerationContext, features: Sequence[LocalizationFeatures], report: GenerationReport
) -> None:
    """A note when every Localization task came out Hard, with the counts of each cause: a
    city without named places, or grid cells so small that every start is near a line."""
    from city360.tasks.difficulty import HARD_LANDMARK_M, HARD_MARGIN_M
    from city360.tasks.schema import Difficulty

    if not features or any(localization_difficulty(f) != Difficulty.HARD for f in features):
        return
    count = len(features)
    far = sum(f.nearest_landmark_m > HARD_LANDMARK_M for f in features)
    near_line = sum(f.border_margin_m < HARD_MARGIN_M for f in features)
    reasons = []
    if far:
        reasons.append(f"{far} of {count} starts have no named place within {HARD_LANDMARK_M:g} m")
    if near_line:
        width = getattr(ctx.grid, "cell_width_m", math.nan)
        height = getattr(ctx.grid, "cell_height_m", math.nan)
        reasons.append(
            f"{near_line} of {count} lie within {HARD_MARGIN_M:g} m of a grid line (cells of "
            f"{width:.0f} x {height:.0f} m; a smaller --grid N makes them larger)"
        )
    report.notes.append(f"Localization: every task is Hard: {'; '.join(reasons)}")


# --- check ------------------------------------------------------------------------------------


def check(task: TaskBase, checker: CheckContext) -> list[CheckIssue]:
    """The answer is the grid cell of the start position."""
    from city360.tasks.check import CheckIssue

    if checker.grid is None:
        checker.skip("localization cells: no map grid for this city")
        return []
    truth = task.truth
    if not isinstance(truth, LocalizationTruth):
        return []
    x, y = checker.graph.position(task.start.segment, task.start.offset_m)
    cell = checker.grid.cell_of(x, y)
    if tuple(cell) != tuple(truth.cell):
        return [
            CheckIssue(
                task.id,
                "truth.cell",
                f"answer x:{truth.cell[0]} y:{truth.cell[1]} is not the start's grid cell "
                f"x:{cell[0]} y:{cell[1]}",
            )
        ]
    return []


# --- authoring --------------------------------------------------------------------------------


def author(form: DraftForm) -> tuple[dict[str, Any], dict[str, Any]]:
    """The cell defaults to the start's; a typed answer must read ``x:i y:j``."""
    from city360.eval.metrics import parse_grid_cell

    grid = form.grid()
    x, y = form.start_xy()
    cell = grid.cell_of(x, y, clip=True)
    answer = form.text("answer") or f"x:{cell[0]} y:{cell[1]}"
    parsed = parse_grid_cell(answer)
    if parsed is None:
        form.problem("answer", f"answer {answer!r} is not of the form x:i y:j")
        parsed = cell
    told = {"grid_size": grid.n, "grid_map": form.grid_map_asset()}
    truth = {"cell": list(parsed), "x_m": round(x, 3), "y_m": round(y, 3)}
    return told, truth


def draft_fields(task: TaskBase) -> dict[str, Any]:
    return {"answer": task.expected_answer()}


def protocol_images(task: TaskBase, rules: PromptRules, city_map: Any) -> dict[str, Any]:
    """Under a protocol numbering the grid from 0 the agent gets a grid map drawn that way."""
    if rules.grid_origin == 1 or not isinstance(task, LocalizationTask):
        return {}
    return {"grid_map": city_map.grid_map(n=task.told.grid_size, origin=rules.grid_origin)}


SPEC = FamilySpec(
    results_name="Localization",
    model=LocalizationTask,
    short="loc",
    location_map=False,
    protocol_images=protocol_images,
    from_truth=generate,
    from_osm=generate,
    check=check,
    author=author,
    draft_fields=draft_fields,
)
