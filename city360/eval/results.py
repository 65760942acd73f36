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
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from city360._atomic import atomic_write_json
from city360.errors import CityFormatError, InputFileError, OutputError

__all__ = [
    "RESULT_COLUMNS",
    "EpisodeResult",
    "ResultsWriter",
    "StepLogWriter",
    "finished_task_ids",
    "read_results",
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
    threshold_m: float | None = None
    """The success radius of a navigation task (metres)."""
    judge: str = ""
    """Which LLM judge scored the row (``provider:model``); empty when none did."""
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


def read_results(path: str | os.PathLike[str]) -> list[EpisodeResult]:
    """Read every complete row of a results.csv (a torn last line is ignored)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        msg = f"{path} not found; is this a run folder written by `city360 eval`?"
        raise InputFileError(msg) from None
    complete = text if text.endswith("\n") else text[: text.rfind("\n") + 1]
    reader = csv.DictReader(io.StringIO(complete))
    if reader.fieldnames is None:
        return []
    missing = [c for c in ("task_id", "status") if c not in reader.fieldnames]
    if missing:
        msg = f"{path}: missing columns {', '.join(missing)}"
        raise CityFormatError(msg)
    return [EpisodeResult.from_row(row) for row in reader]


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
        self._writer.writerow(result.to_row())
        self._sync()

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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(self.path, "w", encoding="utf-8")  # noqa: SIM115

    def write(self, record: Mapping[str, Any]) -> None:
        self._handle.write(json.dumps(record, ensure_ascii=False, default=_jsonable) + "\n")
        self._handle.flush()

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


def finished_task_ids(results: Iterable[EpisodeResult]) -> set[str]:
    """Task ids that have a row, i.e. will not run again on resume."""
    return {r.task_id for r in results}
