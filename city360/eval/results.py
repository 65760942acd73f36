"""Run outputs on disk: ``outputs/<run_id>/`` (DESIGN.md "Tasks and results").

``results.csv`` has one row per finished episode, appended and fsynced as each episode ends, so
a run killed at any moment keeps every finished episode; a torn last line (killed mid-write) is
cut off on resume. Columns follow the reference benchmark's results schema where they mean the
same thing, plus ours. ``run_metadata.json`` is rewritten atomically at start, on progress and
at the end. ``episodes/<task_id>.jsonl`` holds the step log of each episode (no image payloads,
no keys).
"""

from __future__ import annotations

import csv
import io
import json
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from city360._atomic import atomic_write_json, write_failure
from city360.errors import CityFormatError, InputFileError, OutputError
from city360.scrub import scrub_text

__all__ = [
    "RERUN_STATUSES",
    "RESULT_COLUMNS",
    "EpisodeResult",
    "MalformedResultsWarning",
    "RejectedRow",
    "ResultsFile",
    "ResultsWriter",
    "StepLogWriter",
    "finished_task_ids",
    "read_results",
    "read_results_file",
    "rewrite_results",
    "write_run_metadata",
]


@dataclass(slots=True)
class EpisodeResult:
    """Everything a results row says about one episode.

    ``status`` is how the episode ended (``answered``, ``step_limit``, ``stagnation``,
    ``away_from_goal``, ``step_timeout``, ``agent_error``, ``infrastructure_error``);
    ``scored_success`` is True only for an ANSWER-terminated, correct episode. Distances are
    metres; ``final_x_m``/``final_y_m`` are in the city CRS.
    """

    task_id: str
    task_type: str
    difficulty: str
    status: str
    scored_success: bool = False
    is_correct: bool = False
    completed_by_answer: bool = False
    evaluation_metric: str = ""
    evaluation_score: float = 0.0
    evaluation_method: str = ""
    steps: int = 0
    elapsed_seconds: float = 0.0
    final_lat: float | None = None
    final_lon: float | None = None
    final_x_m: float | None = None
    final_y_m: float | None = None
    final_heading_deg: float | None = None
    user_answer: str = ""
    expected: str = ""
    distance_to_goal_m: float | None = None
    path_length_m: float = 0.0
    shortest_path_m: float | None = None
    spl: float | None = None
    oracle_success: bool | None = None
    agent: str = ""
    model: str = ""
    provider: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    retries: int = 0
    parse_errors: int = 0
    invalid_actions: int = 0
    api_errors: int = 0
    error_message: str = ""
    seed: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_row(self) -> dict[str, str]:
        row: dict[str, str] = {}
        for name, value in asdict(self).items():
            if name == "extra":
                row[name] = json.dumps(value, ensure_ascii=False, sort_keys=True) if value else ""
            elif value is None:
                row[name] = ""
            elif isinstance(value, bool):
                row[name] = "true" if value else "false"
            elif isinstance(value, float):
                row[name] = f"{value:.6g}"
            else:
                row[name] = str(value)
        return row

    @classmethod
    def from_row(cls, row: Mapping[str, str]) -> EpisodeResult:
        kwargs: dict[str, Any] = {}
        for spec in fields(cls):
            raw = row.get(spec.name, "")
            kind = str(spec.type)
            if spec.name == "extra":
                kwargs[spec.name] = json.loads(raw) if raw else {}
            elif raw == "" and "None" in kind:
                kwargs[spec.name] = None
            elif kind.startswith("bool"):
                kwargs[spec.name] = raw == "true"
            elif kind.startswith("int"):
                kwargs[spec.name] = int(raw) if raw else 0
            elif kind.startswith("float"):
                kwargs[spec.name] = float(raw) if raw else 0.0
            else:
                kwargs[spec.name] = raw
        return cls(**kwargs)


RESULT_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(EpisodeResult))


@dataclass(frozen=True, slots=True)
class RejectedRow:
    """A line of results.csv that is not an episode row: its 1-based line number, why, and the
    raw text (kept for the record; it is never counted as an episode)."""

    line: int
    reason: str
    raw: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass(frozen=True, slots=True)
class ResultsFile:
    """A results.csv as read: its good rows and the lines that were rejected."""

    path: Path
    results: list[EpisodeResult]
    rejected: list[RejectedRow]

    def warnings(self) -> list[str]:
        """One message per rejected line, naming the file, the line and the reason."""
        return [
            f"{self.path}: line {r.line} is not an episode row ({r.reason}); not counted"
            for r in self.rejected
        ]


_STATUSES = frozenset(
    {
        "answered",
        "step_limit",
        "stagnation",
        "away_from_goal",
        "step_timeout",
        "agent_error",
        "infrastructure_error",
        "interrupted",
    }
)
"""``StopReason`` values (spelled out: ``stopping`` imports this module's readers' users)."""


def _row_problem(row: Mapping[str | None, Any], header: Sequence[str]) -> str | None:
    if None in row:
        return f"{len(header) + len(row[None])} fields, the header has {len(header)}"
    missing = [k for k, v in row.items() if v is None]
    if missing:
        return f"{len(header) - len(missing)} fields, the header has {len(header)}"
    if not row.get("task_id"):
        return "empty task_id"
    if row.get("status") not in _STATUSES:
        return f"unknown status {row.get('status')!r}"
    for spec in fields(EpisodeResult):
        raw = row.get(spec.name)
        if raw and str(spec.type).startswith("bool") and raw not in ("true", "false"):
            return f"{spec.name} must be true or false, got {raw!r}"
    return None


def read_results_file(path: str | os.PathLike[str]) -> ResultsFile:
    """Read a results.csv, checking every row: a torn last line (killed mid-write) is ignored,
    and a line that is not a well-formed episode row (wrong field count, unknown status,
    unparseable number) is returned in ``rejected`` with its line number instead of being
    counted."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        msg = f"{path} not found; is this a run folder written by `city360 eval`?"
        raise InputFileError(msg) from None
    complete = text if text.endswith("\n") else text[: text.rfind("\n") + 1]
    reader = csv.DictReader(io.StringIO(complete))
    if reader.fieldnames is None:
        return ResultsFile(path, [], [])
    missing = [c for c in ("task_id", "status") if c not in reader.fieldnames]
    if missing:
        msg = f"{path}: missing columns {', '.join(missing)}"
        raise CityFormatError(msg)
    header = list(reader.fieldnames)
    lines = complete.splitlines()
    results: list[EpisodeResult] = []
    rejected: list[RejectedRow] = []
    previous_line = reader.line_num
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            line = reader.line_num
            rejected.append(RejectedRow(line, f"unreadable CSV ({exc})", _raw(lines, line)))
            previous_line = line
            continue
        first, line = previous_line + 1, reader.line_num
        previous_line = line
        raw = "\n".join(lines[first - 1 : line])
        problem = _row_problem(row, header)
        if problem is None:
            try:
                results.append(EpisodeResult.from_row(row))
                continue
            except (ValueError, TypeError) as exc:
                problem = f"unparseable value ({exc})"
        rejected.append(RejectedRow(first, problem, raw))
    return ResultsFile(path, results, rejected)


def _raw(lines: Sequence[str], line: int) -> str:
    return lines[line - 1] if 0 < line <= len(lines) else ""


def read_results(path: str | os.PathLike[str]) -> list[EpisodeResult]:
    """Every well-formed row of a results.csv (see :func:`read_results_file`); rejected lines
    are skipped with a :class:`MalformedResultsWarning` naming their line numbers."""
    read = read_results_file(path)
    if read.rejected:
        warnings.warn("; ".join(read.warnings()), MalformedResultsWarning, stacklevel=2)
    return read.results


class MalformedResultsWarning(UserWarning):
    """A results.csv holds lines that are not episode rows (they are skipped)."""


def rewrite_results(path: str | os.PathLike[str], results: Iterable[EpisodeResult]) -> Path:
    """Replace results.csv with exactly ``results`` (atomically); used by resume to drop rows
    that will be run again, so that each task keeps at most one row."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=RESULT_COLUMNS, lineterminator="\r\n")
    writer.writeheader()
    for result in results:
        writer.writerow(result.to_row())
    from city360._atomic import atomic_write_text

    return atomic_write_text(path, buffer.getvalue())


class ResultsWriter:
    """Appends episode rows to ``results.csv``, flushing and fsyncing each one."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._repair_torn_tail()
            is_new = not self.path.exists() or self.path.stat().st_size == 0
            self._handle = open(self.path, "a", encoding="utf-8", newline="")  # noqa: SIM115
        except OSError as exc:
            msg = f"cannot write results to {self.path}: {exc.strerror}"
            raise OutputError(msg) from None
        self._writer = csv.DictWriter(self._handle, fieldnames=RESULT_COLUMNS)
        if is_new:
            self._writer.writeheader()
            self._sync()

    def _repair_torn_tail(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            with open(self.path, "r+b") as handle:
                handle.truncate(data.rfind(b"\n") + 1)

    def _sync(self) -> None:
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def append(self, result: EpisodeResult) -> None:
        row = {name: scrub_text(value) for name, value in result.to_row().items()}
        try:
            self._writer.writerow(row)
            self._sync()
        except OSError as exc:
            raise OutputError(write_failure(self.path, exc)) from None

    def close(self) -> None:
        if not self._handle.closed:
            self._handle.close()

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResultsWriter({str(self.path)!r})"


class StepLogWriter:
    """Writes one JSON object per step to ``episodes/<task_id>.jsonl``.

    Records hold actions, feedback, thoughts, poses and counters; callers must not pass image
    arrays or secrets. A re-run of an unfinished episode overwrites its log.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = open(self.path, "w", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise OutputError(write_failure(self.path, exc)) from None

    def write(self, record: Mapping[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, default=_jsonable)
        try:
            self._handle.write(scrub_text(line) + "\n")
            self._handle.flush()
        except OSError as exc:
            raise OutputError(write_failure(self.path, exc)) from None

    def close(self) -> None:
        if not self._handle.closed:
            self._handle.close()

    def __enter__(self) -> StepLogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _jsonable(value: object) -> object:
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "value"):
        return value.value
    return str(value)


def write_run_metadata(path: str | os.PathLike[str], metadata: Mapping[str, Any]) -> Path:
    """Write run_metadata.json atomically."""
    return atomic_write_json(path, dict(metadata))


RERUN_STATUSES = frozenset({"infrastructure_error", "interrupted"})
"""Rows a resume runs again: the episode ended for a reason that was not the agent's."""


def finished_task_ids(results: Iterable[EpisodeResult]) -> set[str]:
    """Task ids that have a row that stands, i.e. will not run again on resume (rows that
    ended in an infrastructure error or an interruption do not stand)."""
    return {r.task_id for r in results if r.status not in RERUN_STATUSES}
