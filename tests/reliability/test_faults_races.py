"""Faults and races of round thirteen (branch ``faults``): a full disk while an episode writes its
step log, a suite or city changed under a run, two writers replacing one folder."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from city360.errors import OutputError
from city360.eval.results import RESULT_COLUMNS, EpisodeResult, ResultsWriter, StepLogWriter

DEV_FULL = Path("/dev/full")
"""Linux's always-full device: every write to it fails with ENOSPC."""


@pytest.mark.skipif(not DEV_FULL.exists(), reason="needs /dev/full (Linux)")
def test_a_step_log_on_a_full_disk_fails_once_and_closes_quietly() -> None:
    log = StepLogWriter(DEV_FULL)
    with pytest.raises(OutputError, match=r"cannot write /dev/full: No space left on device; the"):
        log.write({"step": 1, "action": "W"})
    log.close()  # the lines still buffered must not raise a second, raw OSError
    log.close()


@pytest.mark.skipif(not DEV_FULL.exists(), reason="needs /dev/full (Linux)")
def test_results_on_a_full_disk_fail_once_and_close_quietly(tmp_path: Path) -> None:
    writer = ResultsWriter(tmp_path / "results.csv")
    # the disk fills after the header: the writer's file now writes to /dev/full
    writer._handle.close()
    writer._handle = open(DEV_FULL, "w", encoding="utf-8", newline="")  # noqa: SIM115
    writer._writer = csv.DictWriter(writer._handle, fieldnames=RESULT_COLUMNS)
    with pytest.raises(OutputError, match=r"results\.csv: No space left on device; the disk is"):
        writer.append(EpisodeResult("t", "VLN", "Easy", "answered"))
    writer.close()
    writer.close()
