"""Task suites on disk: a folder with ``suite.json`` and ``assets/``.

``suite.json`` holds the suite's name, the city it belongs to, how it was made, and its tasks;
``assets/`` holds the reference images and maps the tasks point at (paths relative to the
suite folder). Loading validates every task and collects every problem into one
:class:`~city360.errors.TaskError` whose lines name the file, the task id and the field at
fault. :meth:`Suite.content_hash` covers the canonical JSON and every asset's bytes, so it is
the same before a save and after a load, and changes when anything a run depends on changes.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from city360._atomic import atomic_dir, atomic_write_bytes, atomic_write_json
from city360.errors import InputFileError, TaskError, did_you_mean
from city360.tasks.families import all_families, parse_task
from city360.tasks.schema import IMAGE_FIELDS, TaskBase

__all__ = ["ASSETS_DIR", "SUITE_FILE", "SUITE_SCHEMA_VERSION", "Suite", "load_suite", "save_suite"]

SUITE_FILE = "suite.json"
ASSETS_DIR = "assets"
SUITE_SCHEMA_VERSION = 1


class _SuiteHeader(BaseModel):
    model_config = ConfigDict(extra="forbid")
    schema_version: int = SUITE_SCHEMA_VERSION
    name: str = Field(min_length=1)
    city: str = Field(description="name of the city (city.json) the tasks belong to")
    grid_size: int = Field(5, ge=2, le=26, description="N of the N x N localization grid")
    grid_area_m: tuple[float, float, float, float] | None = Field(
        None, description="x_min, y_min, x_max, y_max (city metres) the grid covers"
    )
    created: dict[str, Any] = Field(default_factory=dict, description="generator, seed, ...")
    tasks: list[dict[str, Any]]


@dataclass(eq=True)
class Suite:
    """A set of tasks for one city plus the asset bytes they reference.

    ``assets`` maps suite-relative POSIX paths (``assets/lmi-003.png``) to bytes.
    """

    name: str
    city: str
    tasks: list[TaskBase]
    assets: dict[str, bytes] = field(default_factory=dict)
    grid_size: int = 5
    created: dict[str, Any] = field(default_factory=dict)
    grid_area_m: tuple[float, float, float, float] | None = None
    """The rectangle (x_min, y_min, x_max, y_max; city metres) the localization grid covers."""

    def __post_init__(self) -> None:
        problems = _check_tasks(self.tasks, self.assets.keys(), where="suite")
        problems += [
            f"suite: asset {path!r} must live under {ASSETS_DIR}/"
            for path in self.assets
            if _check_asset_path(path) is not None or not path.startswith(ASSETS_DIR + "/")
        ]
        if problems:
            raise TaskError("\n".join(problems))

    def __len__(self) -> int:
        return len(self.tasks)

    def __iter__(self) -> Iterator[TaskBase]:
        return iter(self.tasks)

    def __repr__(self) -> str:
        return f"Suite(name={self.name!r}, city={self.city!r}, tasks={len(self.tasks)})"

    def task(self, task_id: str) -> TaskBase:
        """The task with ``task_id``; unknown ids raise with a close match."""
        for task in self.tasks:
            if task.id == task_id:
                return task
        ids = [t.id for t in self.tasks]
        msg = f"suite {self.name!r} has no task {task_id!r}.{did_you_mean(task_id, ids)}"
        raise TaskError(msg)

    def select(self, selector: str) -> list[TaskBase]:
        """Tasks by comma-separated ids or family names (``"VLN"``, ``"loc-001,loc-002"``)."""
        wanted = [part.strip() for part in selector.split(",") if part.strip()]
        families = {f.name for f in all_families()}
        chosen: list[TaskBase] = []
        for item in wanted:
            if item in families:
                chosen.extend(t for t in self.tasks if t.family == item)
            else:
                chosen.append(self.task(item))
        return chosen

    def to_json(self) -> dict[str, Any]:
        """The content of ``suite.json``."""
        return {
            "schema_version": SUITE_SCHEMA_VERSION,
            "name": self.name,
            "city": self.city,
            "grid_size": self.grid_size,
            "grid_area_m": None if self.grid_area_m is None else list(self.grid_area_m),
            "created": self.created,
            "tasks": [t.model_dump(mode="json") for t in self.tasks],
        }

    def content_hash(self) -> str:
        """SHA-256 over canonical JSON (sorted keys, no spaces) and each asset's path + bytes."""
        digest = hashlib.sha256()
        canonical = json.dumps(
            self.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
        digest.update(canonical.encode("utf-8"))
        for path in sorted(self.assets):
            digest.update(b"\0" + path.encode("utf-8") + b"\0")
            digest.update(hashlib.sha256(self.assets[path]).digest())
        return digest.hexdigest()

    def statistics(self) -> dict[str, dict[str, int]]:
        """Task counts by family and difficulty: ``{"VLN": {"Easy": 8, ...}, ...}``."""
        counts = Counter((str(t.family), t.difficulty.value) for t in self.tasks)
        table: dict[str, dict[str, int]] = {}
        for (family, difficulty), n in sorted(counts.items()):
            table.setdefault(family, {})[difficulty] = n
        return table


def _check_asset_path(path: str) -> str | None:
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or "\\" in path or not path:
        return f"{path!r} must be a relative path inside the suite folder"
    return None


def _check_tasks(tasks: list[TaskBase], assets: Any, *, where: str) -> list[str]:
    problems = []
    available = set(assets)
    for task_id, n in Counter(t.id for t in tasks).items():
        if n > 1:
            problems.append(f"{where}: task id {task_id!r} is used {n} times; ids must be unique")
    for task in tasks:
        for name, value in task.told:
            if name not in IMAGE_FIELDS:
                continue
            bad = _check_asset_path(value)
            if bad:
                problems.append(f"{where}: task {task.id!r}: field 'told.{name}': {bad}")
            elif value not in available:
                problems.append(
                    f"{where}: task {task.id!r}: field 'told.{name}': reference image {value} "
                    "not found in the suite's assets"
                )
    return problems


def _task_errors(path: Path, index: int, raw: Any, exc: ValidationError | TaskError) -> list[str]:
    task_id = raw.get("id") if isinstance(raw, dict) else None
    label = f"task {task_id!r}" if isinstance(task_id, str) else f"tasks[{index}]"
    if isinstance(exc, TaskError):  # no or an unknown family: the registry's message
        return [f"{path}: {label}: field 'family': {exc}"]
    lines = []
    for err in exc.errors():
        field_path = ".".join(str(p) for p in err["loc"]) or "<task>"
        lines.append(f"{path}: {label}: field '{field_path}': {err['msg']}")
    return lines


def load_suite(folder: str | os.PathLike[str]) -> Suite:
    """Read and validate a suite folder (or its ``suite.json``).

    Every problem is collected; one :class:`TaskError` lists them all, one per line, as
    ``<file>: task '<id>': field '<path>': <what is wrong>``.
    """
    root = Path(folder)
    if root.name == SUITE_FILE and root.is_file():
        root = root.parent
    path = root / SUITE_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        msg = f"{path} not found; make a suite with `city360 tasks generate`"
        raise InputFileError(msg) from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        msg = f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        raise TaskError(msg) from None
    if not isinstance(raw, dict):
        msg = f"{path}: the top level must be an object with 'name', 'city' and 'tasks'"
        raise TaskError(msg)
    raw_tasks = raw.get("tasks")
    try:
        header = _SuiteHeader.model_validate(raw)
    except ValidationError as exc:
        lines = [
            f"{path}: field '{'.'.join(str(p) for p in e['loc']) or '<root>'}': {e['msg']}"
            for e in exc.errors()
        ]
        raise TaskError("\n".join(lines)) from None
    if header.schema_version != SUITE_SCHEMA_VERSION:
        msg = (
            f"{path}: schema_version {header.schema_version} is not supported (this city360 "
            f"reads {SUITE_SCHEMA_VERSION}); regenerate the suite"
        )
        raise TaskError(msg)
    problems: list[str] = []
    tasks: list[TaskBase] = []
    for index, raw_task in enumerate(raw_tasks or []):
        try:
            tasks.append(parse_task(raw_task))
        except (ValidationError, TaskError) as exc:
            problems.extend(_task_errors(path, index, raw_task, exc))
    assets: dict[str, bytes] = {}
    asset_dir = root / ASSETS_DIR
    if asset_dir.is_dir():
        for file in sorted(asset_dir.rglob("*")):
            if file.is_file() and not file.name.startswith("."):
                assets[file.relative_to(root).as_posix()] = file.read_bytes()
    problems.extend(_check_tasks(tasks, assets.keys(), where=str(path)))
    if problems:
        raise TaskError("\n".join(problems))
    return Suite(
        name=header.name,
        city=header.city,
        tasks=tasks,
        assets=assets,
        grid_size=header.grid_size,
        created=header.created,
        grid_area_m=header.grid_area_m,
    )


def save_suite(suite: Suite, folder: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Write ``suite`` to ``folder`` atomically (the folder appears whole or not at all)."""
    target = Path(folder)
    with atomic_dir(target, replace=overwrite) as tmp:
        for rel_path, data in sorted(suite.assets.items()):
            atomic_write_bytes(tmp / rel_path, data)
        atomic_write_json(tmp / SUITE_FILE, suite.to_json())
    return target
