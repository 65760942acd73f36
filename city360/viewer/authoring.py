"""Authoring tasks in the viewer: a form's draft becomes a validated, verified task in a suite.

The Author screen sends a :class:`TaskDraft` — poses picked while walking ("use this pose as
start / goal"), a captured view, the instruction and answer fields — and :class:`SuiteEditor`
turns it into the family's task model, draws the pictures the family carries (grid map, route
map) and verifies it before anything is written:

- the task validates against the schema (problems name the field);
- the answer fits the family's format (``x:i y:j`` for localization, a whole number for a count,
  a name for relational questions);
- :func:`city360.tasks.check.check_tasks` passes: the start lies on the graph, the grid cell is
  the start's, the stretch begins at the start, and for navigation families the oracle reaches
  the goal within its threshold and the step limit.

Writes go through :func:`city360.tasks.suite.save_suite`, which replaces the suite folder
atomically; a missing suite is created on the first save.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from city360._atomic import folder_lock
from city360.city import CityDir, file_sha256
from city360.geo import LocalProjection, wrap_deg
from city360.streets import StreetGraph
from city360.tasks.families import get_family
from city360.tasks.schema import (
    DEFAULT_STEP_LIMIT,
    CountStretch,
    Difficulty,
    GoalTruth,
    StartPose,
    TaskBase,
)
from city360.tasks.suite import ASSETS_DIR, Suite, load_suite, save_suite
from city360.tasks.walk import oracle_walk
from city360.viewer.security import safe_path

__all__ = [
    "DraftError",
    "DraftForm",
    "PoseRef",
    "Problem",
    "SuiteEditor",
    "TaskDraft",
    "VerifiedTask",
    "draft_of",
]

GRID_MAP_ASSET = f"{ASSETS_DIR}/grid_map.png"
"""The suite's shared localization map (the name the generators use too)."""
_NO_FILE = (-1, -1, -1)
"""Cache key of a suite that is not on disk yet."""
_TEXT = 500


class PoseRef(BaseModel):
    """A pose on the graph as the walk readout shows it: segment, metres along it, view yaw."""

    model_config = ConfigDict(extra="forbid")
    segment: str = Field(min_length=1, max_length=200)
    offset_m: float = Field(ge=0, le=1e6)
    yaw_deg: float = Field(0.0, ge=-180, le=180)


class TaskDraft(BaseModel):
    """What the Author form sends. Family-specific fields are optional here and required by
    :meth:`SuiteEditor.build` for the families that use them."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1, max_length=200)
    """Checked by the save and verify routes (``security.task_id_problem``: 400 naming the
    rule), not by a pattern here, which would answer an unhelpful 422."""
    family: str = Field(min_length=1, max_length=80)
    difficulty: Difficulty = Difficulty.MEDIUM
    start: PoseRef
    goal: PoseRef | None = None
    threshold_m: float | None = Field(None, gt=0, le=200)
    step_limit: int = Field(DEFAULT_STEP_LIMIT, ge=1, le=1000)
    landmark: str | None = Field(None, max_length=200)
    reference_capture: str | None = Field(None, max_length=64, pattern=r"^[A-Za-z0-9_\-]+$")
    reference_image: str | None = Field(None, max_length=300)
    instructions: list[Annotated[str, Field(max_length=_TEXT)]] = Field(
        default_factory=list, max_length=40
    )
    object_kind: str | None = Field(None, max_length=100)
    stretch: str | None = Field(None, max_length=_TEXT)
    question: str | None = Field(None, max_length=_TEXT)
    answer: str | None = Field(None, max_length=_TEXT)
    relation: Literal["left_of", "right_of", "across_from", "free"] | None = None
    """``free``: a free-text relation ("three doors to the left of ...", "which floor ..."),
    answered in free text and scored by the LLM judge."""
    range_start: PoseRef | None = None
    """ObjectCount: where the counted range begins, marked on the map (default: the start)."""
    count_side: Literal["both", "left", "right"] | None = None
    anchor: str | None = Field(None, max_length=200)
    extra: dict[str, str] = Field(default_factory=dict, max_length=20)
    """Form fields of a plugin family (read with :meth:`DraftForm.text`)."""

    @field_validator("family")
    @classmethod
    def _registered(cls, family: str) -> str:
        return get_family(family).name  # TaskError is a ValueError: pydantic reports it


@dataclass(frozen=True, slots=True)
class Problem:
    """Why a draft cannot be saved: the form field at fault and what is wrong."""

    field: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"field": self.field, "message": self.message}


@dataclass(frozen=True, slots=True)
class VerifiedTask:
    """A draft after :meth:`SuiteEditor.verify`: the task (None if it could not be built), the
    assets it adds, the problems found and the oracle's step count (navigation only)."""

    task: TaskBase | None
    assets: dict[str, bytes]
    problems: list[Problem]
    oracle_steps: int | None = None

    @property
    def ok(self) -> bool:
        return self.task is not None and not self.problems


def _clean(text: str | None) -> str:
    return (text or "").strip()


class SuiteEditor:
    """Reads, verifies and writes the tasks of one suite folder for one city.

    Thread-safe: writes are serialised. ``move_m`` are the controller's W step sizes the oracle
    uses (the suite's recorded ones when it has them).
    """

    def __init__(
        self,
        suite_dir: Path,
        city_dir: Path,
        *,
        graph: StreetGraph,
        projection: LocalProjection,
        city_name: str,
        move_m: tuple[float, float, float],
    ) -> None:
        self.suite_dir = suite_dir
        self.city_dir = city_dir
        self.graph = graph
        self.projection = projection
        self.city_name = city_name
        self.move_m = move_m
        self._lock = threading.RLock()
        self._images: Any = None
        self._cache: tuple[tuple[int, int, int], Suite] | None = None
        self._grid: tuple[Suite, Any] | None = None

    # suite ------------------------------------------------------------------------------
    def exists(self) -> bool:
        return (self.suite_dir / "suite.json").is_file()

    def load(self) -> Suite:
        """The suite on disk, or a new empty one for this city when there is none yet.

        Cached until ``suite.json`` changes (every walk step asks for the grid, and a suite with
        many reference images is megabytes to read).
        """
        with self._lock:
            if self.exists():
                stat = (self.suite_dir / "suite.json").stat()
                key = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
                if self._cache is None or self._cache[0] != key:
                    self._cache = (key, load_suite(self.suite_dir))
                return self._cache[1]
            if self._cache is not None and self._cache[0] == _NO_FILE:
                return self._cache[1]
            from city360.tasks.generate.images import grid_for_graph

            grid = grid_for_graph(self.graph, 5)
            empty = Suite(
                name=self.suite_dir.name,
                city=self.city_name,
                tasks=[],
                grid_size=grid.n,
                grid_area_m=(grid.x_min_m, grid.y_min_m, grid.x_max_m, grid.y_max_m),
                created={
                    "generator": "city360.viewer (authored)",
                    "move_m": list(self.move_m),
                    "graph_sha256": file_sha256(CityDir(self.city_dir).graph_path),
                },
            )
            self._cache = (_NO_FILE, empty)
            return empty

    def grid(self, suite: Suite | None = None) -> Any:
        """The suite's localization grid (``MapGrid``)."""
        from city360.tasks.generate.run import suite_grid

        suite = suite or self.load()
        if self._grid is None or self._grid[0] is not suite:
            self._grid = (suite, suite_grid(suite, self.graph))
        return self._grid[1]

    def asset(self, relative: str) -> Path:
        """An asset file of the suite, confined to the suite folder (see ``safe_path``)."""
        return safe_path(self.suite_dir, relative)

    def _city_images(self, suite: Suite) -> Any:
        from city360.tasks.generate.images import CityImages

        if self._images is None or self._images.grid != self.grid(suite):
            self._images = CityImages(self.city_dir, self.graph, self.grid(suite))
        return self._images

    # poses ------------------------------------------------------------------------------
    def start_pose(self, pose: PoseRef) -> StartPose:
        seg = self.graph.segment(pose.segment)
        offset = round(min(pose.offset_m, seg.length_m), 2)
        x, y = seg.position(offset)
        lat, lon = self.projection.to_latlon(x, y)
        return StartPose(
            segment=seg.id,
            offset_m=offset,
            lat=float(lat),
            lon=float(lon),
            heading_deg=round(wrap_deg(seg.heading(offset)), 3) % 360.0,
            yaw_deg=round(pose.yaw_deg, 2),
        )

    def goal_truth(self, pose: PoseRef, threshold_m: float) -> GoalTruth:
        seg = self.graph.segment(pose.segment)
        offset = round(min(pose.offset_m, seg.length_m), 2)
        x, y = seg.position(offset)
        lat, lon = self.projection.to_latlon(x, y)
        return GoalTruth(
            x_m=round(x, 3),
            y_m=round(y, 3),
            lat=float(lat),
            lon=float(lon),
            threshold_m=threshold_m,
            segment=seg.id,
            offset_m=offset,
        )

    # drafts -----------------------------------------------------------------------------
    def verify(
        self, draft: TaskDraft, *, captures: dict[str, bytes], replacing: str | None = None
    ) -> VerifiedTask:
        """Build the draft's task and check it; nothing is written."""
        from city360.tasks.check import check_tasks

        with self._lock:
            suite = self.load()
            problems: list[Problem] = []
            if draft.id != replacing and any(t.id == draft.id for t in suite.tasks):
                problems.append(
                    Problem("id", f"the suite already has a task {draft.id!r}; pick another id")
                )
            try:
                raw, assets = self._build(draft, suite, captures, problems)
            except _DraftError as exc:
                return VerifiedTask(None, {}, [*problems, exc.problem])
            if raw is None:
                return VerifiedTask(None, {}, problems)
            model = get_family(draft.family).model
            try:
                task = model.model_validate(raw)
            except ValidationError as exc:
                problems.extend(
                    Problem(".".join(str(p) for p in e["loc"]) or "task", e["msg"])
                    for e in exc.errors()
                )
                return VerifiedTask(None, assets, problems)
            report = check_tasks(
                [task],
                self.graph,
                projection=self.projection,
                grid=self.grid(suite),
                move_m=self.move_m,
            )
            problems.extend(Problem(_form_field(i.field), i.message) for i in report.issues)
            return VerifiedTask(task, assets, problems, report.oracle_steps.get(task.id))

    def _build(
        self,
        draft: TaskDraft,
        suite: Suite,
        captures: dict[str, bytes],
        problems: list[Problem],
    ) -> tuple[dict[str, Any] | None, dict[str, bytes]]:
        """The task as a dict for the family's model, and the assets it brings."""
        spec = get_family(draft.family)
        try:
            start = self.start_pose(draft.start)
        except Exception as exc:
            raise _DraftError(Problem("start", f"start pose is off the graph: {exc}")) from None
        raw: dict[str, Any] = {
            "id": draft.id,
            "family": spec.name,
            "difficulty": draft.difficulty.value,
            "start": start.model_dump(),
            "step_limit": draft.step_limit,
            "meta": {"author": "city360 view"},
        }
        assets: dict[str, bytes] = {}
        goal: GoalTruth | None = None
        if spec.navigation:
            if draft.goal is None:
                raise _DraftError(
                    Problem("goal", "pick a goal: walk there and press 'use this pose as goal'")
                )
            threshold = draft.threshold_m or float(spec.threshold_m or 10.0)
            try:
                goal = self.goal_truth(draft.goal, threshold)
            except Exception as exc:
                raise _DraftError(Problem("goal", f"goal pose is off the graph: {exc}")) from None
            raw["metric"] = {"name": "coordinate_match", "threshold_m": threshold}
        if spec.author is None:
            raise _DraftError(Problem("family", f"{spec.name} tasks cannot be authored here"))
        form = DraftForm(self, draft, suite, captures, assets, problems, start=start, goal_=goal)
        raw["told"], raw["truth"] = spec.author(form)
        if problems:
            return None, assets
        return raw, assets

    def _reference(
        self,
        draft: TaskDraft,
        suite: Suite,
        captures: dict[str, bytes],
        assets: dict[str, bytes],
    ) -> str:
        if draft.reference_capture:
            png = captures.get(draft.reference_capture)
            if png is None:
                msg = "that capture has expired; press 'capture this view' again"
                raise _DraftError(Problem("reference_capture", msg))
            path = f"{ASSETS_DIR}/{draft.id}.png"
            assets[path] = png
            return path
        if draft.reference_image:
            self.asset(draft.reference_image)  # refuses paths outside the suite
            if not draft.reference_image.startswith(ASSETS_DIR + "/"):
                msg = f"reference image {draft.reference_image!r} must be under {ASSETS_DIR}/"
                raise _DraftError(Problem("reference_image", msg))
            if draft.reference_image not in suite.assets:
                msg = f"reference image {draft.reference_image!r} is not in the suite"
                raise _DraftError(Problem("reference_image", msg))
            return draft.reference_image
        msg = "capture the reference view: stand where the picture is taken, press 'capture'"
        raise _DraftError(Problem("reference_capture", msg))

    def _route(self, draft: TaskDraft, start: StartPose, goal: GoalTruth) -> list[str]:
        result = oracle_walk(
            self.graph,
            (start.segment, start.offset_m),
            (goal.x_m, goal.y_m),
            goal.threshold_m,
            step_limit=draft.step_limit,
            move_m=self.move_m,
        )
        return list(result.segments)

    def _stretch(
        self, draft: TaskDraft, start: StartPose, *, lateral_range_m: float
    ) -> CountStretch:
        from city360.tasks.stretch import walk_stretch

        marked = draft.range_start is not None
        if draft.range_start is not None:
            begin = self.graph.segment(draft.range_start.segment)
            start = start.model_copy(
                update={
                    "segment": begin.id,
                    "offset_m": round(min(draft.range_start.offset_m, begin.length_m), 2),
                }
            )
        if draft.goal is None:
            stretch = walk_stretch(
                self.graph,
                start.segment,
                start.offset_m,
                through=0,
                lateral_range_m=lateral_range_m,
            )
            if stretch is None:
                msg = "the street ahead has no clear end; pick the stretch's end ('use as end')"
                raise _DraftError(Problem("goal", msg))
            return stretch.model_copy(update={"marked": marked})
        end = self.graph.segment(draft.goal.segment)
        end_offset = round(min(draft.goal.offset_m, end.length_m), 2)
        if end.id == start.segment:
            if end_offset <= start.offset_m:
                msg = "the stretch's end (goal) must lie ahead of its beginning on the street"
                raise _DraftError(Problem("goal", msg))
            segments = [start.segment]
        else:
            try:
                segments = self.graph.shortest_route(start.segment, end.id)
            except Exception as exc:
                raise _DraftError(
                    Problem("goal", f"cannot walk from start to end: {exc}")
                ) from None
        return CountStretch(
            segments=segments,
            start_offset_m=start.offset_m,
            end_offset_m=end_offset,
            lateral_range_m=lateral_range_m,
            marked=marked,
        )

    # writes -----------------------------------------------------------------------------
    def save(self, verified: VerifiedTask, *, replacing: str | None = None) -> Suite:
        """Add (or replace ``replacing`` with) a verified task and write the suite atomically."""
        if not verified.ok or verified.task is None:
            msg = "only a verified task without problems can be saved"
            raise ValueError(msg)
        task = verified.task
        with self._lock, folder_lock(self.suite_dir):  # another viewer may save this suite
            suite = self.load()
            tasks = [t for t in suite.tasks if t.id not in {task.id, replacing}]
            position = next(
                (k for k, t in enumerate(suite.tasks) if t.id in {replacing, task.id}), len(tasks)
            )
            tasks.insert(min(position, len(tasks)), task)
            assets = {**suite.assets, **verified.assets}
            updated = Suite(
                name=suite.name,
                city=suite.city,
                tasks=tasks,
                assets=_referenced(tasks, assets, keep=suite.assets.keys() - _used(suite.tasks)),
                grid_size=suite.grid_size,
                created=suite.created,
                grid_area_m=suite.grid_area_m,
            )
            save_suite(updated, self.suite_dir, overwrite=True)
            return updated

    def delete(self, task_id: str) -> Suite:
        """Remove a task (and the assets only it used) and write the suite atomically."""
        with self._lock, folder_lock(self.suite_dir):
            suite = self.load()
            suite.task(task_id)  # raises TaskError with a close match when unknown
            tasks = [t for t in suite.tasks if t.id != task_id]
            updated = Suite(
                name=suite.name,
                city=suite.city,
                tasks=tasks,
                assets=_referenced(
                    tasks, suite.assets, keep=suite.assets.keys() - _used(suite.tasks)
                ),
                grid_size=suite.grid_size,
                created=suite.created,
                grid_area_m=suite.grid_area_m,
            )
            save_suite(updated, self.suite_dir, overwrite=True)
            return updated


class DraftError(Exception):
    """A draft that cannot be built at all (raised by a form helper, caught by ``verify``)."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


_DraftError = DraftError


class DraftForm:
    """What a family's authoring form (``FamilySpec.author``) reads and draws: the draft, the
    resolved start and goal, and helpers that add the pictures a family carries. Problems go
    to :meth:`problem`; a helper that cannot go on raises :class:`DraftError`."""

    def __init__(
        self,
        editor: SuiteEditor,
        draft: TaskDraft,
        suite: Suite,
        captures: dict[str, bytes],
        assets: dict[str, bytes],
        problems: list[Problem],
        *,
        start: StartPose,
        goal_: GoalTruth | None,
    ) -> None:
        self.editor = editor
        self.draft = draft
        self.suite = suite
        self.captures = captures
        self.assets = assets
        self.problems = problems
        self.start = start
        self._goal = goal_

    @property
    def graph(self) -> StreetGraph:
        return self.editor.graph

    def problem(self, field: str, message: str) -> None:
        self.problems.append(Problem(field, message))

    def text(self, name: str) -> str:
        """A text field of the draft, stripped ('' when empty); plugin fields from ``extra``."""
        value = getattr(self.draft, name, None) if name in TaskDraft.model_fields else None
        if value is None:
            value = self.draft.extra.get(name)
        return _clean(value if isinstance(value, str) else None)

    def goal(self) -> GoalTruth:
        """The picked goal (navigation families always have one here)."""
        if self._goal is None:
            raise DraftError(
                Problem("goal", "pick a goal: walk there and press 'use this pose as goal'")
            )
        return self._goal

    def start_xy(self) -> tuple[float, float]:
        return self.graph.position(self.start.segment, self.start.offset_m)

    def grid(self) -> Any:
        return self.editor.grid(self.suite)

    def grid_map_asset(self) -> str:
        """The suite's shared grid map, drawn on first use."""
        if GRID_MAP_ASSET not in self.suite.assets:
            from city360.tasks.generate.common import png_bytes

            self.assets[GRID_MAP_ASSET] = png_bytes(self.editor._city_images(self.suite).grid_map())
        return GRID_MAP_ASSET

    def route_map_asset(self, goal: GoalTruth) -> str:
        """A map with a BLUE start and a RED goal, saved as the task's asset."""
        from city360.tasks.generate.common import png_bytes

        path = f"{ASSETS_DIR}/{self.draft.id}.png"
        image = self.editor._city_images(self.suite).route_map(
            self.start_xy(), (goal.x_m, goal.y_m)
        )
        self.assets[path] = png_bytes(image)
        return path

    def route(self, goal: GoalTruth) -> list[str]:
        """Segments of the oracle's route from the start to ``goal``."""
        return self.editor._route(self.draft, self.start, goal)

    def stretch(self, *, lateral_range_m: float) -> CountStretch:
        """The stretch from the start to the picked goal (or to the street's end ahead)."""
        return self.editor._stretch(self.draft, self.start, lateral_range_m=lateral_range_m)

    def reference_image(self) -> str:
        """The captured (or chosen) reference picture's suite path."""
        return self.editor._reference(self.draft, self.suite, self.captures, self.assets)


def _used(tasks: Sequence[TaskBase]) -> set[str]:
    return {path for t in tasks for path in t.reference_image_paths()}


def _referenced(
    tasks: Sequence[TaskBase], assets: dict[str, bytes], *, keep: Any
) -> dict[str, bytes]:
    """Assets some task uses, plus ``keep`` (files no task used before: left as they were)."""
    wanted = _used(tasks) | set(keep)
    return {path: data for path, data in assets.items() if path in wanted}


def _form_field(check_field: str) -> str:
    """A check's field (``truth.goal``, ``start.segment``) as the form names it."""
    mapping = {
        "truth.goal": "goal",
        "truth.cell": "answer",
        "truth.count": "answer",
        "truth.answer": "answer",
        "truth.stretch": "goal",
        "truth.stretch.segments": "goal",
        "start.segment": "start",
        "start.offset_m": "start",
        "start.lat": "start",
    }
    return mapping.get(check_field, check_field)


def draft_of(task: TaskBase, graph: StreetGraph) -> dict[str, Any]:
    """The form fields of a saved task (to edit it)."""
    truth = task.truth.model_dump()
    draft: dict[str, Any] = {
        "id": task.id,
        "family": str(task.family),
        "difficulty": task.difficulty.value,
        "start": {
            "segment": task.start.segment,
            "offset_m": task.start.offset_m,
            "yaw_deg": task.start.yaw_deg,
        },
        "step_limit": task.step_limit,
    }
    goal = truth.get("goal")
    if goal is not None:
        draft["threshold_m"] = goal["threshold_m"]
        if goal.get("segment") is not None and goal.get("offset_m") is not None:
            draft["goal"] = {"segment": goal["segment"], "offset_m": goal["offset_m"]}
        else:
            seg, offset, _ = graph.locate(goal["x_m"], goal["y_m"])
            draft["goal"] = {"segment": seg, "offset_m": round(offset, 2)}
    spec = get_family(task.family)
    if spec.draft_fields is not None:
        draft.update(spec.draft_fields(task))
    return draft
