"""Draw the task-family pictures of the documentation site (``docs/images/families/``).

``python scripts/family_pictures.py [CITY] [--out DIR] [--seed N]`` generates one task per
family on ``CITY`` (a built city directory or a packaged city's name; default ``demo``, built
on first use and cached) with ``city360 tasks generate --per-family 1``, then writes for each
family, with the package's own renderer and map drawing:

- ``<family>_view.jpg``: the agent's first view at the task's start (480 x 320 px, 90° FOV,
  the branch arrows as the agent sees them);
- ``<family>_task.jpg``: the task's picture, 480 px wide: the image the agent is told
  (Localization's grid map, MapNavigation's route map, LandmarkSearchImage's reference image),
  otherwise the agent's location map at the start (the only map it gets) or, for the families
  that walk to a goal, a route map of start (BLUE) and goal (RED) drawn for the reader (the
  agent never sees it).

It also writes ``junction_view.jpg`` for the controller page: the view where a walk from a
seeded random start first reaches a junction, with the offered branches' red arrows.

The same city, seed and code give the same pictures, so the script can be rerun after a change
to the renderer or the maps and the diff reviewed. JPEG at quality 80 keeps each file well under
150 kB.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

import city360
from city360.cities import resolve_city, run_command
from city360.maps.citymap import CityMap
from city360.tasks import load_suite

WIDTH_PX = 480
VIEW_HEIGHT_PX = 320
JPEG_QUALITY = 80

Image = npt.NDArray[np.uint8]
"""RGB, shape (H, W, 3)."""


def _decode_png(data: bytes) -> Image:
    bgr = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_COLOR)
    if bgr is None:
        msg = "a told image of the suite is not a readable PNG"
        raise ValueError(msg)
    return np.ascontiguousarray(bgr[:, :, ::-1])


def _write_jpeg(path: Path, image: Image) -> None:
    height, width = image.shape[:2]
    if width != WIDTH_PX:
        size = (WIDTH_PX, round(height * WIDTH_PX / width))
        image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    ok, data = cv2.imencode(
        ".jpg", np.ascontiguousarray(image[:, :, ::-1]), [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY]
    )
    if not ok:
        msg = f"could not encode {path}"
        raise ValueError(msg)
    path.write_bytes(data.tobytes())


def _told_image(task: Any, assets: dict[str, bytes]) -> Image | None:
    for field in ("grid_map", "route_map", "reference_image"):
        asset = getattr(task.told, field, None)
        if isinstance(asset, str) and asset in assets:
            return _decode_png(assets[asset])
    return None


def _task_image(task: Any, assets: dict[str, bytes], citymap: CityMap, pose: Any) -> Image:
    told = _told_image(task, assets)
    if told is not None:
        return told
    start = (pose["x_m"], pose["y_m"])
    goal = getattr(task.truth, "goal", None)
    if goal is None:  # ObjectCount, RelationalSpatial: what the agent's own map shows
        return citymap.location_map(*start, pose["heading_deg"], size_px=WIDTH_PX)
    stops = getattr(task.truth, "waypoints", None) or []
    path = [start, *((s.goal.x_m, s.goal.y_m) for s in stops)] if stops else None
    return citymap.route_map(start, (goal.x_m, goal.y_m), size_px=WIDTH_PX, path_xy=path)


def _junction_view(env: Any, seed: int) -> Image:
    """Walk W LARGE from a seeded random start until a junction offers branches."""
    obs, info = env.reset(seed=seed)
    for attempt in range(200):
        if info["branches"]:
            return np.asarray(obs["view"])
        obs, _reward, terminated, truncated, info = env.step("W", "LARGE")
        if terminated or truncated or info["moved_m"] == 0.0:
            obs, info = env.reset(seed=seed + 1 + attempt)
    msg = "no junction with branches reached in 200 steps; is the city's graph connected?"
    raise ValueError(msg)


def draw_family_pictures(city: str, out_dir: Path, *, seed: int = 0) -> list[Path]:
    """Write two JPEGs per task family of ``city`` into ``out_dir``; return their paths."""
    city_dir = resolve_city(city)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="city360-families-") as tmp:
        suite_dir = Path(tmp) / "suite"
        run_command(
            "tasks", "generate", str(city_dir), "--out", str(suite_dir),
            "--per-family", "1", "--seed", str(seed),
        )  # fmt: skip
        suite = load_suite(suite_dir)
        citymap = CityMap.open(city_dir)
        env = city360.make(
            city_dir,
            view_width=WIDTH_PX,
            view_height=VIEW_HEIGHT_PX,
            fov_deg=90.0,
            privileged_info=True,
            prefetch=False,
        )
        with env:
            for task in suite.tasks:
                obs, info = env.reset(seed=seed, options={"task": task})
                stem = task.family.lower()
                view_path = out_dir / f"{stem}_view.jpg"
                task_path = out_dir / f"{stem}_task.jpg"
                _write_jpeg(view_path, obs["view"])
                _write_jpeg(task_path, _task_image(task, suite.assets, citymap, info["pose"]))
                written += [view_path, task_path]
                print(f"{task.family}: {task.id} -> {view_path.name}, {task_path.name}")
            junction_path = out_dir / "junction_view.jpg"
            _write_jpeg(junction_path, _junction_view(env, seed))
            written.append(junction_path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("city", nargs="?", default="demo", help="city directory or name")
    parser.add_argument("--out", type=Path, default=Path("docs/images/families"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for path in draw_family_pictures(args.city, args.out, seed=args.seed):
        print(f"{path}: {path.stat().st_size / 1024:.0f} kB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
