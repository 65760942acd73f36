"""Add a visual condition (dusk, night, rain, fog) to a built synthetic city.

A condition is a variant of the same city: every route is filmed again with the same camera
poses, frame times and camera clock (from ``groundtruth/poses/<video>.csv`` and
``groundtruth/scene.json``), under the condition's :class:`~city360.synth.looks.Look`, with the
3D scene rebuilt from the city's own OSM extract and synth parameters (``city.json``
``build.synth``). Each variant video is then stored exactly as ingest stored the base: the
same frames by pts (``poses.csv`` ``source_pts``), the same size, encoder settings and frame
pyramid. So ``graph.json``, ``poses.csv`` and every task suite hold unchanged; only the frames
differ. Layout (docs/contracts.md, "Visual conditions")::

    conditions/<name>/condition.json                      ConditionMeta
    conditions/<name>/trajectories/<id>/frames.mp4        (+ frames_<width>.mp4 levels)

The variant videos are filmed into a temporary folder and deleted once stored; everything is
written under a temporary name and renamed into place at the end, so a failure leaves no
condition that looks whole.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import logging
import os
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from city360._atomic import atomic_dir, atomic_write_json
from city360.city import BASE_CONDITION, CityDir, ConditionMeta
from city360.errors import CityFormatError, ConfigError, OutputError
from city360.progress import make_progress
from city360.synth.looks import Look, get_look

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from city360.synth.film import FramePoses
    from city360.synth.scene import Scene

__all__ = ["add_condition", "city_scene", "synth_params"]

log = logging.getLogger(__name__)


def synth_params(city: CityDir) -> dict[str, Any]:
    """The synth parameters recorded in ``city.json``; a city filmed from real video (or made
    before they were recorded) raises :class:`~city360.errors.ConfigError` saying so."""
    manifest = city.read_manifest()
    params = manifest.build.get("synth")
    if not manifest.synthetic or not isinstance(params, dict):
        msg = (
            f"{city.root} was built from real video, not by `city360 synth`: visual conditions "
            "are filmed in the synthetic 3D scene, so a filmed city has only its own frames "
            "(condition 'day')"
        )
        raise ConfigError(msg)
    if params.get("poses_only"):
        msg = f"{city.root} was synthesized with --poses-only (no frames): nothing to re-film"
        raise ConfigError(msg)
    return params


def city_scene(city: CityDir, params: dict[str, Any]) -> Scene:
    """The city's 3D scene, rebuilt from ``map/extract.osm`` with its synth seed and network.

    Checked against the ground truth it was filmed with (the POI and object counts in
    ``city.json`` stats): a different scene would film a different city.
    """
    from city360.maps.osm import load_osm
    from city360.synth.pipeline import SCENE_EDGE, scene_from_osm

    manifest = city.read_manifest()
    if not city.osm_extract_path.is_file():
        msg = (
            f"{city.osm_extract_path} is missing: a synthetic city keeps the extract it was "
            "made from; synthesize the city again"
        )
        raise CityFormatError(msg)
    bbox = params.get("bbox", manifest.bbox)
    osm = load_osm(
        city.osm_extract_path,
        bbox=tuple(bbox),
        projection=manifest.projection,
        network=str(params.get("network", "street")),
        squares=False,  # as synth built the scene
        edge=SCENE_EDGE,
    )
    scene = scene_from_osm(osm, seed=int(params.get("seed", 0)))
    stats = manifest.stats
    counts = {"pois": len(scene.poi_truths()), "objects": len(scene.object_truths())}
    for key, count in counts.items():
        if key in stats and int(stats[key]) != count:
            msg = (
                f"the scene rebuilt from {city.osm_extract_path} has {count} {key} but "
                f"{city.manifest_path} records {stats[key]}: the extract or the code changed "
                "since the city was filmed; synthesize the city again"
            )
            raise CityFormatError(msg)
    return scene


def _video_poses(city: CityDir, name: str, fps: int, speed_mps: float) -> FramePoses:
    """The true camera poses of video ``name`` (``groundtruth/poses/<name>.csv``)."""
    from city360.synth.film import FramePoses
    from city360.synth.groundtruth import read_true_poses

    table = read_true_poses(city.groundtruth_dir / "poses" / f"{name}.csv")
    x, y = table[:, 2], table[:, 3]
    s_m = np.concatenate([[0.0], np.cumsum(np.hypot(np.diff(x), np.diff(y)))])
    return FramePoses(
        t_s=table[:, 1],
        s_m=s_m,
        x_m=x,
        y_m=y,
        heading_deg=table[:, 6],
        fps=int(fps),
        speed_mps=float(speed_mps),
    )


def add_condition(
    city_dir: str | os.PathLike[str], condition: str | Look, *, replace: bool = False
) -> Path:
    """Film ``condition`` (a registered name or a :class:`Look`) as a variant of the built
    synthetic city ``city_dir``; return the condition's folder.

    Raises :class:`~city360.errors.ConfigError` for ``day`` (the base frames), an unknown
    name, a city filmed from real video, or one not yet ingested; :class:`OutputError` when the
    condition exists and ``replace`` is False.
    """
    look = get_look(condition) if isinstance(condition, str) else condition
    city = CityDir(city_dir)
    if look.name == BASE_CONDITION:
        msg = f"condition {BASE_CONDITION!r} is the city's own frames; choose another condition"
        raise ConfigError(msg)
    params = synth_params(city)
    trajectory_ids = city.trajectory_ids()
    if not trajectory_ids:
        msg = (
            f"{city.root} has no trajectories yet; ingest its videos first "
            f"(`city360 ingest {city.videos_dir}/*.mp4 --gps {city.videos_dir} --out {city.root}`)"
        )
        raise ConfigError(msg)
    target = city.condition_dir(look.name)
    if target.exists() and not replace:
        msg = f"condition {target} already exists; pass --replace to film it again"
        raise OutputError(msg)
    started = time.perf_counter()
    scene = city_scene(city, params)
    with make_progress() as progress, atomic_dir(target, replace=replace) as tmp:
        counts = _film_variant(city, scene, look, params, trajectory_ids, tmp, progress)
        meta = ConditionMeta(
            name=look.name,
            look=dataclasses.asdict(look),
            frame_counts=counts,
            synth=params,
            code_version=_package_version(),
        )
        atomic_write_json(tmp / "condition.json", meta.model_dump(mode="json"))
    log.info(
        "filmed condition %s of %s in %.1f s", look.name, city.root, time.perf_counter() - started
    )
    return target


def _film_variant(
    city: CityDir,
    scene: Scene,
    look: Look,
    params: dict[str, Any],
    trajectory_ids: list[str],
    root: Path,
    progress: Progress,
) -> dict[str, int]:
    from city360.synth.film import film_route
    from city360.synth.groundtruth import SceneTruth
    from city360.synth.render import EquirectRenderer
    from city360.video_store.pyramid import build_levels, stored_levels
    from city360.video_store.retake import store_selected_frames

    truth = {v.name: v for v in SceneTruth.load(city.groundtruth_dir / "scene.json").videos}
    crf = int(city.read_manifest().build.get("ingest", {}).get("crf", 16))
    width, fps = int(params["width"]), int(params["fps"])
    films = root / ".films"
    films.mkdir()
    counts: dict[str, int] = {}
    with EquirectRenderer(scene, width=width, look=look) as renderer:
        for trajectory_id in trajectory_ids:
            meta = city.read_trajectory_meta(trajectory_id)
            video = Path(meta.source_video).stem
            if video not in truth:
                msg = (
                    f"trajectory {trajectory_id!r} comes from {meta.source_video}, which is not "
                    f"one of the videos in {city.groundtruth_dir / 'scene.json'}"
                )
                raise CityFormatError(msg)
            poses = _video_poses(city, video, fps, float(params["speed_mps"]))
            task = progress.add_task(f"filming {look.name}: {video}", total=len(poses))
            created = dt.datetime.fromisoformat(truth[video].creation_time_utc)
            film = film_route(
                renderer,
                poses,
                films / f"{video}.mp4",
                width=width,
                creation_time=created,
                on_frame=functools.partial(_advance, progress, task),
            )
            source_pts = city.read_poses(trajectory_id).source_pts
            out = root / "trajectories" / trajectory_id / "frames.mp4"
            out.parent.mkdir(parents=True)
            written = store_selected_frames(
                film, source_pts, out, width=meta.width, height=meta.height, crf=crf
            )
            if written != meta.frame_count:  # the check that makes it the same trajectory
                msg = (
                    f"condition {look.name!r}: trajectory {trajectory_id!r} got {written} "
                    f"frames, the base has {meta.frame_count}"
                )
                raise CityFormatError(msg)
            if stored_levels(city.frames_path(trajectory_id)):
                build_levels(out, crf=crf)
            film.unlink()
            counts[trajectory_id] = written
    shutil.rmtree(films)
    return counts


def _advance(progress: Progress, task: TaskID, _frame: int) -> None:
    progress.advance(task)


def _package_version() -> str:
    from city360 import __version__

    return str(__version__)
