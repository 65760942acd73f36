from __future__ import annotations

import json
from pathlib import Path

import av
import cv2
import numpy as np

from city360.eval.report import write_report
from city360.eval.results import EpisodeResult, ResultsWriter, StepLogWriter
from city360.eval.summary import summarize


def _write_run(run_dir: Path) -> None:
    with ResultsWriter(run_dir / "results.csv") as writer:
        writer.append(
            EpisodeResult(
                task_id="nav-1",
                task_type="MapNavigation",
                difficulty="Easy",
                status="answered",
                scored_success=True,
                is_correct=True,
                completed_by_answer=True,
                evaluation_metric="coordinate_match",
                evaluation_score=1.0,
                steps=3,
                distance_to_goal_m=4.0,
                user_answer="<script>alert(1)</script>",
            )
        )
        writer.append(
            EpisodeResult(
                task_id="loc-1",
                task_type="Localization",
                difficulty="Hard",
                status="step_limit",
                evaluation_metric="exact_match",
                steps=50,
            )
        )
    with StepLogWriter(run_dir / "episodes" / "nav-1.jsonl") as log:
        log.write(
            {
                "type": "episode",
                "task_id": "nav-1",
                "goal_xy": [30.0, 0.0],
                "oracle_path_xy": [[0.0, 0.0], [30.0, 0.0]],
            }
        )
        for step, x in enumerate([0.0, 10.0, 20.0, 28.0]):
            log.write({"step": step, "action": "W", "x_m": x, "y_m": 0.0})
    frames = run_dir / "episodes" / "nav-1"
    frames.mkdir()
    for k in range(3):
        image = np.full((48, 64, 3), 40 * k, np.uint8)
        cv2.imwrite(str(frames / f"{k:04d}.png"), image)
    (run_dir / "run_metadata.json").write_text(json.dumps({"run_id": "r1", "agent": "oracle"}))


def test_report_has_tables_pictures_and_replays(tmp_path: Path) -> None:
    _write_run(tmp_path)
    page = write_report(tmp_path)
    text = page.read_text(encoding="utf-8")
    assert "nav-1" in text
    assert "loc-1" in text
    assert "<script>alert(1)</script>" not in text  # user text is escaped
    assert "&lt;script&gt;" in text
    assert "OpenStreetMap contributors" in text
    for name in ("scores.png", "stop_reasons.png", "episodes/nav-1.png"):
        assert (tmp_path / "report" / name).stat().st_size > 1000
    with av.open(str(tmp_path / "report" / "episodes" / "nav-1.mp4")) as container:
        assert sum(1 for _ in container.decode(video=0)) == 3
    assert not (tmp_path / "report" / "episodes" / "loc-1.png").exists()


def test_summary_scores_only_answered_episodes() -> None:
    results = [
        EpisodeResult(
            "a",
            "VLN",
            "Easy",
            "answered",
            completed_by_answer=True,
            evaluation_score=1.0,
            scored_success=True,
        ),
        EpisodeResult("b", "VLN", "Easy", "step_limit", evaluation_score=1.0),
        EpisodeResult("c", "VLN", "Easy", "infrastructure_error"),
    ]
    summary = summarize(results)
    cell = summary.cells[("VLN", "Easy")]
    assert cell.episodes == 2
    assert cell.mean_score == 0.5
    assert summary.infrastructure_failures == 1
    assert summary.stop_reasons == {"answered": 1, "step_limit": 1, "infrastructure_error": 1}
