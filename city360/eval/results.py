"""Run outputs on disk: ``outputs/<run_id>/`` (DESIGN.md "Tasks and results").

``results.csv`` has one row per finished episode, appended and fsynced as each episode ends, so
a run killed at any moment keeps every finished episode; a torn last line (killed mid-write) is
cut off on resume. Its columns are first the 51 of the reference benchmark's results schema v3
(:data:`REFERENCE_COLUMNS`: same names, order and vocabularies, from 360CityArena's
``docs/results_schema.md`` and ``runner/agent_server.py`` ``RESULT_FIELDNAMES``), then
city360's own (:data:`CITY360_COLUMNS`). :func:`read_results` reads that file and the
37-column files written before it. ``run_metadata.json`` is rewritten atomically at start, on
progress and at the end. ``episodes/<task_id>.jsonl`` holds the step log of each episode (no
image payloads, no keys).
"""

from __future__ import annotations

import csv
import io
import json
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import IO, Any

from city360._atomic import atomic_write_json, write_failure
from city360.errors import CityFormatError, ConfigError, InputFileError, OutputError
from city360.scrub import scrub_text

__all__ = [
    "CITY360_COLUMNS",
    "REFERENCE_COLUMNS",
    "REFERENCE_STATUS",
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
    act_requests: int = 0
    """Every decision, usable or not (``steps`` counts what the protocol counts)."""
    final_action: str = ""
    message: str = ""
    """What the metric said about the answer (or the final-position check), for people."""
    stop_reason_detail: str = ""
    protocol: str = "default"
    condition: str = "day"
    """The visual condition the episode's views showed (``day``, ``night``, ...)."""
    threshold_m: float | None = None
    """The success radius of a navigation task (metres)."""
    judge: str = ""
    """Which LLM judge scored the row (``provider:model``); empty when none did."""
    reference_expected: str = ""
    """The expected answer as the reference writes it (``x:12.30 y:4.50`` for a goal)."""
    timestamp: str = ""
    run_id: str = ""
    map_id: str = ""
    landmark: str = ""
    final_segment: str = ""
    max_tokens: int | None = None
    temperature: float | None = None
    judge_provider: str = ""
    judge_model: str = ""
    llm_latency_s: float = 0.0
    last_finish_reason: str = ""
    """Why the model ended its last reply, as its provider says (``stop``, ``length``, ...)."""
    last_response_model: str = ""
    """The model that answered last, as its provider names it."""
    artifact_dir: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def results_task_type(self) -> str:
        """The family's name in the reference's vocabulary (``LanguageGuidedNavigation`` for
        VLN), from the family registry; an unknown family keeps its own name."""
        from city360.errors import TaskError
        from city360.tasks.families import get_family

        try:
            return get_family(self.task_type).reported_name
        except TaskError:
            return self.task_type

    @property
    def results_metric(self) -> str:
        """The metric's name in the reference's vocabulary (``mean_relative_accuracy``)."""
        from city360.eval.metrics import get_metric

        try:
            return get_metric(self.evaluation_metric).reported_name
        except ConfigError:
            return self.evaluation_metric

    @property
    def location_validated(self) -> bool:
        """A navigation task: scored by where the agent was (``threshold_m`` is set)."""
        return self.threshold_m is not None

    def to_row(self) -> dict[str, str]:
        """The CSV row: the reference's columns, then city360's."""
        return {
            **{name: get(self) for name, get in _REFERENCE_GETTERS.items()},
            **{column: _format(getattr(self, name)) for column, name in _CITY360.items()},
        }

    @classmethod
    def from_row(cls, row: Mapping[str, str]) -> EpisodeResult:
        """A row of results.csv (this schema, or the 37 city360 columns of older files)."""
        if "stop_reason" not in row:  # an older file: the columns are the field names
            return cls._from_columns(row, {f.name: f.name for f in fields(cls)})
        return cls._from_columns(row, _READ_FROM)

    @classmethod
    def _from_columns(cls, row: Mapping[str, str], columns: Mapping[str, str]) -> EpisodeResult:
        kwargs: dict[str, Any] = {}
        for spec in fields(cls):
            if spec.name not in columns:
                continue
            raw = row.get(columns[spec.name]) or ""
            kind = str(spec.type)
            if spec.name == "extra":
                kwargs[spec.name] = json.loads(raw) if raw else {}
            elif raw == "" and "None" in kind:
                kwargs[spec.name] = None
            elif kind.startswith("bool"):
                kwargs[spec.name] = raw == "true"
            elif kind.startswith("int"):
                kwargs[spec.name] = int(float(raw)) if raw else 0
            elif kind.startswith("float"):
                kwargs[spec.name] = float(raw) if raw else 0.0
            else:
                kwargs[spec.name] = raw
        return cls(**kwargs)


def _format(value: Any) -> str:
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True) if value else ""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _fixed(value: float | None, digits: int) -> str:
    return "" if value is None else f"{value:.{digits}f}"


REFERENCE_STATUS: Mapping[str, str] = {
    "answered": "ANSWER",
    "step_limit": "STEP_LIMIT",
    "stagnation": "STAGNATION",
    "away_from_goal": "AWAY_FROM_GOAL",
    "step_timeout": "IDLE_TIMEOUT",
    "agent_error": "AGENT_ERROR",
    "infrastructure_error": "INFRASTRUCTURE_ERROR",
    "interrupted": "INTERRUPTED",
}
"""city360's stop reasons -> the reference's ``status`` vocabulary (``ANSWER``, ``STEP_LIMIT``,
``STAGNATION``, ``AWAY_FROM_GOAL``, ``IDLE_TIMEOUT``). The reference has no status for an agent
error, a provider outage or an interruption; those keep city360's name in upper case."""

_UNVALIDATED = frozenset({"agent_error", "infrastructure_error", "interrupted"})


def _user_answer(r: EpisodeResult) -> str:
    """The reference writes the final position for a navigation task it validated."""
    located = r.final_x_m is not None and r.final_y_m is not None
    if r.location_validated and located and r.status not in _UNVALIDATED:
        return f"{r.final_x_m:.2f} {r.final_y_m:.2f}"
    return r.user_answer


def _total_tokens(r: EpisodeResult) -> str:
    return str(r.input_tokens + r.output_tokens)


def _last_error_type(r: EpisodeResult) -> str:
    if r.status in ("agent_error", "infrastructure_error"):
        return r.status
    if r.api_errors:
        return "llm_api_error"
    if r.parse_errors:
        return "parse_error"
    return "invalid_action" if r.invalid_actions else ""


_REFERENCE_GETTERS: dict[str, Any] = {
    "timestamp": lambda r: r.timestamp,
    "run_id": lambda r: r.run_id,
    "experiment_id": lambda r: "",
    "task_id": lambda r: r.task_id,
    "task_type": lambda r: r.results_task_type,
    "difficulty": lambda r: r.difficulty,
    "map_id": lambda r: r.map_id,
    "landmark": lambda r: r.landmark,
    "model": lambda r: r.model,
    "provider": lambda r: r.provider,
    "pretrained": lambda r: "",
    "max_tokens": lambda r: _format(r.max_tokens),
    "temperature": lambda r: _format(r.temperature),
    "validation_model": lambda r: r.judge_model,
    "validation_provider": lambda r: r.judge_provider,
    "validation_pretrained": lambda r: "",
    "status": lambda r: REFERENCE_STATUS.get(r.status, r.status.upper()),
    "scored_success": lambda r: _format(r.scored_success),
    "is_correct": lambda r: _format(r.is_correct),
    "validation_available": lambda r: _format(r.status not in _UNVALIDATED),
    "completed_by_answer": lambda r: _format(r.completed_by_answer),
    "evaluation_metric": lambda r: r.results_metric,
    "evaluation_score": lambda r: f"{r.evaluation_score:.4f}",
    "steps": lambda r: str(r.steps),
    "act_requests": lambda r: str(r.act_requests),
    "elapsed_seconds": lambda r: f"{r.elapsed_seconds:.2f}",
    "final_action": lambda r: r.final_action,
    "final_position_x": lambda r: _fixed(r.final_x_m, 4),
    "final_position_z": lambda r: _fixed(r.final_y_m, 4),
    "final_segment_path": lambda r: r.final_segment,
    "user_answer": _user_answer,
    "expected": lambda r: r.reference_expected or r.expected,
    "distance_to_goal": lambda r: _fixed(r.distance_to_goal_m, 4),
    "validation_threshold": lambda r: _format(r.threshold_m),
    "message": lambda r: r.message,
    "stop_reason_detail": lambda r: r.stop_reason_detail,
    "llm_request_count": lambda r: str(r.requests),
    "llm_error_count": lambda r: str(r.api_errors),
    "parse_error_count": lambda r: str(r.parse_errors),
    "invalid_action_count": lambda r: str(r.invalid_actions),
    "request_error_count": lambda r: "0",
    "total_prompt_tokens": lambda r: str(r.input_tokens),
    "total_completion_tokens": lambda r: str(r.output_tokens),
    "total_tokens": _total_tokens,
    "total_llm_latency_seconds": lambda r: f"{r.llm_latency_s:.4f}",
    "avg_llm_latency_seconds": lambda r: f"{r.llm_latency_s / r.requests if r.requests else 0:.4f}",
    "last_finish_reason": lambda r: r.last_finish_reason,
    "last_response_model": lambda r: r.last_response_model,
    "last_error_type": _last_error_type,
    "last_error_message": lambda r: r.error_message,
    "artifact_dir": lambda r: r.artifact_dir,
}

REFERENCE_COLUMNS: tuple[str, ...] = tuple(_REFERENCE_GETTERS)
"""The reference benchmark's results.csv columns (schema v3), in its order."""

_CITY360: dict[str, str] = {
    "family": "task_type",
    "stop_reason": "status",
    "metric": "evaluation_metric",
    "evaluation_method": "evaluation_method",
    "judge": "judge",
    "protocol": "protocol",
    "condition": "condition",
    "agent": "agent",
    "seed": "seed",
    "answer": "user_answer",
    "expected_answer": "expected",
    "reference_expected": "reference_expected",
    "final_lat": "final_lat",
    "final_lon": "final_lon",
    "final_heading_deg": "final_heading_deg",
    "path_length_m": "path_length_m",
    "shortest_path_m": "shortest_path_m",
    "spl": "spl",
    "oracle_success": "oracle_success",
    "retries": "retries",
    "extra": "extra",
}
"""city360's columns after the reference's: column -> EpisodeResult field."""

CITY360_COLUMNS: tuple[str, ...] = tuple(_CITY360)

RESULT_COLUMNS: tuple[str, ...] = REFERENCE_COLUMNS + CITY360_COLUMNS
"""Every column of results.csv, in order."""

_READ_FROM: dict[str, str] = {
    **{name: column for column, name in _CITY360.items()},
    "task_id": "task_id",
    "difficulty": "difficulty",
    "scored_success": "scored_success",
    "is_correct": "is_correct",
    "completed_by_answer": "completed_by_answer",
    "evaluation_score": "evaluation_score",
    "steps": "steps",
    "act_requests": "act_requests",
    "elapsed_seconds": "elapsed_seconds",
    "final_x_m": "final_position_x",
    "final_y_m": "final_position_z",
    "final_segment": "final_segment_path",
    "distance_to_goal_m": "distance_to_goal",
    "threshold_m": "validation_threshold",
    "model": "model",
    "provider": "provider",
    "input_tokens": "total_prompt_tokens",
    "output_tokens": "total_completion_tokens",
    "requests": "llm_request_count",
    "parse_errors": "parse_error_count",
    "invalid_actions": "invalid_action_count",
    "api_errors": "llm_error_count",
    "error_message": "last_error_message",
    "final_action": "final_action",
    "message": "message",
    "stop_reason_detail": "stop_reason_detail",
    "timestamp": "timestamp",
    "run_id": "run_id",
    "map_id": "map_id",
    "landmark": "landmark",
    "max_tokens": "max_tokens",
    "temperature": "temperature",
    "judge_provider": "validation_provider",
    "judge_model": "validation_model",
    "llm_latency_s": "total_llm_latency_seconds",
    "last_finish_reason": "last_finish_reason",
    "last_response_model": "last_response_model",
    "artifact_dir": "artifact_dir",
}
"""EpisodeResult field -> the column it is read back from."""


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
    if "stop_reason" in header:  # this schema: the reference's status, city360's stop reason
        if row.get("stop_reason") not in _STATUSES:
            return f"unknown stop_reason {row.get('stop_reason')!r}"
        if row.get("status") != REFERENCE_STATUS[str(row["stop_reason"])]:
            return f"status {row.get('status')!r} does not match stop_reason {row['stop_reason']!r}"
    elif row.get("status") not in _STATUSES:
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
        self._failed = False
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
            self._failed = True
            raise OutputError(write_failure(self.path, exc)) from None

    def close(self) -> None:
        """Close the file (safe twice); after a failed append, quietly (see
        :meth:`StepLogWriter.close`): the torn row is cut off by the next resume."""
        _close_once(self._handle, self.path, failed=self._failed)
        self._failed = True

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
        self._failed = False
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
            self._failed = True
            raise OutputError(write_failure(self.path, exc)) from None

    def close(self) -> None:
        """Close the log (safe twice). A write that failed was reported when it failed: the
        lines still buffered then are dropped here instead of failing a second time (on a full
        disk, that second error replaced the episode's infrastructure_error row with a raw
        traceback that ended the run). A close that is the first to fail is an
        :class:`OutputError` naming the file."""
        _close_once(self._handle, self.path, failed=self._failed)
        self._failed = True

    def __enter__(self) -> StepLogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _close_once(handle: IO[str], path: Path, *, failed: bool) -> None:
    """Close ``handle`` (a no-op when closed). Its last flush failing is an
    :class:`OutputError` naming ``path``, unless a write already ``failed`` and was reported:
    then what is still buffered is dropped, so a full disk is reported once, by the write."""
    if handle.closed:
        return
    try:
        handle.close()  # the file is closed even when its last flush fails
    except OSError as exc:
        if not failed:
            raise OutputError(write_failure(path, exc)) from None


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
