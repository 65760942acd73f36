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

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from city360.city import CityDir, file_sha256
from city360.geo import LocalProjection, wrap_deg
from city360.streets import StreetGraph
from city360.tasks.families import get_family
from city360.tasks.schema import (
    DEFAULT_STEP_LIMIT,
    Difficulty,
    Family,
    GoalTruth,
    StartPose,
    TaskBase,
)
from city360.tasks.suite import ASSETS_DIR, Suite, load_suite, save_suite
from city360.tasks.walk import oracle_walk
from city360.viewer.security import safe_path

__all__ = ["PoseRef", "Problem", "SuiteEditor", "TaskDraft", "VerifiedTask", "draft_of"]

GRID_MAP_ASSET = f"{ASSETS_DIR}/grid_map.png"
"""The suite's shared localization map (the name the generators use too)."""
COUNT_LATERAL_RANGE_M = 12.0
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
    id: str = Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9_.\-]+$")
    family: Family
    difficulty: Difficulty = Difficulty.MEDIUM
    start: PoseRef
    goal: PoseRef | None = None
    threshold_m: float | None = Field(None, gt=0, le=200)
    step_limit: int = Field(DEFAULT_STEP_LIMIT, ge=1, le=1000)
    landmark: str | None = Field(None, max_length=200)
    reference_capture: str | None = Field(None, max_length=64, pattern=r"^[A-Za-z0-9_\-]+$")
    reference_image: str | None = Field(None, max_length=300)
    instructions: list[str] = Field(default_factory=list, max_length=40)
    object_kind: str | None = Field(None, max_length=100)
    stretch: str | None = Field(None, max_length=_TEXT)
    question: str | None = Field(None, max_length=_TEXT)
    answer: str | None = Field(None, max_length=_TEXT)
    relation: Literal["left_of", "right_of", "across_from"] | None = None
    anchor: str | None = Field(None, max_length=200)


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


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "place"


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
            "family": draft.family.value,
            "difficulty": draft.difficulty.value,
            "start": start.model_dump(),
            "step_limit": draft.step_limit,
            "meta": {"author": "city360 view"},
        }
        assets: dict[str, bytes] = {}
        goal: GoalTruth | None = None
        family = draft.family
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
        if family is Family.LOCALIZATION:
            grid = self.grid(suite)
            x, y = self.graph.position(start.segment, start.offset_m)
            cell = grid.cell_of(x, y, clip=True)
            answer = _clean(draft.answer) or f"x:{cell[0]} y:{cell[1]}"
            from city360.eval.metrics import parse_grid_cell

            parsed = parse_grid_cell(answer)
            if parsed is None:
                problems.append(Problem("answer", f"answer {answer!r} is not of the form x:i y:j"))
                parsed = cell
            if GRID_MAP_ASSET not in suite.assets:
                from city360.tasks.generate.common import png_bytes

                assets[GRID_MAP_ASSET] = png_bytes(self._city_images(suite).grid_map())
            raw["told"] = {"grid_size": grid.n, "grid_map": GRID_MAP_ASSET}
            raw["truth"] = {"cell": list(parsed), "x_m": round(x, 3), "y_m": round(y, 3)}
        elif family in (Family.LANDMARK_TEXT, Family.LANDMARK_IMAGE):
            name = _clean(draft.landmark)
            if not name:
                problems.append(Problem("landmark", "name the landmark (what its sign says)"))
                name = "?"
            assert goal is not None
            raw["truth"] = {
                "goal": goal.model_dump(),
                "landmark_id": f"viewer:{_slug(name)}",
                "landmark_name": name,
            }
            if family is Family.LANDMARK_TEXT:
                raw["told"] = {"landmark": name}
            else:
                raw["told"] = {"reference_image": self._reference(draft, suite, captures, assets)}
        elif family is Family.MAP_NAVIGATION:
            assert goal is not None
            from city360.tasks.generate.common import png_bytes

            start_xy = self.graph.position(start.segment, start.offset_m)
            path = f"{ASSETS_DIR}/{draft.id}.png"
            image = self._city_images(suite).route_map(start_xy, (goal.x_m, goal.y_m))
            assets[path] = png_bytes(image)
            raw["told"] = {"route_map": path}
            raw["truth"] = {"goal": goal.model_dump(), "route": self._route(draft, start, goal)}
        elif family is Family.VLN:
            assert goal is not None
            steps = [line.strip() for line in draft.instructions if line.strip()]
            if not steps:
                problems.append(Problem("instructions", "write at least one direction"))
                steps = ["?"]
            route = self._route(draft, start, goal)
            raw["told"] = {"instructions": steps}
            raw["truth"] = {"goal": goal.model_dump(), "route": route or [start.segment]}
        elif family is Family.OBJECT_COUNT:
            kind = _clean(draft.object_kind)
            if not kind:
                problems.append(Problem("object_kind", "say what to count, e.g. tree"))
                kind = "?"
            answer = _clean(draft.answer)
            if not re.fullmatch(r"\d{1,6}", answer):
                problems.append(
                    Problem("answer", f"the count must be one whole number, got {answer!r}")
                )
                answer = "0"
            stretch = self._stretch(draft, start)
            from city360.tasks.stretch import describe_stretch

            raw["told"] = {
                "object_kind": kind.replace(" ", "_"),
                "stretch": _clean(draft.stretch) or describe_stretch(self.graph, stretch),
            }
            raw["truth"] = {"count": int(answer), "stretch": stretch.model_dump()}
        elif family is Family.RELATIONAL:
            question, answer, anchor = (
                _clean(draft.question),
                _clean(draft.answer),
                _clean(draft.anchor),
            )
            for name, value, hint in (
                ("question", question, "write the question the agent is asked"),
                ("answer", answer, "give the place's name as its sign shows it"),
                ("anchor", anchor, "name the place the question is about"),
            ):
                if not value:
                    problems.append(Problem(name, hint))
            if draft.relation is None:
                problems.append(Problem("relation", "pick left_of, right_of or across_from"))
            raw["told"] = {"question": question or "?"}
            raw["truth"] = {
                "answer": answer or "?",
                "relation": draft.relation or "left_of",
                "anchor_id": f"viewer:{_slug(anchor)}",
                "anchor_name": anchor or "?",
            }
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

    def _stretch(self, draft: TaskDraft, start: StartPose) -> Any:
        from city360.tasks.schema import CountStretch
        from city360.tasks.stretch import walk_stretch

        if draft.goal is None:
            stretch = walk_stretch(
                self.graph,
                start.segment,
                start.offset_m,
                through=0,
                lateral_range_m=COUNT_LATERAL_RANGE_M,
            )
            if stretch is None:
                msg = "the street ahead has no clear end; pick the stretch's end ('use as end')"
                raise _DraftError(Problem("goal", msg))
            return stretch
        end = self.graph.segment(draft.goal.segment)
        end_offset = round(min(draft.goal.offset_m, end.length_m), 2)
        if end.id == start.segment:
            if end_offset <= start.offset_m:
                msg = "the stretch's end (goal) must lie ahead of the start on the street"
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
            lateral_range_m=COUNT_LATERAL_RANGE_M,
        )

    # writes -----------------------------------------------------------------------------
    def save(self, verified: VerifiedTask, *, replacing: str | None = None) -> Suite:
        """Add (or replace ``replacing`` with) a verified task and write the suite atomically."""
        if not verified.ok or verified.task is None:
            msg = "only a verified task without problems can be saved"
            raise ValueError(msg)
        task = verified.task
        with self._lock:
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
        with self._lock:
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


class _DraftError(Exception):
    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


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
    told = task.told.model_dump()
    truth = task.truth.model_dump()
    draft: dict[str, Any] = {
        "id": task.id,
        "family": task.family.value,
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
    if task.family is Family.LOCALIZATION:
        draft["answer"] = task.expected_answer()
    elif task.family in (Family.LANDMARK_TEXT, Family.LANDMARK_IMAGE):
        draft["landmark"] = truth["landmark_name"]
        if "reference_image" in told:
            draft["reference_image"] = told["reference_image"]
    elif task.family is Family.VLN:
        draft["instructions"] = told["instructions"]
    elif task.family is Family.OBJECT_COUNT:
        stretch = truth["stretch"]
        draft["object_kind"] = told["object_kind"].replace("_", " ")
        draft["stretch"] = told["stretch"]
        draft["answer"] = str(truth["count"])
        draft["goal"] = {"segment": stretch["segments"][-1], "offset_m": stretch["end_offset_m"]}
    elif task.family is Family.RELATIONAL:
        draft.update(
            question=told["question"],
            answer=truth["answer"],
            relation=truth["relation"],
            anchor=truth["anchor_name"],
        )
    return draft
