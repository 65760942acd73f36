"""A real GPS jump splits a walk into several trajectories instead of failing ingest (#17)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from city360.city import CityDir, max_pose_step_m
from city360.errors import OutputError
from city360.geo import LocalProjection
from city360.video_store.clean import CleanParams, clean_track, find_jumps
from city360.video_store.gps import read_track
from city360.video_store.gps.track import GpsTrack
from city360.video_store.ingest import (
    IngestOptions,
    ingest_video,
    part_id,
    trajectory_id_for,
    video_trajectory_ids,
)
from city360.video_store.resample import continuous_parts
from tests.fixtures.videos import (
    CREATION,
    ORIGIN,
    _far_scene,
    render_frame,
    walk_path,
    write_equirect_video,
    write_gpx,
)

JUMP_AT_S = 35.0
JUMP_M = (0.0, -40.0)
"""The GPS relocks 40 m south at 35 s and stays off: part 2 then runs west along y = 10 m and
crosses part 1's first street (x = 0, y 0..25 m)."""


def _walk(
    folder: Path,
    name: str,
    *,
    jump_m: tuple[float, float] | None,
    jump_at_s: float = JUMP_AT_S,
    stop: tuple[float, float] | None = None,
) -> tuple[Path, Path]:
    """A 70 s walk at 10 fps (256x128) and its 1 Hz GPS, which jumps by ``jump_m`` at
    ``jump_at_s`` and stays there."""
    folder.mkdir(parents=True, exist_ok=True)
    fps = 10.0
    t, x, y, heading, dist = walk_path(70.0, fps, stop=stop)
    scene = _far_scene(256, 128, 0)
    ground = _far_scene(256, 64, 2)
    frames = [render_frame(scene, ground, h, d) for h, d in zip(heading, dist, strict=True)]
    video = folder / f"{name}.mp4"
    if not video.exists():
        write_equirect_video(video, frames, fps)
    gps_t = np.arange(0.0, 70.0, 1.0)
    gx, gy = np.interp(gps_t, t, x), np.interp(gps_t, t, y)
    if jump_m is not None:
        gx = np.where(gps_t >= jump_at_s, gx + jump_m[0], gx)
        gy = np.where(gps_t >= jump_at_s, gy + jump_m[1], gy)
    lat, lon = LocalProjection(*ORIGIN).to_latlon(gx, gy)
    gpx = write_gpx(folder / f"{name}.gpx", CREATION.timestamp() + gps_t, lat, lon)
    return video, gpx


def _ingest(video: Path, gpx: Path, city: Path, *, overwrite: bool = False):  # type: ignore[no-untyped-def]
    return ingest_video(
        video,
        gpx,
        city,
        projection=LocalProjection(*ORIGIN),
        options=IngestOptions(max_width=256, pyramid=False, overwrite=overwrite),
    )


def test_part_ids_follow_the_photo_rule() -> None:
    assert [part_id("walk_001", n) for n in (1, 2, 3)] == ["walk_001", "walk_001_2", "walk_001_3"]


def test_jumps_are_breaks_excursions_and_dropouts_are_not() -> None:
    t = np.arange(60.0)
    x, y = 1.4 * t, np.zeros(60)
    params = CleanParams()
    relock = np.where(t >= 30, 50.0, 0.0)
    assert find_jumps(t, x, y + relock, params)[0].tolist() == [29]
    away_and_back = np.where((t >= 30) & (t < 33), 40.0, 0.0)  # multipath for 3 s
    jumps, outliers = find_jumps(t, x, y + away_and_back, params)
    assert jumps.tolist() == []
    assert np.flatnonzero(outliers).tolist() == [30, 31, 32]
    # one fix thrown back and sideways: 24.4 m in (under the 25 m limit), 25.3 m out
    lone = t == 30
    jumps, outliers = find_jumps(t, x - 8.0 * lone, y + 23.5 * lone, params)
    assert jumps.tolist() == []
    assert np.flatnonzero(outliers).tolist() == [30]
    dropout = (t < 20) | (t >= 50)  # 30 s without fixes, 42 m walked: bridged, not a break
    assert find_jumps(t[dropout], x[dropout], y[dropout], params)[0].tolist() == []
    assert find_jumps(t, 15.0 * t, y, params)[0].tolist() == []  # a car at 15 m/s


def test_a_lone_outlier_before_a_dropout_is_no_jump() -> None:
    """A fix thrown 35 m off just before 11 s without fixes (Hamburg canyon twin seed 11): the
    way back comes after MAX_EXCURSION_S, but the fixes either side of it agree."""
    t = np.arange(80.0)
    x, y = 1.4 * t, np.zeros(80)
    lone = t == 40
    kept = (t <= 40) | (t >= 51)
    jumps, outliers = find_jumps(
        t[kept], (x + 20.0 * lone)[kept], (y - 28.0 * lone)[kept], CleanParams()
    )
    assert jumps.tolist() == []
    assert np.flatnonzero(outliers).tolist() == [40]
    # a real relock just before the dropout stays a break: the fix after it agrees with it
    relock = np.where(t >= 40, 50.0, 0.0)
    jumps, _ = find_jumps(t[kept], x[kept], (y + relock)[kept], CleanParams())
    assert jumps.tolist() == [39]


def test_a_walkers_two_fix_excursion_is_dropped_not_the_fix_before_it() -> None:
    """Nerima SW one-way phone seed 5, 121-124 s: two fixes 28 and 35 m off, the first 2 s
    after the last good one. Skipping the good fix before them moves 28 m in 2 s, no jump for
    a walker whose 1 Hz fixes' median speed is 3 m/s; that fix was dropped as a lone outlier,
    the excursion kept and its way back made a break (then the burst test read the piece's
    end as a burst and masked 9 good fixes before it). The rule is opt-in
    (``lone_fix_farther``): it moves Hamburg canyon twins both ways (design notes, round
    twenty, branch sfturn)."""
    rng = np.random.default_rng(5)
    t = np.arange(120.0)
    x, y = rng.normal(0.0, 1.8, 120), 1.4 * t + rng.normal(0.0, 1.8, 120)
    x[[80, 81]] += (27.0, 13.0)
    y[[80, 81]] += (10.0, 32.0)
    params = CleanParams(lone_fix_farther=True)
    jumps, outliers = find_jumps(t, x, y, params)
    assert jumps.tolist() == []
    assert np.flatnonzero(outliers).tolist() == [80, 81]
    lat, lon = LocalProjection(*ORIGIN).to_latlon(x, y)
    track = GpsTrack.from_columns(Path("walk.gpx"), "gpx", 1.7e9 + t, lat, lon)
    smooth = clean_track(track, LocalProjection(*ORIGIN), params=params)
    assert smooth.breaks_s == ()
    assert smooth.dropped == 2


def test_continuous_parts_drop_short_pieces() -> None:
    x = np.array([0.0, 1, 2, 3, 50, 51, 52, 100, 100.5])
    kept, dropped = continuous_parts(x, np.zeros_like(x), spacing_m=1.0)
    assert kept == [(0, 4), (4, 7)]
    assert dropped == [(7, 9)]  # two poses 0.5 m apart: shorter than a spacing


def test_clean_track_keeps_the_jump(tmp_path: Path) -> None:
    _, gpx = _walk(tmp_path, "jump", jump_m=JUMP_M)
    smooth = clean_track(read_track(gpx), LocalProjection(*ORIGIN))
    start = CREATION.timestamp()
    assert smooth.breaks_s == ((start + JUMP_AT_S - 1.0, start + JUMP_AT_S),)
    x, y, _ = smooth.sample([start + JUMP_AT_S - 1.0, start + JUMP_AT_S])
    assert float(np.hypot(x[1] - x[0], y[1] - y[0])) > 35.0  # not smoothed into a sidestep


@pytest.fixture(scope="module")
def split_city(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, object]:
    folder = tmp_path_factory.mktemp("split")
    video, gpx = _walk(folder / "in", "walk_001", jump_m=JUMP_M)
    city = folder / "city"
    return video, city, _ingest(video, gpx, city)


def test_a_gps_jump_gives_two_trajectories(split_city) -> None:  # type: ignore[no-untyped-def]
    video, city, result = split_city
    assert [r.trajectory_id for r in result.all_parts()] == ["walk_001", "walk_001_2"]
    assert [r.part for r in result.all_parts()] == [1, 2]
    assert result.dropped_parts == ()
    directory = CityDir(city)
    assert directory.trajectory_ids() == ["walk_001", "walk_001_2"]
    first, second = (directory.read_trajectory_meta(t) for t in directory.trajectory_ids())
    assert (first.part, second.part) == (1, 2)
    assert first.source_video == second.source_video == str(video)
    assert first.source_range_s is not None
    assert second.source_range_s is not None
    assert first.source_range_s[0] == 0.0
    assert JUMP_AT_S - 2.0 <= first.source_range_s[1] < JUMP_AT_S
    assert JUMP_AT_S <= second.source_range_s[0] <= JUMP_AT_S + 1.0
    for tid in directory.trajectory_ids():
        poses = directory.read_poses(tid)
        steps = np.hypot(np.diff(poses.x_m), np.diff(poses.y_m))
        assert float(steps.max()) <= max_pose_step_m(1.0)
        assert len(poses.x_m) == directory.read_trajectory_meta(tid).frame_count >= 20
    assert video_trajectory_ids(directory, video) == ["walk_001", "walk_001_2"]
    assert trajectory_id_for(video) in directory.trajectory_ids()  # what ensure_city checks


def test_the_parts_build_and_join(split_city, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import shutil

    from city360.pose_graph.build import build_city
    from city360.video_store.city_manifest import update_manifest

    _, city, result = split_city
    copy = tmp_path / "city"
    shutil.copytree(city, copy)
    update_manifest(copy, LocalProjection(*ORIGIN), result.all_parts(), IngestOptions())
    graph = build_city(copy)
    on_edges = {data["trajectory"] for _, _, data in graph.graph.edges(data=True)}
    assert on_edges == {"walk_001", "walk_001_2"}
    # part 2 crosses part 1's first street: one node carries edges of both
    joined = [
        node
        for node in graph.graph.nodes
        if {d["trajectory"] for *_, d in graph.graph.edges(node, data=True)}
        | {d["trajectory"] for *_, d in graph.graph.in_edges(node, data=True)}
        == {"walk_001", "walk_001_2"}
    ]
    assert joined


def test_reingest_needs_overwrite_and_overwrite_removes_stale_parts(
    split_city,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    import shutil

    video, city, _ = split_city
    copy = tmp_path / "city"
    shutil.copytree(city, copy)
    _, clean_gpx = _walk(tmp_path / "clean", "walk_001", jump_m=None)
    with pytest.raises(OutputError, match="already exists; pass --overwrite"):
        _ingest(video, clean_gpx, copy)
    again = _ingest(video, clean_gpx, copy, overwrite=True)
    assert [r.trajectory_id for r in again.all_parts()] == ["walk_001"]
    assert again.part is None
    assert CityDir(copy).trajectory_ids() == ["walk_001"]  # walk_001_2 was of the old split
    assert CityDir(copy).read_trajectory_meta("walk_001").part is None


def test_a_part_too_short_is_dropped_with_a_warning(tmp_path: Path) -> None:
    """The GPS jumps at 65 s while the walker stands still from 62 s: what follows the jump
    is one place, no trajectory."""
    video, gpx = _walk(tmp_path / "in", "stop", jump_m=JUMP_M, jump_at_s=65.0, stop=(62.0, 80.0))
    result = _ingest(video, gpx, tmp_path / "city")
    assert [r.trajectory_id for r in result.all_parts()] == ["stop"]
    assert len(result.dropped_parts) == 1
    start_s, end_s = result.dropped_parts[0]
    assert 65.0 <= start_s <= end_s <= 70.0
    meta = CityDir(tmp_path / "city").read_trajectory_meta("stop")
    assert meta.part == 1  # part of the video: its time range is recorded
    assert meta.source_range_s is not None
    assert meta.source_range_s[1] < 65.0


def test_cli_reports_the_split(split_city, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from city360.cli import app

    video, _, _ = split_city
    gpx = video.with_suffix(".gpx")
    out = tmp_path / "city"
    run = CliRunner().invoke(app, ["ingest", str(video), "--gps", str(gpx), "--out", str(out)])
    assert run.exit_code == 0, run.output
    text = " ".join(run.output.split())  # the console wraps long lines
    assert "walk_001: 46 frames" in text
    assert "; part 1 of walk_001.mp4 (video 0.0-34.0 s), split at a GPS jump" in text
    assert "walk_001_2: 45 frames" in text  # 47 before the reweighted smoothing (46 m)
    assert "; part 2 of walk_001.mp4 (video 35.0-" in text
    manifest = CityDir(out).read_manifest()
    assert set(manifest.build["ingest"]["offsets_s"]) == {"walk_001", "walk_001_2"}
    assert manifest.stats["trajectories"] == 2


def test_the_pose_only_path_splits_at_the_jump_too(tmp_path: Path) -> None:
    """Pose-only trajectories (accuracy twins, `synth --poses-only`) cut a GPS jump like
    ingest does, instead of drawing a 40 m street along it."""
    from city360.video_store.gps_only import poses_along, split_at_breaks

    gps_t = np.arange(0.0, 70.0, 1.0)
    gx, gy = 1.4 * gps_t, np.where(gps_t >= JUMP_AT_S, -40.0, 0.0)
    projection = LocalProjection(*ORIGIN)
    lat, lon = projection.to_latlon(gx, gy)
    gpx = write_gpx(tmp_path / "walk.gpx", CREATION.timestamp() + gps_t, lat, lon)
    smooth = clean_track(read_track(gpx), projection)
    parts = split_at_breaks(smooth)
    assert len(parts) == 2
    first, second = (poses_along(p, projection, origin_s=smooth.start_s) for p in parts)
    assert float(first.t_s[-1]) < JUMP_AT_S <= float(second.t_s[0])  # one clock
    for poses in (first, second):
        steps = np.hypot(np.diff(poses.x_m), np.diff(poses.y_m))
        assert float(steps.max()) < 1.5  # no pose spans the jump
    assert abs(float(np.median(second.y_m)) + 40.0) < 3.0


def test_a_twelve_second_burst_during_a_stop_is_no_break() -> None:
    """Hamburg canyon twin seed 4, 920-932 s: standing still, one fix 10 m off already on the
    way out, then 11 fixes 38 m off, then back. The way back (12 s after the jump) came later
    than MAX_EXCURSION_S, so the track was cut there and its second part started 28 m off. A
    jump that comes back within MAX_BURST_RETURN_S is a burst: no break, and burst_mask drops it."""
    rng = np.random.default_rng(4)
    t = np.arange(120.0)
    x, y = rng.normal(0.0, 1.5, 120), rng.normal(0.0, 1.5, 120)
    x[60] += 10.0  # part of the way out
    x[61:73] += 38.0  # 12 fixes out
    jumps, outliers = find_jumps(t, x, y, CleanParams())
    assert jumps.tolist() == []
    assert not outliers.any()  # left to burst_mask
    lat, lon = LocalProjection(*ORIGIN).to_latlon(x, y)
    track = GpsTrack.from_columns(Path("stop.gpx"), "gpx", 1.7e9 + t, lat, lon)
    smooth = clean_track(track, LocalProjection(*ORIGIN))
    assert smooth.breaks_s == ()
    sx, sy, _ = smooth.sample(1.7e9 + t)
    assert float(np.max(np.hypot(sx, sy))) < 6.0


def test_a_sparse_track_is_judged_against_its_own_pace() -> None:
    """A logger that records a fix every 40 s (a phone saving battery, Strava's smart
    recording) on a bicycle at 5 m/s: no other step lies within JUMP_CONTEXT_S of a step, so
    its usual speed was 0 and every 200 m step a break ("every fix lies across a jump"). The
    steps either side are its context; a jump among them is still a break."""
    t = 40.0 * np.arange(10)
    x, y = 5.0 * t, np.zeros(10)
    params = CleanParams()
    assert find_jumps(t, x, y, params)[0].tolist() == []
    relock = np.where(t >= 200, 3000.0, 0.0)
    assert find_jumps(t, x, y + relock, params)[0].tolist() == [4]
    two = np.array([0.0, 36.0])  # a jog of 90 m between the only two fixes: nothing to judge
    assert find_jumps(two, 2.5 * two, np.zeros(2), params)[0].tolist() == []
    projection = LocalProjection(*ORIGIN)
    lat, lon = projection.to_latlon(x, y)
    track = GpsTrack.from_columns(Path("sparse.gpx"), "gpx", 1.7e9 + t, lat, lon, None)
    assert clean_track(track, projection).breaks_s == ()
