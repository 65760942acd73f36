"""The accuracy suite on small cases (issue 17): a dense-city twin at target with and without
OSM, and a twin along the real Hamburg walk replayed in time. The full set is
``city360 accuracy`` (city360/pose_graph/accuracy.py)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from city360.pose_graph.accuracy import (
    TARGET_F1,
    TARGET_JUNCTIONS,
    TARGET_RMSE_M,
    AccuracyCase,
    run_case,
)

OAKLAND = AccuracyCase("oakland", "osm/West-Oakland.osm.bz2", None, (0,))
HAMBURG = AccuracyCase("hamburg-walk", None, None, (0,), route="gps/hamburg_sternschanze_walk.gpx")


def test_oakland_twin_meets_the_targets_with_and_without_osm(
    shared_data: Path, tmp_path: Path
) -> None:
    rows = run_case(OAKLAND, 0, data_dir=shared_data, work_dir=tmp_path)
    assert [r.osm for r in rows] == [False, True]
    for row in rows:
        assert row.junction_precision >= TARGET_JUNCTIONS, row
        assert row.junction_recall >= TARGET_JUNCTIONS, row
        assert row.street_f1 >= TARGET_F1, row
        assert row.position_rmse_m <= TARGET_RMSE_M, row
        assert row.meets_targets


def test_real_hamburg_walk_replayed_in_time_builds_and_stays_on_the_path(
    shared_data: Path, tmp_path: Path
) -> None:
    rows = run_case(HAMBURG, 0, data_dir=shared_data, work_dir=tmp_path)
    for row in rows:
        assert not row.error, row
        assert row.position_rmse_m <= TARGET_RMSE_M, row
        # the walk films no junction on three arms; none may be invented without OSM
        assert row.junction_recall == 1.0, row
    # with and without OSM: the walker standing ~400 poses at the end of filming invents no
    # junction and no self-loops there (round two: with OSM, P 0.000, F1 0.667)
    for row in rows:
        assert row.junction_precision == 1.0, row
        assert row.street_f1 == 1.0, row
    # the twin keeps the real clock: the 21 min GPS gap is in the video's duration
    truth = json.loads(
        (tmp_path / "hamburg-walk-real-walk-phone-0" / "groundtruth" / "scene.json").read_text()
    )
    video = truth["videos"][0]
    assert video["frame_count"] / video["fps"] == pytest.approx(1890, abs=2)


def test_walk_network_has_the_path_street_and_cross_streets(
    shared_data: Path, tmp_path: Path
) -> None:
    from city360.maps.osm import load_osm
    from city360.synth.walk_network import walk_network_osm

    osm = walk_network_osm(
        shared_data / "gps" / "hamburg_sternschanze_walk.gpx", tmp_path / "w.osm"
    )
    text = osm.read_text(encoding="utf-8")
    assert 'generator="city360 walk_network"' in text  # generated, not OSM data
    streets = load_osm(osm).streets
    degrees = np.array([d for _, d in streets.degree()])
    crossings = int((degrees >= 3).sum())
    assert crossings == 7  # one every 80 m along the 590 m simplified path


def test_select_cases_filters_areas_and_sets_seeds() -> None:
    from city360.errors import ConfigError
    from city360.pose_graph.accuracy import SUITE, select_cases

    chosen = select_cases(SUITE, areas=["helsinki"], seeds=[3, 4])
    assert [(c.area, c.seeds) for c in chosen] == [("helsinki", (3, 4))]
    assert select_cases(SUITE) == list(SUITE)
    with pytest.raises(ConfigError, match="unknown accuracy area 'helsinky'; expected one of"):
        select_cases(SUITE, areas=["helsinky"])


def test_hamburg_twin_under_canyon_gps_builds(shared_data: Path, tmp_path: Path) -> None:
    """Round two left this open: the 21-minute stop wandered ~1 km under drift and bursts and
    the build failed ("its end is 18.9 m from node 7"); the stop is now one place."""
    from city360.pose_graph.accuracy import WALKS

    canyon = next(c for c in WALKS if c.gps_model == "canyon")
    rows = run_case(canyon, 0, data_dir=shared_data, work_dir=tmp_path)
    assert [r.error for r in rows] == ["", ""]
    assert rows[0].position_rmse_m < 10.0  # 10.15 m before; GPS drift alone is ~9 m here


def test_a_car_logged_by_a_phone_keeps_its_corners(shared_data: Path, tmp_path: Path) -> None:
    """The SF car route with a phone's 1 Hz GPS: before round eighteen the burst test took
    every right-angle turn's 100-180 m for a burst, and the row was 61.9 m RMSE (seed 0)."""
    from city360.pose_graph.accuracy import WALKS

    phone_car = next(c for c in WALKS if c.area == "sf-route" and c.gps_model == "phone")
    rows = run_case(phone_car, 0, data_dir=shared_data, work_dir=tmp_path)
    assert [r.error for r in rows] == ["", ""]
    assert max(r.position_rmse_m for r in rows) < 3.0


def test_cases_name_their_pattern_and_capture() -> None:
    from city360.pose_graph.accuracy import PATTERNS, WALKS

    assert (OAKLAND.walk, OAKLAND.capture, OAKLAND.films_everything) == ("coverage", "-", True)
    assert (HAMBURG.walk, HAMBURG.capture, HAMBURG.films_everything) == (
        "real walk",
        "timed",
        False,
    )
    assert WALKS[1].capture == "timed, canyon GPS"
    wander = AccuracyCase("a", "x.osm", None, (0,), pattern="wander", stops=True)
    assert (wander.walk, wander.capture, wander.films_everything) == ("wander", "stops", False)
    assert {c.area for c in PATTERNS} >= {"tokyo-oldtown", "helsinki"}
    assert {(c.pattern, c.stops) for c in PATTERNS} == {
        ("coverage", True),
        ("one-way", False),
        ("one-way", True),
        ("wander", False),
        ("wander", True),
    }


def test_a_wandering_twin_is_filmed_ingested_and_scored(shared_data: Path, tmp_path: Path) -> None:
    case = AccuracyCase(
        "oakland", "osm/West-Oakland.osm.bz2", None, (0,), pattern="wander", stops=True
    )
    rows = run_case(case, 0, data_dir=shared_data, work_dir=tmp_path)
    assert [(r.pattern, r.capture, r.error) for r in rows] == [("wander", "stops", "")] * 2
    assert rows[0].position_rmse_m <= TARGET_RMSE_M
    assert rows[0].true_junctions > 0  # scored against the streets it filmed
    params = json.loads((tmp_path / "oakland-wander-stops-phone-0" / "city.json").read_text())
    assert (params["build"]["synth"]["pattern"], params["build"]["synth"]["stops"]) == (
        "wander",
        True,
    )


def test_summary_table_means_seeds_and_counts_rows_at_target(tmp_path: Path) -> None:
    from city360.errors import InputFileError
    from city360.pose_graph.accuracy import AccuracyRow, read_rows, summary_table

    def row(seed: int, osm: bool, p: float, error: str = "") -> AccuracyRow:
        return AccuracyRow("tokyo", seed, "one-way", "stops", osm, p, 1.0, p, 1.0, 2.0, 9, 1.0,
                           error)  # fmt: skip

    rows = [row(0, False, 0.9), row(1, False, 1.0), row(0, True, 1.0), row(1, True, 0.0, "x")]
    saved = tmp_path / "rows.json"
    saved.write_text(json.dumps([r.to_json() for r in rows]))
    assert read_rows(saved) == rows
    table = summary_table(read_rows(saved))
    assert "| tokyo | one-way | stops | 0,1 | 0.95 / 1.00 / 0.95 |" in table
    assert "0.50 / 1.00 / 0.50 (1 failed) | 2.00 m | 2 of 4 |" in table
    saved.write_text('{"not": "rows"}')
    with pytest.raises(InputFileError, match="expected a JSON list of rows"):
        read_rows(saved)


def test_street_f1_is_a_target_with_osm_and_stated_without() -> None:
    from city360.pose_graph.accuracy import AccuracyRow

    def row(osm: bool, p: float, f1: float, rmse: float = 2.0) -> AccuracyRow:
        return AccuracyRow("helsinki", 0, "coverage", "-", osm, p, 0.97, f1, 1.0, rmse, 30, 1.0)

    assert not row(True, 1.0, 0.90).meets_targets
    assert row(True, 1.0, 0.95).meets_targets
    assert row(False, 0.96, 0.80).meets_targets  # the issue allows F1 lower without OSM
    assert not row(False, 0.94, 1.0).meets_targets  # junction P / R are targets either way
    assert not row(False, 1.0, 1.0, rmse=3.2).meets_targets


def _write_timed_gpx(path: Path, corners: list[tuple[float, float]], *, speed_mps: float) -> Path:
    """A 1 Hz GPX walking straight between ``corners`` (metres around Hamburg's Schanze)."""
    import datetime as dt

    from city360.geo import LocalProjection

    xy = np.asarray(corners, np.float64)
    arc = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(xy, axis=0).T))])
    marks = np.arange(0.0, arc[-1], speed_mps)
    x, y = np.interp(marks, arc, xy[:, 0]), np.interp(marks, arc, xy[:, 1])
    lat, lon = LocalProjection(53.5605, 9.9610).to_latlon(x, y)
    start = dt.datetime(2024, 5, 1, 10, tzinfo=dt.UTC)
    points = "\n".join(
        f'<trkpt lat="{a:.7f}" lon="{b:.7f}"><time>'
        f"{(start + dt.timedelta(seconds=k)).strftime('%Y-%m-%dT%H:%M:%SZ')}</time></trkpt>"
        for k, (a, b) in enumerate(zip(lat, lon, strict=True))
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<gpx version="1.1" creator="test" '
        f'xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>\n{points}\n'
        "</trkseg></trk></gpx>\n"
    )
    return path


def test_a_walk_with_a_spur_and_a_self_crossing_is_scored_on_its_junctions(
    tmp_path: Path,
) -> None:
    """Up a side street and back on its other sidewalk, round a block, across its own path:
    the generated streets have the two junctions the walk passes (round eight's had none, so
    a build that found them scored junction precision 0 without OSM)."""
    corners = [(0, 0), (100, 0), (100, 70), (106, 68), (106, 4), (200, 4), (200, 120)]
    corners += [(120, 120), (120, -80)]
    _write_timed_gpx(tmp_path / "data" / "gps" / "loop.gpx", corners, speed_mps=1.4)
    case = AccuracyCase("loop-walk", None, None, (1,), route="gps/loop.gpx")
    rows = run_case(case, 1, data_dir=tmp_path / "data", work_dir=tmp_path / "work")
    assert [(r.error, r.true_junctions) for r in rows] == [("", 2), ("", 2)]
    for row in rows:
        assert row.junction_precision == 1.0, row  # nothing invented
    assert rows[1].junction_recall == 1.0  # with OSM both junctions are found


def test_the_loop_walk_finds_its_spur_base_without_osm(tmp_path: Path) -> None:
    """Seed 0 of the walk above: the spur's sidewalks drift 3.5-7 m apart, and its root was put
    halfway up the spur (track_turns.spur_roots), so without OSM both junctions were lost
    (P / R / F1 0 / 0 / 0)."""
    corners = [(0, 0), (100, 0), (100, 70), (106, 68), (106, 4), (200, 4), (200, 120)]
    corners += [(120, 120), (120, -80)]
    _write_timed_gpx(tmp_path / "data" / "gps" / "loop.gpx", corners, speed_mps=1.4)
    case = AccuracyCase("loop-walk", None, None, (0,), route="gps/loop.gpx")
    rows = run_case(case, 0, data_dir=tmp_path / "data", work_dir=tmp_path / "work")
    for row in rows:
        assert (row.junction_precision, row.junction_recall, row.street_f1) == (1.0, 1.0, 1.0), row


def test_a_twin_is_built_with_osm_on_the_map_its_scene_was_made_from(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The synth scene reads the map without walkable squares, so the build with OSM does too
    (``MAP_AS_SCENE``): ``build_city(osm_squares=False)``; the build without OSM reads no map.
    Switched off, the map as the network reads it."""
    import city360.pose_graph.accuracy as accuracy
    import city360.pose_graph.build as build

    told: list[object] = []
    real = build.build_city

    def recording(city: object, **kwargs: object) -> object:
        told.append(kwargs.get("osm_squares"))
        return real(city, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(build, "build_city", recording)
    corners = [(0, 0), (100, 0), (100, 70), (106, 68), (106, 4), (200, 4), (200, 120)]
    _write_timed_gpx(tmp_path / "data" / "gps" / "loop.gpx", corners, speed_mps=1.4)
    case = AccuracyCase("loop-walk", None, None, (0,), route="gps/loop.gpx")
    rows = run_case(case, 0, data_dir=tmp_path / "data", work_dir=tmp_path / "work")
    assert [r.error for r in rows] == ["", ""]
    assert told == [None, False]
    monkeypatch.setattr(accuracy, "MAP_AS_SCENE", False)
    told.clear()
    run_case(case, 0, data_dir=tmp_path / "data", work_dir=tmp_path / "other")
    assert told == [None, None]


def _cases_run_by_cli(
    monkeypatch: pytest.MonkeyPatch, *args: list[str]
) -> list[list[AccuracyCase]]:
    """The cases ``city360 accuracy`` runs for each argument list (the suite itself faked)."""
    from typer.testing import CliRunner

    import city360.pose_graph.accuracy as accuracy
    from city360.cli import app

    ran: list[list[AccuracyCase]] = []

    def fake_run(cases: list[AccuracyCase], **_: object) -> list[accuracy.AccuracyRow]:
        ran.append(list(cases))
        return []

    monkeypatch.setattr(accuracy, "run_suite", fake_run)
    runner = CliRunner()
    for argv in args:
        assert runner.invoke(app, ["accuracy", *argv, "--json"]).exit_code == 0
    return ran


def test_unseen_windows_run_by_area_only_and_share_no_area_or_seed_with_the_suite(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import city360.pose_graph.accuracy as accuracy

    tuned = accuracy.SUITE + accuracy.WALKS + accuracy.PATTERNS
    assert {c.area for c in accuracy.UNSEEN}.isdisjoint({c.area for c in tuned})
    assert {c.bbox for c in accuracy.UNSEEN}.isdisjoint({c.bbox for c in tuned})
    assert {s for c in accuracy.UNSEEN for s in c.seeds} == {5, 6, 7, 8, 9}
    ran = _cases_run_by_cli(monkeypatch, ["--area", "nerima-se"], [])
    assert [c.area for c in ran[0]] == ["nerima-se"] * 7
    assert not {c.area for c in ran[1]} & {c.area for c in accuracy.UNSEEN}


def test_fresh_windows_run_by_area_only_and_film_the_network_they_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import city360.pose_graph.accuracy as accuracy
    from city360.maps.osm_types import NETWORK_HIGHWAYS

    others = accuracy.SUITE + accuracy.WALKS + accuracy.PATTERNS + accuracy.UNSEEN
    assert {c.area for c in accuracy.FRESH}.isdisjoint({c.area for c in others})
    assert {c.bbox for c in accuracy.FRESH}.isdisjoint({c.bbox for c in others})
    assert {c.network for c in accuracy.FRESH} == {"street", "walk"}
    assert all(c.network in NETWORK_HIGHWAYS for c in accuracy.FRESH)
    ran = _cases_run_by_cli(monkeypatch, ["--area", "fresh-helsinki-kaisaniemi"], [])
    assert {(c.area, c.network) for c in ran[0]} == {("fresh-helsinki-kaisaniemi", "walk")}
    assert len(ran[0]) == 4
    assert not {c.area for c in ran[1]} & {c.area for c in accuracy.FRESH}


def test_a_footpath_twin_is_filmed_on_the_walk_network(shared_data: Path, tmp_path: Path) -> None:
    """A case with ``network="walk"`` films the park's footpaths (the street network holds
    one junction there) and the build with OSM matches them on the walk network."""

    import city360.pose_graph.accuracy as accuracy

    case = replace(
        next(c for c in accuracy.FRESH if c.network == "walk"),
        bbox="60.1728,24.9410,60.1745,24.9445",
        pattern="coverage",
    )
    rows = accuracy.run_case(case, 0, data_dir=shared_data, work_dir=tmp_path)
    assert [r.osm for r in rows] == [False, True]
    assert all(not r.error for r in rows), [r.error for r in rows]
    assert rows[1].true_junctions >= 5
    city = tmp_path / "fresh-helsinki-kaisaniemi-coverage-phone-0"
    build = json.loads((city / "city.json").read_text())["build"]["pose_graph"]
    assert build["osm_network"] == "walk"


def test_a_filmed_row_is_judged_on_its_ingested_frame_poses(tmp_path: Path) -> None:
    """``--film`` rows carry the ingested frame poses' RMSE; the target judges that one (what
    a user gets), not the GPS-only smoothing's, and the saved rows keep both."""
    from city360.pose_graph.accuracy import AccuracyRow, format_table, read_rows

    def row(ingested: float | None) -> AccuracyRow:
        return AccuracyRow("sf-route", 0, "real walk", "filmed, timed", True, 1.0, 1.0, 1.0,
                           1.0, 2.0, 0, 1.0, ingested_rmse_m=ingested,
                           gps_rmse_at_frames_m=None if ingested is None else 2.1)  # fmt: skip

    assert row(None).meets_targets
    assert row(2.9).meets_targets
    assert not row(3.2).meets_targets
    assert row(3.2).target_rmse_m == 3.2
    saved = tmp_path / "rows.json"
    saved.write_text(json.dumps([r.to_json() for r in (row(None), row(3.2))]))
    assert read_rows(saved) == [row(None), row(3.2)]
    assert "| 2.00 (ingested 3.20) | no |" in format_table([row(3.2)])


@pytest.mark.slow
def test_a_filmed_twin_is_ingested_again_with_osm_for_the_build_with_osm(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """As a user passing ``--osm`` to ``city360 ingest`` and to ``city360 build``: the row
    without OSM reads the videos ingested without the extract, the row with OSM those ingested
    with it, and reports their own frame-pose RMSE (the twin was ingested once, without the
    extract, for both rows until round thirty-four, branch canyon34)."""
    import city360.pose_graph.filmed as filmed

    told: list[Path | None] = []
    real = filmed.ingest_twin

    def recording(city: Path, *, osm: Path | None = None) -> list[str]:
        told.append(osm)
        return real(city, osm=osm)

    monkeypatch.setattr(filmed, "ingest_twin", recording)
    _write_timed_gpx(tmp_path / "data" / "gps" / "line.gpx", [(0, 0), (90, 0)], speed_mps=1.4)
    case = AccuracyCase("line-walk", None, None, (0,), route="gps/line.gpx")
    rows = run_case(case, 0, data_dir=tmp_path / "data", work_dir=tmp_path / "work", film=True)
    assert [r.error for r in rows] == ["", ""]
    assert told == [None, tmp_path / "work" / "line-walk-streets.osm"]
    assert all(r.ingested_rmse_m is not None for r in rows)
