from __future__ import annotations

import json
from pathlib import Path

import av
import cv2
import numpy as np
import pytest

from city360.eval.report import write_report
from city360.eval.results import EpisodeResult, ResultsWriter, StepLogWriter, read_results
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
    assert "OpenStreetMap" not in text  # no city, no map drawn: nothing to credit
    for name in ("scores.png", "stop_reasons.png", "episodes/nav-1.png"):
        assert (tmp_path / "report" / name).stat().st_size > 1000
    with av.open(str(tmp_path / "report" / "episodes" / "nav-1.mp4")) as container:
        assert sum(1 for _ in container.decode(video=0)) == 3
    assert not (tmp_path / "report" / "episodes" / "loc-1.png").exists()


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_a_report_failing_part_way_leaves_the_previous_one_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The figures and replays were written in place, index.html last: a report killed after
    its first figure left the previous page beside a new (or torn) scores.png."""
    from city360.eval import report

    _write_run(tmp_path)
    write_report(tmp_path)
    before = _files(tmp_path / "report")
    assert "scores.png" in before
    with ResultsWriter(tmp_path / "results.csv") as writer:
        writer.append(
            EpisodeResult("vln-2", "VLN", "Medium", "answered", evaluation_score=0.5)
        )  # the new report's figures differ from the old one's

    def killed(*_args: object) -> None:
        msg = "killed after the first figure"
        raise KeyboardInterrupt(msg)

    monkeypatch.setattr(report, "_plot_stop_reasons", killed)
    with pytest.raises(KeyboardInterrupt, match="killed after the first figure"):
        write_report(tmp_path)

    assert _files(tmp_path / "report") == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    assert len(read_results(tmp_path / "results.csv")) == 3


def test_a_new_report_keeps_the_files_it_does_not_own(tmp_path: Path) -> None:
    _write_run(tmp_path)
    write_report(tmp_path)
    (tmp_path / "report" / "notes.txt").write_text("read me", encoding="utf-8")
    (tmp_path / "report" / "slides").mkdir()
    (tmp_path / "report" / "slides" / "talk.md").write_text("# run r1", encoding="utf-8")
    (tmp_path / "report" / "episodes" / "nav-1.txt").write_text("odd", encoding="utf-8")
    (tmp_path / "report" / "episodes" / "gone-1.png").write_bytes(b"an old task's picture")

    page = write_report(tmp_path)

    folder = tmp_path / "report"
    assert page == folder / "index.html"
    assert (folder / "notes.txt").read_text(encoding="utf-8") == "read me"
    assert (folder / "slides" / "talk.md").read_text(encoding="utf-8") == "# run r1"
    assert (folder / "episodes" / "nav-1.txt").read_text(encoding="utf-8") == "odd"
    assert not (folder / "episodes" / "gone-1.png").exists()  # the report's own, redrawn
    assert (folder / "episodes" / "nav-1.png").stat().st_size > 1000
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


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


def _own_city(root: Path, *, osm_source: bool) -> Path:
    """A city of one 40 m walk and no OSM extract; ``osm_source`` lists one in city.json (a
    city made from OSM data whose extract is gone), as a synthetic twin's does."""
    from city360.city import CityDir, CityManifest, SourceFile, TrajectoryMeta, TrajectoryPoses
    from city360.geo import LocalProjection

    projection = LocalProjection(60.17, 24.94)
    city = CityDir(root)
    root.mkdir()
    sources = [SourceFile(kind="osm", path="map/extract.osm", sha256="0" * 64)] * osm_source
    city.write_manifest(
        CityManifest(
            name="own",
            crs=projection.proj4,
            origin_lat=60.17,
            origin_lon=24.94,
            bbox=(60.1698, 24.9398, 60.1705, 24.9402),
            sources=sources,
        )
    )
    x = np.zeros(41)
    y = np.arange(41.0)
    lat, lon = projection.to_latlon(x, y)
    poses = TrajectoryPoses(
        x_m=x, y_m=y, lat=lat, lon=lon, heading_deg=np.zeros(41),
        t_s=np.arange(41.0), source_pts=np.arange(41),
    )  # fmt: skip
    meta = TrajectoryMeta(
        id="walk", source_video="walk.mp4", source_sha256="0" * 64, gps_source="walk.gpx",
        width=64, height=32, frame_count=41, spacing_m=1.0, length_m=40.0,
    )  # fmt: skip
    folder = city.trajectory_dir("walk")
    folder.mkdir(parents=True)
    CityDir.write_trajectory_files(folder, meta, poses)
    return root


@pytest.mark.parametrize("osm_source", [False, True])
def test_the_page_credits_osm_as_the_city_s_maps_do(tmp_path: Path, osm_source: bool) -> None:
    """The page said "Map data © OpenStreetMap contributors" under every run, one on a city
    drawn only from the user's own walks too, and named its agent as a JSON dump
    ({"kind": "random", "path": null, ...}) (issue 17, newuser4)."""
    run = tmp_path / "run"
    _write_run(run)
    metadata = {"run_id": "r1", "agent": {"kind": "lmm", "model": "gpt-4o", "path": None}}
    (run / "run_metadata.json").write_text(json.dumps(metadata))
    city = _own_city(tmp_path / "city", osm_source=osm_source)
    text = write_report(run, city_dir=city).read_text(encoding="utf-8")
    assert ("OpenStreetMap contributors" in text) is osm_source
    assert "agent: lmm:gpt-4o ·" in text
    assert '"kind"' not in text
